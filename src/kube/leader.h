/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package:
 *
 *  - Acquire: every retry_period (jittered x1.2) GET the Lease; create it when missing; take it
 *    when it has no holder or when its record has not changed for leaseDurationSeconds as
 *    observed on our own clock (never comparing clocks across machines); writes are optimistic
 *    (resourceVersion precondition), so of two candidates only one wins.
 *  - Renew: every retry_period; when no renewal succeeded for renew_deadline, leadership is lost
 *    (on_stopped_leading) and the elector ends: the process should exit, as controller-runtime's
 *    managers do.
 *  - Release on clean shutdown (release_on_cancel): holderIdentity cleared and
 *    leaseDurationSeconds=1, so that another candidate takes over at once.
 *  - Record fields: holderIdentity, leaseDurationSeconds, acquireTime, renewTime (MicroTime),
 *    leaseTransitions (incremented when the holder changes).
 *
 * Callbacks run on the elector's thread. Runtime code: it logs leadership changes.
 */

#include <stdbool.h>

#include "kube/client.h"
#include "util/macro.h"
#include "util/time-util.h"

struct metrics_registry;
struct leader_elector;

#define LEADER_LEASE_DURATION_DEFAULT (15 * USEC_PER_SEC)
#define LEADER_RENEW_DEADLINE_DEFAULT (10 * USEC_PER_SEC)
#define LEADER_RETRY_PERIOD_DEFAULT   (2 * USEC_PER_SEC)

struct leader_callbacks {
        void (*on_started_leading)(void *userdata);
        void (*on_stopped_leading)(void *userdata);
        void (*on_new_leader)(void *userdata, const char *identity); /* may be NULL */
        void *userdata;
};

struct leader_options {
        struct kube_client *client; /* borrowed; the elector works on its own kube_client_dup() */
        const char *namespace;      /* borrowed; the Lease's namespace */
        const char *name;           /* borrowed; the Lease's name (--leader-election-id) */
        const char *identity;       /* borrowed; unique per process, e.g. hostname_uuid */
        usec_t lease_duration;      /* 0 = 15 s (written rounded up to whole seconds) */
        usec_t renew_deadline;      /* 0 = 10 s */
        usec_t retry_period;        /* 0 = 2 s */
        bool release_on_cancel;
        const struct clock *clock;        /* borrowed; NULL = monotonic */
        struct metrics_registry *metrics; /* borrowed, may be NULL: leader_election_master_status */
        struct leader_callbacks callbacks;
};

_warn_unused_result_ int leader_elector_new(const struct leader_options *opts,
                                            struct leader_elector **ret);
/* Stops (releasing if configured) and frees. */
struct leader_elector *leader_elector_free(struct leader_elector *le);
DEFINE_CLEANUP_FUNC(struct leader_elector *, leader_elector_free)

_warn_unused_result_ int leader_elector_start(struct leader_elector *le);
/* Stops campaigning/renewing; releases the Lease when leading and release_on_cancel; calls
 * on_stopped_leading if it was leading; joins the thread. Idempotent. */
void leader_elector_stop(struct leader_elector *le);
bool leader_elector_is_leader(struct leader_elector *le);
