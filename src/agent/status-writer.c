/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/status-writer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/reporter.h"
#include "json/json-util.h"
#include "serving/replicas.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };
static const struct gvr pods = { "", "v1", "pods" };

struct status_writer {
        struct kube_client *client;
        char *ns, *pod, *isvc, *name, *pod_uid, *pod_ip;
        struct reporter *reporter;
};

json_t *status_writer_object(const json_t *data, const char *ns, const char *pod, const char *isvc,
                             const char *pod_uid)
{
        AUTOFREE char *name = NULL;
        json_t *obj;

        if (asprintf(&name, REPLICAS_STATUS_PREFIX "%s", pod) < 0)
                return NULL;
        obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:o}", "apiVersion", "v1", "kind",
                        "ConfigMap", "metadata", "name", name, "namespace", ns, "labels",
                        REPLICAS_ISVC_LABEL, isvc, REPLICAS_STATUS_LABEL, REPLICAS_STATUS_LABEL_VAL,
                        "data", json_deep_copy(data));
        if (obj && pod_uid &&
            json_object_set_new(json_object_get(obj, "metadata"), "ownerReferences",
                                json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion", "v1", "kind",
                                          "Pod", "name", pod, "uid", pod_uid)) < 0) {
                json_decref(obj);
                return NULL;
        }
        return obj;
}

/* The sink: one server-side apply of the ConfigMap. */
static int write_configmap(void *userdata, const json_t *data, char *reterr, size_t len_err)
{
        struct status_writer *w = userdata;
        struct kube_write_options wo = { .field_manager = "modelplane-agent", .force = true };
        struct kube_status st = { 0 };
        json_t *obj = status_writer_object(data, w->ns, w->pod, w->isvc, w->pod_uid);
        int r;

        if (!obj)
                return -ENOMEM;
        r = kube_patch(w->client, &configmaps, w->ns, w->name, KUBE_PATCH_APPLY, obj, &wo, NULL,
                       &st);
        json_decref(obj);
        if (r < 0)
                (void)snprintf(reterr, len_err, "%s/%s: %s (%d)", w->ns, w->name,
                               st.message[0] ? st.message : errno_to_string(r), st.http_code);
        return r;
}

static const struct status_sink_ops configmap_sink_ops = { .write = write_configmap };

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
        int r;

        if (!w) {
                kube_client_free(client);
                return -ENOMEM;
        }
        w->client = client;
        w->ns = strdup(cfg->ns);
        w->pod = strdup(cfg->pod);
        w->isvc = strdup(cfg->isvc);
        if (!w->ns || !w->pod || !w->isvc ||
            asprintf(&w->name, REPLICAS_STATUS_PREFIX "%s", cfg->pod) < 0) {
                w->name = NULL;
                status_writer_stop(w);
                return -ENOMEM;
        }
        read_pod(w);
        r = reporter_new(a, &(struct status_sink_port){ &configmap_sink_ops, w },
                         &(struct reporter_options){ .pod = cfg->pod,
                                                     .interval = cfg->interval,
                                                     .heartbeat = cfg->heartbeat },
                         &w->reporter);
        if (r >= 0)
                r = reporter_start(w->reporter);
        if (r < 0) {
                status_writer_stop(w);
                return r;
        }
        *ret = w;
        return 0;
}

struct status_writer *status_writer_stop(struct status_writer *w)
{
        if (!w)
                return NULL;
        w->reporter = reporter_free(w->reporter); /* the last write */
        kube_client_free(w->client);
        free(w->ns);
        free(w->pod);
        free(w->isvc);
        free(w->name);
        free(w->pod_uid);
        free(w->pod_ip);
        free(w);
        return NULL;
}

const char *status_writer_pod_ip(const struct status_writer *w)
{
        return w->pod_ip;
}

int status_writer_set_address(struct status_writer *w, const char *address)
{
        return reporter_set_address(w->reporter, address);
}

void status_writer_set_draining(struct status_writer *w)
{
        reporter_set_draining(w->reporter);
}
