/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement's objects (serving/spread.h): the planner fed from the agents' reports and the
 * assignment ConfigMaps, and its result as ConfigMap writes, admission and status. A small world
 * of ConfigMaps stands in for the controller's cache: each pass's writes are applied to it as the
 * API server would (create, JSON merge patch, delete), so that the next pass reads them back.
 * The end-to-end shape (plan.c: admission, modelconfig-<isvc>-0) is at the bottom.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/modelconfig.h"
#include "serving/plan.h"
#include "serving/replicas.h"
#include "serving/spread.h"

#define GI    ((uint64_t)1 << 30)
#define NOW   ((usec_t)1750000000 * USEC_PER_SEC)
#define N_MAX 64

/* ---- the world ---- */

struct world {
        json_t *cms; /* the ConfigMaps of InferenceService "mm" */
        unsigned long rv;
        /* the models */
        size_t n;
        char names[N_MAX][16], uris[N_MAX][32];
        struct spread_model models[N_MAX];
        struct model_entries entries;
        struct spread_held held[N_MAX];
        size_t n_held;
        uint64_t capacity;
        unsigned declared;
        /* the last pass */
        struct spread_result res;
        size_t writes, creates, patches, deletes;
};

static struct world W;

static void setup(void)
{
        memset(&W, 0, sizeof(W));
        W.cms = json_array();
        W.capacity = 10 * GI;
        W.declared = 1;
        model_entries_init(&W.entries);
}

static void teardown(void)
{
        spread_result_release(&W.res);
        model_entries_release(&W.entries);
        json_decref(W.cms);
}

TestSuite(spread, .init = setup, .fini = teardown);

/* The agent's report of @pod: @models_json, draining or not. */
static void put_report(const char *pod, const char *models_json, bool draining)
{
        char name[64], uid[64];
        json_t *cm;

        (void)snprintf(name, sizeof(name), "modelstatus-%s", pod);
        (void)snprintf(uid, sizeof(uid), "uid-%s", pod);
        cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s}]}, s:{s:s, "
                       "s:s}}",
                       "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name,
                       "namespace", "ns", "labels", REPLICAS_ISVC_LABEL, "mm",
                       REPLICAS_STATUS_LABEL, "agent", "ownerReferences", "apiVersion", "v1",
                       "kind", "Pod", "name", pod, "uid", uid, "data", "models.json", models_json,
                       "pod", pod);
        cr_assert_not_null(cm);
        if (draining)
                json_object_set_new(json_object_get(cm, "data"), "draining", json_string("true"));
        for (size_t i = 0; i < json_array_size(W.cms); i++)
                if (streq(json_get_string_path(json_array_get(W.cms, i), "metadata", "name", NULL),
                          name)) {
                        json_array_set_new(W.cms, i, cm);
                        return;
                }
        json_array_append_new(W.cms, cm);
}

static long find_cm(const char *name)
{
        for (size_t i = 0; i < json_array_size(W.cms); i++)
                if (streq(json_get_string_path(json_array_get(W.cms, i), "metadata", "name", NULL),
                          name))
                        return (long)i;
        return -1;
}

static void drop_cm(const char *name)
{
        long i = find_cm(name);

        cr_assert_geq(i, 0, "no ConfigMap %s", name);
        json_array_remove(W.cms, (size_t)i);
}

/* RFC 7386 JSON merge patch. */
static void merge(json_t *target, const json_t *patch)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)patch, k, v) {
                json_t *t = json_object_get(target, k);

                if (json_is_null(v))
                        json_object_del(target, k);
                else if (json_is_object(v) && json_is_object(t))
                        merge(t, v);
                else
                        json_object_set_new(target, k, json_deep_copy(v));
        }
}

static void set_rv(json_t *cm)
{
        char rv[32];

        (void)snprintf(rv, sizeof(rv), "%lu", ++W.rv);
        json_object_set_new(json_object_get(cm, "metadata"), "resourceVersion", json_string(rv));
}

static void apply_writes(struct spread_write *w, size_t n)
{
        W.writes += n;
        for (size_t i = 0; i < n; i++) {
                long at = find_cm(w[i].name);

                switch (w[i].op) {
                case SPREAD_CREATE: {
                        json_t *o = json_deep_copy(w[i].body);

                        cr_assert_lt(at, 0, "create of an existing %s", w[i].name);
                        set_rv(o);
                        json_array_append_new(W.cms, o);
                        W.creates++;
                        break;
                }
                case SPREAD_PATCH:
                        cr_assert_geq(at, 0, "patch of a missing %s", w[i].name);
                        merge(json_array_get(W.cms, (size_t)at), w[i].body);
                        set_rv(json_array_get(W.cms, (size_t)at));
                        W.patches++;
                        break;
                case SPREAD_DELETE:
                        cr_assert_geq(at, 0, "delete of a missing %s", w[i].name);
                        json_array_remove(W.cms, (size_t)at);
                        W.deletes++;
                        break;
                }
        }
}

