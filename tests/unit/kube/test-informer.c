/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-apiserver.h"
#include "json/json-util.h"
#include "kube/informer.h"
#include "kube/metrics.h"
#include "kube/workqueue.h"
#include "util/log.h"

#define COLL "/apis/serving.kserve.io/v1alpha1/namespaces/ns/trainedmodels"

static struct fake_apiserver *fake;
static struct kube_client *client;
static FILE *logf_;

/* Event log written by the handler on the informer thread, read by the test. */
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static char events[8192];

static void setup(void)
{
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        struct kube_client_options o = { .request_timeout = 10 * USEC_PER_SEC };

        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&fake), 0);
        (void)snprintf(server, sizeof(server), "%s", fake_apiserver_url(fake));
        cr_assert_eq(kube_client_new(&cfg, &o, &client), 0);
        logf_ = tmpfile();
        cr_assert_not_null(logf_);
        if (!getenv("TEST_LOG_STDERR"))
                log_set_fd(fileno(logf_));
        events[0] = '\0';
}

static void teardown(void)
{
        log_set_fd(STDERR_FILENO);
        fclose(logf_);
        client = kube_client_free(client);
        fake = fake_apiserver_free(fake);
        curl_global_cleanup();
}

TestSuite(informer, .init = setup, .fini = teardown, .timeout = 60);

static json_t *tm(const char *name, const char *isvc)
{
        return json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "serving.kserve.io/v1alpha1",
                         "kind", "TrainedModel", "metadata", "name", name, "spec",
                         "inferenceService", isvc);
}

static void put(const char *name, const char *isvc)
{
        json_auto_t *o = tm(name, isvc);
        cr_assert_neq(fake_apiserver_put(fake, COLL, o), 0);
}

static void record(char op, const json_t *obj)
{
        char key[CACHE_KEY_MAX] = "?";
        size_t l;

        (void)!cache_key_of(obj, key, sizeof(key));
        (void)pthread_mutex_lock(&ev_lock);
        l = strlen(events);
        (void)snprintf(events + l, sizeof(events) - l, "%c%s ", op, key);
        (void)pthread_mutex_unlock(&ev_lock);
}

static void on_add(void *u, json_t *obj)
{
        record('+', obj);
}

static void on_update(void *u, json_t *o, json_t *n)
{
        record('~', n);
}

static void on_delete(void *u, json_t *obj)
{
        record('-', obj);
}

/* A new informer with o and the handlers that write the event log (asserted). */
static struct informer *recording_informer(const struct informer_options *o)
{
        struct informer_handler h = { on_add, on_update, on_delete, NULL };
        struct informer *inf = NULL;

        cr_assert_eq(informer_new(o, &inf), 0);
        cr_assert_eq(informer_add_handler(inf, &h), 0);
        return inf;
}

/* TrainedModels of namespace ns through the fake, in pages of 2, backoff from 10 ms, no jitter. */
static struct informer_options tm_options(void)
{
        return (struct informer_options){
                .client = client,
                .gvr = { "serving.kserve.io", "v1alpha1", "trainedmodels" },
                .namespace = "ns",
                .page_size = 2,
                .backoff_initial = 10 * USEC_PER_MSEC,
                .no_jitter = true,
        };
}

static struct informer *new_informer(void)
{
        struct informer_options o = tm_options();

        o.backoff_max = 40 * USEC_PER_MSEC;
        o.cache.transform = cache_transform_strip_managed_fields;
        return recording_informer(&o);
}

/* new_informer(), started and synced (asserted). */
static struct informer *synced_informer(void)
{
        struct informer *inf = new_informer();

        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        return inf;
}

/* Waits until the handler log equals want (bounded). */
static void wait_events(const char *want)
{
        for (int i = 0; i < 5000; i++) {
                bool eq;
                (void)pthread_mutex_lock(&ev_lock);
                eq = streq(events, want);
                (void)pthread_mutex_unlock(&ev_lock);
                if (eq)
                        return;
                usleep(1000);
        }
        cr_assert_fail("events: expected \"%s\", got \"%s\"", want, events);
}

static void clear_events(void)
{
        (void)pthread_mutex_lock(&ev_lock);
        events[0] = '\0';
        (void)pthread_mutex_unlock(&ev_lock);
}

