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
#include "agent/source.h"
#include "util/log.h"

static const struct gvr configmaps = { "", "v1", "configmaps" };

#define CM_WATCH_TIMEOUT_SEC 300

struct cm_watch {
        struct kube_client *client;
        char *ns, *field_selector, *label_selector, *what;
        struct cm_watch_sink sink;
        atomic_bool cancel;
        pthread_t thread;
        bool started;
        /* the watch thread's */
        struct reflector rf;
        json_t *set; /* name -> ConfigMap */
};

static const char *rv_of(json_t *obj)
{
        return json_string_value(
                json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static const char *name_of(json_t *obj)
{
        return json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
}

static void changed(struct cm_watch *w, const char *rv)
{
        w->sink.changed(w->sink.userdata, w->set, source_generation_from_rv(rv));
}

/* Puts @obj (borrowed; its managedFields are dropped: nobody reads them) into the set. */
static int set_put(struct cm_watch *w, json_t *obj)
{
        const char *name = name_of(obj);

        if (!name)
                return -EBADMSG;
        (void)json_object_del(json_object_get(obj, "metadata"), "managedFields");
        return json_object_set(w->set, name, obj) < 0 ? -ENOMEM : 0;
}

static int on_event(void *userdata, const char *type, json_t *obj)
{
        struct cm_watch *w = userdata;
        const char *rv = rv_of(obj);
        int r = 0;

        if (streq(type, "ADDED") || streq(type, "MODIFIED"))
                r = set_put(w, obj);
        else if (streq(type, "DELETED") && name_of(obj))
                (void)json_object_del(w->set, name_of(obj));
        else if (!streq(type, "BOOKMARK"))
                return 0; /* ERROR: kube_watch() ends the watch with its errno */
        if (r == -ENOMEM)
                return r; /* the watch ends; the next step relists */
        if (r < 0)
                log_warn("agent: %s: a %s event without a name; ignored", w->what, type);
        if (!streq(type, "BOOKMARK"))
                changed(w, rv);
        if (reflector_observed(&w->rf, rv) < 0)
                log_warn("agent: %s: unusable resourceVersion in a %s event; relisting", w->what,
                         type);
        return 0;
}

static void sleep_cancellable(struct cm_watch *w, usec_t d)
{
        for (usec_t t = 0; t < d && !atomic_load(&w->cancel); t += 100 * USEC_PER_MSEC) {
                struct timespec ts = { .tv_nsec = 100L * 1000 * 1000 };
                nanosleep(&ts, NULL);
        }
}

/* LIST (a quorum read) of the selected ConfigMaps: the set replaced whole, as of the list's
 * resourceVersion (@ret_rv). */
static int cm_list(struct cm_watch *w, char *ret_rv, size_t len, struct kube_status *st)
{
        struct kube_list_options lo = { .field_selector = w->field_selector,
                                        .label_selector = w->label_selector };
        json_auto_t *list = NULL, *set = NULL;
        json_t *items, *cm;
        const char *rv;
        size_t i;
        int r;

        r = kube_list(w->client, &configmaps, w->ns, &lo, &list, st);
        if (r < 0)
                return r;
        rv = rv_of(list);
        items = json_object_get(list, "items");
        set = json_object();
        if (!set)
                return -ENOMEM;
        if (!rv || !rv[0] || strlen(rv) >= len || !json_is_array(items)) {
                (void)snprintf(st->message, sizeof(st->message),
                               "LIST answer without items or a usable resourceVersion");
                return -EBADMSG;
        }
        json_decref(w->set);
        w->set = TAKE_PTR(set);
        json_array_foreach(items, i, cm)
                if (set_put(w, cm) == -ENOMEM)
                        return -ENOMEM;
        changed(w, rv);
        memcpy(ret_rv, rv, strlen(rv) + 1);
        return 0;
}

static int cm_watch_from(struct cm_watch *w, const char *rv, struct kube_status *st)
{
        struct kube_watch_options wo = {
                .field_selector = w->field_selector,
                .label_selector = w->label_selector,
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
                log_info("agent: %s: %s expired (%s); relisting%s", w->what, what, msg,
                         step->delay ? " after a backoff step" : "");
        else if (step->failed)
                log_warn("agent: %s via the API: %s failed: %s (%d%s%s); %s in %.1f s", w->what,
                         what, msg, st->http_code, st->reason[0] ? " " : "", st->reason, next,
                         (double)step->delay / (double)USEC_PER_SEC);
        else if (r < 0)
                log_info("agent: %s: the watch stream was cut (%s); %s", w->what, msg, next);
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
                if (step.failed && w->sink.failed)
                        w->sink.failed(w->sink.userdata);
        }
        return NULL;
}

int cm_watch_start(struct kube_client *client, const struct cm_watch_config *cfg,
                   struct cm_watch **ret)
{
        struct cm_watch *w = calloc(1, sizeof(*w));
        int r;

        if (!w) {
                kube_client_free(client);
                return -ENOMEM;
        }
        w->client = client;
        w->sink = cfg->sink;
        reflector_init(&w->rf, 0, 0);
        w->ns = strdup(cfg->ns);
        w->what = strdup(cfg->what);
        w->field_selector = cfg->field_selector ? strdup(cfg->field_selector) : NULL;
        w->label_selector = cfg->label_selector ? strdup(cfg->label_selector) : NULL;
        w->set = json_object();
        if (!w->ns || !w->what || !w->set || (cfg->field_selector && !w->field_selector) ||
            (cfg->label_selector && !w->label_selector)) {
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

void cm_watch_cancel(struct cm_watch *w)
{
        if (w)
                atomic_store(&w->cancel, true);
}

struct cm_watch *cm_watch_stop(struct cm_watch *w)
{
        if (!w)
                return NULL;
        atomic_store(&w->cancel, true);
        if (w->started)
                pthread_join(w->thread, NULL);
        kube_client_free(w->client);
        json_decref(w->set);
        free(w->ns);
        free(w->what);
        free(w->field_selector);
        free(w->label_selector);
        free(w);
        return NULL;
}
