/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/plan.h"

#define NOW ((usec_t)1750000000 * USEC_PER_SEC)

/* --- builders ---------------------------------------------------------------------------- */

struct isvc_opts {
        bool ready;
        const char *limit;     /* NULL: no limit */
        const char *predictor; /* raw JSON of spec.predictor, overrides the standard one */
};

static json_t *load(const char *s)
{
        json_error_t err;
        json_t *v = json_loads(s, 0, &err);

        cr_assert_not_null(v, "bad test JSON (%s): %s", err.text, s);
        return v;
}

static json_t *isvc(const char *name, struct isvc_opts o)
{
        char buf[4096], pred[1024];

        if (o.predictor)
                (void)snprintf(pred, sizeof(pred), "%s", o.predictor);
        else if (o.limit)
                (void)snprintf(
                        pred, sizeof(pred),
                        "{\"minReplicas\":1,\"maxReplicas\":3,\"tensorflow\":{\"runtimeVersion\":"
                        "\"1.14.0\",\"name\":\"kserve-container\",\"resources\":{\"requests\":"
                        "{\"cpu\":\"1\",\"memory\":\"%s\"},\"limits\":{\"cpu\":\"1\",\"memory\":"
                        "\"%s\"}}}}",
                        o.limit, o.limit);
        else
                (void)snprintf(pred, sizeof(pred), "{\"tensorflow\":{}}");
        (void)snprintf(
                buf, sizeof(buf),
                "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\","
                "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"uid\":\"uid-%s\","
                "\"labels\":{\"team\":\"a\"}},\"spec\":{\"predictor\":%s}%s}",
                name, name, pred,
                o.ready ? ",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
                          "{\"type\":\"PredictorReady\",\"status\":\"True\"},{\"type\":"
                          "\"IngressReady\",\"status\":\"True\"}],\"url\":"
                          "\"http://model1-update-parent-predictor.default.example.com\","
                          "\"address\":{\"url\":\"http://model1-update-parent-predictor.default."
                          "example.svc.local.cluster\"}}"
                        : "");
        return load(buf);
}

static json_t *configmap(const char *name, const char *models_json)
{
        json_t *cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{}}", "apiVersion", "v1", "kind",
                               "ConfigMap", "metadata", "name", name, "namespace", "default",
                               "resourceVersion", "42", "data");

        cr_assert_not_null(cm);
        if (models_json)
                json_object_set_new(json_object_get(cm, "data"), "models.json",
                                    json_string(models_json));
        return cm;
}

/* A TrainedModel created at NOW - 1000 s + @age_rank seconds. */
static json_t *trained_model(const char *name, const char *isvc_name, const char *memory,
                             int created_rank)
{
        char ts[32];
        time_t t = (time_t)(NOW / USEC_PER_SEC) - 100000 + created_rank;
        struct tm tmv;
        json_t *o;

        gmtime_r(&t, &tmv);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tmv);
        o = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:{s:s, s:s, s:s}}}",
                      "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel",
                      "metadata", "name", name, "namespace", "default", "uid", "tm-uid",
                      "resourceVersion", "5", "creationTimestamp", ts, "spec", "inferenceService",
                      isvc_name, "model", "storageUri", "s3//model1", "framework", "tensorflow",
                      "memory", memory);
        cr_assert_not_null(o);
        return o;
}

static void set_meta(json_t *tm, const char *key, json_t *value)
{
        json_object_set_new(json_object_get(tm, "metadata"), key, value);
}

/* Applies a plan's metadata patch and status to the object, as the shell's writes would. */
static void apply(json_t *tm, const struct tm_plan *p)
{
        json_t *meta = json_object_get(tm, "metadata");

        if (p->metadata_patch) {
                json_t *m = json_object_get(p->metadata_patch, "metadata");
                const char *key;
                json_t *v;

                json_object_foreach(m, key, v) {
                        if (streq(key, "labels")) {
                                json_t *labels = json_object_get(meta, "labels");
                                const char *k;
                                json_t *lv;
                                if (!labels) {
                                        labels = json_object();
                                        json_object_set_new(meta, "labels", labels);
                                }
                                json_object_foreach(v, k, lv) {
                                        if (json_is_null(lv))
                                                json_object_del(labels, k);
                                        else
                                                json_object_set(labels, k, lv);
                                }
                        } else if (!streq(key, "resourceVersion")) {
                                json_object_set(meta, key, v);
                        }
                }
        }
        if (p->status && p->status_changed)
                json_object_set(tm, "status", p->status);
}

static struct isvc_plan compute_mode(const char *name, const json_t *isvc_json, const json_t *cm,
                                     json_t **tms, size_t n, bool no_finalizer)
{
        struct plan_input in = {
                .isvc_name = name,
                .isvc = isvc_json,
                .configmap = cm,
                .tms = (const json_t *const *)tms,
                .n_tms = n,
                .now = NOW,
                .no_finalizer = no_finalizer,
        };
        struct isvc_plan p;
        int r;

        r = isvc_plan_compute(&in, &p);
        cr_assert_eq(r, 0, "isvc_plan_compute: %d", r);
        cr_assert_eq(p.n_tms, n);
        return p;
}

static struct isvc_plan compute(const char *name, const json_t *isvc_json, const json_t *cm,
                                json_t **tms, size_t n)
{
        return compute_mode(name, isvc_json, cm, tms, n, false);
}

static const char *cond_field(const struct tm_plan *p, const char *type, const char *field)
{
        json_t *conds = json_object_get(p->status, "conditions");
        size_t i;
        json_t *c;

        json_array_foreach(conds, i, c)
                if (streq(json_string_value(json_object_get(c, "type")), type)) {
                        json_t *v = json_object_get(c, field);
                        return v ? json_string_value(v) : "";
                }
        return NULL;
}

static void expect_cond(const struct tm_plan *p, const char *type, const char *status,
                        const char *reason)
{
        cr_assert_not_null(p->status, "%s: no status planned", p->name);
        cr_assert_not_null(cond_field(p, type, "status"), "%s: condition %s missing", p->name,
                           type);
        cr_assert_str_eq(cond_field(p, type, "status"), status, "%s: %s", p->name, type);
        if (reason)
                cr_assert_str_eq(cond_field(p, type, "reason"), reason, "%s: %s reason", p->name,
                                 type);
}

static const char *patched_label(const struct tm_plan *p, const char *key)
{
        json_t *v = json_object_get(json_object_get(json_object_get(p->metadata_patch, "metadata"),
                                                    "labels"),
                                    key);
        return json_is_string(v) ? json_string_value(v) : json_is_null(v) ? "<removed>" : NULL;
}

static const char *models_json_of(const struct isvc_plan *p)
{
        if (p->configmap_patch)
                return json_string_value(
                        json_object_get(json_object_get(p->configmap_patch, "data"),
                                        "models.json"));
        return NULL;
}

/* --- §9.1 controller cases ---------------------------------------------------------------- */

