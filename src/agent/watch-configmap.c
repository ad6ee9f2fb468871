/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/watch-configmap.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/fetch.h"
#include "agent/reflector.h"
#include "serving/modelconfig.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };

#define CM_WATCH_TIMEOUT_SEC 300

struct cm_watch {
        struct agent *agent;
        struct kube_client *client;
        char *ns, *name, *selector;
        atomic_bool cancel;
        pthread_t thread;
        bool started;
        struct reflector rf; /* the watch thread's */
};

static const char *rv_of(json_t *obj)
{
        return json_string_value(
                json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

/* Hands the ConfigMap's models.json ("" without one: no models) to the agent, as of @rv. */
static void deliver(struct cm_watch *w, json_t *cm, const char *rv)
{
        const char *data = json_string_value(
                json_object_get(json_object_get(cm, "data"), MODELCONFIG_KEY));

        agent_set_desired(w->agent, AGENT_SOURCE_API, data ? data : "",
                          source_generation_from_rv(rv));
}

static int on_event(void *userdata, const char *type, json_t *obj)
{
        struct cm_watch *w = userdata;
        const char *rv = rv_of(obj);

        if (streq(type, "ADDED") || streq(type, "MODIFIED"))
                deliver(w, obj, rv);
        else if (streq(type, "DELETED"))
                agent_set_desired(w->agent, AGENT_SOURCE_API, "", source_generation_from_rv(rv));
        else if (!streq(type, "BOOKMARK"))
                return 0; /* ERROR: kube_watch() ends the watch with its errno */
        if (reflector_observed(&w->rf, rv) < 0)
                log_warn(
                        "agent: ConfigMap %s/%s: unusable resourceVersion in a %s event; relisting",
                        w->ns, w->name, type);
        return 0;
}

static void sleep_cancellable(struct cm_watch *w, usec_t d)
{
        for (usec_t t = 0; t < d && !atomic_load(&w->cancel); t += 100 * USEC_PER_MSEC) {
                struct timespec ts = { .tv_nsec = 100L * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

/* LIST (a quorum read) of the one ConfigMap: its models.json, or no models when it does not
 * exist, as of the list's resourceVersion (@ret_rv). */
static int cm_list(struct cm_watch *w, char *ret_rv, size_t len, struct kube_status *st)
{
        struct kube_list_options lo = { .field_selector = w->selector };
        json_auto_t *list = NULL;
        json_t *items, *cm;
        const char *rv;
        int r;

        r = kube_list(w->client, &configmaps, w->ns, &lo, &list, st);
        if (r < 0)
                return r;
        rv = rv_of(list);
        items = json_object_get(list, "items");
        if (!rv || !rv[0] || strlen(rv) >= len || !json_is_array(items)) {
                (void)snprintf(st->message, sizeof(st->message),
                               "LIST answer without items or a usable resourceVersion");
                return -EBADMSG;
        }
        cm = json_array_get(items, 0); /* the field selector leaves none or one */
        if (cm)
                deliver(w, cm, rv);
        else
                agent_set_desired(w->agent, AGENT_SOURCE_API, "", source_generation_from_rv(rv));
        memcpy(ret_rv, rv, strlen(rv) + 1);
        return 0;
}

static int cm_watch_from(struct cm_watch *w, const char *rv, struct kube_status *st)
{
        struct kube_watch_options wo = {
                .field_selector = w->selector,
                .resource_version = rv,
                .allow_bookmarks = true,
                .timeout_seconds = CM_WATCH_TIMEOUT_SEC,
                .cancel = &w->cancel,
        };

        return kube_watch(w->client, &configmaps, w->ns, &wo, on_event, w, st);
}

static void log_step(struct cm_watch *w, const char *what, int r, const struct kube_status *st,
                     const struct reflector_step *step)
{
        const char *msg = st->message[0] ? st->message : errno_to_string(r);
        const char *next = step->op == REFLECTOR_LIST ? "relisting" : "resuming the watch";

        if (step->expired)
                log_info("agent: ConfigMap %s/%s: %s expired (%s); relisting%s", w->ns, w->name,
                         what, msg, step->delay ? " after a backoff step" : "");
        else if (step->failed)
                log_warn("agent: ConfigMap %s/%s via the API: %s failed: %s (%d%s%s); %s in %.1f s",
                         w->ns, w->name, what, msg, st->http_code, st->reason[0] ? " " : "",
                         st->reason, next, (double)step->delay / (double)USEC_PER_SEC);
        else if (r < 0)
                log_info("agent: ConfigMap %s/%s: the watch stream was cut (%s); %s", w->ns,
                         w->name, msg, next);
}

static void *cm_thread(void *userdata)
{
        struct cm_watch *w = userdata;
        struct reflector_step step = reflector_start(&w->rf);

        while (!atomic_load(&w->cancel)) {
                struct kube_status st = { 0 };
                char rv[REFLECTOR_RV_MAX] = "";
                const char *what;
                usec_t started;
                int r;

                sleep_cancellable(w, step.delay);
                if (atomic_load(&w->cancel))
                        break;
                started = now_monotonic();
                if (step.op == REFLECTOR_LIST) {
                        what = "list";
                        r = cm_list(w, rv, sizeof(rv), &st);
                        if (r == -ECANCELED)
                                break;
                        step = reflector_listed(&w->rf, r, rv, now_monotonic(), fetch_jitter01());
                } else {
                        what = "watch";
                        (void)snprintf(rv, sizeof(rv), "%s", w->rf.rv);
                        r = cm_watch_from(w, rv, &st);
                        if (r == -ECANCELED || atomic_load(&w->cancel))
                                break;
                        step = reflector_watch_ended(&w->rf, r, now_monotonic() - started,
                                                     now_monotonic(), fetch_jitter01());
                }
                log_step(w, what, r, &st, &step);
                /* before the first answer: the file is used meanwhile; after it: nothing changes */
                if (step.failed)
                        agent_set_api_state(w->agent, SOURCE_API_FAILING);
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
        reflector_init(&w->rf, 0, 0);
        w->ns = strdup(ns);
        w->name = strdup(name);
        if (!w->ns || !w->name || asprintf(&w->selector, "metadata.name=%s", name) < 0) {
                w->selector = NULL;
                cm_watch_stop(w);
                return -ENOMEM;
        }
        /* the mounted file waits for the first LIST's answer (agent/source.h) */
        agent_set_api_state(a, SOURCE_API_STARTING);
        r = -pthread_create(&w->thread, NULL, cm_thread, w);
        if (r < 0) {
                agent_set_api_state(a, SOURCE_API_FAILING);
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
