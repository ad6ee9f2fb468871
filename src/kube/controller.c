/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/controller.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/informer.h"
#include "kube/metrics.h"
#include "kube/workqueue.h"
#include "util/log.h"
#include "util/uuid.h"

/* How long a key waits while the caches of controller_options.wait_for are not synced. */
#define CACHE_SYNC_REQUEUE (200 * USEC_PER_MSEC)
/* The reconciler's error message (reconcile_errorf), as logged by the runner. */
#define RECONCILE_ERROR_MAX 1024

struct controller {
        struct reconciler reconciler;
        char *name; /* owned copy of reconciler.name */
        unsigned n_workers;
        const struct clock *clock;
        const struct clock *wall_clock;
        struct kube_client *client; /* borrowed, may be NULL */
        const struct kube_api *api; /* borrowed, may be NULL */
        unsigned write_fanout;
        struct informer **wait_for; /* owned array of borrowed informers */
        size_t n_wait_for;
        struct workqueue *queue; /* owned */
        pthread_t *threads;      /* owned */
        size_t n_threads;        /* started */
        bool started;
        atomic_bool stopping;

        pthread_mutex_t lock;
        pthread_cond_t exited; /* a worker exited */
        unsigned running;      /* workers not yet exited */
        atomic_uint active;    /* reconciles in progress */

        struct metric *m_success, *m_error, *m_requeue, *m_requeue_after, *m_errors, *m_terminal,
                *m_time, *m_max, *m_active;
};

bool reconcile_error_is_terminal(int r)
{
        return r == -EINVAL || r == -EACCES;
}

int reconcile_errorf(const struct reconcile_ctx *ctx, int r, const char *fmt, ...)
{
        va_list ap;

        if (!ctx || !ctx->error || ctx->error_size == 0 || ctx->error[0] != '\0')
                return r;
        va_start(ap, fmt);
        (void)vsnprintf(ctx->error, ctx->error_size, fmt, ap);
        va_end(ap);
        return r;
}

static int setup_metrics(struct controller *c, struct metrics_registry *reg)
{
        const char *const l1[] = { c->name };
        const struct {
                enum runtime_metric id;
                const char *result;
                struct metric **slot;
        } t[] = {
                { RUNTIME_METRIC_RECONCILE_TOTAL, "success", &c->m_success },
                { RUNTIME_METRIC_RECONCILE_TOTAL, "error", &c->m_error },
                { RUNTIME_METRIC_RECONCILE_TOTAL, "requeue", &c->m_requeue },
                { RUNTIME_METRIC_RECONCILE_TOTAL, "requeue_after", &c->m_requeue_after },
                { RUNTIME_METRIC_RECONCILE_ERRORS_TOTAL, NULL, &c->m_errors },
                { RUNTIME_METRIC_TERMINAL_RECONCILE_ERRORS_TOTAL, NULL, &c->m_terminal },
                { RUNTIME_METRIC_RECONCILE_TIME_SECONDS, NULL, &c->m_time },
                { RUNTIME_METRIC_MAX_CONCURRENT_RECONCILES, NULL, &c->m_max },
                { RUNTIME_METRIC_ACTIVE_WORKERS, NULL, &c->m_active },
        };
        int r;

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                const char *const l2[] = { c->name, t[i].result };
                r = metrics_runtime_child(reg, t[i].id, t[i].result ? l2 : l1, t[i].slot);
                if (r < 0)
                        return r;
        }
        metric_set(c->m_max, (double)c->n_workers);
        metric_set(c->m_active, 0);
        return 0;
}