/* The cache holds exactly the server's objects, with the server's resourceVersions. */
static void assert_cache_equals_server(struct informer *inf, size_t n, const char *const *names)
{
        cr_assert_eq(cache_len(informer_cache(inf)), n, "cache has %zu objects, expected %zu",
                     cache_len(informer_cache(inf)), n);
        for (size_t i = 0; i < n; i++) {
                json_auto_t *s = fake_apiserver_get(fake, COLL, names[i]);
                json_auto_t *c = cache_get_by_name(informer_cache(inf), "ns", names[i]);
                cr_assert_not_null(s, "server lacks %s", names[i]);
                cr_assert_not_null(c, "cache lacks %s", names[i]);
                cr_assert_str_eq(json_string_value(json_object_get(json_object_get(c, "metadata"),
                                                                   "resourceVersion")),
                                 json_string_value(json_object_get(json_object_get(s, "metadata"),
                                                                   "resourceVersion")));
        }
}

static void wait_stat(struct informer *inf, size_t off, unsigned want)
{
        struct informer_stats st;

        for (int i = 0; i < 5000; i++) {
                informer_get_stats(inf, &st);
                if (*(unsigned *)((char *)&st + off) >= want)
                        return;
                usleep(1000);
        }
        cr_assert_fail("stat at %zu never reached %u", off, want);
}

static unsigned count_log_lines(const char *needle)
{
        char line[4096];
        unsigned n = 0;

        (void)fflush(logf_);
        rewind(logf_);
        while (fgets(line, sizeof(line), logf_))
                if (strstr(line, needle))
                        n++;
        (void)fseek(logf_, 0, SEEK_END);
        return n;
}

Test(informer, paged_first_list_then_every_change_in_order)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;

        put("a", "i1");
        put("b", "i1");
        put("c", "i2");
        put("d", "i2");
        put("e", "i3");
        inf = new_informer();
        cr_assert_not(informer_has_synced(inf));
        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        cr_assert(informer_has_synced(inf));
        /* 5 objects with limit 2: three pages, one informer list */
        cr_assert_eq(fake_apiserver_lists(fake), 3);
        wait_events("+ns/a +ns/b +ns/c +ns/d +ns/e ");
        assert_cache_equals_server(inf, 5, (const char *const[]){ "a", "b", "c", "d", "e" });
        /* list items come without kind/apiVersion; the informer fills them in */
        json_auto_t *a = cache_get_by_name(informer_cache(inf), "ns", "a");
        cr_assert_str_eq(json_string_value(json_object_get(a, "kind")), "TrainedModel");
        cr_assert_str_eq(json_string_value(json_object_get(a, "apiVersion")),
                         "serving.kserve.io/v1alpha1");

        clear_events();
        put("f", "i1");
        put("a", "i9");
        cr_assert_neq(fake_apiserver_delete(fake, COLL, "b"), 0);
        put("g", "i1");
        put("a", "i8");
        wait_events("+ns/f ~ns/a -ns/b +ns/g ~ns/a ");
        assert_cache_equals_server(inf, 6, (const char *const[]){ "a", "c", "d", "e", "f", "g" });
}

Test(informer, not_synced_while_list_fails_one_log_line_per_backoff_step)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        put("a", "i1");
        fake_apiserver_fail_lists(fake, 503, 3);
        inf = new_informer();
        cr_assert_eq(informer_start(inf), 0);
        wait_stat(inf, offsetof(struct informer_stats, backoffs), 1);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        informer_get_stats(inf, &st);
        cr_assert_eq(st.backoffs, 3);
        cr_assert_eq(st.lists, 1);
        cr_assert_eq(count_log_lines("Failed to list trainedmodels"), 3);
        wait_events("+ns/a ");
}

