/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The routing table of placement (src/agent/routes.c, pure): which other replicas serve a model,
 * in which order, and the hand-over check, from hand-made reports and assignments.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "agent/routes.h"
#include "serving/placement.h"
#include "serving/report.h"

#define NOW  (1800000000ULL * USEC_PER_SEC) /* the wall clock of the tests */
#define BEAT (NOW - 5 * USEC_PER_SEC)       /* a fresh heartbeat: stale after 4 x 10 s */

#define ENTRY(name, uri)                                                   \
        "{\"modelName\":\"" name "\",\"modelSpec\":{\"storageUri\":\"" uri \
        "\",\"framework\":\"sklearn\",\"memory\":\"1Gi\"}}"
#define SHARED                                                                         \
        "[" ENTRY("iris", "s3://b/iris/v2") "," ENTRY("wine",                          \
                                                      "s3://b/wine") "," ENTRY("gone", \
                                                                               "s3://b/gone") "]"

static json_t *set;
static struct routes routes;

static void setup(void)
{
        set = json_object();
        cr_assert_not_null(set);
}

static void teardown(void)
{
        routes_release(&routes);
        json_decref(set);
}

TestSuite(routes, .init = setup, .fini = teardown);

struct rep {
        const char *pod, *address;
        bool draining, no_owner, deleting;
        usec_t beat;
        const char *loaded[4][2]; /* {name, uri}, state Loaded */
        const char *loading;      /* a model Loading (no storageUri) */
};

/* Adds the report of @r to the set, as an agent writes it. */
static void add_report(const struct rep *r)
{
        struct report_model models[5];
        size_t n = 0;
        json_t *data, *cm;
        char name[128];

        for (size_t i = 0; i < 4 && r->loaded[i][0]; i++)
                models[n++] = (struct report_model){ .name = r->loaded[i][0],
                                                     .state = "Loaded",
                                                     .storage_uri = r->loaded[i][1] };
        if (r->loading)
                models[n++] = (struct report_model){ .name = r->loading, .state = "Loading" };
        data = report_data_encode(models, n,
                                  &(struct report_meta){ .pod = r->pod,
                                                         .address = r->address,
                                                         .draining = r->draining,
                                                         .beat = r->beat ? r->beat : BEAT,
                                                         .period_sec = 10 });
        cr_assert_not_null(data);
        (void)snprintf(name, sizeof(name), "modelstatus-%s", r->pod);
        cm = json_pack("{s:s, s:{s:s, s:{s:s, s:s}}, s:o}", "kind", "ConfigMap", "metadata", "name",
                       name, "labels", "serving.kserve.io/inferenceservice", "mm",
                       "modelplane.io/model-status", "agent", "data", data);
        cr_assert_not_null(cm);
        if (!r->no_owner)
                cr_assert_eq(json_object_set_new(json_object_get(cm, "metadata"), "ownerReferences",
                                                 json_pack("[{s:s, s:s, s:s, s:s}]", "apiVersion",
                                                           "v1", "kind", "Pod", "name", r->pod,
                                                           "uid", "u-1")),
                             0);
        if (r->deleting)
                cr_assert_eq(json_object_set_new(json_object_get(cm, "metadata"),
                                                 "deletionTimestamp",
                                                 json_string("2027-01-01T00:00:00Z")),
                             0);
        cr_assert_eq(json_object_set_new(set, name, cm), 0);
}

/* Adds the assignment ConfigMap of @pod listing @models_json. */
static void add_assignment(const char *pod, const char *models_json)
{
        char name[128];
        json_t *cm;

        (void)snprintf(name, sizeof(name), "modelconfig-mm-%s", pod);
        cm = json_pack("{s:s, s:{s:s, s:{s:s, s:s}, s:{s:s}}, s:{s:s}}", "kind", "ConfigMap",
                       "metadata", "name", name, "labels", "serving.kserve.io/inferenceservice",
                       "mm", "modelplane.io/placement", "assignment", "annotations",
                       "modelplane.io/pod", pod, "data", "models.json", models_json);
        cr_assert_not_null(cm);
        cr_assert_eq(json_object_set_new(set, name, cm), 0);
}

