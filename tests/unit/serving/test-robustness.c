/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hostile-input sweep over the pure core: deterministic mutations of realistic objects (every
 * value replaced, in turn, by values of the wrong type or odd content) must never crash, leak or
 * return anything but the documented results. Bounded: a fixed number of mutations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "serving/isvc.h"
#include "serving/modelconfig.h"
#include "serving/plan.h"
#include "serving/quantity.h"
#include "serving/trainedmodel.h"
#include "serving/webhook-rules.h"

#define NOW ((usec_t)1750000000 * USEC_PER_SEC)

static const char *const base_tm =
        "{\"metadata\":{\"name\":\"m\",\"namespace\":\"default\",\"resourceVersion\":\"1\","
        "\"creationTimestamp\":\"2025-01-01T00:00:00Z\",\"labels\":{\"inferenceservice\":\"p\"},"
        "\"finalizers\":[\"trainedmodel.finalizer\"],\"ownerReferences\":[{\"apiVersion\":"
        "\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\",\"name\":\"p\",\"uid\":\"u\"}]},"
        "\"spec\":{\"inferenceService\":\"p\",\"model\":{\"storageUri\":\"s3://b/m\",\"framework\":"
        "\"sklearn\",\"memory\":\"128Mi\"}},\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":"
        "\"True\",\"lastTransitionTime\":\"2025-01-01T00:00:00Z\"}],\"url\":\"http://x\"}}";

static const char *const base_isvc =
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"u\",\"labels\":{\"a\":\"b\"}},"
        "\"spec\":{\"predictor\":{\"sklearn\":{\"protocolVersion\":\"v2\",\"resources\":{\"limits\":"
        "{\"memory\":\"1Gi\"}}},\"containers\":[{\"name\":\"kserve-container\",\"env\":[{\"name\":"
        "\"MULTI_MODEL_SERVER\",\"value\":\"true\"}],\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}]}},"
        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],\"url\":\"http://i\","
        "\"address\":{\"url\":\"http://a\"}}}";

static const char *const base_cm =
        "{\"metadata\":{\"name\":\"modelconfig-p-0\",\"resourceVersion\":\"9\"},\"data\":{\"models.json\":"
        "\"[{\\\"modelName\\\":\\\"m\\\",\\\"modelSpec\\\":{\\\"storageUri\\\":\\\"s3://b/m\\\","
        "\\\"framework\\\":\\\"sklearn\\\",\\\"memory\\\":\\\"128Mi\\\"}}]\",\"other\":\"x\"},"
        "\"binaryData\":{\"b\":\"AAAA\"}}";

static json_t *replacement(unsigned k)
{
        switch (k % 12) {
        case 0:
                return json_null();
        case 1:
                return json_integer(-7);
        case 2:
                return json_string("");
        case 3:
                return json_string("-1Gi");
        case 4:
                return json_array();
        case 5:
                return json_object();
        case 6:
                return json_true();
        case 7:
                return json_real(1.5);
        case 8:
                return json_string("1e999999");
        case 9:
                return json_string("<&>\xe2\x80\xa8");
        case 10:
                return json_pack("[i,s,n]", 1, "x");
        default:
                return json_string("9999999999999999999999999999999Ei");
        }
}

/* Collects pointers to every value in the tree (objects and arrays included). */
static void collect(json_t *v, json_t **out, size_t *n, size_t max)
{
        const char *key;
        json_t *child;
        size_t i;

        if (*n >= max)
                return;
        out[(*n)++] = v;
        if (json_is_object(v))
                json_object_foreach(v, key, child)
                        collect(child, out, n, max);
        else if (json_is_array(v))
                json_array_foreach(v, i, child)
                        collect(child, out, n, max);
}

/* Replaces the @target-th value (not the root) by @with, in a deep copy of @base. */
static json_t *mutate(const char *base, size_t target, unsigned kind, bool *ret_done)
{
        json_t *root = json_loads(base, 0, NULL), *nodes[256];
        size_t n = 0;

        cr_assert_not_null(root);
        collect(root, nodes, &n, 256);
        *ret_done = target + 1 >= n;
        if (target + 1 < n) {
                json_t *victim = nodes[target + 1];
                /* find its parent and replace it there */
                for (size_t i = 0; i < n; i++) {
                        const char *key;
                        json_t *child;
                        size_t j;
                        if (json_is_object(nodes[i])) {
                                json_object_foreach(nodes[i], key, child)
                                        if (child == victim) {
                                                json_object_set_new(nodes[i], key,
                                                                    replacement(kind));
                                                return root;
                                        }
                        } else if (json_is_array(nodes[i])) {
                                json_array_foreach(nodes[i], j, child)
                                        if (child == victim) {
                                                json_array_set_new(nodes[i], j, replacement(kind));
                                                return root;
                                        }
                        }
                }
        }
        return root;
}

