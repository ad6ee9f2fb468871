/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Contract-test harness for the registry: every test gets a fresh store (a SQLite file in a
 * temporary directory, or the PostgreSQL database named by MODELPLANE_PG_DSN, wiped) and a real
 * HTTP server on 127.0.0.1:0; requests go through libcurl.
 * MODELPLANE_TEST_BACKEND=sqlite|postgres selects the backend; postgres without
 * MODELPLANE_PG_DSN skips.
 */

#include <jansson.h>
#include <stdbool.h>

#define API "/api/model_registry/v1alpha3"

void reg_setup(void);
void reg_teardown(void);

struct reply {
        long status;
        char *body;   /* owned */
        char *ctype;  /* owned */
        json_t *json; /* owned; NULL when the body is not JSON */
};

void reply_done(struct reply *r);
/* Sends method path (relative to the server root) with an optional body of len bytes. */
void http_do(const char *method, const char *path, const char *body, size_t len, struct reply *ret);
/* Shorthands; body is a NUL-terminated string or NULL. */
long req(const char *method, const char *path, const char *body, json_t **ret_json);
/* The server's base URL, e.g. "http://127.0.0.1:43567". */
const char *base_url(void);
/* The store under the server (for tests that write below the API). */
struct store *test_store(void);
/* The DSN (or SQLite file) of that store. */
const char *test_dsn(void);
/* Creates an entity, asserts the status, returns its "id" (static buffer per call site). */
char *create(const char *path, const char *body, long want_status);
/* GET path and return the "size" of the list reply (asserts 200). */
long list_size(const char *path);
/* Percent-encodes s for a query string; owned. */
char *urlenc(const char *s);
/* The string member key of j; asserts that it is there. Borrowed from j. */
const char *js(json_t *j, const char *key);
/* GET path, assert 200, and return the JSON body (owned). */
json_t *get_ok(const char *path);
/* Sends the request and asserts the status and, when msg_part is set, part of the message. */
void expect(const char *method, const char *path, const char *body, long status,
            const char *msg_part);
/* The "size" of GET API/coll?filterQuery=<filter, percent-encoded> (asserts 200). */
long filter_size(const char *coll, const char *filter);
