/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../fakes/fake-clock.h"
#include "kube/metrics.h"
#include "kube/workqueue.h"

static struct workqueue *new_queue(struct fake_clock *fc)
{
        struct workqueue_options o = { .name = "test", .clock = fc ? &fc->clock : NULL };
        struct workqueue *q = NULL;

        cr_assert_eq(workqueue_new(&o, &q), 0);
        return q;
}

static void expect_get(struct workqueue *q, const char *want)
{
        char *k = NULL;
        int r = workqueue_try_get(q, &k);

        cr_assert_eq(r, 0, "expected key %s, got error %d", want, r);
        cr_assert_str_eq(k, want);
        free(k);
}

static void expect_empty(struct workqueue *q)
{
        char *k = NULL;
        int r = workqueue_try_get(q, &k);

        cr_assert_eq(r, -EAGAIN, "expected an empty queue, got %d (%s)", r, r == 0 ? k : "");
}

Test(workqueue, fifo_and_collapse)
{
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(NULL);

        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/b"), 0);
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/c"), 0);
        cr_assert_eq(workqueue_len(q), 3);
        expect_get(q, "ns/a");
        expect_get(q, "ns/b");
        expect_get(q, "ns/c");
        expect_empty(q);
        workqueue_done(q, "ns/a");
        workqueue_done(q, "ns/b");
        workqueue_done(q, "ns/c");
        expect_empty(q);
}

Test(workqueue, dirty_while_processing_is_redelivered_after_done)
{
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(NULL);

        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        expect_get(q, "ns/a");
        /* Re-added while in flight: not handed out to a second worker ... */
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/b"), 0);
        expect_get(q, "ns/b");
        expect_empty(q);
        cr_assert_eq(workqueue_processing_len(q), 2);
        /* ... but exactly once more after done. */
        workqueue_done(q, "ns/a");
        expect_get(q, "ns/a");
        expect_empty(q);
        workqueue_done(q, "ns/a");
        workqueue_done(q, "ns/b");
        expect_empty(q);
        cr_assert_eq(workqueue_processing_len(q), 0);
}

Test(workqueue, add_after_ordering_and_earliest_wins)
{
        struct fake_clock fc;

        fake_clock_init(&fc, 100 * USEC_PER_SEC);
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(&fc);

        cr_assert_eq(workqueue_add_after(q, "ns/c", 3 * USEC_PER_SEC), 0);
        cr_assert_eq(workqueue_add_after(q, "ns/a", 1 * USEC_PER_SEC), 0);
        cr_assert_eq(workqueue_add_after(q, "ns/b", 2 * USEC_PER_SEC), 0);
        /* A later time does not postpone; an earlier one wins. */
        cr_assert_eq(workqueue_add_after(q, "ns/a", 10 * USEC_PER_SEC), 0);
        cr_assert_eq(workqueue_add_after(q, "ns/c", USEC_PER_SEC / 2), 0);
        cr_assert_eq(workqueue_delayed_len(q), 3);
        expect_empty(q);

        fake_clock_advance(&fc, USEC_PER_SEC / 2);
        workqueue_kick(q);
        expect_get(q, "ns/c");
        expect_empty(q);
        fake_clock_advance(&fc, USEC_PER_SEC / 2);
        expect_get(q, "ns/a");
        expect_empty(q);
        fake_clock_advance(&fc, 10 * USEC_PER_SEC);
        expect_get(q, "ns/b");
        /* the stale 10 s entry of ns/a does not deliver it again */
        expect_empty(q);
        cr_assert_eq(workqueue_delayed_len(q), 0);
        /* delay 0 is an immediate add */
        cr_assert_eq(workqueue_add_after(q, "ns/d", 0), 0);
        expect_get(q, "ns/d");
}

