/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Unit tests of catalog/performance: targetRPS's computed properties and the recommendations
 * filter, table-driven, every expectation computed by hand in the comments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "catalog/performance.h"
#include "catalog-fixture.h"

/* A performance artifact; NULL/negative sentinels leave a property out. */
static json_t *art(const char *name, const char *hw_type, double latency, int hw_count, double rps)
{
        json_t *c = json_object(), *a;

        cr_assert_not_null(c);
        if (hw_type)
                json_object_set_new(c, "hardware_type",
                                    json_pack("{s:s, s:s}", "metadataType", "MetadataStringValue",
                                              "string_value", hw_type));
        if (latency >= 0)
                json_object_set_new(c, "ttft_p90",
                                    json_pack("{s:s, s:f}", "metadataType", "MetadataDoubleValue",
                                              "double_value", latency));
        if (hw_count >= 0) {
                char b[16];

                snprintf(b, sizeof(b), "%d", hw_count);
                json_object_set_new(c, "hardware_count",
                                    json_pack("{s:s, s:s}", "metadataType", "MetadataIntValue",
                                              "int_value", b));
        }
        if (rps >= 0)
                json_object_set_new(c, "requests_per_second",
                                    json_pack("{s:s, s:f}", "metadataType", "MetadataDoubleValue",
                                              "double_value", rps));
        a = json_pack("{s:s, s:s, s:s, s:o}", "artifactType", "metrics-artifact", "metricsType",
                      "performance-metrics", "name", name, "customProperties", c);
        cr_assert_not_null(a);
        return a;
}

static const char *int_prop(const json_t *a, const char *k)
{
        return json_string_value(
                json_object_get(json_object_get(json_object_get(a, "customProperties"), k),
                                "int_value"));
}

static double double_prop(const json_t *a, const char *k)
{
        return json_real_value(
                json_object_get(json_object_get(json_object_get(a, "customProperties"), k),
                                "double_value"));
}

Test(performance, target_rps_table)
{
        static const struct {
                int32_t target;
                double rps; /* < 0: absent */
                const char *replicas;
                double total;
        } t[] = {
                { 300, 250, "2", 500 },  /* ceil(1.2) = 2, 2 * 250 */
                { 300, 100, "3", 300 },  /* exact division */
                { 300, -1, "300", 300 }, /* no rps property: rps = 1 */
                { 300, 0, "300", 300 },  /* rps <= 0: 1 */
                { 1, 1000, "1", 1000 },  /* ceil(0.001) = 1: at least one replica */
                { 7, 2.5, "3", 7.5 },    /* ceil(2.8) = 3, 3 * 2.5 */
                { 2147483647, 0.5, "2147483647", 1073741823.5 }, /* clamped to INT32_MAX */
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                json_t *a = art("x", "A100", 10, 1, t[i].rps);

                cr_assert_eq(catalog_perf_add_target_rps(a, t[i].target, NULL), 0);
                cr_assert_str_eq(int_prop(a, "replicas"), t[i].replicas, "row %zu", i);
                cr_assert_float_eq(double_prop(a, "total_requests_per_second"), t[i].total, 1e-6,
                                   "row %zu", i);
                json_decref(a);
        }
}

Test(performance, target_rps_details)
{
        json_t *a = art("x", "A100", 10, 1, 40);
        json_t *b = json_pack("{s:s, s:{s:{s:s, s:s}}}", "name", "int-rps", "customProperties",
                              "requests_per_second", "metadataType", "MetadataIntValue",
                              "int_value", "50");

        /* targetRPS 0: nothing computed */
        cr_assert_eq(catalog_perf_add_target_rps(a, 0, NULL), 0);
        cr_assert_null(int_prop(a, "replicas"));
        /* a custom rpsProperty that is absent: rps = 1 */
        cr_assert_eq(catalog_perf_add_target_rps(a, 100, "qps"), 0);
        cr_assert_str_eq(int_prop(a, "replicas"), "100");
        /* the default name again: ceil(100 / 40) = 3, overwriting the previous values */
        cr_assert_eq(catalog_perf_add_target_rps(a, 100, ""), 0);
        cr_assert_str_eq(int_prop(a, "replicas"), "3");
        cr_assert_float_eq(double_prop(a, "total_requests_per_second"), 120, 1e-9);
        /* only a double_value counts as a rate (upstream reads DoubleValue): int 50 -> rps 1 */
        cr_assert_eq(catalog_perf_add_target_rps(b, 100, NULL), 0);
        cr_assert_str_eq(int_prop(b, "replicas"), "100");
        json_decref(a);
        json_decref(b);
}

static void recommend(json_t **v, size_t n, int32_t target, char *out, size_t n_out)
{
        struct catalog_perf_params p = { .target_rps = target, .recommendations = true };
        bool keep[32];

        cr_assert_leq(n, 32);
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(catalog_perf_add_target_rps(v[i], target <= 0 ? 1 : target, NULL), 0);
        cr_assert_eq(catalog_perf_recommend(v, n, &p, keep), 0);
        out[0] = '\0';
        for (size_t i = 0; i < n; i++)
                if (keep[i]) {
                        size_t len = strlen(out);

                        snprintf(out + len, n_out - len, "%s%s", len ? "," : "",
                                 json_string_value(json_object_get(v[i], "name")));
                }
}