/* @n models of @gi GiB each, @copies copies, all listed. */
static void set_models(size_t n, uint64_t gi, unsigned copies)
{
        cr_assert_leq(n, N_MAX);
        model_entries_release(&W.entries);
        model_entries_init(&W.entries);
        W.n = n;
        for (size_t i = 0; i < n; i++) {
                char mem[16];

                (void)snprintf(W.names[i], sizeof(W.names[i]), "m%02zu", i);
                (void)snprintf(W.uris[i], sizeof(W.uris[i]), "s3://b/m%02zu", i);
                (void)snprintf(mem, sizeof(mem), "%lluGi", (unsigned long long)gi);
                cr_assert_eq(model_entries_append(&W.entries, W.names[i], W.uris[i], "sklearn",
                                                  mem),
                             0);
                W.models[i] = (struct spread_model){ .name = W.names[i],
                                                     .storage_uri = W.uris[i],
                                                     .memory = gi * GI,
                                                     .copies = copies };
        }
        for (size_t i = 0; i < n; i++)
                W.models[i].entry = &W.entries.items[i];
}

static struct spread_input input(void)
{
        return (struct spread_input){ .isvc = "mm",
                                      .namespace_ = "ns",
                                      .configmaps = W.cms,
                                      .now = NOW,
                                      .capacity = W.capacity,
                                      .declared = W.declared,
                                      .models = W.models,
                                      .n_models = W.n,
                                      .held = W.held,
                                      .n_held = W.n_held };
}

/* One pass: compute, plan the writes, apply them; returns the number of writes. */
static size_t pass(void)
{
        struct spread_input in = input();
        struct spread_write *w = NULL;
        size_t n = 0;

        spread_result_release(&W.res);
        cr_assert_eq(spread_compute(&in, &W.res), 0);
        cr_assert_eq(spread_plan_writes(&in, &W.res, &w, &n), 0);
        W.writes = W.creates = W.patches = W.deletes = 0;
        apply_writes(w, n);
        spread_writes_free(w, n);
        return n;
}

/* The models.json of pod's assignment, parsed; empty when there is none. */
static void assignment_of(const char *pod, struct model_entries *ret)
{
        char name[128];
        long i;

        (void)snprintf(name, sizeof(name), "modelconfig-mm-%s", pod);
        i = find_cm(name);
        model_entries_init(ret);
        if (i < 0)
                return;
        cr_assert_eq(modelconfig_parse(json_get_string_path(json_array_get(W.cms, (size_t)i),
                                                            "data", "models.json", NULL),
                                       ret, NULL, 0),
                     0);
}

static uint64_t assigned_bytes(const char *pod)
{
        struct model_entries e;
        uint64_t sum = 0;

        assignment_of(pod, &e);
        for (size_t i = 0; i < e.n; i++)
                for (size_t m = 0; m < W.n; m++)
                        if (streq(e.items[i].name, W.names[m]))
                                sum += W.models[m].memory;
        model_entries_release(&e);
        return sum;
}

static bool pod_holds(const char *pod, const char *model)
{
        struct model_entries e;
        bool found;

        assignment_of(pod, &e);
        found = model_entries_find_sorted(&e, model) != NULL;
        model_entries_release(&e);
        return found;
}

static size_t copies_of(const char *model, const char *const *pods, size_t n_pods)
{
        size_t c = 0;

        for (size_t i = 0; i < n_pods; i++)
                c += pod_holds(pods[i], model);
        return c;
}

static const char *const PODS[] = { "pod-a", "pod-b", "pod-c", "pod-d" };

static void three_replicas(void)
{
        for (size_t i = 0; i < 3; i++)
                put_report(PODS[i], "[]", false);
}

/* ---- the annotations ---- */

Test(spread, copies_annotation_parsing)
{
        static const char *const good[] = { "1", "3", "1000", "all" };
        static const unsigned want[] = { 1, 3, 1000, PLACEMENT_COPIES_ALL };
        static const char *const bad[] = { "",    "0",  "-1", "+1",  "01",  "1001",
                                           "1.5", " 1", "1 ", "two", "ALL", "99999999999" };
        unsigned v;

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                cr_assert_eq(spread_copies_parse(good[i], &v), 0, "%s", good[i]);
                cr_assert_eq(v, want[i], "%s", good[i]);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_eq(spread_copies_parse(bad[i], &v), -EINVAL, "%s accepted", bad[i]);
        cr_assert_eq(spread_copies_parse(NULL, &v), -EINVAL);
}

