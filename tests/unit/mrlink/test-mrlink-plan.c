/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "mrlink/plan.h"

static struct mrlink_config cfg = {
        .namespace_label = (char *)"modelregistry.kubeflow.org/namespace",
        .name_label = (char *)"modelregistry.kubeflow.org/name",
        .url_annotation = (char *)"modelregistry.kubeflow.org/url",
        .isid_label = (char *)"modelregistry.kubeflow.org/inference-service-id",
        .mvid_label = (char *)"modelregistry.kubeflow.org/model-version-id",
        .rmid_label = (char *)"modelregistry.kubeflow.org/registered-model-id",
        .finalizer = (char *)"modelregistry.kubeflow.org/finalizer",
        .service_annotation = (char *)"routing.kubeflow.org/external-address-rest",
        .registries_namespace = (char *)"kubeflow",
};

static json_t *J(const char *s)
{
        char buf[4096];
        json_t *j;

        cr_assert_lt(strlen(s), sizeof(buf));
        memcpy(buf, s, strlen(s) + 1);
        for (char *p = buf; *p; p++)
                if (*p == '\'')
                        *p = '"';
        j = json_loads(buf, 0, NULL);
        cr_assert_not_null(j, "bad JSON %s", buf);
        return j;
}

Test(plan, isvc_read)
{
        json_t *o = J("{'metadata':{'name':'m','namespace':'ns','uid':'u1','resourceVersion':'7',"
                      "'labels':{'modelregistry.kubeflow.org/registered-model-id':'1',"
                      "'modelregistry.kubeflow.org/model-version-id':'',"
                      "'modelregistry.kubeflow.org/namespace':'other'},"
                      "'finalizers':['x','modelregistry.kubeflow.org/finalizer']},"
                      "'spec':{'predictor':{'model':{'runtime':'kserve-ovms'}}},"
                      "'status':{'url':'https://e.com'}}");
        struct mrlink_isvc v;

        cr_assert_eq(mrlink_isvc_read(&cfg, o, &v), 0);
        cr_assert(v.has_rmid);
        cr_assert_not(v.has_isid);
        cr_assert_str_eq(v.rmid, "1");
        cr_assert_null(v.mvid, "empty MV label is omitted");
        cr_assert_str_eq(v.mr_namespace, "other");
        cr_assert_str_eq(v.runtime, "kserve-ovms");
        cr_assert_str_eq(v.status_url, "https://e.com");
        cr_assert(v.has_finalizer);
        cr_assert_null(v.deletion_timestamp);
        cr_assert(mrlink_isvc_relevant(&cfg, o));
        json_decref(o);

        /* sklearn-style predictor: no model, no crash, runtime omitted */
        o = J("{'metadata':{'name':'m','namespace':'ns','labels':{'a':'b'}},"
              "'spec':{'predictor':{'sklearn':{}}}}");
        cr_assert_eq(mrlink_isvc_read(&cfg, o, &v), 0);
        cr_assert_null(v.runtime);
        cr_assert_str_eq(v.mr_namespace, "kubeflow");
        cr_assert_not(mrlink_isvc_relevant(&cfg, o));
        json_decref(o);
}

