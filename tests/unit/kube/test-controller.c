/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "kube/controller.h"
#include "kube/metrics.h"
#include "kube/workqueue.h"
#include "util/log.h"

struct rec {
        atomic_int calls;
        atomic_int fail_times; /* -EIO this many times, then DONE */
        int error;             /* returned while failing */
        enum reconcile_outcome outcome;
        usec_t requeue_after;
        atomic_int requeue_times;
        atomic_bool block;
        atomic_bool release;
        char last_key[64];
};

static int reconcile(const struct reconcile_ctx *ctx, const char *key, struct reconcile_result *ret)
{
        struct rec *r = ctx->userdata;

        (void)snprintf(r->last_key, sizeof(r->last_key), "%s", key);
        atomic_fetch_add(&r->calls, 1);
        if (atomic_load(&r->block))
                while (!atomic_load(&r->release))
                        usleep(1000);
        if (atomic_load(&r->fail_times) > 0) {
                atomic_fetch_sub(&r->fail_times, 1);
                return r->error;
        }
        if (r->outcome == RECONCILE_REQUEUE_AFTER) {
                if (atomic_fetch_sub(&r->requeue_times, 1) > 0)
                        return reconcile_requeue_after(ret, r->requeue_after);
                return reconcile_done(ret);
        }
        if (r->outcome == RECONCILE_TERMINAL)
                return reconcile_terminal(ret, -EINVAL);
        return 0;
}

static const struct ratelimiter_options fast = { .base_delay = 1000, .max_delay = 10000 };

static struct controller *new_controller(struct rec *r, struct metrics_registry *reg,
                                         unsigned workers)
{
        struct controller_options o = {
                .reconciler = { .name = "tm", .reconcile = reconcile, .userdata = r },
                .workers = workers,
                .ratelimit = &fast,
                .metrics = reg,
        };
        struct controller *c = NULL;

        cr_assert_eq(controller_new(&o, &c), 0);
        cr_assert_eq(controller_start(c), 0);
        return c;
}

static void wait_calls(struct rec *r, int n)
{
        for (int i = 0; i < 10000 && atomic_load(&r->calls) < n; i++)
                usleep(1000);
        cr_assert_geq(atomic_load(&r->calls), n, "expected %d calls, got %d", n,
                      atomic_load(&r->calls));
}

static void wait_idle(struct controller *c)
{
        struct workqueue *q = controller_queue(c);

        for (int i = 0; i < 10000; i++) {
                if (workqueue_len(q) == 0 && workqueue_processing_len(q) == 0 &&
                    workqueue_delayed_len(q) == 0)
                        return;
                usleep(1000);
        }
        cr_assert_fail("controller never became idle");
}

static double metric(struct metrics_registry *reg, const char *result)
{
        struct metric *m;

        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_RECONCILE_TOTAL,
                                           (const char *const[]){ "tm", result }, &m),
                     0);
        return metric_value(m);
}

Test(controller, done_forgets)
{
        struct rec r = { 0 };
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        CLEANUP(controller_freep) struct controller *c = new_controller(&r, reg, 2);

        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        wait_calls(&r, 1);
        wait_idle(c);
        cr_assert_eq(atomic_load(&r.calls), 1);
        cr_assert_str_eq(r.last_key, "ns/a");
        cr_assert(metric(reg, "success") == 1.0);
        cr_assert_eq(workqueue_num_requeues(controller_queue(c), "ns/a"), 0);
}

Test(controller, transient_errors_are_retried_with_backoff_then_forgotten)
{
        struct rec r = { .error = -EIO };
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        CLEANUP(controller_freep) struct controller *c = NULL;

        atomic_store(&r.fail_times, 3);
        c = new_controller(&r, reg, 1);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        wait_calls(&r, 4);
        wait_idle(c);
        cr_assert_eq(atomic_load(&r.calls), 4);
        cr_assert(metric(reg, "error") == 3.0);
        cr_assert(metric(reg, "success") == 1.0);
        cr_assert_eq(workqueue_num_requeues(controller_queue(c), "ns/a"), 0);
}

static void check_terminal(int error, enum reconcile_outcome outcome)
{
        struct rec r = { .error = error, .outcome = outcome };
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        CLEANUP(controller_freep) struct controller *c = NULL;
        struct metric *term;

        atomic_store(&r.fail_times, error ? 1000 : 0);
        c = new_controller(&r, reg, 1);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        wait_calls(&r, 1);
        wait_idle(c);
        usleep(30 * 1000); /* a retry would have come after 1 ms */
        cr_assert_eq(atomic_load(&r.calls), 1);
        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_TERMINAL_RECONCILE_ERRORS_TOTAL,
                                           (const char *const[]){ "tm" }, &term),
                     0);
        cr_assert(metric_value(term) == 1.0);
}

Test(controller, einval_eacces_and_terminal_are_not_retried)
{
        check_terminal(-EINVAL, RECONCILE_DONE);
        check_terminal(-EACCES, RECONCILE_DONE);
        check_terminal(0, RECONCILE_TERMINAL);
}

Test(controller, requeue_after)
{
        struct rec r = { .outcome = RECONCILE_REQUEUE_AFTER, .requeue_after = 2000 };
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        CLEANUP(controller_freep) struct controller *c = NULL;

        atomic_store(&r.requeue_times, 2);
        c = new_controller(&r, reg, 1);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        wait_calls(&r, 3);
        wait_idle(c);
        cr_assert_eq(atomic_load(&r.calls), 3);
        cr_assert(metric(reg, "requeue_after") == 2.0);
        cr_assert(metric(reg, "success") == 1.0);
}

