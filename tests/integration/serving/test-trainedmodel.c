/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel controller end to end: a real kube-apiserver, the real `modelplane controller`
 * binary with the shipped RBAC, spec trainedmodel.md §9.1 (C*), §9.9 (X*) and §10 (W*).
 * Each test has its own namespace and its own controller (--namespace), so tests do not share
 * state; every wait is a bounded poll. The controller runs with its default
 * --trainedmodel-finalizer, but for the tests of KServe's finalizer (c3, c4, x10, w6, w13), which
 * turn it on; test-finalizer.c tests the deletes without it.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"
#include "util/macro.h"

static struct srv S;

static void setup(void)
{
        srv_setup(&S, "tm");
}

static void teardown(void)
{
        srv_teardown(&S);
}

TestSuite(tm, .init = setup, .fini = teardown, .timeout = 240);

/* ---- small helpers ---- */

static void isvc_ready(const char *name, const char *limit)
{
        srv_isvc_create(&S, name, srv_predictor_tf(limit), NULL);
        srv_isvc_set_ready(&S, name, true);
}

static bool models_json_is(const char *isvc, const char *expected)
{
        char *v = srv_models_json(&S, isvc, NULL);
        bool ok = v && streq(v, expected);

        free(v);
        return ok;
}

static bool tm_ready_and_listed(const char *tm, const char *isvc)
{
        return srv_tm_cond(&S, tm, "Ready", "True", NULL) && srv_models_has(&S, isvc, tm);
}

static bool has_finalizer(const json_t *obj)
{
        json_t *f;
        size_t i;

        json_array_foreach(json_get_path(obj, "metadata", "finalizers", NULL), i, f)
                if (json_is_string(f) && streq(json_string_value(f), "trainedmodel.finalizer"))
                        return true;
        return false;
}

static bool tm_terminating(const char *tm)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm);
        bool t = obj && json_get_path(obj, "metadata", "deletionTimestamp", NULL);

        json_decref(obj);
        return t;
}

static char *tm_string(const char *tm, const char *path1, const char *path2)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm);
        const char *v = json_get_string_path(obj, path1, path2, NULL);
        char *out = v ? strdup(v) : NULL;

        json_decref(obj);
        return out;
}

static bool tm_url_is(const char *tm, const char *url, const char *address)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm);
        const char *u = json_get_string_path(obj, "status", "url", NULL);
        const char *a = json_get_string_path(obj, "status", "address", "url", NULL);
        bool ok = u && a && streq(u, url) && streq(a, address);

        json_decref(obj);
        return ok;
}

static const char *dump(const json_t *v)
{
        static char buf[8192];
        char *s = json_dumps(v, JSON_COMPACT);

        (void)snprintf(buf, sizeof(buf), "%s", s ? s : "(null)");
        free(s);
        return buf;
}

/* Waits until the controller's reconcile counter has not moved for ~2 s (bounded). */
static void wait_quiet(void)
{
        double last = -2;
        unsigned stable = 0;

        for (unsigned i = 0; i < 150 && stable < 8; i++) {
                double m = srv_metric(&S, "controller_runtime_reconcile_total");
                stable = m == last ? stable + 1 : 0;
                last = m;
                srv_sleep_ms(250);
        }
        cr_assert_geq(stable, 8, "the controller never became quiet (reconciles keep coming)");
}

/* ---- §9.1 ---- */

Test(tm, c1_parent_without_predictor)
{
        srv_isvc_create(&S, "model0-create-parent", json_object(), NULL);
        srv_controller_start(&S);
        srv_tm_create(&S, "model0-create", "model0-create-parent", "s3//model1", "tensorflow",
                      "1G");

        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "model0-create", "InferenceServiceReady", "False",
                             "InferenceServiceNotReady") &&
                         srv_tm_cond(&S, "model0-create", "IsMMSPredictor", "False",
                                     "IsNotMMSPredictor") &&
                         srv_tm_cond(&S, "model0-create", "MemoryResourceAvailable", "False",
                                     NULL) &&
                         srv_tm_cond(&S, "model0-create", "Ready", "False", NULL),
                 "model0-create never got its three False conditions");
        /* not a multi-model parent: no ConfigMap is written (or created) */
        char *mj = srv_models_json(&S, "model0-create-parent", NULL);
        cr_assert_null(mj, "a ConfigMap was written for a non-MMS parent: %s", mj);
        srv_controller_assert_alive(&S);
}

Test(tm, c2_create_writes_models_json_and_event)
{
        isvc_ready("model1-create-parent", "2Gi");
        srv_cm_create(&S, "model1-create-parent", "");
        srv_controller_start(&S);
        srv_tm_create(&S, "model1-create", "model1-create-parent", "s3//model1", "tensorflow",
                      "1G");

        const char *want = "[{\"modelName\":\"model1-create\",\"modelSpec\":{\"storageUri\":"
                           "\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]";
        SRV_WAIT(SRV_TIMEOUT, models_json_is("model1-create-parent", want),
                 "models.json never became %s", want);
        json_t *cm = srv_get(&S, &srv_gvr_cm, "modelconfig-model1-create-parent-0");
        cr_assert_eq(json_object_size(json_object_get(cm, "data")), 1, "data: %s",
                     dump(json_object_get(cm, "data")));
        json_decref(cm);
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "model1-create", "Ready", "True", NULL),
                 "model1-create never Ready");

        /* one Normal event for the models.json write, on the InferenceService, naming the model
         * (events RBAC of the shipped ClusterRole works; issue #12: one per write, not per model) */
        static const struct gvr events = { "", "v1", "events" };
        bool found = false;
        for (int i = 0; i < 5 * SRV_TIMEOUT && !found; i++) {
                json_t *list = NULL, *e;
                size_t j;
                cr_assert_eq(kube_list(S.c, &events, S.ns, NULL, &list, NULL), 0);
                json_array_foreach(json_object_get(list, "items"), j, e) {
                        const char *n = json_get_string_path(e, "involvedObject", "name", NULL);
                        const char *kd = json_get_string_path(e, "involvedObject", "kind", NULL);
                        const char *t = json_string_value(json_object_get(e, "type"));
                        const char *rs = json_string_value(json_object_get(e, "reason"));
                        const char *m = json_string_value(json_object_get(e, "message"));
                        if (n && t && kd && rs && m && streq(n, "model1-create-parent") &&
                            streq(kd, "InferenceService") && streq(t, "Normal") &&
                            streq(rs, "ModelAdded") && strstr(m, "\"model1-create\""))
                                found = true;
                }
                json_decref(list);
                if (!found)
                        srv_sleep_ms(200);
        }
        cr_assert(found, "no Normal event ModelAdded naming model1-create on its InferenceService");
}

