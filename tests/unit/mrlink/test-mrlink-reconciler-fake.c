/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The model registry controller's shell (mrlink/reconciler.c) against the in-memory kube_api
 * fake: the Kubernetes side of its error paths (Service lookups, finalizer conflicts and 404s,
 * the undeploy deadline on the test's clock). The registry side runs against a real `modelplane
 * registry` in tests/integration/mrlink; here the registry is a closed loopback port, or for
 * TrainedModels an in-memory registry behind the client's transport port (fake_mr below).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-clock.h"
#include "fake-kube-api.h"
#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/controller.h"
#include "mrlink/config.h"
#include "mrlink/reconciler.h"
#include "registry-client/client.h"
#include "util/buf.h"

#define NS        "team"
#define NOW       ((usec_t)1750000000 * USEC_PER_SEC)
#define RMID      "modelregistry.kubeflow.org/registered-model-id"
#define NAME_L    "modelregistry.kubeflow.org/name"
#define URL_A     "modelregistry.kubeflow.org/url"
#define FINALIZER "modelregistry.kubeflow.org/finalizer"
/* nothing listens on port 1 of loopback: registry calls fail with connection refused */
#define DEAD_REGISTRY "http://127.0.0.1:1"
/* the in-memory registry's URL (any other is refused) */
#define FAKE_MR "http://fake-registry:8080"

static const struct gvr gvr_isvcs = { "serving.kserve.io", "v1beta1", "inferenceservices" };
static const struct gvr gvr_services = { "", "v1", "services" };
static const struct gvr gvr_tms = { "serving.kserve.io", "v1alpha1", "trainedmodels" };

static const char *const env[][2] = {
        { "NAMESPACE_LABEL", "modelregistry.kubeflow.org/namespace" },
        { "NAME_LABEL", NAME_L },
        { "URL_ANNOTATION", URL_A },
        { "INFERENCE_SERVICE_ID_LABEL", "modelregistry.kubeflow.org/inference-service-id" },
        { "MODEL_VERSION_ID_LABEL", "modelregistry.kubeflow.org/model-version-id" },
        { "REGISTERED_MODEL_ID_LABEL", RMID },
        { "FINALIZER", FINALIZER },
        { "SERVICE_ANNOTATION", "routing.kubeflow.org/external-address-rest" },
        { "REGISTRIES_NAMESPACE", "kubeflow" },
        { "MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT", "60s" },
};

static const char *test_env(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(env); i++)
                if (streq(env[i][0], name))
                        return env[i][1];
        return NULL;
}

struct world {
        struct fake_clock clock;
        struct fake_kube_api *fake;
        struct kube_api api;
        struct cache *isvcs, *tms;
        struct mrlink_config *cfg;
        struct mrlink_reconciler *rec;
        json_t *events; /* [[type, reason, message]] */
        char error[1024];
};

static struct world W;

/*
 * An in-memory model registry behind the client's transport: serving environments and inference
 * services by name and id, PATCH as a merge; down: every call refused (a dead registry).
 */
struct fake_mr {
        json_t *envs, *isvcs; /* arrays of records */
        bool down;
        unsigned calls;
};

static struct fake_mr MR;

static void unescape(char *s)
{
        char *o = s;

        for (; *s; s++) {
                char hex[3] = { 0 }, *end = NULL;
                unsigned long v = 0;

                if (*s == '%' && s[1] && s[2]) {
                        memcpy(hex, s + 1, 2);
                        v = strtoul(hex, &end, 16);
                }
                if (end == hex + 2) {
                        *o++ = (char)v;
                        s += 2;
                } else {
                        *o++ = *s;
                }
        }
        *o = '\0';
}

static json_t *by(json_t *list, const char *key, const char *value, const char *parent)
{
        size_t i;
        json_t *e;

        json_array_foreach(list, i, e)
                if (streq(json_string_value(json_object_get(e, key)), value) &&
                    (!parent ||
                     streq(json_string_value(json_object_get(e, "servingEnvironmentId")), parent)))
                        return e;
        return NULL;
}

static json_t *fake_mr_answer(const char *method, char *path, const char *payload, long *status)
{
        char *q = strchr(path, '?'), name[256] = "", parent[64] = "";
        json_t *list = strncmp(path, "/serving_environment", 20) == 0 ? MR.envs : MR.isvcs, *e;

        if (q) {
                *q++ = '\0';
                (void)sscanf(q, "name=%255[^&]&parentResourceId=%63s", name, parent);
                unescape(name);
        }
        *status = 200;
        if (streq(method, "GET") && q) { /* find by name */
                e = by(list, "name", name, *parent ? parent : NULL);
                *status = e ? 200 : 404;
                return e ? json_incref(e) : json_pack("{s:s}", "message", "not found");
        }
        if (streq(method, "POST")) {
                json_t *o = json_loads(payload, 0, NULL);
                char id[16];

                (void)snprintf(id, sizeof(id), "%zu",
                               json_array_size(MR.envs) + json_array_size(MR.isvcs) + 1);
                json_object_set_new(o, "id", json_string(id));
                json_array_append(list, o);
                *status = 201;
                return o;
        }
        e = by(MR.isvcs, "id", strrchr(path, '/') + 1, NULL);
        if (!e) {
                *status = 404;
                return json_pack("{s:s}", "message", "not found");
        }
        if (streq(method, "PATCH")) {
                json_auto_t *p = json_loads(payload, 0, NULL);
                json_object_update(e, p);
        }
        return json_incref(e);
}

static int fake_mr_round_trip(void *userdata, const char *method, const char *url,
                              const char *payload, long *ret_status, struct buf *reply,
                              struct error_detail *reterr)
{
        const char *api = strstr(url, "/v1alpha3");
        char path[1024];
        json_auto_t *o = NULL;
        char *text;
        int k;

        (void)userdata;
        MR.calls++;
        if (MR.down || strncmp(url, FAKE_MR "/", strlen(FAKE_MR "/")) != 0)
                return error_detail_set(reterr, ERROR_UNAVAILABLE, -ECONNREFUSED,
                                        "Connection refused");
        cr_assert_not_null(api, "%s", url);
        (void)snprintf(path, sizeof(path), "%s", api + strlen("/v1alpha3"));
        o = fake_mr_answer(method, path, payload, ret_status);
        text = json_dumps(o, JSON_COMPACT);
        cr_assert_not_null(text);
        k = buf_puts(reply, text);
        free(text);
        return k;
}

static const struct mr_transport_ops fake_mr_ops = { .round_trip = fake_mr_round_trip };
static const struct mr_transport fake_mr_transport = { .ops = &fake_mr_ops };

static void on_event(void *userdata, const json_t *obj, const char *type, const char *reason,
                     const char *message)
{
        (void)userdata;
        (void)obj;
        json_array_append_new(W.events, json_pack("[s,s,s]", type, reason, message));
}

static void setup(void)
{
        char err[256] = "";

        memset(&W, 0, sizeof(W));
        fake_clock_init(&W.clock, NOW);
        W.fake = fake_kube_api_new(&W.clock.clock);
        W.api = fake_kube_api_port(W.fake);
        W.isvcs = cache_new(NULL);
        W.tms = cache_new(NULL);
        W.events = json_array();
        MR = (struct fake_mr){ .envs = json_array(), .isvcs = json_array() };
        cr_assert(W.fake && W.isvcs && W.tms && W.events && MR.envs && MR.isvcs);
        cr_assert_eq(mrlink_config_from_env(test_env, &W.cfg, err, sizeof(err)), 0, "%s", err);
        cr_assert_eq(mrlink_reconciler_new(
                             &(struct mrlink_reconciler_options){
                                     .config = W.cfg,
                                     .inferenceservices = W.isvcs,
                                     .trainedmodels = W.tms,
                                     .transport = &fake_mr_transport,
                                     .event = on_event,
                             },
                             &W.rec),
                     0);
}

static void teardown(void)
{
        mrlink_reconciler_free(W.rec);
        mrlink_config_free(W.cfg);
        cache_free(W.isvcs);
        cache_free(W.tms);
        json_decref(MR.envs);
        json_decref(MR.isvcs);
        fake_kube_api_free(W.fake);
        json_decref(W.events);
}

TestSuite(mrlink_shell, .init = setup, .fini = teardown);

static void sync_cache(void)
{
        json_auto_t *list = NULL;

        fake_kube_api_clear_faults(W.fake);
        cr_assert_eq(kube_api_list(&W.api, &gvr_isvcs, NS, NULL, &list, NULL), 0);
        cr_assert_eq(cache_replace(W.isvcs, json_object_get(list, "items"), NULL, NULL), 0);
        json_decref(list);
        list = NULL;
        cr_assert_eq(kube_api_list(&W.api, &gvr_tms, NS, NULL, &list, NULL), 0);
        cr_assert_eq(cache_replace(W.tms, json_object_get(list, "items"), NULL, NULL), 0);
        fake_kube_api_reset_calls(W.fake);
        json_array_clear(W.events);
}

static int reconcile_with(struct reconciler rc, const char *name, struct reconcile_result *res)
{
        char key[128];
        const struct log_fields lf = { .controller = "test", .object = key };
        struct reconcile_ctx ctx = { .userdata = rc.userdata,
                                     .api = &W.api,
                                     .clock = &W.clock.clock,
                                     .log = &lf,
                                     .error = W.error,
                                     .error_size = sizeof(W.error) };

        (void)snprintf(key, sizeof(key), NS "/%s", name);
        W.error[0] = '\0';
        *res = (struct reconcile_result){ .outcome = RECONCILE_DONE };
        return rc.reconcile(&ctx, key, res);
}

static int reconcile(const char *name, struct reconcile_result *res)
{
        return reconcile_with(mrlink_reconciler_get(W.rec), name, res);
}

static int reconcile_tm(const char *name, struct reconcile_result *res)
{
        return reconcile_with(mrlink_reconciler_get_trainedmodels(W.rec), name, res);
}

/* An InferenceService with the RM-id label; url: the URL annotation (NULL: none); name: the
 * NAME label (NULL: none); deleting: a deletionTimestamp of NOW with our finalizer. */
static void put_isvc(const char *name, const char *url, const char *reg_name, bool finalizer,
                     bool deleting)
{
        json_auto_t *o = json_pack("{s:s,s:s,s:{s:s,s:{s:s},s:{}},s:{},s:{s:s}}", "apiVersion",
                                   "serving.kserve.io/v1beta1", "kind", "InferenceService",
                                   "metadata", "name", name, "labels", RMID, "1", "annotations",
                                   "spec", "status", "url", "http://isvc.example.com");
        json_t *meta = json_object_get(o, "metadata");
        char ts[64];

        cr_assert_not_null(o);
        if (url)
                json_object_set_new(json_object_get(meta, "annotations"), URL_A, json_string(url));
        if (reg_name)
                json_object_set_new(json_object_get(meta, "labels"), NAME_L, json_string(reg_name));
        if (finalizer)
                json_object_set_new(meta, "finalizers", json_pack("[s]", FINALIZER));
        if (deleting) {
                cr_assert_eq(format_rfc3339(NOW, ts, sizeof(ts)), 0);
                json_object_set_new(meta, "deletionTimestamp", json_string(ts));
        }
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_isvcs, NS, o), 0);
}

static void put_service(const char *ns, const char *name, bool http_port)
{
        json_auto_t *o = json_pack("{s:{s:s,s:{s:s}},s:{s:[{s:s,s:i}]}}", "metadata", "name", name,
                                   "labels", "component", "model-registry", "spec", "ports", "name",
                                   http_port ? "http-api" : "grpc-api", "port", 8080);

        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_services, ns, o), 0);
}

static bool has_event(const char *reason, const char *needle)
{
        for (size_t i = 0; i < json_array_size(W.events); i++) {
                json_t *e = json_array_get(W.events, i);
                if (streq(json_string_value(json_array_get(e, 1)), reason) &&
                    (!needle || strstr(json_string_value(json_array_get(e, 2)), needle)))
                        return true;
        }
        return false;
}

static bool isvc_has_finalizer(const char *name)
{
        json_auto_t *o = fake_kube_api_get(W.fake, &gvr_isvcs, NS, name);
        const json_t *f = json_get_path(o, "metadata", "finalizers", NULL);

        for (size_t i = 0; i < json_array_size(f); i++)
                if (streq(json_string_value(json_array_get(f, i)), FINALIZER))
                        return true;
        return false;
}

Test(mrlink_shell, finalizer_add_conflict_is_an_error_before_any_registry_call)
{
        struct reconcile_result res;
        int r;

        put_isvc("a", DEAD_REGISTRY, NULL, false, false);
        sync_cache();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "inferenceservices", 1, 1, 409),
                     0);
        r = reconcile("a", &res);
        cr_assert_eq(r, -ESTALE, "%d %s", r, W.error);
        cr_assert_not_null(strstr(W.error, "InferenceService patch failed"), "%s", W.error);
        struct mrlink_reconciler_stats st;
        mrlink_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.registry_calls, 0);

        /* the retry adds it, then the registry's refusal is the error */
        r = reconcile("a", &res);
        cr_assert(isvc_has_finalizer("a"));
        cr_assert_eq(r, -ECONNREFUSED, "%d %s", r, W.error);
        cr_assert_str_not_empty(W.error);
}

Test(mrlink_shell, finalizer_add_on_a_vanished_object_is_done)
{
        struct reconcile_result res;

        put_isvc("a", DEAD_REGISTRY, NULL, false, false);
        sync_cache();
        cr_assert(fake_kube_api_remove(W.fake, &gvr_isvcs, NS, "a"));
        cr_assert_eq(reconcile("a", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
}

Test(mrlink_shell, registry_service_lookup_errors)
{
        struct reconcile_result res;
        int r;

        /* none in the registries namespace */
        put_isvc("a", NULL, NULL, false, false);
        sync_cache();
        r = reconcile("a", &res);
        cr_assert_eq(r, -ENOENT);
        cr_assert(has_event("RegistryServiceNotFound", "kubeflow"));
        cr_assert_not_null(strstr(W.error, "Cannot resolve the model registry"), "%s", W.error);

        /* the list fails */
        sync_cache();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_LIST, "services", 1, 1, 500), 0);
        r = reconcile("a", &res);
        cr_assert_eq(r, -EIO);
        cr_assert_not_null(strstr(W.error, "listing model registry Services in kubeflow"), "%s",
                           W.error);

        /* two: ambiguous, a Warning and a slow requeue, no hot loop */
        put_service("kubeflow", "one", true);
        put_service("kubeflow", "two", true);
        sync_cache();
        cr_assert_eq(reconcile("a", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        cr_assert_geq(res.requeue_after, USEC_PER_MINUTE);
        cr_assert(has_event("RegistryServiceAmbiguous", "one"));

        /* named, but without an http port */
        put_isvc("b", NULL, "grpc", false, false);
        put_service("kubeflow", "grpc", false);
        sync_cache();
        cr_assert_eq(reconcile("b", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        cr_assert(has_event("RegistryServiceNoPort", "grpc"));

        /* named and missing: a 404 of the GET */
        put_isvc("c", NULL, "absent", false, false);
        sync_cache();
        cr_assert_eq(reconcile("c", &res), -ENOENT);
        cr_assert_not_null(strstr(W.error, "kubeflow/absent"), "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0,
                     "no finalizer without a registry");
}

Test(mrlink_shell, deleting_with_the_registry_service_gone_drops_the_finalizer)
{
        struct reconcile_result res;

        put_isvc("a", NULL, "gone", true, true);
        sync_cache();
        cr_assert_eq(reconcile("a", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        cr_assert(has_event("UndeployFailed", "finalizer " FINALIZER " removed"));
        json_auto_t *o = fake_kube_api_get(W.fake, &gvr_isvcs, NS, "a");
        cr_assert_null(o, "the last finalizer went: the object is deleted");
}

Test(mrlink_shell, deleting_with_a_dead_registry_waits_for_the_deadline_on_the_clock)
{
        struct reconcile_result res;

        put_isvc("a", DEAD_REGISTRY, NULL, true, true);
        sync_cache();
        fake_clock_advance(&W.clock, 5 * USEC_PER_SEC);
        cr_assert_eq(reconcile("a", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER, "finalizer kept, retried");
        cr_assert_gt(res.requeue_after, 0);
        cr_assert(isvc_has_finalizer("a"));
        cr_assert_not(has_event("UndeployFailed", NULL));

        /* the deadline passes on the test's clock, not the machine's */
        fake_clock_advance(&W.clock, 60 * USEC_PER_SEC);
        sync_cache();
        cr_assert_eq(reconcile("a", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        cr_assert(has_event("UndeployFailed", "within 60s of deletion"));
        json_auto_t *o = fake_kube_api_get(W.fake, &gvr_isvcs, NS, "a");
        cr_assert_null(o);
}

Test(mrlink_shell, finalizer_removal_404_is_done_and_500_is_retried)
{
        struct reconcile_result res;
        int r;

        /* labels lost: our leftover finalizer goes */
        json_auto_t *o = json_pack("{s:{s:s,s:[s]}}", "metadata", "name", "x", "finalizers",
                                   FINALIZER);
        fake_kube_api_put(W.fake, &gvr_isvcs, NS, o);
        sync_cache();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "inferenceservices", 1, 1, 500),
                     0);
        r = reconcile("x", &res);
        cr_assert_eq(r, -EIO);
        cr_assert_not_null(strstr(W.error, "injected failure 500"), "%s", W.error);
        cr_assert(isvc_has_finalizer("x"));

        sync_cache();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "inferenceservices", 1, 1, 404),
                     0);
        cr_assert_eq(reconcile("x", &res), 0, "%s", W.error);
        cr_assert_str_empty(W.error);

        sync_cache();
        cr_assert_eq(reconcile("x", &res), 0, "%s", W.error);
        cr_assert_not(isvc_has_finalizer("x"));
}

/* TrainedModels (a console deploy): the four link labels, the URL annotation naming the fake
 * registry, parent "parent" (an InferenceService with runtime kserve-mlserver). */
#define MVID        "modelregistry.kubeflow.org/model-version-id"
#define TM_UID      "11111111-2222-4333-8444-555555555555"
#define TM_REC_NAME "tm1/" TM_UID

static void put_tm(const char *mvid, bool deleting)
{
        json_auto_t *o = json_pack(
                "{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:{s:s}},s:{s:s,s:{s:s,s:s}},s:{s:s}}",
                "apiVersion", "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata",
                "name", "tm1", "uid", TM_UID, "labels", RMID, "1", MVID, mvid, NAME_L, "mr",
                "modelregistry.kubeflow.org/namespace", "kubeflow", "annotations", URL_A, FAKE_MR,
                "spec", "inferenceService", "parent", "model", "storageUri", "s3://b/m", "memory",
                "1Gi", "status", "url", "http://parent.team/v1/models/tm1");
        char ts[64];

        cr_assert_not_null(o);
        if (deleting) {
                json_t *meta = json_object_get(o, "metadata");
                cr_assert_eq(format_rfc3339(NOW, ts, sizeof(ts)), 0);
                json_object_set_new(meta, "deletionTimestamp", json_string(ts));
                json_object_set_new(meta, "finalizers", json_pack("[s]", "trainedmodel.finalizer"));
        }
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_tms, NS, o), 0);
}

static void put_parent(void)
{
        json_auto_t *o = json_pack("{s:{s:s},s:{s:{s:{s:s}}}}", "metadata", "name", "parent",
                                   "spec", "predictor", "model", "runtime", "kserve-mlserver");

        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_isvcs, NS, o), 0);
}

static const char *rec_str(const char *field)
{
        json_t *r = by(MR.isvcs, "name", TM_REC_NAME, NULL);

        cr_assert_not_null(r, "no record %s", TM_REC_NAME);
        return json_string_value(json_object_get(r, field));
}

Test(mrlink_shell, tm_created_is_recorded_in_its_namespace_environment)
{
        struct reconcile_result res;
        json_t *r;

        put_parent();
        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        cr_assert_eq(MR.calls, 4, "environment find + create, record find + create: %u", MR.calls);
        cr_assert_eq(json_array_size(MR.isvcs), 1);
        cr_assert_str_eq(json_string_value(json_object_get(json_array_get(MR.envs, 0), "name")),
                         NS);
        cr_assert_str_eq(rec_str("registeredModelId"), "1");
        cr_assert_str_eq(rec_str("modelVersionId"), "7");
        cr_assert_str_eq(rec_str("desiredState"), "DEPLOYED");
        cr_assert_str_eq(rec_str("runtime"), "kserve-mlserver", "the parent's runtime");
        r = by(MR.isvcs, "name", TM_REC_NAME, NULL);
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(r, "customProperties"),
                                                 "trainedModelInferenceService"),
                                 "string_value")),
                         "parent");
        cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(r, "customProperties"), "url"),
                                 "string_value")),
                         "http://parent.team/v1/models/tm1");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0,
                     "no finalizer, no label on TrainedModels");

        /* a resync: no registry call */
        MR.calls = 0;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 0);
        /* the InferenceService reconciler does not see it */
        cr_assert_eq(reconcile("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 0);
}

Test(mrlink_shell, tm_version_label_changed_is_followed)
{
        struct reconcile_result res;

        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_null(rec_str("runtime"), "no parent in the cache: runtime omitted");
        put_tm("8", false);
        sync_cache();
        MR.calls = 0;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 2, "find by name (environment remembered) + PATCH: %u", MR.calls);
        cr_assert_eq(json_array_size(MR.isvcs), 1, "the same record");
        cr_assert_str_eq(rec_str("modelVersionId"), "8");
        cr_assert_str_eq(rec_str("desiredState"), "DEPLOYED");
}

Test(mrlink_shell, tm_deleted_marks_the_record_undeployed)
{
        struct reconcile_result res;

        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert(fake_kube_api_remove(W.fake, &gvr_tms, NS, "tm1"));
        sync_cache();
        MR.calls = 0;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        cr_assert_str_eq(rec_str("desiredState"), "UNDEPLOYED");
        cr_assert_eq(MR.calls, 1, "one PATCH: %u", MR.calls);
        MR.calls = 0;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 0, "forgotten once UNDEPLOYED");

        /* made again under the same name: a new record, DEPLOYED */
        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_str_eq(rec_str("desiredState"), "DEPLOYED", "found by name again, redeployed");
}

Test(mrlink_shell, tm_deleting_with_the_serving_finalizer_is_undeployed_at_once)
{
        struct reconcile_result res;

        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        put_tm("7", true);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_str_eq(rec_str("desiredState"), "UNDEPLOYED");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);
        MR.calls = 0;
        cr_assert(fake_kube_api_remove(W.fake, &gvr_tms, NS, "tm1"));
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 0, "already UNDEPLOYED: nothing left to do when it is gone");
}

Test(mrlink_shell, tm_registry_down_then_back)
{
        struct reconcile_result res;
        int r;

        /* created while the registry is down: retried by the runner, then recorded */
        MR.down = true;
        put_tm("7", false);
        sync_cache();
        r = reconcile_tm("tm1", &res);
        cr_assert_eq(r, -ECONNREFUSED, "%d %s", r, W.error);
        cr_assert_not_null(strstr(W.error, "ServingEnvironment"), "%s", W.error);
        MR.down = false;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_str_eq(rec_str("desiredState"), "DEPLOYED");

        /* deleted while it is down: a growing delay, then UNDEPLOYED once it is back */
        MR.down = true;
        cr_assert(fake_kube_api_remove(W.fake, &gvr_tms, NS, "tm1"));
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        cr_assert_geq(res.requeue_after, USEC_PER_SEC);
        fake_clock_advance(&W.clock, 10 * USEC_PER_SEC);
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        MR.down = false;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        cr_assert_str_eq(rec_str("desiredState"), "UNDEPLOYED");
}

Test(mrlink_shell, tm_registry_gone_for_good_is_given_up_after_the_timeout)
{
        struct reconcile_result res;

        put_tm("7", false);
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        MR.down = true;
        cr_assert(fake_kube_api_remove(W.fake, &gvr_tms, NS, "tm1"));
        sync_cache();
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        fake_clock_advance(&W.clock, 61 * USEC_PER_SEC);
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE, "given up after the undeploy timeout (60s)");
        MR.calls = 0;
        cr_assert_eq(reconcile_tm("tm1", &res), 0, "%s", W.error);
        cr_assert_eq(MR.calls, 0);
}
