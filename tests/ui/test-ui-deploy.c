/* SPDX-License-Identifier: Apache-2.0 */
/* Deploying a registered version: the request, the TrainedModel, targets, links, the refusals. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/deploy.h"

static const struct ui_service_ref REG = { .ns = "kubeflow", .name = "model-registry-service" };

static json_t *load(const char *text)
{
        json_error_t err;
        json_t *v = json_loads(text, 0, &err);

        cr_assert_not_null(v, "%s", err.text);
        return v;
}

Test(deploy, names_and_label_values)
{
        cr_assert(ui_rfc1123_label("iris-v1"));
        cr_assert(ui_rfc1123_label("a"));
        cr_assert_not(ui_rfc1123_label("Iris"), "upper case");
        cr_assert_not(ui_rfc1123_label("-iris"));
        cr_assert_not(ui_rfc1123_label("iris-"));
        cr_assert_not(ui_rfc1123_label("iris.v1"), "a dot: KServe's model names have none");
        cr_assert_not(ui_rfc1123_label("iris_v1"));
        cr_assert_not(ui_rfc1123_label(""));
        cr_assert_not(ui_rfc1123_label(NULL));
        cr_assert(ui_rfc1123_label(
                "a23456789012345678901234567890123456789012345678901234567890123"));
        cr_assert_not(ui_rfc1123_label(
                              "a234567890123456789012345678901234567890123456789012345678901234"),
                      "64 characters");
        cr_assert(ui_label_value("12"));
        cr_assert(ui_label_value("A.b_c-9"));
        cr_assert(ui_label_value(""));
        cr_assert_not(ui_label_value("1 OR 1"));
        cr_assert_not(ui_label_value("x'"));
        cr_assert_not(ui_label_value("_x"));
}

static int read_req(const char *text, struct ui_deploy_request *rq, char *msg, size_t len)
{
        json_t *d = load(text);
        int r = ui_deploy_request_read(d, rq, msg, len);

        json_decref(d);
        return r;
}

Test(deploy, request_checked_field_by_field)
{
        struct ui_deploy_request rq;
        char msg[512];
        json_t *d = load("{\"name\":\"iris\",\"inferenceService\":\"sk\",\"modelVersionId\":\"9\","
                         "\"memory\":\"256Mi\"}");

        cr_assert_eq(ui_deploy_request_read(d, &rq, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(rq.name, "iris");
        cr_assert_str_eq(rq.isvc, "sk");
        cr_assert_str_eq(rq.version_id, "9");
        cr_assert_str_eq(rq.memory, "256Mi");
        cr_assert_null(rq.registry, "no modelRegistry: the configured registry");
        json_decref(d);
        d = load("{\"name\":\"iris\",\"inferenceService\":\"sk\",\"modelVersionId\":\"9\","
                 "\"memory\":\"1Gi\",\"modelRegistry\":\"mr-b\"}");
        cr_assert_eq(ui_deploy_request_read(d, &rq, msg, sizeof(msg)), 0, "%s", msg);
        cr_assert_str_eq(rq.registry, "mr-b");
        json_decref(d);
        cr_assert_eq(read_req("{\"name\":\"iris\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9\",\"memory\":\"1Gi\","
                              "\"modelRegistry\":7}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "modelRegistry"), "%s", msg);

        cr_assert_eq(read_req("{\"inferenceService\":\"sk\",\"modelVersionId\":\"9\","
                              "\"memory\":\"1Gi\"}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "\"name\""), "%s", msg);
        cr_assert_eq(read_req("{\"name\":\"Iris.V1\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9\",\"memory\":\"1Gi\"}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "RFC 1123"), "%s", msg);
        cr_assert_eq(read_req("{\"name\":\"iris\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9' OR '1\",\"memory\":\"1Gi\"}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "modelVersionId"), "%s", msg);
        cr_assert_eq(read_req("{\"name\":\"iris\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9\",\"memory\":\"lots\"}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "not a Kubernetes quantity"), "%s", msg);
        cr_assert_eq(read_req("{\"name\":\"iris\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9\",\"memory\":\"0\"}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL);
        cr_assert(strstr(msg, "more than zero"), "%s", msg);
        cr_assert_eq(read_req("{\"name\":\"iris\",\"inferenceService\":\"sk\","
                              "\"modelVersionId\":\"9\",\"memory\":7}",
                              &rq, msg, sizeof(msg)),
                     -EINVAL, "memory must be a string");
}

Test(deploy, artifact_version_and_trainedmodel)
{
        json_t *arts = load("{\"items\":[{\"artifactType\":\"doc-artifact\",\"uri\":\"s3://d\"},"
                            "{\"artifactType\":\"model-artifact\",\"uri\":\"\"},"
                            "{\"artifactType\":\"model-artifact\",\"uri\":\"s3://b/iris\","
                            "\"modelFormatName\":\"sklearn\"}]}");
        json_t *version = load("{\"id\":\"9\",\"name\":\"v1\",\"registeredModelId\":\"4\"}");
        json_t *archived = load("{\"id\":\"9\",\"name\":\"v1\",\"registeredModelId\":\"4\","
                                "\"state\":\"ARCHIVED\"}");
        struct ui_deploy_request rq = { "iris-v1", "sk", "9", "256Mi", NULL };
        const json_t *a = ui_deploy_artifact(arts);
        char msg[256];
        json_t *tm;
        char *s;

        cr_assert_not_null(a);
        cr_assert_str_eq(json_string_value(json_object_get(a, "uri")), "s3://b/iris");
        cr_assert_eq(ui_deploy_version_check(version, msg, sizeof(msg)), 0);
        cr_assert_eq(ui_deploy_version_check(archived, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "archived"), "%s", msg);
        tm = ui_deploy_trainedmodel(&rq, version, a, "xgboost", &REG);
        s = json_dumps(tm, JSON_COMPACT | JSON_SORT_KEYS);
        cr_assert_str_eq(
                s,
                "{\"apiVersion\":\"serving.kserve.io/v1alpha1\",\"kind\":\"TrainedModel\","
                "\"metadata\":{\"labels\":{\"modelregistry.kubeflow.org/model-version-id\":\"9\","
                "\"modelregistry.kubeflow.org/name\":\"model-registry-service\","
                "\"modelregistry.kubeflow.org/namespace\":\"kubeflow\","
                "\"modelregistry.kubeflow.org/registered-model-id\":\"4\"},\"name\":\"iris-v1\"},"
                "\"spec\":{\"inferenceService\":\"sk\",\"model\":{\"framework\":\"sklearn\","
                "\"memory\":\"256Mi\",\"storageUri\":\"s3://b/iris\"}}}");
        free(s);
        json_decref(tm);

        /* upstream's object-storage URI: the query (endpoint, region) is the InferenceService's */
        json_object_set_new(json_array_get(json_object_get(arts, "items"), 2), "uri",
                            json_string("s3://b/iris/v1?endpoint=https%3A%2F%2Fminio%3A9000"
                                        "&defaultRegion=us-east-1"));
        tm = ui_deploy_trainedmodel(&rq, version, a, "xgboost", &REG);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(tm, "spec"), "model"),
                                 "storageUri")),
                         "s3://b/iris/v1");
        json_decref(tm);

        /* no format on the artifact: the InferenceService's; neither: none */
        json_object_del(json_array_get(json_object_get(arts, "items"), 2), "modelFormatName");
        cr_assert_str_eq(ui_deploy_framework(a, "xgboost"), "xgboost");
        cr_assert_null(ui_deploy_framework(a, NULL));
        cr_assert_null(ui_deploy_trainedmodel(&rq, version, a, NULL, &REG));
        json_array_remove(json_object_get(arts, "items"), 2);
        cr_assert_null(ui_deploy_artifact(arts), "no model artifact with a uri");
        json_decref(arts);
        json_decref(version);
        json_decref(archived);
}