Test(tm, c3_status_urls_conditions_finalizer_then_update)
{
        char url[512], addr[512], base[256];

        isvc_ready("model1-update-parent", "2Gi");
        srv_cm_create(&S, "model1-update-parent", "");
        S.finalizer = "true";
        srv_controller_start(&S);
        srv_tm_create(&S, "model1-update", "model1-update-parent", "s3//model1", "tensorflow",
                      "1G");

        srv_isvc_url(&S, "model1-update-parent", false, base, sizeof(base));
        (void)snprintf(url, sizeof(url), "%s/v1/models/model1-update:predict", base);
        srv_isvc_url(&S, "model1-update-parent", true, base, sizeof(base));
        (void)snprintf(addr, sizeof(addr), "%s/v1/models/model1-update:predict", base);
        SRV_WAIT(SRV_TIMEOUT, tm_url_is("model1-update", url, addr),
                 "status.url/address.url never became %s / %s", url, addr);
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "model1-update", "Ready", "True", NULL),
                 "never Ready");
        json_t *tm = srv_get(&S, &srv_gvr_tm, "model1-update");
        cr_assert_str_eq(srv_cond_status(tm, "InferenceServiceReady"), "True");
        cr_assert_str_eq(srv_cond_status(tm, "IsMMSPredictor"), "True");
        cr_assert_str_eq(srv_cond_status(tm, "MemoryResourceAvailable"), "True");
        cr_assert(has_finalizer(tm), "no finalizer: %s", dump(tm));
        /* conditions sorted by type (§3) */
        const char *order[] = { "InferenceServiceReady", "IsMMSPredictor",
                                "MemoryResourceAvailable", "Ready" };
        json_t *conds = json_get_path(tm, "status", "conditions", NULL);
        cr_assert_eq(json_array_size(conds), 4, "%s", dump(conds));
        for (size_t i = 0; i < 4; i++)
                cr_assert_str_eq(json_string_value(
                                         json_object_get(json_array_get(conds, i), "type")),
                                 order[i]);
        json_decref(tm);

        /* C3b: a storageUri update reaches models.json */
        srv_patch(&S, &srv_gvr_tm, "model1-update", NULL,
                  srv_json("{'spec': {'model': {'storageUri': 's3//model2'}}}"));
        const char *want = "[{\"modelName\":\"model1-update\",\"modelSpec\":{\"storageUri\":"
                           "\"s3//model2\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]";
        SRV_WAIT(SRV_TIMEOUT, models_json_is("model1-update-parent", want),
                 "models.json never became %s", want);
}

Test(tm, c4_delete_removes_entry_then_finalizer)
{
        isvc_ready("model1-delete-parent", "2Gi");
        srv_cm_create(&S, "model1-delete-parent", "");
        S.finalizer = "true";
        srv_controller_start(&S);
        srv_tm_create(&S, "model1-delete", "model1-delete-parent", "s3//model1", "tensorflow",
                      "1G");
        const char *want = "[{\"modelName\":\"model1-delete\",\"modelSpec\":{\"storageUri\":"
                           "\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]";
        SRV_WAIT(SRV_TIMEOUT, models_json_is("model1-delete-parent", want),
                 "models.json never listed model1-delete");
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "model1-delete", "Ready", "True", NULL),
                 "never Ready");

        srv_delete(&S, &srv_gvr_tm, "model1-delete", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "model1-delete"),
                 "model1-delete stuck (finalizer not removed)");
        cr_assert(models_json_is("model1-delete-parent", "[]"),
                  "models.json not [] after the delete");
        /* /metrics: the write that only dropped the deleted model posted no Event (KServe posts
         * none), the one that added it did; the passes and the writes by kind are counted */
        cr_assert_eq(srv_metric(&S, "modelplane_trainedmodel_write_events_skipped_total"), 1.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_write_events_total"), 1.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_passes_total"), 2.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_plans_total"), 2.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_passes_skipped_total"), 0.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_configmap_writes_total"), 2.0);
        cr_assert_geq(srv_metric(&S, "modelplane_trainedmodel_metadata_writes_total"), 2.0);
        cr_assert_geq(srv_metric(&S, "modelplane_kube_client_throttled_total"), 0.0);
}

