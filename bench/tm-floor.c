/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tm-floor: the creator and the API-server floor probe of bench/convergence.
 *
 *   tm-floor create       KUBECONFIG NAMESPACE ISVC COUNT CREATORS PREFIX
 *   tm-floor floor        KUBECONFIG NAMESPACE ISVC COUNT CREATORS PREFIX WINDOW [DESIGN]
 *   tm-floor delete       KUBECONFIG NAMESPACE ISVC COUNT CREATORS PREFIX
 *   tm-floor delete-floor KUBECONFIG NAMESPACE ISVC COUNT CREATORS PREFIX WINDOW [DESIGN]
 *
 * create  POSTs COUNT TrainedModels (PREFIX-00000 ...) on InferenceService ISVC from CREATORS
 *         threads, each with its own client (modelplane's src/kube client, no rate limit).
 *         ISVC may be NAME:K, for K InferenceServices NAME-000 ... (TrainedModel i on i % K).
 * floor   the same creates, and, as each create is acknowledged, the writes a perfect controller
 *         makes for it, from a tight client with WINDOW concurrent requests: in batches of
 *         whatever has been acknowledged so far, one metadata merge PATCH per TrainedModel
 *         (parent labels, ownerReference; and the finalizer in the finalizer design), one merge
 *         PATCH of models.json in
 *         modelconfig-ISVC-0 per batch, one status merge PATCH per TrainedModel (Ready) -- the
 *         writes `modelplane controller` makes (src/serving/reconciler.c), without the watch
 *         latency, reads, planning or events. The ConfigMap must exist.
 * delete  DELETEs PREFIX-00000 ... from CREATORS threads (the deleter of bench/convergence: the
 *         same client and concurrency as the creator, so that both controllers see the same
 *         stream of deletes).
 * delete-floor  the same deletes, and, as each is acknowledged, what a perfect controller does
 *         for it: in batches of whatever has been acknowledged so far, one merge PATCH of
 *         models.json without the deleted entries; in the finalizer design then one metadata
 *         merge PATCH per TrainedModel that drops its finalizer (the API server then removes the
 *         object), from WINDOW concurrent requests. Run after `floor` (same DESIGN) on the same
 *         objects.
 *
 * DESIGN is what the controller is: `no-finalizer` (the default, modelplane's default since
 * issue 27: a delete removes the object at once, nothing waits for the controller) or
 * `finalizer` (KServe's, and `modelplane controller --trainedmodel-finalizer=true`).
 *
 * Prints one line of key=value figures, times as Unix seconds (CLOCK_REALTIME, so that
 * bench/convergence can compare them with its watcher's), and throttled: the 429 answers its
 * clients received and retried. Wall-clock figures are reported,
 * never asserted.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "kube/client.h"
#include "kube/config.h"
#include "util/parse-util.h"
#include "util/time-util.h"

#define MAX_THREADS 64

static const struct gvr gvr_tm = { "serving.kserve.io", "v1alpha1", "trainedmodels" };
static const struct gvr gvr_isvc = { "serving.kserve.io", "v1beta1", "inferenceservices" };
static const struct gvr gvr_cm = { "", "v1", "configmaps" };

struct probe {
        const char *ns, *isvc, *prefix, *isvc_uid;
        unsigned count, creators, window, n_isvcs; /* n_isvcs 0: the one ISVC */
        bool writes;    /* the floor: a perfect controller's writes too */
        bool deleting;  /* DELETEs instead of creates */
        bool finalizer; /* the finalizer design */
        /* acknowledged creates not yet handled by the writer */
        pthread_mutex_t lock;
        pthread_cond_t cond;
        unsigned *acked;
        unsigned n_acked, n_taken;
        atomic_int failed;
        usec_t first_request, last_ack;
};

struct creator {
        struct probe *p;
        struct kube_client *client;
        unsigned id;
};

static void tm_name(const struct probe *p, unsigned i, char *buf, size_t len)
{
        (void)snprintf(buf, len, "%s-%05u", p->prefix, i);
}

/* One create or delete of TrainedModel i; prints what failed. */
static int request_one(struct creator *c, unsigned i)
{
        struct probe *p = c->p;
        char name[128], uri[192], isvc[160];
        struct kube_status st = { 0 };
        json_t *tm;
        int r;

        tm_name(p, i, name, sizeof(name));
        if (p->deleting) {
                r = kube_delete(c->client, &gvr_tm, p->ns, name, NULL, NULL, &st);
                if (r < 0)
                        fprintf(stderr, "tm-floor: delete %s: %s\n", name, st.message);
                return r;
        }
        if (p->n_isvcs)
                (void)snprintf(isvc, sizeof(isvc), "%s-%03u", p->isvc, i % p->n_isvcs);
        else
                (void)snprintf(isvc, sizeof(isvc), "%s", p->isvc);
        (void)snprintf(uri, sizeof(uri), "s3://models/%s/%u", p->prefix, i);
        tm = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:{s:s,s:s,s:s}}}", "apiVersion",
                       "serving.kserve.io/v1alpha1", "kind", "TrainedModel", "metadata", "name",
                       name, "namespace", p->ns, "spec", "inferenceService", isvc, "model",
                       "storageUri", uri, "framework", "sklearn", "memory", "1Mi");
        if (!tm)
                return -ENOMEM;
        r = kube_create(c->client, &gvr_tm, p->ns, tm, NULL, NULL, &st);
        json_decref(tm);
        if (r < 0)
                fprintf(stderr, "tm-floor: create %s: %s\n", name, st.message);
        return r;
}