Test(spread, enabled_and_declared_replicas)
{
        json_auto_t *on = json_pack("{s:{s:{s:s}}, s:{s:{s:i}}}", "metadata", "annotations",
                                    SPREAD_ANNOTATION, "spread", "spec", "predictor", "minReplicas",
                                    3);
        json_auto_t *other = json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
                                       SPREAD_ANNOTATION, "off");
        json_auto_t *none = json_pack("{s:{}}", "metadata");
        char buf[SPREAD_NAME_MAX + 1], pod[300];

        cr_assert(spread_enabled(on));
        cr_assert_not(spread_enabled(other));
        cr_assert_not(spread_enabled(none));
        cr_assert_not(spread_enabled(NULL));
        cr_assert_eq(spread_declared_replicas(on), 3);
        cr_assert_eq(spread_declared_replicas(none), 1);
        cr_assert_eq(spread_assignment_name("mm", "pod-a", buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "modelconfig-mm-pod-a");
        memset(pod, 'p', 240);
        pod[240] = '\0';
        cr_assert_eq(spread_assignment_name("mm", pod, buf, sizeof(buf)), -ENAMETOOLONG);
}

/* ---- plan -> ConfigMaps ---- */

/* 25 models of 1Gi on three 10Gi replicas (KServe's one-pod admission takes 10): all admitted,
 * one ConfigMap created per replica, none over its limit; the same world again writes nothing. */
Test(spread, plan_writes_one_configmap_per_replica_then_nothing)
{
        size_t total = 0;

        three_replicas();
        set_models(25, 1, 1);
        cr_assert_eq(pass(), 3);
        cr_assert_eq(W.creates, 3);
        for (size_t m = 0; m < W.n; m++)
                cr_assert(W.res.models[m].admitted, "%s not admitted", W.names[m]);
        for (size_t i = 0; i < 3; i++) {
                struct model_entries e;
                long at;
                char name[64];

                cr_assert_leq(assigned_bytes(PODS[i]), W.capacity, "%s over its limit", PODS[i]);
                assignment_of(PODS[i], &e);
                total += e.n;
                model_entries_release(&e);
                (void)snprintf(name, sizeof(name), "modelconfig-mm-%s", PODS[i]);
                at = find_cm(name);
                json_t *cm = json_array_get(W.cms, (size_t)at);
                cr_assert_str_eq(json_get_string_path(cm, "metadata", "labels",
                                                      REPLICAS_PLACEMENT_LABEL, NULL),
                                 "assignment");
                cr_assert_str_eq(json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                      NULL),
                                 "mm");
                cr_assert_str_eq(json_get_string_path(cm, "metadata", "annotations",
                                                      SPREAD_POD_ANNOTATION, NULL),
                                 PODS[i]);
                json_t *ref = json_array_get(json_get_path(cm, "metadata", "ownerReferences", NULL),
                                             0);
                cr_assert_str_eq(json_get_string_path(ref, "kind", NULL), "Pod");
                cr_assert_str_eq(json_get_string_path(ref, "name", NULL), PODS[i]);
                cr_assert_not_null(json_get_string_path(ref, "uid", NULL));
                cr_assert_null(json_object_get(ref, "controller"));
                cr_assert(replicas_is_assignment(cm));
        }
        cr_assert_eq(total, 25, "each model once: %zu", total);
        cr_assert_eq(W.res.moved, 25);

        cr_assert_eq(pass(), 0, "an unchanged world wrote %zu ConfigMaps", W.writes);
        cr_assert_eq(W.res.moved, 0);
}

/* The bytes of an entry are modelconfig-<isvc>-0's: the same serialiser, sorted by name. */
Test(spread, assignment_entries_are_models_json_entries)
{
        AUTOFREE char *want = NULL;
        struct model_entries one;

        put_report("pod-a", "[]", false);
        set_models(3, 1, 1);
        cr_assert_eq(pass(), 1);
        cr_assert_eq(modelconfig_serialize(&W.entries, &want, NULL), 0);
        cr_assert_str_eq(json_get_string_path(json_array_get(W.cms, 1), "data", "models.json",
                                              NULL),
                         want);
        assignment_of("pod-a", &one);
        cr_assert_eq(one.n, 3);
        model_entries_release(&one);
}

/* A replica that goes away: its models go to the others (one patch each, at most), its
 * assignment is deleted, the others' models stay where they are. */
Test(spread, replica_gone_its_models_go_elsewhere)
{
        const char *a_before[N_MAX] = { 0 };

        three_replicas();
        set_models(20, 1, 1);
        (void)pass();
        for (size_t m = 0; m < W.n; m++)
                a_before[m] = pod_holds("pod-a", W.names[m])   ? "a"
                              : pod_holds("pod-b", W.names[m]) ? "b"
                                                               : "c";
        drop_cm("modelstatus-pod-c");
        cr_assert_leq(pass(), 3);
        cr_assert_eq(W.deletes, 1, "pod-c's assignment is deleted");
        cr_assert_lt(find_cm("modelconfig-mm-pod-c"), 0);
        cr_assert_leq(W.patches, 2);
        for (size_t m = 0; m < W.n; m++) {
                cr_assert_eq(copies_of(W.names[m], PODS, 2), 1, "%s", W.names[m]);
                if (a_before[m][0] == 'a')
                        cr_assert(pod_holds("pod-a", W.names[m]), "%s moved off a", W.names[m]);
                if (a_before[m][0] == 'b')
                        cr_assert(pod_holds("pod-b", W.names[m]), "%s moved off b", W.names[m]);
        }
        cr_assert_eq(pass(), 0);
}