Test(tm, c5_not_enough_memory)
{
        isvc_ready("model-mem-parent", "2Gi");
        srv_cm_create(&S, "model-mem-parent", "");
        srv_controller_start(&S);
        srv_tm_create(&S, "model-mem", "model-mem-parent", "s3//model1", "tensorflow", "3Gi");

        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "model-mem", "MemoryResourceAvailable", "False",
                             "MemoryResourceNotAvailable"),
                 "MemoryResourceAvailable never False");
        cr_assert(srv_tm_cond(&S, "model-mem", "InferenceServiceReady", "True", NULL));
        cr_assert(srv_tm_cond(&S, "model-mem", "IsMMSPredictor", "True", NULL));
        cr_assert(srv_tm_cond(&S, "model-mem", "Ready", "False", NULL));
        char *labels = srv_label(&S, &srv_gvr_tm, "model-mem",
                                 "serving.kserve.io/trainedmodel-allocated");
        cr_assert_null(labels, "allocated label on a model that does not fit");
        char *mj = srv_models_json(&S, "model-mem-parent", NULL);
        /* §9.1 C5: not written (W1: no write when nothing is listed) */
        cr_assert(mj && streq(mj, ""), "models.json: %s", mj);
        free(mj);
}

Test(tm, c6_storage_uri_on_predictor_is_not_mms)
{
        json_t *p = srv_predictor_tf("2Gi");

        json_object_set_new(json_object_get(p, "tensorflow"), "storageUri",
                            json_string("s3//model1"));
        srv_isvc_create(&S, "model-nomms-parent", p, NULL);
        srv_isvc_set_ready(&S, "model-nomms-parent", true);
        srv_controller_start(&S);
        srv_tm_create(&S, "model-nomms", "model-nomms-parent", "s3//model1", "tensorflow", "1G");
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "model-nomms", "InferenceServiceReady", "True", NULL) &&
                         srv_tm_cond(&S, "model-nomms", "IsMMSPredictor", "False",
                                     "IsNotMMSPredictor") &&
                         srv_tm_cond(&S, "model-nomms", "Ready", "False", NULL),
                 "expected ISR True, IsMMS False");
        char *mj = srv_models_json(&S, "model-nomms-parent", NULL);
        cr_assert_null(mj, "ConfigMap created for a non-MMS parent: %s", mj);
}

/* ---- §9.9 ---- */

Test(tm, x1_missing_parent_deletes_the_trainedmodel)
{
        srv_controller_start(&S);
        srv_tm_create(&S, "orphan", "no-such-isvc", "s3//model1", "tensorflow", "1G");
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "orphan"),
                 "a TrainedModel without parent was not deleted");
        srv_controller_assert_alive(&S);
}

/* protocol: "v1", "v2" or "" (no path) */
static void url_case(const char *isvc, json_t *predictor, const char *tm, const char *protocol)
{
        char base[256], url[512], addr[512], suffix[256] = "";

        if (streq(protocol, "v1"))
                (void)snprintf(suffix, sizeof(suffix), "/v1/models/%s:predict", tm);
        else if (streq(protocol, "v2"))
                (void)snprintf(suffix, sizeof(suffix), "/v2/models/%s/infer", tm);
        srv_isvc_create(&S, isvc, predictor, NULL);
        srv_isvc_set_ready(&S, isvc, true);
        srv_controller_start(&S);
        srv_tm_create(&S, tm, isvc, "s3//model1", "sklearn", "100Mi");
        srv_isvc_url(&S, isvc, false, base, sizeof(base));
        (void)snprintf(url, sizeof(url), "%s%s", base, suffix);
        srv_isvc_url(&S, isvc, true, base, sizeof(base));
        (void)snprintf(addr, sizeof(addr), "%s%s", base, suffix);
        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed(tm, isvc), "%s never Ready and listed", tm);
        char *u = tm_string(tm, "status", "url");
        cr_assert(tm_url_is(tm, url, addr), "url %s, want %s and address %s", u, url, addr);
        free(u);
}

Test(tm, x2_model_format_v2_url)
{
        url_case("x2",
                 srv_json("{'model': {'modelFormat': {'name': 'sklearn'}, 'protocolVersion': "
                          "'v2', 'name': 'kserve-container', 'resources': {'limits': "
                          "{'memory': '2Gi'}}}}"),
                 "tm-x2", "v2");
}

Test(tm, x3_grpc_url_is_the_isvc_url)
{
        url_case("x3",
                 srv_json("{'sklearn': {'protocolVersion': 'grpc-v2', 'name': "
                          "'kserve-container', 'resources': {'limits': {'memory': '2Gi'}}}}"),
                 "tm-x3", "");
}

Test(tm, x4_third_model_does_not_fit)
{
        isvc_ready("x4", "2Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "x4-a", "x4", "s3//a", "tensorflow", "1Gi");
        srv_tm_create(&S, "x4-b", "x4", "s3//b", "tensorflow", "1Gi");
        SRV_WAIT(SRV_TIMEOUT,
                 tm_ready_and_listed("x4-a", "x4") && tm_ready_and_listed("x4-b", "x4"),
                 "the first two never Ready");
        srv_tm_create(&S, "x4-c", "x4", "s3//c", "tensorflow", "1");
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "x4-c", "MemoryResourceAvailable", "False",
                             "MemoryResourceNotAvailable"),
                 "x4-c admitted over the limit");
        char *l = srv_label(&S, &srv_gvr_tm, "x4-c", "serving.kserve.io/trainedmodel-allocated");
        cr_assert_null(l, "x4-c got the allocated label %s", l);
        cr_assert(!srv_models_has(&S, "x4", "x4-c"));
        l = srv_label(&S, &srv_gvr_tm, "x4-a", "serving.kserve.io/trainedmodel-allocated");
        cr_assert(l && streq(l, "x4"), "x4-a allocated label: %s", l);
        free(l);
}