/* C2 + C3: a healthy new TrainedModel, then the second pass after the ConfigMap write. */
Test(plan, healthy_model_converges)
{
        json_auto_t *is = isvc("model1-update-parent",
                               (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm = configmap("modelconfig-model1-update-parent-0", "");
        json_auto_t *tm = trained_model("model1-update", "model1-update-parent", "1G", 0);
        json_t *tms[] = { tm };
        const char *want = "[{\"modelName\":\"model1-update\",\"modelSpec\":{\"storageUri\":"
                           "\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]";
        struct isvc_plan p = compute("model1-update-parent", is, cm, tms, 1);
        struct tm_plan *t = &p.tms[0];
        json_t *m;

        cr_assert(p.isvc_found);
        cr_assert_str_eq(p.configmap_name, "modelconfig-model1-update-parent-0");
        cr_assert_str_eq(p.models_json, want);
        cr_assert_str_eq(models_json_of(&p), want);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(p.configmap_patch, "metadata"),
                                                 "resourceVersion")),
                         "42", "the ConfigMap write is conditional on the observed version");
        cr_assert_null(p.configmap_create);

        cr_assert_eq(t->state, TM_STATE_PENDING);
        cr_assert(t->admitted);
        cr_assert(t->listed);
        expect_cond(t, CONDITION_INFERENCE_SERVICE_READY, "True", NULL);
        expect_cond(t, CONDITION_IS_MMS_PREDICTOR, "True", NULL);
        expect_cond(t, CONDITION_MEMORY_RESOURCE_AVAILABLE, "True", NULL);
        expect_cond(t, CONDITION_READY, "Unknown", REASON_MODEL_CONFIG_PENDING);
        cr_assert_str_eq(json_string_value(json_object_get(t->status, "url")),
                         "http://model1-update-parent-predictor.default.example.com/v1/models/"
                         "model1-update:predict");
        cr_assert_str_eq(json_string_value(json_get_path(t->status, "address", "url", NULL)),
                         "http://model1-update-parent-predictor.default.example.svc.local.cluster/"
                         "v1/models/model1-update:predict");
        cr_assert_str_eq(cond_field(t, CONDITION_READY, "lastTransitionTime"),
                         "2025-06-15T15:06:40Z");

        m = json_object_get(t->metadata_patch, "metadata");
        cr_assert_str_eq(patched_label(t, "inferenceservice"), "model1-update-parent");
        cr_assert_str_eq(patched_label(t, "serving.kserve.io/trainedmodel-allocated"),
                         "model1-update-parent");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(m, "finalizers"), 0)),
                         "trainedmodel.finalizer");
        cr_assert_str_eq(json_string_value(json_object_get(m, "resourceVersion")), "5");
        {
                json_t *ref = json_array_get(json_object_get(m, "ownerReferences"), 0);
                cr_assert_str_eq(json_string_value(json_object_get(ref, "kind")),
                                 "InferenceService");
                cr_assert_str_eq(json_string_value(json_object_get(ref, "name")),
                                 "model1-update-parent");
                cr_assert_str_eq(json_string_value(json_object_get(ref, "uid")),
                                 "uid-model1-update-parent");
                cr_assert_null(json_object_get(ref, "controller"),
                               "W13: not a controller reference");
        }
        cr_assert_str_eq(t->event_reason, "ModelAdded");
        cr_assert_str_eq(t->event_type, "Normal");

        /* the shell writes the ConfigMap, then re-plans with it: Ready becomes True (W3) */
        apply(tm, t);
        isvc_plan_release(&p);
        json_object_set_new(json_object_get(cm, "data"), "models.json", json_string(want));
        p = compute("model1-update-parent", is, cm, tms, 1);
        t = &p.tms[0];
        cr_assert_null(p.configmap_patch, "W1: no write when the bytes do not change");
        cr_assert_eq(t->state, TM_STATE_READY);
        expect_cond(t, CONDITION_READY, "True", "");
        cr_assert(t->status_changed);
        cr_assert_null(t->metadata_patch, "labels, finalizer and ownerReference are in place");
        cr_assert_null(t->event_type);

        /* an unchanged world plans nothing (level-triggered, idempotent) */
        apply(tm, t);
        isvc_plan_release(&p);
        p = compute("model1-update-parent", is, cm, tms, 1);
        t = &p.tms[0];
        cr_assert_null(p.configmap_patch);
        cr_assert_not(t->status_changed, "an unchanged world must not rewrite status");
        cr_assert_null(t->metadata_patch);
        isvc_plan_release(&p);

        /* C3b: a storageUri change rewrites the entry */
        json_object_set_new(json_get_path(tm, "spec", "model", NULL), "storageUri",
                            json_string("s3//model2"));
        p = compute("model1-update-parent", is, cm, tms, 1);
        cr_assert_str_eq(models_json_of(&p),
                         "[{\"modelName\":\"model1-update\",\"modelSpec\":{\"storageUri\":"
                         "\"s3//model2\",\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]");
        cr_assert_eq(p.tms[0].state, TM_STATE_PENDING);
        cr_assert_str_eq(p.tms[0].event_reason, "ModelUpdated");
        isvc_plan_release(&p);
}

/* C1: parent with an empty spec and no status. */
Test(plan, empty_parent)
{
        json_auto_t *is = load("{\"metadata\":{\"name\":\"model0-create-parent\",\"namespace\":"
                               "\"default\"},\"spec\":{}}");
        json_auto_t *tm = trained_model("model0-create", "model0-create-parent", "1G", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep)
        struct isvc_plan p = compute("model0-create-parent", is, NULL, tms, 1);
        struct tm_plan *t = &p.tms[0];

        expect_cond(t, CONDITION_INFERENCE_SERVICE_READY, "False",
                    REASON_INFERENCE_SERVICE_NOT_READY);
        expect_cond(t, CONDITION_IS_MMS_PREDICTOR, "False", REASON_IS_NOT_MMS_PREDICTOR);
        expect_cond(t, CONDITION_MEMORY_RESOURCE_AVAILABLE, "False",
                    REASON_MEMORY_RESOURCE_NOT_AVAILABLE);
        expect_cond(t, CONDITION_READY, "False", REASON_MEMORY_RESOURCE_NOT_AVAILABLE);
        cr_assert_str_eq(cond_field(t, CONDITION_INFERENCE_SERVICE_READY, "message"),
                         MESSAGE_INFERENCE_SERVICE_NOT_READY);
        cr_assert_null(p.configmap_create, "non-MMS parents never get a ConfigMap");
        cr_assert_null(p.configmap_patch);
        cr_assert_null(p.models_json);
        cr_assert_eq(t->state, TM_STATE_WAITING_MEMORY);
        cr_assert(tm_state_is_waiting(t->state), "W5: waiting is not an error");
        cr_assert_null(json_object_get(t->status, "url"));
}

/* C5: not enough memory; the ConfigMap stays "" (no write). */
Test(plan, not_enough_memory)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "");
        json_auto_t *tm = trained_model("big", "p", "3Gi", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, cm, tms, 1);
        struct tm_plan *t = &p.tms[0];

        expect_cond(t, CONDITION_INFERENCE_SERVICE_READY, "True", NULL);
        expect_cond(t, CONDITION_IS_MMS_PREDICTOR, "True", NULL);
        expect_cond(t, CONDITION_MEMORY_RESOURCE_AVAILABLE, "False",
                    REASON_MEMORY_RESOURCE_NOT_AVAILABLE);
        cr_assert_null(p.configmap_patch);
        cr_assert_not(t->admitted);
        cr_assert_null(patched_label(t, "serving.kserve.io/trainedmodel-allocated"));
        cr_assert_str_eq(patched_label(t, "inferenceservice"), "p");
}

/* C6: a predictor with its own storageUri is not multi-model. */
Test(plan, single_model_predictor)
{
        json_auto_t *is = isvc(
                "p", (struct isvc_opts){
                             .ready = true,
                             .predictor = "{\"tensorflow\":{\"storageUri\":\"s3//model1\"}}" });
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, NULL, tms, 1);

        expect_cond(&p.tms[0], CONDITION_INFERENCE_SERVICE_READY, "True", NULL);
        expect_cond(&p.tms[0], CONDITION_IS_MMS_PREDICTOR, "False", REASON_IS_NOT_MMS_PREDICTOR);
        cr_assert_eq(p.tms[0].state, TM_STATE_WAITING_MEMORY, "no limit: 1G does not fit 0");
}

