/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "kube/metrics.h"

static char *serialize(struct metrics_registry *reg)
{
        struct buf out = BUF_INIT(1 << 20);

        cr_assert_eq(metrics_serialize(reg, &out), 0);
        return buf_take(&out, NULL);
}

Test(metrics, golden_text_format)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        static const char *const lbl[] = { "controller", "result", NULL };
        static const double buckets[] = { 0.1, 0.5, 1 };
        static const char *const hl[] = { "controller", NULL };
        struct metric_family *f, *h, *g, *again;
        struct metric *m1, *m2, *m3, *hm, *gm;

        cr_assert_eq(metrics_register(reg, METRIC_COUNTER, "zz_total", "Z \\ help\nline", lbl, NULL,
                                      0, &f),
                     0);
        cr_assert_eq(metrics_register(reg, METRIC_HISTOGRAM, "b_seconds", "B help", hl, buckets, 3,
                                      &h),
                     0);
        cr_assert_eq(metrics_register(reg, METRIC_GAUGE, "a_gauge", "A help", NULL, NULL, 0, &g),
                     0);
        /* idempotent registration; conflicting one is refused */
        cr_assert_eq(metrics_register(reg, METRIC_COUNTER, "zz_total", "x", lbl, NULL, 0, &again),
                     0);
        cr_assert_eq(again, f);
        cr_assert_eq(metrics_register(reg, METRIC_GAUGE, "zz_total", "x", lbl, NULL, 0, &again),
                     -EEXIST);
        /* family without children is not printed */
        cr_assert_eq(metrics_register(reg, METRIC_GAUGE, "empty", "E", NULL, NULL, 0, &again), 0);

        cr_assert_eq(metric_family_child(f, (const char *const[]){ "tm", "success" }, &m1), 0);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "tm", "error" }, &m2), 0);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "a\"b\\c\nd", "success" }, &m3),
                     0);
        metric_inc(m1);
        metric_inc(m1);
        metric_add(m1, 0.5);
        metric_add(m1, -3); /* counters never go down */
        metric_inc(m2);
        metric_inc(m3);
        cr_assert_eq(metric_family_child(h, (const char *const[]){ "tm" }, &hm), 0);
        metric_observe(hm, 0.05);
        metric_observe(hm, 0.1);
        metric_observe(hm, 0.7);
        metric_observe(hm, 3);
        cr_assert_eq(metric_family_child(g, NULL, &gm), 0);
        metric_set(gm, 1e-8);

        char *s = serialize(reg);
        static const char golden[] =
                "# HELP a_gauge A help\n"
                "# TYPE a_gauge gauge\n"
                "a_gauge 1e-08\n"
                "# HELP b_seconds B help\n"
                "# TYPE b_seconds histogram\n"
                "b_seconds_bucket{controller=\"tm\",le=\"0.1\"} 2\n"
                "b_seconds_bucket{controller=\"tm\",le=\"0.5\"} 2\n"
                "b_seconds_bucket{controller=\"tm\",le=\"1\"} 3\n"
                "b_seconds_bucket{controller=\"tm\",le=\"+Inf\"} 4\n"
                "b_seconds_sum{controller=\"tm\"} 3.85\n"
                "b_seconds_count{controller=\"tm\"} 4\n"
                "# HELP zz_total Z \\\\ help\\nline\n"
                "# TYPE zz_total counter\n"
                "zz_total{controller=\"a\\\"b\\\\c\\nd\",result=\"success\"} 1\n"
                "zz_total{controller=\"tm\",result=\"error\"} 1\n"
                "zz_total{controller=\"tm\",result=\"success\"} 2.5\n";
        cr_assert_str_eq(s, golden, "got:\n%s", s);
        free(s);
}

Test(metrics, format_value)
{
        char b[64];

        metrics_format_value(0, b, sizeof(b));
        cr_assert_str_eq(b, "0");
        metrics_format_value(0.005, b, sizeof(b));
        cr_assert_str_eq(b, "0.005");
        metrics_format_value(1e3, b, sizeof(b));
        cr_assert_str_eq(b, "1000");
        metrics_format_value(0.1 + 0.2, b, sizeof(b));
        cr_assert_str_eq(b, "0.30000000000000004");
        metrics_format_value((double)INFINITY, b, sizeof(b));
        cr_assert_str_eq(b, "+Inf");
        metrics_format_value(-(double)INFINITY, b, sizeof(b));
        cr_assert_str_eq(b, "-Inf");
        metrics_format_value((double)NAN, b, sizeof(b));
        cr_assert_str_eq(b, "NaN");
}

