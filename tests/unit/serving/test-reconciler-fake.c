/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TrainedModel shell (serving/reconciler.c) against the in-memory kube_api fake: the error
 * paths (409s, 404s, 429, 500s, timeouts, partial failures) that only the real-apiserver tier
 * reached before. The "informer" here is the test: sync_caches() lists the fake into the caches between
 * reconciles, as the watch would.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fake-clock.h"
#include "fake-kube-api.h"
#include "fake-serving.h"
#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/controller.h"
#include "kube/workqueue.h"
#include "serving/placement.h"
#include "serving/reconciler.h"
#include "serving/replicas.h"

#define NS  "default"
#define NOW ((usec_t)1750000000 * USEC_PER_SEC)

struct world {
        struct fake_clock clock;
        struct fake_kube_api *fake;
        struct kube_api api;
        struct cache *tms, *isvcs;
        struct tm_reconciler *rec;
        json_t *events; /* [[type, reason, name, kind, message]] */
        char error[1024];
};

static struct world W;
static pthread_mutex_t events_lock = PTHREAD_MUTEX_INITIALIZER;
/* Extra ports for reconcile_for_each (the fake is thread-safe); run() uses n_fanout of them. */
static struct kube_api fanout[7];
static size_t n_fanout;

static void on_event(void *userdata, const json_t *obj, const char *type, const char *reason,
                     const char *message)
{
        (void)userdata;
        (void)pthread_mutex_lock(&events_lock);
        json_array_append_new(W.events,
                              json_pack("[s,s,s,s?,s]", type, reason,
                                        json_get_string_path(obj, "metadata", "name", NULL),
                                        json_get_string_path(obj, "kind", NULL), message));
        (void)pthread_mutex_unlock(&events_lock);
}

static void setup(void)
{
        memset(&W, 0, sizeof(W));
        fake_clock_init(&W.clock, NOW);
        W.fake = fake_kube_api_new(&W.clock.clock);
        cr_assert_not_null(W.fake);
        W.api = fake_kube_api_port(W.fake);
        W.tms = cache_new(NULL);
        W.isvcs = cache_new(NULL);
        cr_assert(W.tms && W.isvcs);
        cr_assert_eq(cache_add_index(W.tms, TM_INDEX_ISVC, tm_index_isvc, NULL), 0);
        W.events = json_array();
        cr_assert_eq(tm_reconciler_new(
                             &(struct tm_reconciler_options){
                                     .trainedmodels = W.tms,
                                     .inferenceservices = W.isvcs,
                                     .event = on_event,
                             },
                             &W.rec),
                     0);
}

static void teardown(void)
{
        tm_reconciler_free(W.rec);
        cache_free(W.tms);
        cache_free(W.isvcs);
        fake_kube_api_free(W.fake);
        json_decref(W.events);
}

TestSuite(tm_shell, .init = setup, .fini = teardown);

/* The informer's part: the caches get what the API server has. */
static void sync_caches(void)
{
        cr_assert_eq(fake_serving_sync(W.fake, &W.api, NS, W.tms, W.isvcs), 0);
}

static int run(struct reconciler (*get)(struct tm_reconciler *), const char *key,
               struct reconcile_result *res)
{
        const struct log_fields lf = { .controller = "test", .object = key };
        struct reconciler rc = get(W.rec);
        struct reconcile_ctx ctx = { .userdata = rc.userdata,
                                     .api = &W.api,
                                     .clock = &W.clock.clock,
                                     .log = &lf,
                                     .error = W.error,
                                     .error_size = sizeof(W.error),
                                     .fanout = fanout,
                                     .n_fanout = n_fanout };

        for (size_t i = 0; i < ELEMENTSOF(fanout); i++)
                fanout[i] = W.api;

        W.error[0] = '\0';
        *res = (struct reconcile_result){ .outcome = RECONCILE_DONE };
        return rc.reconcile(&ctx, key, res);
}

static int reconcile_isvc(const char *name, struct reconcile_result *res)
{
        char key[128];

        (void)snprintf(key, sizeof(key), NS "/%s", name);
        return run(tm_reconciler_get, key, res);
}

static void put_isvc(const char *name, const char *memory)
{
        cr_assert_gt(fake_serving_put_isvc(W.fake, NS, name, memory, "http://isvc.example.com"), 0);
}

static void put_tm(const char *name, const char *parent, const char *memory)
{
        cr_assert_gt(fake_serving_put_tm(W.fake, NS, name, parent, "s3://bucket/model", memory), 0);
}

static json_t *get_obj(const struct gvr *g, const char *name)
{
        return fake_kube_api_get(W.fake, g, NS, name);
}

static const char *models_json(json_t *cm)
{
        return json_get_string_path(cm, "data", "models.json", NULL);
}

static bool has_finalizer(const json_t *tm)
{
        const json_t *f = json_get_path(tm, "metadata", "finalizers", NULL);

        for (size_t i = 0; i < json_array_size(f); i++)
                if (streq(json_string_value(json_array_get(f, i)), "trainedmodel.finalizer"))
                        return true;
        return false;
}

static const char *condition(const json_t *tm, const char *type)
{
        const json_t *cs = json_get_path(tm, "status", "conditions", NULL);

        for (size_t i = 0; i < json_array_size(cs); i++)
                if (streq(json_get_string_path(json_array_get(cs, i), "type", NULL), type))
                        return json_get_string_path(json_array_get(cs, i), "status", NULL);
        return NULL;
}

/* Reconciles until nothing is written any more (at most 5 rounds). */
static void converge(const char *isvc)
{
        struct reconcile_result res;

        for (int i = 0; i < 5; i++) {
                sync_caches();
                cr_assert_geq(reconcile_isvc(isvc, &res), 0, "reconcile failed: %s", W.error);
                if (fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL) == 0 &&
                    fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, NULL) == 0)
                        return;
        }
        cr_assert_fail("no convergence");
}

Test(tm_shell, happy_path_writes_finalizer_configmap_status_then_nothing)
{
        struct reconcile_result res;
        struct tm_reconciler_stats st;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.plans, 2, "a pass that writes plans again after its writes: %lu", st.plans);

        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_not_null(cm, "ConfigMap not created");
        cr_assert_not_null(strstr(models_json(cm), "\"modelName\":\"m1\""), "%s", models_json(cm));
        cr_assert(has_finalizer(tm), "finalizer missing");
        cr_assert_str_eq(json_get_string_path(tm, "metadata", "labels", "inferenceservice", NULL),
                         "sk");
        cr_assert_not_null(condition(tm, "Ready"));
        cr_assert_geq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 1);

        converge("sk");
        /* level-based and idempotent: one more round writes nothing, and plans once */
        sync_caches();
        tm_reconciler_get_stats(W.rec, &st);
        unsigned long plans = st.plans;
        cr_assert_eq(reconcile_isvc("sk", &res), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, NULL), 0);
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.plans, plans + 1, "a pass with nothing to write planned %lu times",
                     st.plans - plans);
        cr_assert_eq(st.configmap_writes, 1);
        cr_assert_eq(st.configmap_conflicts, 0);
        /* one Normal Event for the one models.json write, on the InferenceService */
        cr_assert_eq(json_array_size(W.events), 1, "%s", json_dumps(W.events, 0));
        json_t *e = json_array_get(W.events, 0);
        cr_assert_str_eq(json_string_value(json_array_get(e, 0)), "Normal");
        cr_assert_str_eq(json_string_value(json_array_get(e, 1)), "ModelAdded");
        cr_assert_str_eq(json_string_value(json_array_get(e, 2)), "sk");
        cr_assert_str_eq(json_string_value(json_array_get(e, 3)), "InferenceService");
        cr_assert_str_eq(json_string_value(json_array_get(e, 4)),
                         "models.json of ConfigMap \"modelconfig-sk-0\": added 1 (\"m1\")");
        cr_assert_eq(st.events_posted, 1);
}