Test(informer, expired_watch_relists_with_deletes_updates_and_adds)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        put("a", "i1");
        put("b", "i1");
        put("keep", "i1");
        inf = synced_informer();
        wait_events("+ns/a +ns/b +ns/keep ");
        clear_events();

        /* Changes the watch never delivers, then history is compacted away (etcd compaction). */
        fake_apiserver_pause_watches(fake, true);
        put("a", "i2");
        cr_assert_neq(fake_apiserver_delete(fake, COLL, "b"), 0);
        put("c", "i3");
        fake_apiserver_compact(fake);
        fake_apiserver_pause_watches(fake, false);
        fake_apiserver_end_watches(fake);

        /* watch from the old version -> ERROR 410 Expired -> relist -> exact diff */
        wait_events("-ns/b ~ns/a +ns/c ");
        assert_cache_equals_server(inf, 3, (const char *const[]){ "a", "c", "keep" });
        /* the handlers run inside the relist, before its count is updated */
        wait_stat(inf, offsetof(struct informer_stats, relists), 1);
        informer_get_stats(inf, &st);
        cr_assert_eq(st.relists, 1);
        cr_assert_eq(st.backoffs, 0, "410 relists at once");
        /* and it keeps watching from the relist's version */
        clear_events();
        put("d", "i1");
        wait_events("+ns/d ");
}

Test(informer, http_410_on_watch_relists)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;

        put("a", "i1");
        inf = synced_informer();
        fake_apiserver_fail_watches(fake, FAKE_WATCH_HTTP_410, 1);
        wait_stat(inf, offsetof(struct informer_stats, relists), 1);
        clear_events();
        put("b", "i1");
        wait_events("+ns/b ");
}

static void check_bad_stream(enum fake_watch_fault fault)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        put("a", "i1");
        inf = synced_informer();
        wait_events("+ns/a ");
        clear_events();
        fake_apiserver_pause_watches(fake, true);
        put("b", "i1");
        fake_apiserver_fail_watches(fake, fault, 1);
        fake_apiserver_pause_watches(fake, false);
        wait_stat(inf, offsetof(struct informer_stats, relists), 1);
        informer_get_stats(inf, &st);
        cr_assert_geq(st.backoffs, 1);
        cr_assert_geq(count_log_lines("Failed to watch trainedmodels"), 1);
        /* b arrives exactly once, via the relist or the next watch */
        put("c", "i1");
        wait_events("+ns/b +ns/c ");
        assert_cache_equals_server(inf, 3, (const char *const[]){ "a", "b", "c" });
}

Test(informer, garbage_line_is_logged_and_relists)
{
        check_bad_stream(FAKE_WATCH_GARBAGE);
}

Test(informer, truncated_line_is_logged_and_relists)
{
        check_bad_stream(FAKE_WATCH_TRUNCATED);
}

Test(informer, server_error_on_watch_backs_off_and_recovers)
{
        check_bad_stream(FAKE_WATCH_HTTP_500);
}

/* kube-apiserver killed mid-watch, changes happen while it is down (and history is compacted),
 * then it comes back: the informer backs off, recovers, and ends equal to the server. */
Test(informer, apiserver_restart_mid_watch_recovers_without_missed_or_phantom_objects)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        put("a", "i1");
        put("b", "i1");
        inf = synced_informer();
        wait_events("+ns/a +ns/b ");
        clear_events();

        cr_assert_eq(fake_apiserver_set_down(fake, true), 0);
        wait_stat(inf, offsetof(struct informer_stats, backoffs), 2);
        put("a", "i2");
        cr_assert_neq(fake_apiserver_delete(fake, COLL, "b"), 0);
        put("c", "i3");
        fake_apiserver_compact(fake);
        cr_assert_eq(fake_apiserver_set_down(fake, false), 0);

        wait_events("-ns/b ~ns/a +ns/c ");
        assert_cache_equals_server(inf, 2, (const char *const[]){ "a", "c" });
        /* the handlers run inside the relist, before its count is updated */
        wait_stat(inf, offsetof(struct informer_stats, relists), 1);
        informer_get_stats(inf, &st);
        cr_assert_geq(st.relists, 1);
        cr_assert_eq(count_log_lines("Failed to "), st.backoffs, "one log line per backoff step");
        clear_events();
        put("d", "i1");
        wait_events("+ns/d ");
}

