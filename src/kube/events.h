/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A Kubernetes Events recorder (core/v1 Event) with client-go's correlation
 * (tools/record/events_cache.go):
 *
 *  - aggregation: events that differ only in their message (same source, involved object, type
 *    and reason) are counted; once 10 distinct messages were seen within 600 s, further ones are
 *    folded into one event whose message starts "(combined from similar events): ";
 *  - deduplication: an event identical to an earlier one (same key) is not created again: the
 *    earlier Event gets count+1, lastTimestamp and message by PATCH;
 *  - spam filter: a token bucket per involved object (burst 25, one token back every 300 s);
 *    events beyond it are dropped;
 *  - every cache is an LRU bounded to lru_size entries (default 4096).
 *
 * The correlator is pure apart from the clock port (tests use a fake clock). The recorder
 * correlates in the caller's thread (cheap, never blocks on I/O) and sends from a bounded queue
 * (default 1000; beyond it events are dropped) on its own thread with its own kube_client clone
 * and its own budget (default 50 QPS, burst 300, separate from the reconciles' writes), retrying
 * transient failures up to 12 times, so reconcilers never wait for the API server. An event whose
 * Event is still queued (not sent yet) updates that queued write (count, message,
 * lastTimestamp) instead of taking a queue slot: a flood of repeats costs one write.
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "util/macro.h"
#include "util/time-util.h"

enum event_type {
        EVENT_NORMAL,
        EVENT_WARNING,
        EVENT_TYPE__MAX,
        EVENT_TYPE__INVALID = -EINVAL,
};

const char *event_type_to_string(enum event_type t); /* "Normal", "Warning"; NULL out of range */

/* The involved object; all strings borrowed for the call. namespace NULL = cluster-scoped. */
struct event_object_ref {
        const char *api_version;
        const char *kind;
        const char *namespace;
        const char *name;
        const char *uid;
        const char *resource_version;
};

#define EVENT_MESSAGE_MAX 1024 /* longer messages are truncated */
#define EVENT_NAME_MAX    300

struct event_correlator_options {
        const char *component;     /* borrowed; source.component / reportingComponent */
        const char *host;          /* borrowed; source.host / reportingInstance, may be NULL */
        unsigned max_similar;      /* 0 = 10 */
        usec_t aggregate_interval; /* 0 = 600 s */
        unsigned spam_burst;       /* 0 = 25 */
        usec_t spam_refill;        /* one token per this; 0 = 300 s */
        size_t lru_size;           /* 0 = 4096 */
        const struct clock *clock; /* borrowed; NULL = monotonic */
};

enum event_action {
        EVENT_ACTION_DROP,   /* spam-filtered */
        EVENT_ACTION_CREATE, /* POST a new Event named decision.name */
        EVENT_ACTION_PATCH,  /* PATCH count/message/lastTimestamp of Event decision.name */
};

struct event_decision {
        enum event_action action;
        char name[EVENT_NAME_MAX];            /* the Event's metadata.name */
        char message[EVENT_MESSAGE_MAX + 64]; /* possibly "(combined from similar events): ..." */
        unsigned count;
        usec_t first_seen; /* realtime usec of the first occurrence of this Event */
};

struct event_correlator;

struct event_correlator *event_correlator_new(const struct event_correlator_options *opts);
struct event_correlator *event_correlator_free(struct event_correlator *c);
DEFINE_CLEANUP_FUNC(struct event_correlator *, event_correlator_free)

/*
 * Decides what to do with one event. now_real is the wall-clock time (for Event names and
 * timestamps); intervals use the clock port. Returns 0 or -EINVAL/-ENOMEM.
 */
_warn_unused_result_ int event_correlate(struct event_correlator *c,
                                         const struct event_object_ref *obj, enum event_type type,
                                         const char *reason, const char *message, usec_t now_real,
                                         struct event_decision *ret);

#define EVENT_QPS_DEFAULT   50.0
#define EVENT_BURST_DEFAULT 300U

struct event_recorder_options {
        struct kube_client *client; /* borrowed; the recorder works on its own clone */
        struct event_correlator_options correlator;
        double qps;         /* the Events' own client-side budget; 0 = 50 */
        unsigned burst;     /* 0 = 300 */
        size_t queue_max;   /* 0 = 1000 */
        unsigned max_tries; /* 0 = 12 */
        usec_t retry_sleep; /* 0 = 10 s */
};

struct event_recorder;

_warn_unused_result_ int event_recorder_new(const struct event_recorder_options *opts,
                                            struct event_recorder **ret);
/* Stops the sender (events still queued are dropped) and frees. */
struct event_recorder *event_recorder_free(struct event_recorder *r);
DEFINE_CLEANUP_FUNC(struct event_recorder *, event_recorder_free)

/*
 * Records an event; never blocks on I/O. Returns 0 (queued or spam-filtered), -ENOBUFS when the
 * queue is full (dropped), -EINVAL, -ENOMEM. Callers normally ignore the result.
 */
int event_recorder_emit(struct event_recorder *r, const struct event_object_ref *obj,
                        enum event_type type, const char *reason, const char *fmt, ...)
        _printf_(5, 6);

/* Waits until the queue is empty and nothing is being sent, at most timeout: 0 or -ETIMEDOUT. */
_warn_unused_result_ int event_recorder_flush(struct event_recorder *r, usec_t timeout);

/* Counters (tests, metrics): sent = API writes that succeeded; dropped = spam + full + failed. */
void event_recorder_stats(struct event_recorder *r, unsigned *ret_sent, unsigned *ret_dropped);

struct event_recorder_stats {
        unsigned long emitted;            /* event_recorder_emit() calls */
        unsigned long sent;               /* API writes that succeeded */
        unsigned long aggregated;         /* count increments of an existing Event (correlator) */
        unsigned long coalesced;          /* folded into a queued write of the same Event */
        unsigned long dropped_spam;       /* per-object spam filter */
        unsigned long dropped_queue_full; /* queue at queue_max */
        unsigned long dropped_failed;     /* write failed after the retries, or no memory */
        size_t queued, queue_max;         /* now, and the bound */
};

void event_recorder_get_stats(struct event_recorder *r, struct event_recorder_stats *ret);