/* Issue #12: the controller's own writes during churn. A write that adds 8 models and one that
 * removes 7 and adds 1 post one Event each, on the InferenceService, counting and naming them. */
Test(tm_shell, one_normal_event_per_models_json_write_counts_and_names_the_models)
{
        struct reconcile_result res;
        struct kube_status st = { 0 };
        char name[16];

        put_isvc("sk", "10Gi");
        for (int i = 0; i < 8; i++) {
                (void)snprintf(name, sizeof(name), "m%d", i);
                put_tm(name, "sk", "100Mi");
        }
        converge("sk");
        cr_assert_eq(json_array_size(W.events), 1, "%s", json_dumps(W.events, 0));
        cr_assert_str_eq(json_string_value(json_array_get(json_array_get(W.events, 0), 4)),
                         "models.json of ConfigMap \"modelconfig-sk-0\": added 8 (\"m0\", "
                         "\"m1\", \"m2\", \"m3\", \"m4\" and 3 more)");
        for (int i = 0; i < 7; i++) {
                (void)snprintf(name, sizeof(name), "m%d", i);
                cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, name, NULL, NULL, &st),
                             0);
        }
        put_tm("n1", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(json_array_size(W.events), 2, "%s", json_dumps(W.events, 0));
        json_t *e = json_array_get(W.events, 1);
        cr_assert_str_eq(json_string_value(json_array_get(e, 1)), "ModelConfigUpdated");
        cr_assert_str_eq(json_string_value(json_array_get(e, 2)), "sk");
        cr_assert_str_eq(json_string_value(json_array_get(e, 4)),
                         "models.json of ConfigMap \"modelconfig-sk-0\": added 1 (\"n1\"), "
                         "removed 7 (\"m0\", \"m1\", \"m2\", \"m3\", \"m4\" and 2 more)");
        /* nothing changed: no Event */
        converge("sk");
        cr_assert_eq(json_array_size(W.events), 2, "%s", json_dumps(W.events, 0));
}

/* sk (1Gi) with m1 (100Mi) and an existing, empty modelconfig-sk-0; caches synced. */
static void seed_empty_configmap(void)
{
        json_auto_t *cm = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "modelconfig-sk-0",
                                    "data", "models.json", "[]");

        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_configmaps, NS, cm), 0);
        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
}

Test(tm_shell, configmap_patch_409_rereads_and_replans_at_once)
{
        struct reconcile_result res;
        struct tm_reconciler_stats st;

        seed_empty_configmap();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "configmaps", 1, 1, 409), 0);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 2);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 2);
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.configmap_conflicts, 1);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm), "\"modelName\":\"m1\""));
}

Test(tm_shell, configmap_conflicts_without_end_hand_the_key_back)
{
        struct reconcile_result res;

        seed_empty_configmap();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "configmaps", 1, 1000, 409), 0);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_RETRY);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 8);
        /* nothing was claimed: no status was written while models.json is not */
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 0);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_str_eq(models_json(cm), "[]");
}

Test(tm_shell, configmap_create_already_exists_replans_with_the_winner)
{
        struct reconcile_result res;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_CREATE, "configmaps", 1, 1, 409), 0);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps"), 2);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(cm);
        cr_assert_not_null(strstr(models_json(cm), "\"modelName\":\"m1\""));
}

Test(tm_shell, status_patch_500_is_an_error_with_its_message_then_retried)
{
        struct reconcile_result res;
        int r;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status", 1, 1, 500),
                     0);
        r = reconcile_isvc("sk", &res);
        cr_assert_eq(r, -EIO);
        cr_assert_not(reconcile_error_is_terminal(r));
        cr_assert_not_null(strstr(W.error, "Failed to patch status of TrainedModel default/m1"),
                           "%s", W.error);
        cr_assert_not_null(strstr(W.error, "injected failure 500"), "%s", W.error);
        /* the ConfigMap write before it stands */
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(cm);

        /* the runner's retry */
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_not_null(condition(tm, "Ready"));
}

Test(tm_shell, configmap_get_429_and_timeout_are_transient_errors)
{
        struct reconcile_result res;
        int r;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_GET, "configmaps", 1, 1, 429), 0);
        r = reconcile_isvc("sk", &res);
        cr_assert_eq(r, -EAGAIN);
        cr_assert_not_null(strstr(W.error, "Failed to get ConfigMap default/modelconfig-sk-0"),
                           "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0,
                     "nothing written before the ConfigMap is known");

        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_CREATE, "configmaps", 1, 1, 0), 0);
        r = reconcile_isvc("sk", &res);
        cr_assert_eq(r, -ETIMEDOUT);
        cr_assert_not_null(strstr(W.error, "Failed to write ConfigMap"), "%s", W.error);
        converge("sk");
}

Test(tm_shell, finalizer_removal_404_means_done)
{
        struct reconcile_result res;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        converge("sk");
        /* kubectl delete: the finalizer holds it */
        struct kube_status st = { 0 };
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m1", NULL, NULL, &st), 0);
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_not_null(json_get_path(tm, "metadata", "deletionTimestamp", NULL));
        sync_caches();
        /* someone else removed it meanwhile */
        cr_assert(fake_kube_api_remove(W.fake, &gvr_trainedmodels, NS, "m1"));
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_str_empty(W.error);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_null(strstr(models_json(cm), "\"m1\""), "still listed: %s", models_json(cm));

        /* the cache still shows m1 with its finalizer: no second attempt from it */
        fake_kube_api_reset_calls(W.fake);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 0,
                     "finalizer removal retried on a gone object");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 0);
}

/* Issue #12: the informer delivers our own writes late. A reconcile that runs before it did
 * (the cache still holds the objects as they were) must not send the same patches again. */
Test(tm_shell, stale_cache_after_own_writes_sends_no_patch)
{
        struct reconcile_result res;
        struct kube_status st = { 0 };

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        put_tm("m2", "sk", "100Mi");
        put_tm("m3", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 3);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 3);

        /* no sync: the cache has no finalizer and no status yet */
        fake_kube_api_reset_calls(W.fake);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0,
                     "no-op patches from a stale cache");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, NULL), 0);

        /* the cache catches up: still nothing to write, and the cache is the truth again */
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);

        /* a change by someone else after our write is seen (the memory is dropped) */
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m2", NULL, NULL, &st), 0);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *gone = get_obj(&gvr_trainedmodels, "m2");
        cr_assert_null(gone, "the finalizer of m2 was not removed");

        /* and the finalizer removal is not sent again from the stale cache */
        fake_kube_api_reset_calls(W.fake);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_DELETE, NULL), 0);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_null(strstr(models_json(cm), "\"m2\""), "%s", models_json(cm));
        cr_assert_not_null(strstr(models_json(cm), "\"m3\""), "%s", models_json(cm));
}