Test(informer, bookmarks_advance_the_resource_version)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;
        json_auto_t *other = json_pack("{s:{s:s}}", "metadata", "name", "x");
        struct informer_stats st;
        char want[32];

        put("a", "i1");
        fake_apiserver_set_watch_hold(fake, 50);
        inf = synced_informer();
        /* a change in another collection moves the global version; only a bookmark tells us */
        cr_assert_neq(fake_apiserver_put(fake, "/api/v1/namespaces/ns/configmaps", other), 0);
        (void)snprintf(want, sizeof(want), "%" PRIu64, fake_apiserver_rv(fake));
        for (int i = 0; i < 5000; i++) {
                informer_get_stats(inf, &st);
                if (streq(st.resource_version, want))
                        break;
                usleep(1000);
        }
        cr_assert_str_eq(st.resource_version, want);
        cr_assert_eq(st.relists, 0);
}

Test(informer, resync_redelivers_cached_objects_as_updates)
{
        struct informer_options o = {
                .client = client,
                .gvr = { "serving.kserve.io", "v1alpha1", "trainedmodels" },
                .namespace = "ns",
                .resync_period = 1, /* every time a watch ends */
        };
        CLEANUP(informer_freep) struct informer *inf = NULL;

        put("a", "i1");
        fake_apiserver_set_watch_hold(fake, 20);
        inf = recording_informer(&o);
        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        wait_stat(inf, offsetof(struct informer_stats, resyncs), 2);
        (void)pthread_mutex_lock(&ev_lock);
        cr_assert_eq(strncmp(events, "+ns/a ~ns/a ~ns/a", 17), 0, "got %s", events);
        (void)pthread_mutex_unlock(&ev_lock);
}

Test(informer, stop_cancels_a_held_watch)
{
        CLEANUP(informer_freep) struct informer *inf = NULL;

        fake_apiserver_set_watch_hold(fake, 60 * 1000);
        inf = synced_informer();
        wait_stat(inf, offsetof(struct informer_stats, watches), 1);
        usleep(50 * 1000);
        informer_stop(inf); /* must not wait for the 60 s hold (the test times out at 60 s) */
        cr_assert_eq(informer_wait_synced(inf, 0), 0);
        /* the fake would hold its handler thread for a minute: end it */
        fake_apiserver_end_watches(fake);
}

Test(informer, unreachable_server_backs_off_and_is_not_synced)
{
        char server[64] = "http://127.0.0.1:1";
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        CLEANUP(kube_client_freep) struct kube_client *dead = NULL;
        struct informer_options o = {
                .gvr = { "", "v1", "configmaps" },
                .backoff_initial = 5 * USEC_PER_MSEC,
                .backoff_max = 20 * USEC_PER_MSEC,
                .no_jitter = true,
        };
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        cr_assert_eq(kube_client_new(&cfg, NULL, &dead), 0);
        o.client = dead;
        cr_assert_eq(informer_new(&o, &inf), 0);
        cr_assert_eq(informer_start(inf), 0);
        wait_stat(inf, offsetof(struct informer_stats, backoffs), 4);
        cr_assert_not(informer_has_synced(inf));
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_MSEC), -ETIMEDOUT);
        informer_stop(inf);
        informer_get_stats(inf, &st);
        cr_assert_eq(count_log_lines("Failed to list configmaps"), st.backoffs);
        cr_assert_geq(count_log_lines("retrying in 0.020s"), 1, "backoff reaches its cap");
}

Test(informer, owner_keys_and_enqueue_handlers)
{
        CLEANUP(workqueue_freep) struct workqueue *q = NULL;
        CLEANUP(informer_freep) struct informer *inf = NULL;
        json_auto_t *keys = NULL;
        json_auto_t *cm = json_pack("{s:{s:s,s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s}]}}",
                                    "metadata", "name", "modelconfig-x", "namespace", "ns",
                                    "ownerReferences", "apiVersion", "serving.kserve.io/v1beta1",
                                    "kind", "InferenceService", "name", "isvc1", "apiVersion",
                                    "apps/v1", "kind", "InferenceService", "name", "wrong-group",
                                    "apiVersion", "serving.kserve.io/v1beta1", "kind", "Other",
                                    "name", "wrong-kind");
        struct informer_options o = {
                .client = client,
                .gvr = { "", "v1", "configmaps" },
                .namespace = "ns",
        };
        char *k = NULL;

        cr_assert_eq(informer_owner_keys(cm, "serving.kserve.io", "InferenceService", &keys), 0);
        cr_assert_eq(json_array_size(keys), 1);
        cr_assert_str_eq(json_string_value(json_array_get(keys, 0)), "ns/isvc1");

        cr_assert_eq(workqueue_new(NULL, &q), 0);
        cr_assert_eq(informer_new(&o, &inf), 0);
        cr_assert_eq(informer_enqueue_owner(inf, q, "serving.kserve.io", "InferenceService"), 0);
        cr_assert_eq(informer_enqueue_self(inf, q), 0);
        cr_assert_eq(fake_apiserver_put(fake, "/api/v1/namespaces/ns/configmaps", cm) != 0, 1);
        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_enqueue_self(inf, q), -EBUSY);
        /* refused after the start: its copies of the names are freed (ASan: no leak) */
        cr_assert_eq(informer_enqueue_owner(inf, q, "apps", "Deployment"), -EBUSY);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        cr_assert_str_eq(k, "ns/isvc1");
        free(k);
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        cr_assert_str_eq(k, "ns/modelconfig-x");
        free(k);
        cr_assert_eq(workqueue_try_get(q, &k), -EAGAIN);
}