Test(performance, recommendations_front_and_epsilon)
{
        /*
         * Group X (rps absent, target 1: one replica each, so cost = hardware count):
         *   by latency: E(85,16) D(90,8) C(190,4) B(200,2) F(250,3) A(300,1)
         *   pass 1 (strictly cheaper than all faster ones): E D C B A (F: 3 >= 2)
         *   pass 2 from the cheapest: A(300) kept; B 200: (300-200)/300 = .33 > .05 kept;
         *   C 190: (200-190)/200 = .05, not > .05; D 90: .55 kept; now 90 <= 100 so epsilon .1:
         *   E 85: (90-85)/90 = .056, not > .1.  -> A B D
         * Group Y: G alone -> kept. Group "" (no hardware_type): H(10,1) I(latency 0 = +inf, 1):
         *   I is not cheaper than H -> H. Group Z: J(50,2) K(50,1): equal latency, K sorts first
         *   (fewer devices) and J is not cheaper -> K.
         */
        json_t *v[] = {
                art("A", "X", 300, 1, -1), art("B", "X", 200, 2, -1), art("C", "X", 190, 4, -1),
                art("D", "X", 90, 8, -1),  art("E", "X", 85, 16, -1), art("F", "X", 250, 3, -1),
                art("G", "Y", 40, 1, -1),  art("H", NULL, 10, 1, -1), art("I", NULL, 0, 1, -1),
                art("J", "Z", 50, 2, -1),  art("K", "Z", 50, 1, -1),
        };
        char out[256];

        recommend(v, ELEMENTSOF(v), 0, out, sizeof(out));
        cr_assert_str_eq(out, "A,B,D,G,H,K", "kept, in input order");
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                json_decref(v[i]);
}

Test(performance, recommendations_use_replicas_for_the_cost)
{
        /*
         * P: rps 100, latency 50, 1 device; Q: rps 10, latency 40, 1 device.
         * target 100: P needs 1 replica (cost 1), Q 10 (cost 10); by latency Q(10) P(1): both on
         *   the front; from the cheapest: P(50) kept, Q: (50-40)/50 = .2 > .1 kept -> P,Q.
         * target 1 (the default): both cost 1; Q comes first, P is not cheaper -> Q.
         */
        json_t *v[] = { art("P", "W", 50, 1, 100), art("Q", "W", 40, 1, 10) };
        json_t *w[] = { art("P", "W", 50, 1, 100), art("Q", "W", 40, 1, 10) };
        char out[64];

        recommend(v, 2, 100, out, sizeof(out));
        cr_assert_str_eq(out, "P,Q");
        recommend(w, 2, 0, out, sizeof(out));
        cr_assert_str_eq(out, "Q");
        /* upstream's own example (all gpu-a100, target 300): fast 2*ceil(300/250)=4, medium
         * 3*2=6, slow 5*3=15: the faster one is also the cheapest -> only fast */
        {
                json_t *u[] = { art("fast", "gpu-a100", 50, 2, 250),
                                art("medium", "gpu-a100", 120, 3, 150),
                                art("slow", "gpu-a100", 200, 5, 100) };

                recommend(u, 3, 300, out, sizeof(out));
                cr_assert_str_eq(out, "fast");
                for (size_t i = 0; i < 3; i++)
                        json_decref(u[i]);
        }
        for (size_t i = 0; i < 2; i++) {
                json_decref(v[i]);
                json_decref(w[i]);
        }
}

Test(performance, property_names_are_validated)
{
        json_t *v[] = { art("a", "X", 10, 1, -1), art("b", "X", 10, 1, 5) };
        struct catalog_perf_params p = { 0 };
        char err[256];

        cr_assert_eq(WITH_DETAIL(err, catalog_perf_validate(v, 2, &p, &detail_)), 0,
                     "defaults unchecked");
        p.rps_property = "requests_per_second"; /* only b has it: enough */
        p.latency_property = "ttft_p90";
        cr_assert_eq(WITH_DETAIL(err, catalog_perf_validate(v, 2, &p, &detail_)), 0);
        p.latency_property = "p99";
        p.hw_type_property = "gpu";
        cr_assert_eq(WITH_DETAIL(err, catalog_perf_validate(v, 2, &p, &detail_)), -EINVAL);
        cr_assert_str_eq(err, "invalid custom properties: properties not found in any performance "
                              "artifacts: [p99 gpu]");
        {
                struct error_detail e = { 0 };

                cr_assert_eq(catalog_perf_validate(v, 2, &p, &e), -EINVAL);
                cr_assert_eq(e.kind, ERROR_INVALID, "a 400");
                cr_assert_eq(e.error, -EINVAL);
        }
        cr_assert_eq(WITH_DETAIL(err, catalog_perf_validate(v, 0, &p, &detail_)), 0,
                     "no artifacts: valid");
        json_decref(v[0]);
        json_decref(v[1]);
}
