/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The ordering rules of concurrent writes (issue #12 item 2), proven on the real API server's
 * own history: while the controller (--trainedmodel-finalizer=true; defaults otherwise: 4
 * workers, 8 writes in flight per reconcile)
 * admits 200 TrainedModels and then deletes half of them, the test watches the TrainedModels and
 * the ConfigMap and replays every event in resourceVersion order (one etcd revision counter for
 * both). At every point:
 *   - a TrainedModel listed in models.json has the finalizer (it was in place before the entry);
 *   - a TrainedModel turns Ready=True only while models.json lists it;
 *   - a finalizer is removed (or the object goes) only when models.json no longer lists it;
 *   - every models.json lists each model exactly once.
 * Counts and sequences are asserted, never times (the waits are bounded polls).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json/json-util.h"

enum { N_TM = 200, N_DELETE = 100 };

static struct srv S;

struct recorder {
        pthread_mutex_t lock;
        json_t *events; /* [[rv, "tm"|"cm", type, object]] */
        atomic_bool cancel;
        atomic_int watching;
};

static struct recorder R = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void setup(void)
{
        srv_setup(&S, "ordering");
        S.finalizer = "true"; /* the rules of KServe's finalizer (test-finalizer.c: without) */
        R.events = json_array();
}

static void teardown(void)
{
        json_decref(R.events);
        srv_teardown(&S);
}

TestSuite(ordering, .init = setup, .fini = teardown);

struct watch_arg {
        const struct gvr *gvr;
        const char *kind;
        const char *field_selector;
};

static int on_event(void *userdata, const char *type, json_t *object)
{
        const struct watch_arg *a = userdata;
        const char *rv = json_get_string_path(object, "metadata", "resourceVersion", NULL);

        if (!rv || streq(type, "BOOKMARK") || streq(type, "ERROR"))
                return 0;
        (void)pthread_mutex_lock(&R.lock);
        json_array_append_new(R.events, json_pack("[I,s,s,O]", (json_int_t)strtoll(rv, NULL, 10),
                                                  a->kind, type, object));
        (void)pthread_mutex_unlock(&R.lock);
        return 0;
}

/* Watches from the resourceVersion of a fresh list until cancelled; restarts a watch that
 * ended at the last resourceVersion seen (no event is missed). */
static void *watcher(void *p)
{
        const struct watch_arg *a = p;
        CLEANUP(kube_client_freep) struct kube_client *c = NULL;
        json_auto_t *list = NULL;
        struct kube_list_options lo = { .field_selector = a->field_selector };
        struct kube_status st = { 0 };
        char rv[64];

        cr_assert_eq(kube_client_dup(S.c, &c), 0);
        cr_assert_eq(kube_list(c, a->gvr, S.ns, &lo, &list, &st), 0, "%s", st.message);
        (void)snprintf(rv, sizeof(rv), "%s",
                       json_get_string_path(list, "metadata", "resourceVersion", NULL));
        atomic_fetch_add(&R.watching, 1);
        while (!atomic_load(&R.cancel)) {
                struct kube_watch_options wo = { .field_selector = a->field_selector,
                                                 .resource_version = rv,
                                                 .allow_bookmarks = true,
                                                 .timeout_seconds = 30,
                                                 .cancel = &R.cancel };
                int k = kube_watch(c, a->gvr, S.ns, &wo, on_event, (void *)a, &st);

                cr_assert(k == 0 || k == -ECANCELED, "watch of %s failed: %d %s", a->kind, k,
                          st.message);
                /* the last resourceVersion of this kind we recorded */
                (void)pthread_mutex_lock(&R.lock);
                for (size_t i = json_array_size(R.events); i-- > 0;) {
                        json_t *e = json_array_get(R.events, i);
                        if (streq(json_string_value(json_array_get(e, 1)), a->kind)) {
                                (void)snprintf(rv, sizeof(rv), "%lld",
                                               json_integer_value(json_array_get(e, 0)));
                                break;
                        }
                }
                (void)pthread_mutex_unlock(&R.lock);
        }
        return NULL;
}

static bool has_finalizer(const json_t *obj)
{
        size_t i;
        json_t *f;

        json_array_foreach(json_get_path(obj, "metadata", "finalizers", NULL), i, f)
                if (json_is_string(f) && streq(json_string_value(f), "trainedmodel.finalizer"))
                        return true;
        return false;
}

static bool is_ready(const json_t *tm)
{
        const char *s = srv_cond_status(tm, "Ready");

        return s && streq(s, "True");
}

static int by_rv(const void *a, const void *b)
{
        json_int_t x = json_integer_value(json_array_get(*(json_t *const *)a, 0));
        json_int_t y = json_integer_value(json_array_get(*(json_t *const *)b, 0));

        return x < y ? -1 : x > y;
}

/* Replays the history; returns the number of checks made. */
static unsigned replay(void)
{
        size_t n = json_array_size(R.events);
        json_t **ev = calloc(n + 1, sizeof(*ev));
        json_auto_t *listed = json_object(); /* models.json now: name -> true */
        json_auto_t *tms = json_object();    /* TrainedModel now: name -> object */
        unsigned checks = 0, cm_versions = 0;

        cr_assert_not_null(ev);
        for (size_t i = 0; i < n; i++)
                ev[i] = json_array_get(R.events, i);
        qsort(ev, n, sizeof(*ev), by_rv);
        for (size_t i = 0; i < n; i++) {
                const char *kind = json_string_value(json_array_get(ev[i], 1));
                const char *type = json_string_value(json_array_get(ev[i], 2));
                json_t *obj = json_array_get(ev[i], 3);
                json_int_t rv = json_integer_value(json_array_get(ev[i], 0));
                const char *name = json_get_string_path(obj, "metadata", "name", NULL);

                if (streq(kind, "cm")) {
                        const char *data = json_get_string_path(obj, "data", "models.json", NULL);
                        json_auto_t *models = data ? json_loads(data, 0, NULL) : json_array();
                        size_t j;
                        json_t *m;

                        cm_versions++;
                        json_object_clear(listed);
                        json_array_foreach(models, j, m) {
                                const char *mn = json_get_string_path(m, "modelName", NULL);
                                json_t *tm = mn ? json_object_get(tms, mn) : NULL;

                                cr_assert_not_null(mn);
                                cr_assert_null(json_object_get(listed, mn),
                                               "rv %lld: %s listed twice", (long long)rv, mn);
                                cr_assert(tm && has_finalizer(tm),
                                          "rv %lld: %s listed without its finalizer", (long long)rv,
                                          mn);
                                json_object_set_new(listed, mn, json_true());
                                checks += 2;
                        }
                        continue;
                }
                json_t *before = json_object_get(tms, name);
                bool listed_now = json_object_get(listed, name) != NULL;

                if (streq(type, "DELETED")) {
                        cr_assert(!listed_now, "rv %lld: %s gone while still listed", (long long)rv,
                                  name);
                        json_object_del(tms, name);
                        checks++;
                        continue;
                }
                if (is_ready(obj) && !(before && is_ready(before))) {
                        cr_assert(listed_now, "rv %lld: %s Ready before models.json lists it",
                                  (long long)rv, name);
                        checks++;
                }
                if (before && has_finalizer(before) && !has_finalizer(obj)) {
                        cr_assert(!listed_now,
                                  "rv %lld: finalizer of %s removed while still listed",
                                  (long long)rv, name);
                        checks++;
                }
                json_object_set(tms, name, obj);
        }
        free(ev);
        cr_log_info("replayed %zu events (%u models.json versions), %u checks", n, cm_versions,
                    checks);
        cr_assert_gt(cm_versions, 0);
        return checks;
}

static size_t count_ready(void)
{
        json_auto_t *list = NULL;
        struct kube_status st = { 0 };
        size_t ready = 0;

        if (kube_list(S.c, &srv_gvr_tm, S.ns, NULL, &list, &st) < 0)
                return 0;
        for (size_t i = 0; i < json_array_size(json_object_get(list, "items")); i++)
                if (is_ready(json_array_get(json_object_get(list, "items"), i)))
                        ready++;
        return ready;
}

static size_t count_listed(void)
{
        json_auto_t *m = srv_models(&S, "isvc");

        return json_array_size(m);
}

Test(ordering, concurrent_writes_keep_the_order_of_finalizer_entry_ready, .timeout = 900)
{
        struct watch_arg tm = { &srv_gvr_tm, "tm", NULL };
        struct watch_arg cm = { &srv_gvr_cm, "cm", "metadata.name=modelconfig-isvc-0" };
        pthread_t t1, t2;
        char name[32];

        srv_isvc_create(&S, "isvc", srv_predictor_tf("100Gi"), NULL);
        srv_isvc_set_ready(&S, "isvc", true);
        cr_assert_eq(pthread_create(&t1, NULL, watcher, &tm), 0);
        cr_assert_eq(pthread_create(&t2, NULL, watcher, &cm), 0);
        SRV_WAIT(SRV_TIMEOUT, atomic_load(&R.watching) == 2, "watches did not start");
        srv_controller_start(&S);

        for (int i = 0; i < N_TM; i++) {
                (void)snprintf(name, sizeof(name), "m-%03d", i);
                srv_tm_create(&S, name, "isvc", "s3://bucket/model", "tensorflow", "10Mi");
        }
        SRV_WAIT(20 * SRV_TIMEOUT, count_ready() == N_TM && count_listed() == N_TM,
                 "not converged: %zu Ready, %zu listed", count_ready(), count_listed());
        for (int i = 0; i < N_DELETE; i++) {
                (void)snprintf(name, sizeof(name), "m-%03d", 2 * i);
                srv_delete(&S, &srv_gvr_tm, name, NULL);
        }
        SRV_WAIT(20 * SRV_TIMEOUT,
                 srv_count(&S, &srv_gvr_tm) == N_TM - N_DELETE && count_listed() == N_TM - N_DELETE,
                 "deletes not done: %zu TrainedModels, %zu listed", srv_count(&S, &srv_gvr_tm),
                 count_listed());
        srv_sleep_ms(1000); /* the last events reach the watches */
        atomic_store(&R.cancel, true);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);

        /* each admitted model: listed once, Ready once; each deleted one: finalizer removed */
        cr_assert_geq(replay(), N_TM * 2 + N_TM + N_DELETE);
        srv_controller_assert_alive(&S);
}