Test(tm, x5_equality_fits)
{
        isvc_ready("x5", "1Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "x5-a", "x5", "s3//a", "tensorflow", "512Mi");
        srv_tm_create(&S, "x5-b", "x5", "s3//b", "tensorflow", "512Mi");
        SRV_WAIT(SRV_TIMEOUT,
                 tm_ready_and_listed("x5-a", "x5") && tm_ready_and_listed("x5-b", "x5"),
                 "512Mi + 512Mi did not fit 1Gi");
}

Test(tm, x6_custom_container_mms_v2)
{
        url_case("x6",
                 srv_json("{'containers': [{'name': 'kserve-container', 'image': "
                          "'example.com/server:1', 'env': [{'name': 'MULTI_MODEL_SERVER', "
                          "'value': 'true'}, {'name': 'PROTOCOL', 'value': 'v2'}], "
                          "'resources': {'limits': {'memory': '4Gi'}}}]}"),
                 "tm-x6", "v2");
        cr_assert(srv_tm_cond(&S, "tm-x6", "IsMMSPredictor", "True", NULL));
}

static void not_mms_case(const char *isvc, json_t *predictor)
{
        srv_isvc_create(&S, isvc, predictor, NULL);
        srv_isvc_set_ready(&S, isvc, true);
        srv_controller_start(&S);
        srv_tm_create(&S, "tm", isvc, "s3//model1", "sklearn", "100Mi");
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "tm", "InferenceServiceReady", "True", NULL) &&
                         srv_tm_cond(&S, "tm", "IsMMSPredictor", "False", "IsNotMMSPredictor"),
                 "%s: IsMMSPredictor never False", isvc);
        cr_assert(!srv_models_has(&S, isvc, "tm"));
}

Test(tm, x7_huggingface_is_not_mms)
{
        not_mms_case("x7", srv_json("{'model': {'modelFormat': {'name': 'huggingface'}, 'name': "
                                    "'kserve-container', 'resources': {'limits': {'memory': "
                                    "'2Gi'}}}}"));
}

Test(tm, x8_storage_uris_is_not_mms)
{
        not_mms_case("x8", srv_json("{'sklearn': {'name': 'kserve-container', 'resources': "
                                    "{'limits': {'memory': '2Gi'}}}, 'storageUris': [{'uri': "
                                    "'s3://bucket/m', 'mountPath': '/mnt/models/m'}]}"));
}

Test(tm, x9_parent_not_ready_keeps_entry)
{
        isvc_ready("x9", "2Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "x9-tm", "x9", "s3//a", "tensorflow", "1Gi");
        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed("x9-tm", "x9"), "never Ready");
        srv_isvc_set_ready(&S, "x9", false);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "x9-tm", "InferenceServiceReady", "False",
                             "InferenceServiceNotReady") &&
                         srv_tm_cond(&S, "x9-tm", "Ready", "False", NULL),
                 "conditions did not follow the parent becoming not ready");
        cr_assert(srv_models_has(&S, "x9", "x9-tm"), "entry left models.json");
}

Test(tm, x10_delete_with_non_mms_parent_not_stuck)
{
        json_t *p = srv_predictor_tf("2Gi");

        json_object_set_new(json_object_get(p, "tensorflow"), "storageUri", json_string("s3//m"));
        srv_isvc_create(&S, "x10", p, NULL);
        srv_isvc_set_ready(&S, "x10", true);
        S.finalizer = "true";
        srv_controller_start(&S);
        srv_tm_create(&S, "x10-tm", "x10", "s3//a", "tensorflow", "1Gi");
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "x10-tm", "IsMMSPredictor", "False", NULL),
                 "IsMMSPredictor never False");
        json_t *tm = srv_get(&S, &srv_gvr_tm, "x10-tm");
        cr_assert(has_finalizer(tm), "no finalizer: %s", dump(tm));
        json_decref(tm);
        srv_delete(&S, &srv_gvr_tm, "x10-tm", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "x10-tm"), "x10-tm stuck Terminating");
}

/* ---- §10 ---- */

Test(tm, w1_sorted_and_no_write_when_unchanged)
{
        isvc_ready("w1", "2Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "b-model", "w1", "s3//b", "sklearn", "100Mi");
        srv_tm_create(&S, "a-model", "w1", "s3//a", "sklearn", "100Mi");
        const char *want = "[{\"modelName\":\"a-model\",\"modelSpec\":{\"storageUri\":\"s3//a\","
                           "\"framework\":\"sklearn\",\"memory\":\"100Mi\"}},"
                           "{\"modelName\":\"b-model\",\"modelSpec\":{\"storageUri\":\"s3//b\","
                           "\"framework\":\"sklearn\",\"memory\":\"100Mi\"}}]";
        SRV_WAIT(SRV_TIMEOUT, models_json_is("w1", want), "models.json never became %s", want);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "a-model", "Ready", "True", NULL) &&
                         srv_tm_cond(&S, "b-model", "Ready", "True", NULL),
                 "never Ready");
        wait_quiet();

        char *rv0 = NULL, *rv1 = NULL;
        free(srv_models_json(&S, "w1", &rv0));
        double m0 = srv_metric(&S, "controller_runtime_reconcile_total");
        cr_assert_geq(m0, 1, "no reconcile_total metric");
        srv_patch(&S, &srv_gvr_tm, "a-model", NULL,
                  srv_json("{'metadata': {'labels': {'team': 'blue'}}}"));
        /* the label change is an event: a reconcile of w1 runs ... */
        SRV_WAIT(SRV_TIMEOUT, srv_metric(&S, "controller_runtime_reconcile_total") > m0,
                 "no reconcile after the label change");
        wait_quiet();
        /* ... and writes nothing: same bytes, same resourceVersion */
        char *mj = srv_models_json(&S, "w1", &rv1);
        cr_assert_str_eq(mj, want);
        cr_assert_str_eq(rv1, rv0, "the ConfigMap was rewritten with identical bytes");
        free(mj);
        free(rv0);
        free(rv1);
}

