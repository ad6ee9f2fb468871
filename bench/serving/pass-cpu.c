/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/serving/pass-cpu — the CPU time of one InferenceService reconcile pass (issue #12),
 * in-process against the in-memory kube_api fake (tests/fakes): no network, no API server, so
 * what it prints is modelplane's own cost per pass.
 *
 *   build/tests/unit/serving-pass-cpu [N [ROUNDS [D]]]
 *
 * N TrainedModels (default 1,000) on one InferenceService are converged first. Then it times,
 * in CPU time of the process (CLOCK_PROCESS_CPUTIME_ID) and wall time:
 *   - steady: ROUNDS passes (default 20) that have nothing to write (a resync, an event that
 *     changed nothing the plan reads);
 *   - churn: ROUNDS passes, each after D (default 10) new TrainedModels were created, so each
 *     pass writes their finalizers, models.json and their statuses.
 * The caches are refilled from the fake before each pass (the informer's part); that copy is
 * outside the timed region.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake-clock.h"
#include "fake-kube-api.h"
#include "fake-serving.h"
#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/controller.h"
#include "serving/reconciler.h"

#define NS  "default"
#define NOW ((usec_t)1750000000 * USEC_PER_SEC)

static struct fake_clock clk;
static struct fake_kube_api *fake;
static struct kube_api api;
static struct cache *tms, *isvcs;
static struct tm_reconciler *rec;
static char error[1024];

static double seconds(clockid_t id)
{
        struct timespec ts;

        (void)clock_gettime(id, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
        fprintf(stderr, "serving-pass-cpu: %s%s%s\n", what, error[0] ? ": " : "", error);
        exit(1);
}

static void put_isvc(void)
{
        if (fake_serving_put_isvc(fake, NS, "sk", "1000Gi", "http://sk.example.com") == 0)
                die("cannot create the InferenceService");
}

static void put_tm(size_t i)
{
        char name[32], uri[64];

        (void)snprintf(name, sizeof(name), "model-%06zu", i);
        (void)snprintf(uri, sizeof(uri), "s3://bucket/models/%06zu", i);
        if (fake_serving_put_tm(fake, NS, name, "sk", uri, "100Mi") == 0)
                die("cannot create a TrainedModel");
}

/* The informer's part: the caches get what the fake holds. */
static void sync_caches(void)
{
        if (fake_serving_sync(fake, &api, NS, tms, isvcs) < 0)
                die("cannot fill the caches");
}

static void pass(void)
{
        const struct log_fields lf = { .controller = "bench", .object = NS "/sk" };
        struct reconciler rc = tm_reconciler_get(rec);
        struct reconcile_ctx ctx = { .userdata = rc.userdata,
                                     .api = &api,
                                     .clock = &clk.clock,
                                     .log = &lf,
                                     .error = error,
                                     .error_size = sizeof(error) };
        struct reconcile_result res = { .outcome = RECONCILE_DONE };

        error[0] = '\0';
        if (rc.reconcile(&ctx, NS "/sk", &res) < 0)
                die("a pass failed");
        fake_clock_advance(&clk, USEC_PER_SEC);
}

/* Runs rounds passes, each after prepare(), and prints CPU and wall ms per pass. */
static void timed(const char *label, unsigned rounds, size_t *next, size_t d)
{
        double cpu = 0, wall = 0;
        unsigned long writes = 0;

        for (unsigned i = 0; i < rounds; i++) {
                double c0, w0;

                for (size_t j = 0; j < d; j++)
                        put_tm((*next)++);
                sync_caches();
                c0 = seconds(CLOCK_PROCESS_CPUTIME_ID);
                w0 = seconds(CLOCK_MONOTONIC);
                pass();
                cpu += seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
                wall += seconds(CLOCK_MONOTONIC) - w0;
                writes += fake_kube_api_calls(fake, FAKE_KUBE_PATCH, NULL) +
                          fake_kube_api_calls(fake, FAKE_KUBE_CREATE, NULL);
        }
        printf("%-6s N=%-6zu %3u passes: %8.2f ms CPU/pass, %8.2f ms wall/pass, %6.1f writes/pass\n",
               label, *next, rounds, cpu * 1e3 / rounds, wall * 1e3 / rounds,
               (double)writes / rounds);
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
        unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 20;
        size_t d = argc > 3 ? strtoul(argv[3], NULL, 10) : 10;
        size_t next = 0;
        struct tm_reconciler_stats st;

        if (n == 0 || rounds == 0) {
                fprintf(stderr, "usage: serving-pass-cpu [N>0 [ROUNDS>0 [D]]]\n");
                return 2;
        }
        fake_clock_init(&clk, NOW);
        fake = fake_kube_api_new(&clk.clock);
        tms = cache_new(NULL);
        isvcs = cache_new(NULL);
        if (!fake || !tms || !isvcs || cache_add_index(tms, TM_INDEX_ISVC, tm_index_isvc, NULL) < 0)
                die("out of memory");
        api = fake_kube_api_port(fake);
        if (tm_reconciler_new(&(struct tm_reconciler_options){ .trainedmodels = tms,
                                                               .inferenceservices = isvcs,
                                                               .writes_per_pass = 100000 },
                              &rec) < 0)
                die("cannot create the reconciler");
        put_isvc();
        for (; next < n; next++)
                put_tm(next);
        for (int i = 0; i < 4; i++) { /* admit, list, Ready: converged */
                sync_caches();
                pass();
        }
        timed("steady", rounds, &next, 0);
        timed("churn", rounds, &next, d);
        tm_reconciler_get_stats(rec, &st);
        printf("totals: %lu passes, %lu plans, %lu ConfigMap writes, %lu status writes\n",
               st.passes, st.plans, st.configmap_writes, st.tm_status_writes);
        tm_reconciler_free(rec);
        cache_free(tms);
        cache_free(isvcs);
        fake_kube_api_free(fake);
        return 0;
}
