/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/workqueue.h"

#include <assert.h>
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/metrics.h"

struct delayed {
        usec_t at;
        char *key; /* owned */
};

struct workqueue {
        pthread_mutex_t lock;
        pthread_cond_t cond;    /* keys became ready, or shutdown */
        pthread_cond_t drained; /* processing became empty */
        const struct clock *clock;
        struct ratelimiter *limiter; /* owned */

        /* FIFO ring of owned keys */
        char **ring;
        size_t head, count, cap;

        json_t *dirty;        /* owned; key -> integer: when it was first added (clock usec) */
        json_t *processing;   /* owned; key -> integer: when its worker got it */
        json_t *waiting;      /* owned; key -> integer: the earliest time it is due */
        struct delayed *heap; /* min-heap on .at; entries not matching waiting[key] are stale */
        size_t n_heap, cap_heap;

        bool shutting_down;

        struct metrics_registry *metrics; /* borrowed */
        struct metric *m_depth, *m_adds, *m_retries, *m_queue_duration, *m_work_duration,
                *m_unfinished, *m_longest;
};

static double usec_to_seconds(usec_t u)
{
        return (double)u / (double)USEC_PER_SEC;
}

static usec_t elapsed(usec_t now, usec_t then)
{
        return now > then ? now - then : 0;
}

/* ---- FIFO ---- */

static int ring_push(struct workqueue *q, char *key)
{
        if (q->count == q->cap) {
                size_t ncap = q->cap ? q->cap * 2 : 64;
                char **n = calloc(ncap, sizeof(*n));

                if (!n)
                        return -ENOMEM;
                for (size_t i = 0; i < q->count; i++)
                        n[i] = q->ring[(q->head + i) % q->cap];
                free(q->ring);
                q->ring = n;
                q->cap = ncap;
                q->head = 0;
        }
        q->ring[(q->head + q->count) % q->cap] = key;
        q->count++;
        return 0;
}

static char *ring_pop(struct workqueue *q)
{
        char *k;

        if (q->count == 0)
                return NULL;
        k = q->ring[q->head];
        q->ring[q->head] = NULL;
        q->head = (q->head + 1) % q->cap;
        q->count--;
        return k;
}

/* ---- delayed heap ---- */

static void heap_swap(struct delayed *a, struct delayed *b)
{
        struct delayed t = *a;
        *a = *b;
        *b = t;
}

static int heap_push(struct workqueue *q, usec_t at, const char *key)
{
        size_t i;
        char *k;

        if (q->n_heap == q->cap_heap) {
                size_t ncap = q->cap_heap ? q->cap_heap * 2 : 64;
                struct delayed *n = reallocarray(q->heap, ncap, sizeof(*n));

                if (!n)
                        return -ENOMEM;
                q->heap = n;
                q->cap_heap = ncap;
        }
        k = strdup(key);
        if (!k)
                return -ENOMEM;
        i = q->n_heap++;
        q->heap[i] = (struct delayed){ .at = at, .key = k };
        while (i > 0 && q->heap[(i - 1) / 2].at > q->heap[i].at) {
                heap_swap(&q->heap[(i - 1) / 2], &q->heap[i]);
                i = (i - 1) / 2;
        }
        return 0;
}

static struct delayed heap_pop(struct workqueue *q)
{
        struct delayed top = q->heap[0];
        size_t i = 0;

        q->heap[0] = q->heap[--q->n_heap];
        q->heap[q->n_heap] = (struct delayed){ 0 }; /* no stale copy of a key left behind */
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;

                if (l < q->n_heap && q->heap[l].at < q->heap[m].at)
                        m = l;
                if (r < q->n_heap && q->heap[r].at < q->heap[m].at)
                        m = r;
                if (m == i)
                        break;
                heap_swap(&q->heap[m], &q->heap[i]);
                i = m;
        }
        return top;
}

static void heap_clear(struct workqueue *q)
{
        for (size_t i = 0; i < q->n_heap; i++)
                free(q->heap[i].key);
        q->n_heap = 0;
        json_object_clear(q->waiting);
}

/* ---- core (called locked) ---- */