/* Counts the TrainedModels of the namespace: total, with MemoryResourceAvailable True/False. */
static void count_tms(size_t *ret_total, size_t *ret_mem_true, size_t *ret_mem_false)
{
        json_t *list = NULL, *item;
        size_t i, t = 0, f = 0;

        cr_assert_eq(kube_list(S.c, &srv_gvr_tm, S.ns, NULL, &list, NULL), 0);
        json_array_foreach(json_object_get(list, "items"), i, item) {
                const char *st = srv_cond_status(item, "MemoryResourceAvailable");
                if (st && streq(st, "True"))
                        t++;
                else if (st && streq(st, "False"))
                        f++;
        }
        *ret_total = json_array_size(json_object_get(list, "items"));
        *ret_mem_true = t;
        *ret_mem_false = f;
        json_decref(list);
}

static bool admission_settled(size_t total, size_t admitted)
{
        size_t n, t, f;
        json_t *models;
        bool ok;

        count_tms(&n, &t, &f);
        if (n != total || t != admitted || f != total - admitted)
                return false;
        models = srv_models(&S, "w2");
        ok = json_array_size(models) == admitted;
        json_decref(models);
        return ok;
}

/* Asserts models.json lists exactly the TrainedModels with MemoryResourceAvailable True. */
static void assert_listed_are_admitted(void)
{
        json_t *list = NULL, *item, *models = srv_models(&S, "w2");
        size_t i;

        cr_assert_eq(kube_list(S.c, &srv_gvr_tm, S.ns, NULL, &list, NULL), 0);
        json_array_foreach(json_object_get(list, "items"), i, item) {
                const char *name = json_get_string_path(item, "metadata", "name", NULL);
                const char *mem = srv_cond_status(item, "MemoryResourceAvailable");
                const char *alloc = json_get_string_path(item, "metadata", "labels",
                                                         "serving.kserve.io/trainedmodel-allocated",
                                                         NULL);
                bool listed = false;
                json_t *e;
                size_t j;

                json_array_foreach(models, j, e)
                        if (streq(json_string_value(json_object_get(e, "modelName")), name))
                                listed = true;
                if (streq(mem, "True")) {
                        cr_assert(listed, "%s admitted but not listed", name);
                        cr_assert_str_eq(srv_cond_status(item, "Ready"), "True", "%s", name);
                        cr_assert(alloc && streq(alloc, "w2"), "%s: allocated label %s", name,
                                  alloc);
                } else {
                        cr_assert(!listed, "%s listed but not admitted", name);
                        cr_assert_str_eq(srv_cond_reason(item, "MemoryResourceAvailable"),
                                         "MemoryResourceNotAvailable", "%s", name);
                        cr_assert_null(alloc, "%s: allocated label on a waiting model", name);
                }
        }
        json_decref(list);
        json_decref(models);
}

Test(tm, w2_w8_fifty_models_exact_admission, .timeout = 400)
{
        char name[32];
        size_t n, t, f;

        isvc_ready("w2", "2000Mi");
        srv_controller_start(&S);
        for (int i = 0; i < 50; i++) {
                (void)snprintf(name, sizeof(name), "m%02d", i);
                srv_tm_create(&S, name, "w2", "s3//bucket/model", "sklearn", "100Mi");
        }
        SRV_WAIT(3 * SRV_TIMEOUT, admission_settled(50, 20),
                 "never exactly 20 of 50 admitted and listed");
        assert_listed_are_admitted();
        wait_quiet();
        count_tms(&n, &t, &f);
        cr_assert_eq(t, 20, "admissions changed after settling: %zu", t);

        /* free 5 slots: 5 waiting models take them */
        json_t *models = srv_models(&S, "w2"), *e;
        char deleted[5][64];
        for (size_t i = 0; i < 5; i++) {
                e = json_array_get(models, i * 3);
                (void)snprintf(deleted[i], sizeof(deleted[i]), "%s",
                               json_string_value(json_object_get(e, "modelName")));
                srv_delete(&S, &srv_gvr_tm, deleted[i], NULL);
        }
        json_decref(models);
        SRV_WAIT(3 * SRV_TIMEOUT, admission_settled(45, 20),
                 "the freed memory was not given to 5 waiting models");
        for (size_t i = 0; i < 5; i++) {
                cr_assert(srv_gone(&S, &srv_gvr_tm, deleted[i]), "%s not gone", deleted[i]);
                cr_assert(!srv_models_has(&S, "w2", deleted[i]), "%s still listed", deleted[i]);
        }
        assert_listed_are_admitted();
}

