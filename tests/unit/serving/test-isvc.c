/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/isvc.h"

#define READY                                                                                                 \
        "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"                               \
        "{\"type\":\"PredictorReady\",\"status\":\"True\"},{\"type\":\"IngressReady\",\"status\":\"True\"}]," \
        "\"url\":\"http://isvc.default.example.com\",\"address\":{\"url\":\"http://isvc.default.svc.cluster.local\"}}"

static json_t *load(const char *s)
{
        json_error_t err;
        json_t *v = json_loads(s, 0, &err);

        cr_assert_not_null(v, "bad test JSON (%s): %s", err.text, s);
        return v;
}

static struct isvc_info info_of(json_t *v)
{
        struct isvc_info i;

        cr_assert_eq(isvc_info_from_json(v, &i), 0);
        return i;
}

static void expect_fits(const struct isvc_info *i, const char *total, bool fits)
{
        struct quantity q;

        cr_assert_eq(quantity_parse(total, &q), 0);
        cr_assert_eq(isvc_memory_available(i, &q), fits, "total %s: expected fits=%d", total, fits);
}

/* §9 standard predictor: tensorflow, kserve-container, 2Gi, ready. */
Test(isvc, standard_predictor)
{
        json_auto_t *v = load(
                "{\"metadata\":{\"name\":\"isvc\",\"namespace\":\"default\",\"uid\":\"u1\","
                "\"labels\":{\"a\":\"b\"}},\"spec\":{\"predictor\":{\"minReplicas\":1,"
                "\"tensorflow\":{\"runtimeVersion\":\"1.14.0\",\"name\":\"kserve-container\","
                "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"2Gi\"},"
                "\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}}}}," READY "}");
        struct isvc_info i = info_of(v);

        cr_assert(i.ready);
        cr_assert(i.has_impl);
        cr_assert_eq(i.impl, ISVC_IMPL_TENSORFLOW);
        cr_assert(i.mms);
        cr_assert_str_eq(i.protocol, "v1");
        cr_assert_str_eq(i.name, "isvc");
        cr_assert_str_eq(i.namespace_, "default");
        cr_assert_str_eq(i.uid, "u1");
        cr_assert_not_null(i.labels);
        cr_assert_str_eq(i.url, "http://isvc.default.example.com");
        cr_assert_str_eq(i.address_url, "http://isvc.default.svc.cluster.local");
        expect_fits(&i, "2Gi", true);
        expect_fits(&i, "2049Mi", false);
        expect_fits(&i, "1G", true);
}

