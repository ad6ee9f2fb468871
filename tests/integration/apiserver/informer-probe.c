/* SPDX-License-Identifier: Apache-2.0 */
/*
 * informer-probe: runs one real informer (src/kube/informer.h) on ConfigMaps of a namespace with
 * a label selector, for the shell test test-informer-real.sh. On SIGUSR1 it writes its view to
 * DUMP_FILE as lines "name resourceVersion", sorted, followed by "# lists=N relists=N"; SIGTERM
 * ends it. The test compares that view with the API server's.
 *
 *   informer-probe KUBECONFIG NAMESPACE SELECTOR DUMP_FILE
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "json/json-util.h"
#include "kube/cache.h"
#include "kube/informer.h"
#include "kube-connect.h"
#include "util/log.h"

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int dump(struct informer *inf, const char *path)
{
        json_auto_t *list = NULL;
        struct informer_stats st;
        char tmp[4096], **lines;
        size_t n;
        FILE *f;
        int r;

        r = cache_list(informer_cache(inf), &list);
        if (r < 0)
                return r;
        n = json_array_size(list);
        lines = calloc(n + 1, sizeof(*lines));
        if (!lines)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_t *o = json_array_get(list, i);
                if (asprintf(&lines[i], "%s %s", json_get_string_path(o, "metadata", "name", NULL),
                             json_get_string_path(o, "metadata", "resourceVersion", NULL)) < 0)
                        return -ENOMEM;
        }
        qsort(lines, n, sizeof(*lines), cmp_str);
        (void)snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        f = fopen(tmp, "we");
        if (!f)
                return -errno;
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s\n", lines[i]);
                free(lines[i]);
        }
        free(lines);
        informer_get_stats(inf, &st);
        fprintf(f, "# lists=%u relists=%u\n", st.lists, st.relists);
        if (fclose(f) != 0)
                return -errno;
        return rename(tmp, path) < 0 ? -errno : 0;
}

int main(int argc, char **argv)
{
        struct kube_config *cfg = NULL;
        struct kube_client *client = NULL;
        struct informer *inf = NULL;
        sigset_t mask;
        int r, sig;

        if (argc != 5) {
                fprintf(stderr, "usage: informer-probe KUBECONFIG NAMESPACE SELECTOR DUMP_FILE\n");
                return 2;
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGUSR1);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void)pthread_sigmask(SIG_BLOCK, &mask, NULL);
        (void)curl_global_init(CURL_GLOBAL_DEFAULT);

        if (kube_connect(argv[1], &cfg, &client) < 0)
                return 1;
        r = informer_new(
                &(struct informer_options){
                        .name = "probe",
                        .client = client,
                        .gvr = { "", "v1", "configmaps" },
                        .namespace = argv[2],
                        .label_selector = argv[3],
                        .cache = { .compact = true },
                        /* short watches: a re-watch from a compacted
                                          * resourceVersion is what yields 410 */
                        .watch_timeout_seconds = 3,
                        .backoff_initial = 200 * USEC_PER_MSEC,
                        .backoff_max = 2 * USEC_PER_SEC,
                },
                &inf);
        if (r >= 0)
                r = informer_start(inf);
        if (r < 0) {
                log_error_errno(r, "Failed to start the informer");
                return 1;
        }
        log_info("probe started");
        for (;;) {
                sig = sigwaitinfo(&mask, NULL);
                if (sig == SIGUSR1) {
                        r = dump(inf, argv[4]);
                        if (r < 0)
                                log_error_errno(r, "Failed to write %s", argv[4]);
                        continue;
                }
                if (sig == SIGTERM || sig == SIGINT)
                        break;
        }
        informer_stop(inf);
        informer_free(inf);
        kube_client_free(client);
        kube_config_free(cfg);
        curl_global_cleanup();
        return 0;
}