static void *create_run(void *arg)
{
        struct creator *c = arg;
        struct probe *p = c->p;

        for (unsigned i = c->id; i < p->count && !atomic_load(&p->failed); i += p->creators) {
                int r = request_one(c, i);

                if (r < 0) {
                        atomic_store(&p->failed, r);
                        break;
                }
                (void)pthread_mutex_lock(&p->lock);
                p->acked[p->n_acked++] = i;
                p->last_ack = now_realtime();
                (void)pthread_cond_signal(&p->cond);
                (void)pthread_mutex_unlock(&p->lock);
        }
        (void)pthread_mutex_lock(&p->lock);
        (void)pthread_cond_signal(&p->cond);
        (void)pthread_mutex_unlock(&p->lock);
        return NULL;
}

/* What one phase writes per TrainedModel. */
enum patch_kind {
        PATCH_METADATA,   /* finalizer, parent labels, ownerReference */
        PATCH_STATUS,     /* Ready */
        PATCH_UNFINALIZE, /* the finalizer dropped (after a delete) */
};

/* One phase of a batch: WINDOW threads share the batch through an atomic cursor. */
struct phase {
        struct probe *p;
        const unsigned *batch;
        unsigned n;
        atomic_uint next;
        enum patch_kind kind;
        char now[64];
};

struct writer {
        struct phase *ph;
        struct kube_client *client;
        unsigned writes;
};

static json_t *metadata_patch(const struct probe *p)
{
        if (!p->finalizer)
                return json_pack("{s:{s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}}", "metadata",
                                 "labels", "serving.kserve.io/inferenceservice", p->isvc,
                                 "serving.kserve.io/trainedmodel-allocated", p->isvc,
                                 "ownerReferences", "apiVersion", "serving.kserve.io/v1beta1",
                                 "kind", "InferenceService", "name", p->isvc, "uid", p->isvc_uid,
                                 "controller", true, "blockOwnerDeletion", true);
        return json_pack("{s:{s:{s:s,s:s},s:[s],s:[{s:s,s:s,s:s,s:s,s:b,s:b}]}}", "metadata",
                         "labels", "serving.kserve.io/inferenceservice", p->isvc,
                         "serving.kserve.io/trainedmodel-allocated", p->isvc, "finalizers",
                         "trainedmodel.finalizer", "ownerReferences", "apiVersion",
                         "serving.kserve.io/v1beta1", "kind", "InferenceService", "name", p->isvc,
                         "uid", p->isvc_uid, "controller", true, "blockOwnerDeletion", true);
}