/* A write that only drops the entries of deleted models posts no Event (KServe posts none;
 * issue #12), and counts so. */
Test(tm_shell, deleting_a_model_removes_it_then_its_finalizer)
{
        struct reconcile_result res;
        struct kube_status st = { 0 };
        struct tm_reconciler_stats stats;
        size_t n_events;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        put_tm("m2", "sk", "100Mi");
        converge("sk");
        n_events = json_array_size(W.events);
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m1", NULL, NULL, &st), 0);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_null(strstr(models_json(cm), "\"m1\""), "%s", models_json(cm));
        cr_assert_not_null(strstr(models_json(cm), "\"m2\""), "%s", models_json(cm));
        json_auto_t *gone = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_null(gone, "the finalizer was not removed");
        cr_assert_eq(json_array_size(W.events), n_events, "%s", json_dumps(W.events, 0));
        tm_reconciler_get_stats(W.rec, &stats);
        cr_assert_eq(stats.events_skipped, 1);
        cr_assert_eq(stats.events_posted, n_events);
}

Test(tm_shell, missing_parent_deletes_and_one_failed_delete_does_not_stop_the_others)
{
        struct reconcile_result res;
        int r;

        put_tm("a", "nope", "100Mi");
        put_tm("b", "nope", "100Mi");
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_DELETE, "trainedmodels", 1, 1, 500), 0);
        r = reconcile_isvc("nope", &res);
        cr_assert_eq(r, -EIO);
        cr_assert_not_null(strstr(W.error, "Failed to delete TrainedModel default/"), "%s",
                           W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_DELETE, "trainedmodels"), 2);
        json_auto_t *a = get_obj(&gvr_trainedmodels, "a");
        json_auto_t *b = get_obj(&gvr_trainedmodels, "b");
        cr_assert((a == NULL) != (b == NULL), "exactly one must be deleted");

        sync_caches();
        cr_assert_eq(reconcile_isvc("nope", &res), 0, "%s", W.error);
        json_auto_t *a2 = get_obj(&gvr_trainedmodels, "a");
        json_auto_t *b2 = get_obj(&gvr_trainedmodels, "b");
        cr_assert(!a2 && !b2);
}

Test(tm_shell, metadata_patch_conflict_is_a_retry_and_nothing_is_listed_yet)
{
        struct reconcile_result res;
        int r;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        /* the object changed since the cache saw it: the precondition fails */
        put_tm("m1", "sk", "100Mi");
        r = reconcile_isvc("sk", &res);
        cr_assert_eq(r, -ESTALE, "%d %s", r, W.error);
        cr_assert_not_null(strstr(W.error, "Failed to patch metadata of TrainedModel default/m1"),
                           "%s", W.error);
        /* the finalizer comes before models.json: no ConfigMap write without it */
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps"), 0);
        converge("sk");
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "m1");
        cr_assert(has_finalizer(tm));
}

Test(tm_shell, orphan_controller_marks_invalid_spec)
{
        struct reconcile_result res;

        put_tm("lost", NULL, "100Mi");
        sync_caches();
        json_auto_t *keys = NULL;
        json_auto_t *cached = cache_get(W.tms, NS "/lost");
        cr_assert_eq(tm_index_isvc(NULL, cached, &keys), 0);
        cr_assert_null(keys, "an orphan has no parent key");

        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/lost", &res), 0, "%s", W.error);
        cr_assert_eq(res.outcome, RECONCILE_DONE);
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "lost");
        cr_assert_str_eq(condition(tm, "Ready"), "False");
        AUTOFREE char *status = json_dumps(json_get_path(tm, "status", NULL), 0);
        cr_assert_not_null(strstr(status, "InvalidSpec"), "%s", status);

        /* status 500 is an error with its message */
        put_tm("lost2", NULL, "100Mi");
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status", 1, 1, 500),
                     0);
        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/lost2", &res), -EIO);
        cr_assert_not_null(strstr(W.error, "lost2"), "%s", W.error);

        /* gone or adopted meanwhile: nothing to do */
        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/nobody", &res), 0);
        put_isvc("sk", "1Gi");
        put_tm("lost", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/lost", &res), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_ANY, NULL), 0);
}

/* A TrainedModel with U+0000 in one string of its spec (the API server accepts it). */
static void put_tm_with_nul(const char *name, const char *parent, const char *field)
{
        json_auto_t *o = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:{s:s,s:s,s:s}}}", "apiVersion",
                                   "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata",
                                   "name", name, "spec", "inferenceService", parent, "model",
                                   "storageUri", "s3://bucket/model", "framework", "tensorflow",
                                   "memory", "100Mi");
        json_t *spec = json_object_get(o, "spec"), *model = json_object_get(spec, "model");

        cr_assert_not_null(o);
        if (streq(field, "inferenceService"))
                cr_assert_eq(json_object_set_new(spec, field, json_stringn("sk\0evil", 7)), 0);
        else
                cr_assert_eq(json_object_set_new(model, field, json_stringn("s3://b/m\0/x", 11)),
                             0);
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_trainedmodels, NS, o), 0);
}

static void assert_status_has(const char *name, const char *text)
{
        json_auto_t *tm = get_obj(&gvr_trainedmodels, name);
        AUTOFREE char *status = json_dumps(json_get_path(tm, "status", NULL), 0);

        cr_assert_not_null(status, "%s has no status", name);
        cr_assert_not_null(strstr(status, text), "%s: expected \"%s\" in %s", name, text, status);
}

Test(tm_shell, nul_in_a_spec_string_is_a_false_condition_naming_the_field_others_converge)
{
        struct reconcile_result res;

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        put_tm_with_nul("bad-uri", "sk", "storageUri");
        put_tm_with_nul("bad-fw", "sk", "framework");
        put_tm("m2", "sk", "100Mi");
        converge("sk");

        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm), "\"m1\""), "%s", models_json(cm));
        cr_assert_not_null(strstr(models_json(cm), "\"m2\""), "%s", models_json(cm));
        cr_assert_null(strstr(models_json(cm), "bad-"), "%s", models_json(cm));
        json_auto_t *m1 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_str_eq(condition(m1, "Ready"), "True");
        json_auto_t *bad = get_obj(&gvr_trainedmodels, "bad-uri");
        cr_assert_str_eq(condition(bad, "Ready"), "False");
        assert_status_has("bad-uri", "InvalidSpec");
        assert_status_has("bad-uri", "spec.model.storageUri contains a NUL character");
        assert_status_has("bad-fw", "spec.model.framework contains a NUL character");

        /* a NUL in the parent's name: no parent key (it would be "sk" if truncated), so the
         * orphan controller owns it and names the field */
        put_tm_with_nul("bad-parent", "sk", "inferenceService");
        sync_caches();
        json_auto_t *keys = NULL;
        json_auto_t *cached = cache_get(W.tms, NS "/bad-parent");
        cr_assert_eq(tm_index_isvc(NULL, cached, &keys), 0);
        cr_assert_null(keys, "a truncated parent name must not be indexed");
        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/bad-parent", &res), 0, "%s", W.error);
        assert_status_has("bad-parent", "spec.inferenceService contains a NUL character");
}

