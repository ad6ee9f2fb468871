/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/routing.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/routes.h"
#include "agent/spread.h"
#include "json/json-util.h"
#include "serving/modelconfig.h"
#include "util/log.h"

#define REPORT_STATE_LOADED "Loaded"

struct routing {
        struct agent *agent;
        char *isvc, *pod;
        char *own_name; /* modelconfig-<isvc>-<pod>; NULL without both */
        const struct clock *realtime;

        /* the watches' updates, one at a time (lock order: build_lock, then lock or the
         * agent's) */
        pthread_mutex_t build_lock;
        struct spread_state spread;
        char *offered;    /* the last view handed to the agent */
        json_t *set;      /* the labelled set (a shallow copy); NULL until listed */
        bool shared_seen; /* the shared ConfigMap's watch has answered */
        bool warned;      /* the annotation without a pod name was logged */

        /* what the proxy's threads read */
        pthread_mutex_t lock;
        bool placement;
        struct routes table;
};

int routing_new(const struct routing_config *cfg, struct routing **ret)
{
        struct routing *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->agent = cfg->agent;
        r->realtime = cfg->realtime ? cfg->realtime : &clock_realtime;
        pthread_mutex_init(&r->build_lock, NULL);
        pthread_mutex_init(&r->lock, NULL);
        r->isvc = cfg->isvc ? strdup(cfg->isvc) : NULL;
        r->pod = cfg->pod ? strdup(cfg->pod) : NULL;
        if ((cfg->isvc && !r->isvc) || (cfg->pod && !r->pod)) {
                routing_free(r);
                return -ENOMEM;
        }
        if (r->isvc && r->pod && asprintf(&r->own_name, "modelconfig-%s-%s", r->isvc, r->pod) < 0) {
                r->own_name = NULL;
                routing_free(r);
                return -ENOMEM;
        }
        spread_state_init(&r->spread, r->own_name != NULL);
        *ret = r;
        return 0;
}