static json_t *status_patch(const struct probe *p, const char *name, const char *now)
{
        char url[512];

        (void)snprintf(url, sizeof(url), "http://%s.%s.example.com/v1/models/%s:predict", p->isvc,
                       p->ns, name);
        return json_pack("{s:{s:s,s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s},"
                         "{s:s,s:s,s:s},{s:s,s:s,s:s}]}}",
                         "status", "url", url, "conditions", "type", "FrameworkSupported", "status",
                         "True", "lastTransitionTime", now, "type", "InferenceServiceReady",
                         "status", "True", "lastTransitionTime", now, "type", "IsMMSPredictor",
                         "status", "True", "lastTransitionTime", now, "type",
                         "MemoryResourceAvailable", "status", "True", "lastTransitionTime", now,
                         "type", "Ready", "status", "True", "lastTransitionTime", now);
}

static void *phase_run(void *arg)
{
        struct writer *w = arg;
        struct phase *ph = w->ph;
        struct probe *p = ph->p;
        struct kube_write_options status_opts = { .subresource = "status" };
        unsigned k;

        while ((k = atomic_fetch_add(&ph->next, 1)) < ph->n && !atomic_load(&p->failed)) {
                char name[128];
                struct kube_status st = { 0 };
                json_t *patch;
                int r;

                tm_name(p, ph->batch[k], name, sizeof(name));
                patch = ph->kind == PATCH_STATUS ? status_patch(p, name, ph->now)
                        : ph->kind == PATCH_METADATA
                                ? metadata_patch(p)
                                : json_pack("{s:{s:[]}}", "metadata", "finalizers");
                if (!patch) {
                        atomic_store(&p->failed, -ENOMEM);
                        break;
                }
                r = kube_patch(w->client, &gvr_tm, p->ns, name, KUBE_PATCH_MERGE, patch,
                               ph->kind == PATCH_STATUS ? &status_opts : NULL, NULL, &st);
                json_decref(patch);
                if (r < 0) {
                        fprintf(stderr, "tm-floor: patch %s%s: %s\n", name,
                                ph->kind == PATCH_STATUS ? "/status" : "", st.message);
                        atomic_store(&p->failed, r);
                        break;
                }
                w->writes++;
        }
        return NULL;
}

static int run_phase(struct probe *p, struct writer *ws, const unsigned *batch, unsigned n,
                     enum patch_kind kind)
{
        struct phase ph = { .p = p, .batch = batch, .n = n, .kind = kind };
        pthread_t tids[MAX_THREADS];
        unsigned t, threads = n < p->window ? n : p->window;

        if (format_rfc3339(now_realtime(), ph.now, sizeof(ph.now)) < 0)
                return -EINVAL;
        for (t = 0; t < threads; t++) {
                ws[t].ph = &ph;
                if (pthread_create(&tids[t], NULL, phase_run, &ws[t]) != 0)
                        break;
        }
        for (unsigned j = 0; j < t; j++)
                (void)pthread_join(tids[j], NULL);
        if (t < threads)
                return -EAGAIN;
        return atomic_load(&p->failed);
}

/* models.json with the entries of the TrainedModels marked in listed[COUNT]. */
static char *models_json(const struct probe *p, const bool *listed)
{
        json_t *arr = json_array();
        char *s;

        if (!arr)
                return NULL;
        for (unsigned k = 0; k < p->count; k++) {
                char name[128], uri[192];

                if (!listed[k])
                        continue;
                tm_name(p, k, name, sizeof(name));
                (void)snprintf(uri, sizeof(uri), "s3://models/%s/%u", p->prefix, k);
                if (json_array_append_new(arr, json_pack("{s:s,s:{s:s,s:s,s:s}}", "modelName", name,
                                                         "modelSpec", "storageUri", uri,
                                                         "framework", "sklearn", "memory", "1Mi")) <
                    0) {
                        json_decref(arr);
                        return NULL;
                }
        }
        s = json_dumps(arr, JSON_COMPACT);
        json_decref(arr);
        return s;
}

/* The writer: batches of acknowledged creates until all COUNT are Ready, or of acknowledged
 * deletes until all COUNT are gone. */