Test(plan, service_url)
{
        json_t *svc = J("{'metadata':{'name':'model-registry','namespace':'kf'},'spec':{'ports':["
                        "{'name':'grpc-api','port':9090},{'name':'http-api','port':8080}]}}");
        json_t *ext = J("{'metadata':{'name':'mr','namespace':'kf','annotations':{"
                        "'routing.kubeflow.org/external-address-rest':'mr.example.com:443'}}}");
        json_t *noport = J("{'metadata':{'name':'mr','namespace':'kf'},'spec':{'ports':["
                           "{'name':'http','port':80}]}}");
        char buf[256];

        cr_assert_eq(mrlink_service_url(&cfg, svc, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "http://model-registry.kf.svc.cluster.local:8080");
        cr_assert_eq(mrlink_service_url(&cfg, ext, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "https://mr.example.com:443");
        cr_assert_eq(mrlink_service_url(&cfg, noport, buf, sizeof(buf)), -ENOPROTOOPT);
        cr_assert_eq(mrlink_service_url(&cfg, svc, buf, 10), -ENAMETOOLONG);
        json_decref(svc);
        json_decref(ext);
        json_decref(noport);
}

Test(plan, pick_service)
{
        json_t *none = J("[]");
        json_t *one = J("[{'metadata':{'name':'a'}}]");
        json_t *two = J(
                "[{'metadata':{'name':'model-registry'}},{'metadata':{'name':'model-registry-2'}}]");
        const json_t *svc = NULL;
        char names[128];

        cr_assert_eq(mrlink_pick_service(none, &svc, names, sizeof(names)), -ENOENT);
        cr_assert_eq(mrlink_pick_service(one, &svc, names, sizeof(names)), 0);
        cr_assert_eq(svc, json_array_get(one, 0));
        cr_assert_eq(mrlink_pick_service(two, &svc, names, sizeof(names)), -ENOTUNIQ);
        cr_assert_str_eq(names, "model-registry, model-registry-2");
        json_decref(none);
        json_decref(one);
        json_decref(two);
}

Test(plan, rewrite)
{
        char buf[128];

        cr_assert_eq(mrlink_rewrite_url(NULL, "http://a:1", buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "http://a:1");
        cr_assert_eq(mrlink_rewrite_url("http://a:1=http://127.0.0.1:5,https://b:443=http://x:2",
                                        "https://b:443", buf, sizeof(buf)),
                     0);
        cr_assert_str_eq(buf, "http://x:2");
        cr_assert_eq(mrlink_rewrite_url("http://a:1=http://127.0.0.1:5", "http://a:12", buf,
                                        sizeof(buf)),
                     0);
        cr_assert_str_eq(buf, "http://a:12", "prefix is not a match");
}

Test(plan, url_diff_and_patch)
{
        json_t *empty = J("{'id':'1'}");
        json_t *with = J("{'id':'1','customProperties':{'a':{'metadataType':'MetadataIntValue',"
                         "'int_value':'3'},'url':{'metadataType':'MetadataStringValue',"
                         "'string_value':'https://example.com'}}}");
        json_t *p;

        /* checkURLDiff truth table */
        cr_assert_not(mrlink_url_differs(empty, NULL));
        cr_assert(mrlink_url_differs(empty, "https://example.com"));
        cr_assert(mrlink_url_differs(with, NULL));
        cr_assert_not(mrlink_url_differs(with, "https://example.com"));
        cr_assert(mrlink_url_differs(with, "https://example-updated.com"));

        p = mrlink_url_patch(with, "https://example-updated.com");
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(p, "customProperties"), "url"),
                                 "string_value")),
                         "https://example-updated.com");
        cr_assert_not_null(json_object_get(json_object_get(p, "customProperties"), "a"),
                           "other custom properties are kept");
        cr_assert_str_eq(mrlink_record_url(with), "https://example.com", "input not modified");
        json_decref(p);
        p = mrlink_url_patch(with, NULL);
        cr_assert_str_eq(mrlink_record_url(p), "");
        json_decref(p);
        json_decref(empty);
        json_decref(with);
}

Test(plan, undeploy_and_id)
{
        json_t *dep = J("{'id':'4','desiredState':'DEPLOYED'}");
        json_t *und = J("{'id':4,'desiredState':'UNDEPLOYED'}");
        json_t *none = J("{}");
        char buf[16];

        cr_assert(mrlink_needs_undeploy(dep));
        cr_assert_not(mrlink_needs_undeploy(und));
        cr_assert_not(mrlink_needs_undeploy(none));
        cr_assert_str_eq(mrlink_record_id(dep, buf, sizeof(buf)), "4");
        cr_assert_str_eq(mrlink_record_id(und, buf, sizeof(buf)), "4");
        cr_assert_null(mrlink_record_id(none, buf, sizeof(buf)));
        json_decref(dep);
        json_decref(und);
        json_decref(none);
}

