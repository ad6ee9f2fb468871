/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/leader.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json/json-util.h"
#include "kube/metrics.h"
#include "util/log.h"

static const struct gvr lease_gvr = { "coordination.k8s.io", "v1", "leases" };

struct leader_elector {
        struct leader_options opts; /* string pointers replaced by the owned copies below */
        char *ns, *name, *identity; /* owned */
        struct kube_client *client; /* owned */
        const struct clock *clock;
        struct metric *m_status;

        pthread_t thread;
        bool started;
        atomic_bool stop;
        atomic_bool leading;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned seed;

        /* elector thread only */
        json_t *observed;     /* owned; the last Lease spec seen */
        usec_t observed_time; /* clock time when observed changed */
        char leader[256];     /* last holder reported to on_new_leader */
};

int leader_elector_new(const struct leader_options *opts, struct leader_elector **ret)
{
        struct leader_elector *le;
        pthread_condattr_t attr;
        int r;

        if (!opts || !ret || !opts->client || !opts->namespace || !opts->name || !opts->identity ||
            !*opts->identity)
                return -EINVAL;
        le = calloc(1, sizeof(*le));
        if (!le)
                return -ENOMEM;
        (void)pthread_mutex_init(&le->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&le->cond, &attr);
        (void)pthread_condattr_destroy(&attr);
        le->opts = *opts;
        if (!le->opts.lease_duration)
                le->opts.lease_duration = LEADER_LEASE_DURATION_DEFAULT;
        if (!le->opts.renew_deadline)
                le->opts.renew_deadline = LEADER_RENEW_DEADLINE_DEFAULT;
        if (!le->opts.retry_period)
                le->opts.retry_period = LEADER_RETRY_PERIOD_DEFAULT;
        le->clock = opts->clock ? opts->clock : &clock_monotonic;
        le->seed = (unsigned)(now_monotonic() ^ (uintptr_t)le);
        le->ns = strdup(opts->namespace);
        le->name = strdup(opts->name);
        le->identity = strdup(opts->identity);
        if (!le->ns || !le->name || !le->identity) {
                leader_elector_free(le);
                return -ENOMEM;
        }
        r = kube_client_dup(opts->client, &le->client);
        if (r >= 0 && opts->metrics)
                r = metrics_runtime_child(opts->metrics,
                                          RUNTIME_METRIC_LEADER_ELECTION_MASTER_STATUS,
                                          (const char *const[]){ le->name }, &le->m_status);
        if (r < 0) {
                leader_elector_free(le);
                return r;
        }
        metric_set(le->m_status, 0);
        *ret = le;
        return 0;
}

struct leader_elector *leader_elector_free(struct leader_elector *le)
{
        if (!le)
                return NULL;
        leader_elector_stop(le);
        kube_client_free(le->client);
        json_decref(le->observed);
        free(le->ns);
        free(le->name);
        free(le->identity);
        (void)pthread_cond_destroy(&le->cond);
        (void)pthread_mutex_destroy(&le->lock);
        free(le);
        return NULL;
}

bool leader_elector_is_leader(struct leader_elector *le)
{
        return le && atomic_load(&le->leading);
}

static unsigned lease_seconds(const struct leader_elector *le)
{
        usec_t s = (le->opts.lease_duration + USEC_PER_SEC - 1) / USEC_PER_SEC;
        return s == 0 ? 1 : (unsigned)s;
}

static json_t *new_spec(const char *holder, unsigned duration, const char *acquire,
                        const char *renew, json_int_t transitions)
{
        return json_pack("{s:s,s:i,s:s,s:s,s:I}", "holderIdentity", holder, "leaseDurationSeconds",
                         (int)duration, "acquireTime", acquire, "renewTime", renew,
                         "leaseTransitions", transitions);
}

static void note_leader(struct leader_elector *le, const char *holder)
{
        if (!holder || !*holder || streq(holder, le->leader))
                return;
        (void)snprintf(le->leader, sizeof(le->leader), "%s", holder);
        if (!streq(holder, le->identity))
                (void)log_info("New leader elected for lease %s/%s: %s", le->ns, le->name, holder);
        if (le->opts.callbacks.on_new_leader)
                le->opts.callbacks.on_new_leader(le->opts.callbacks.userdata, holder);
}