static int add_locked(struct workqueue *q, const char *key)
{
        usec_t now;
        char *k;
        int r;

        if (q->shutting_down || json_object_get(q->dirty, key))
                return 0;
        now = clock_now(q->clock);
        if (json_object_set_new_nocheck(q->dirty, key, json_integer((json_int_t)now)) < 0)
                return -ENOMEM;
        metric_inc(q->m_adds);
        if (json_object_get(q->processing, key))
                return 0; /* requeued by workqueue_done() */
        k = strdup(key);
        if (!k) {
                (void)json_object_del(q->dirty, key);
                return -ENOMEM;
        }
        r = ring_push(q, k);
        if (r < 0) {
                free(k);
                (void)json_object_del(q->dirty, key);
                return r;
        }
        metric_add(q->m_depth, 1);
        (void)pthread_cond_signal(&q->cond);
        return 0;
}

/* Moves every due delayed key into the queue. */
static void promote_due(struct workqueue *q)
{
        usec_t now;

        if (q->n_heap == 0)
                return;
        now = clock_now(q->clock);
        while (q->n_heap > 0 && q->heap[0].at <= now) {
                struct delayed d = heap_pop(q);
                json_t *w = json_object_get(q->waiting, d.key);

                if (w && (usec_t)json_integer_value(w) == d.at) {
                        (void)json_object_del(q->waiting, d.key);
                        /* On OOM the key is lost, as an Add that failed would be. */
                        (void)!add_locked(q, d.key);
                }
                free(d.key);
        }
}

static int add_after_locked(struct workqueue *q, const char *key, usec_t delay)
{
        usec_t at;
        json_t *w;
        int r;

        if (q->shutting_down)
                return 0;
        if (delay == 0)
                return add_locked(q, key);
        at = clock_now(q->clock);
        at = at > USEC_INFINITY - delay ? USEC_INFINITY : at + delay;
        w = json_object_get(q->waiting, key);
        if (w && (usec_t)json_integer_value(w) <= at)
                return 0; /* an earlier time is already pending */
        if (json_object_set_new_nocheck(q->waiting, key, json_integer((json_int_t)at)) < 0)
                return -ENOMEM;
        r = heap_push(q, at, key);
        if (r < 0) {
                (void)json_object_del(q->waiting, key);
                return r;
        }
        /* A waiter may need a shorter timeout now. */
        (void)pthread_cond_broadcast(&q->cond);
        return 0;
}

static void collect(void *userdata)
{
        struct workqueue *q = userdata;
        usec_t now, total = 0, longest = 0;
        const char *key;
        json_t *v;

        (void)pthread_mutex_lock(&q->lock);
        now = clock_now(q->clock);
        json_object_foreach(q->processing, key, v) {
                usec_t d = elapsed(now, (usec_t)json_integer_value(v));
                total += d;
                longest = MAX(longest, d);
        }
        (void)pthread_mutex_unlock(&q->lock);
        metric_set(q->m_unfinished, usec_to_seconds(total));
        metric_set(q->m_longest, usec_to_seconds(longest));
}

static int setup_metrics(struct workqueue *q, const char *name)
{
        const char *labels[] = { name, name };
        static const enum runtime_metric ids[] = {
                RUNTIME_METRIC_WORKQUEUE_DEPTH,           RUNTIME_METRIC_WORKQUEUE_ADDS_TOTAL,
                RUNTIME_METRIC_WORKQUEUE_RETRIES_TOTAL,   RUNTIME_METRIC_WORKQUEUE_QUEUE_DURATION,
                RUNTIME_METRIC_WORKQUEUE_WORK_DURATION,   RUNTIME_METRIC_WORKQUEUE_UNFINISHED_WORK,
                RUNTIME_METRIC_WORKQUEUE_LONGEST_RUNNING,
        };
        struct metric **slots[] = { &q->m_depth,          &q->m_adds,          &q->m_retries,
                                    &q->m_queue_duration, &q->m_work_duration, &q->m_unfinished,
                                    &q->m_longest };
        int r;

        static_assert(ELEMENTSOF(ids) == ELEMENTSOF(slots), "metric tables");
        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                r = metrics_runtime_child(q->metrics, ids[i], labels, slots[i]);
                if (r < 0)
                        return r;
        }
        return metrics_add_collector(q->metrics, collect, q);
}