Test(metrics, runtime_names_and_buckets)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct metric *m;

        for (int i = 0; i < RUNTIME_METRIC__MAX; i++) {
                struct metric_family *f;
                cr_assert_eq(metrics_runtime_family(reg, (enum runtime_metric)i, &f), 0, "%s",
                             runtime_metric_name((enum runtime_metric)i));
        }
        cr_assert_str_eq(runtime_metric_name(RUNTIME_METRIC_RECONCILE_TOTAL),
                         "controller_runtime_reconcile_total");
        cr_assert_str_eq(runtime_metric_name(RUNTIME_METRIC_LEADER_ELECTION_MASTER_STATUS),
                         "leader_election_master_status");
        cr_assert_null(runtime_metric_name(RUNTIME_METRIC__MAX));
        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_RECONCILE_TIME_SECONDS,
                                           (const char *const[]){ "tm" }, &m),
                     0);
        metric_observe(m, 0.2);
        char *s = serialize(reg);
        /* 40 buckets from 0.005 to 60 plus +Inf */
        size_t n = 0;
        for (const char *p = s; (p = strstr(p, "controller_runtime_reconcile_time_seconds_bucket"));
             p++)
                n++;
        cr_assert_eq(n, 41);
        cr_assert_not_null(strstr(s, "le=\"0.005\"} 0\n"));
        cr_assert_not_null(strstr(s, "le=\"0.2\"} 1\n"));
        cr_assert_not_null(strstr(s, "le=\"60\"} 1\n"));
        cr_assert_not_null(
                strstr(s, "# TYPE controller_runtime_reconcile_time_seconds histogram\n"));
        free(s);
}

static int n_collected;
static void collector(void *userdata)
{
        metric_set(userdata, 42);
        n_collected++;
}

Test(metrics, collectors_run_before_serialization)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct metric *m;

        cr_assert_eq(metrics_runtime_child(reg, RUNTIME_METRIC_ACTIVE_WORKERS,
                                           (const char *const[]){ "tm" }, &m),
                     0);
        cr_assert_eq(metrics_add_collector(reg, collector, m), 0);
        char *s = serialize(reg);
        cr_assert_not_null(strstr(s, "controller_runtime_active_workers{controller=\"tm\"} 42\n"));
        free(s);
        metrics_remove_collector(reg, collector, m);
        s = serialize(reg);
        free(s);
        cr_assert_eq(n_collected, 1);
}

Test(metrics, raise_to_mirrors_a_count_and_never_lowers)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct metric_family *f;
        struct metric *m;

        cr_assert_not_null(reg);
        cr_assert_eq(metrics_register(reg, METRIC_COUNTER, "x_total", "x", NULL, NULL, 0, &f), 0);
        cr_assert_eq(metric_family_child(f, NULL, &m), 0);
        metric_raise_to(m, 5);
        cr_assert_float_eq(metric_value(m), 5, 1e-9);
        metric_raise_to(m, 3);
        cr_assert_float_eq(metric_value(m), 5, 1e-9, "a counter never goes down");
        metric_raise_to(m, 12);
        cr_assert_float_eq(metric_value(m), 12, 1e-9);
        metric_raise_to(NULL, 1);
}

Test(metrics, clear_drops_every_child)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        struct metric_family *f;
        struct metric *m;
        char *s;

        cr_assert_eq(metrics_register(reg, METRIC_GAUGE, "g", "g",
                                      (const char *const[]){ "pod", NULL }, NULL, 0, &f),
                     0);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "a" }, &m), 0);
        metric_set(m, 1);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "b" }, &m), 0);
        metric_set(m, 2);
        metric_family_clear(f);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "b" }, &m), 0);
        metric_set(m, 3);
        s = serialize(reg);
        cr_assert_null(strstr(s, "pod=\"a\""), "%s", s);
        cr_assert_not_null(strstr(s, "g{pod=\"b\"} 3\n"), "%s", s);
        free(s);
        metric_family_clear(NULL);
}
