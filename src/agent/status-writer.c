/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/status-writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/report.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };
static const struct gvr pods = { "", "v1", "pods" };

struct status_writer {
        struct agent *agent;
        struct kube_client *client;
        char *ns, *pod, *isvc, *name, *pod_uid;
        usec_t interval, heartbeat;
        atomic_bool stop;
        pthread_t thread;
        bool started;
};

/* The report's data object (serving/report.h) from agent_status(). NULL on OOM. */
static json_t *report_of(struct status_writer *w)
{
        json_t *models = agent_status(w->agent), *m, *data = NULL;
        struct report_model *rm;
        size_t i, n = json_array_size(models);

        if (!models)
                return NULL;
        rm = calloc(n ? n : 1, sizeof(*rm));
        if (rm) {
                json_array_foreach(models, i, m)
                        rm[i] = (struct report_model){
                                .name = json_string_value(json_object_get(m, "name")),
                                .state = json_string_value(json_object_get(m, "state")),
                                .storage_uri = json_string_value(json_object_get(m, "storageUri")),
                                .reason = json_string_value(json_object_get(m, "reason")),
                        };
                struct report_meta meta = {
                        .pod = w->pod,
                        .beat = now_realtime(),
                        .period_sec = (unsigned)(w->heartbeat / USEC_PER_SEC),
                };

                data = report_data_encode(rm, n, &meta);
        }
        free(rm);
        json_decref(models);
        return data;
}

static json_t *build(struct status_writer *w)
{
        json_t *data = report_of(w), *obj;

        if (!data)
                return NULL;
        obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:o}", "apiVersion", "v1", "kind",
                        "ConfigMap", "metadata", "name", w->name, "namespace", w->ns, "labels",
                        "serving.kserve.io/inferenceservice", w->isvc, "modelplane.io/model-status",
                        "agent", "data", data);
        if (obj && w->pod_uid &&
            json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                                json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind",
                                          "Pod", "name", w->pod, "uid", w->pod_uid)) < 0) {
                json_decref(obj);
                return NULL;
        }
        return obj;
}

static int write_once(struct status_writer *w)
{
        struct kube_write_options wo = { .field_manager = "modelplane-agent", .force = true };
        struct kube_status st = { 0 };
        json_t *obj = build(w);
        int r;

        if (!obj)
                return -ENOMEM;
        r = kube_patch(w->client, &configmaps, w->ns, w->name, KUBE_PATCH_APPLY, obj, &wo, NULL,
                       &st);
        json_decref(obj);
        if (r < 0)
                log_warn("agent: cannot write model status %s/%s: %s (%d)", w->ns, w->name,
                         st.message[0] ? st.message : errno_to_string(r), st.http_code);
        return r;
}

static void *writer_thread(void *userdata)
{
        struct status_writer *w = userdata;
        unsigned long written = (unsigned long)-1;
        usec_t last = 0;

        for (;;) {
                bool stopping = atomic_load(&w->stop);
                unsigned long g = agent_status_generation(w->agent);
                usec_t now = now_monotonic();

                /* a change (coalesced by the sleep below), or the heartbeat is due */
                if ((g != written || now - last >= w->heartbeat) && write_once(w) >= 0) {
                        written = g;
                        last = now;
                }
                if (stopping)
                        break;
                struct timespec ts = usec_to_timespec(w->interval);
                nanosleep(&ts, NULL);
        }
        return NULL;
}

int status_writer_start(struct agent *a, struct kube_client *client, const char *ns,
                        const char *pod, const char *isvc, usec_t interval, usec_t heartbeat,
                        struct status_writer **ret)
{
        struct status_writer *w = calloc(1, sizeof(*w));
        struct kube_status st = { 0 };
        json_t *p = NULL;
        int r;

        if (!w) {
                kube_client_free(client);
                return -ENOMEM;
        }
        w->agent = a;
        w->client = client;
        w->interval = interval ? interval : 500 * USEC_PER_MSEC;
        w->heartbeat = heartbeat >= USEC_PER_SEC ? heartbeat : 10 * USEC_PER_SEC;
        w->ns = strdup(ns);
        w->pod = strdup(pod);
        w->isvc = strdup(isvc);
        if (!w->ns || !w->pod || !w->isvc || asprintf(&w->name, "modelstatus-%s", pod) < 0) {
                w->name = NULL;
                status_writer_stop(w);
                return -ENOMEM;
        }
        if (kube_get(client, &pods, ns, pod, &p, &st) >= 0) {
                const char *uid = json_string_value(
                        json_object_get(json_object_get(p, "metadata"), "uid"));
                w->pod_uid = uid ? strdup(uid) : NULL;
        } else {
                log_warn("agent: pod %s/%s not readable (%s): the status object gets no owner", ns,
                         pod, st.message);
        }
        json_decref(p);
        r = -pthread_create(&w->thread, NULL, writer_thread, w);
        if (r < 0) {
                status_writer_stop(w);
                return r;
        }
        w->started = true;
        *ret = w;
        return 0;
}

struct status_writer *status_writer_stop(struct status_writer *w)
{
        if (!w)
                return NULL;
        atomic_store(&w->stop, true);
        if (w->started)
                pthread_join(w->thread, NULL);
        kube_client_free(w->client);
        free(w->ns);
        free(w->pod);
        free(w->isvc);
        free(w->name);
        free(w->pod_uid);
        free(w);
        return NULL;
}