/* C4: deletion removes the entry first, then the finalizer. */
Test(plan, deletion)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm =
                configmap("modelconfig-p-0",
                          "[{\"modelName\":\"m\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]");
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_t *tms[] = { tm };
        struct isvc_plan p;

        set_meta(tm, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(tm, "finalizers", json_pack("[s,s]", "other", "trainedmodel.finalizer"));
        p = compute("p", is, cm, tms, 1);
        cr_assert_eq(p.tms[0].state, TM_STATE_DELETING);
        cr_assert_str_eq(models_json_of(&p), "[]");
        cr_assert_null(p.tms[0].metadata_patch, "the finalizer stays until the entry is gone");
        cr_assert_null(p.tms[0].status, "no status writes while deleting");
        cr_assert_str_eq(p.tms[0].event_reason, "ModelRemoved");
        isvc_plan_release(&p);

        json_object_set_new(json_object_get(cm, "data"), "models.json", json_string("[]"));
        p = compute("p", is, cm, tms, 1);
        cr_assert_eq(p.tms[0].state, TM_STATE_FINALIZED);
        cr_assert_null(p.configmap_patch);
        {
                json_t *f = json_get_path(p.tms[0].metadata_patch, "metadata", "finalizers", NULL);
                cr_assert_eq(json_array_size(f), 1);
                cr_assert_str_eq(json_string_value(json_array_get(f, 0)), "other");
        }
        isvc_plan_release(&p);
}

/* X1 and W6(b): a missing parent deletes live models and releases deleting ones. */
Test(plan, parent_missing)
{
        json_auto_t *a = trained_model("a", "gone", "1G", 0);
        json_auto_t *b = trained_model("b", "gone", "1G", 1);
        json_t *tms[] = { a, b };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        set_meta(b, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(b, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        p = compute("gone", NULL, NULL, tms, 2);
        cr_assert_not(p.isvc_found);
        cr_assert_eq(p.tms[0].state, TM_STATE_PARENT_MISSING);
        cr_assert(p.tms[0].delete_object);
        cr_assert_eq(p.tms[1].state, TM_STATE_FINALIZED);
        cr_assert_not(p.tms[1].delete_object);
        cr_assert_eq(json_array_size(json_get_path(p.tms[1].metadata_patch, "metadata",
                                                   "finalizers", NULL)),
                     0);
        cr_assert_null(p.configmap_create);
        cr_assert_null(p.configmap_patch);
}

/* X10 / W6(a): deleting a model of a non-MMS parent (no ConfigMap) never gets stuck. */
Test(plan, deleting_without_configmap)
{
        json_auto_t *is = isvc("p",
                               (struct isvc_opts){
                                       .ready = true,
                                       .predictor = "{\"sklearn\":{\"storageUri\":\"s3://x\"}}" });
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        set_meta(tm, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(tm, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        p = compute("p", is, NULL, tms, 1);
        cr_assert_eq(p.tms[0].state, TM_STATE_FINALIZED);
        cr_assert_not_null(p.tms[0].metadata_patch);
}

/* W2/W8: 50 x 100Mi created at once against 2000Mi admit exactly 20, the earliest. */
Test(plan, no_overcommit)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2000Mi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "[]");
        json_t *tms[50];
        struct isvc_plan p;
        size_t admitted = 0, listed_in_json = 0;
        const char *s;

        for (int i = 0; i < 50; i++) {
                char name[16];
                (void)snprintf(name, sizeof(name), "m%02d", 49 - i);
                tms[i] = trained_model(name, "p", "100Mi", i); /* m49 is the oldest */
        }
        p = compute("p", is, cm, tms, 50);
        for (int i = 0; i < 50; i++) {
                if (p.tms[i].admitted) {
                        admitted++;
                        cr_assert_lt(i, 20, "the 20 oldest are admitted, not %s", p.tms[i].name);
                        cr_assert(p.tms[i].listed);
                } else {
                        cr_assert_eq(p.tms[i].state, TM_STATE_WAITING_MEMORY);
                        expect_cond(&p.tms[i], CONDITION_MEMORY_RESOURCE_AVAILABLE, "False",
                                    REASON_MEMORY_RESOURCE_NOT_AVAILABLE);
                }
        }
        cr_assert_eq(admitted, 20);
        for (s = models_json_of(&p); (s = strstr(s, "\"modelName\"")); s++)
                listed_in_json++;
        cr_assert_eq(listed_in_json, 20);
        cr_assert_not_null(strstr(models_json_of(&p), "\"m30\""));
        cr_assert_null(strstr(models_json_of(&p), "\"m29\""));
        isvc_plan_release(&p);

        /* W5: freeing memory re-admits a waiting model (level-triggered) */
        json_object_set_new(json_get_path(tms[0], "spec", NULL), "inferenceService",
                            json_string("q"));
        p = compute("p", is, cm, tms, 50);
        cr_assert_eq(p.tms[0].state, TM_STATE_IGNORED);
        cr_assert(p.tms[20].admitted, "the next oldest takes the freed place");
        cr_assert_not(p.tms[21].admitted);
        isvc_plan_release(&p);
        for (int i = 0; i < 50; i++)
                json_decref(tms[i]);
}

/* X4: two allocated 1Gi fill 2Gi; one more byte does not fit. X5: equality fits. */
Test(plan, memory_edges)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *a = trained_model("a", "p", "1Gi", 0);
        json_auto_t *b = trained_model("b", "p", "1Gi", 1);
        json_auto_t *c = trained_model("c", "p", "1", 2);
        json_t *tms[] = { a, b, c };
        struct isvc_plan p;

        set_meta(a, "labels", json_pack("{s:s}", "serving.kserve.io/trainedmodel-allocated", "p"));
        set_meta(b, "labels", json_pack("{s:s}", "serving.kserve.io/trainedmodel-allocated", "p"));
        p = compute("p", is, NULL, tms, 3);
        cr_assert(p.tms[0].admitted && p.tms[1].admitted);
        cr_assert_not(p.tms[2].admitted);
        cr_assert_null(patched_label(&p.tms[2], "serving.kserve.io/trainedmodel-allocated"));
        isvc_plan_release(&p);

        {
                json_auto_t *is1 = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
                json_auto_t *x = trained_model("x", "p", "512Mi", 0);
                json_auto_t *y = trained_model("y", "p", "512Mi", 1);
                json_t *xy[] = { x, y };
                p = compute("p", is1, NULL, xy, 2);
                cr_assert(p.tms[0].admitted && p.tms[1].admitted, "X5: equality fits");
                isvc_plan_release(&p);
        }
}

/* Previously admitted models keep their memory over older newcomers; a shrunk limit evicts. */
Test(plan, admission_priority)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *old_newcomer = trained_model("old", "p", "1Gi", 0);
        json_auto_t *holder = trained_model("holder", "p", "1Gi", 5);
        json_t *tms[] = { old_newcomer, holder };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        set_meta(holder, "labels",
                 json_pack("{s:s}", "serving.kserve.io/trainedmodel-allocated", "p"));
        p = compute("p", is, NULL, tms, 2);
        cr_assert(p.tms[1].admitted, "the model holding the allocation keeps it");
        cr_assert_not(p.tms[0].admitted);
        cr_assert_null(
                p.tms[0].metadata_patch
                        ? patched_label(&p.tms[0], "serving.kserve.io/trainedmodel-allocated")
                        : NULL);
}