/* Concurrent writes (8 lanes) give the same result as sequential ones, and a failure of one
 * TrainedModel's status write is reported while the others are written. */
Test(tm_shell, concurrent_writes_converge_exactly_and_report_the_first_failure)
{
        struct reconcile_result res;
        char name[16];
        int r;

        n_fanout = 7;
        put_isvc("sk", "100Gi");
        for (int i = 0; i < 200; i++) {
                (void)snprintf(name, sizeof(name), "m%03d", i);
                put_tm(name, "sk", "10Mi");
        }
        sync_caches();
        cr_assert_eq(fake_kube_api_fail(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status", 50, 1,
                                        500),
                     0);
        r = reconcile_isvc("sk", &res);
        cr_assert_eq(r, -EIO, "%d %s", r, W.error);
        cr_assert_not_null(strstr(W.error, "Failed to patch status of TrainedModel"), "%s",
                           W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 200);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 200,
                     "one failure does not stop the others");
        converge("sk");

        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        json_auto_t *models = json_loads(models_json(cm), 0, NULL);
        cr_assert_eq(json_array_size(models), 200);
        for (int i = 0; i < 200; i++) {
                (void)snprintf(name, sizeof(name), "m%03d", i);
                json_auto_t *tm = get_obj(&gvr_trainedmodels, name);
                cr_assert(has_finalizer(tm), "%s", name);
                cr_assert_str_eq(condition(tm, "Ready"), "True", "%s", name);
        }
        n_fanout = 0;
}

/* The time slice (writes_per_pass 500 here): one reconcile writes at most 500 TrainedModels' statuses, then hands the key
 * to the back of the queue (requeue after 0); the next passes go on from there, even from a
 * cache that has not seen the first pass's writes, and nothing is written twice. */
Test(tm_shell, one_pass_writes_at_most_500_then_requeues_at_once)
{
        struct reconcile_result res;
        char name[16];
        unsigned passes = 0;

        W.rec = tm_reconciler_free(W.rec);
        cr_assert_eq(tm_reconciler_new(
                             &(struct tm_reconciler_options){
                                     .trainedmodels = W.tms,
                                     .inferenceservices = W.isvcs,
                                     .event = on_event,
                                     .writes_per_pass = 500,
                             },
                             &W.rec),
                     0);
        put_isvc("sk", "100Gi");
        for (int i = 0; i < 1200; i++) {
                (void)snprintf(name, sizeof(name), "m%04d", i);
                put_tm(name, "sk", "1Mi");
        }
        sync_caches();
        do {
                cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
                cr_assert_eq(res.outcome, RECONCILE_REQUEUE_AFTER);
                passes++;
                cr_assert_leq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"),
                              500 * passes);
        } while (res.requeue_after == 0 && passes < 10);
        cr_assert_eq(passes, 3, "1200 = 500 + 500 + 200");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 1200,
                     "each status written once");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 1200,
                     "each finalizer written once");
        cr_assert_gt(res.requeue_after, 0, "the last pass waits for the resync");
}

/* A report of pod @pod for InferenceService sk: m1 in @state, from the TrainedModel's URI. */
/* Rebuilds W.rec with cms (indexed by InferenceService, as the controller sets it up) as its
 * ConfigMap cache; the caller frees cms after W.rec. */
static void use_configmap_cache(struct cache *cms)
{
        cr_assert_not_null(cms);
        cr_assert_eq(cache_add_index(cms, REPLICAS_INDEX_ISVC, replicas_index_isvc, NULL), 0);
        W.rec = tm_reconciler_free(W.rec); /* a failed new leaves none for the teardown to free */
        cr_assert_eq(tm_reconciler_new(
                             &(struct tm_reconciler_options){
                                     .trainedmodels = W.tms,
                                     .inferenceservices = W.isvcs,
                                     .configmaps = cms,
                             },
                             &W.rec),
                     0);
}

static json_t *replica_report(const char *pod, const char *state)
{
        char name[64], data[256];

        (void)snprintf(name, sizeof(name), "modelstatus-%s", pod);
        (void)snprintf(data, sizeof(data),
                       "[{\"name\":\"m1\",\"state\":\"%s\",\"storageUri\":\"s3://bucket/model\"}]",
                       state);
        return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s}]},s:{s:s}}",
                         "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name,
                         "namespace", NS, "labels", "serving.kserve.io/inferenceservice", "sk",
                         "modelplane.io/model-status", "agent", "ownerReferences", "apiVersion",
                         "v1", "kind", "Pod", "name", pod, "uid", "uid-1", "data", "models.json",
                         data);
}

static const char *condition_message(const json_t *tm, const char *type)
{
        const json_t *cs = json_get_path(tm, "status", "conditions", NULL);

        for (size_t i = 0; i < json_array_size(cs); i++)
                if (streq(json_get_string_path(json_array_get(cs, i), "type", NULL), type))
                        return json_get_string_path(json_array_get(cs, i), "message", NULL);
        return NULL;
}

Test(tm_shell, replica_reports_become_model_loaded_and_unchanged_reports_write_nothing)
{
        struct reconcile_result res;
        struct cache *cms = cache_new(NULL);
        json_t *rep;

        use_configmap_cache(cms);
        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        converge("sk");
        json_auto_t *tm0 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_null(condition(tm0, "ModelLoaded"), "a condition without any report");

        for (int i = 0; i < 2; i++) {
                rep = replica_report(i ? "p2" : "p1", "Loaded");
                cr_assert_eq(cache_upsert(cms, rep, NULL, NULL), 0);
                json_decref(rep);
        }
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 1);
        json_auto_t *tm1 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_str_eq(condition(tm1, "ModelLoaded"), "True");
        cr_assert_str_eq(condition_message(tm1, "ModelLoaded"), "2/2 replicas loaded");

        /* the same reports again (an agent rewrote its object): nothing to write */
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);

        rep = replica_report("p2", "FailedToLoad");
        cr_assert_eq(cache_upsert(cms, rep, NULL, NULL), 0);
        json_decref(rep);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 1);
        json_auto_t *tm2 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_str_eq(condition(tm2, "ModelLoaded"), "False");
        cr_assert_str_eq(condition_message(tm2, "ModelLoaded"),
                         "1/2 replicas loaded; p2: FailedToLoad");
        cr_assert_str_eq(condition(tm2, "Ready"), "True", "Ready requires Loaded is off");
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* The informer's part for the ConfigMap cache (transform and all). */
static void sync_configmaps(struct cache *cms)
{
        json_auto_t *list = NULL;
        struct kube_status st = { 0 };

        cr_assert_eq(kube_api_list(&W.api, &gvr_configmaps, NS, NULL, &list, &st), 0);
        cr_assert_eq(cache_replace(cms, json_object_get(list, "items"), NULL, NULL), 0);
        fake_kube_api_reset_calls(W.fake);
}