/* A TrainedModel whose spec.model.storageUri is "s3://b/m" + U+0000 + "x" (the API server
 * accepts it), or whose metadata.name has a NUL (which no C key can hold). */
static void put_with_nul(const char *name, size_t name_len, bool nul_in_uri)
{
        json_auto_t *o = tm("placeholder", "i1");

        cr_assert_eq(json_object_set_new(json_object_get(o, "metadata"), "name",
                                         json_stringn(name, name_len)),
                     0);
        cr_assert_eq(json_object_set_new(json_object_get(o, "spec"), "model",
                                         json_pack("{s:s%}", "storageUri", "s3://b/m\0x",
                                                   nul_in_uri ? (size_t)10 : (size_t)8)),
                     0);
        cr_assert_neq(fake_apiserver_put(fake, COLL, o), 0);
}

static struct informer *new_informer_with_metrics(struct metrics_registry *reg)
{
        struct informer_options o = tm_options();

        o.metrics = reg;
        return recording_informer(&o);
}

static double undecodable_metric(struct metrics_registry *reg)
{
        struct metric_family *f;
        struct metric *m;

        cr_assert_eq(metrics_register(reg, METRIC_COUNTER,
                                      "modelplane_informer_undecodable_objects_total", "x",
                                      (const char *const[]){ "resource", NULL }, NULL, 0, &f),
                     0);
        cr_assert_eq(metric_family_child(f, (const char *const[]){ "trainedmodels" }, &m), 0);
        return metric_value(m);
}

Test(informer, nul_in_a_string_is_decoded_and_a_nul_name_is_skipped_and_counted)
{
        CLEANUP(metrics_registry_freep) struct metrics_registry *reg = metrics_registry_new();
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_stats st;

        cr_assert_not_null(reg);
        put("a", "i1");
        put_with_nul("nul-uri", 7, true);    /* decodable: the string keeps its NUL */
        put_with_nul("bad\0name", 8, false); /* no key: skipped */
        put("z", "i1");
        inf = new_informer_with_metrics(reg);
        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        wait_events("+ns/a +ns/nul-uri +ns/z ");
        informer_get_stats(inf, &st);
        cr_assert_eq(st.undecodable, 1, "undecodable %u, expected 1", st.undecodable);
        cr_assert_eq(undecodable_metric(reg), 1.0);
        cr_assert_eq(count_log_lines("Skipping trainedmodels object ns/bad\\\\0name"), 1);

        /* the cached copy keeps the whole string (compact or not, no truncation) */
        json_auto_t *o = cache_get_by_name(informer_cache(inf), "ns", "nul-uri");
        json_t *uri = json_get_path(o, "spec", "model", "storageUri", NULL);
        cr_assert_eq(json_string_length(uri), 10);
        cr_assert(json_string_has_nul(uri));
        cr_assert_null(json_get_string_path(o, "spec", "model", "storageUri", NULL));

        /* on the watch: the bad object is skipped, the events around it all arrive */
        clear_events();
        put("b", "i2");
        put_with_nul("bad\0again", 9, true);
        put_with_nul("nul-2", 5, true);
        put("c", "i2");
        wait_events("+ns/b +ns/nul-2 +ns/c ");
        informer_get_stats(inf, &st);
        cr_assert_eq(st.undecodable, 2);
        cr_assert_eq(undecodable_metric(reg), 2.0);
        cr_assert_eq(st.lists, 1, "a bad object must not cause a relist (%u lists)", st.lists);
        cr_assert_eq(st.backoffs, 0);
}

