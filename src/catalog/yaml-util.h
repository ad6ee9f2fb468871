/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * libyaml glue for the catalog's strict parsers: load one YAML document from a bounded buffer,
 * walk it with table-driven mapping dispatch (unknown and duplicate keys are errors), and report
 * every error with the file name and the 1-based line of the offending node.
 *
 * A struct ydoc counts the nodes its helpers visit; past a small multiple of the document's own
 * node count (and never past CATALOG_YAML_NODES_MAX) every helper fails with -E2BIG, so alias
 * fan-out ("billion laughs") cannot blow up conversion.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "util/macro.h"

struct catalog_error {
        char file[512];
        unsigned line; /* 1-based; 0 when not tied to a line */
        char message[512];
};

/* Fills e (when non-NULL) with file, line and a formatted message. */
void catalog_error_set(struct catalog_error *e, const char *file, unsigned line, const char *fmt,
                       ...) _printf_(4, 5);
/* Formats "file:line: message" (or "file: message") into buf of size n; returns buf. */
const char *catalog_error_format(const struct catalog_error *e, char *buf, size_t n);

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
                                                    size_t *ret_len, struct catalog_error *err);

/* 0 when len is at most max; else -EFBIG, with "file too large (limit N bytes)" in err naming
 * file (the same words as catalog_read_file_reported()). */
_warn_unused_result_ int catalog_check_size(const char *file, size_t len, size_t max,
                                            struct catalog_error *err);

struct yaml_text;

struct ydoc {
        yaml_document_t doc;
        struct yaml_text *text; /* owned; the scalars' values (catalog/yaml-compose.h) */
        bool loaded;
        const char *file; /* borrowed; the name used in errors */
        size_t visited;
        size_t budget; /* visits allowed: a small multiple of the document's node count */
        /* borrowed, opaque; NULL = none: the table through which the catalog loader shares
         * equal immutable values built from this document (see yaml-catalog.c) */
        void *intern;
};

/*
 * Parses data (len bytes, not necessarily NUL-terminated) as one YAML document into d. A syntax
 * error fills err with the line libyaml reports and returns -EINVAL. An empty input yields a
 * document without root (ydoc_root() returns NULL).
 */
_warn_unused_result_ int ydoc_load(struct ydoc *d, const char *file, const char *data, size_t len,
                                   struct catalog_error *err);
void ydoc_release(struct ydoc *d);

/* Borrowed; NULL for an empty document. */
yaml_node_t *ydoc_root(struct ydoc *d);
yaml_node_t *ydoc_node(struct ydoc *d, int index);
unsigned ynode_line(const yaml_node_t *n);
/* A plain scalar null ("", "~", "null"). */
bool ynode_is_null(const yaml_node_t *n);
/* Borrowed scalar text, NULL when n is not a scalar. */
const char *ynode_scalar(const yaml_node_t *n);

/* Counts a node against the budget; -E2BIG (with err) past it. */
_warn_unused_result_ int ydoc_visit(struct ydoc *d, const yaml_node_t *n,
                                    struct catalog_error *err);

/* Value parsers: they check the node type and fill err on mismatch (-EINVAL). */
_warn_unused_result_ int ydoc_string(struct ydoc *d, yaml_node_t *n, char **ret,
                                     struct catalog_error *err); /* null -> NULL */
_warn_unused_result_ int ydoc_bool(struct ydoc *d, yaml_node_t *n, bool *ret,
                                   struct catalog_error *err);
/* A sequence of scalars (null -> empty vector) with at most max entries. */
_warn_unused_result_ int ydoc_strv(struct ydoc *d, yaml_node_t *n, size_t max, char ***ret,
                                   struct catalog_error *err);
/*
 * Converts any node to JSON. Quoted scalars are strings; plain scalars follow the YAML 1.2 core
 * schema (null, true/false, integers, floats, else string). Duplicate mapping keys are errors.
 */
_warn_unused_result_ int ydoc_to_json(struct ydoc *d, yaml_node_t *n, json_t **ret,
                                      struct catalog_error *err);

/* One key of a strictly parsed mapping. fn stores value at base + offset. */
struct yfield {
        const char *key;
        int (*fn)(struct ydoc *d, yaml_node_t *value, void *ret, struct catalog_error *err);
        size_t offset;
};

/*
 * Walks mapping n: every key must be a scalar listed in table (terminated by key == NULL), at
 * most once; "unknown key 'k'" / "duplicate key 'k'" errors carry the key's line. A null node is
 * an empty mapping.
 */
_warn_unused_result_ int ydoc_dispatch(struct ydoc *d, yaml_node_t *n, const struct yfield *table,
                                       void *base, struct catalog_error *err);

/* Adapters for yfield.fn. */
int ydoc_field_string(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err);
int ydoc_field_strv(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err);
int ydoc_field_json(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err);
/* Stores a tri-state: 0 false, 1 true (int *); absent keys keep the caller's default (-1). */
int ydoc_field_tristate(struct ydoc *d, yaml_node_t *n, void *ret, struct catalog_error *err);