/* Adding a fourth replica moves about a quarter of the models, in one create and at most
 * three patches. */
Test(spread, replica_added_moves_about_a_quarter)
{
        size_t moved;

        three_replicas();
        set_models(60, 1, 1);
        W.capacity = 40 * GI;
        (void)pass();
        put_report("pod-d", "[]", false);
        (void)pass();
        moved = W.res.moved;
        cr_assert_eq(W.creates, 1);
        cr_assert_leq(W.patches, 3);
        cr_assert_gt(moved, 60 / 8, "moved %zu of 60", moved);
        cr_assert_lt(moved, 60 / 2, "moved %zu of 60", moved);
        for (size_t m = 0; m < W.n; m++)
                cr_assert_eq(copies_of(W.names[m], PODS, 4), 1);
}

/* A draining replica: no write to it (it serves what it has until it stops); its models are
 * placed on the others. */
Test(spread, draining_replica_keeps_its_assignment_and_models_go_elsewhere)
{
        size_t on_a = 0;

        three_replicas();
        set_models(12, 1, 1);
        (void)pass();
        for (size_t m = 0; m < W.n; m++)
                on_a += pod_holds("pod-a", W.names[m]);
        cr_assert_gt(on_a, 0);
        put_report("pod-a", "[]", true);
        (void)pass();
        cr_assert_eq(W.deletes, 0);
        for (size_t m = 0; m < W.n; m++)
                cr_assert_eq(copies_of(W.names[m], PODS + 1, 2), 1, "%s not re-placed", W.names[m]);
        {
                struct model_entries e;

                assignment_of("pod-a", &e);
                cr_assert_eq(e.n, on_a, "the draining replica's assignment was rewritten");
                model_entries_release(&e);
        }
        cr_assert(W.res.replicas[0].draining);
        cr_assert_eq(W.res.replicas[0].n_models, 0, "draining: nothing new assigned");
}

/* A model that failed to load on a replica (its report says so, same storageUri) goes
 * elsewhere, and the failure is recorded so that it stays away once the report forgets it. */
Test(spread, failed_replica_is_excluded_and_remembered)
{
        const char *first = NULL;
        json_t *st;

        three_replicas();
        set_models(1, 1, 1);
        (void)pass();
        for (size_t i = 0; i < 3; i++)
                if (pod_holds(PODS[i], "m00"))
                        first = PODS[i];
        cr_assert_not_null(first);
        put_report(first,
                   "[{\"name\":\"m00\",\"state\":\"FailedToLoad\",\"storageUri\":\"s3://b/m00\","
                   "\"reason\":\"boom\"}]",
                   false);
        (void)pass();
        cr_assert_not(pod_holds(first, "m00"), "placed again where it failed");
        cr_assert_eq(copies_of("m00", PODS, 3), 1);
        cr_assert_not_null(W.res.models[0].tm->failed);
        cr_assert_not_null(strstr(W.res.models[0].tm->failed, first));
        cr_assert(W.res.models[0].admitted);

        /* the report forgets it (the agent dropped the model): the status record remembers */
        st = json_pack("{s:{s:s}}", "annotations", SPREAD_FAILED_ANNOTATION,
                       W.res.models[0].tm->failed);
        W.models[0].status = st;
        put_report(first, "[]", false);
        (void)pass();
        cr_assert_not(pod_holds(first, "m00"), "placed again once the report forgot it");
        cr_assert_eq(W.writes, 0);

        /* a new storageUri: the failures of the old one do not count */
        (void)snprintf(W.uris[0], sizeof(W.uris[0]), "s3://b/m00-v2");
        W.models[0].storage_uri = W.uris[0];
        spread_result_release(&W.res);
        {
                struct spread_input in = input();

                cr_assert_eq(spread_compute(&in, &W.res), 0);
                cr_assert_null(W.res.models[0].tm->failed);
        }
        json_decref(st);
}

/* Failed on every live replica: admitted all the same (memory is not the problem), placed
 * nowhere, reported FailedToLoad. */
Test(spread, failed_everywhere_is_admitted_and_failed)
{
        static const char failed[] = "[{\"name\":\"m00\",\"state\":\"FailedToLoad\","
                                     "\"storageUri\":\"s3://b/m00\"}]";
        struct spread_input in;

        put_report("pod-a", failed, false);
        put_report("pod-b", failed, false);
        set_models(1, 1, 1);
        in = input();
        cr_assert_eq(spread_compute(&in, &W.res), 0);
        cr_assert(W.res.models[0].admitted);
        cr_assert_eq(W.res.models[0].tm->n_pods, 0);
        cr_assert(W.res.models[0].tm->failed_everywhere);
}

/* Admission: a model no replica can hold is refused with the planner's shortfall; one with
 * fewer copies than wanted is admitted, degraded, with a note. */