Test(plan, undeploy_deadline)
{
        usec_t t0, rem;

        cr_assert_eq(parse_rfc3339("2026-01-01T00:00:00Z", &t0), 0);
        cr_assert_not(mrlink_undeploy_expired("2026-01-01T00:00:00Z", t0 + 60 * USEC_PER_SEC,
                                              10 * USEC_PER_MINUTE, &rem));
        cr_assert_eq(rem, 9 * USEC_PER_MINUTE);
        cr_assert(mrlink_undeploy_expired("2026-01-01T00:00:00Z", t0 + 10 * USEC_PER_MINUTE,
                                          10 * USEC_PER_MINUTE, &rem));
        cr_assert_eq(rem, 0);
        cr_assert(mrlink_undeploy_expired("garbage", t0, 10 * USEC_PER_MINUTE, &rem));
        /* clock behind the apiserver: full timeout left */
        cr_assert_not(mrlink_undeploy_expired("2026-01-01T00:00:00Z", t0 - USEC_PER_SEC,
                                              10 * USEC_PER_MINUTE, &rem));
        cr_assert_eq(rem, 10 * USEC_PER_MINUTE);

        cr_assert_eq(mrlink_undeploy_retry_delay(0, USEC_PER_MINUTE), USEC_PER_SEC);
        cr_assert_eq(mrlink_undeploy_retry_delay(8 * USEC_PER_SEC, USEC_PER_MINUTE),
                     2 * USEC_PER_SEC);
        cr_assert_eq(mrlink_undeploy_retry_delay(9 * USEC_PER_MINUTE, 10 * USEC_PER_MINUTE),
                     60 * USEC_PER_SEC);
        cr_assert_eq(mrlink_undeploy_retry_delay(9 * USEC_PER_MINUTE, 2 * USEC_PER_SEC),
                     3 * USEC_PER_SEC, "never past the deadline");
}

Test(plan, fingerprint)
{
        json_t *a = J("{'metadata':{'name':'m','namespace':'ns','uid':'u','labels':{"
                      "'modelregistry.kubeflow.org/registered-model-id':'1'}}}");
        json_t *b = J("{'metadata':{'name':'m','namespace':'ns','uid':'u','resourceVersion':'9',"
                      "'labels':{'modelregistry.kubeflow.org/registered-model-id':'1',"
                      "'modelregistry.kubeflow.org/inference-service-id':'3'}}}");
        json_t *c = J("{'metadata':{'name':'m','namespace':'ns','uid':'u','labels':{"
                      "'modelregistry.kubeflow.org/registered-model-id':'1',"
                      "'modelregistry.kubeflow.org/inference-service-id':'3'}},"
                      "'status':{'url':'http://x'}}");
        struct mrlink_isvc va, vb, vc;
        char fa[512], fb[512], fc[512];

        cr_assert_eq(mrlink_isvc_read(&cfg, a, &va), 0);
        cr_assert_eq(mrlink_isvc_read(&cfg, b, &vb), 0);
        cr_assert_eq(mrlink_isvc_read(&cfg, c, &vc), 0);
        /* after writing label 3 the next event's object has the same fingerprint */
        cr_assert_eq(mrlink_fingerprint(&va, "3", fa, sizeof(fa)), 0);
        cr_assert_eq(mrlink_fingerprint(&vb, NULL, fb, sizeof(fb)), 0);
        cr_assert_str_eq(fa, fb);
        /* a status.url change is not skipped */
        cr_assert_eq(mrlink_fingerprint(&vc, NULL, fc, sizeof(fc)), 0);
        cr_assert_str_neq(fb, fc);
        json_decref(a);
        json_decref(b);
        json_decref(c);
}

Test(plan, finalizer_patch)
{
        json_t *o = J(
                "{'metadata':{'finalizers':['other','modelregistry.kubeflow.org/finalizer']}}");
        json_t *p;

        p = mrlink_finalizer_patch(o, cfg.finalizer, false, "12");
        cr_assert_eq(json_array_size(json_object_get(json_object_get(p, "metadata"), "finalizers")),
                     1);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "metadata"),
                                                           "resourceVersion")),
                         "12");
        json_decref(p);
        p = mrlink_finalizer_patch(o, cfg.finalizer, true, NULL);
        cr_assert_eq(json_array_size(json_object_get(json_object_get(p, "metadata"), "finalizers")),
                     2, "added once");
        json_decref(p);
        json_decref(o);
}

