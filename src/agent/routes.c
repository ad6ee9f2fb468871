/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/routes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/plan.h"
#include "json/json-util.h"
#include "serving/modelconfig.h"
#include "util/string-util.h"
#include "serving/placement.h"
#include "serving/replicas.h"
#include "serving/report.h"

#define REPORT_STATE_LOADED "Loaded"

static void holder_release(struct route_holder *h)
{
        free(h->pod);
        free(h->address);
}

static void route_release(struct route *rt)
{
        for (size_t i = 0; i < rt->n; i++)
                holder_release(&rt->holders[i]);
        free(rt->holders);
        free(rt->model);
        free(rt->storage_uri);
}

void routes_release(struct routes *r)
{
        for (size_t i = 0; r->items && i < r->n; i++)
                route_release(&r->items[i]);
        free(r->items);
        *r = (struct routes){ 0 };
}

/* The models of a models.json as the agent reads it (agent_desired_parse(): entry by entry,
 * sorted); a document that is not an array lists none. Returns 0 or -ENOMEM. */
static int parse_models(const char *models_json, struct model_entries *ret)
{
        CLEANUP(model_refusals_release) struct model_refusals refused = { 0 };
        char err[256];
        int r;

        model_entries_init(ret);
        if (!models_json || !models_json[0])
                return 0;
        r = agent_desired_parse(models_json, NULL, ret, &refused, err, sizeof(err));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                model_entries_init(ret);
        return 0;
}

/* One route per wanted model, in the shared models.json's (sorted) order. */
static int routes_init(const struct model_entries *wanted, struct routes *ret)
{
        ret->items = calloc(wanted->n + 1, sizeof(*ret->items));
        if (!ret->items)
                return -ENOMEM;
        for (size_t i = 0; i < wanted->n; i++) {
                struct route *rt = &ret->items[ret->n];

                rt->model = strdup(wanted->items[i].name);
                rt->storage_uri = wanted->items[i].storage_uri
                                          ? strdup(wanted->items[i].storage_uri)
                                          : NULL;
                ret->n++;
                if (!rt->model || (wanted->items[i].storage_uri && !rt->storage_uri))
                        return -ENOMEM;
        }
        return 0;
}

const struct route *routes_find(const struct routes *r, const char *model)
{
        bool found;
        size_t pos = sorted_find(r->items, r->n, sizeof(*r->items), model, &found);

        return found ? &r->items[pos] : NULL;
}

static bool has_label(const json_t *cm, const char *key, const char *value)
{
        const char *v = json_get_string_path(cm, "metadata", "labels", key, NULL);

        return v && streq(v, value);
}

/* Marks the routes listed by an assignment ConfigMap. */
static int mark_assigned(struct routes *r, const json_t *cm)
{
        struct model_entries listed;
        int ret;

        ret = parse_models(json_get_string_path(cm, "data", MODELCONFIG_KEY, NULL), &listed);
        if (ret < 0)
                return ret;
        for (size_t i = 0; i < listed.n; i++) {
                struct route *rt = (struct route *)routes_find(r, listed.items[i].name);
                if (rt)
                        rt->assigned = true;
        }
        model_entries_release(&listed);
        return 0;
}

/* The pod a report speaks for: data.pod, else its name without "modelstatus-". */
static const char *report_pod_of(const json_t *cm, const struct report *rep)
{
        const char *name = json_get_string_path(cm, "metadata", "name", NULL);
        size_t lp = strlen(REPLICAS_STATUS_PREFIX);

        if (rep->pod && rep->pod[0])
                return rep->pod;
        if (name && strneq(name, REPLICAS_STATUS_PREFIX, lp))
                return name + lp;
        return name;
}

/* Appends a holder to @rt (sorted once every report is read). */
static int add_holder(struct route *rt, const char *pod, const struct report *rep, usec_t stale_at)
{
        struct route_holder *v = reallocarray(rt->holders, rt->n + 1, sizeof(*v)), *h;

        if (!v)
                return -ENOMEM;
        rt->holders = v;
        h = &rt->holders[rt->n++];
        *h = (struct route_holder){
                .pod = strdup(pod),
                .address = strdup(rep->address),
                .draining = rep->draining,
                .stale_at = stale_at,
        };
        return h->pod && h->address ? 0 : -ENOMEM;
}