static int write_all(struct probe *p, struct kube_client *base, unsigned *batches, unsigned *writes,
                     size_t *cm_bytes)
{
        struct writer ws[MAX_THREADS] = { 0 };
        unsigned *handled = calloc(p->count, sizeof(*handled));
        bool *listed = calloc(p->count, sizeof(*listed));
        unsigned n_handled = 0;
        int r = 0;

        if (!handled || !listed) {
                r = -ENOMEM;
                goto out;
        }
        for (unsigned k = 0; k < p->count; k++)
                listed[k] = p->deleting; /* a delete starts from all of them listed */
        for (unsigned t = 0; t < p->window; t++)
                if (kube_client_dup(base, &ws[t].client) < 0) {
                        r = -ENOMEM;
                        goto out;
                }
        while (n_handled < p->count) {
                unsigned from = n_handled, n;
                struct kube_status st = { 0 };
                json_t *patch;
                char *mj;

                (void)pthread_mutex_lock(&p->lock);
                while (p->n_taken == p->n_acked && !atomic_load(&p->failed))
                        (void)pthread_cond_wait(&p->cond, &p->lock);
                n = p->n_acked - p->n_taken;
                memcpy(handled + from, p->acked + p->n_taken, n * sizeof(*handled));
                p->n_taken = p->n_acked;
                (void)pthread_mutex_unlock(&p->lock);
                r = atomic_load(&p->failed);
                if (r < 0)
                        goto out;
                n_handled += n;

                if (!p->deleting) {
                        r = run_phase(p, ws, handled + from, n, PATCH_METADATA);
                        if (r < 0)
                                goto out;
                }
                for (unsigned k = from; k < n_handled; k++)
                        listed[handled[k]] = !p->deleting;
                mj = models_json(p, listed);
                if (!mj) {
                        r = -ENOMEM;
                        goto out;
                }
                *cm_bytes += strlen(mj);
                patch = json_pack("{s:{s:s}}", "data", "models.json", mj);
                free(mj);
                if (!patch) {
                        r = -ENOMEM;
                        goto out;
                }
                {
                        char cm[300];

                        (void)snprintf(cm, sizeof(cm), "modelconfig-%s-0", p->isvc);
                        r = kube_patch(base, &gvr_cm, p->ns, cm, KUBE_PATCH_MERGE, patch, NULL,
                                       NULL, &st);
                }
                json_decref(patch);
                if (r < 0) {
                        fprintf(stderr, "tm-floor: patch ConfigMap: %s\n", st.message);
                        goto out;
                }
                (*writes)++;
                if (!p->deleting)
                        r = run_phase(p, ws, handled + from, n, PATCH_STATUS);
                else if (p->finalizer)
                        r = run_phase(p, ws, handled + from, n, PATCH_UNFINALIZE);
                if (r < 0)
                        goto out;
                (*batches)++;
        }
out:
        for (unsigned t = 0; t < p->window; t++) {
                *writes += ws[t].writes;
                kube_client_free(ws[t].client);
        }
        free(handled);
        free(listed);
        return r;
}

static int usage(void)
{
        fprintf(stderr,
                "usage: tm-floor create|delete KUBECONFIG NAMESPACE ISVC COUNT CREATORS PREFIX\n"
                "       tm-floor floor|delete-floor KUBECONFIG NAMESPACE ISVC COUNT CREATORS "
                "PREFIX WINDOW [no-finalizer|finalizer]\n(CREATORS and WINDOW 1-64)\n");
        return 2;
}