struct routing *routing_free(struct routing *r)
{
        if (!r)
                return NULL;
        spread_state_release(&r->spread);
        routes_release(&r->table);
        json_decref(r->set);
        free(r->offered);
        free(r->isvc);
        free(r->pod);
        free(r->own_name);
        pthread_mutex_destroy(&r->build_lock);
        pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

/* Under build_lock: hands the agent the view when its bytes changed. */
static void offer(struct routing *r)
{
        uint64_t generation;
        const char *view = spread_view(&r->spread, &generation);
        char *copy;

        if (!view || (r->offered && streq(r->offered, view)))
                return;
        copy = strdup(view);
        if (!copy) {
                log_error("agent: out of memory taking models.json");
                return;
        }
        free(r->offered);
        r->offered = copy;
        agent_set_desired(r->agent, AGENT_SOURCE_API, view, generation);
}

/* Under build_lock: the table from the shared models.json and the labelled set, swapped in. */
static void rebuild(struct routing *r)
{
        struct routes fresh = { 0 }, old;
        bool on = spread_on(&r->spread);
        int e = 0;

        if (on)
                e = routes_build(
                        &(struct routes_input){
                                .pod = r->pod,
                                .shared_models_json = r->spread.shared,
                                .configmaps = r->set,
                        },
                        &fresh);
        if (e < 0) {
                log_error("agent: out of memory building the routing table; keeping the last one");
                return;
        }
        pthread_mutex_lock(&r->lock);
        old = r->table;
        r->table = fresh;
        r->placement = on;
        pthread_mutex_unlock(&r->lock);
        routes_release(&old);
}

static void log_switch(struct routing *r, bool was, bool spread)
{
        bool on = spread_on(&r->spread);

        if (spread && !r->own_name && !r->warned) {
                r->warned = true;
                log_warn("agent: the shared ConfigMap asks for placement (%s: %s) but this pod or "
                         "its InferenceService is not known (POD_NAME, --inference-service): "
                         "loading every model",
                         SPREAD_ANNOTATION, SPREAD_VALUE);
        }
        if (on && !was)
                log_info("agent: placement on: loading the models assigned in ConfigMap %s",
                         r->own_name);
        else if (!on && was)
                log_info("agent: placement off: loading every model of the shared ConfigMap");
}

void routing_shared_starting(struct routing *r)
{
        agent_set_api_state(r->agent, SOURCE_API_STARTING);
}

bool routing_shared(struct routing *r, const json_t *cm, uint64_t generation)
{
        const char *json = json_get_string_path(cm, "data", MODELCONFIG_KEY, NULL);
        const char *ann = json_get_string_path(cm, "metadata", "annotations", SPREAD_ANNOTATION,
                                               NULL);
        bool spread = ann && streq(ann, SPREAD_VALUE), was, on;

        pthread_mutex_lock(&r->build_lock);
        was = spread_on(&r->spread);
        if (spread_set_shared(&r->spread, json ? json : "", spread, generation) < 0) {
                log_error("agent: out of memory taking models.json");
        } else {
                r->shared_seen = true;
                log_switch(r, was, spread);
                offer(r);
                rebuild(r);
        }
        on = spread_on(&r->spread);
        pthread_mutex_unlock(&r->build_lock);
        return on;
}

void routing_shared_failed(struct routing *r)
{
        bool seen;

        pthread_mutex_lock(&r->build_lock);
        seen = r->shared_seen;
        pthread_mutex_unlock(&r->build_lock);
        /* once it answered, its last view stays (under placement that view may not even have
         * been handed over yet: the mounted file, which lists every model, must not be used) */
        if (!seen)
                agent_set_api_state(r->agent, SOURCE_API_FAILING);
}

/* This pod's assignment in @set: its models.json ("" without one), NULL when absent. */
static const char *own_assignment(const struct routing *r, const json_t *set)
{
        const json_t *cm = r->own_name ? json_object_get(set, r->own_name) : NULL;
        const char *label = json_get_string_path(cm, "metadata", "labels", ROUTES_ASSIGNMENT_LABEL,
                                                 NULL);
        const char *json;

        if (!cm || !label || !streq(label, ROUTES_ASSIGNMENT_VALUE))
                return NULL;
        json = json_get_string_path(cm, "data", MODELCONFIG_KEY, NULL);
        return json ? json : "";
}

void routing_set(struct routing *r, json_t *set, uint64_t generation)
{
        json_t *copy = json_copy(set);

        if (!copy) {
                log_error("agent: out of memory taking the InferenceService's ConfigMaps");
                return;
        }
        pthread_mutex_lock(&r->build_lock);
        if (spread_set_own(&r->spread, own_assignment(r, set), generation) < 0) {
                log_error("agent: out of memory taking the assignment");
                json_decref(copy);
        } else {
                json_decref(r->set);
                r->set = copy;
                offer(r);
                rebuild(r);
        }
        pthread_mutex_unlock(&r->build_lock);
}

bool routing_placement(struct routing *r)
{
        bool on;

        pthread_mutex_lock(&r->lock);
        on = r->placement;
        pthread_mutex_unlock(&r->lock);
        return on;
}

/* Under r->lock: the live holders of @rt at @now, best first, into an owned NULL-terminated
 * list. */
static int copy_live(const struct route *rt, usec_t now, char ***ret, size_t *ret_n)
{
        char **v = calloc(rt->n + 1, sizeof(char *));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < rt->n; i++) {
                if (!route_holder_live(&rt->holders[i], now))
                        continue;
                v[n] = strdup(rt->holders[i].address);
                if (!v[n]) {
                        agent_route_addresses_free(v);
                        return -ENOMEM;
                }
                n++;
        }
        if (n == 0) {
                free(v);
                v = NULL;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int routing_lookup(void *userdata, const char *model, char ***ret_addresses, size_t *ret_n,
                          bool *ret_pending)
{
        struct routing *r = userdata;
        const struct route *rt;
        char **v = NULL;
        size_t n = 0;
        bool pending = false;
        usec_t now;
        int e = 0;

        if (routing_placement(r) && !agent_model_loaded(r->agent, model)) {
                now = clock_now(r->realtime);
                pthread_mutex_lock(&r->lock);
                rt = routes_find(&r->table, model);
                if (rt)
                        e = copy_live(rt, now, &v, &n);
                pending = e >= 0 && rt && n == 0 && rt->assigned;
                pthread_mutex_unlock(&r->lock);
                if (e < 0)
                        return e;
        }
        *ret_addresses = v;
        *ret_n = n;
        *ret_pending = pending;
        return 0;
}

static const struct agent_route_ops routing_ops = { .lookup = routing_lookup };

struct agent_route_port routing_port(struct routing *r)
{
        return (struct agent_route_port){ .ops = &routing_ops, .userdata = r };
}

int routing_handover_left(struct routing *r, char *ret_first, size_t len)
{
        json_t *status = agent_status(r->agent), *m;
        usec_t now = clock_now(r->realtime);
        size_t i;
        int left = 0;

        if (!status)
                return -ENOMEM;
        if (ret_first && len > 0)
                ret_first[0] = 0;
        pthread_mutex_lock(&r->lock);
        json_array_foreach(status, i, m) {
                const char *name = json_string_value(json_object_get(m, "name"));
                const char *state = json_string_value(json_object_get(m, "state"));

                if (!name || !state || !streq(state, REPORT_STATE_LOADED) ||
                    routes_covered(&r->table, name, now))
                        continue;
                if (left++ == 0 && ret_first && len > 0)
                        (void)snprintf(ret_first, len, "%s", name);
        }
        pthread_mutex_unlock(&r->lock);
        json_decref(status);
        return left;
}
