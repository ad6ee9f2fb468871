/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runner's part of the reconcile port, against the fake API server over HTTP: each worker
 * reconciles with its own clone of the real libcurl client (ctx->api), and no key is reconciled
 * before the informers of controller_options.wait_for have synced.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-apiserver.h"
#include "json/json-util.h"
#include "kube/controller.h"
#include "kube/informer.h"
#include "util/log.h"

#define COLL "/api/v1/namespaces/ns/configmaps"

static const struct gvr gvr_cms = { "", "v1", "configmaps" };

struct probe {
        struct informer *inf;
        atomic_int calls, unsynced_calls, got;
        char error[600];
};

static int reconcile_probe(const struct reconcile_ctx *ctx, const char *key,
                           struct reconcile_result *ret)
{
        struct probe *p = ctx->userdata;
        struct kube_status st = { 0 };
        json_auto_t *obj = NULL;

        atomic_fetch_add(&p->calls, 1);
        if (!informer_has_synced(p->inf))
                atomic_fetch_add(&p->unsynced_calls, 1);
        if (!ctx->api)
                return reconcile_errorf(ctx, -EINVAL, "no port");
        /* a write-side call through this worker's client; a failed GET (a timeout under
         * valgrind on a loaded machine) hands the key back, as a real reconciler's would, and
         * the last error is kept for the assertion's message */
        if (kube_api_get(ctx->api, &gvr_cms, "ns", strchr(key, '/') + 1, &obj, &st) < 0) {
                (void)snprintf(p->error, sizeof(p->error), "GET: %s", st.message);
                return reconcile_errorf(ctx, -EIO, "get: %s", st.message);
        }
        if (streq(json_get_string_path(obj, "data", "k", NULL), "v"))
                atomic_fetch_add(&p->got, 1);
        return reconcile_done(ret);
}

Test(controller_port, workers_use_their_own_client_and_wait_for_the_cache_sync, .timeout = 600)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *fake = NULL;
        CLEANUP(kube_client_freep) struct kube_client *client = NULL;
        CLEANUP(informer_freep) struct informer *inf = NULL;
        CLEANUP(controller_freep) struct controller *c = NULL;
        struct kube_client_options o = { .request_timeout = 10 * USEC_PER_SEC };
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        json_auto_t *cm = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "a", "data", "k", "v");
        struct probe p = { 0 };

        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&fake), 0);
        (void)snprintf(server, sizeof(server), "%s", fake_apiserver_url(fake));
        cr_assert_eq(kube_client_new(&cfg, &o, &client), 0);
        cr_assert_neq(fake_apiserver_put(fake, COLL, cm), 0);
        cr_assert_eq(informer_new(&(struct informer_options){ .client = client,
                                                              .gvr = gvr_cms,
                                                              .namespace = "ns" },
                                  &inf),
                     0);
        p.inf = inf;
        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = { .name = "port",
                                                     .reconcile = reconcile_probe,
                                                     .userdata = &p },
                                     .workers = 2,
                                     .client = client,
                                     .wait_for = (struct informer *[]){ inf },
                                     .n_wait_for = 1,
                             },
                             &c),
                     0);
        cr_assert_eq(controller_start(c), 0);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);

        /* the informer has not even started: the key waits (requeued every 200 ms) */
        usleep(500 * 1000);
        cr_assert_eq(atomic_load(&p.calls), 0, "reconciled before the cache synced");

        cr_assert_eq(informer_start(inf), 0);
        /* no clock in the assertion: under valgrind on a loaded machine the informer's first
         * list and the worker's GET took over 20 s (CI); the bound only ends a hung test */
        for (int i = 0; i < 500000 && atomic_load(&p.got) < 1; i++)
                usleep(1000);
        /* the workers have stopped: p.error is no longer written */
        cr_assert_eq(controller_stop(c, USEC_INFINITY), 0);
        cr_assert_eq(atomic_load(&p.got), 1,
                     "the worker's GET through ctx->api failed: %d reconciles, %d before the sync,"
                     " last error \"%s\", informer synced %d",
                     atomic_load(&p.calls), atomic_load(&p.unsynced_calls), p.error,
                     informer_has_synced(inf));
        cr_assert_eq(atomic_load(&p.unsynced_calls), 0);
        informer_stop(inf);
        curl_global_cleanup();
}

/* A reconcile whose LIST stays throttled (429) after the client's retries hands its key back;
 * the runner requeues it and it is reconciled once the server accepts again: no work lost. */
struct throttled_probe {
        atomic_int calls, failed, listed;
};

static int reconcile_lists(const struct reconcile_ctx *ctx, const char *key,
                           struct reconcile_result *ret)
{
        struct throttled_probe *p = ctx->userdata;
        struct kube_status st = { 0 };
        json_auto_t *list = NULL;
        int r;

        (void)key;
        atomic_fetch_add(&p->calls, 1);
        r = kube_api_list(ctx->api, &gvr_cms, "ns", NULL, &list, &st);
        if (r < 0) {
                atomic_fetch_add(&p->failed, 1);
                return reconcile_errorf(ctx, r, "list: %s", st.message);
        }
        atomic_fetch_add(&p->listed, 1);
        return reconcile_done(ret);
}

Test(controller_port, throttled_past_the_retries_is_requeued_not_lost, .timeout = 60)
{
        CLEANUP(fake_apiserver_freep) struct fake_apiserver *fake = NULL;
        CLEANUP(kube_client_freep) struct kube_client *client = NULL;
        CLEANUP(controller_freep) struct controller *c = NULL;
        struct kube_client_options o = { .request_timeout = 10 * USEC_PER_SEC,
                                         .throttle_retries = 2,
                                         .throttle_wait_max = USEC_PER_MSEC };
        char server[64];
        struct kube_config cfg = { .server = server, .namespace = (char *)"default" };
        struct throttled_probe p = { 0 };
        unsigned long throttled = 0, exhausted = 0;

        cr_assert_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        cr_assert_eq(fake_apiserver_start(&fake), 0);
        (void)snprintf(server, sizeof(server), "%s", fake_apiserver_url(fake));
        cr_assert_eq(kube_client_new(&cfg, &o, &client), 0);
        cr_assert_eq(controller_new(
                             &(struct controller_options){
                                     .reconciler = { .name = "throttled",
                                                     .reconcile = reconcile_lists,
                                                     .userdata = &p },
                                     .workers = 1,
                                     .client = client,
                             },
                             &c),
                     0);
        /* 7 throttled answers: two reconciles use up their 3 tries, the third gets through */
        fake_apiserver_fail_lists(fake, 429, 7);
        cr_assert_eq(controller_start(c), 0);
        cr_assert_eq(controller_enqueue(c, "ns/a"), 0);
        for (int i = 0; i < 30000 && atomic_load(&p.listed) < 1; i++)
                usleep(1000);
        cr_assert_eq(atomic_load(&p.listed), 1, "the key was lost after the throttling");
        cr_assert_eq(atomic_load(&p.failed), 2);
        cr_assert_eq(atomic_load(&p.calls), 3);
        kube_client_throttle_stats(client, &throttled, &exhausted);
        cr_assert_eq(throttled, 7);
        cr_assert_eq(exhausted, 2);

        cr_assert_eq(controller_stop(c, USEC_INFINITY), 0);
        curl_global_cleanup();
}