/* Issue #12 item 4: the ConfigMap comes from the informer cache, not a GET. A reconcile that
 * runs before the cache has seen the previous write plans from that write's answer (no 409);
 * a cache that is behind someone else's write is answered 409 and only then read live. */
Test(tm_shell, configmap_from_the_cache_own_writes_then_live_only_on_conflict)
{
        struct reconcile_result res;
        struct tm_reconciler_stats st;
        struct cache *cms = cache_new(
                &(struct cache_options){ .transform = replicas_transform_configmap });
        json_auto_t *cm0 = json_pack("{s:{s:s,s:{s:s}},s:{s:s}}", "metadata", "name",
                                     "modelconfig-sk-0", "labels",
                                     "serving.kserve.io/inferenceservice", "sk", "data",
                                     "models.json", "[]");

        use_configmap_cache(cms);
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_configmaps, NS, cm0), 0);
        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 0, "from the cache");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 1);

        /* m2 arrives; the ConfigMap cache has not delivered our write yet */
        put_tm("m2", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 1,
                     "planned from our own answer: no 409");
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.configmap_conflicts, 0);
        json_auto_t *cm1 = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm1), "\"modelName\":\"m1\""));
        cr_assert_not_null(strstr(models_json(cm1), "\"modelName\":\"m2\""));

        /* the cache holds a version outside our chain (here: someone else's, after ours): it is
         * not trusted to be newer than ours, so it is read live once */
        json_auto_t *theirs = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        json_object_set_new(json_get_path(theirs, "metadata", NULL), "annotations",
                            json_pack("{s:s}", "touched", "yes"));
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_configmaps, NS, theirs), 0);
        sync_configmaps(cms);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 1);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);

        /* the cache catches up: nothing to write, nothing read live */
        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 0);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);

        /* someone else writes models.json; our cache is behind it: 409, then one live GET */
        json_auto_t *other = json_deep_copy(cm1);
        json_object_set_new(json_object_get(other, "data"), "models.json", json_string("[]"));
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_configmaps, NS, other), 0);
        put_tm("m3", "sk", "100Mi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 2);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 1);
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.configmap_conflicts, 1);
        json_auto_t *cm2 = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        for (int i = 1; i <= 3; i++) {
                char want[32];

                (void)snprintf(want, sizeof(want), "\"modelName\":\"m%d\"", i);
                cr_assert_not_null(strstr(models_json(cm2), want), "%s", models_json(cm2));
        }
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* A modelconfig ConfigMap that is not in the cache (KServe's, not labelled yet) is read live. */
Test(tm_shell, configmap_missing_from_the_cache_is_read_live)
{
        struct reconcile_result res;
        struct cache *cms = cache_new(
                &(struct cache_options){ .transform = replicas_transform_configmap });

        use_configmap_cache(cms);
        seed_empty_configmap(); /* unlabelled, so the informer would not list it */
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_GET, "configmaps"), 1);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm), "\"modelName\":\"m1\""));
        cr_assert_str_eq(json_get_string_path(cm, "metadata", "labels",
                                              "serving.kserve.io/inferenceservice", NULL),
                         "sk", "labelled with the write");
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* The finalizer hand-off: the InferenceService reconcile writes models.json without the deleted
 * models and hands their keys to the finalizer queue, removing no finalizer itself; the finalizer
 * reconcile then removes each one (after the write, so never while listed), and a second hand-off
 * from a cache that has not seen the removal sends nothing (no 404 from a stale cache). */
Test(tm_shell, deleted_models_leave_models_json_then_finalizer_workers_release_them)
{
        struct reconcile_result res;
        struct kube_status st = { 0 };
        struct controller *fin = NULL;
        char *key = NULL;

        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = tm_finalizer_reconciler_get(W.rec),
                                     .api = &W.api,
                             },
                             &fin),
                     0);
        tm_reconciler_hand_off_finalizers(W.rec, fin);
        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        put_tm("m2", "sk", "100Mi");
        put_tm("m3", "sk", "100Mi");
        converge("sk");
        cr_assert_eq(workqueue_len(controller_queue(fin)), 0, "nothing to hand off while live");
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m1", NULL, NULL, &st), 0);
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m3", NULL, NULL, &st), 0);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_null(strstr(models_json(cm), "\"m1\""), "%s", models_json(cm));
        cr_assert_null(strstr(models_json(cm), "\"m3\""), "%s", models_json(cm));
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 0,
                     "a finalizer removed by the InferenceService reconcile");
        json_auto_t *m1 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert(has_finalizer(m1));
        cr_assert_eq(workqueue_len(controller_queue(fin)), 2);

        for (int i = 0; i < 2; i++) {
                cr_assert_eq(workqueue_try_get(controller_queue(fin), &key), 0);
                cr_assert(streq(key, NS "/m1") || streq(key, NS "/m3"), "%s", key);
                cr_assert_eq(run(tm_finalizer_reconciler_get, key, &res), 0, "%s", W.error);
                workqueue_done(controller_queue(fin), key);
                free(key);
        }
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 2);
        json_auto_t *gone1 = get_obj(&gvr_trainedmodels, "m1");
        json_auto_t *gone3 = get_obj(&gvr_trainedmodels, "m3");
        cr_assert_null(gone1, "m1's finalizer was not removed");
        cr_assert_null(gone3, "m3's finalizer was not removed");

        /* the TrainedModel cache has not seen the removals: handed off again, nothing sent */
        fake_kube_api_reset_calls(W.fake);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        while (workqueue_try_get(controller_queue(fin), &key) == 0) {
                cr_assert_eq(run(tm_finalizer_reconciler_get, key, &res), 0, "%s", W.error);
                workqueue_done(controller_queue(fin), key);
                free(key);
        }
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0,
                     "a second finalizer removal from a stale cache");
        controller_free(fin);
}

/* ---- placement (serving/spread.h): the shell's writes of assignment ConfigMaps ---- */

/* The agent's report of @pod for InferenceService sk (models.json @models), in the fake. */
static void put_report(const char *pod, const char *models)
{
        char name[64], uid[64];
        json_auto_t *cm = NULL;

        (void)snprintf(name, sizeof(name), "modelstatus-%s", pod);
        (void)snprintf(uid, sizeof(uid), "uid-%s", pod);
        cm = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s}]},s:{s:s,s:s}}",
                       "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name, "labels",
                       "serving.kserve.io/inferenceservice", "sk", "modelplane.io/model-status",
                       "agent", "ownerReferences", "apiVersion", "v1", "kind", "Pod", "name", pod,
                       "uid", uid, "data", "models.json", models, "pod", pod);
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_configmaps, NS, cm), 0);
}