Test(deploy, targets_are_multi_model)
{
        json_t *mms = load("{\"metadata\":{\"name\":\"sk\"},\"spec\":{\"predictor\":{\"sklearn\":{"
                           "\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}}}}");
        json_t *single = load("{\"metadata\":{\"name\":\"one\"},\"spec\":{\"predictor\":{"
                              "\"sklearn\":{\"storageUri\":\"gs://x\"}}}}");
        json_t *going = load(
                "{\"metadata\":{\"name\":\"sk\",\"deletionTimestamp\":"
                "\"2026-01-01T00:00:00Z\"},\"spec\":{\"predictor\":{\"sklearn\":{}}}}");
        char msg[256];

        cr_assert_eq(ui_deploy_target_check(mms, msg, sizeof(msg)), 0);
        cr_assert_eq(ui_deploy_target_check(single, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "one does not serve several models"), "%s", msg);
        cr_assert_eq(ui_deploy_target_check(going, msg, sizeof(msg)), -EINVAL);
        cr_assert(strstr(msg, "being deleted"), "%s", msg);
        json_decref(mms);
        json_decref(single);
        json_decref(going);
}

Test(deploy, link_selector_and_ours)
{
        char sel[256];
        json_t *other = load("{\"metadata\":{\"labels\":{\"modelregistry.kubeflow.org/name\":"
                             "\"elsewhere\"}}}");
        json_t *ours = load("{\"metadata\":{\"labels\":{\"modelregistry.kubeflow.org/name\":"
                            "\"model-registry-service\",\"modelregistry.kubeflow.org/namespace\":"
                            "\"kubeflow\"}}}");
        json_t *other_ns = load("{\"metadata\":{\"labels\":{"
                                "\"modelregistry.kubeflow.org/namespace\":\"team-z\"}}}");
        json_t *bare = load("{\"metadata\":{}}");

        cr_assert_gt(ui_link_selector("4", NULL, sel, sizeof(sel)), 0);
        cr_assert_str_eq(sel, "modelregistry.kubeflow.org/registered-model-id=4");
        cr_assert_gt(ui_link_selector("4", "9", sel, sizeof(sel)), 0);
        cr_assert_str_eq(sel, "modelregistry.kubeflow.org/registered-model-id=4,"
                              "modelregistry.kubeflow.org/model-version-id=9");
        cr_assert_gt(ui_link_selector(NULL, "9", sel, sizeof(sel)), 0);
        cr_assert_str_eq(sel, "modelregistry.kubeflow.org/model-version-id=9");
        cr_assert_eq(ui_link_selector(NULL, NULL, sel, sizeof(sel)), -EINVAL);
        cr_assert_eq(ui_link_selector("4,x=y", NULL, sel, sizeof(sel)), -EINVAL, "injection");
        cr_assert_eq(ui_link_selector("", NULL, sel, sizeof(sel)), -EINVAL);
        cr_assert_eq(ui_link_selector("4", "9", sel, 10), -ENAMETOOLONG);
        cr_assert(ui_link_ours(ours, &REG));
        cr_assert(ui_link_ours(bare, &REG), "no registry named: taken as ours");
        cr_assert_not(ui_link_ours(other, &REG));
        cr_assert_not(ui_link_ours(other_ns, &REG));
        json_decref(other);
        json_decref(ours);
        json_decref(other_ns);
        json_decref(bare);
}