Test(controller, error_log_line_has_controller_object_and_reconcile_id)
{
        struct rec r = { .error = -EINVAL };
        CLEANUP(controller_freep) struct controller *c = NULL;
        FILE *f = tmpfile();
        char line[4096] = "";
        json_auto_t *j = NULL;

        cr_assert_not_null(f);
        log_set_fd(fileno(f));
        atomic_store(&r.fail_times, 1);
        c = new_controller(&r, NULL, 1);
        cr_assert_eq(controller_enqueue(c, "ns/broken"), 0);
        wait_calls(&r, 1);
        wait_idle(c);
        cr_assert_eq(controller_stop(c, USEC_INFINITY), 0);
        log_set_fd(STDERR_FILENO);
        rewind(f);
        cr_assert_not_null(fgets(line, sizeof(line), f));
        j = json_loads(line, 0, NULL);
        cr_assert_not_null(j, "not JSON: %s", line);
        cr_assert_str_eq(json_string_value(json_object_get(j, "level")), "error");
        cr_assert_str_eq(json_string_value(json_object_get(j, "controller")), "tm");
        cr_assert_str_eq(json_string_value(json_object_get(j, "object")), "ns/broken");
        const char *id = json_string_value(json_object_get(j, "reconcileID"));
        cr_assert_not_null(id);
        cr_assert_eq(strlen(id), 36);
        cr_assert_eq(id[14], '4');
        cr_assert_not_null(json_object_get(j, "error"));
        cr_assert_null(fgets(line, sizeof(line), f), "exactly one line expected");
        fclose(f);
}

Test(controller, graceful_stop_waits_for_in_flight_and_takes_no_new_keys)
{
        struct rec r = { 0 };
        CLEANUP(controller_freep) struct controller *c = NULL;

        atomic_store(&r.block, true);
        c = new_controller(&r, NULL, 1);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        wait_calls(&r, 1);
        cr_assert_eq(controller_enqueue(c, "ns/b"), 0); /* queued behind the blocked one */
        cr_assert_eq(controller_active_workers(c), 1);
        cr_assert_eq(controller_stop(c, 20 * USEC_PER_MSEC), -ETIMEDOUT);
        atomic_store(&r.release, true);
        cr_assert_eq(controller_stop(c, USEC_INFINITY), 0);
        cr_assert_eq(atomic_load(&r.calls), 1, "ns/b must not be reconciled after stop");
        cr_assert_eq(controller_active_workers(c), 0);
}

/* What the runner hands a reconcile: its port, the wall clock, the log fields, a message slot. */
struct seen {
        atomic_int calls;
        bool has_api;
        void *api_userdata;
        usec_t now;
        char object[64], reconcile_id[40];
        int second;
};

static int reconcile_ctx_probe(const struct reconcile_ctx *ctx, const char *key,
                               struct reconcile_result *ret)
{
        struct seen *s = ctx->userdata;

        s->has_api = ctx->api != NULL;
        s->api_userdata = ctx->api ? ctx->api->userdata : NULL;
        s->now = reconcile_now(ctx);
        (void)snprintf(s->object, sizeof(s->object), "%s", ctx->log->object);
        (void)snprintf(s->reconcile_id, sizeof(s->reconcile_id), "%s", ctx->log->reconcile_id);
        /* the first message wins; the return value is passed through */
        (void)reconcile_errorf(ctx, -EIO, "first %s", key);
        s->second = reconcile_errorf(ctx, -ESTALE, "second");
        cr_assert_str_eq(ctx->error, "first ns/a");
        atomic_fetch_add(&s->calls, 1);
        return reconcile_done(ret);
}

static usec_t fixed_now(void *userdata)
{
        (void)userdata;
        return 42 * USEC_PER_SEC;
}

/* Runs one reconcile of "ns/a" through a controller with the given port and wall clock. */
static void probe_once(struct seen *s, const struct kube_api *api, const struct clock *wall)
{
        CLEANUP(controller_freep) struct controller *c = NULL;

        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = { .name = "probe",
                                                     .reconcile = reconcile_ctx_probe,
                                                     .userdata = s },
                                     .wall_clock = wall,
                                     .api = api,
                             },
                             &c),
                     0);
        cr_assert_eq(controller_start(c), 0);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        for (int i = 0; i < 10000 && atomic_load(&s->calls) < 1; i++)
                usleep(1000);
        cr_assert_eq(controller_stop(c, USEC_INFINITY), 0);
        cr_assert_eq(atomic_load(&s->calls), 1);
}

Test(controller, reconcile_ctx_carries_the_port_the_wall_clock_and_the_log_fields)
{
        static const struct clock_ops fixed_ops = { .now = fixed_now };
        const struct clock wall = { .ops = &fixed_ops };
        int marker = 0;
        const struct kube_api api = { .ops = NULL, .userdata = &marker };
        struct seen s = { 0 };

        probe_once(&s, &api, &wall);
        cr_assert(s.has_api);
        cr_assert_eq(s.api_userdata, &marker, "the port given in the options");
        cr_assert_eq(s.now, 42 * USEC_PER_SEC);
        cr_assert_str_eq(s.object, "ns/a");
        cr_assert_eq(strlen(s.reconcile_id), 36);
        cr_assert_eq(s.second, -ESTALE);
}

Test(controller, reconcile_ctx_without_a_port)
{
        struct seen s = { .has_api = true };

        probe_once(&s, NULL, NULL);
        cr_assert_not(s.has_api);
        cr_assert_gt(s.now, 1700000000 * USEC_PER_SEC, "CLOCK_REALTIME by default");
}