Test(plan, limit_shrink_evicts_latest)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *a = trained_model("a", "p", "1Gi", 0);
        json_auto_t *b = trained_model("b", "p", "1Gi", 1);
        json_auto_t *cm = configmap(
                "modelconfig-p-0",
                "[{\"modelName\":\"a\",\"modelSpec\":{\"storageUri\":\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1Gi\"}},"
                "{\"modelName\":\"b\",\"modelSpec\":{\"storageUri\":\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":\"1Gi\"}}]");
        json_t *tms[] = { a, b };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        set_meta(a, "labels", json_pack("{s:s}", "serving.kserve.io/trainedmodel-allocated", "p"));
        set_meta(b, "labels", json_pack("{s:s}", "serving.kserve.io/trainedmodel-allocated", "p"));
        p = compute("p", is, cm, tms, 2);
        cr_assert(p.tms[0].admitted);
        cr_assert_not(p.tms[1].admitted);
        cr_assert_str_eq(patched_label(&p.tms[1], "serving.kserve.io/trainedmodel-allocated"),
                         "<removed>");
        cr_assert_str_eq(p.tms[1].event_reason, "ModelRemoved");
        cr_assert_null(strstr(models_json_of(&p), "\"b\""));
}

/* X9: the parent becomes not ready: conditions False, the entry stays. */
Test(plan, parent_not_ready_keeps_entry)
{
        const char *entry = "[{\"modelName\":\"m\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                            "\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]";
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = false, .limit = "2Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", entry);
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_auto_t *fresh = trained_model("n", "p", "1G", 1);
        json_t *tms[] = { tm, fresh };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, cm, tms, 2);

        cr_assert_null(p.configmap_patch, "models.json keeps the entry, unchanged");
        cr_assert_str_eq(p.models_json, entry);
        cr_assert_eq(p.tms[0].state, TM_STATE_WAITING_ISVC);
        cr_assert(p.tms[0].listed);
        expect_cond(&p.tms[0], CONDITION_INFERENCE_SERVICE_READY, "False",
                    REASON_INFERENCE_SERVICE_NOT_READY);
        expect_cond(&p.tms[0], CONDITION_READY, "False", NULL);
        cr_assert_not(p.tms[1].listed, "a new model waits for a ready parent");
        cr_assert(p.tms[1].admitted, "memory is still admitted (KServe adds the label anyway)");
}

/* W7: a model moved from a to b leaves a's models.json and is relabelled for b. */
Test(plan, move_between_parents)
{
        json_auto_t *isa = isvc("a", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *isb = isvc("b", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cma =
                configmap("modelconfig-a-0",
                          "[{\"modelName\":\"m\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]");
        json_auto_t *cmb = configmap("modelconfig-b-0", "[]");
        json_auto_t *tm = trained_model("m", "b", "1G", 0);
        json_t *tms[] = { tm };
        struct isvc_plan p;
        json_t *refs;

        set_meta(tm, "labels",
                 json_pack("{s:s, s:s}", "inferenceservice", "a",
                           "serving.kserve.io/trainedmodel-allocated", "a"));
        set_meta(tm, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        set_meta(tm, "ownerReferences",
                 json_pack("[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]", "apiVersion",
                           "serving.kserve.io/v1beta1", "kind", "InferenceService", "name", "a",
                           "uid", "uid-a", "apiVersion", "v1", "kind", "ConfigMap", "name", "keep",
                           "uid", "u2"));

        p = compute("a", isa, cma, tms, 1);
        cr_assert_eq(p.tms[0].state, TM_STATE_IGNORED);
        cr_assert_str_eq(models_json_of(&p), "[]", "the old parent drops the entry");
        cr_assert_null(p.tms[0].metadata_patch);
        isvc_plan_release(&p);

        p = compute("b", isb, cmb, tms, 1);
        cr_assert_eq(p.tms[0].state, TM_STATE_PENDING);
        cr_assert_str_eq(patched_label(&p.tms[0], "inferenceservice"), "b");
        cr_assert_str_eq(patched_label(&p.tms[0], "serving.kserve.io/trainedmodel-allocated"), "b");
        refs = json_get_path(p.tms[0].metadata_patch, "metadata", "ownerReferences", NULL);
        cr_assert_eq(json_array_size(refs), 2);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(refs, 0), "name")),
                         "keep");
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(refs, 1), "name")), "b");
        isvc_plan_release(&p);
}

/* W3 and §9.2 M1/M2: a missing (or wrongly named) ConfigMap is created for MMS parents. */
Test(plan, missing_configmap_is_created)
{
        json_auto_t *is = isvc("my-isvc", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *wrong = configmap("my-isvc-0-modelconfig", "[]");
        json_auto_t *tm = trained_model("tm1", "my-isvc", "1G", 0);
        json_t *tms[] = { tm };
        const json_t *variants[] = { NULL, wrong };

        for (size_t v = 0; v < 2; v++) {
                CLEANUP(isvc_plan_releasep)
                struct isvc_plan p = compute("my-isvc", is, variants[v], tms, 1);
                json_t *c = p.configmap_create;

                cr_assert_not_null(c);
                cr_assert_null(p.configmap_patch);
                cr_assert_str_eq(json_string_value(json_get_path(c, "metadata", "name", NULL)),
                                 "modelconfig-my-isvc-0");
                cr_assert_str_eq(json_string_value(json_get_path(c, "metadata", "namespace", NULL)),
                                 "default");
                cr_assert_str_eq(json_string_value(
                                         json_get_path(c, "metadata", "labels", "team", NULL)),
                                 "a");
                cr_assert(json_is_true(json_object_get(
                        json_array_get(json_get_path(c, "metadata", "ownerReferences", NULL), 0),
                        "controller")));
                cr_assert_str_eq(json_string_value(json_get_path(c, "data", "models.json", NULL)),
                                 p.models_json);
                cr_assert_eq(p.tms[0].state, TM_STATE_PENDING,
                             "Ready only once models.json holds it");
        }
}

/* W4: models that would overflow the ConfigMap get ModelConfigFull; the others keep working. */
Test(plan, configmap_full)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "100Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "[]");
        json_auto_t *a = trained_model("a", "p", "1Gi", 0);
        json_auto_t *b = trained_model("b", "p", "1Gi", 1);
        json_t *tms[] = { b, a };
        size_t filler = 1048576 - 150; /* room for "[" + one ~96-byte entry + "]" */
        char *big = malloc(filler + 1);
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        cr_assert_not_null(big);
        memset(big, 'x', filler);
        big[filler] = '\0';
        json_object_set_new(json_object_get(cm, "data"), "other", json_string(big));
        free(big);

        p = compute("p", is, cm, tms, 2);
        cr_assert_eq(p.tms[1].state, TM_STATE_PENDING, "the oldest fits");
        cr_assert_eq(p.tms[0].state, TM_STATE_DOES_NOT_FIT);
        expect_cond(&p.tms[0], CONDITION_READY, "False", REASON_MODEL_CONFIG_FULL);
        expect_cond(&p.tms[0], CONDITION_MEMORY_RESOURCE_AVAILABLE, "True", NULL);
        cr_assert_not_null(
                strstr(cond_field(&p.tms[0], CONDITION_READY, "message"), "modelconfig-p-0"));
        cr_assert_str_eq(p.tms[0].event_type, "Warning");
        cr_assert_str_eq(p.tms[0].event_reason, REASON_MODEL_CONFIG_FULL);
        cr_assert_str_eq(models_json_of(&p),
                         "[{\"modelName\":\"a\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                         "\"framework\":\"tensorflow\",\"memory\":\"1Gi\"}}]");
        cr_assert_lt(strlen(models_json_of(&p)) + filler, (size_t)1048576 + 1);
}

