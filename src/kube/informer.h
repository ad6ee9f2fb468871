/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * An informer (client-go reflector + indexer, kube-rs watcher + reflector) for one resource:
 * one thread that LISTs (paged, limit 500) and then WATCHes from the list's resourceVersion with
 * bookmarks, keeping a cache (cache.h) and calling event handlers.
 *
 *  - The cache is filled by the first complete list in one step (cache_replace()); before that it
 *    is empty and informer_has_synced() is false. It is never half-filled.
 *  - A watch that ends normally (server timeout) is resumed from the last resourceVersion seen
 *    (events and bookmarks advance it).
 *  - 410 Gone / Expired (HTTP or a watch ERROR event) relists at once. Relists are quorum reads
 *    (no resourceVersion), so the cache never goes back in time; the swap reports deletes for
 *    objects that vanished, updates for changed ones and adds for new ones to the handlers (no
 *    phantom and no missed objects).
 *  - Transport errors (and garbage or truncated watch lines) back off 800 ms -> 30 s (x2, jitter
 *    1.0), reset after 2 minutes without errors, with one log line per backoff step; then the
 *    informer relists, except after connection refused / 429 / 503, where it resumes the watch.
 *  - informer_stop() cancels a running watch (kube_watch's cancel flag) and joins the thread.
 *  - An object that cannot be decoded or cached (not an object, no usable metadata.name or
 *    namespace, e.g. one with a NUL character, or an index function that refuses it) is skipped
 *    and counted (stats.undecodable and modelplane_informer_undecodable_objects_total{resource}),
 *    with one warning naming it: one bad object never stops the list or the watch of the others.
 *    Strings with "\u0000" are decoded (JSON_PARSE_ALLOW_NUL); what the consumers do with them is
 *    theirs to decide (the TrainedModel reader gives such a spec a False condition).
 *
 * Handlers run on the informer thread, in event order; they must not block for long (enqueue
 * keys, do not reconcile). Objects passed to them are borrowed cached objects (read-only).
 * Handlers and indexes are added before informer_start().
 */

#include <jansson.h>
#include <stdbool.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "util/macro.h"
#include "util/time-util.h"

struct workqueue;
struct informer;
struct metrics_registry;

#define INFORMER_PAGE_SIZE_DEFAULT 500U
#define INFORMER_BACKOFF_INITIAL   (800 * USEC_PER_MSEC)
#define INFORMER_BACKOFF_MAX       (30 * USEC_PER_SEC)
#define INFORMER_BACKOFF_RESET     (2 * USEC_PER_MINUTE)

struct informer_options {
        const char *name;           /* borrowed; for logs, e.g. "trainedmodels"; NULL = resource */
        struct kube_client *client; /* borrowed; the informer works on its own kube_client_dup() */
        struct gvr gvr;             /* strings copied */
        const char *namespace;      /* NULL = all namespaces */
        const char *label_selector; /* may be NULL */
        const char *field_selector; /* may be NULL */
        struct cache_options cache; /* transform before storing */
        const struct clock *clock;  /* borrowed; NULL = monotonic (backoff reset) */
        unsigned page_size;         /* 0 = 500 */
        unsigned watch_timeout_seconds; /* 0 = random in [300, 600) as client-go */
        usec_t backoff_initial;         /* 0 = 800 ms */
        usec_t backoff_max;             /* 0 = 30 s */
        usec_t backoff_reset;           /* 0 = 2 min */
        bool no_jitter;                 /* tests: exact backoff steps */
        /*
         * Resync (controller-runtime SyncPeriod, default 10 h there): every period, every cached
         * object is handed to on_update(obj, obj) again, as a safety net for lost triggers. Checked
         * when a watch ends (watches last 5-10 minutes), so it is that coarse. 0 = never.
         */
        usec_t resync_period;
        struct metrics_registry *metrics; /* borrowed; may be NULL (no metrics) */
};

struct informer_handler {
        void (*on_add)(void *userdata, json_t *obj);                         /* may be NULL */
        void (*on_update)(void *userdata, json_t *old_obj, json_t *new_obj); /* may be NULL */
        void (*on_delete)(void *userdata, json_t *obj);                      /* may be NULL */
        void *userdata;
};

struct informer_stats {
        unsigned lists;            /* complete lists (first one included) */
        unsigned relists;          /* lists after the first */
        unsigned watches;          /* watch requests started */
        unsigned backoffs;         /* backoff steps taken */
        unsigned errors;           /* failed list/watch attempts */
        unsigned resyncs;          /* periodic resyncs done */
        unsigned undecodable;      /* objects skipped because they could not be decoded or cached */
        char resource_version[64]; /* last resourceVersion seen */
};

_warn_unused_result_ int informer_new(const struct informer_options *opts, struct informer **ret);
/* Stops (if running) and frees; the cache goes with it. */
struct informer *informer_free(struct informer *inf);
DEFINE_CLEANUP_FUNC(struct informer *, informer_free)

/* The informer's cache (borrowed; lives as long as the informer). Add indexes before start. */
struct cache *informer_cache(struct informer *inf);

/* Adds a handler (copied). Before informer_start() only: -EBUSY afterwards. */
_warn_unused_result_ int informer_add_handler(struct informer *inf,
                                              const struct informer_handler *h);

/* Maps an object to reconcile keys: *ret_keys is a new JSON array of strings (or NULL). */
typedef int (*informer_map_fn)(void *userdata, const json_t *obj, json_t **ret_keys);

/* Handlers that add keys to q (borrowed, must outlive the informer's thread): */
/* the object's own key ("ns/name"); */
_warn_unused_result_ int informer_enqueue_self(struct informer *inf, struct workqueue *q);
/* the keys of its ownerReferences of the given kind whose apiVersion has the given group
 * (group "" matches the core group "v1"); on update both old and new owners; */
_warn_unused_result_ int informer_enqueue_owner(struct informer *inf, struct workqueue *q,
                                                const char *owner_group, const char *owner_kind);
/* any mapping; on update the keys of both old and new objects. */
_warn_unused_result_ int informer_enqueue_mapped(struct informer *inf, struct workqueue *q,
                                                 informer_map_fn fn, void *userdata);

/* The same, except that an update for which @update_pred(userdata, old, new) is false enqueues
 * nothing (controller-runtime's update predicates; adds and deletes always enqueue). */
typedef bool (*informer_update_pred)(void *userdata, const json_t *old_obj, const json_t *new_obj);
_warn_unused_result_ int informer_enqueue_mapped_if(struct informer *inf, struct workqueue *q,
                                                    informer_map_fn fn,
                                                    informer_update_pred update_pred,
                                                    void *userdata);

/* Pure: keys ("ns/name") of obj's ownerReferences matching group/kind. */
_warn_unused_result_ int informer_owner_keys(const json_t *obj, const char *owner_group,
                                             const char *owner_kind, json_t **ret_keys);

_warn_unused_result_ int informer_start(struct informer *inf);
/* Cancels and joins the thread. Idempotent. */
void informer_stop(struct informer *inf);

bool informer_has_synced(struct informer *inf);
/* Waits (real time) until synced: 0, -ETIMEDOUT, or -ECANCELED when stopped first. */
_warn_unused_result_ int informer_wait_synced(struct informer *inf, usec_t timeout);

void informer_get_stats(struct informer *inf, struct informer_stats *ret);