/* The models of one report Loaded from the storageUri wanted become holders. */
static int add_report(struct routes *r, const struct report *rep, const char *pod, usec_t stale_at)
{
        for (size_t i = 0; i < rep->n; i++) {
                const struct report_model *m = &rep->models[i];
                struct route *rt;

                if (!streq(m->state, REPORT_STATE_LOADED) || !m->storage_uri)
                        continue;
                rt = (struct route *)routes_find(r, m->name);
                if (!rt || !rt->storage_uri || !streq(rt->storage_uri, m->storage_uri))
                        continue;
                if (add_holder(rt, pod, rep, stale_at) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* One counted report of another replica with an address. */
static int read_report(struct routes *r, const json_t *cm, const char *self)
{
        struct report rep = { 0 };
        usec_t beat, after, stale_at = USEC_INFINITY;
        const char *pod;
        int ret = 0;

        if (!replica_report_counts(cm))
                return 0;
        ret = report_data_decode(json_object_get(cm, "data"), &rep);
        if (ret < 0)
                return ret;
        pod = report_pod_of(cm, &rep);
        if (rep.address && pod && !(self && streq(pod, self))) {
                if (replica_report_heartbeat(cm, &beat, &after))
                        stale_at = beat + after;
                ret = add_report(r, &rep, pod, stale_at);
        }
        report_release(&rep);
        return ret;
}

static int holder_cmp(const struct route *rt, const struct route_holder *a,
                      const struct route_holder *b)
{
        uint64_t wa = placement_weight(rt->model, a->pod), wb = placement_weight(rt->model, b->pod);

        if (a->draining != b->draining)
                return a->draining ? 1 : -1;
        if (wa != wb)
                return wa > wb ? -1 : 1;
        return strcmp(a->pod, b->pod);
}

/* Insertion sort of one route's holders (a handful: the replicas holding one model). */
static void sort_holders(struct route *rt)
{
        for (size_t i = 1; i < rt->n; i++) {
                struct route_holder h = rt->holders[i];
                size_t j = i;

                while (j > 0 && holder_cmp(rt, &h, &rt->holders[j - 1]) < 0) {
                        rt->holders[j] = rt->holders[j - 1];
                        j--;
                }
                rt->holders[j] = h;
        }
}

static int read_configmaps(struct routes *r, const struct routes_input *in)
{
        const char *key;
        json_t *cm;
        int ret = 0;

        json_object_foreach((json_t *)in->configmaps, key, cm) {
                if (has_label(cm, ROUTES_ASSIGNMENT_LABEL, ROUTES_ASSIGNMENT_VALUE))
                        ret = mark_assigned(r, cm);
                else
                        ret = read_report(r, cm, in->pod);
                if (ret < 0)
                        break;
        }
        return ret;
}

int routes_build(const struct routes_input *in, struct routes *ret)
{
        CLEANUP(routes_release) struct routes r = { 0 };
        struct model_entries wanted;
        int e;

        e = parse_models(in->shared_models_json, &wanted);
        if (e < 0)
                return e;
        e = routes_init(&wanted, &r);
        model_entries_release(&wanted);
        if (e < 0)
                return e;
        if (json_is_object(in->configmaps)) {
                e = read_configmaps(&r, in);
                if (e < 0)
                        return e;
        }
        for (size_t i = 0; i < r.n; i++)
                sort_holders(&r.items[i]);
        *ret = r;
        r = (struct routes){ 0 };
        return 0;
}

bool route_holder_live(const struct route_holder *h, usec_t now)
{
        return h->stale_at == USEC_INFINITY || now <= h->stale_at;
}

size_t route_live_serving(const struct route *rt, usec_t now)
{
        size_t n = 0;

        for (size_t i = 0; i < rt->n; i++)
                if (!rt->holders[i].draining && route_holder_live(&rt->holders[i], now))
                        n++;
        return n;
}

bool routes_covered(const struct routes *r, const char *model, usec_t now)
{
        const struct route *rt = routes_find(r, model);

        return !rt || route_live_serving(rt, now) > 0;
}
