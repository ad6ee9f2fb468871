/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A pure router: a static table of (method, pattern) pairs. Patterns are '/'-separated segments;
 * "{name}" captures one segment, and a final "{name+}" captures the rest of the path including
 * '/'. Captured values are percent-decoded. No I/O; unit-tested and fuzzed.
 */

#include <stdbool.h>
#include <stddef.h>

#include "http/server.h"
#include "util/macro.h"

struct http_route {
        const char *method;  /* "GET", "POST" ... */
        const char *pattern; /* "/api/x/v1/things/{id}" */
        http_handler_fn fn;
        void *data; /* available to the handler as req->route_data */
};

/*
 * Finds the route for method and path (the path without query string). On success returns the
 * index and stores the captured parameters in req->params (owned by req). Returns -ENOENT when no
 * pattern matches the path, -EOPNOTSUPP when a pattern matches but not for this method, -EINVAL
 * for a malformed percent-escape, -ENOMEM.
 */
_warn_unused_result_ int http_route_match(const struct http_route *table, size_t n,
                                          const char *method, const char *path,
                                          struct http_req *req);

/* Releases the captured parameters of req. */
void http_req_params_release(struct http_req *req);

/* True when s[0..len) is well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF). */
bool http_utf8_valid(const char *s, size_t len);

/* A copy of the NUL-terminated s with each byte that starts no well-formed UTF-8 sequence
 * replaced by '?', so that it can go into a JSON string; NULL when out of memory. */
_warn_unused_result_ char *http_utf8_scrub(const char *s);
