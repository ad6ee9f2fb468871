/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The watch stream of the Kubernetes client (client.h, which includes this header): one
 * long-lived GET ?watch=1 whose chunked body is split into event lines (watch.h) and decoded
 * one by one into the caller's callback. Same threading rule as the client: one thread per
 * struct kube_client at a time.
 */

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "kube/api.h"
#include "kube/status.h"
#include "kube/watch.h"
#include "util/macro.h"

struct kube_client;

/* Watch event callback: type is "ADDED", "MODIFIED", "DELETED", "BOOKMARK" or "ERROR";
 * object is borrowed (incref to keep). Return < 0 to stop the watch with that error. */
typedef int (*kube_watch_fn)(void *userdata, const char *type, json_t *object);

struct kube_watch_options {
        const char *label_selector;   /* borrowed, may be NULL */
        const char *field_selector;   /* borrowed, may be NULL */
        const char *resource_version; /* borrowed; where to start */
        bool allow_bookmarks;
        unsigned timeout_seconds;  /* server-side timeout, 0 = server default */
        const atomic_bool *cancel; /* borrowed; when it becomes true the watch returns -ECANCELED */
};

/*
 * Streams a watch, calling fn for each event line in order, until the server ends the stream
 * (returns 0), fn returns < 0 (returned as is), cancel is set (-ECANCELED, noticed within about a
 * second even on an idle stream), or a transport or decoding error (negative errno; a garbage or
 * over-long line, or a stream that ends inside a line, is -EBADMSG, with the line in
 * reterr->message). An ERROR event is passed to fn and then ends the watch with the errno of its
 * Status (410 Expired/Gone -> -ESTALE), reterr filled from it. A non-2xx answer to the watch
 * request itself is decoded like any other request.
 */
_warn_unused_result_ int kube_watch(struct kube_client *c, const struct gvr *r, const char *ns,
                                    const struct kube_watch_options *opts, kube_watch_fn fn,
                                    void *userdata, struct kube_status *reterr);

/*
 * The same stream, without decoding: fn gets each event line as it is (watch.h's watch_line_fn:
 * NUL-terminated, borrowed for the call), for a reader that needs a few fields of large objects
 * and would rather scan them than build a tree (bench/tm-watch). ERROR events are lines like any
 * other: the caller recognises them. Returns as kube_watch does, except that a garbage line is
 * the caller's to refuse (fn's negative value).
 */
_warn_unused_result_ int kube_watch_lines(struct kube_client *c, const struct gvr *r,
                                          const char *ns, const struct kube_watch_options *opts,
                                          watch_line_fn fn, void *userdata,
                                          struct kube_status *reterr);