Test(tm, w3_missing_configmap_is_created)
{
        json_t *isvc;

        srv_isvc_create(&S, "w3", srv_predictor_tf("1Gi"),
                        srv_json("{'team': 'blue', 'app.kubernetes.io/name': 'demo'}"));
        srv_isvc_set_ready(&S, "w3", true);
        isvc = srv_get(&S, &srv_gvr_isvc, "w3");
        srv_controller_start(&S);
        /* a model that does not fit: the ConfigMap is created, empty */
        srv_tm_create(&S, "too-big", "w3", "s3//big", "sklearn", "2Gi");
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "too-big", "MemoryResourceAvailable", "False", NULL),
                 "too-big never waiting for memory");
        SRV_WAIT(SRV_TIMEOUT, models_json_is("w3", "[]"), "ConfigMap not created with []");

        json_t *cm = srv_get(&S, &srv_gvr_cm, "modelconfig-w3-0");
        /* the InferenceService's labels, plus the one the controller watches it by */
        json_t *want_labels = json_deep_copy(json_get_path(isvc, "metadata", "labels", NULL));
        json_object_set_new(want_labels, "serving.kserve.io/inferenceservice", json_string("w3"));
        cr_assert(json_equal(json_get_path(cm, "metadata", "labels", NULL), want_labels),
                  "labels %s", dump(json_get_path(cm, "metadata", "labels", NULL)));
        json_decref(want_labels);
        json_t *refs = json_get_path(cm, "metadata", "ownerReferences", NULL);
        cr_assert_eq(json_array_size(refs), 1, "ownerReferences %s", dump(refs));
        json_t *ref = json_array_get(refs, 0);
        cr_assert_str_eq(json_string_value(json_object_get(ref, "apiVersion")),
                         "serving.kserve.io/v1beta1");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")), "InferenceService");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "name")), "w3");
        cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")),
                         json_get_string_path(isvc, "metadata", "uid", NULL));
        cr_assert(json_is_true(json_object_get(ref, "controller")), "not a controller ref");
        json_decref(cm);
        json_decref(isvc);

        /* Ready is True only once models.json holds the entry (checked at every poll) */
        srv_tm_create(&S, "fits", "w3", "s3//small", "sklearn", "100Mi");
        bool ready = false;
        for (int i = 0; i < 5 * SRV_TIMEOUT && !ready; i++) {
                ready = srv_tm_cond(&S, "fits", "Ready", "True", NULL);
                if (ready)
                        cr_assert(srv_models_has(&S, "w3", "fits"),
                                  "Ready True before models.json lists the model");
                else
                        srv_sleep_ms(100);
        }
        cr_assert(ready, "fits never Ready");
}

Test(tm, w4_models_json_over_one_mib, .timeout = 400)
{
        enum { N = 12, URI_LEN = 100000 };
        char *uri = malloc(URI_LEN + 1);
        char name[32];
        size_t listed = 0, full = 0;

        cr_assert_not_null(uri);
        memcpy(uri, "s3://bucket/", 12);
        memset(uri + 12, 'x', URI_LEN - 12);
        uri[URI_LEN] = '\0';
        isvc_ready("w4", "100Gi");
        srv_controller_start(&S);
        for (int i = 0; i < N; i++) {
                (void)snprintf(name, sizeof(name), "big-%02d", i);
                srv_tm_create(&S, name, "w4", uri, "sklearn", "1Mi");
        }
        free(uri);

        for (int tries = 0; tries < 5 * 3 * SRV_TIMEOUT; tries++) {
                listed = full = 0;
                for (int i = 0; i < N; i++) {
                        (void)snprintf(name, sizeof(name), "big-%02d", i);
                        if (srv_tm_cond(&S, name, "Ready", "True", NULL))
                                listed++;
                        else if (srv_tm_cond(&S, name, "Ready", "False", "ModelConfigFull"))
                                full++;
                }
                if (listed + full == N)
                        break;
                srv_sleep_ms(200);
        }
        cr_assert_eq(listed + full, N, "%zu Ready, %zu ModelConfigFull of %d", listed, full, N);
        /* 10 entries of ~100 kB fit into 1 MiB, 11 do not */
        cr_assert_eq(listed, 10, "%zu listed", listed);
        char *mj = srv_models_json(&S, "w4", NULL);
        cr_assert_leq(strlen(mj), 1048576);
        free(mj);
        for (int i = 0; i < N; i++) {
                (void)snprintf(name, sizeof(name), "big-%02d", i);
                bool ready = srv_tm_cond(&S, name, "Ready", "True", NULL);
                cr_assert_eq(srv_models_has(&S, "w4", name), ready, "%s: Ready %d but listed %d",
                             name, ready, !ready);
        }
        srv_controller_assert_alive(&S);
}

Test(tm, w5_waiting_states_resolve_without_restart)
{
        srv_isvc_create(&S, "w5", srv_predictor_tf("2Gi"), NULL);
        srv_controller_start(&S);
        pid_t pid = S.ctrl;
        srv_tm_create(&S, "w5-a", "w5", "s3//a", "sklearn", "1Gi");
        SRV_WAIT(SRV_TIMEOUT,
                 srv_tm_cond(&S, "w5-a", "Ready", "False", "InferenceServiceNotReady") &&
                         srv_tm_cond(&S, "w5-a", "InferenceServiceReady", "False", NULL),
                 "w5-a not waiting for its parent");
        cr_assert(!srv_models_has(&S, "w5", "w5-a"));

        srv_isvc_set_ready(&S, "w5", true);
        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed("w5-a", "w5"),
                 "w5-a did not become Ready when its parent did");

        srv_tm_create(&S, "w5-b", "w5", "s3//b", "sklearn", "3Gi");
        SRV_WAIT(SRV_TIMEOUT, srv_tm_cond(&S, "w5-b", "MemoryResourceAvailable", "False", NULL),
                 "w5-b not waiting for memory");
        srv_patch(&S, &srv_gvr_isvc, "w5", NULL,
                  srv_json("{'spec': {'predictor': {'tensorflow': {'resources': {'limits': "
                           "{'memory': '8Gi'}}}}}}"));
        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed("w5-b", "w5"),
                 "w5-b not admitted after the limit was raised");
        cr_assert_eq(S.ctrl, pid);
        srv_controller_assert_alive(&S);
        /* waiting is not an error */
        cr_assert_eq(srv_log_count(&S, "\"level\":\"error\""), 0, "ERROR lines in %s", S.log_path);
}