int main(int argc, char **argv)
{
        struct kube_config_options copts = { 0 };
        struct kube_config *cfg = NULL;
        struct kube_client *base = NULL;
        struct probe p = { 0 };
        struct creator cs[MAX_THREADS];
        pthread_t tids[MAX_THREADS];
        json_t *isvc = NULL;
        unsigned batches = 0, writes = 0, started = 0;
        size_t cm_bytes = 0;
        usec_t done;
        struct error_detail kerr = { 0 };
        int r;

        if (argc < 8)
                return usage();
        p.writes = streq(argv[1], "floor") || streq(argv[1], "delete-floor");
        p.deleting = streq(argv[1], "delete") || streq(argv[1], "delete-floor");
        if (!p.writes && !p.deleting && !streq(argv[1], "create"))
                return usage();
        if (p.writes ? argc != 9 && argc != 10 : argc != 8)
                return usage();
        if (argc == 10) {
                if (streq(argv[9], "finalizer"))
                        p.finalizer = true;
                else if (!streq(argv[9], "no-finalizer")) {
                        fprintf(stderr, "tm-floor: DESIGN is no-finalizer or finalizer, not '%s'\n",
                                argv[9]);
                        return usage();
                }
        }
        if (safe_atou32(argv[5], &p.count) < 0 || safe_atou32(argv[6], &p.creators) < 0 ||
            p.creators == 0 || p.creators > MAX_THREADS || p.count == 0)
                return usage();
        p.window = 1;
        if (p.writes &&
            (safe_atou32(argv[8], &p.window) < 0 || p.window == 0 || p.window > MAX_THREADS))
                return usage();
        p.ns = argv[3];
        p.isvc = argv[4];
        p.prefix = argv[7];
        {
                char *colon = strchr(argv[4], ':');

                if (colon) {
                        *colon = '\0';
                        if (p.writes || safe_atou32(colon + 1, &p.n_isvcs) < 0 || p.n_isvcs == 0)
                                return usage();
                }
        }
        p.acked = calloc(p.count, sizeof(*p.acked));
        if (!p.acked || pthread_mutex_init(&p.lock, NULL) != 0 ||
            pthread_cond_init(&p.cond, NULL) != 0)
                return 1;

        (void)curl_global_init(CURL_GLOBAL_DEFAULT);
        copts.kubeconfig_path = argv[2];
        r = kube_config_load(&copts, &cfg, &kerr);
        if (r < 0) {
                fprintf(stderr, "tm-floor: kubeconfig: %s\n", kerr.message);
                return 1;
        }
        if (kube_client_new(cfg, NULL, &base) < 0)
                return 1;
        if (p.writes) {
                struct kube_status st = { 0 };

                r = kube_get(base, &gvr_isvc, p.ns, p.isvc, &isvc, &st);
                if (r < 0) {
                        fprintf(stderr, "tm-floor: InferenceService %s/%s: %s\n", p.ns, p.isvc,
                                st.message);
                        return 1;
                }
                p.isvc_uid = json_string_value(
                        json_object_get(json_object_get(isvc, "metadata"), "uid"));
                if (!p.isvc_uid)
                        return 1;
        }

        p.first_request = now_realtime();
        for (; started < p.creators; started++) {
                cs[started] = (struct creator){ .p = &p, .id = started };
                if (kube_client_dup(base, &cs[started].client) < 0 ||
                    pthread_create(&tids[started], NULL, create_run, &cs[started]) != 0) {
                        atomic_store(&p.failed, -EAGAIN);
                        break;
                }
        }
        r = 0;
        if (p.writes && started == p.creators)
                r = write_all(&p, base, &batches, &writes, &cm_bytes);
        for (unsigned t = 0; t < started; t++) {
                (void)pthread_join(tids[t], NULL);
                kube_client_free(cs[t].client);
        }
        done = now_realtime();
        if (r == 0)
                r = atomic_load(&p.failed);
        if (r == 0) {
                unsigned long throttled = 0;

                kube_client_throttle_stats(base, &throttled, NULL);
                printf("first_request=%.6f last_ack=%.6f throttled=%lu",
                       (double)p.first_request / 1e6, (double)p.last_ack / 1e6, throttled);
                if (p.writes)
                        printf(" done=%.6f batches=%u writes=%u configmap_bytes=%zu window=%u "
                               "design=%s",
                               (double)done / 1e6, batches, writes, cm_bytes, p.window,
                               p.finalizer ? "finalizer" : "no-finalizer");
                printf("\n");
        }
        json_decref(isvc);
        kube_client_free(base);
        kube_config_free(cfg);
        curl_global_cleanup();
        free(p.acked);
        return r < 0 ? 1 : 0;
}