int controller_new(const struct controller_options *opts, struct controller **ret)
{
        struct workqueue_options qo = { 0 };
        struct controller *c;
        pthread_condattr_t attr;
        int r;

        if (!opts || !ret || !opts->reconciler.reconcile || !opts->reconciler.name)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->reconciler = opts->reconciler;
        c->n_workers = opts->workers ? opts->workers : 1;
        c->clock = opts->clock ? opts->clock : &clock_monotonic;
        c->wall_clock = opts->wall_clock ? opts->wall_clock : &clock_realtime;
        c->client = opts->client;
        c->api = opts->api;
        c->write_fanout = MIN(opts->write_fanout, (unsigned)CONTROLLER_FANOUT_MAX);
        (void)pthread_mutex_init(&c->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&c->exited, &attr);
        (void)pthread_condattr_destroy(&attr);
        c->name = strdup(opts->reconciler.name);
        c->threads = calloc(c->n_workers, sizeof(*c->threads));
        if (opts->n_wait_for > 0) {
                c->wait_for = calloc(opts->n_wait_for, sizeof(struct informer *));
                if (c->wait_for) {
                        memcpy(c->wait_for, opts->wait_for,
                               opts->n_wait_for * sizeof(struct informer *));
                        c->n_wait_for = opts->n_wait_for;
                }
        }
        if (!c->name || !c->threads || (opts->n_wait_for > 0 && !c->wait_for)) {
                controller_free(c);
                return -ENOMEM;
        }
        qo.name = c->name;
        qo.clock = c->clock;
        qo.ratelimit = opts->ratelimit;
        qo.metrics = opts->metrics;
        r = workqueue_new(&qo, &c->queue);
        if (r >= 0 && opts->metrics)
                r = setup_metrics(c, opts->metrics);
        if (r < 0) {
                controller_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

struct workqueue *controller_queue(struct controller *c)
{
        return c ? c->queue : NULL;
}

int controller_enqueue(struct controller *c, const char *key)
{
        if (!c)
                return -EINVAL;
        return workqueue_add(c->queue, key);
}

unsigned controller_active_workers(struct controller *c)
{
        return c ? atomic_load(&c->active) : 0;
}

/* Applies one reconcile's outcome to the queue; logs errors. */
static void handle_result(struct controller *c, const struct log_fields *lf, int r,
                          const struct reconcile_result *res, const char *msg)
{
        const struct log_fields fields = *lf;
        const char *key = lf->object;

        if (r < 0 || res->outcome == RECONCILE_TERMINAL) {
                bool terminal = res->outcome == RECONCILE_TERMINAL ||
                                reconcile_error_is_terminal(r);

                metric_inc(c->m_error);
                metric_inc(c->m_errors);
                if (terminal) {
                        metric_inc(c->m_terminal);
                        workqueue_forget(c->queue, key);
                        (void)log_emit(LOG_LEVEL_ERROR, r < 0 ? r : -EINVAL, &fields,
                                       "Reconciler error (terminal, not retried)%s%s",
                                       msg[0] ? ": " : "", msg);
                        return;
                }
                (void)log_emit(LOG_LEVEL_ERROR, r, &fields, "Reconciler error%s%s",
                               msg[0] ? ": " : "", msg);
                if (workqueue_add_rate_limited(c->queue, key) < 0)
                        (void)log_emit(LOG_LEVEL_ERROR, -ENOMEM, &fields,
                                       "Failed to requeue, dropping key");
                return;
        }

        switch (res->outcome) {
        case RECONCILE_REQUEUE_AFTER:
                metric_inc(c->m_requeue_after);
                workqueue_forget(c->queue, key);
                if (workqueue_add_after(c->queue, key, res->requeue_after) < 0)
                        (void)log_emit(LOG_LEVEL_ERROR, -ENOMEM, &fields,
                                       "Failed to requeue, dropping key");
                break;
        case RECONCILE_RETRY:
                metric_inc(c->m_requeue);
                if (workqueue_add_rate_limited(c->queue, key) < 0)
                        (void)log_emit(LOG_LEVEL_ERROR, -ENOMEM, &fields,
                                       "Failed to requeue, dropping key");
                break;
        case RECONCILE_DONE:
        default:
                metric_inc(c->m_success);
                workqueue_forget(c->queue, key);
                break;
        }
}

static bool caches_synced(struct controller *c)
{
        for (size_t i = 0; i < c->n_wait_for; i++)
                if (!informer_has_synced(c->wait_for[i]))
                        return false;
        return true;
}

/* A worker's ports: its own client clone and the fanout clones, made on first use (owned). */
struct worker_ports {
        struct kube_client *mine;
        struct kube_client *fan[CONTROLLER_FANOUT_MAX];
        struct kube_api fan_api[CONTROLLER_FANOUT_MAX];
        size_t n_fan;
};

static void worker_ports_release(struct worker_ports *w)
{
        kube_client_free(w->mine);
        for (size_t i = 0; i < w->n_fan; i++)
                kube_client_free(w->fan[i]);
        *w = (struct worker_ports){ 0 };
}

/* The port this worker reconciles with, and its fanout ports (ctx->fanout). */
static int worker_api(struct controller *c, struct worker_ports *w, struct kube_api *ret)
{
        int r;

        if (c->client) {
                if (!w->mine) {
                        r = kube_client_dup(c->client, &w->mine);
                        if (r < 0)
                                return r;
                }
                while (w->n_fan < c->write_fanout) {
                        r = kube_client_dup(c->client, &w->fan[w->n_fan]);
                        if (r < 0)
                                return r;
                        w->fan_api[w->n_fan] = kube_client_api(w->fan[w->n_fan]);
                        w->n_fan++;
                }
                *ret = kube_client_api(w->mine);
                return 1;
        }
        if (c->api) {
                for (; w->n_fan < c->write_fanout; w->n_fan++)
                        w->fan_api[w->n_fan] = *c->api;
                *ret = *c->api;
                return 1;
        }
        return 0;
}

static void process(struct controller *c, struct worker_ports *w, const char *key)
{
        struct reconcile_result res = { .outcome = RECONCILE_DONE };
        char reconcile_id[37] = "", msg[RECONCILE_ERROR_MAX] = "";
        const struct log_fields lf = { .controller = c->name,
                                       .object = key,
                                       .reconcile_id = reconcile_id };
        struct kube_api api;
        struct reconcile_ctx ctx = {
                .userdata = c->reconciler.userdata,
                .clock = c->wall_clock,
                .log = &lf,
                .error = msg,
                .error_size = sizeof(msg),
        };
        usec_t start;
        int r;

        if (uuid_random(reconcile_id) < 0)
                reconcile_id[0] = '\0';
        atomic_fetch_add(&c->active, 1);
        metric_add(c->m_active, 1);
        start = clock_now(c->clock);
        if (!caches_synced(c))
                r = reconcile_requeue_after(&res, CACHE_SYNC_REQUEUE);
        else {
                r = worker_api(c, w, &api);
                if (r > 0) {
                        ctx.api = &api;
                        ctx.fanout = w->fan_api;
                        ctx.n_fanout = w->n_fan;
                        r = 0;
                }
                if (r >= 0)
                        r = c->reconciler.reconcile(&ctx, key, &res);
                else
                        (void)reconcile_errorf(&ctx, r, "Failed to make this worker's client");
        }
        metric_observe(c->m_time, (double)(clock_now(c->clock) - start) / (double)USEC_PER_SEC);
        handle_result(c, &lf, r, &res, msg);
        metric_add(c->m_active, -1);
        atomic_fetch_sub(&c->active, 1);
}

/* ---- reconcile_for_each ---- */

struct for_each {
        const struct reconcile_ctx *ctx;
        size_t n;
        reconcile_item_fn *fn;
        void *userdata;
        atomic_size_t next;
        pthread_mutex_t lock;
        size_t first_index; /* lowest failing index, n when none */
        int first_error;
        char message[RECONCILE_ERROR_MAX];
};

struct for_each_lane {
        struct for_each *fe;
        const struct kube_api *api;
        pthread_t thread;
};

static void *for_each_lane(void *p)
{
        struct for_each_lane *lane = p;
        struct for_each *fe = lane->fe;
        char msg[RECONCILE_ERROR_MAX];
        struct reconcile_ctx ctx = *fe->ctx;

        ctx.api = lane->api;
        ctx.fanout = NULL;
        ctx.n_fanout = 0;
        ctx.error = msg;
        ctx.error_size = sizeof(msg);
        for (;;) {
                size_t i = atomic_fetch_add(&fe->next, 1);
                int r;

                if (i >= fe->n)
                        break;
                msg[0] = '\0';
                r = fe->fn(&ctx, i, fe->userdata);
                if (r >= 0)
                        continue;
                (void)pthread_mutex_lock(&fe->lock);
                if (i < fe->first_index) {
                        fe->first_index = i;
                        fe->first_error = r;
                        (void)snprintf(fe->message, sizeof(fe->message), "%s", msg);
                }
                (void)pthread_mutex_unlock(&fe->lock);
        }
        return NULL;
}

int reconcile_for_each(const struct reconcile_ctx *ctx, size_t n, reconcile_item_fn *fn,
                       void *userdata)
{
        struct for_each_lane lanes[1 + CONTROLLER_FANOUT_MAX];
        struct for_each fe = {
                .ctx = ctx, .n = n, .fn = fn, .userdata = userdata, .first_index = n
        };
        size_t n_lanes, started = 0;

        if (!ctx || !fn)
                return -EINVAL;
        n_lanes = MIN(n, 1 + MIN(ctx->n_fanout, (size_t)CONTROLLER_FANOUT_MAX));
        if (n_lanes < 2 || !ctx->fanout) {
                int first = 0;

                for (size_t i = 0; i < n; i++) {
                        int r = fn(ctx, i, userdata);

                        if (r < 0 && first == 0)
                                first = r;
                }
                return first;
        }
        atomic_init(&fe.next, 0);
        (void)pthread_mutex_init(&fe.lock, NULL);
        for (size_t l = 1; l < n_lanes; l++) {
                lanes[l] = (struct for_each_lane){ .fe = &fe, .api = &ctx->fanout[l - 1] };
                if (pthread_create(&lanes[l].thread, NULL, for_each_lane, &lanes[l]) != 0)
                        break; /* fewer lanes: the items still all run */
                started = l;
        }
        lanes[0] = (struct for_each_lane){ .fe = &fe, .api = ctx->api };
        (void)for_each_lane(&lanes[0]);
        for (size_t l = 1; l <= started; l++)
                (void)pthread_join(lanes[l].thread, NULL);
        (void)pthread_mutex_destroy(&fe.lock);
        if (fe.first_index < n) {
                if (ctx->error && ctx->error_size > 0 && ctx->error[0] == '\0')
                        (void)snprintf(ctx->error, ctx->error_size, "%s", fe.message);
                return fe.first_error;
        }
        return 0;
}

static void *worker(void *p)
{
        struct controller *c = p;
        struct worker_ports w = { 0 }; /* owned: this worker's clients */
        char *key = NULL;

        while (!atomic_load(&c->stopping)) {
                if (workqueue_get(c->queue, &key) < 0)
                        break;
                /* Stop taking new keys once stopping, even if some are still queued. */
                if (!atomic_load(&c->stopping))
                        process(c, &w, key);
                workqueue_done(c->queue, key);
                free(TAKE_PTR(key));
        }
        worker_ports_release(&w);
        (void)pthread_mutex_lock(&c->lock);
        c->running--;
        (void)pthread_cond_broadcast(&c->exited);
        (void)pthread_mutex_unlock(&c->lock);
        return NULL;
}

int controller_start(struct controller *c)
{
        int r;

        if (!c)
                return -EINVAL;
        if (c->started)
                return -EALREADY;
        c->started = true;
        for (unsigned i = 0; i < c->n_workers; i++) {
                (void)pthread_mutex_lock(&c->lock);
                c->running++;
                (void)pthread_mutex_unlock(&c->lock);
                r = pthread_create(&c->threads[i], NULL, worker, c);
                if (r != 0) {
                        (void)pthread_mutex_lock(&c->lock);
                        c->running--;
                        (void)pthread_mutex_unlock(&c->lock);
                        (void)!controller_stop(c, USEC_INFINITY);
                        return -r;
                }
                c->n_threads++;
        }
        return 0;
}

int controller_stop(struct controller *c, usec_t timeout)
{
        usec_t deadline;
        int r = 0;

        if (!c)
                return -EINVAL;
        atomic_store(&c->stopping, true);
        workqueue_shutdown(c->queue);
        deadline = timeout == USEC_INFINITY ? USEC_INFINITY : now_monotonic() + timeout;
        (void)pthread_mutex_lock(&c->lock);
        while (c->running > 0) {
                if (deadline == USEC_INFINITY)
                        (void)pthread_cond_wait(&c->exited, &c->lock);
                else {
                        struct timespec ts = usec_to_timespec(deadline);
                        if (pthread_cond_timedwait(&c->exited, &c->lock, &ts) == ETIMEDOUT &&
                            c->running > 0) {
                                r = -ETIMEDOUT;
                                break;
                        }
                }
        }
        (void)pthread_mutex_unlock(&c->lock);
        if (r < 0)
                return r;
        for (size_t i = 0; i < c->n_threads; i++)
                (void)pthread_join(c->threads[i], NULL);
        c->n_threads = 0;
        return 0;
}

struct controller *controller_free(struct controller *c)
{
        if (!c)
                return NULL;
        if (c->queue)
                (void)!controller_stop(c, USEC_INFINITY);
        workqueue_free(c->queue);
        free(c->threads);
        free(c->wait_for);
        free(c->name);
        (void)pthread_cond_destroy(&c->exited);
        (void)pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}