int workqueue_new(const struct workqueue_options *opts, struct workqueue **ret)
{
        struct ratelimiter_options rlo = { 0 };
        pthread_condattr_t attr;
        struct workqueue *q;
        int r;

        if (!ret)
                return -EINVAL;
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->clock = opts && opts->clock ? opts->clock : &clock_monotonic;
        if (opts && opts->ratelimit)
                rlo = *opts->ratelimit;
        if (!rlo.clock)
                rlo.clock = q->clock;
        q->limiter = ratelimiter_new(&rlo);
        q->dirty = json_object();
        q->processing = json_object();
        q->waiting = json_object();
        (void)pthread_mutex_init(&q->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&q->cond, &attr);
        (void)pthread_cond_init(&q->drained, &attr);
        (void)pthread_condattr_destroy(&attr);
        if (!q->limiter || !q->dirty || !q->processing || !q->waiting) {
                workqueue_free(q);
                return -ENOMEM;
        }
        if (opts && opts->metrics) {
                q->metrics = opts->metrics;
                r = setup_metrics(q, opts->name ? opts->name : "");
                if (r < 0) {
                        workqueue_free(q);
                        return r;
                }
        }
        *ret = q;
        return 0;
}

struct workqueue *workqueue_free(struct workqueue *q)
{
        char *k;

        if (!q)
                return NULL;
        if (q->metrics)
                metrics_remove_collector(q->metrics, collect, q);
        while ((k = ring_pop(q)))
                free(k);
        free(q->ring);
        if (q->waiting)
                heap_clear(q);
        free(q->heap);
        json_decref(q->dirty);
        json_decref(q->processing);
        json_decref(q->waiting);
        ratelimiter_free(q->limiter);
        (void)pthread_cond_destroy(&q->cond);
        (void)pthread_cond_destroy(&q->drained);
        (void)pthread_mutex_destroy(&q->lock);
        free(q);
        return NULL;
}

int workqueue_add(struct workqueue *q, const char *key)
{
        int r;

        if (!q || !key)
                return -EINVAL;
        (void)pthread_mutex_lock(&q->lock);
        r = add_locked(q, key);
        (void)pthread_mutex_unlock(&q->lock);
        return r;
}

int workqueue_add_after(struct workqueue *q, const char *key, usec_t delay)
{
        int r;

        if (!q || !key)
                return -EINVAL;
        (void)pthread_mutex_lock(&q->lock);
        r = add_after_locked(q, key, delay);
        (void)pthread_mutex_unlock(&q->lock);
        return r;
}

int workqueue_add_rate_limited(struct workqueue *q, const char *key)
{
        usec_t delay;
        int r;

        if (!q || !key)
                return -EINVAL;
        r = ratelimiter_when(q->limiter, key, &delay);
        if (r < 0)
                return r;
        metric_inc(q->m_retries);
        return workqueue_add_after(q, key, delay);
}

void workqueue_forget(struct workqueue *q, const char *key)
{
        if (q)
                ratelimiter_forget(q->limiter, key);
}

unsigned workqueue_num_requeues(struct workqueue *q, const char *key)
{
        return q ? ratelimiter_num_requeues(q->limiter, key) : 0;
}

static int get_locked(struct workqueue *q, bool block, char **ret_key)
{
        usec_t now;
        json_t *added;
        char *k;

        for (;;) {
                promote_due(q);
                if (q->count > 0)
                        break;
                if (q->shutting_down)
                        return -ESHUTDOWN;
                if (!block)
                        return -EAGAIN;
                if (q->n_heap > 0) {
                        usec_t due = q->heap[0].at, cnow = clock_now(q->clock);
                        usec_t wait = due > cnow ? due - cnow : 0;
                        struct timespec ts = usec_to_timespec(now_monotonic() + MAX(wait, 1));
                        (void)pthread_cond_timedwait(&q->cond, &q->lock, &ts);
                } else
                        (void)pthread_cond_wait(&q->cond, &q->lock);
        }

        now = clock_now(q->clock);
        k = ring_pop(q);
        if (json_object_set_new_nocheck(q->processing, k, json_integer((json_int_t)now)) < 0) {
                /* Put it back at the head: nothing is lost, the caller may retry. */
                q->head = (q->head + q->cap - 1) % q->cap;
                q->ring[q->head] = k;
                q->count++;
                return -ENOMEM;
        }
        metric_add(q->m_depth, -1);
        added = json_object_get(q->dirty, k);
        if (added)
                metric_observe(q->m_queue_duration,
                               usec_to_seconds(elapsed(now, (usec_t)json_integer_value(added))));
        (void)json_object_del(q->dirty, k);
        *ret_key = k;
        return 0;
}