Test(spread, admission_shortfall_and_degraded_copies)
{
        three_replicas();
        W.capacity = 4 * GI;
        set_models(2, 3, 2); /* two models of 3Gi, two copies each: 12Gi of 12Gi */
        (void)pass();
        cr_assert(W.res.models[0].admitted && W.res.models[1].admitted);
        cr_assert_eq(W.res.models[0].tm->n_pods, 2);
        cr_assert_eq(W.res.models[1].tm->n_pods, 1, "only one replica left with 3Gi free");
        cr_assert_not_null(W.res.models[1].tm->note);
        cr_assert_not_null(strstr(W.res.models[1].tm->note, "1/2 copies placed"), "%s",
                           W.res.models[1].tm->note);

        set_models(1, 5, 1); /* 5Gi on 4Gi replicas */
        (void)pass();
        cr_assert_not(W.res.models[0].admitted);
        cr_assert_not_null(W.res.models[0].refusal);
        cr_assert_not_null(strstr(W.res.models[0].refusal, "needs 5Gi"), "%s",
                           W.res.models[0].refusal);
        cr_assert_not_null(strstr(W.res.models[0].refusal, "the most free on one replica is 4Gi"),
                           "%s", W.res.models[0].refusal);
        for (size_t i = 0; i < 3; i++)
                cr_assert_not(pod_holds(PODS[i], "m00"));
}

/* Before any replica reports: admission plans over the declared replicas (minReplicas), and
 * nothing is written. */
Test(spread, before_any_report_admits_over_declared_replicas_and_writes_nothing)
{
        W.capacity = 4 * GI;
        W.declared = 3;
        set_models(14, 1, 1);
        cr_assert_eq(pass(), 0);
        for (size_t m = 0; m < 12; m++)
                cr_assert(W.res.models[m].admitted, "%s", W.names[m]);
        cr_assert_not(W.res.models[12].admitted);
        cr_assert_not(W.res.models[13].admitted);
        cr_assert_not_null(strstr(W.res.models[12].refusal, "needs 1Gi"));
        cr_assert_not_null(W.res.models[0].tm->note);
        cr_assert_not_null(strstr(W.res.models[0].tm->note, "no serving replica"));

        /* one replica reports: it takes what fits; the rest stays admitted for the others */
        put_report("pod-a", "[]", false);
        (void)pass();
        cr_assert_eq(W.creates, 1);
        cr_assert_leq(assigned_bytes("pod-a"), 4 * GI);
        for (size_t m = 0; m < 12; m++)
                cr_assert(W.res.models[m].admitted, "%s lost admission while pods start",
                          W.names[m]);
}

/* Models being deleted keep their memory where an assignment still lists them. */
Test(spread, models_being_deleted_keep_their_memory)
{
        put_report("pod-a", "[]", false);
        W.capacity = 4 * GI;
        set_models(5, 1, 1);
        W.n = 4;
        (void)pass();
        cr_assert_eq(assigned_bytes("pod-a"), 4 * GI);
        /* m00 is being deleted, m04 arrives: m00's entry goes, m04 waits for the next pass */
        W.held[0] = (struct spread_held){ "m00", GI };
        W.n_held = 1;
        memmove(&W.models[0], &W.models[1], 4 * sizeof(W.models[0]));
        (void)pass();
        cr_assert_not(pod_holds("pod-a", "m00"));
        cr_assert_not(W.res.models[3].admitted, "admitted into memory a deleted model holds");
        W.n_held = 0;
        (void)pass();
        cr_assert(W.res.models[3].admitted);
        cr_assert(pod_holds("pod-a", "m04"));
}

/* Placement switched off: every assignment ConfigMap goes. */
Test(spread, cleanup_deletes_every_assignment)
{
        struct spread_write *w = NULL;
        size_t n = 0;

        three_replicas();
        set_models(6, 1, 1);
        (void)pass();
        cr_assert_eq(spread_plan_cleanup("mm", W.cms, &w, &n), 0);
        cr_assert_eq(n, 3);
        for (size_t i = 0; i < n; i++)
                cr_assert_eq(w[i].op, SPREAD_DELETE);
        spread_writes_free(w, n);
        cr_assert_eq(spread_plan_cleanup("other", W.cms, &w, &n), 0);
        cr_assert_eq(n, 0);
        spread_writes_free(w, n);
}

/* ---- status ---- */