/* We wrote spec to the lease at now: it is what we observe, and we lead. Returns true. */
static bool hold(struct leader_elector *le, json_t *spec, usec_t now)
{
        json_decref(le->observed);
        le->observed = spec;
        le->observed_time = now;
        note_leader(le, le->identity);
        return true;
}

/* One attempt (client-go tryAcquireOrRenew). Returns true when we hold the lease now. */
static bool try_acquire_or_renew(struct leader_elector *le)
{
        json_auto_t *lease = NULL, *spec = NULL, *update = NULL;
        char now_s[40];
        json_t *cur;
        const char *holder, *acquire;
        json_int_t duration, transitions;
        usec_t now = clock_now(le->clock);
        int r;

        if (format_micro_time(now_realtime(), now_s, sizeof(now_s)) < 0)
                return false;
        r = kube_get(le->client, &lease_gvr, le->ns, le->name, &lease, NULL);
        if (r == -ENOENT) {
                json_auto_t *obj = NULL;

                spec = new_spec(le->identity, lease_seconds(le), now_s, now_s, 0);
                obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:O}", "apiVersion", "coordination.k8s.io/v1",
                                "kind", "Lease", "metadata", "name", le->name, "namespace", le->ns,
                                "spec", spec);
                if (!obj || kube_create(le->client, &lease_gvr, le->ns, obj, NULL, NULL, NULL) < 0)
                        return false;
                return hold(le, TAKE_PTR(spec), now);
        }
        if (r < 0)
                return false;

        cur = json_object_get(lease, "spec");
        if (!json_is_object(cur))
                cur = NULL;
        holder = json_string_value(json_object_get(cur, "holderIdentity"));
        duration = json_integer_value(json_object_get(cur, "leaseDurationSeconds"));
        transitions = json_integer_value(json_object_get(cur, "leaseTransitions"));
        acquire = json_string_value(json_object_get(cur, "acquireTime"));

        if (!le->observed || !cur || !json_equal(le->observed, cur)) {
                json_decref(le->observed);
                le->observed = cur ? json_incref(cur) : json_object();
                le->observed_time = now;
        }
        note_leader(le, holder);
        if (holder && *holder && !streq(holder, le->identity) &&
            le->observed_time + (usec_t)MAX(duration, 0) * USEC_PER_SEC > now)
                return false; /* held by someone else and not expired */

        if (holder && streq(holder, le->identity))
                spec = new_spec(le->identity, lease_seconds(le), acquire ? acquire : now_s, now_s,
                                transitions);
        else
                spec = new_spec(le->identity, lease_seconds(le), now_s, now_s, transitions + 1);
        update = json_deep_copy(lease);
        if (!spec || !update || json_object_set(update, "spec", spec) < 0)
                return false;
        /* metadata.resourceVersion from the GET is the optimistic-concurrency precondition */
        r = kube_update(le->client, &lease_gvr, le->ns, le->name, update, NULL, NULL, NULL);
        if (r < 0)
                return false;
        return hold(le, TAKE_PTR(spec), now);
}

static void release(struct leader_elector *le)
{
        json_auto_t *lease = NULL, *spec = NULL;
        const char *holder;
        char now_s[40];

        if (format_micro_time(now_realtime(), now_s, sizeof(now_s)) < 0)
                return;
        if (kube_get(le->client, &lease_gvr, le->ns, le->name, &lease, NULL) < 0)
                return;
        holder = json_get_string_path(lease, "spec", "holderIdentity", NULL);
        if (!holder || !streq(holder, le->identity))
                return;
        spec = new_spec("", 1, now_s, now_s,
                        json_integer_value(json_get_path(lease, "spec", "leaseTransitions", NULL)));
        if (!spec || json_object_set(lease, "spec", spec) < 0)
                return;
        if (kube_update(le->client, &lease_gvr, le->ns, le->name, lease, NULL, NULL, NULL) < 0)
                (void)log_warn("Failed to release lease %s/%s, ignoring", le->ns, le->name);
        else
                (void)log_info("Released lease %s/%s", le->ns, le->name);
}

