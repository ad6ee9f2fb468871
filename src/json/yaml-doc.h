/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The one YAML reader of the tree (issue 28): libyaml's event parser composed into a document
 * with the caller's bounds checked as the events arrive, a walk of that document with
 * table-driven mapping dispatch, and the conversion of any node to JSON (jansson). Its users:
 * the catalog (sources and catalog files, preview data), the registry's --config file and the
 * kubeconfig reader.
 *
 * Bounds (struct yaml_limits): the input's size; collections nested deeper than depth_max are
 * refused (-E2BIG) before the rest of the input is read; a parse that takes more than
 * cpu_usec_max of the thread's CPU time is refused (-E2BIG); a second document in the stream is
 * an error; and a struct ydoc counts the nodes its helpers visit, so that past a small multiple
 * of the document's own node count (and never past nodes_max) every helper fails with -E2BIG:
 * alias fan-out ("billion laughs") cannot blow up a walk or a conversion.
 *
 * Errors are a struct error_detail (util/error-detail.h) with the input's name in .file and the
 * 1-based line of the offending node in .line (error_detail_format() gives "file:line: message").
 * Syntax errors read "invalid YAML: <libyaml's problem> <context>".
 *
 * The document is what yaml_parser_load() builds (same node order, 1-based indexes, marks,
 * styles, aliases resolved to the anchored node), except that untagged nodes keep a NULL tag
 * (no reader looks at tags) and that the scalars' values are copies in a few large blocks
 * instead of one allocation each: a 10,000-model catalog file has about a million scalars, and
 * freeing them one by one was 7-12% of a load (and left the heap fragmented).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "util/error-detail.h"
#include "util/macro.h"

struct yaml_limits {
        size_t size_max;       /* bytes of input; -EFBIG past it */
        unsigned depth_max;    /* nesting of collections (parse) and of converted values */
        size_t nodes_max;      /* node visits of one document's walk */
        uint64_t cpu_usec_max; /* CPU time of the parse (the thread's, not wall time) */
};

/* The blocks that hold a document's scalar values (opaque). */
struct yaml_text;

struct ydoc {
        yaml_document_t doc;
        struct yaml_text *text; /* owned; the scalars' values */
        bool loaded;
        const char *file; /* borrowed; the name used in errors */
        unsigned depth_max;
        size_t visited;
        size_t budget;  /* visits allowed: a small multiple of the document's node count */
        void *userdata; /* borrowed, the caller's (the catalog's table of shared values) */
};

/*
 * Parses data (len bytes, not necessarily NUL-terminated) as one YAML document into d. An input
 * over limits->size_max is -EFBIG ("file too large (limit N bytes)"), a NUL byte or a syntax
 * error -EINVAL, bounds -E2BIG, all with err filled. An empty input yields a document without
 * root (ydoc_root() returns NULL). d is released on failure.
 */
_warn_unused_result_ int ydoc_load(struct ydoc *d, const char *file, const char *data, size_t len,
                                   const struct yaml_limits *limits, struct error_detail *err);
void ydoc_release(struct ydoc *d);

/* Borrowed; NULL for an empty document. */
yaml_node_t *ydoc_root(struct ydoc *d);
yaml_node_t *ydoc_node(struct ydoc *d, int index);
unsigned ynode_line(const yaml_node_t *n);
/* A plain scalar null ("", "~", "null", "Null", "NULL"). */
bool ynode_is_null(const yaml_node_t *n);
/* Borrowed scalar text, NULL when n is not a scalar. */
const char *ynode_scalar(const yaml_node_t *n);
/* "a scalar", "a list", "a mapping" (for messages). */
const char *ynode_kind(const yaml_node_t *n);
/* YAML 1.2 core booleans: true/True/TRUE, false/False/FALSE; -EINVAL for anything else. */
_warn_unused_result_ int yaml_parse_bool(const char *s, bool *ret);
/*
 * Borrowed value of key in mapping map (the first pair with that scalar key), NULL when map is
 * no mapping, the key is absent or its value is a plain null.
 */
yaml_node_t *ydoc_map_get(struct ydoc *d, yaml_node_t *map, const char *key);

/*
 * The document's root when it is a mapping (*ret NULL for an empty document); else -EINVAL with
 * "<what> must be a mapping" at the root's line.
 */
_warn_unused_result_ int ydoc_root_mapping(struct ydoc *d, const char *what, yaml_node_t **ret,
                                           struct error_detail *err);

/* Counts a node against the budget; -E2BIG (with err) past it. */
_warn_unused_result_ int ydoc_visit(struct ydoc *d, const yaml_node_t *n, struct error_detail *err);

/* Value parsers: they check the node type and fill err on mismatch (-EINVAL). */
_warn_unused_result_ int ydoc_string(struct ydoc *d, yaml_node_t *n, char **ret,
                                     struct error_detail *err); /* null -> NULL */
_warn_unused_result_ int ydoc_bool(struct ydoc *d, yaml_node_t *n, bool *ret,
                                   struct error_detail *err);
/*
 * Converts any node to JSON. Quoted scalars are strings; plain scalars follow the YAML 1.2 core
 * schema (null, true/false, integers, floats, else string). Duplicate mapping keys are errors,
 * and so are values nested deeper than the limits' depth_max.
 */
_warn_unused_result_ int ydoc_to_json(struct ydoc *d, yaml_node_t *n, json_t **ret,
                                      struct error_detail *err);

/*
 * The writer's side: v (borrowed: objects, arrays, strings, numbers, booleans, null, nested at
 * most depth_max deep) as one block-style YAML document, through libyaml's emitter. Object keys
 * keep jansson's order. A string that a YAML reader would take for anything else (a number, a
 * boolean of YAML 1.1 or 1.2 such as "yes" or "on", null, "") is double-quoted; one with a line
 * break is a literal block; libyaml quotes whatever cannot be plain. ydoc_to_json() of the output
 * gives v back. Returns 0 with *ret (NUL-terminated, owned by the caller; *ret_len its length when
 * ret_len is not NULL), -E2BIG when deeper than depth_max, -EINVAL for a value JSON cannot hold,
 * -ENOMEM.
 */
_warn_unused_result_ int ydoc_dump_json(const json_t *v, unsigned depth_max, char **ret,
                                        size_t *ret_len);

/* One key of a strictly parsed mapping. fn stores value at base + offset (NULL: ignored). */
struct yfield {
        const char *key;
        int (*fn)(struct ydoc *d, yaml_node_t *value, void *ret, struct error_detail *err);
        size_t offset;
};

/*
 * Walks mapping n: every key must be a scalar listed in table (terminated by key == NULL, at
 * most 64 entries), at most once; "unknown key 'k'" / "duplicate key 'k'" errors carry the key's
 * line. A null node is an empty mapping.
 */
_warn_unused_result_ int ydoc_dispatch(struct ydoc *d, yaml_node_t *n, const struct yfield *table,
                                       void *base, struct error_detail *err);

/* Adapters for yfield.fn. */
int ydoc_field_string(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err);
int ydoc_field_json(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err);
/* Stores a tri-state: 0 false, 1 true (int *); absent keys keep the caller's default (-1). */
int ydoc_field_tristate(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err);