Test(spread, status_counts_copies_over_assigned_replicas)
{
        CLEANUP(replica_set_release) struct replica_set set = { 0 };
        json_auto_t *status = json_pack("{s:[]}", "conditions");
        const char *ann;
        json_t *c;

        three_replicas();
        set_models(1, 1, 2);
        (void)pass();
        cr_assert_eq(W.res.models[0].tm->n_pods, 2);
        for (size_t j = 0; j < 2; j++)
                put_report(
                        W.res.models[0].tm->pods[j],
                        "[{\"name\":\"m00\",\"state\":\"Loaded\",\"storageUri\":\"s3://b/m00\"}]",
                        false);
        cr_assert_eq(replica_set_build(W.cms, NOW, &set), 0);
        cr_assert_eq(spread_status_apply(status, NULL, &set, "m00", "s3://b/m00",
                                         W.res.models[0].tm, false, NOW),
                     0);
        c = json_array_get(json_object_get(status, "conditions"), 0);
        cr_assert_str_eq(json_get_string_path(c, "type", NULL), CONDITION_MODEL_LOADED);
        cr_assert_str_eq(json_get_string_path(c, "status", NULL), "True");
        cr_assert_str_eq(json_get_string_path(c, "message", NULL), "2/2 copies loaded");
        ann = json_get_string_path(status, "annotations", REPLICAS_ANNOTATION, NULL);
        cr_assert_not_null(ann);
        cr_assert_not_null(strstr(ann, W.res.models[0].tm->pods[0]));
        cr_assert_not_null(strstr(ann, W.res.models[0].tm->pods[1]));
        json_auto_t *detail = json_loads(ann, 0, NULL);
        cr_assert_eq(json_array_size(detail), 2, "only the assigned pods: %s", ann);
}

Test(spread, status_of_a_model_placed_nowhere)
{
        CLEANUP(replica_set_release) struct replica_set set = { 0 };
        json_auto_t *status = json_object();
        struct spread_tm tm = { .wanted = 1, .note = (char *)"needs 5Gi; whatever" };
        json_t *c;

        cr_assert_eq(replica_set_build(W.cms, NOW, &set), 0);
        cr_assert_eq(spread_status_apply(status, NULL, &set, "m00", NULL, &tm, false, NOW), 0);
        c = json_array_get(json_object_get(status, "conditions"), 0);
        cr_assert_str_eq(json_get_string_path(c, "status", NULL), "Unknown");
        cr_assert_str_eq(json_get_string_path(c, "reason", NULL), SPREAD_REASON_NOT_PLACED);
        cr_assert_str_eq(json_get_string_path(c, "message", NULL),
                         "0/0 copies loaded: needs 5Gi; whatever");
        tm.failed_everywhere = true;
        tm.failed = (char *)"{\"pods\":[\"pod-a\"]}";
        cr_assert_eq(spread_status_apply(status, NULL, &set, "m00", NULL, &tm, false, NOW), 0);
        c = json_array_get(json_object_get(status, "conditions"), 0);
        cr_assert_str_eq(json_get_string_path(c, "status", NULL), "False");
        cr_assert_str_eq(json_get_string_path(c, "reason", NULL), "FailedToLoad");
        cr_assert_str_eq(json_get_string_path(status, "annotations", SPREAD_FAILED_ANNOTATION,
                                              NULL),
                         tm.failed);
        tm.failed = NULL;
        tm.note = NULL;
        cr_assert_eq(spread_status_apply(status, NULL, &set, "m00", NULL, &tm, false, NOW), 0);
        cr_assert_null(json_get_path(status, "annotations", SPREAD_FAILED_ANNOTATION, NULL));
}

Test(spread, isvc_status_summary_and_patch)
{
        AUTOFREE char *sum = NULL;
        json_auto_t *doc = NULL, *isvc = json_pack("{s:{}}", "status"), *patch = NULL;
        json_t *a;

        three_replicas();
        W.capacity = 4 * GI;
        set_models(3, 1, 1);
        (void)pass();
        sum = spread_status_summary(&W.res);
        cr_assert_not_null(sum);
        doc = json_loads(sum, 0, NULL);
        cr_assert_eq(json_array_size(doc), 3);
        a = json_array_get(doc, 0);
        cr_assert_str_eq(json_get_string_path(a, "pod", NULL), "pod-a");
        cr_assert_eq(json_integer_value(json_object_get(a, "capacity")), (json_int_t)(4 * GI));
        cr_assert_eq(json_integer_value(json_object_get(a, "assigned")),
                     (json_int_t)assigned_bytes("pod-a"));

        cr_assert_eq(spread_isvc_status_patch(isvc, sum, &patch), 0);
        cr_assert_str_eq(json_get_string_path(patch, "status", "annotations", SPREAD_ANNOTATION,
                                              NULL),
                         sum);
        merge(isvc, patch);
        json_decref(patch);
        cr_assert_eq(spread_isvc_status_patch(isvc, sum, &patch), 0);
        cr_assert_null(patch, "unchanged: no patch");
        cr_assert_eq(spread_isvc_status_patch(isvc, NULL, &patch), 0);
        cr_assert(json_is_null(
                json_get_path(patch, "status", "annotations", SPREAD_ANNOTATION, NULL)));
}

/* ---- through the InferenceService plan (plan.h) ---- */