static void annotate_isvc(const char *name)
{
        json_auto_t *o = get_obj(&gvr_inferenceservices, name);

        json_object_set_new(json_object_get(o, "metadata"), "annotations",
                            json_pack("{s:s}", "modelplane.io/placement", "spread"));
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_inferenceservices, NS, o), 0);
}

static struct cache *placement_world(size_t n_models)
{
        struct cache *cms = cache_new(
                &(struct cache_options){ .transform = replicas_transform_configmap });

        use_configmap_cache(cms);
        put_isvc("sk", "4Gi");
        annotate_isvc("sk");
        for (size_t i = 0; i < 3; i++)
                put_report((const char *[]){ "pod-a", "pod-b", "pod-c" }[i], "[]");
        for (size_t i = 0; i < n_models; i++) {
                char name[16];

                (void)snprintf(name, sizeof(name), "m%02zu", i);
                put_tm(name, "sk", "1Gi");
        }
        return cms;
}

static unsigned cm_writes(void)
{
        return fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps") +
               fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps") +
               fake_kube_api_calls(W.fake, FAKE_KUBE_DELETE, "configmaps");
}

/* The bytes (1Gi per model) an assignment lists; -1 when it does not exist. */
static long assignment_gi(const char *pod)
{
        char name[64];
        json_auto_t *cm = NULL, *doc = NULL;

        (void)snprintf(name, sizeof(name), "modelconfig-sk-%s", pod);
        cm = get_obj(&gvr_configmaps, name);
        if (!cm)
                return -1;
        doc = json_loads(models_json(cm), 0, NULL);
        cr_assert(json_is_array(doc));
        return (long)json_array_size(doc);
}

static const char *memory_condition(const json_t *tm)
{
        return condition(tm, "MemoryResourceAvailable");
}

/* Ten 1Gi models on three 4Gi replicas: all admitted, one assignment per replica within its
 * limit, modelconfig-sk-0 annotated and listing all; an unchanged world writes nothing, and
 * nothing either while the ConfigMap cache has not delivered the writes yet. */
Test(tm_shell, placement_writes_assignments_then_nothing)
{
        struct reconcile_result res;
        struct tm_reconciler_stats st;
        struct cache *cms = placement_world(10);
        long total = 0;

        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps"), 4,
                     "three assignments and modelconfig-sk-0");
        for (size_t i = 0; i < 3; i++) {
                long n = assignment_gi((const char *[]){ "pod-a", "pod-b", "pod-c" }[i]);

                cr_assert_geq(n, 0);
                cr_assert_leq(n, 4, "over the 4Gi limit: %ld models", n);
                total += n;
        }
        cr_assert_eq(total, 10);
        json_auto_t *cm0 = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_str_eq(json_get_string_path(cm0, "metadata", "annotations",
                                              "modelplane.io/placement", NULL),
                         "spread");
        for (int i = 0; i < 10; i++) {
                char name[16];

                (void)snprintf(name, sizeof(name), "m%02d", i);
                json_auto_t *tm = get_obj(&gvr_trainedmodels, name);
                cr_assert_str_eq(memory_condition(tm), "True", "%s not admitted", name);
        }
        json_auto_t *isvc = get_obj(&gvr_inferenceservices, "sk");
        cr_assert_not_null(json_get_string_path(isvc, "status", "annotations",
                                                "modelplane.io/placement", NULL));
        tm_reconciler_get_stats(W.rec, &st);
        cr_assert_eq(st.assignment_writes, 3);
        cr_assert_eq(st.placement_moved, 10);
        cr_assert_eq(st.isvc_status_writes, 1);

        /* the ConfigMap and InferenceService caches are behind: nothing is written again */
        sync_caches();
        fake_kube_api_reset_calls(W.fake);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(cm_writes(), 0, "written again from a stale cache");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "inferenceservices/status"), 0);

        /* caught up: nothing */
        sync_configmaps(cms);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_ANY, NULL), 0);
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* A replica's report goes (its pod was deleted): its assignment is deleted and its models are
 * placed on the others, in O(changes) writes; its own re-creation of the assignment by a GC
 * race (a patch of a vanished ConfigMap) is a create. */
Test(tm_shell, placement_replica_gone_reassigns_in_few_writes)
{
        struct reconcile_result res;
        struct cache *cms = placement_world(6);

        for (int i = 0; i < 3; i++) {
                sync_caches();
                sync_configmaps(cms);
                cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        }
        cr_assert_gt(assignment_gi("pod-c"), 0);
        cr_assert(fake_kube_api_remove(W.fake, &gvr_configmaps, NS, "modelstatus-pod-c"));
        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_DELETE, "configmaps"), 1);
        cr_assert_leq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 2,
                      "more than the two survivors written");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps"), 0);
        cr_assert_eq(assignment_gi("pod-c"), -1);
        cr_assert_eq(assignment_gi("pod-a") + assignment_gi("pod-b"), 6);

        /* the garbage collector removes the emptier survivor's assignment (the cache has not
         * seen it); a new model that goes there patches it: 404, created again */
        const char *small = assignment_gi("pod-a") < assignment_gi("pod-b") ? "pod-a" : "pod-b";
        const char *big = streq(small, "pod-a") ? "pod-b" : "pod-a";
        char name[16] = "", cm_name[64];

        sync_configmaps(cms);
        for (int i = 0; i < 1000; i++) {
                (void)snprintf(name, sizeof(name), "new%d", i);
                if (placement_weight(name, small) > placement_weight(name, big))
                        break;
        }
        (void)snprintf(cm_name, sizeof(cm_name), "modelconfig-sk-%s", small);
        cr_assert(fake_kube_api_remove(W.fake, &gvr_configmaps, NS, cm_name));
        put_tm(name, "sk", "1Gi");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "configmaps"), 2,
                     "the vanished assignment and modelconfig-sk-0");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_CREATE, "configmaps"), 1);
        cr_assert_geq(assignment_gi(small), 1, "not made again");
        cr_assert_eq(assignment_gi("pod-a") + assignment_gi("pod-b"), 7);
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* ModelLoaded counts copies over the assigned replica only; without the annotation again,
 * placement's objects go. */