Test(isvc, readiness)
{
        json_auto_t *a = load("{\"metadata\":{\"name\":\"x\"}}");
        json_auto_t *b = load(
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");
        json_auto_t *c = load(
                "{\"status\":{\"conditions\":[{\"type\":\"PredictorReady\",\"status\":\"True\"}]}}");
        json_auto_t *d = load(
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");

        cr_assert_not(info_of(a).ready);
        cr_assert_not(info_of(b).ready);
        cr_assert_not(info_of(c).ready);
        cr_assert(info_of(d).ready);
        cr_assert_eq(isvc_info_from_json(NULL, &(struct isvc_info){ 0 }), -EINVAL);
}

/* §9.1 C1: empty spec → no implementation, not MMS, memory not available. */
Test(isvc, empty_spec)
{
        json_auto_t *v = load("{\"metadata\":{\"name\":\"model0-create-parent\"},\"spec\":{}}");
        struct isvc_info i = info_of(v);

        cr_assert_not(i.has_impl);
        cr_assert_not(i.mms);
        expect_fits(&i, "0", false);
}

Test(isvc, implementation_order)
{
        json_auto_t *v = load("{\"spec\":{\"predictor\":{\"sklearn\":{\"protocolVersion\":\"v2\"},"
                              "\"xgboost\":{},\"model\":{}}}}");
        struct isvc_info i = info_of(v);

        cr_assert_eq(i.impl, ISVC_IMPL_XGBOOST, "xgboost comes before sklearn");
        cr_assert_str_eq(i.protocol, "v1");
        cr_assert_str_eq(isvc_impl_to_string(i.impl), "xgboost");

        json_auto_t *n = load("{\"spec\":{\"predictor\":{\"sklearn\":null,\"model\":{}}}}");
        cr_assert_eq(info_of(n).impl, ISVC_IMPL_MODEL, "null keys are absent");
}

/* §9.1 C6 and §4.3: storageUri / storage / storageUris make a predictor single-model. */
Test(isvc, mms_rules)
{
        json_auto_t *c6 = load(
                "{\"spec\":{\"predictor\":{\"tensorflow\":{\"storageUri\":\"s3//model1\"}}}}");
        json_auto_t *empty_uri = load(
                "{\"spec\":{\"predictor\":{\"tensorflow\":{\"storageUri\":\"\"}}}}");
        json_auto_t *null_uri = load(
                "{\"spec\":{\"predictor\":{\"tensorflow\":{\"storageUri\":null}}}}");
        json_auto_t *storage = load(
                "{\"spec\":{\"predictor\":{\"model\":{\"storage\":{\"key\":\"k\"}}}}}");
        json_auto_t *x8 = load(
                "{\"spec\":{\"predictor\":{\"sklearn\":{},\"storageUris\":[{\"uri\":\"s3://a\"}]}}}");
        json_auto_t *no_uris = load(
                "{\"spec\":{\"predictor\":{\"sklearn\":{},\"storageUris\":[]}}}");
        json_auto_t *x7 = load("{\"spec\":{\"predictor\":{\"huggingface\":{}}}}");
        json_auto_t *x7b = load(
                "{\"spec\":{\"predictor\":{\"model\":{\"modelFormat\":{\"name\":\"huggingface\"}}}}}");
        json_auto_t *hf_case = load(
                "{\"spec\":{\"predictor\":{\"model\":{\"modelFormat\":{\"name\":\"HuggingFace\"}}}}}");

        cr_assert_not(info_of(c6).mms);
        cr_assert_not(info_of(empty_uri).mms, "an empty storageUri counts as present");
        cr_assert(info_of(null_uri).mms);
        cr_assert_not(info_of(storage).mms);
        cr_assert_not(info_of(x8).mms);
        cr_assert(info_of(no_uris).mms);
        cr_assert_not(info_of(x7).mms);
        cr_assert_not(info_of(x7b).mms);
        cr_assert(info_of(hf_case).mms, "the huggingface match is exact");
}

/* §9.9 X6: custom container with MULTI_MODEL_SERVER=true and PROTOCOL=v2. */
Test(isvc, custom_container)
{
        json_auto_t *x6 = load(
                "{\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"kserve-container\","
                "\"env\":[{\"name\":\"MULTI_MODEL_SERVER\",\"value\":\"true\"},"
                "{\"name\":\"PROTOCOL\",\"value\":\"v2\"}],"
                "\"resources\":{\"limits\":{\"memory\":\"4Gi\"}}}]}}}");
        struct isvc_info i = info_of(x6);
        char *path;

        cr_assert(i.has_impl);
        cr_assert_eq(i.impl, ISVC_IMPL_CUSTOM);
        cr_assert(i.mms);
        cr_assert_str_eq(i.protocol, "v2");
        expect_fits(&i, "4Gi", true);
        expect_fits(&i, "4097Mi", false);
        path = isvc_model_path(i.protocol, "tm");
        cr_assert_str_eq(path, "/v2/models/tm/infer");
        free(path);
}

Test(isvc, custom_container_rules)
{
        json_auto_t *wrong_case = load(
                "{\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"c\",\"env\":"
                "[{\"name\":\"MULTI_MODEL_SERVER\",\"value\":\"True\"}]}]}}}");
        json_auto_t *second = load(
                "{\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\","
                "\"env\":[{\"name\":\"MULTI_MODEL_SERVER\",\"value\":\"true\"}]}]}}}");
        json_auto_t *framework_and_containers = load(
                "{\"spec\":{\"predictor\":{\"sklearn\":{},\"containers\":[{\"name\":\"x\"}]}}}");
        json_auto_t *no_kserve = load(
                "{\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"x\",\"env\":"
                "[{\"name\":\"MULTI_MODEL_SERVER\",\"value\":\"true\"}],"
                "\"resources\":{\"limits\":{\"memory\":\"4Gi\"}}}]}}}");
        json_auto_t *transformer = load(
                "{\"spec\":{\"predictor\":{\"containers\":[{\"name\":\"kserve-container\","
                "\"env\":[{\"name\":\"PROTOCOL\",\"value\":\"v2\"}]},"
                "{\"name\":\"transformer-container\"}]}}}");
        struct isvc_info i;

        cr_assert_not(info_of(wrong_case).mms);
        cr_assert_not(info_of(second).mms, "only containers[0] is consulted");
        i = info_of(framework_and_containers);
        cr_assert_eq(i.impl, ISVC_IMPL_SKLEARN);
        cr_assert_not(i.mms, "containers force the env rule");
        i = info_of(no_kserve);
        cr_assert(i.mms);
        cr_assert_not(i.limit_known);
        expect_fits(&i, "0", false);
        i = info_of(transformer);
        cr_assert_str_eq(i.protocol, "v1", "transformer-container without PROTOCOL means v1");
}

Test(isvc, protocols_and_paths)
{
        json_auto_t *triton = load("{\"spec\":{\"predictor\":{\"triton\":{}}}}");
        json_auto_t *hf = load("{\"spec\":{\"predictor\":{\"huggingface\":{}}}}");
        json_auto_t *x2 = load(
                "{\"spec\":{\"predictor\":{\"model\":{\"modelFormat\":{\"name\":\"sklearn\"},"
                "\"protocolVersion\":\"v2\"}}}}");
        json_auto_t *x3 = load(
                "{\"spec\":{\"predictor\":{\"model\":{\"protocolVersion\":\"grpc-v2\"}}}}");
        char *s;

        cr_assert_str_eq(info_of(triton).protocol, "v2");
        cr_assert_str_eq(info_of(hf).protocol, "v2");
        cr_assert_str_eq(info_of(x2).protocol, "v2");

        s = isvc_model_url("http://h", info_of(x2).protocol, "m1");
        cr_assert_str_eq(s, "http://h/v2/models/m1/infer");
        free(s);
        s = isvc_model_url("http://h", "v1", "m1");
        cr_assert_str_eq(s, "http://h/v1/models/m1:predict");
        free(s);
        s = isvc_model_url("http://h", info_of(x3).protocol, "m1");
        cr_assert_str_eq(s, "http://h", "grpc: the URL is the InferenceService's");
        free(s);
        s = isvc_model_url("http://h", "custom", "m1");
        cr_assert_str_eq(s, "http://h");
        free(s);
}

/* §4.5: limits.memory absent → 0; X5 equality fits; X4 one byte over does not. */
Test(isvc, memory_limit)
{
        json_auto_t *none = load("{\"spec\":{\"predictor\":{\"sklearn\":{}}}}");
        json_auto_t *lim = load("{\"spec\":{\"predictor\":{\"sklearn\":{\"resources\":{\"limits\":"
                                "{\"memory\":\"1Gi\"}}}}}}");
        json_auto_t *bad = load("{\"spec\":{\"predictor\":{\"sklearn\":{\"resources\":{\"limits\":"
                                "{\"memory\":\"lots\"}}}}}}");
        json_auto_t *num = load("{\"spec\":{\"predictor\":{\"sklearn\":{\"resources\":{\"limits\":"
                                "{\"memory\":2147483648}}}}}}");
        struct isvc_info i = info_of(none);

        expect_fits(&i, "0", true);
        expect_fits(&i, "1", false);
        i = info_of(lim);
        expect_fits(&i, "1073741824", true);
        expect_fits(&i, "1073741825", false);
        i = info_of(bad);
        cr_assert_not(i.limit_known);
        expect_fits(&i, "0", false);
        i = info_of(num);
        expect_fits(&i, "2Gi", true);
}

Test(isvc, cache_transform_keeps_what_the_controllers_read)
{
        json_error_t err;
        json_t *in = json_loads(
                "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\","
                "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\","
                "\"labels\":{\"l\":\"1\"},\"annotations\":{\"x\":\"y\"},\"finalizers\":[\"f\"],"
                "\"resourceVersion\":\"7\",\"generation\":2,\"deletionTimestamp\":\"t\","
                "\"managedFields\":[{\"manager\":\"kubectl\"}],\"creationTimestamp\":\"c\"},"
                "\"spec\":{\"predictor\":{}},\"status\":{\"url\":\"http://a\"},\"extra\":1}",
                0, &err);
        json_t *want = json_loads(
                "{\"apiVersion\":\"serving.kserve.io/v1beta1\",\"kind\":\"InferenceService\","
                "\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"uid\":\"u\","
                "\"labels\":{\"l\":\"1\"},\"annotations\":{\"x\":\"y\"},\"finalizers\":[\"f\"],"
                "\"resourceVersion\":\"7\",\"generation\":2,\"deletionTimestamp\":\"t\"},"
                "\"spec\":{\"predictor\":{}},\"status\":{\"url\":\"http://a\"}}",
                0, &err);
        json_t *out;

        cr_assert(in && want);
        out = isvc_cache_transform(NULL, in);
        cr_assert_not_null(out);
        cr_assert(json_equal(out, want));
        json_decref(out);
        /* a bare object keeps an empty metadata */
        json_decref(want);
        want = json_loads("{\"metadata\":{}}", 0, &err);
        json_object_clear(in);
        out = isvc_cache_transform(NULL, in);
        cr_assert(json_equal(out, want));
        json_decref(out);
        json_decref(want);
        json_decref(in);
}