static json_t *isvc_json(bool annotated, const char *limit)
{
        json_t *o = json_pack(
                "{s:s, s:s, s:{s:s, s:s, s:s, s:{}}, s:{s:{s:i, s:{s:{s:{s:s}}}}}, s:{s:[{s:s, "
                "s:s}], s:s}}",
                "apiVersion", "serving.kserve.io/v1beta1", "kind", "InferenceService", "metadata",
                "name", "mm", "namespace", "ns", "uid", "uid-mm", "annotations", "spec",
                "predictor", "minReplicas", 1, "tensorflow", "resources", "limits", "memory", limit,
                "status", "conditions", "type", "Ready", "status", "True", "url",
                "http://mm.example.com");

        cr_assert_not_null(o);
        if (annotated)
                json_object_set_new(json_get_path(o, "metadata", "annotations", NULL),
                                    SPREAD_ANNOTATION, json_string(SPREAD_ON));
        return o;
}

static json_t *tm_json(const char *name, const char *memory, int rank)
{
        char ts[32];

        (void)snprintf(ts, sizeof(ts), "2025-01-01T00:00:%02dZ", rank);
        return json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:s, s:{s:s, s:s, s:s}}}",
                         "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel",
                         "metadata", "name", name, "namespace", "ns", "resourceVersion", "5",
                         "creationTimestamp", ts, "spec", "inferenceService", "mm", "model",
                         "storageUri", "s3://b/x", "framework", "sklearn", "memory", memory);
}

struct isvc_case {
        json_t *isvc, *cm, *tms[N_MAX];
        size_t n;
        struct isvc_plan plan;
};

static void isvc_case_compute(struct isvc_case *c)
{
        struct plan_input in = { .isvc_name = "mm",
                                 .isvc = c->isvc,
                                 .configmap = c->cm,
                                 .tms = (const json_t *const *)c->tms,
                                 .n_tms = c->n,
                                 .now = NOW,
                                 .configmaps = W.cms };

        isvc_plan_release(&c->plan);
        cr_assert_eq(isvc_plan_compute(&in, &c->plan), 0);
}

static void isvc_case_release(struct isvc_case *c)
{
        isvc_plan_release(&c->plan);
        json_decref(c->isvc);
        json_decref(c->cm);
        for (size_t i = 0; i < c->n; i++)
                json_decref(c->tms[i]);
}

static const char *mem_condition(const struct tm_plan *t, const char *field)
{
        const json_t *cs = json_object_get(t->status, "conditions");

        for (size_t i = 0; i < json_array_size(cs); i++)
                if (streq(json_get_string_path(json_array_get(cs, i), "type", NULL),
                          CONDITION_MEMORY_RESOURCE_AVAILABLE))
                        return json_get_string_path(json_array_get(cs, i), field, NULL);
        return NULL;
}

/* Annotated: ten 1Gi models on three 4Gi replicas are all admitted (one pod holds four);
 * modelconfig-mm-0 lists all ten and carries the annotation; one assignment per replica. The
 * same world without the annotation: KServe's one-pod admission, no trace of placement. */
Test(spread, isvc_plan_admits_by_placement_only_when_annotated)
{
        struct isvc_case on = { .isvc = isvc_json(true, "4Gi") };
        struct isvc_case off = { .isvc = isvc_json(false, "4Gi") };
        size_t admitted = 0;

        three_replicas();
        for (size_t i = 0; i < 10; i++) {
                char name[8];

                (void)snprintf(name, sizeof(name), "t%zu", i);
                on.tms[on.n++] = tm_json(name, "1Gi", (int)i);
                off.tms[off.n++] = tm_json(name, "1Gi", (int)i);
        }
        isvc_case_compute(&on);
        isvc_case_compute(&off);

        cr_assert(on.plan.placement);
        for (size_t i = 0; i < on.n; i++) {
                cr_assert(on.plan.tms[i].admitted, "t%zu", i);
                cr_assert_str_eq(mem_condition(&on.plan.tms[i], "status"), "True");
                cr_assert_not_null(on.plan.tms[i].placement);
                cr_assert_eq(on.plan.tms[i].placement->n_pods, 1);
        }
        cr_assert_str_eq(json_get_string_path(on.plan.configmap_create, "metadata", "annotations",
                                              SPREAD_ANNOTATION, NULL),
                         SPREAD_ON);
        for (size_t i = 0; i < on.n; i++) {
                char want[64];

                (void)snprintf(want, sizeof(want), "\"modelName\":\"t%zu\"", i);
                cr_assert_not_null(strstr(on.plan.models_json, want));
        }
        cr_assert_eq(on.plan.n_assignment_writes, 3);
        for (size_t i = 0; i < 3; i++)
                cr_assert_eq(on.plan.assignment_writes[i].op, SPREAD_CREATE);
        cr_assert_not_null(on.plan.isvc_status_patch);
        cr_assert_not_null(on.plan.placement_summary);

        cr_assert_not(off.plan.placement);
        for (size_t i = 0; i < off.n; i++) {
                admitted += off.plan.tms[i].admitted;
                cr_assert_null(off.plan.tms[i].placement);
        }
        cr_assert_eq(admitted, 4, "KServe's admission: one pod's 4Gi");
        cr_assert_null(json_get_path(off.plan.configmap_create, "metadata", "annotations", NULL),
                       "modelconfig-mm-0 not as before");
        cr_assert_eq(off.plan.n_assignment_writes, 0);
        cr_assert_null(off.plan.isvc_status_patch);
        isvc_case_release(&on);
        isvc_case_release(&off);
}