static json_t *obj(const char *ns, const char *name, bool deleting)
{
        json_t *o = json_pack("{s:{s:s,s:s}}", "metadata", "namespace", ns, "name", name);

        if (deleting)
                json_object_set_new(json_object_get(o, "metadata"), "deletionTimestamp",
                                    json_string("2026-01-01T00:00:00Z"));
        return o;
}

Test(deploy, archive_refused_while_deployed)
{
        json_t *tms = json_pack("[o,o]", obj("team-a", "iris-v1", false),
                                obj("team-a", "going", true));
        json_t *isvcs = json_pack("[o]", obj("team-b", "sk", false));
        json_t *records = load(
                "[{\"id\":\"3\",\"name\":\"sk/uid-1\",\"desiredState\":\"DEPLOYED\"},"
                "{\"id\":\"5\",\"name\":\"far/uid-2\",\"desiredState\":\"DEPLOYED\"},"
                "{\"id\":\"6\",\"name\":\"old/uid-3\",\"desiredState\":"
                "\"UNDEPLOYED\"}]");
        json_t *none = json_array();
        char msg[1024];

        cr_assert(ui_archive_refusal("The registered model", tms, isvcs, records, &REG, msg,
                                     sizeof(msg)));
        cr_assert_str_eq(msg, "The registered model cannot be archived while it is deployed: it "
                              "is served by TrainedModel team-a/iris-v1, InferenceService "
                              "team-b/sk, InferenceService far/uid-2 (recorded DEPLOYED in the "
                              "registry, id 5). Delete those deployments first.");
        cr_assert_not(
                ui_archive_refusal("The model version", none, none, none, &REG, msg, sizeof(msg)));
        cr_assert_not(
                ui_archive_refusal("The model version", NULL, NULL, NULL, &REG, msg, sizeof(msg)));
        /* only objects being deleted, or of another registry: archived */
        {
                json_t *gone = json_pack("[o]", obj("team-a", "going", true));
                json_t *elsewhere = load("[{\"metadata\":{\"namespace\":\"x\",\"name\":\"y\","
                                         "\"labels\":{\"modelregistry.kubeflow.org/name\":"
                                         "\"other\"}}}]");

                cr_assert_not(ui_archive_refusal("The model version", gone, elsewhere, none, &REG,
                                                 msg, sizeof(msg)));
                json_decref(gone);
                json_decref(elsewhere);
        }
        /* one: "it"; five: three named and the rest counted */
        {
                json_t *one = json_pack("[o]", obj("a", "m", false));
                json_t *five = json_pack("[o,o,o,o,o]", obj("a", "m1", false),
                                         obj("a", "m2", false), obj("a", "m3", false),
                                         obj("a", "m4", false), obj("a", "m5", false));

                cr_assert(ui_archive_refusal("The model version", one, none, none, &REG, msg,
                                             sizeof(msg)));
                cr_assert(strstr(msg, "TrainedModel a/m. Delete it first."), "%s", msg);
                cr_assert(ui_archive_refusal("The model version", five, none, none, &REG, msg,
                                             sizeof(msg)));
                cr_assert(strstr(msg, "a/m3 and 2 more. Delete those"), "%s", msg);
                json_decref(one);
                json_decref(five);
        }
        json_decref(tms);
        json_decref(isvcs);
        json_decref(records);
        json_decref(none);
}

