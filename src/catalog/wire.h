/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The served text of a catalog model, written straight from the loader's record: the
 * bytes json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER) gives for the object the index serves
 * (the model's fields in their order, its customProperties cut to the MetadataStringValue ones,
 * then "id" and "source_id"), without copying the tree or going through jansson's per-character
 * dump callbacks (a tenth of the load's instructions).
 *
 * Numbers other than integers are not written here (-ENOTSUP): the caller then uses jansson,
 * whose real formatting this module does not reproduce.
 */

#include <jansson.h>
#include <stddef.h>

#include "catalog/record.h"
#include "util/buf.h"
#include "util/macro.h"

/* Appends v as compact JSON text (insertion order); -ENOTSUP for a real, -E2BIG/-ENOMEM. */
_warn_unused_result_ int catalog_wire_append(struct buf *b, const json_t *v);

/*
 * The served CatalogModel text of model (see above) into *ret (owned, exactly sized) and
 * *ret_len; -ENOTSUP as catalog_wire_append(), -ENOMEM.
 */
_warn_unused_result_ int catalog_wire_model(const struct catalog_record *model, const char *id,
                                            const char *source_id, char **ret, size_t *ret_len);