Test(tm_shell, placement_status_then_switched_off)
{
        struct reconcile_result res;
        struct cache *cms = placement_world(1);
        const char *holder = NULL;

        for (int i = 0; i < 3; i++) {
                sync_caches();
                sync_configmaps(cms);
                cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        }
        for (size_t i = 0; i < 3; i++)
                if (assignment_gi((const char *[]){ "pod-a", "pod-b", "pod-c" }[i]) == 1)
                        holder = (const char *[]){ "pod-a", "pod-b", "pod-c" }[i];
        cr_assert_not_null(holder);
        put_report(holder, "[{\"name\":\"m00\",\"state\":\"Loaded\","
                           "\"storageUri\":\"s3://bucket/model\"}]");
        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *tm = get_obj(&gvr_trainedmodels, "m00");
        cr_assert_str_eq(condition(tm, "ModelLoaded"), "True");
        cr_assert_str_eq(condition_message(tm, "ModelLoaded"), "1/1 copies loaded");

        /* switched off */
        json_auto_t *isvc = get_obj(&gvr_inferenceservices, "sk");
        json_object_del(json_object_get(isvc, "metadata"), "annotations");
        cr_assert_gt(fake_kube_api_put(W.fake, &gvr_inferenceservices, NS, isvc), 0);
        sync_caches();
        sync_configmaps(cms);
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        for (size_t i = 0; i < 3; i++)
                cr_assert_eq(assignment_gi((const char *[]){ "pod-a", "pod-b", "pod-c" }[i]), -1);
        json_auto_t *cm0 = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_null(
                json_get_path(cm0, "metadata", "annotations", "modelplane.io/placement", NULL));
        json_auto_t *isvc2 = get_obj(&gvr_inferenceservices, "sk");
        cr_assert_null(
                json_get_path(isvc2, "status", "annotations", "modelplane.io/placement", NULL));
        json_auto_t *tm2 = get_obj(&gvr_trainedmodels, "m00");
        cr_assert_str_eq(condition_message(tm2, "ModelLoaded"), "1/3 replicas loaded");
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* 2.5 times one replica's memory (25 models of 100Mi over three of 1000Mi): the first pass
 * writes the three assignments, and no later one writes anything, with the ConfigMap cache
 * behind (pass 1) or caught up. */
Test(tm_shell, placement_under_pressure_is_written_once)
{
        struct reconcile_result res;
        struct cache *cms = cache_new(
                &(struct cache_options){ .transform = replicas_transform_configmap });

        use_configmap_cache(cms);
        put_isvc("sk", "1000Mi");
        annotate_isvc("sk");
        for (size_t i = 0; i < 3; i++)
                put_report((const char *[]){ "pod-a", "pod-b", "pod-c" }[i], "[]");
        for (size_t i = 0; i < 25; i++) {
                char name[16];

                (void)snprintf(name, sizeof(name), "m%02zu", i);
                put_tm(name, "sk", "100Mi");
        }
        for (int i = 0; i < 4; i++) {
                if (i != 1) {
                        sync_caches();
                        sync_configmaps(cms);
                } else
                        fake_kube_api_reset_calls(W.fake);
                cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
                cr_assert_eq(cm_writes(), i == 0 ? 4U : 0U, "pass %d: %u ConfigMap writes", i,
                             cm_writes());
        }
        for (size_t i = 0; i < 3; i++)
                cr_assert_leq(assignment_gi((const char *[]){ "pod-a", "pod-b", "pod-c" }[i]), 10);
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cache_free(cms);
}

/* --- without the finalizer (issue 27: --trainedmodel-finalizer=false) ---------------------- */

/* A reconciler with no_finalizer (what a restart with the flag off makes: no own writes). */
static void use_no_finalizer(void)
{
        tm_reconciler_free(W.rec);
        W.rec = NULL;
        cr_assert_eq(tm_reconciler_new(
                             &(struct tm_reconciler_options){
                                     .trainedmodels = W.tms,
                                     .inferenceservices = W.isvcs,
                                     .event = on_event,
                                     .no_finalizer = true,
                             },
                             &W.rec),
                     0);
}

static void set_finalizers(const char *name, json_t *finalizers /* stolen */)
{
        json_auto_t *patch = json_pack("{s:{s:o}}", "metadata", "finalizers", finalizers);
        struct kube_status st = { 0 };

        cr_assert_eq(kube_api_patch(&W.api, &gvr_trainedmodels, NS, name, KUBE_PATCH_MERGE, patch,
                                    NULL, NULL, &st),
                     0, "%s", st.message);
}

static size_t count_listed(const char *isvc, const char *name)
{
        json_auto_t *cm = get_obj(&gvr_configmaps, isvc);
        char quoted[128];
        size_t n = 0;

        (void)snprintf(quoted, sizeof(quoted), "\"modelName\":\"%s\"", name);
        for (const char *s = models_json(cm); s && (s = strstr(s, quoted)); s++)
                n++;
        return n;
}

/* The level-based delete: no finalizer is written; a model that is gone leaves models.json in the
 * next pass, without a TrainedModel write; and a pass after a restart (a new reconciler, the
 * relist) that finds no TrainedModel at all empties models.json. */
Test(tm_shell, no_finalizer_gone_model_leaves_models_json_in_the_next_pass)
{
        struct reconcile_result res;
        struct kube_status st = { 0 };

        use_no_finalizer();
        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        put_tm("m2", "sk", "100Mi");
        converge("sk");
        json_auto_t *m1 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_not(has_finalizer(m1), "no finalizer with the flag off");
        cr_assert_str_eq(condition(m1, "Ready"), "True");
        cr_assert_eq(count_listed("modelconfig-sk-0", "m1"), 1);

        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m1", NULL, NULL, &st), 0);
        json_auto_t *gone = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_null(gone, "no finalizer: gone at once");
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(count_listed("modelconfig-sk-0", "m1"), 0);
        cr_assert_eq(count_listed("modelconfig-sk-0", "m2"), 1);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 0);

        /* the controller down: m2 deleted, then a new reconciler plans from the relist */
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m2", NULL, NULL, &st), 0);
        use_no_finalizer();
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_str_eq(models_json(cm), "[]");
}

/* The migration: the finalizers an older modelplane (or KServe) left. A live model whose
 * metadata is in place is handed to the release queue once (a second pass from a cache that has
 * not seen the release adds nothing), added rate-limited: the burst at once, the rest at the
 * pace; a live one with a metadata patch anyway loses it in that patch; a deleting one leaves
 * models.json and then its finalizer goes on the finalizer queue; a live orphan is handed over
 * too. Releases remove only ours and change nothing else. */