Test(plan, tm_read)
{
        json_t *o = J("{'metadata':{'name':'tm1','namespace':'ns','uid':'u2',"
                      "'labels':{'modelregistry.kubeflow.org/registered-model-id':'3',"
                      "'modelregistry.kubeflow.org/model-version-id':'7',"
                      "'modelregistry.kubeflow.org/inference-service-id':'99',"
                      "'modelregistry.kubeflow.org/name':'mr'},"
                      "'finalizers':['modelregistry.kubeflow.org/finalizer']},"
                      "'spec':{'inferenceService':'parent','model':{'framework':'sklearn'}},"
                      "'status':{'url':'http://parent/v1/models/tm1'}}");
        struct mrlink_isvc v;

        cr_assert_eq(mrlink_tm_read(&cfg, o, &v), 0);
        cr_assert(v.has_rmid);
        cr_assert_str_eq(v.rmid, "3");
        cr_assert_str_eq(v.mvid, "7");
        cr_assert_not(v.has_isid, "an IS-id label on a TrainedModel is not ours: found by name");
        cr_assert_null(v.isid);
        cr_assert_not(v.has_finalizer, "no finalizer of ours on TrainedModels");
        cr_assert_null(v.runtime, "the shell takes the parent's");
        cr_assert_str_eq(v.parent, "parent");
        cr_assert_str_eq(v.mr_name, "mr");
        cr_assert_str_eq(v.status_url, "http://parent/v1/models/tm1");
        cr_assert(mrlink_tm_relevant(&cfg, o));
        json_decref(o);

        /* only the IS-id label: not recorded */
        o = J("{'metadata':{'name':'tm1','namespace':'ns','labels':{"
              "'modelregistry.kubeflow.org/inference-service-id':'99'}}}");
        cr_assert_not(mrlink_tm_relevant(&cfg, o));
        json_decref(o);
        o = J("{'metadata':{'name':'tm1'}}");
        cr_assert_eq(mrlink_tm_read(&cfg, o, &v), -EINVAL);
        json_decref(o);

        o = mrlink_tm_properties("parent");
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(o, "trainedModelInferenceService"),
                                                 "string_value")),
                         "parent");
        json_decref(o);
}

Test(plan, record_patch)
{
        json_t *rec = J("{'id':'5','desiredState':'DEPLOYED','modelVersionId':'7',"
                        "'customProperties':{'url':{'metadataType':'MetadataStringValue',"
                        "'string_value':'http://a'},'trainedModelInferenceService':{"
                        "'metadataType':'MetadataStringValue','string_value':'p'}}}");
        json_t *p = NULL;

        /* in line: nothing */
        cr_assert_eq(mrlink_record_patch(rec,
                                         &(struct mrlink_record_want){ .url = "http://a",
                                                                       .follow_version = true,
                                                                       .mvid = "7",
                                                                       .deployed = true },
                                         &p),
                     0);
        cr_assert_null(p);

        /* an InferenceService's: only the url, all properties kept (checkURLDiff) */
        cr_assert_eq(mrlink_record_patch(rec,
                                         &(struct mrlink_record_want){ .url = "http://b",
                                                                       .mvid = "8" },
                                         &p),
                     0);
        cr_assert_eq(json_object_size(p), 1, "only customProperties");
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(p, "customProperties"), "url"),
                                 "string_value")),
                         "http://b");
        cr_assert_not_null(json_object_get(json_object_get(p, "customProperties"),
                                           "trainedModelInferenceService"));
        json_decref(p);

        /* a TrainedModel's: the version label changed, the record was UNDEPLOYED by hand */
        json_object_set_new(rec, "desiredState", json_string("UNDEPLOYED"));
        cr_assert_eq(mrlink_record_patch(rec,
                                         &(struct mrlink_record_want){ .url = "http://a",
                                                                       .follow_version = true,
                                                                       .mvid = "8",
                                                                       .deployed = true },
                                         &p),
                     0);
        cr_assert_eq(json_object_size(p), 2);
        cr_assert_str_eq(json_string_value(json_object_get(p, "modelVersionId")), "8");
        cr_assert_str_eq(json_string_value(json_object_get(p, "desiredState")), "DEPLOYED");
        json_decref(p);

        /* an integer id compares as its text; no version label leaves it alone */
        json_object_set_new(rec, "modelVersionId", json_integer(8));
        json_object_set_new(rec, "desiredState", json_string("DEPLOYED"));
        cr_assert_eq(mrlink_record_patch(rec,
                                         &(struct mrlink_record_want){ .url = "http://a",
                                                                       .follow_version = true,
                                                                       .mvid = "8",
                                                                       .deployed = true },
                                         &p),
                     0);
        cr_assert_null(p);
        cr_assert_eq(mrlink_record_patch(rec,
                                         &(struct mrlink_record_want){ .url = "http://a",
                                                                       .follow_version = true },
                                         &p),
                     0);
        cr_assert_null(p);
        json_decref(rec);
}
