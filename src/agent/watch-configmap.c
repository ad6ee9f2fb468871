/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/watch-configmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serving/modelconfig.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };

struct cm_watch {
        struct agent *agent;
        struct kube_client *client;
        char *ns, *name, *selector;
        atomic_bool cancel;
        pthread_t thread;
        bool started;
        char rv[128];
};

static void deliver(struct cm_watch *w, json_t *cm)
{
        const char *rv = json_string_value(
                json_object_get(json_object_get(cm, "metadata"), "resourceVersion"));
        const char *data = json_string_value(
                json_object_get(json_object_get(cm, "data"), MODELCONFIG_KEY));

        if (rv)
                snprintf(w->rv, sizeof(w->rv), "%s", rv);
        agent_set_desired(w->agent, AGENT_SOURCE_API, data ? data : "");
        agent_set_api_healthy(w->agent, true);
}

static int on_event(void *userdata, const char *type, json_t *obj)
{
        struct cm_watch *w = userdata;
        const char *rv;

        if (streq(type, "ADDED") || streq(type, "MODIFIED")) {
                deliver(w, obj);
        } else if (streq(type, "DELETED")) {
                w->rv[0] = 0;
                agent_set_desired(w->agent, AGENT_SOURCE_API, "");
        } else if (streq(type, "BOOKMARK")) {
                rv = json_string_value(
                        json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
                if (rv)
                        (void)snprintf(w->rv, sizeof(w->rv), "%s", rv);
        }
        return 0;
}

static void sleep_cancellable(struct cm_watch *w, usec_t d)
{
        for (usec_t t = 0; t < d && !atomic_load(&w->cancel); t += 100 * USEC_PER_MSEC) {
                struct timespec ts = { .tv_nsec = 100L * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

/* Reads the ConfigMap when there is no resourceVersion to watch from. A missing ConfigMap is
 * the empty list, watched from the list's resourceVersion for its creation. */
static int cm_read(struct cm_watch *w, struct kube_status *st)
{
        json_auto_t *cm = NULL, *list = NULL;
        struct kube_list_options lo = { .field_selector = w->selector };
        const char *rv;
        int r;

        r = kube_get(w->client, &configmaps, w->ns, w->name, &cm, st);
        if (r >= 0) {
                deliver(w, cm);
                return r;
        }
        if (r != -ENOENT)
                return r;
        agent_set_desired(w->agent, AGENT_SOURCE_API, "");
        agent_set_api_healthy(w->agent, true);
        r = kube_list(w->client, &configmaps, w->ns, &lo, &list, st);
        if (r >= 0) {
                rv = json_string_value(
                        json_object_get(json_object_get(list, "metadata"), "resourceVersion"));
                (void)snprintf(w->rv, sizeof(w->rv), "%s", rv ? rv : "");
        }
        return r;
}

/* One watch from w->rv, until it ends; -ESTALE forgets the resourceVersion. */
static int cm_watch_once(struct cm_watch *w, struct kube_status *st)
{
        struct kube_watch_options wo = {
                .field_selector = w->selector,
                .resource_version = w->rv,
                .allow_bookmarks = true,
                .timeout_seconds = 300,
                .cancel = &w->cancel,
        };
        int r;

        r = kube_watch(w->client, &configmaps, w->ns, &wo, on_event, w, st);
        if (r == -ESTALE)
                w->rv[0] = 0;
        return r;
}

static void *cm_thread(void *userdata)
{
        struct cm_watch *w = userdata;
        usec_t backoff = USEC_PER_SEC;

        while (!atomic_load(&w->cancel)) {
                struct kube_status st = { 0 };
                int r = 0;

                if (!w->rv[0])
                        r = cm_read(w, &st);
                if (r >= 0 && w->rv[0]) {
                        r = cm_watch_once(w, &st);
                        if (r >= 0) {
                                backoff = USEC_PER_SEC;
                                continue;
                        }
                }
                if (r == -ECANCELED || atomic_load(&w->cancel))
                        break;
                if (r < 0) {
                        log_warn(
                                "agent: ConfigMap %s/%s via the API: %s (%d%s%s); using the mounted file meanwhile",
                                w->ns, w->name, st.message[0] ? st.message : errno_to_string(r),
                                st.http_code, st.reason[0] ? " " : "", st.reason);
                        agent_set_api_healthy(w->agent, false);
                        w->rv[0] = 0;
                        sleep_cancellable(w, backoff);
                        backoff = MIN(backoff * 2, 30 * USEC_PER_SEC);
                }
        }
        return NULL;
}

int cm_watch_start(struct agent *a, struct kube_client *client, const char *ns, const char *name,
                   struct cm_watch **ret)
{
        struct cm_watch *w = calloc(1, sizeof(*w));
        int r;

        if (!w) {
                kube_client_free(client);
                return -ENOMEM;
        }
        w->agent = a;
        w->client = client;
        w->ns = strdup(ns);
        w->name = strdup(name);
        if (!w->ns || !w->name || asprintf(&w->selector, "metadata.name=%s", name) < 0) {
                w->selector = NULL;
                cm_watch_stop(w);
                return -ENOMEM;
        }
        r = -pthread_create(&w->thread, NULL, cm_thread, w);
        if (r < 0) {
                cm_watch_stop(w);
                return r;
        }
        w->started = true;
        *ret = w;
        return 0;
}

struct cm_watch *cm_watch_stop(struct cm_watch *w)
{
        if (!w)
                return NULL;
        atomic_store(&w->cancel, true);
        if (w->started)
                pthread_join(w->thread, NULL);
        kube_client_free(w->client);
        free(w->ns);
        free(w->name);
        free(w->selector);
        free(w);
        return NULL;
}