int workqueue_get(struct workqueue *q, char **ret_key)
{
        int r;

        if (!q || !ret_key)
                return -EINVAL;
        (void)pthread_mutex_lock(&q->lock);
        r = get_locked(q, true, ret_key);
        (void)pthread_mutex_unlock(&q->lock);
        return r;
}

int workqueue_try_get(struct workqueue *q, char **ret_key)
{
        int r;

        if (!q || !ret_key)
                return -EINVAL;
        (void)pthread_mutex_lock(&q->lock);
        r = get_locked(q, false, ret_key);
        (void)pthread_mutex_unlock(&q->lock);
        return r;
}

void workqueue_done(struct workqueue *q, const char *key)
{
        json_t *started;

        if (!q || !key)
                return;
        (void)pthread_mutex_lock(&q->lock);
        started = json_object_get(q->processing, key);
        if (started) {
                metric_observe(q->m_work_duration,
                               usec_to_seconds(elapsed(clock_now(q->clock),
                                                       (usec_t)json_integer_value(started))));
                (void)json_object_del(q->processing, key);
        }
        if (json_object_get(q->dirty, key)) {
                char *k = strdup(key);

                if (k && ring_push(q, k) >= 0) {
                        metric_add(q->m_depth, 1);
                        (void)pthread_cond_signal(&q->cond);
                } else {
                        /* OOM: drop the dirty mark so a later add can queue it again. */
                        free(k);
                        (void)json_object_del(q->dirty, key);
                }
        }
        if (json_object_size(q->processing) == 0)
                (void)pthread_cond_broadcast(&q->drained);
        (void)pthread_mutex_unlock(&q->lock);
}

void workqueue_kick(struct workqueue *q)
{
        if (!q)
                return;
        (void)pthread_mutex_lock(&q->lock);
        promote_due(q);
        (void)pthread_cond_broadcast(&q->cond);
        (void)pthread_mutex_unlock(&q->lock);
}

void workqueue_shutdown(struct workqueue *q)
{
        if (!q)
                return;
        (void)pthread_mutex_lock(&q->lock);
        q->shutting_down = true;
        heap_clear(q);
        (void)pthread_cond_broadcast(&q->cond);
        (void)pthread_mutex_unlock(&q->lock);
}

bool workqueue_is_shutting_down(struct workqueue *q)
{
        bool b;

        if (!q)
                return true;
        (void)pthread_mutex_lock(&q->lock);
        b = q->shutting_down;
        (void)pthread_mutex_unlock(&q->lock);
        return b;
}

int workqueue_shutdown_with_drain(struct workqueue *q, usec_t timeout)
{
        usec_t deadline;
        int r = 0;

        if (!q)
                return -EINVAL;
        workqueue_shutdown(q);
        deadline = timeout == USEC_INFINITY ? USEC_INFINITY : now_monotonic() + timeout;
        (void)pthread_mutex_lock(&q->lock);
        while (json_object_size(q->processing) > 0) {
                if (deadline == USEC_INFINITY)
                        (void)pthread_cond_wait(&q->drained, &q->lock);
                else {
                        struct timespec ts = usec_to_timespec(deadline);
                        if (pthread_cond_timedwait(&q->drained, &q->lock, &ts) == ETIMEDOUT &&
                            json_object_size(q->processing) > 0) {
                                r = -ETIMEDOUT;
                                break;
                        }
                }
        }
        (void)pthread_mutex_unlock(&q->lock);
        return r;
}

size_t workqueue_len(struct workqueue *q)
{
        size_t n;

        (void)pthread_mutex_lock(&q->lock);
        n = q->count;
        (void)pthread_mutex_unlock(&q->lock);
        return n;
}

size_t workqueue_delayed_len(struct workqueue *q)
{
        size_t n;

        (void)pthread_mutex_lock(&q->lock);
        n = json_object_size(q->waiting);
        (void)pthread_mutex_unlock(&q->lock);
        return n;
}

size_t workqueue_processing_len(struct workqueue *q)
{
        size_t n;

        (void)pthread_mutex_lock(&q->lock);
        n = json_object_size(q->processing);
        (void)pthread_mutex_unlock(&q->lock);
        return n;
}
