/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/watch-isvc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/watch-configmap.h"
#include "serving/replicas.h"
#include "util/log.h"

struct isvc_watch {
        struct routing *routing;
        char *ns, *isvc;
        struct kube_client *spare; /* the labelled set's client, until its watch starts */
        struct cm_watch *shared;
        pthread_mutex_t lock; /* the stop against the shared watch's thread starting the other */
        struct cm_watch *set; /* under lock */
        bool stopping;        /* under lock */
};

static void set_changed(void *userdata, json_t *set, uint64_t generation)
{
        struct isvc_watch *w = userdata;

        routing_set(w->routing, set, generation);
}

/* From the shared watch's thread: the labelled set's watch, once placement is on. */
static void start_set_watch(struct isvc_watch *w)
{
        AUTOFREE char *selector = NULL, *what = NULL;
        int r;

        if (asprintf(&selector, "%s=%s", REPLICAS_ISVC_LABEL, w->isvc) < 0 ||
            asprintf(&what, "ConfigMaps %s/-l %s", w->ns, selector) < 0) {
                log_error("agent: out of memory starting the placement watch");
                return;
        }
        pthread_mutex_lock(&w->lock);
        r = w->stopping ? -ECANCELED : 0;
        if (r >= 0)
                r = cm_watch_start(TAKE_PTR(w->spare),
                                   &(struct cm_watch_config){
                                           .ns = w->ns,
                                           .label_selector = selector,
                                           .what = what,
                                           .sink = { .changed = set_changed, .userdata = w },
                                   },
                                   &w->set);
        pthread_mutex_unlock(&w->lock);
        if (r == -ECANCELED)
                return;
        if (r < 0) {
                log_error_errno(r, "agent: cannot watch %s", what);
                return;
        }
        log_info("agent: watching %s (placement: assignment and the replicas' reports)", what);
}

static void shared_changed(void *userdata, json_t *set, uint64_t generation)
{
        struct isvc_watch *w = userdata;
        void *it = json_object_iter(set);
        const json_t *cm = it ? json_object_iter_value(it) : NULL; /* none or one */

        /* w->set and w->spare change only in this thread */
        if (routing_shared(w->routing, cm, generation) && !w->set && w->spare)
                start_set_watch(w);
}

static void shared_failed(void *userdata)
{
        struct isvc_watch *w = userdata;

        routing_shared_failed(w->routing);
}

int isvc_watch_start(struct routing *routing, struct kube_client *client, const char *ns,
                     const char *shared, const char *isvc, struct isvc_watch **ret)
{
        CLEANUP(kube_client_freep) struct kube_client *kc = client;
        AUTOFREE char *selector = NULL, *what = NULL;
        struct isvc_watch *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->routing = routing;
        pthread_mutex_init(&w->lock, NULL);
        w->ns = strdup(ns);
        w->isvc = isvc ? strdup(isvc) : NULL;
        r = !w->ns || (isvc && !w->isvc) ? -ENOMEM : 0;
        if (r >= 0 && isvc)
                r = kube_client_dup(kc, &w->spare);
        if (r >= 0 && (asprintf(&selector, "metadata.name=%s", shared) < 0 ||
                       asprintf(&what, "ConfigMap %s/%s", ns, shared) < 0))
                r = -ENOMEM;
        if (r < 0) {
                isvc_watch_stop(w);
                return r;
        }
        /* the mounted file waits for the first LIST's answer (agent/source.h) */
        routing_shared_starting(routing);
        r = cm_watch_start(TAKE_PTR(kc),
                           &(struct cm_watch_config){
                                   .ns = ns,
                                   .field_selector = selector,
                                   .what = what,
                                   .sink = { .changed = shared_changed,
                                             .failed = shared_failed,
                                             .userdata = w },
                           },
                           &w->shared);
        if (r < 0) {
                routing_shared_failed(routing);
                isvc_watch_stop(w);
                return r;
        }
        *ret = w;
        return 0;
}

struct isvc_watch *isvc_watch_stop(struct isvc_watch *w)
{
        if (!w)
                return NULL;
        /* both streams end in parallel; the shared watch's thread starts no other from now on */
        pthread_mutex_lock(&w->lock);
        w->stopping = true;
        cm_watch_cancel(w->set);
        pthread_mutex_unlock(&w->lock);
        cm_watch_cancel(w->shared);
        w->shared = cm_watch_stop(w->shared);
        w->set = cm_watch_stop(w->set);
        kube_client_free(w->spare);
        pthread_mutex_destroy(&w->lock);
        free(w->ns);
        free(w->isvc);
        free(w);
        return NULL;
}
