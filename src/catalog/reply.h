/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the catalog's HTTP handler modules (handlers.c, preview.c, mcp-handlers.c) share: the
 * request context, the upstream error body {"code": "<reason phrase>", "message": "..."}, and
 * the query parameters that several routes take. Internal to the catalog layer (catalog__).
 *
 * The catalog__parse_* functions answer a bad parameter themselves (400, or 500 for -ENOMEM)
 * and return < 0; the handler then returns 0, its answer already set.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "http/server.h"
#include "util/buf.h"
#include "util/macro.h"

struct catalog_index;
struct catalog_page;
struct catalog_service;
struct filterq_node;

struct catalog__ctx {
        struct catalog_service *svc; /* borrowed */
        struct catalog_index *idx;   /* borrowed: the request's snapshot */
};

/* upstream's answer to a filterQuery comparison of mismatched types (a PostgreSQL type error) */
#define CATALOG__TYPE_MISMATCH "invalid filter query, type mismatch or invalid value in comparison"

/* Sets status with the upstream body; returns 0 (the handler's own result). */
int catalog__reply_error(struct http_resp *resp, unsigned status, const char *fmt, ...)
        _printf_(3, 4);

/* 200 with v (takes ownership of @v); 500 "out of memory" when v is NULL. Returns 0. */
int catalog__reply_json(struct http_resp *resp, json_t *v);

/* Answers 200 with JSON text already serialized into text (copied). */
void catalog__reply_text_json(struct http_resp *resp, const struct buf *text);

/* Maps an internal failure to 500 with the upstream body (never logs: the caller's job). */
int catalog__reply_errno(struct http_resp *resp, int r);

/*
 * The answer for a failed listing: -EINVAL 400 with the index's message in err, -EDOM the type
 * mismatch, anything else 500. Returns 0.
 */
int catalog__reply_query_error(struct http_resp *resp, int r, const char *err);

/* pageSize, sortOrder and nextPageToken into *page. */
int catalog__parse_page(const struct http_req *req, struct catalog_page *page,
                        struct http_resp *resp);

/* Splits a comma-separated value into an owned strv of trimmed non-empty items (-E2BIG). */
_warn_unused_result_ int catalog__split_csv(const char *s, char ***ret);

/*
 * filterQuery text into *ret (owned; NULL for none), with the type check of the model routes
 * when check_types.
 */
int catalog__parse_filter(const char *fq, bool check_types, struct filterq_node **ret,
                          struct http_resp *resp);