static void build(const char *self, const char *shared)
{
        routes_release(&routes);
        cr_assert_eq(routes_build(
                             &(struct routes_input){
                                     .pod = self,
                                     .shared_models_json = shared,
                                     .configmaps = set,
                             },
                             &routes),
                     0);
}

static const struct route *route(const char *model)
{
        const struct route *rt = routes_find(&routes, model);

        cr_assert_not_null(rt, "no route for %s", model);
        return rt;
}

/* The pods holding @model live at @now, in order, as "a,b,c". */
static const char *holders(const char *model, usec_t now, char *buf, size_t len)
{
        const struct route *rt = route(model);
        size_t used = 0;

        buf[0] = 0;
        for (size_t i = 0; i < rt->n; i++)
                if (route_holder_live(&rt->holders[i], now))
                        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                                                 rt->holders[i].pod);
        return buf;
}

Test(routes, non_draining_first_then_the_rendezvous_order_every_agent_shares)
{
        const char *pods[] = { "p-a", "p-b", "p-c", "p-d" };
        const char *best = NULL;
        uint64_t best_w = 0;
        char got[128], again[128], want[128];

        for (size_t i = 0; i < ELEMENTSOF(pods); i++) {
                char addr[32];
                (void)snprintf(addr, sizeof(addr), "10.0.0.%zu:9081", i + 1);
                add_report(&(struct rep){ .pod = pods[i],
                                          .address = addr,
                                          .draining = i == 0,
                                          .loaded = { { "iris", "s3://b/iris/v2" } } });
        }
        /* the expected order: p-a (draining) last, the others by weight, highest first */
        for (size_t i = 1; i < ELEMENTSOF(pods); i++)
                if (!best || placement_weight("iris", pods[i]) > best_w) {
                        best = pods[i];
                        best_w = placement_weight("iris", pods[i]);
                }
        build("self", SHARED);
        holders("iris", NOW, got, sizeof(got));
        cr_assert_eq(route("iris")->n, 4);
        cr_assert(strncmp(got, best, strlen(best)) == 0, "first holder %s, expected %s", got, best);
        cr_assert(strcmp(got + strlen(got) - 3, "p-a") == 0, "the draining one last: %s", got);
        for (size_t i = 0; i + 1 < route("iris")->n - 1; i++)
                cr_assert_geq(placement_weight("iris", route("iris")->holders[i].pod),
                              placement_weight("iris", route("iris")->holders[i + 1].pod));
        cr_assert_str_eq(route("iris")->holders[3].address, "10.0.0.1:9081");
        cr_assert(route("iris")->holders[3].draining);

        /* another agent (not one of the holders) builds the same order */
        build("other", SHARED);
        cr_assert_str_eq(holders("iris", NOW, again, sizeof(again)), got);
        /* the order does not depend on the reports' order in the set */
        (void)snprintf(want, sizeof(want), "%s", got);
        json_decref(set);
        set = json_object();
        for (size_t i = ELEMENTSOF(pods); i-- > 0;) {
                char addr[32];
                (void)snprintf(addr, sizeof(addr), "10.0.0.%zu:9081", i + 1);
                add_report(&(struct rep){ .pod = pods[i],
                                          .address = addr,
                                          .draining = i == 0,
                                          .loaded = { { "iris", "s3://b/iris/v2" } } });
        }
        build("self", SHARED);
        cr_assert_str_eq(holders("iris", NOW, got, sizeof(got)), want);
}

