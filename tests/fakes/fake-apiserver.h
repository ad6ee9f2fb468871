/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small fault-injecting fake kube-apiserver for tests, on src/http/server.h (127.0.0.1, a free
 * port). It complements the real-apiserver tier; it never replaces it.
 *
 * It keeps objects of any resource in memory with a global resourceVersion counter and an event
 * log, and serves:
 *   GET    collection            LIST, paged with limit/continue (continue tokens expire on
 *                                compaction with 410 Expired)
 *   GET    collection?watch=1    WATCH from resourceVersion: replays the event log after it and
 *                                holds the request until events arrive, the hold time passes
 *                                (then a BOOKMARK when allowWatchBookmarks), or the fake ends
 *                                watches; the response then ends, as a server-side watch timeout
 *                                does. A resourceVersion older than the compaction point gets an
 *                                ERROR event with a 410 Expired Status.
 *   GET/PUT/PATCH(merge)/DELETE object, POST collection (create), with resourceVersion
 *                                preconditions (409 Conflict) and 404/409 AlreadyExists Status.
 * Paths: /api/v1[/namespaces/NS]/RESOURCE[/NAME] and /apis/G/V[/namespaces/NS]/RESOURCE[/NAME].
 *
 * Faults are armed for the next request(s) of a kind and then disarm themselves.
 * Thread-safe; the test thread may change objects while the informer watches.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/macro.h"

struct fake_apiserver;

enum fake_watch_fault {
        FAKE_WATCH_OK,
        FAKE_WATCH_HTTP_410,  /* answer 410 Gone with a Status body */
        FAKE_WATCH_ERROR_410, /* 200, then an ERROR event carrying a 410 Expired Status */
        FAKE_WATCH_GARBAGE,   /* 200, events so far, then a line that is not JSON */
        FAKE_WATCH_TRUNCATED, /* 200, events so far, then half an event line and the end */
        FAKE_WATCH_HTTP_500,  /* answer 500 */
};

_warn_unused_result_ int fake_apiserver_start(struct fake_apiserver **ret);
struct fake_apiserver *fake_apiserver_free(struct fake_apiserver *f);
DEFINE_CLEANUP_FUNC(struct fake_apiserver *, fake_apiserver_free)

/* "http://127.0.0.1:PORT"; borrowed. */
const char *fake_apiserver_url(struct fake_apiserver *f);

/*
 * Creates or replaces an object under the collection path (e.g. "/api/v1/namespaces/ns/configmaps"
 * — the namespace in the path wins over metadata.namespace). obj is borrowed and copied; the
 * stored copy gets a new resourceVersion, which is returned (0 on failure).
 */
uint64_t fake_apiserver_put(struct fake_apiserver *f, const char *collection, json_t *obj);
/* Deletes; returns the deletion's resourceVersion, 0 when absent. */
uint64_t fake_apiserver_delete(struct fake_apiserver *f, const char *collection, const char *name);
/* New reference to the stored object, NULL when absent. */
json_t *fake_apiserver_get(struct fake_apiserver *f, const char *collection, const char *name);
/* Current resourceVersion. */
uint64_t fake_apiserver_rv(struct fake_apiserver *f);

/* Forgets history up to now: watches from older versions get 410, continue tokens expire. */
void fake_apiserver_compact(struct fake_apiserver *f);
/* Ends every held watch now (normal end of stream). */
void fake_apiserver_end_watches(struct fake_apiserver *f);
/* The next n watch requests get fault. */
void fake_apiserver_fail_watches(struct fake_apiserver *f, enum fake_watch_fault fault, unsigned n);
/* The next n LIST requests answer HTTP code (e.g. 500, 503, 410). */
void fake_apiserver_fail_lists(struct fake_apiserver *f, unsigned code, unsigned n);
/* The next n writes (any method but GET) are applied at once and answered msec later: a client
 * whose request timeout is shorter sees a timeout for a write that happened. */
void fake_apiserver_slow_writes(struct fake_apiserver *f, unsigned msec, unsigned n);
/* How long a watch with nothing to send is held (default 5 s). */
void fake_apiserver_set_watch_hold(struct fake_apiserver *f, unsigned msec);
/* While paused, held watches deliver no events (they still end, and faults still apply). */
void fake_apiserver_pause_watches(struct fake_apiserver *f, bool paused);

/*
 * Simulates a kube-apiserver crash and restart: down closes the listening socket and every
 * connection (clients get connection refused); up listens again on the same port. Objects and
 * history survive (they live in "etcd"). Returns 0 or a negative errno from the restart.
 */
_warn_unused_result_ int fake_apiserver_set_down(struct fake_apiserver *f, bool down);

/* Counters of requests served. */
unsigned fake_apiserver_lists(struct fake_apiserver *f);
unsigned fake_apiserver_watches(struct fake_apiserver *f);
/* Requests by method (e.g. "PUT"), any path. */
unsigned fake_apiserver_requests(struct fake_apiserver *f, const char *method);