/* MemoryResourceAvailable is False only for a model no replica can hold, with the planner's
 * shortfall as its message. */
Test(spread, isvc_plan_refusal_names_the_shortfall)
{
        struct isvc_case c = { .isvc = isvc_json(true, "4Gi") };
        const char *msg;

        three_replicas();
        c.tms[c.n++] = tm_json("big", "5Gi", 1);
        c.tms[c.n++] = tm_json("small", "1Gi", 2);
        isvc_case_compute(&c);
        cr_assert_not(c.plan.tms[0].admitted);
        cr_assert_str_eq(mem_condition(&c.plan.tms[0], "status"), "False");
        msg = mem_condition(&c.plan.tms[0], "message");
        cr_assert_not_null(strstr(msg, "needs 5Gi; the most free on one replica is 4Gi"), "%s",
                           msg);
        cr_assert(c.plan.tms[1].admitted);
        isvc_case_release(&c);
}

/* The annotation removed: modelconfig-mm-0 loses its annotation (models.json untouched), every
 * assignment goes, the InferenceService's status annotation goes. */
Test(spread, isvc_plan_switched_off_cleans_up)
{
        struct isvc_case c = { .isvc = isvc_json(true, "4Gi") };
        const json_t *ann;

        three_replicas();
        c.tms[c.n++] = tm_json("t0", "1Gi", 1);
        isvc_case_compute(&c);
        apply_writes(c.plan.assignment_writes, c.plan.n_assignment_writes);
        c.cm = json_deep_copy(c.plan.configmap_create);
        set_rv(c.cm);
        merge(c.isvc, c.plan.isvc_status_patch);
        isvc_case_compute(&c);
        cr_assert_null(c.plan.configmap_patch, "a second pass writes modelconfig-mm-0 again");
        cr_assert_eq(c.plan.n_assignment_writes, 0);
        cr_assert_null(c.plan.isvc_status_patch);

        json_object_del(json_get_path(c.isvc, "metadata", "annotations", NULL), SPREAD_ANNOTATION);
        isvc_case_compute(&c);
        cr_assert_not(c.plan.placement);
        cr_assert_not_null(c.plan.configmap_patch);
        cr_assert_null(json_object_get(c.plan.configmap_patch, "data"), "models.json rewritten");
        ann = json_get_path(c.plan.configmap_patch, "metadata", "annotations", SPREAD_ANNOTATION,
                            NULL);
        cr_assert(json_is_null(ann), "the annotation is not removed");
        cr_assert_eq(c.plan.n_assignment_writes, 3);
        for (size_t i = 0; i < 3; i++)
                cr_assert_eq(c.plan.assignment_writes[i].op, SPREAD_DELETE);
        cr_assert(json_is_null(json_get_path(c.plan.isvc_status_patch, "status", "annotations",
                                             SPREAD_ANNOTATION, NULL)));
        isvc_case_release(&c);
}

/* An invalid copies annotation (the webhook refuses it; one that got in anyway) is 1 copy. */
Test(spread, isvc_plan_invalid_copies_is_one_copy_with_a_warning)
{
        struct isvc_case c = { .isvc = isvc_json(true, "4Gi") };

        three_replicas();
        c.tms[c.n++] = tm_json("t0", "1Gi", 1);
        c.tms[c.n++] = tm_json("t1", "1Gi", 2);
        json_object_set_new(json_object_get(c.tms[0], "metadata"), "annotations",
                            json_pack("{s:s}", SPREAD_COPIES_ANNOTATION, "two"));
        json_object_set_new(json_object_get(c.tms[1], "metadata"), "annotations",
                            json_pack("{s:s}", SPREAD_COPIES_ANNOTATION, "all"));
        isvc_case_compute(&c);
        cr_assert_str_eq(c.plan.tms[0].event_reason, "ModelAdded", "the write's event first");
        /* once listed, its status write carries the warning */
        c.cm = json_deep_copy(c.plan.configmap_create);
        set_rv(c.cm);
        isvc_case_compute(&c);
        cr_assert_eq(c.plan.tms[0].placement->n_pods, 1);
        cr_assert(c.plan.tms[0].status_changed);
        cr_assert_str_eq(c.plan.tms[0].event_type, "Warning");
        cr_assert_str_eq(c.plan.tms[0].event_reason, "InvalidCopies");
        cr_assert_null(c.plan.tms[1].event_reason);
        cr_assert_eq(c.plan.tms[1].placement->n_pods, 3, "all: every live replica");
        isvc_case_release(&c);
}
