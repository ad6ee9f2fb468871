/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/status-writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json/json-util.h"
#include "serving/report.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };
static const struct gvr pods = { "", "v1", "pods" };

struct status_writer {
        struct agent *agent;
        struct kube_client *client;
        char *ns, *pod, *isvc, *name, *pod_uid, *pod_ip;
        usec_t interval, heartbeat;
        pthread_t thread;
        bool started;

        pthread_mutex_t lock;
        pthread_cond_t cond; /* wakes the writer: a stop, an address, draining */
        /* under lock */
        bool stop;
        char *address;
        bool draining;
        unsigned long meta_generation; /* bumped when the address or draining changes */
};

/* The report's data object (serving/report.h) from agent_status(). NULL on OOM. */
static json_t *report_of(struct status_writer *w, const char *address, bool draining)
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
                        .address = address,
                        .draining = draining,
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
        AUTOFREE char *address = NULL;
        json_t *data, *obj;
        bool draining;

        pthread_mutex_lock(&w->lock);
        address = w->address ? strdup(w->address) : NULL;
        draining = w->draining;
        pthread_mutex_unlock(&w->lock);
        data = report_of(w, address, draining);

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

/* Waits @d or until woken (a stop, an address, draining). Returns whether to stop. */
static bool writer_wait(struct status_writer *w, usec_t d, unsigned long seen)
{
        struct timespec ts = usec_to_timespec(now_monotonic() + d);
        bool stop;

        pthread_mutex_lock(&w->lock);
        while (!w->stop && w->meta_generation == seen &&
               pthread_cond_timedwait(&w->cond, &w->lock, &ts) != ETIMEDOUT)
                ;
        stop = w->stop;
        pthread_mutex_unlock(&w->lock);
        return stop;
}

static unsigned long meta_generation(struct status_writer *w)
{
        unsigned long g;

        pthread_mutex_lock(&w->lock);
        g = w->meta_generation;
        pthread_mutex_unlock(&w->lock);
        return g;
}

static void *writer_thread(void *userdata)
{
        struct status_writer *w = userdata;
        unsigned long written = (unsigned long)-1, meta_written = (unsigned long)-1;
        usec_t last = 0;

        for (;;) {
                bool stopping;
                unsigned long g = agent_status_generation(w->agent), mg = meta_generation(w);
                usec_t now = now_monotonic();

                pthread_mutex_lock(&w->lock);
                stopping = w->stop;
                pthread_mutex_unlock(&w->lock);
                /* a change (coalesced by the wait below), or the heartbeat is due */
                if ((g != written || mg != meta_written || now - last >= w->heartbeat) &&
                    write_once(w) >= 0) {
                        written = g;
                        meta_written = mg;
                        last = now;
                }
                if (stopping || writer_wait(w, w->interval, mg))
                        break;
        }
        /* one last write when the stop came during the wait */
        if (agent_status_generation(w->agent) != written || meta_generation(w) != meta_written)
                (void)write_once(w);
        return NULL;
}

/* The Pod's uid (the report's owner) and IP, when it can be read. */
static void read_pod(struct status_writer *w)
{
        struct kube_status st = { 0 };
        json_t *p = NULL;

        if (kube_get(w->client, &pods, w->ns, w->pod, &p, &st) >= 0) {
                const char *uid = json_get_string_path(p, "metadata", "uid", NULL);
                const char *ip = json_get_string_path(p, "status", "podIP", NULL);

                w->pod_uid = uid ? strdup(uid) : NULL;
                w->pod_ip = ip && ip[0] ? strdup(ip) : NULL;
        } else {
                log_warn("agent: pod %s/%s not readable (%s): the status object gets no owner",
                         w->ns, w->pod, st.message);
        }
        json_decref(p);
}

int status_writer_start(struct agent *a, struct kube_client *client,
                        const struct status_writer_config *cfg, struct status_writer **ret)
{
        struct status_writer *w = calloc(1, sizeof(*w));
        pthread_condattr_t ca;
        int r;

        if (!w) {
                kube_client_free(client);
                return -ENOMEM;
        }
        w->agent = a;
        w->client = client;
        w->interval = cfg->interval ? cfg->interval : 500 * USEC_PER_MSEC;
        w->heartbeat = cfg->heartbeat >= USEC_PER_SEC ? cfg->heartbeat : 10 * USEC_PER_SEC;
        pthread_mutex_init(&w->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&w->cond, &ca);
        pthread_condattr_destroy(&ca);
        w->ns = strdup(cfg->ns);
        w->pod = strdup(cfg->pod);
        w->isvc = strdup(cfg->isvc);
        if (!w->ns || !w->pod || !w->isvc || asprintf(&w->name, "modelstatus-%s", cfg->pod) < 0) {
                w->name = NULL;
                status_writer_stop(w);
                return -ENOMEM;
        }
        read_pod(w);
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
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        if (w->started)
                pthread_join(w->thread, NULL);
        kube_client_free(w->client);
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w->ns);
        free(w->pod);
        free(w->isvc);
        free(w->name);
        free(w->pod_uid);
        free(w->pod_ip);
        free(w->address);
        free(w);
        return NULL;
}

const char *status_writer_pod_ip(const struct status_writer *w)
{
        return w->pod_ip;
}

int status_writer_set_address(struct status_writer *w, const char *address)
{
        char *copy = strdup(address);

        if (!copy)
                return -ENOMEM;
        pthread_mutex_lock(&w->lock);
        free(w->address);
        w->address = copy;
        w->meta_generation++;
        pthread_cond_broadcast(&w->cond);
        pthread_mutex_unlock(&w->lock);
        return 0;
}

void status_writer_set_draining(struct status_writer *w)
{
        pthread_mutex_lock(&w->lock);
        if (!w->draining) {
                w->draining = true;
                w->meta_generation++;
                pthread_cond_broadcast(&w->cond);
        }
        pthread_mutex_unlock(&w->lock);
}
