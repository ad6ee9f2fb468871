/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The model server's repository API (KServe V2 / Triton / MLServer, libcurl):
 *   POST {base}/v2/repository/index                  -> [{"name","state","reason"?}, ...]
 *   POST {base}/v2/repository/models/{name}/load
 *   POST {base}/v2/repository/models/{name}/unload
 * One struct repo_client per thread (it keeps one keep-alive connection).
 */

#include <stddef.h>

#include "agent/plan.h"
#include "util/macro.h"

struct repo_client;

struct repo_entry {
        char *name;   /* owned */
        char *reason; /* owned; may be NULL */
        enum server_state state;
};

struct repo_index {
        struct repo_entry *items; /* owned; sorted by name */
        size_t n;
};

void repo_index_release(struct repo_index *ix);

/* Sets @name's state in @ix, inserted in order when missing: what an own load (READY) or unload
 * (UNAVAILABLE, as MLServer and Triton list it) did, applied to a kept index. 0 or -ENOMEM (@ix
 * unchanged). */
_warn_unused_result_ int repo_index_set(struct repo_index *ix, const char *name,
                                        enum server_state state);

/* @base_url: "http://127.0.0.1:8080" (copied). @timeout_sec: per request (load can be slow). */
_warn_unused_result_ int repo_client_new(const char *base_url, long timeout_sec,
                                         struct repo_client **ret);
struct repo_client *repo_client_free(struct repo_client *c);
DEFINE_CLEANUP_FUNC(struct repo_client *, repo_client_free)

/* Returns 0, -EIO (transport, message in @reterr), -EBADMSG, -ENOMEM. */
_warn_unused_result_ int repo_index(struct repo_client *c, struct repo_index *ret, char *reterr,
                                    size_t len);
/*
 * Load/unload @name. Returns 0, or a negative errno with the server's reason in @reterr (its
 * JSON "error" field, or the body): -ENOENT 404, -EIO otherwise.
 */
_warn_unused_result_ int repo_load(struct repo_client *c, const char *name, char *reterr,
                                   size_t len);
_warn_unused_result_ int repo_unload(struct repo_client *c, const char *name, char *reterr,
                                     size_t len);
