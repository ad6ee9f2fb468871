/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * jansson helpers: bounded parsing and declarative decoding with dispatch tables (systemd's
 * json_dispatch). A table lists the fields an object may carry; json_dispatch() checks each
 * field's JSON type, calls its callback to store it at base + offset, reports missing mandatory
 * fields and (unless JSON_DISPATCH_ALLOW_UNKNOWN) rejects unknown ones. Errors name the field.
 *
 * jansson reference rules apply: json_object_set_new() steals, json_object_set() increfs.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "util/macro.h"

/* Any JSON type: pass as json_field.type. */
#define JSON_ANY_TYPE (-1)

enum {
        JSON_MANDATORY = 1U << 0, /* field must be present (and not null unless JSON_NULLABLE) */
        JSON_NULLABLE = 1U << 1,  /* null is accepted and treated as absent */
};

enum {
        JSON_DISPATCH_ALLOW_UNKNOWN = 1U << 0,
};

/* Errors are a struct error_detail (util/error-detail.h): field is the offending field's name
 * ("" for the object itself), message the reason, kind ERROR_INVALID (ERROR_INTERNAL for
 * -ENOMEM). */

/* Stores value into ret (the address base + offset). Returns 0 or -EINVAL/-ERANGE/-ENOMEM. */
typedef int (*json_dispatch_fn)(const char *name, json_t *value, void *ret,
                                struct error_detail *reterr);

struct json_field {
        const char *name;
        int type; /* a json_type or JSON_ANY_TYPE */
        json_dispatch_fn fn;
        size_t offset;
        unsigned flags;
};

/*
 * Decodes object v with the table (terminated by an entry with name == NULL) into base.
 * Fields already stored when a later field fails stay stored; callers release base either way.
 */
_warn_unused_result_ int json_dispatch(json_t *v, const struct json_field *table, unsigned flags,
                                       void *base, struct error_detail *reterr);

/* Callbacks for the common field types. The string callbacks refuse a string with an embedded
 * NUL: -EILSEQ, message "field \"x\" contains a NUL character". */
int json_dispatch_string(const char *name, json_t *v, void *ret, struct error_detail *e);
int json_dispatch_const_string(const char *name, json_t *v, void *ret, struct error_detail *e);
int json_dispatch_int64(const char *name, json_t *v, void *ret, struct error_detail *e);
int json_dispatch_uint32(const char *name, json_t *v, void *ret, struct error_detail *e);
int json_dispatch_bool(const char *name, json_t *v, void *ret, struct error_detail *e);
/* Stores a new reference in *(json_t **)ret. */
int json_dispatch_json(const char *name, json_t *v, void *ret, struct error_detail *e);
/* Stores v itself (borrowed: valid while the parsed document is) in *(json_t **)ret. */
int json_dispatch_borrow(const char *name, json_t *v, void *ret, struct error_detail *e);

/*
 * Parses data of len bytes as exactly one JSON value, rejecting duplicate keys and NUL bytes.
 * On failure fills reterr (when non-NULL: kind ERROR_INVALID, message "<jansson's text> at line L
 * column C") and returns -EINVAL.
 */
_warn_unused_result_ int json_parse_bounded(const char *data, size_t len, json_t **ret,
                                            struct error_detail *reterr);

enum {
        /*
         * Accept "\u0000" inside strings (jansson JSON_ALLOW_NUL), as the Kubernetes API server
         * does: one such object must not make a whole LIST or watch line undecodable. Code that
         * reads those strings must check json_string_has_nul() (the getters below and the
         * dispatch callbacks do) instead of letting C strings silently truncate.
         */
        JSON_PARSE_ALLOW_NUL = 1U << 0,
};

/* json_parse_bounded() with JSON_PARSE_* flags. */
_warn_unused_result_ int json_parse_bounded_flags(const char *data, size_t len, unsigned flags,
                                                  json_t **ret, struct error_detail *reterr);

/* True when v is a string with an embedded NUL character (its C string would be truncated). */
bool json_string_has_nul(const json_t *v);

/* Borrowed lookups along a path of object keys: json_get_path(obj, "metadata", "name", NULL). */
json_t *json_get_path(const json_t *root, ...) __attribute__((__sentinel__));
/* Borrowed string at a path, NULL when absent, not a string, or a string with an embedded NUL. */
const char *json_get_string_path(const json_t *root, ...) __attribute__((__sentinel__));

/* json_auto_t (jansson) is the cleanup type for json_t *. */

/* Serializes compactly with sorted keys as Go's encoding/json does for maps; owned string. */
char *json_dumps_compact(const json_t *v);
