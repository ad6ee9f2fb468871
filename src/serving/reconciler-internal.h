/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * What the two files of the TrainedModel controller's shell share (not an API): reconciler.c
 * (the reconciles) and reconciler-watch.c (the informer handlers that turn changes into keys,
 * with the delete batching and the filters of passes that would change nothing).
 */

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "serving/plan.h"
#include "serving/reconciler.h"
#include "util/hashmap.h"
#include "util/time-util.h"

struct workqueue;

/* A chain of our own writes of one ConfigMap (modelconfig-<isvc>-0, reconciler-own.c, or a
 * placement assignment, reconciler-spread.c): the resourceVersion planned from first (none after
 * a create), then each one written; obj is the last answer. */
#define OWN_CHAIN_MAX 16
struct own_chain {
        char *rvs[OWN_CHAIN_MAX]; /* owned */
        size_t n;
        json_t *obj;  /* owned reference; the last answer, NULL: deleted (or none yet) */
        bool created; /* the chain began with our create */
};

/* Returns: owned (own_chain_free()); NULL on OOM. @base (may be NULL) is its first version. */
struct own_chain *own_chain_new(const char *base, bool created);
void own_chain_free(void *chain);
/* Appends @rv (copied) when there is room. Returns 0, -E2BIG (full), -ENOMEM. */
int own_chain_append(struct own_chain *c, const char *rv);
/* The newest version, NULL when none. Borrowed. */
const char *own_chain_last(const struct own_chain *c);
/* Does @rv (may be NULL: no) equal one of rvs[from..n - 1 - drop_last]? */
bool own_chain_has(const struct own_chain *c, const char *rv, size_t from, bool drop_last);

/* Our answer for one TrainedModel, written over the cached resourceVersion rv. */
struct own_write {
        char *rv;    /* owned */
        json_t *obj; /* owned reference; NULL: the object is gone */
};
void own_write_free(void *w);
/* A map of maps (InferenceService key -> name -> value), the inner ones freeing with @free_fn:
 * the inner map of @key, made when absent and @create (NULL on OOM or when absent). */
struct hashmap *own_inner(struct hashmap *outer, const char *key, bool create,
                          hashmap_free_fn free_fn);
void own_inner_free(void *inner);

/* Our last InferenceService status write (placement), over the cached resourceVersion rv. */
struct own_isvc_status {
        char *rv;    /* owned */
        char *value; /* owned; NULL: the annotation removed */
};
void own_isvc_status_free(void *s);

struct tm_reconciler {
        struct cache *tms;   /* borrowed */
        struct cache *isvcs; /* borrowed */
        tm_event_fn event;
        void *event_userdata;
        unsigned writes_per_pass;
        struct cache *configmaps; /* borrowed, may be NULL */
        bool ready_requires_loaded;
        struct workqueue *finalize_queue; /* borrowed, may be NULL: released inline */
        bool no_finalizer;
        struct workqueue *release_queue; /* borrowed, may be NULL: released inline */
        struct hashmap *releasing;       /* owned: keys handed to release_queue, not yet done
                                          * (a set: each value is r itself, not owned); guarded
                                          * by own_lock */
        usec_t delete_batch_window;      /* USEC_INFINITY: no batching */
        const struct clock *clock;       /* borrowed; the wall clock of the reconciles */
        struct workqueue *isvc_queue;    /* borrowed: the InferenceService controller's */

        /* Our own TrainedModel writes the informer has not delivered yet (own_writes_*). */
        pthread_mutex_t own_lock;
        struct hashmap *own_writes; /* owned: isvc key -> tm name -> struct own_write */
        /* Our own ConfigMap writes the informer has not delivered yet (own_configmap_*). */
        struct hashmap *own_configmaps; /* owned: "ns/cm" -> struct own_chain */
        /* Delete batching (reconciler-watch.c): isvc key -> usec_t (owned) of its last ConfigMap
         * write, on r->clock; guarded by own_lock. */
        struct hashmap *last_writes;
        /* Placement (reconciler-spread.c), guarded by own_lock: our assignment writes the cache
         * has not delivered (isvc key -> cm name -> struct own_chain), our last InferenceService
         * status write (isvc key -> struct own_isvc_status), and each InferenceService's
         * per-pod summary for the metrics (isvc key -> json_t [{"pod", "models", ...}]). */
        struct hashmap *own_assignments, *own_isvc_status, *placement_pods;

        atomic_ulong configmap_gets, configmap_writes, configmap_conflicts;
        atomic_ulong tm_metadata_writes, tm_status_writes, tm_deletes;
        atomic_ulong passes, passes_skipped, plans, events_posted, events_skipped;
        atomic_ullong configmap_bytes_written;
        atomic_ulong assignment_writes, placement_moved, isvc_status_writes;
};

/* Own writes (reconciler-own.c; each function's comment there). */
int tm_configmap_key(const char *ns, const char *name, char *buf, size_t len);
json_t *tm_own_configmap_overlay(struct tm_reconciler *r, const char *key, json_t *cached);
int tm_own_configmap_put(struct tm_reconciler *r, const char *key, const json_t *from,
                         const json_t *answer);
int tm_own_writes_overlay(struct tm_reconciler *r, const char *key, json_t *tms);
int tm_own_writes_put(struct tm_reconciler *r, const char *key, const json_t *cached,
                      const json_t *answer);
bool tm_own_writes_lookup(struct tm_reconciler *r, const char *key, const json_t *cached,
                          json_t **ret);
json_t *tm_slim_answer(json_t *answer /* steals */);
const char *tm_obj_rv(const json_t *o);

/* Placement (reconciler-spread.c; each function's comment there). */
int tm_spread_load(struct tm_reconciler *r, const char *key, json_t **ret);
int tm_spread_write(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                    const char *ns, const char *isvc, const struct isvc_plan *plan, json_t *cms);
int tm_spread_isvc_status(struct tm_reconciler *r, const struct reconcile_ctx *ctx, const char *key,
                          const char *ns, const char *name, const json_t *isvc,
                          const struct isvc_plan *plan);
void tm_spread_note(struct tm_reconciler *r, const char *key, const struct isvc_plan *plan);
void tm_spread_forget(struct tm_reconciler *r, const char *key);
bool tm_own_assignment_echo(struct tm_reconciler *r, const json_t *cm);

/* Notes that the pass of isvc key wrote its ConfigMap at @now (the reconcile's clock, which
 * r->clock is too): delete-starts within the batching window after it wait for the window's end
 * (reconciler-watch.c). */
usec_t tm_delete_batch_window(const struct tm_reconciler_options *opts);
void tm_batch_note_write(struct tm_reconciler *r, const char *key, usec_t now);
