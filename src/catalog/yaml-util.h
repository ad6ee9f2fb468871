/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The catalog's side of the YAML reader (json/yaml-doc.h): its bounds, string vectors and bounded
 * file reading. Errors are struct error_detail with the file name and the 1-based line.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "json/yaml-doc.h"
#include "util/error-detail.h"
#include "util/macro.h"

/* NULL-terminated string vectors: owned vector of owned strings. */
char **catalog_strv_free(char **v);
size_t catalog_strv_length(char *const *v);
/* Deep copy; NULL copies to NULL. Returns -ENOMEM. */
_warn_unused_result_ int catalog_strv_copy(char *const *v, char ***ret);
bool catalog_strv_contains(char *const *v, const char *s);
/* A new JSON array of the strings of v (NULL: empty); NULL on ENOMEM. */
json_t *catalog_strv_to_json(char *const *v);
DEFINE_CLEANUP_FUNC(char **, catalog_strv_free)

/* catalog_read_file(): the path is no regular file (a FIFO, a device, a socket). */
#define EFTYPE_CATALOG EBADFD

/*
 * Reads the whole file at path into a new NUL-terminated buffer. -EFBIG when it is larger than
 * max bytes, -errno from open/read. Follows symlinks.
 */
_warn_unused_result_ int catalog_read_file(const char *path, size_t max, char **ret_data,
                                           size_t *ret_len);
/* As catalog_read_file(), and on failure describes it in err ("file too large (limit N bytes)",
 * "cannot read: <reason>") naming path. */
_warn_unused_result_ int catalog_read_file_reported(const char *path, size_t max, char **ret_data,
                                                    size_t *ret_len, struct error_detail *err);

/* The bounds of every catalog YAML input (json/yaml-doc.h). */
extern const struct yaml_limits catalog_yaml_limits;

/* A sequence of scalars (null -> empty vector) with at most max entries. */
_warn_unused_result_ int catalog_yaml_strv(struct ydoc *d, yaml_node_t *n, size_t max, char ***ret,
                                           struct error_detail *err);
/* yfield.fn adapter: a list of at most CATALOG_PATTERNS_MAX strings (char ***). */
int catalog_field_strv(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err);