Test(informer, compact_cache_keeps_strings_with_nul)
{
        struct cache_options co = { .compact = true };
        CLEANUP(cache_freep) struct cache *c = cache_new(&co);
        json_auto_t *o = json_pack("{s:{s:s,s:s},s:s%}", "metadata", "name", "n", "namespace", "ns",
                                   "v", "a\0b", (size_t)3);
        json_auto_t *got = NULL;

        cr_assert_not_null(c);
        cr_assert_eq(cache_upsert(c, o, NULL, NULL), 0);
        got = cache_get(c, "ns/n");
        cr_assert_not_null(got, "a compact cache must load back an object with a NUL string");
        cr_assert_eq(json_string_length(json_object_get(got, "v")), 3);
}

/* informer_enqueue_mapped_if: an update the predicate refuses maps and enqueues nothing; adds
 * and other updates do. */
static atomic_int mapped_calls;

static int map_counting(void *userdata, const json_t *obj, json_t **ret_keys)
{
        (void)userdata;
        (void)obj;
        atomic_fetch_add(&mapped_calls, 1);
        *ret_keys = json_pack("[s]", "ns/k");
        return *ret_keys ? 0 : -ENOMEM;
}

/* updates matter unless data.v stays the same */
static bool v_changed(void *userdata, const json_t *old_obj, const json_t *new_obj)
{
        (void)userdata;
        return !json_equal(json_get_path(old_obj, "data", "v", NULL),
                           json_get_path(new_obj, "data", "v", NULL));
}

static json_t *cm_vb(const char *v, const char *b)
{
        return json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "metadata", "name", "c", "namespace", "ns",
                         "data", "v", v, "b", b);
}

Test(informer, enqueue_mapped_if_skips_refused_updates)
{
        CLEANUP(workqueue_freep) struct workqueue *q = NULL;
        CLEANUP(informer_freep) struct informer *inf = NULL;
        struct informer_options o = {
                .client = client,
                .gvr = { "", "v1", "configmaps" },
                .namespace = "ns",
        };
        json_auto_t *a = cm_vb("1", "1"), *b = cm_vb("1", "2"), *c = cm_vb("2", "3");
        char *k = NULL;

        cr_assert_eq(workqueue_new(NULL, &q), 0);
        cr_assert_eq(informer_new(&o, &inf), 0);
        cr_assert_eq(informer_enqueue_mapped_if(inf, q, map_counting, v_changed, NULL), 0);
        cr_assert_neq(fake_apiserver_put(fake, "/api/v1/namespaces/ns/configmaps", a), 0);
        cr_assert_eq(informer_start(inf), 0);
        cr_assert_eq(informer_wait_synced(inf, 10 * USEC_PER_SEC), 0);
        cr_assert_eq(atomic_load(&mapped_calls), 1, "the add maps once");
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        workqueue_done(q, k);
        free(k);
        cr_assert_neq(fake_apiserver_put(fake, "/api/v1/namespaces/ns/configmaps", b), 0);
        uint64_t rv = fake_apiserver_put(fake, "/api/v1/namespaces/ns/configmaps", c);
        char want[32];
        struct informer_stats st;

        cr_assert_neq(rv, 0);
        (void)snprintf(want, sizeof(want), "%" PRIu64, rv);
        /* the informer has seen c's update (so b's before it) and dispatched it */
        for (int i = 0; i < 2000; i++) {
                informer_get_stats(inf, &st);
                if (streq(st.resource_version, want) && atomic_load(&mapped_calls) >= 3)
                        break;
                usleep(5 * 1000);
        }
        cr_assert_eq(atomic_load(&mapped_calls), 3, "the refused update mapped: %d calls",
                     atomic_load(&mapped_calls));
        cr_assert_eq(workqueue_try_get(q, &k), 0);
        cr_assert_str_eq(k, "ns/k");
        free(k);
        informer_stop(inf);
}