/* Sleeps d (real time); false when stopped. */
static bool sleep_for(struct leader_elector *le, usec_t d)
{
        usec_t deadline = now_monotonic() + d;

        (void)pthread_mutex_lock(&le->lock);
        while (!atomic_load(&le->stop) && now_monotonic() < deadline) {
                struct timespec ts = usec_to_timespec(deadline);
                (void)pthread_cond_timedwait(&le->cond, &le->lock, &ts);
        }
        (void)pthread_mutex_unlock(&le->lock);
        return !atomic_load(&le->stop);
}

static usec_t jittered(struct leader_elector *le, usec_t d)
{
        /* client-go: wait.JitterUntil(retryPeriod, JitterFactor=1.2) */
        return d + (usec_t)((double)d * 1.2 * ((double)rand_r(&le->seed) / (double)RAND_MAX));
}

/* Tries to renew until renew_deadline has passed; true when renewed (false also when stopped). */
static bool renew_within_deadline(struct leader_elector *le)
{
        usec_t deadline = now_monotonic() + le->opts.renew_deadline;

        while (!atomic_load(&le->stop) && now_monotonic() < deadline) {
                usec_t now;

                if (try_acquire_or_renew(le))
                        return true;
                now = now_monotonic();
                if (!sleep_for(le, MIN(le->opts.retry_period, deadline > now ? deadline - now : 0)))
                        break;
        }
        return false;
}

/* Leading: renews every retry_period until stopped or a renewal misses its deadline. */
static void lead(struct leader_elector *le)
{
        while (sleep_for(le, le->opts.retry_period)) {
                bool renewed = renew_within_deadline(le);

                if (atomic_load(&le->stop))
                        return;
                if (!renewed) {
                        (void)log_error("Failed to renew lease %s/%s within %.1fs: leadership lost",
                                        le->ns, le->name,
                                        (double)le->opts.renew_deadline / (double)USEC_PER_SEC);
                        return;
                }
        }
}

static void *elector_thread(void *p)
{
        struct leader_elector *le = p;

        (void)log_info("Attempting to acquire leader lease %s/%s as %s", le->ns, le->name,
                       le->identity);
        while (!try_acquire_or_renew(le))
                if (!sleep_for(le, jittered(le, le->opts.retry_period)))
                        return NULL;
        if (atomic_load(&le->stop)) {
                if (le->opts.release_on_cancel)
                        release(le);
                return NULL;
        }
        (void)log_info("Successfully acquired lease %s/%s", le->ns, le->name);
        atomic_store(&le->leading, true);
        metric_set(le->m_status, 1);
        if (le->opts.callbacks.on_started_leading)
                le->opts.callbacks.on_started_leading(le->opts.callbacks.userdata);

        lead(le);

        if (atomic_load(&le->stop) && le->opts.release_on_cancel)
                release(le);
        atomic_store(&le->leading, false);
        metric_set(le->m_status, 0);
        if (le->opts.callbacks.on_stopped_leading)
                le->opts.callbacks.on_stopped_leading(le->opts.callbacks.userdata);
        return NULL;
}

int leader_elector_start(struct leader_elector *le)
{
        int r;

        if (!le)
                return -EINVAL;
        if (le->started)
                return -EALREADY;
        r = pthread_create(&le->thread, NULL, elector_thread, le);
        if (r != 0)
                return -r;
        le->started = true;
        return 0;
}

void leader_elector_stop(struct leader_elector *le)
{
        if (!le || !le->started)
                return;
        atomic_store(&le->stop, true);
        (void)pthread_mutex_lock(&le->lock);
        (void)pthread_cond_broadcast(&le->cond);
        (void)pthread_mutex_unlock(&le->lock);
        (void)pthread_join(le->thread, NULL);
        le->started = false;
}
