/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube-client-bench: creates per second through modelplane's Kubernetes client (src/kube/client.h)
 * against a real API server, sequentially and with N threads, each with its own cloned client.
 *
 *   kube-client-bench KUBECONFIG NAMESPACE COUNT THREADS
 *
 * Creates COUNT ConfigMaps named bench-<thread>-<i> in NAMESPACE (which must exist) and prints
 * one line with the rate. Wall-clock figures: reported by bench/controller, never asserted.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "kube-connect.h"
#include "util/parse-util.h"
#include "util/time-util.h"

struct job {
        struct kube_client *client;
        const char *ns;
        unsigned id, count, threads;
        int result;
};

static const struct gvr gvr_cm = { "", "v1", "configmaps" };

static void *run(void *arg)
{
        struct job *j = arg;

        for (unsigned i = 0; i < j->count; i++) {
                char name[64];
                json_t *cm;
                struct kube_status st = { 0 };
                int r;

                (void)snprintf(name, sizeof(name), "bench-%u-%u-%u", j->threads, j->id, i);
                cm = json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                               "metadata", "name", name, "data", "k", "v");
                if (!cm) {
                        j->result = -ENOMEM;
                        return NULL;
                }
                r = kube_create(j->client, &gvr_cm, j->ns, cm, NULL, NULL, &st);
                json_decref(cm);
                if (r < 0) {
                        fprintf(stderr, "create %s failed: %s\n", name, st.message);
                        j->result = r;
                        return NULL;
                }
        }
        return NULL;
}

int main(int argc, char **argv)
{
        struct kube_config *cfg = NULL;
        struct kube_client *base = NULL;
        uint32_t count, threads;
        int r;

        if (argc != 5 || safe_atou32(argv[3], &count) < 0 || safe_atou32(argv[4], &threads) < 0 ||
            threads == 0 || threads > 64) {
                fprintf(stderr,
                        "usage: kube-client-bench KUBECONFIG NAMESPACE COUNT THREADS(1-64)\n");
                return 2;
        }
        (void)curl_global_init(CURL_GLOBAL_DEFAULT);
        if (kube_connect(argv[1], &cfg, &base) < 0)
                return 1;

        struct job jobs[64];
        pthread_t tids[64];
        usec_t t0 = now_monotonic();
        for (unsigned t = 0; t < threads; t++) {
                jobs[t] = (struct job){
                        .ns = argv[2], .id = t, .count = count / threads, .threads = threads
                };
                if (kube_client_dup(base, &jobs[t].client) < 0)
                        return 1;
                if (pthread_create(&tids[t], NULL, run, &jobs[t]) != 0)
                        return 1;
        }
        r = 0;
        for (unsigned t = 0; t < threads; t++) {
                (void)pthread_join(tids[t], NULL);
                if (jobs[t].result < 0)
                        r = jobs[t].result;
                kube_client_free(jobs[t].client);
        }
        usec_t t1 = now_monotonic();
        unsigned done = (count / threads) * threads;
        printf("modelplane client creates/s with %u thread(s): %.0f (%u ConfigMaps in %.2f s)\n",
               threads, (double)done * 1e6 / (double)(t1 - t0), done, (double)(t1 - t0) / 1e6);
        kube_client_free(base);
        kube_config_free(cfg);
        curl_global_cleanup();
        return r < 0 ? 1 : 0;
}
