/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The list-and-watch loop of the agent's ConfigMap source (client-go's Reflector.ListAndWatch,
 * kube-rs's watcher) as a pure state machine: no I/O, no clock ("now" and the jitter are
 * arguments). The shell (watch-configmap.c) performs the step it is handed, reports its outcome
 * and performs the next step; this module decides.
 *
 *  - Start: LIST (a quorum read: no resourceVersion), then WATCH from the list's
 *    resourceVersion. Never from the object's own resourceVersion: an object that has not
 *    changed for a while carries a revision that etcd compaction has expired, and every watch
 *    from it would answer 410.
 *  - Watch events and bookmarks move the resourceVersion (reflector_observed()); a watch that
 *    the server ends (its timeout), or whose established stream is cut (-EIO after it observed
 *    something or ran REFLECTOR_WATCH_MIN: an API server killed or restarted), goes on from
 *    there at once, as client-go's does: the resourceVersion moves only with decoded events, so
 *    nothing is lost, and a resourceVersion the server no longer holds answers 410.
 *  - 410 Gone / Expired (-ESTALE, the HTTP answer or a watch ERROR event): the resourceVersion
 *    is forgotten and the shell LISTs at once. This is not a failure: the API answered, it only
 *    no longer holds that history. A second 410 in a row with nothing observed in between waits
 *    a backoff step first, so a server that expires every resourceVersion cannot make us spin.
 *  - Any other error is a failure (reflector_step.failed): wait a backoff step with jitter (1 s
 *    doubling to 30 s, each step scaled by a factor in [0.5, 1.0), agent/plan.h's
 *    backoff_delay()), then resume the watch from the resourceVersion after a refused connection
 *    or throttling (-ECONNREFUSED, -EAGAIN: no event can have been lost), LIST after anything
 *    else (a garbled stream, a 5xx, a 403). A watch that ends at once with nothing observed
 *    counts as a failure too (-EPROTO), so a server closing every watch is not hammered.
 *  - The failure count restarts after a watch that observed something or ran its course, and
 *    after REFLECTOR_BACKOFF_RESET without failures; a LIST that succeeds does not reset it (a
 *    LIST allowed and a WATCH refused keeps backing off).
 */

#include <stdbool.h>

#include "util/macro.h"
#include "util/time-util.h"

#define REFLECTOR_RV_MAX          128 /* etcd revisions are at most 20 digits */
#define REFLECTOR_BACKOFF_INITIAL (1 * USEC_PER_SEC)
#define REFLECTOR_BACKOFF_MAX     (30 * USEC_PER_SEC)
#define REFLECTOR_BACKOFF_RESET   (2 * USEC_PER_MINUTE)
/* A watch that ends sooner than this having observed nothing is a failure. */
#define REFLECTOR_WATCH_MIN (1 * USEC_PER_SEC)

enum reflector_op {
        REFLECTOR_LIST,  /* LIST, then reflector_listed() */
        REFLECTOR_WATCH, /* WATCH from reflector.rv, then reflector_watch_ended() */
};

struct reflector_step {
        enum reflector_op op;
        usec_t delay; /* wait this long before doing it; 0 = at once */
        bool failed;  /* the request just reported failed (not a 410): the API did not answer */
        bool expired; /* it answered 410: the resourceVersion was too old (relisting) */
};

/* Fields read-only outside this module. */
struct reflector {
        char rv[REFLECTOR_RV_MAX]; /* where the next watch starts; "" = LIST first */
        unsigned failures;         /* consecutive failures (backoff steps taken) */
        unsigned expired_in_a_row; /* 410s with nothing observed in between */
        bool observed;             /* the current watch observed an event or a bookmark */
        usec_t last_failure;       /* "now" of the last failure; 0 = none */
        usec_t backoff_initial, backoff_max;
};

/* Zeroes @rf with the default backoff (initial/max 0 = the defaults above). */
void reflector_init(struct reflector *rf, usec_t backoff_initial, usec_t backoff_max);

/* The first step: LIST at once. */
struct reflector_step reflector_start(struct reflector *rf);

/*
 * The LIST answered @r: >= 0 with the list's metadata.resourceVersion @rv (borrowed), or a
 * negative errno. A list without a usable resourceVersion (missing, empty or too long) is a
 * failure (-EBADMSG).
 */
struct reflector_step reflector_listed(struct reflector *rf, int r, const char *rv, usec_t now,
                                       double random01);

/*
 * A watch event (ADDED, MODIFIED, DELETED) or BOOKMARK carried @rv (its object's
 * metadata.resourceVersion): the next watch starts there. Returns 0, or -E2BIG for an rv that
 * does not fit (it is then forgotten, so the next step LISTs).
 */
_warn_unused_result_ int reflector_observed(struct reflector *rf, const char *rv);

/*
 * The WATCH ended with @r: 0 (the server closed it), -ESTALE (410), or another negative errno;
 * @ran: how long it lasted.
 */
struct reflector_step reflector_watch_ended(struct reflector *rf, int r, usec_t ran, usec_t now,
                                            double random01);