Test(routes, only_counted_fresh_addressed_reports_of_others_at_the_wanted_uri)
{
        char got[128];

        add_report(&(struct rep){ .pod = "ok",
                                  .address = "10.0.0.1:9081",
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "self",
                                  .address = "10.0.0.2:9081",
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(
                &(struct rep){ .pod = "no-address", .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "no-owner",
                                  .address = "10.0.0.3:9081",
                                  .no_owner = true,
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "deleting",
                                  .address = "10.0.0.4:9081",
                                  .deleting = true,
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "old-uri",
                                  .address = "10.0.0.5:9081",
                                  .loaded = { { "iris", "s3://b/iris/v1" } } });
        add_report(
                &(struct rep){ .pod = "loading", .address = "10.0.0.6:9081", .loading = "iris" });
        add_report(&(struct rep){ .pod = "stale",
                                  .address = "10.0.0.7:9081",
                                  .beat = NOW - 41 * USEC_PER_SEC,
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "unwanted",
                                  .address = "10.0.0.8:9081",
                                  .loaded = { { "nope", "s3://b/nope" } } });
        build("self", SHARED);
        cr_assert_str_eq(holders("iris", NOW, got, sizeof(got)), "ok");
        cr_assert_null(routes_find(&routes, "nope"), "a model the shared list lacks: no route");
        cr_assert_eq(route("wine")->n, 0);

        /* staleness is judged at the query: 40 s after its last heartbeat a holder is stale */
        cr_assert_str_eq(holders("iris", BEAT + 40 * USEC_PER_SEC, got, sizeof(got)), "ok");
        cr_assert_str_eq(holders("iris", BEAT + 41 * USEC_PER_SEC, got, sizeof(got)), "");
        /* the stale one was fresh 10 s after its heartbeat */
        holders("iris", NOW - 31 * USEC_PER_SEC, got, sizeof(got));
        cr_assert(streq(got, "ok,stale") || streq(got, "stale,ok"), "holders %s", got);
}

Test(routes, assigned_models_are_pending_until_loaded_somewhere)
{
        add_assignment("p-a", "[" ENTRY("iris", "s3://b/iris/v2") "]");
        add_assignment("p-b", "[" ENTRY("wine", "s3://b/wine") "]");
        add_report(&(struct rep){ .pod = "p-b",
                                  .address = "10.0.0.2:9081",
                                  .loaded = { { "wine", "s3://b/wine" } } });
        build("p-c", SHARED);
        cr_assert(route("iris")->assigned);
        cr_assert_eq(route("iris")->n, 0, "assigned, loaded nowhere yet: expected soon");
        cr_assert(route("wine")->assigned);
        cr_assert_eq(route("wine")->n, 1);
        cr_assert_not(route("gone")->assigned, "listed by no assignment");
        /* an assignment that is not a JSON array assigns nothing */
        add_assignment("p-a", "{not json");
        build("p-c", SHARED);
        cr_assert_not(route("iris")->assigned);
}

Test(routes, covered_needs_a_live_non_draining_holder)
{
        add_report(&(struct rep){ .pod = "p-a",
                                  .address = "10.0.0.1:9081",
                                  .draining = true,
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        add_report(&(struct rep){ .pod = "p-b",
                                  .address = "10.0.0.2:9081",
                                  .beat = NOW - 35 * USEC_PER_SEC,
                                  .loaded = { { "wine", "s3://b/wine" } } });
        build("self", SHARED);
        cr_assert_not(routes_covered(&routes, "iris", NOW), "only a draining holder");
        cr_assert(routes_covered(&routes, "wine", NOW));
        cr_assert_not(routes_covered(&routes, "wine", NOW + 10 * USEC_PER_SEC), "now stale");
        cr_assert_not(routes_covered(&routes, "gone", NOW), "wanted, held nowhere");
        cr_assert(routes_covered(&routes, "nope", NOW), "nobody wants it: nothing to hand over");
        cr_assert_eq(route_live_serving(route("iris"), NOW), 0);
        cr_assert_eq(route_live_serving(route("wine"), NOW), 1);
}

Test(routes, without_a_shared_list_no_model_is_wanted)
{
        add_report(&(struct rep){ .pod = "p-a",
                                  .address = "10.0.0.1:9081",
                                  .loaded = { { "iris", "s3://b/iris/v2" } } });
        build("self", NULL);
        cr_assert_eq(routes.n, 0);
        build("self", "{\"not\":\"an array\"}");
        cr_assert_eq(routes.n, 0);
        build("self", "[]");
        cr_assert_eq(routes.n, 0);
        cr_assert(routes_covered(&routes, "iris", NOW));
        /* and no set at all (not listed yet): every wanted model has no holder */
        json_decref(set);
        set = NULL;
        build("self", SHARED);
        cr_assert_eq(routes.n, 3);
        cr_assert_eq(route("iris")->n, 0);
        cr_assert_not(routes_covered(&routes, "iris", NOW));
}