Test(deploy, assigned_memory)
{
        json_t *ok = load("{\"metadata\":{\"name\":\"a\"},\"spec\":{\"inferenceService\":\"sk\","
                          "\"model\":{\"memory\":\"256Mi\"}}}");
        json_t *refused = load("{\"metadata\":{\"name\":\"b\"},\"spec\":{\"inferenceService\":"
                               "\"sk\",\"model\":{\"memory\":\"3Gi\"}},\"status\":{\"conditions\":"
                               "[{\"type\":\"MemoryResourceAvailable\",\"status\":\"False\"}]}}");
        json_t *bad = load("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"inferenceService\":\"sk\","
                           "\"model\":{\"memory\":\"lots\"}}}");
        const char *isvc = NULL;
        int64_t b = 0;

        cr_assert(ui_tm_assigned(ok, &isvc, &b));
        cr_assert_str_eq(isvc, "sk");
        cr_assert_eq(b, 256LL << 20);
        cr_assert_not(ui_tm_assigned(refused, &isvc, &b), "not admitted: not assigned");
        cr_assert_not(ui_tm_assigned(bad, &isvc, &b));
        json_decref(ok);
        json_decref(refused);
        json_decref(bad);
}

Test(deploy, create_failures_in_words)
{
        struct kube_status clash = { .http_code = 409, .reason = "AlreadyExists" };
        struct kube_status rbac = { .http_code = 403, .message = "forbidden" };
        struct kube_status hook = { .http_code = 403,
                                    .message = "admission webhook \"trainedmodel.kserve-webhook-"
                                               "server.validator\" denied the request: bad" };
        char msg[512];

        cr_assert_eq(ui_deploy_error(-EEXIST, &clash, "alice", "team-a", "iris", NULL, msg,
                                     sizeof(msg)),
                     409);
        cr_assert_str_eq(msg, "a TrainedModel named iris already exists in namespace team-a: "
                              "choose another name");
        cr_assert_eq(ui_deploy_error(-EACCES, &rbac, "bob", "team-a", "iris", NULL, msg,
                                     sizeof(msg)),
                     403);
        cr_assert_str_eq(msg, "user bob may not create trainedmodels.serving.kserve.io in "
                              "namespace team-a");
        cr_assert_eq(ui_deploy_error(-EACCES, &hook, "bob", "team-a", "iris", NULL, msg,
                                     sizeof(msg)),
                     400);
        cr_assert(strstr(msg, "the TrainedModel was refused: admission webhook"), "%s", msg);
}