static void exercise(json_t *tm, json_t *is, json_t *cm)
{
        struct trained_model t;
        struct isvc_info info;
        struct isvc_plan plan;
        struct tm_plan orphan;
        struct plan_input in = { .isvc_name = "p",
                                 .isvc = is,
                                 .configmap = cm,
                                 .tms = (const json_t *const *)&tm,
                                 .n_tms = 1,
                                 .now = NOW };
        char *msg = NULL;
        int r;

        r = trained_model_from_json(tm, &t);
        cr_assert(r == 0 || r == -EINVAL);
        r = isvc_info_from_json(is, &info);
        cr_assert(r == 0 || r == -EINVAL);

        r = tm_validate_admission("CREATE", tm, NULL, &msg);
        cr_assert(r >= 0 && r <= TM_ADMISSION_BAD_REQUEST, "verdict %d", r);
        cr_assert((r == TM_ADMISSION_ALLOWED) == (msg == NULL));
        free(msg);
        r = tm_validate_admission("UPDATE", tm, tm, &msg);
        cr_assert(r >= 0 && r <= TM_ADMISSION_BAD_REQUEST, "verdict %d", r);
        free(msg);

        r = isvc_plan_compute(&in, &plan);
        cr_assert(r == 0 || r == -EINVAL, "plan: %d", r);
        if (r == 0) {
                cr_assert_eq(plan.n_tms, 1);
                cr_assert(!(plan.configmap_create && plan.configmap_patch));
                if (plan.models_json) {
                        struct model_entries e;
                        cr_assert_eq(modelconfig_parse(plan.models_json, &e, NULL, 0), 0,
                                     "the planner's models.json must parse: %s", plan.models_json);
                        model_entries_release(&e);
                }
                isvc_plan_release(&plan);
        }
        r = tm_plan_orphan(tm, NOW, false, &orphan);
        cr_assert(r == 0 || r == -EINVAL);
        if (r == 0)
                tm_plan_release(&orphan);
}

/* exercise() with input slot (0 the TrainedModel, 1 the InferenceService, 2 the ConfigMap) mutated
 * at every target and kind, the other two as they are. */
static void exercise_mutations(unsigned slot)
{
        const char *const base[] = { base_tm, base_isvc, base_cm };
        json_auto_t *tm = json_loads(base_tm, 0, NULL);
        json_auto_t *is = json_loads(base_isvc, 0, NULL);
        json_auto_t *cm = json_loads(base_cm, 0, NULL);
        bool done = false;

        for (size_t target = 0; !done && target < 200; target++)
                for (unsigned kind = 0; kind < 12; kind++) {
                        json_auto_t *m = mutate(base[slot], target, kind, &done);

                        exercise(slot == 0 ? m : tm, slot == 1 ? m : is, slot == 2 ? m : cm);
                }
}

Test(robustness, mutated_trainedmodels)
{
        exercise_mutations(0);
}

Test(robustness, mutated_inferenceservices)
{
        exercise_mutations(1);
}

Test(robustness, mutated_configmaps)
{
        exercise_mutations(2);
}

/* Every prefix of a quantity and of models.json is handled (accepted or rejected), never a crash. */
Test(robustness, truncated_texts)
{
        static const char *const texts[] = { "-12.345e+6", "1.5Gi", "+.5Ki", "0.000000000001E" };
        const char *mj =
                "[{\"modelName\":\"a\",\"modelSpec\":{\"storageUri\":\"s3://x\",\"memory\":\"1Gi\"}}]";
        char buf[128];

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
                for (size_t len = 0; len <= strlen(texts[i]); len++) {
                        struct quantity q;
                        char out[QUANTITY_STRING_MAX];
                        (void)snprintf(buf, sizeof(buf), "%.*s", (int)len, texts[i]);
                        if (quantity_parse(buf, &q) == 0)
                                cr_assert_gt(quantity_to_string(&q, out, sizeof(out)), 0);
                }
        for (size_t len = 0; len <= strlen(mj); len++) {
                struct model_entries e;
                (void)snprintf(buf, sizeof(buf), "%.*s", (int)len, mj);
                if (modelconfig_parse(buf, &e, NULL, 0) == 0)
                        model_entries_release(&e);
        }
}