Test(tm_shell, no_finalizer_leftover_finalizers_released_paced_and_once)
{
        enum { N = TM_RELEASE_PACE_BURST + 5 };
        struct reconcile_result res;
        struct kube_status st = { 0 };
        struct controller *fin = NULL, *rel = NULL;
        struct workqueue *q;
        char name[32], *key = NULL;
        size_t n_released = 0;

        put_isvc("sk", "10Gi");
        for (int i = 0; i < N; i++) {
                (void)snprintf(name, sizeof(name), "m%02d", i);
                put_tm(name, "sk", "100Mi");
        }
        converge("sk"); /* the finalizer on: an older modelplane's state */
        set_finalizers("m00", json_pack("[s,s]", "example.com/keep", "trainedmodel.finalizer"));
        cr_assert_eq(kube_api_delete(&W.api, &gvr_trainedmodels, NS, "m01", NULL, NULL, &st), 0);
        put_tm("fresh", "sk", "100Mi"); /* KServe's: the finalizer, no labels yet */
        set_finalizers("fresh", json_pack("[s]", "trainedmodel.finalizer"));
        put_tm("orphan", NULL, "100Mi");
        set_finalizers("orphan", json_pack("[s]", "trainedmodel.finalizer"));

        use_no_finalizer();
        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = tm_finalizer_reconciler_get(W.rec),
                                     .api = &W.api,
                                     .clock = &W.clock.clock,
                             },
                             &fin),
                     0);
        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = tm_release_reconciler_get(W.rec),
                                     .api = &W.api,
                                     .clock = &W.clock.clock,
                                     .ratelimit = &tm_release_pace,
                             },
                             &rel),
                     0);
        tm_reconciler_hand_off_finalizers(W.rec, fin);
        tm_reconciler_hand_off_releases(W.rec, rel);
        q = controller_queue(rel);
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(run(tm_orphan_reconciler_get, NS "/orphan", &res), 0, "%s", W.error);
        json_auto_t *fresh = get_obj(&gvr_trainedmodels, "fresh");
        cr_assert_not(has_finalizer(fresh), "released with the labels' patch");
        cr_assert_eq(count_listed("modelconfig-sk-0", "m01"), 0);
        cr_assert_eq(workqueue_len(controller_queue(fin)), 1, "m01 on the finalizer queue");
        /* N - 1 settled live models and the orphan, all delayed (rate-limited adds) */
        cr_assert_eq(workqueue_len(q), 0);
        cr_assert_eq(workqueue_delayed_len(q), N);

        /* again, from the same cache: nothing handed twice */
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(workqueue_delayed_len(q), N);
        cr_assert_eq(workqueue_num_requeues(q, NS "/m02"), 1);

        /* the burst is due after the base delay, the rest at the pace */
        fake_clock_advance(&W.clock, 10 * USEC_PER_MSEC);
        workqueue_kick(q);
        cr_assert_eq(workqueue_len(q), TM_RELEASE_PACE_BURST);
        fake_clock_advance(&W.clock, 10 * USEC_PER_SEC);
        workqueue_kick(q);
        cr_assert_eq(workqueue_len(q), N);
        sync_caches(); /* the informer delivers the orphan's status write */
        while (workqueue_try_get(q, &key) == 0) {
                cr_assert_eq(run(tm_release_reconciler_get, key, &res), 0, "%s", W.error);
                workqueue_done(q, key);
                free(key);
                n_released++;
        }
        cr_assert_eq(n_released, N);
        cr_assert_eq(workqueue_try_get(controller_queue(fin), &key), 0);
        cr_assert_eq(run(tm_finalizer_reconciler_get, key, &res), 0, "%s", W.error);
        workqueue_done(controller_queue(fin), key);
        free(key);
        json_auto_t *m01 = get_obj(&gvr_trainedmodels, "m01");
        cr_assert_null(m01, "the deleting model went");
        json_auto_t *m00 = get_obj(&gvr_trainedmodels, "m00");
        cr_assert_eq(json_array_size(json_get_path(m00, "metadata", "finalizers", NULL)), 1);
        cr_assert_str_eq(json_string_value(
                                 json_array_get(json_get_path(m00, "metadata", "finalizers", NULL),
                                                0)),
                         "example.com/keep");
        json_auto_t *orphan = get_obj(&gvr_trainedmodels, "orphan");
        cr_assert_not(has_finalizer(orphan));
        for (int i = 2; i < N; i++) {
                (void)snprintf(name, sizeof(name), "m%02d", i);
                json_auto_t *tm = get_obj(&gvr_trainedmodels, name);
                cr_assert_not(has_finalizer(tm), "%s kept the finalizer", name);
                cr_assert_str_eq(condition(tm, "Ready"), "True", "%s", name);
                cr_assert_not_null(
                        json_get_path(tm, "metadata", "labels", "inferenceservice", NULL));
        }

        /* settled: nothing handed, nothing written */
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, NULL), 0);
        cr_assert_eq(workqueue_len(q) + workqueue_delayed_len(q), 0);
        controller_free(rel);
        controller_free(fin);
}

/* Without a release queue the pass releases the finalizer itself, after the model's status
 * patch, planned from that patch's answer (no 409 on the resourceVersion it moved). */
Test(tm_shell, no_finalizer_inline_release_follows_the_status_patch)
{
        struct reconcile_result res;
        json_auto_t *wipe = json_pack("{s:{s:[]}}", "status", "conditions");
        struct kube_status st = { 0 };

        put_isvc("sk", "1Gi");
        put_tm("m1", "sk", "100Mi");
        converge("sk");
        cr_assert_eq(kube_api_patch(&W.api, &gvr_trainedmodels, NS, "m1", KUBE_PATCH_MERGE, wipe,
                                    &(struct kube_write_options){ .subresource = "status" }, NULL,
                                    &st),
                     0);
        use_no_finalizer();
        sync_caches();
        cr_assert_eq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        json_auto_t *m1 = get_obj(&gvr_trainedmodels, "m1");
        cr_assert_not(has_finalizer(m1));
        cr_assert_str_eq(condition(m1, "Ready"), "True");
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels/status"), 1);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_PATCH, "trainedmodels"), 1);
}

/* A TrainedModel deleted and created again under its name, the cache a step behind: the pass
 * from the old object writes nothing wrong for good, and the world ends with exactly one entry,
 * the new one's. */
Test(tm_shell, no_finalizer_recreated_model_ends_with_one_entry_the_new_spec)
{
        struct reconcile_result res;

        use_no_finalizer();
        put_isvc("sk", "1Gi");
        put_tm("m", "sk", "100Mi");
        converge("sk");
        cr_assert(fake_kube_api_remove(W.fake, &gvr_trainedmodels, NS, "m"));
        cr_assert_gt(fake_serving_put_tm(W.fake, NS, "m", "sk", "s3://bucket/new", "200Mi"), 0);
        /* a pass from the stale cache (the old m) */
        cr_assert_geq(reconcile_isvc("sk", &res), 0, "%s", W.error);
        converge("sk");
        cr_assert_eq(count_listed("modelconfig-sk-0", "m"), 1);
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm), "s3://bucket/new"), "%s", models_json(cm));
        cr_assert_not_null(strstr(models_json(cm), "200Mi"), "%s", models_json(cm));
        json_auto_t *m = get_obj(&gvr_trainedmodels, "m");
        cr_assert_str_eq(condition(m, "Ready"), "True");
        cr_assert_not(has_finalizer(m));
}

/* The parent-missing delete is of the object planned (UID precondition): one deleted and created
 * again under its name meanwhile, now under a parent that exists, is spared. */
Test(tm_shell, missing_parent_delete_spares_a_model_recreated_meanwhile)
{
        struct reconcile_result res;

        put_isvc("sk", "1Gi");
        put_tm("a", "nope", "100Mi");
        sync_caches();
        cr_assert(fake_kube_api_remove(W.fake, &gvr_trainedmodels, NS, "a"));
        put_tm("a", "sk", "100Mi");
        cr_assert_eq(reconcile_isvc("nope", &res), 0, "%s", W.error);
        cr_assert_eq(fake_kube_api_calls(W.fake, FAKE_KUBE_DELETE, "trainedmodels"), 1);
        json_auto_t *a = get_obj(&gvr_trainedmodels, "a");
        cr_assert_not_null(a, "the recreated model was deleted");
        converge("sk");
        json_auto_t *cm = get_obj(&gvr_configmaps, "modelconfig-sk-0");
        cr_assert_not_null(strstr(models_json(cm), "\"modelName\":\"a\""), "%s", models_json(cm));
}