/* Issue 3: an invalid spec gets a False condition naming the field and takes no memory. */
Test(plan, invalid_spec)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "[]");
        json_auto_t *bad = trained_model("bad", "p", "lots", 0);
        json_auto_t *good = trained_model("good", "p", "1Gi", 1);
        json_t *tms[] = { bad, good };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, cm, tms, 2);

        cr_assert_eq(p.tms[0].state, TM_STATE_INVALID);
        expect_cond(&p.tms[0], CONDITION_MEMORY_RESOURCE_AVAILABLE, "False", REASON_INVALID_SPEC);
        expect_cond(&p.tms[0], CONDITION_READY, "False", REASON_INVALID_SPEC);
        cr_assert_not_null(
                strstr(cond_field(&p.tms[0], CONDITION_READY, "message"), "spec.model.memory"));
        cr_assert_str_eq(p.tms[0].event_type, "Warning");
        cr_assert_not(p.tms[0].listed);
        cr_assert(p.tms[1].admitted, "the invalid model holds no memory");
        cr_assert_null(strstr(models_json_of(&p), "\"bad\""));
}

/*
 * Issue 28 item 6: spec.inferenceService is the value of the TrainedModel's (and the ConfigMap's)
 * inferenceservice label, so over 63 characters the API server refuses the label ("must be no
 * more than 63 bytes"). The model gets InvalidSpec naming the limit, and no label is written on
 * it or on the ConfigMap; a valid model of a 63-character parent keeps its label.
 */