Test(tm, w6_deletion_never_stuck)
{
        isvc_ready("w6a", "2Gi");
        isvc_ready("w6b", "2Gi");
        S.finalizer = "true";
        srv_controller_start(&S);
        srv_tm_create(&S, "w6a-tm", "w6a", "s3//a", "sklearn", "1Gi");
        srv_tm_create(&S, "w6b-tm", "w6b", "s3//b", "sklearn", "1Gi");
        SRV_WAIT(SRV_TIMEOUT,
                 tm_ready_and_listed("w6a-tm", "w6a") && tm_ready_and_listed("w6b-tm", "w6b"),
                 "never Ready");

        /* (a) the parent goes first (orphaning, so garbage collection does not do our job) */
        srv_delete(&S, &srv_gvr_isvc, "w6a", "Orphan");
        SRV_WAIT(2 * SRV_TIMEOUT, srv_gone(&S, &srv_gvr_isvc, "w6a"), "w6a not gone");
        srv_delete(&S, &srv_gvr_tm, "w6a-tm", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "w6a-tm"),
                 "w6a-tm stuck Terminating after its parent went");

        /* (b) the ConfigMap goes first */
        srv_delete(&S, &srv_gvr_cm, "modelconfig-w6b-0", NULL);
        srv_delete(&S, &srv_gvr_tm, "w6b-tm", NULL);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "w6b-tm"),
                 "w6b-tm stuck Terminating after its ConfigMap went");
        cr_assert(!srv_models_has(&S, "w6b", "w6b-tm"));
}

static bool owner_refs_only(const char *tm, const char *isvc);

static bool moved_to(const char *tm, const char *isvc, const char *url)
{
        char *u = tm_string(tm, "status", "url");
        char *l1 = srv_label(&S, &srv_gvr_tm, tm, "inferenceservice");
        char *l2 = srv_label(&S, &srv_gvr_tm, tm, "serving.kserve.io/trainedmodel-allocated");
        bool ok = u && streq(u, url) && l1 && streq(l1, isvc) && l2 && streq(l2, isvc) &&
                  owner_refs_only(tm, isvc) && srv_tm_cond(&S, tm, "Ready", "True", NULL);

        free(u);
        free(l1);
        free(l2);
        return ok;
}

static bool owner_refs_only(const char *tm, const char *isvc)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm), *owner = srv_get(&S, &srv_gvr_isvc, isvc);
        json_t *refs = json_get_path(obj, "metadata", "ownerReferences", NULL), *r;
        size_t i, n = 0;
        bool ok = true;

        json_array_foreach(refs, i, r) {
                const char *kind = json_string_value(json_object_get(r, "kind"));
                if (!kind || !streq(kind, "InferenceService"))
                        continue;
                n++;
                ok = ok && streq(json_string_value(json_object_get(r, "name")), isvc) &&
                     streq(json_string_value(json_object_get(r, "uid")),
                           json_get_string_path(owner, "metadata", "uid", NULL)) &&
                     !json_is_true(json_object_get(r, "controller"));
        }
        json_decref(obj);
        json_decref(owner);
        return ok && n == 1;
}

Test(tm, w7_move_to_another_parent)
{
        char base[256], url[512];

        isvc_ready("w7-old", "2Gi");
        isvc_ready("w7-new", "2Gi");
        srv_controller_start(&S);
        srv_tm_create(&S, "mover", "w7-old", "s3//m", "sklearn", "1Gi");
        SRV_WAIT(SRV_TIMEOUT,
                 tm_ready_and_listed("mover", "w7-old") && owner_refs_only("mover", "w7-old"),
                 "never Ready on w7-old");

        srv_patch(&S, &srv_gvr_tm, "mover", NULL,
                  srv_json("{'spec': {'inferenceService': 'w7-new'}}"));
        srv_isvc_url(&S, "w7-new", false, base, sizeof(base));
        (void)snprintf(url, sizeof(url), "%s/v1/models/mover:predict", base);
        SRV_WAIT(SRV_TIMEOUT,
                 srv_models_has(&S, "w7-new", "mover") && !srv_models_has(&S, "w7-old", "mover"),
                 "the entry did not move");
        SRV_WAIT(SRV_TIMEOUT, moved_to("mover", "w7-new", url),
                 "labels/url/ownerReference did not follow the move");
}

Test(tm, w13_garbage_collection_while_controller_down, .timeout = 400)
{
        isvc_ready("w13", "2Gi");
        S.finalizer = "true"; /* without it the collector's deletes need no controller */
        srv_controller_start(&S);
        srv_tm_create(&S, "g1", "w13", "s3//a", "sklearn", "100Mi");
        srv_tm_create(&S, "g2", "w13", "s3//b", "sklearn", "100Mi");
        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed("g1", "w13") && tm_ready_and_listed("g2", "w13"),
                 "never Ready");
        cr_assert(owner_refs_only("g1", "w13"), "g1 has no (non-controller) ownerReference");
        cr_assert(owner_refs_only("g2", "w13"), "g2 has no (non-controller) ownerReference");

        srv_controller_stop(&S);
        srv_delete(&S, &srv_gvr_isvc, "w13", NULL);
        /* kube-controller-manager's garbage collector cascades to the TrainedModels */
        SRV_WAIT(4 * SRV_TIMEOUT, tm_terminating("g1") && tm_terminating("g2"),
                 "the TrainedModels were not garbage-collected with their InferenceService");
        /* the controller comes back and lets them go */
        srv_controller_start(&S);
        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, "g1") && srv_gone(&S, &srv_gvr_tm, "g2"),
                 "TrainedModels stuck Terminating");
}

/* ---- invalid specs ---- */

static const char *status_of(const char *tm)
{
        json_t *o = srv_get(&S, &srv_gvr_tm, tm);
        const char *d = dump(json_get_path(o, "status", NULL));

        json_decref(o);
        return d;
}

