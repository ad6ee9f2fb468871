/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * One pass of libyaml's event parser into a yaml_document_t, with the catalog's bounds checked
 * as the events arrive (issue 16): collections nested deeper than CATALOG_YAML_DEPTH_MAX and a
 * parse that takes more than CATALOG_PARSE_USEC_MAX of the thread's CPU time are refused with
 * -E2BIG before the rest of the file is read, and a second document in the stream is an error.
 * This replaces a bounds pass followed by yaml_parser_load() (two full parses of every file).
 *
 * The document is what yaml_parser_load() builds (same node order, 1-based indexes, marks,
 * styles, aliases resolved to the anchored node), except that untagged nodes keep a NULL tag
 * (no reader in the catalog looks at tags) and that the scalars' values are copies in a few large
 * blocks (struct yaml_text) instead of one allocation each: a 10,000-model file has about a
 * million scalars, and freeing them one by one among the values the loader keeps was 7-12% of a
 * load (and left the heap fragmented). Release it with yaml_compose_release(), not
 * yaml_document_delete().
 */

#include <stddef.h>
#include <yaml.h>

#include "catalog/yaml-util.h"
#include "util/macro.h"

/* The blocks that hold a document's scalar values (opaque). */
struct yaml_text;

/*
 * Parses data (len bytes) into *doc (zeroed first; an empty stream has no root node) and *text
 * (owned: the text doc's scalars point into; NULL when there is none). A syntax error fills err
 * ("invalid YAML: ...", with libyaml's line) and returns -EINVAL; -E2BIG past the bounds;
 * -ENOMEM. On error *doc and *text are released.
 */
_warn_unused_result_ int yaml_compose(const char *file, const char *data, size_t len,
                                      yaml_document_t *doc, struct yaml_text **text,
                                      struct catalog_error *err);
/* Frees what doc and text hold (doc zeroed, *text NULL). */
void yaml_compose_release(yaml_document_t *doc, struct yaml_text **text);