Test(plan, parent_name_over_the_label_value_limit)
{
        char long_name[65], max_name[64];
        json_auto_t *is = NULL, *tm = NULL, *is63 = NULL, *tm63 = NULL;

        memset(long_name, 'a', 64);
        long_name[64] = '\0';
        memset(max_name, 'b', 63);
        max_name[63] = '\0';
        is = isvc(long_name, (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        tm = trained_model("tm-long", long_name, "1G", 0);
        is63 = isvc(max_name, (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        tm63 = trained_model("tm-63", max_name, "1G", 0);
        {
                json_t *tms[] = { tm };
                CLEANUP(isvc_plan_releasep)
                struct isvc_plan p = compute(long_name, is, NULL, tms, 1);
                const char *msg;

                cr_assert_eq(p.tms[0].state, TM_STATE_INVALID, "state %s",
                             tm_state_to_string(p.tms[0].state));
                expect_cond(&p.tms[0], CONDITION_MEMORY_RESOURCE_AVAILABLE, "False",
                            REASON_INVALID_SPEC);
                expect_cond(&p.tms[0], CONDITION_READY, "False", REASON_INVALID_SPEC);
                msg = cond_field(&p.tms[0], CONDITION_READY, "message");
                cr_assert(strstr(msg, "spec.inferenceService") && strstr(msg, "63"), "%s", msg);
                cr_assert_null(patched_label(&p.tms[0], "inferenceservice"),
                               "a label the API server refuses was planned");
                cr_assert_null(
                        patched_label(&p.tms[0], "serving.kserve.io/trainedmodel-allocated"));
                cr_assert_not(p.tms[0].listed);
                cr_assert_str_eq(p.tms[0].event_type, "Warning");
                cr_assert_null(json_get_path(p.configmap_create, "metadata", "labels",
                                             "serving.kserve.io/inferenceservice", NULL),
                               "the ConfigMap was planned with a label the API server refuses");
        }
        {
                /* moved from a parent whose name was a label: that label is dropped */
                json_t *tms[] = { tm };
                CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

                set_meta(tm, "labels", json_pack("{s:s}", "inferenceservice", "old-parent"));
                p = compute(long_name, is, NULL, tms, 1);
                cr_assert_eq(p.tms[0].state, TM_STATE_INVALID);
                cr_assert_str_eq(patched_label(&p.tms[0], "inferenceservice"), "<removed>");
        }
        {
                json_t *tms[] = { tm63 };
                CLEANUP(isvc_plan_releasep)
                struct isvc_plan p = compute(max_name, is63, NULL, tms, 1);

                cr_assert_eq(p.tms[0].state, TM_STATE_PENDING);
                cr_assert_str_eq(patched_label(&p.tms[0], "inferenceservice"), max_name);
                cr_assert_str_eq(json_string_value(
                                         json_get_path(p.configmap_create, "metadata", "labels",
                                                       "serving.kserve.io/inferenceservice", NULL)),
                                 max_name);
        }
}

Test(plan, orphan_without_parent_name)
{
        json_auto_t *tm = load(
                "{\"metadata\":{\"name\":\"o\",\"labels\":{\"inferenceservice\":\"x\"}},"
                "\"spec\":{\"model\":{}}}");
        CLEANUP(tm_plan_release) struct tm_plan p = { 0 };

        cr_assert_eq(tm_plan_orphan(tm, NOW, false, &p), 0);
        cr_assert_eq(p.state, TM_STATE_INVALID);
        expect_cond(&p, CONDITION_INFERENCE_SERVICE_READY, "False", REASON_INVALID_SPEC);
        expect_cond(&p, CONDITION_READY, "False", REASON_INVALID_SPEC);
        cr_assert_str_eq(cond_field(&p, CONDITION_READY, "message"),
                         "spec.inferenceService is required");
        cr_assert_str_eq(patched_label(&p, "inferenceservice"), "<removed>");
}

/* Entries of no current model (stale, manual) are dropped; corrupt models.json is rewritten. */
Test(plan, stale_and_corrupt_configmaps)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *stale =
                configmap("modelconfig-p-0",
                          "[{\"modelName\":\"ghost\",\"modelSpec\":{\"storageUri\":\"s3://g\"}}]");
        json_auto_t *corrupt = configmap("modelconfig-p-0", "{not json");
        struct isvc_plan p;

        p = compute("p", is, stale, NULL, 0);
        cr_assert_str_eq(models_json_of(&p), "[]");
        isvc_plan_release(&p);
        p = compute("p", is, corrupt, NULL, 0);
        cr_assert_str_eq(models_json_of(&p), "[]");
        isvc_plan_release(&p);
}

Test(plan, bad_inputs)
{
        struct plan_input in = { .isvc_name = NULL };
        struct isvc_plan p;
        json_auto_t *notobj = json_string("x");

        cr_assert_eq(isvc_plan_compute(&in, &p), -EINVAL);
        in.isvc_name = "p";
        in.isvc = notobj;
        cr_assert_eq(isvc_plan_compute(&in, &p), -EINVAL);
        in.isvc = NULL;
        in.configmap = notobj;
        cr_assert_eq(isvc_plan_compute(&in, &p), -EINVAL);
}

/* Unreadable TrainedModels are ignored, never a crash. */
Test(plan, unreadable_models_are_ignored)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *junk = json_string("junk");
        json_auto_t *noname = load("{\"metadata\":{},\"spec\":{\"inferenceService\":\"p\"}}");
        json_t *tms[] = { junk, noname };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, NULL, tms, 2);

        cr_assert_eq(p.tms[0].state, TM_STATE_IGNORED);
        cr_assert_eq(p.tms[1].state, TM_STATE_IGNORED);
        cr_assert_str_eq(tm_state_to_string(p.tms[0].state), "Ignored");
}

/* §9.2 M3: an existing ConfigMap with empty data gets the entry (memory "0" is kept as "0"). */
Test(plan, configmap_m3_empty_data)
{
        json_auto_t *is = isvc("my-isvc", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm = configmap("modelconfig-my-isvc-0", NULL);
        json_auto_t *tm = trained_model("tm1", "my-isvc", "0", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        json_object_set_new(json_get_path(tm, "spec", "model", NULL), "storageUri",
                            json_string("gs://foo/bar"));
        json_object_set_new(json_get_path(tm, "spec", "model", NULL), "framework", json_string(""));
        p = compute("my-isvc", is, cm, tms, 1);
        cr_assert_str_eq(models_json_of(&p),
                         "[{\"modelName\":\"tm1\",\"modelSpec\":{\"storageUri\":\"gs://foo/bar\","
                         "\"framework\":\"\",\"memory\":\"0\"}}]");
        /* the patch touches only data["models.json"]: other keys stay as they are */
        cr_assert_eq(json_object_size(json_object_get(p.configmap_patch, "data")), 1);
}

/* §9.2 M4: deleting tm1 with a ConfigMap that has only another key: nothing to remove. */
Test(plan, configmap_m4_other_key)
{
        json_auto_t *is = isvc("my-isvc", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm = configmap("modelconfig-my-isvc-0", NULL);
        json_auto_t *tm = trained_model("tm1", "my-isvc", "1", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        json_object_set_new(json_object_get(cm, "data"), "tm1", json_string("{\"x\":1}"));
        set_meta(tm, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(tm, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        p = compute("my-isvc", is, cm, tms, 1);
        cr_assert_null(p.configmap_patch, "an absent models.json already means []");
        cr_assert_eq(p.tms[0].state, TM_STATE_FINALIZED);
}

/* §9.2 M5/M6: invalid bytes under another key of a wrongly named ConfigMap do not matter. */
Test(plan, configmap_m5_wrong_name)
{
        json_auto_t *is = isvc("my-isvc", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm = configmap("my-isvc-0-modelconfig", NULL);
        json_auto_t *tm = trained_model("tm1", "my-isvc", "1", 0);
        json_t *tms[] = { tm };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = { 0 };

        json_object_set_new(json_object_get(cm, "data"), "other", json_string("\xc3\xa9 {{{"));
        p = compute("my-isvc", is, cm, tms, 1);
        cr_assert_not_null(p.configmap_create);
        cr_assert_null(p.configmap_patch);
}

/* A deleting model still listed keeps its memory until its entry is gone (W5 re-admission). */
Test(plan, deleting_model_holds_memory_until_unlisted)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm =
                configmap("modelconfig-p-0",
                          "[{\"modelName\":\"old\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"1Gi\"}}]");
        json_auto_t *old = trained_model("old", "p", "1Gi", 0);
        json_auto_t *next = trained_model("next", "p", "1Gi", 1);
        json_t *tms[] = { old, next };
        struct isvc_plan p;

        set_meta(old, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(old, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        p = compute("p", is, cm, tms, 2);
        cr_assert_eq(p.tms[0].state, TM_STATE_DELETING);
        cr_assert_not(p.tms[1].admitted, "the deleting model is still loaded");
        cr_assert_str_eq(models_json_of(&p), "[]");
        isvc_plan_release(&p);

        json_object_set_new(json_object_get(cm, "data"), "models.json", json_string("[]"));
        p = compute("p", is, cm, tms, 2);
        cr_assert_eq(p.tms[0].state, TM_STATE_FINALIZED);
        cr_assert(p.tms[1].admitted, "memory freed: the waiting model is admitted");
        cr_assert(p.tms[1].listed);
        isvc_plan_release(&p);
}

/* lastTransitionTime moves only for the condition that changed. */
Test(plan, transition_times_are_stable)
{
        json_auto_t *notready = isvc("p", (struct isvc_opts){ .ready = false, .limit = "1Gi" });
        json_auto_t *ready = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *tm = trained_model("m", "p", "1", 0);
        json_t *tms[] = { tm };
        struct plan_input in = { .isvc_name = "p",
                                 .isvc = notready,
                                 .tms = (const json_t *const *)tms,
                                 .n_tms = 1,
                                 .now = NOW };
        struct isvc_plan p;

        cr_assert_eq(isvc_plan_compute(&in, &p), 0);
        apply(tm, &p.tms[0]);
        isvc_plan_release(&p);

        in.isvc = ready;
        in.now = NOW + 3600 * USEC_PER_SEC;
        cr_assert_eq(isvc_plan_compute(&in, &p), 0);
        cr_assert_str_eq(cond_field(&p.tms[0], CONDITION_INFERENCE_SERVICE_READY,
                                    "lastTransitionTime"),
                         "2025-06-15T16:06:40Z");
        cr_assert_str_eq(cond_field(&p.tms[0], CONDITION_IS_MMS_PREDICTOR, "lastTransitionTime"),
                         "2025-06-15T15:06:40Z", "unchanged conditions keep their time");
        cr_assert_str_eq(cond_field(&p.tms[0], CONDITION_MEMORY_RESOURCE_AVAILABLE,
                                    "lastTransitionTime"),
                         "2025-06-15T15:06:40Z");
        isvc_plan_release(&p);
}

/* The same model passed twice is planned once. */
Test(plan, duplicate_inputs)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *a = trained_model("a", "p", "512Mi", 0);
        json_t *tms[] = { a, a };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, NULL, tms, 2);

        cr_assert_eq(p.tms[0].state, TM_STATE_PENDING);
        cr_assert_eq(p.tms[1].state, TM_STATE_IGNORED);
        cr_assert_not_null(strstr(p.models_json, "\"a\""));
        cr_assert_null(strstr(strstr(p.models_json, "\"a\"") + 1, "\"a\""), "listed once");
}

/* Scale: 5000 models on one InferenceService (the bench's largest case) in one plan. */
Test(plan, five_thousand_models)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "400000Mi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "[]");
        json_t **tms = calloc(5000, sizeof(*tms));
        struct isvc_plan p;
        size_t admitted = 0, listed = 0, full = 0;

        cr_assert_not_null(tms);
        for (int i = 0; i < 5000; i++) {
                char name[32];
                (void)snprintf(name, sizeof(name), "model-%05d", i);
                tms[i] = trained_model(name, "p", "100Mi", i);
        }
        p = compute("p", is, cm, tms, 5000);
        for (int i = 0; i < 5000; i++) {
                admitted += p.tms[i].admitted;
                listed += p.tms[i].listed;
                full += p.tms[i].state == TM_STATE_DOES_NOT_FIT;
        }
        cr_assert_eq(admitted, 4000, "400000Mi / 100Mi");
        cr_assert_eq(listed + full, 4000);
        cr_assert_gt(listed, 0);
        cr_assert_leq(strlen(p.models_json), (size_t)1048576);
        isvc_plan_release(&p);
        for (int i = 0; i < 5000; i++)
                json_decref(tms[i]);
        free(tms);
}

/* W15: a non-canonical memory spelling is written canonically into models.json. */
Test(plan, canonical_memory_in_models_json)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *a = trained_model("a", "p", "+1G", 0);
        json_auto_t *b = trained_model("b", "p", "1024Mi", 1);
        json_t *tms[] = { a, b };
        CLEANUP(isvc_plan_releasep) struct isvc_plan p = compute("p", is, NULL, tms, 2);

        cr_assert_not_null(strstr(p.models_json, "\"memory\":\"1G\""), "%s", p.models_json);
        cr_assert_not_null(strstr(p.models_json, "\"memory\":\"1Gi\""), "%s", p.models_json);
}

/* W13 details: a reference to a re-created parent (new uid) is replaced; without a known uid the
 * existing reference to the same parent is kept; duplicates collapse to one. */
Test(plan, owner_reference_maintenance)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *tm = trained_model("m", "p", "1", 0);
        json_t *tms[] = { tm };
        json_t *refs;
        struct isvc_plan p;

        set_meta(tm, "ownerReferences",
                 json_pack("[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]", "apiVersion",
                           "serving.kserve.io/v1beta1", "kind", "InferenceService", "name", "p",
                           "uid", "old-uid", "apiVersion", "serving.kserve.io/v1beta1", "kind",
                           "InferenceService", "name", "p", "uid", "uid-p"));
        p = compute("p", is, NULL, tms, 1);
        refs = json_get_path(p.tms[0].metadata_patch, "metadata", "ownerReferences", NULL);
        cr_assert_eq(json_array_size(refs), 1);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(refs, 0), "uid")),
                         "uid-p");
        isvc_plan_release(&p);

        json_object_del(json_object_get(is, "metadata"), "uid");
        set_meta(tm, "ownerReferences",
                 json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "serving.kserve.io/v1beta1",
                           "kind", "InferenceService", "name", "p", "uid", "whatever"));
        p = compute("p", is, NULL, tms, 1);
        cr_assert_null(json_get_path(p.tms[0].metadata_patch, "metadata", "ownerReferences", NULL),
                       "without the parent's uid the existing reference stays");
        isvc_plan_release(&p);
}