static bool invalid_named(const char *tm, const char *field)
{
        json_t *obj = srv_get(&S, &srv_gvr_tm, tm), *c;
        bool ok = false;
        size_t i;

        json_array_foreach(json_get_path(obj, "status", "conditions", NULL), i, c) {
                const char *st = json_string_value(json_object_get(c, "status"));
                const char *msg = json_string_value(json_object_get(c, "message"));
                const char *type = json_string_value(json_object_get(c, "type"));
                if (st && streq(st, "False") && msg && strstr(msg, field) && type &&
                    !streq(type, "Ready"))
                        ok = true;
        }
        ok = ok && srv_cond_status(obj, "Ready") && streq(srv_cond_status(obj, "Ready"), "False");
        json_decref(obj);
        return ok;
}

/* Creates a TrainedModel with spec (stolen); returns whether the API server accepted it. With
 * validating CRDs a rejection is fine (nothing reaches the controller); without, it must pass. */
static bool create_invalid(const char *name, json_t *spec, bool schema_rejects)
{
        json_t *obj = srv_json("{'apiVersion': 'serving.kserve.io/v1alpha1', 'kind': "
                               "'TrainedModel', 'metadata': {'name': '%s'}}",
                               name);
        struct kube_status st = { 0 };
        int k;

        json_object_set_new(obj, "spec", spec);
        k = srv_try_create(&S, &srv_gvr_tm, obj, &st);
        if (k < 0) {
                cr_assert(srv_crd_validates() && schema_rejects,
                          "%s rejected by the API server (%s CRDs): %d %s", name, srv_variant(), k,
                          st.message);
                return false;
        }
        return true;
}

Test(tm, invalid_specs_named_not_listed_no_crash)
{
        static const struct {
                const char *name, *spec, *field;
                bool schema_rejects;
        } cases[] = {
                { "neg-memory",
                  "{'inferenceService': 'inv', 'model': {'storageUri': 's3//a', 'framework': "
                  "'sklearn', 'memory': '-1Gi'}}",
                  "spec.model.memory", false },
                { "bad-memory",
                  "{'inferenceService': 'inv', 'model': {'storageUri': 's3//a', 'framework': "
                  "'sklearn', 'memory': 'lots'}}",
                  "spec.model.memory", true },
                { "empty-uri",
                  "{'inferenceService': 'inv', 'model': {'storageUri': '', 'framework': "
                  "'sklearn', 'memory': '1Mi'}}",
                  "spec.model.storageUri", false },
                { "no-memory",
                  "{'inferenceService': 'inv', 'model': {'storageUri': 's3//a', 'framework': "
                  "'sklearn'}}",
                  "spec.model.memory", true },
                { "no-model", "{'inferenceService': 'inv'}", "spec.model", true },
                { "empty-parent",
                  "{'inferenceService': '', 'model': {'storageUri': 's3//a', 'framework': "
                  "'sklearn', 'memory': '1Mi'}}",
                  "spec.inferenceService", false },
        };
        bool accepted[ELEMENTSOF(cases)];

        isvc_ready("inv", "2Gi");
        srv_controller_start(&S);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                accepted[i] = create_invalid(cases[i].name, srv_json("%s", cases[i].spec),
                                             cases[i].schema_rejects);
        srv_tm_create(&S, "good", "inv", "s3//good", "sklearn", "1Mi");

        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed("good", "inv"),
                 "the valid model next to invalid ones never Ready");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                if (!accepted[i])
                        continue;
                SRV_WAIT(SRV_TIMEOUT, invalid_named(cases[i].name, cases[i].field),
                         "%s: no False condition naming %s: %s", cases[i].name, cases[i].field,
                         status_of(cases[i].name));
                cr_assert(!srv_models_has(&S, "inv", cases[i].name), "%s listed", cases[i].name);
        }
        json_t *models = srv_models(&S, "inv");
        cr_assert_eq(json_array_size(models), 1, "models.json: %s", dump(models));
        json_decref(models);
        wait_quiet(); /* no retry loop on invalid specs */
        srv_controller_assert_alive(&S);
        /* and they can be deleted */
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (accepted[i])
                        srv_delete(&S, &srv_gvr_tm, cases[i].name, NULL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                if (accepted[i])
                        SRV_WAIT(SRV_TIMEOUT, srv_gone(&S, &srv_gvr_tm, cases[i].name),
                                 "%s stuck Terminating", cases[i].name);
}

/* ---- start with existing objects ---- */

/* The controller starting (or restarting) over existing objects must not take an InferenceService
 * that its cache has not loaded yet for a missing one (that would delete its TrainedModels). */
Test(tm, start_over_existing_objects_deletes_nothing)
{
        enum { N_ISVC = 8, N_PER = 4 };
        char isvc[32], name[32];

        for (int j = 0; j < N_ISVC; j++) {
                (void)snprintf(isvc, sizeof(isvc), "pre-%d", j);
                isvc_ready(isvc, "2Gi");
                for (int i = 0; i < N_PER; i++) {
                        (void)snprintf(name, sizeof(name), "pre-%d-tm-%d", j, i);
                        srv_tm_create(&S, name, isvc, "s3//m", "sklearn", "100Mi");
                }
        }
        srv_controller_start(&S);
        for (int j = 0; j < N_ISVC; j++)
                for (int i = 0; i < N_PER; i++) {
                        (void)snprintf(isvc, sizeof(isvc), "pre-%d", j);
                        (void)snprintf(name, sizeof(name), "pre-%d-tm-%d", j, i);
                        SRV_WAIT(SRV_TIMEOUT, tm_ready_and_listed(name, isvc),
                                 "%s never Ready and listed (deleted: %d)", name,
                                 srv_gone(&S, &srv_gvr_tm, name));
                }
        cr_assert_eq(srv_count(&S, &srv_gvr_tm), (size_t)(N_ISVC * N_PER));
        cr_assert_eq(srv_log_count(&S, "Deleted TrainedModel"), 0, "TrainedModels deleted");
}