Test(workqueue, rate_limited_follows_backoff_and_forget)
{
        struct fake_clock fc;

        fake_clock_init(&fc, USEC_PER_SEC);
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(&fc);

        for (unsigned i = 0; i < 6; i++) {
                usec_t d = (usec_t)5000 << i;

                cr_assert_eq(workqueue_add_rate_limited(q, "ns/a"), 0);
                cr_assert_eq(workqueue_num_requeues(q, "ns/a"), i + 1);
                fake_clock_advance(&fc, d - 1);
                expect_empty(q);
                fake_clock_advance(&fc, 1);
                expect_get(q, "ns/a");
                workqueue_done(q, "ns/a");
        }
        workqueue_forget(q, "ns/a");
        cr_assert_eq(workqueue_num_requeues(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add_rate_limited(q, "ns/a"), 0);
        fake_clock_advance(&fc, 5000);
        expect_get(q, "ns/a");
}

Test(workqueue, shutdown_drains_queued_then_reports_shutdown)
{
        struct fake_clock fc;
        char *k = NULL;

        fake_clock_init(&fc, 0);
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(&fc);
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/b"), 0);
        cr_assert_eq(workqueue_add_after(q, "ns/later", USEC_PER_SEC), 0);
        workqueue_shutdown(q);
        cr_assert(workqueue_is_shutting_down(q));
        cr_assert_eq(workqueue_add(q, "ns/c"), 0); /* ignored */
        fake_clock_advance(&fc, 2 * USEC_PER_SEC);
        expect_get(q, "ns/a");
        expect_get(q, "ns/b");
        cr_assert_eq(workqueue_get(q, &k), -ESHUTDOWN); /* does not block */
        cr_assert_eq(workqueue_try_get(q, &k), -ESHUTDOWN);
        workqueue_done(q, "ns/a");
        workqueue_done(q, "ns/b");
}

struct drain_ctx {
        struct workqueue *q;
        atomic_bool finished;
};

static void *slow_worker(void *p)
{
        struct drain_ctx *c = p;
        char *k = NULL;

        if (workqueue_get(c->q, &k) < 0)
                return NULL;
        usleep(100 * 1000);
        atomic_store(&c->finished, true);
        workqueue_done(c->q, k);
        free(k);
        return NULL;
}

Test(workqueue, shutdown_with_drain_waits_for_in_flight)
{
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(NULL);
        struct drain_ctx c = { .q = q };
        pthread_t t;

        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(pthread_create(&t, NULL, slow_worker, &c), 0);
        while (workqueue_processing_len(q) == 0)
                sched_yield();
        cr_assert_eq(workqueue_shutdown_with_drain(q, USEC_INFINITY), 0);
        cr_assert(atomic_load(&c.finished), "drain returned before the in-flight key was done");
        (void)pthread_join(t, NULL);
}

Test(workqueue, shutdown_with_drain_times_out)
{
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(NULL);
        char *k = NULL;

        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        cr_assert_eq(workqueue_shutdown_with_drain(q, 20 * USEC_PER_MSEC), -ETIMEDOUT);
        workqueue_done(q, k);
        free(k);
        cr_assert_eq(workqueue_shutdown_with_drain(q, 20 * USEC_PER_MSEC), 0);
}

/* A blocked get wakes up for a delayed key whose (real) time has come. */
Test(workqueue, blocking_get_wakes_for_delayed_key)
{
        CLEANUP(workqueue_freep) struct workqueue *q = new_queue(NULL);
        char *k = NULL;

        cr_assert_eq(workqueue_add_after(q, "ns/a", 20 * USEC_PER_MSEC), 0);
        cr_assert_eq(workqueue_get(q, &k), 0);
        cr_assert_str_eq(k, "ns/a");
        workqueue_done(q, k);
        free(k);
}

/* ---- concurrency: 8 workers, 10,000 adds, never two workers on one key ---- */

#define N_KEYS    64
#define N_WORKERS 8
#define N_ADDS    10000

struct stress {
        struct workqueue *q;
        atomic_int in_flight[N_KEYS];
        atomic_int add_gen[N_KEYS];
        atomic_int processed_gen[N_KEYS];
        atomic_int violations;
        atomic_int processed;
};

static int key_index(const char *k)
{
        return (int)strtol(k + 3, NULL, 10); /* "ns/<n>" */
}

static void *stress_worker(void *p)
{
        struct stress *s = p;
        char *k = NULL;

        while (workqueue_get(s->q, &k) == 0) {
                int i = key_index(k);

                if (atomic_exchange(&s->in_flight[i], 1) != 0)
                        atomic_fetch_add(&s->violations, 1);
                atomic_store(&s->processed_gen[i], atomic_load(&s->add_gen[i]));
                if (atomic_fetch_add(&s->processed, 1) % 7 == 0)
                        sched_yield();
                atomic_store(&s->in_flight[i], 0);
                workqueue_done(s->q, k);
                free(k);
        }
        return NULL;
}

static void *stress_producer(void *p)
{
        struct stress *s = p;
        char key[32];
        unsigned seed = (unsigned)(uintptr_t)pthread_self();

        for (int n = 0; n < N_ADDS / 2; n++) {
                int i = (int)(rand_r(&seed) % N_KEYS);

                (void)snprintf(key, sizeof(key), "ns/%d", i);
                atomic_fetch_add(&s->add_gen[i], 1);
                if (workqueue_add(s->q, key) < 0)
                        atomic_fetch_add(&s->violations, 1000000);
        }
        return NULL;
}

Test(workqueue, no_key_processed_concurrently_by_8_workers, .timeout = 60)
{
        static struct stress s;
        pthread_t workers[N_WORKERS], producers[2];

        s.q = new_queue(NULL);
        for (int i = 0; i < N_WORKERS; i++)
                cr_assert_eq(pthread_create(&workers[i], NULL, stress_worker, &s), 0);
        for (int i = 0; i < 2; i++)
                cr_assert_eq(pthread_create(&producers[i], NULL, stress_producer, &s), 0);
        for (int i = 0; i < 2; i++)
                (void)pthread_join(producers[i], NULL);
        while (workqueue_len(s.q) > 0 || workqueue_processing_len(s.q) > 0)
                usleep(1000);
        workqueue_shutdown(s.q);
        for (int i = 0; i < N_WORKERS; i++)
                (void)pthread_join(workers[i], NULL);

        cr_assert_eq(atomic_load(&s.violations), 0, "%d concurrent deliveries",
                     atomic_load(&s.violations));
        /* Every key's last add was processed after it happened (nothing lost). */
        for (int i = 0; i < N_KEYS; i++)
                cr_assert_eq(atomic_load(&s.processed_gen[i]), atomic_load(&s.add_gen[i]),
                             "key %d: last add %d, last processed %d", i,
                             atomic_load(&s.add_gen[i]), atomic_load(&s.processed_gen[i]));
        /* Collapsing happened at most per add, and at least once per key. */
        cr_assert(atomic_load(&s.processed) <= N_ADDS);
        cr_assert(atomic_load(&s.processed) >= N_KEYS);
        workqueue_free(s.q);
}

Test(workqueue, metrics)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct workqueue_options o = { .name = "tm", .metrics = reg };
        CLEANUP(workqueue_freep) struct workqueue *q = NULL;
        struct metric *depth, *adds;
        const char *labels[] = { "tm", "tm" };
        struct buf out = BUF_INIT(1 << 20);
        char *k = NULL;

        cr_assert_eq(workqueue_new(&o, &q), 0);
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/a"), 0);
        cr_assert_eq(workqueue_add(q, "ns/b"), 0);
        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_WORKQUEUE_DEPTH, labels, &depth), 0);
        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_WORKQUEUE_ADDS_TOTAL, labels, &adds),
                     0);
        cr_assert(metric_value(depth) == 2.0);
        cr_assert(metric_value(adds) == 2.0);
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        cr_assert(metric_value(depth) == 1.0);
        cr_assert_eq(workqueue_add_rate_limited(q, "ns/c"), 0);
        cr_assert_eq(metrics_serialize(reg, &out), 0);
        cr_assert_not_null(strstr(buf_str(&out),
                                  "workqueue_retries_total{name=\"tm\",controller=\"tm\"} 1\n"));
        cr_assert_not_null(
                strstr(buf_str(&out), "workqueue_depth{name=\"tm\",controller=\"tm\"} 1\n"));
        cr_assert_not_null(strstr(
                buf_str(&out),
                "workqueue_queue_duration_seconds_count{name=\"tm\",controller=\"tm\"} 1\n"));
        workqueue_done(q, k);
        free(k);
        buf_release(&out);
}