/* Absurd memory values never fail the plan: sums beyond the representable range admit nothing. */
Test(plan, absurd_memory_sums)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1e130" });
        json_t *tms[12];
        char entries[4096] = "[";
        json_auto_t *cm = NULL;
        struct isvc_plan p;

        for (int i = 0; i < 12; i++) {
                char name[8];
                (void)snprintf(name, sizeof(name), "m%02d", i);
                tms[i] = trained_model(name, "p", "9e134", i);
                set_meta(tms[i], "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
                (void)snprintf(entries + strlen(entries), sizeof(entries) - strlen(entries),
                               "%s{\"modelName\":\"%s\"}", i ? "," : "", name);
        }
        (void)snprintf(entries + strlen(entries), sizeof(entries) - strlen(entries), "]");
        cm = configmap("modelconfig-p-0", entries);
        p = compute("p", is, cm, tms, 12);
        cr_assert_eq(p.tms[0].state, TM_STATE_DELETING);
        isvc_plan_release(&p);
        for (int i = 0; i < 12; i++)
                json_decref(tms[i]);
}

/* Issue #12: one Normal Event per models.json write, from the plan's per-model events. */
Test(plan, write_event_sums_up_the_models_and_names_the_first_few)
{
        struct tm_plan tms[8] = { 0 };
        char names[8][8];
        struct isvc_plan p = { .configmap_name = (char *)"modelconfig-sk-0",
                               .n_tms = 8,
                               .tms = tms };
        const char *reason = NULL;
        char *msg = NULL;

        for (int i = 0; i < 8; i++) {
                (void)snprintf(names[i], sizeof(names[i]), "m%d", i);
                tms[i].name = names[i];
        }
        /* nothing listed changed: no Event */
        cr_assert_eq(isvc_plan_write_event(&p, &reason, &msg), PLAN_EVENT_NONE);
        cr_assert_null(msg);
        cr_assert_null(reason);
        /* a Warning is not part of it; 7 updated are named 5 and counted 7 */
        tms[0].event_type = "Warning";
        tms[0].event_reason = "InvalidSpec";
        for (int i = 1; i < 8; i++) {
                tms[i].event_type = "Normal";
                tms[i].event_reason = "ModelUpdated";
        }
        cr_assert_eq(isvc_plan_write_event(&p, &reason, &msg), PLAN_EVENT_POST);
        cr_assert_str_eq(reason, "ModelUpdated");
        cr_assert_str_eq(msg, "models.json of ConfigMap \"modelconfig-sk-0\": updated 7 (\"m1\", "
                              "\"m2\", \"m3\", \"m4\", \"m5\" and 2 more)");
        free(msg);
        tms[7].event_reason = "ModelRemoved";
        cr_assert_eq(isvc_plan_write_event(&p, &reason, &msg), PLAN_EVENT_POST);
        cr_assert_str_eq(reason, "ModelConfigUpdated");
        cr_assert_str_eq(msg, "models.json of ConfigMap \"modelconfig-sk-0\": updated 6 (\"m1\", "
                              "\"m2\", \"m3\", \"m4\", \"m5\" and 1 more), removed 1 (\"m7\")");
        free(msg);
}

/* Issue #12: a write whose only changes drop the entries of TrainedModels being deleted posts no
 * Event (the delete is the user's own act); the plan says so before building any message. */
Test(plan, write_event_skips_a_write_that_only_drops_deleted_models)
{
        struct tm_plan tms[3] = {
                { .name = (char *)"gone-0", .state = TM_STATE_DELETING },
                { .name = (char *)"gone-1", .state = TM_STATE_DELETING },
                { .name = (char *)"bad", .state = TM_STATE_PENDING },
        };
        struct isvc_plan p = { .configmap_name = (char *)"modelconfig-sk-0",
                               .n_tms = 3,
                               .tms = tms };
        const char *reason = "unset";
        char *msg = (char *)"unset";

        for (int i = 0; i < 2; i++) {
                tms[i].event_type = "Normal";
                tms[i].event_reason = "ModelRemoved";
        }
        /* a Warning on a live model does not make the write an Event of its own */
        tms[2].event_type = "Warning";
        tms[2].event_reason = "InvalidSpec";
        cr_assert_eq(isvc_plan_write_event(&p, &reason, &msg), PLAN_EVENT_SKIPPED);
        cr_assert_null(reason);
        cr_assert_null(msg);
        /* one live model's change among them: the Event is posted, naming all of them */
        tms[2].event_type = "Normal";
        tms[2].event_reason = "ModelAdded";
        cr_assert_eq(isvc_plan_write_event(&p, &reason, &msg), PLAN_EVENT_POST);
        cr_assert_str_eq(reason, "ModelConfigUpdated");
        cr_assert_str_eq(msg, "models.json of ConfigMap \"modelconfig-sk-0\": added 1 (\"bad\"), "
                              "removed 2 (\"gone-0\", \"gone-1\")");
        free(msg);
}

/* --- without the finalizer (issue 27, plan_input.no_finalizer) ----------------------------- */

static const json_t *patched_finalizers(const struct tm_plan *p)
{
        return json_get_path(p->metadata_patch, "metadata", "finalizers", NULL);
}

/* A new model gets labels and the owner reference, no finalizer; once they are in place,
 * nothing is planned. */
Test(plan, no_finalizer_adds_none)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "");
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_t *tms[] = { tm };
        struct isvc_plan p = compute_mode("p", is, cm, tms, 1, true);

        cr_assert_not_null(p.tms[0].metadata_patch);
        cr_assert_str_eq(patched_label(&p.tms[0], "inferenceservice"), "p");
        cr_assert_null(patched_finalizers(&p.tms[0]), "no finalizer without the flag");
        cr_assert_not(p.tms[0].release_finalizer);
        cr_assert(p.tms[0].listed);
        apply(tm, &p.tms[0]);
        isvc_plan_release(&p);
        cr_assert_null(json_get_path(tm, "metadata", "finalizers", NULL));

        p = compute_mode("p", is, cm, tms, 1, true);
        cr_assert_null(p.tms[0].metadata_patch, "everything in place");
        cr_assert_not(p.tms[0].release_finalizer);
        isvc_plan_release(&p);
}

/* KServe's (or an older modelplane's) finalizer on a live model: with nothing else to patch it
 * is left to the paced release; with a metadata patch anyway, it rides along (other
 * finalizers kept). The same objects with the finalizer on: nothing to release. */
Test(plan, no_finalizer_releases_a_leftover_one)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm = configmap("modelconfig-p-0", "");
        json_auto_t *settled = trained_model("settled", "p", "100Mi", 0);
        json_auto_t *fresh = trained_model("fresh", "p", "100Mi", 1);
        json_t *tms[] = { settled, fresh };
        struct isvc_plan p;

        /* settled: everything of an older modelplane in place */
        p = compute("p", is, cm, tms, 1);
        apply(settled, &p.tms[0]);
        isvc_plan_release(&p);
        cr_assert_eq(json_array_size(json_get_path(settled, "metadata", "finalizers", NULL)), 1);
        /* fresh: KServe's finalizer and a foreign one, no labels or owner reference yet */
        set_meta(fresh, "finalizers",
                 json_pack("[s,s]", "example.com/keep", "trainedmodel.finalizer"));

        p = compute_mode("p", is, cm, tms, 2, true);
        cr_assert_null(p.tms[0].metadata_patch);
        cr_assert(p.tms[0].release_finalizer, "settled: released on its own");
        cr_assert_not(p.tms[1].release_finalizer, "fresh: the patch planned anyway carries it");
        cr_assert_eq(json_array_size(patched_finalizers(&p.tms[1])), 1);
        cr_assert_str_eq(json_string_value(json_array_get(patched_finalizers(&p.tms[1]), 0)),
                         "example.com/keep");
        cr_assert_str_eq(patched_label(&p.tms[1], "inferenceservice"), "p");
        {
                json_auto_t *j = isvc_plan_to_json(&p);
                json_t *t0 = json_array_get(json_object_get(j, "trainedModels"), 0);
                json_t *t1 = json_array_get(json_object_get(j, "trainedModels"), 1);

                cr_assert(json_is_true(json_object_get(t0, "releaseFinalizer")));
                cr_assert_null(json_object_get(t1, "releaseFinalizer"), "only where set");
        }
        isvc_plan_release(&p);

        p = compute("p", is, cm, tms, 2);
        cr_assert_not(p.tms[0].release_finalizer);
        cr_assert_not(p.tms[1].release_finalizer);
        cr_assert_null(p.tms[0].metadata_patch, "the finalizer on: settled as it is");
        cr_assert_not_null(p.tms[1].metadata_patch, "labels and owner reference");
        cr_assert_null(patched_finalizers(&p.tms[1]), "the finalizer on: in place already");
        isvc_plan_release(&p);
}

/* A model being deleted with the finalizer goes as it does with the flag on (W6): its entry
 * first, then the finalizer; switching strands nothing. */
Test(plan, no_finalizer_deleting_model_still_released_after_its_entry)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "2Gi" });
        json_auto_t *cm =
                configmap("modelconfig-p-0",
                          "[{\"modelName\":\"m\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"1G\"}}]");
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_t *tms[] = { tm };
        struct isvc_plan p;

        set_meta(tm, "deletionTimestamp", json_string("2025-01-01T00:00:00Z"));
        set_meta(tm, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        p = compute_mode("p", is, cm, tms, 1, true);
        cr_assert_eq(p.tms[0].state, TM_STATE_DELETING);
        cr_assert_str_eq(models_json_of(&p), "[]");
        cr_assert_null(p.tms[0].metadata_patch);
        cr_assert_not(p.tms[0].release_finalizer);
        isvc_plan_release(&p);

        json_object_set_new(json_object_get(cm, "data"), "models.json", json_string("[]"));
        p = compute_mode("p", is, cm, tms, 1, true);
        cr_assert_eq(p.tms[0].state, TM_STATE_FINALIZED);
        cr_assert_eq(json_array_size(patched_finalizers(&p.tms[0])), 0);
        cr_assert_not(p.tms[0].release_finalizer);
        isvc_plan_release(&p);
}

/* The level-based delete: a TrainedModel that is gone has no entry in the next models.json, and
 * its entry's memory stays counted until models.json no longer lists it, as a deleting model's
 * does (remove, then admit: never both in one write). With the finalizer on, an entry without
 * its object frees its memory at once, as before. */
Test(plan, no_finalizer_gone_model_leaves_and_holds_memory_until_unlisted)
{
        json_auto_t *is = isvc("p", (struct isvc_opts){ .ready = true, .limit = "1Gi" });
        json_auto_t *cm =
                configmap("modelconfig-p-0",
                          "[{\"modelName\":\"gone\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"512Mi\"}},"
                          "{\"modelName\":\"kept\",\"modelSpec\":{\"storageUri\":\"s3//model1\","
                          "\"framework\":\"tensorflow\",\"memory\":\"512Mi\"}}]");
        json_auto_t *kept = trained_model("kept", "p", "512Mi", 0);
        json_auto_t *next = trained_model("next", "p", "512Mi", 1);
        json_t *tms[] = { kept, next };
        const char *only_kept = "[{\"modelName\":\"kept\",\"modelSpec\":{\"storageUri\":"
                                "\"s3//model1\",\"framework\":\"tensorflow\",\"memory\":"
                                "\"512Mi\"}}]";
        struct isvc_plan p;

        p = compute_mode("p", is, cm, tms, 2, true);
        cr_assert_str_eq(models_json_of(&p), only_kept, "the gone model's entry leaves");
        cr_assert(p.tms[0].admitted);
        cr_assert_not(p.tms[1].admitted, "the gone model is still loaded");
        cr_assert_eq(p.tms[1].state, TM_STATE_WAITING_MEMORY);
        isvc_plan_release(&p);

        p = compute("p", is, cm, tms, 2);
        cr_assert(p.tms[1].admitted, "finalizer on: an entry without its object holds nothing");
        isvc_plan_release(&p);

        json_object_set_new(json_object_get(cm, "data"), "models.json", json_string(only_kept));
        p = compute_mode("p", is, cm, tms, 2, true);
        cr_assert(p.tms[1].admitted, "memory freed once unlisted");
        cr_assert(p.tms[1].listed);
        isvc_plan_release(&p);

        /* an entry whose memory does not parse (a hand edit) holds nothing */
        json_object_set_new(json_object_get(cm, "data"), "models.json",
                            json_string("[{\"modelName\":\"odd\",\"modelSpec\":{\"storageUri\":"
                                        "\"s3//x\",\"framework\":\"tensorflow\"}}]"));
        p = compute_mode("p", is, cm, tms, 2, true);
        cr_assert(p.tms[0].admitted);
        cr_assert(p.tms[1].admitted);
        isvc_plan_release(&p);
}

/* The release patch (a live model's only without the finalizer): only ours removed, the resourceVersion as precondition; none when absent. */
Test(plan, release_finalizer_patch)
{
        json_auto_t *tm = trained_model("m", "p", "1G", 0);
        json_auto_t *patch = NULL;
        json_t *bad = json_string("x");

        cr_assert_eq(tm_plan_release_finalizer(tm, true, &patch), 0);
        cr_assert_null(patch, "no finalizer, nothing to release");
        set_meta(tm, "finalizers", json_pack("[s,s]", "trainedmodel.finalizer", "example.com/b"));
        cr_assert_eq(tm_plan_release_finalizer(tm, false, &patch), 0);
        cr_assert_null(patch, "a live model keeps it with the finalizer on");
        cr_assert_eq(tm_plan_release_finalizer(tm, true, &patch), 0);
        cr_assert_not_null(patch);
        cr_assert_eq(json_array_size(json_get_path(patch, "metadata", "finalizers", NULL)), 1);
        cr_assert_str_eq(json_string_value(json_array_get(
                                 json_get_path(patch, "metadata", "finalizers", NULL), 0)),
                         "example.com/b");
        cr_assert_str_eq(json_get_string_path(patch, "metadata", "resourceVersion", NULL), "5");
        json_decref(TAKE_PTR(patch));
        cr_assert_eq(tm_plan_release_finalizer(bad, true, &patch), -EINVAL);
        cr_assert_null(patch);
        json_decref(bad);
}
