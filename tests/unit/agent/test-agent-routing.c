/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement in the agent's shell (src/agent/routing.c) on the in-memory ports: the switch
 * between the shared models.json and this pod's assignment as the watches would deliver them,
 * followed by the loads and unloads of the fake model server; the file fallback around it; the
 * proxy's route port; the hand-over check. Milliseconds each.
 */
#include <criterion/criterion.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/routing.h"
#include "fake-agent-ports.h"
#include "fake-clock.h"
#include "fake-route-port.h"
#include "serving/report.h"

#define NOW (1800000000ULL * USEC_PER_SEC)

#define ENTRY(name)                                                                      \
        "{\"modelName\":\"" name "\",\"modelSpec\":{\"storageUri\":\"s3://b/" name "\"," \
        "\"framework\":\"sklearn\",\"memory\":\"1Gi\"}}"
#define SHARED "[" ENTRY("a") "," ENTRY("b") "," ENTRY("c") "]"

static struct {
        char dir[64];
        struct fake_fetch f;
        struct fake_repo r;
        struct fake_clock clk, wall;
        struct agent *a;
        struct routing *rt;
        json_t *set;
        uint64_t rv;
} w;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void setup(void)
{
        (void)snprintf(w.dir, sizeof(w.dir), "/tmp/agent-routing-XXXXXX");
        cr_assert_not_null(mkdtemp(w.dir));
        fake_fetch_init(&w.f);
        fake_repo_init(&w.r);
        fake_clock_init(&w.clk, 1000 * USEC_PER_SEC);
        fake_clock_init(&w.wall, NOW);
        cr_assert_eq(agent_new(
                             &(struct agent_options){
                                     .model_dir = w.dir,
                                     .server_url = "fake://",
                                     .download_workers = 2,
                                     .stop_timeout = 5 * USEC_PER_SEC,
                                     .fetch_port = &w.f.port,
                                     .repo_port = &w.r.port,
                                     .clock = &w.clk.clock,
                             },
                             &w.a),
                     0);
        cr_assert_eq(agent_start(w.a), 0);
        cr_assert_eq(routing_new(
                             &(struct routing_config){
                                     .agent = w.a,
                                     .isvc = "mm",
                                     .pod = "p-a",
                                     .realtime = &w.wall.clock,
                             },
                             &w.rt),
                     0);
        w.set = json_object();
        w.rv = 100;
}

static void teardown(void)
{
        w.rt = routing_free(w.rt);
        w.a = agent_free(w.a);
        json_decref(w.set);
        fake_fetch_release_all(&w.f);
        fake_repo_release_all(&w.r);
        (void)nftw(w.dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(routing, .init = setup, .fini = teardown);

static void sleep_ms(long ms)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };
        (void)nanosleep(&ts, NULL);
}

/* The shared ConfigMap as its watch delivers it. */
static bool shared(const char *models_json, bool spread)
{
        json_auto_t *cm = json_pack("{s:{s:s, s:{}}, s:{s:s}}", "metadata", "name",
                                    "modelconfig-mm-0", "annotations", "data", "models.json",
                                    models_json);

        cr_assert_not_null(cm);
        if (spread)
                cr_assert_eq(json_object_set_new(json_object_get(json_object_get(cm, "metadata"),
                                                                 "annotations"),
                                                 "modelplane.io/placement", json_string("spread")),
                             0);
        return routing_shared(w.rt, cm, ++w.rv);
}

/* Puts @pod's assignment listing @models_json into the set (NULL: removes it). */
static void assignment(const char *pod, const char *models_json)
{
        char name[64];

        (void)snprintf(name, sizeof(name), "modelconfig-mm-%s", pod);
        if (!models_json) {
                (void)json_object_del(w.set, name);
                return;
        }
        cr_assert_eq(json_object_set_new(w.set, name,
                                         json_pack("{s:{s:s, s:{s:s, s:s}}, s:{s:s}}", "metadata",
                                                   "name", name, "labels",
                                                   "serving.kserve.io/inferenceservice", "mm",
                                                   "modelplane.io/placement", "assignment", "data",
                                                   "models.json", models_json)),
                     0);
}

/* Puts @pod's report into the set: @model Loaded (from s3://b/<model>), fresh, at @address. */
static void report(const char *pod, const char *address, const char *model, bool draining)
{
        struct report_model m = { .name = model, .state = "Loaded" };
        char name[64], uri[64];
        json_t *data;

        (void)snprintf(uri, sizeof(uri), "s3://b/%s", model);
        m.storage_uri = uri;
        data = report_data_encode(&m, 1,
                                  &(struct report_meta){ .pod = pod,
                                                         .address = address,
                                                         .draining = draining,
                                                         .beat = NOW,
                                                         .period_sec = 10 });
        cr_assert_not_null(data);
        (void)snprintf(name, sizeof(name), "modelstatus-%s", pod);
        cr_assert_eq(json_object_set_new(
                             w.set, name,
                             json_pack("{s:{s:s, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s}]}, s:o}",
                                       "metadata", "name", name, "labels",
                                       "serving.kserve.io/inferenceservice", "mm",
                                       "modelplane.io/model-status", "agent", "ownerReferences",
                                       "apiVersion", "v1", "kind", "Pod", "name", pod, "uid", "u",
                                       "data", data)),
                     0);
}

/* The labelled set as its watch delivers it. */
static void deliver_set(void)
{
        routing_set(w.rt, w.set, ++w.rv);
}

static bool loaded_is(const char *ma, const char *mb, const char *mc)
{
        const char *want[] = { ma, mb, mc };
        const char *names[] = { "a", "b", "c" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (agent_model_loaded(w.a, names[i]) != (want[i] != NULL))
                        return false;
        return true;
}

/* Waits (5 s at most) until exactly the models given (NULL: not that one) are Loaded here. */
static void wait_loaded(const char *ma, const char *mb, const char *mc)
{
        for (int i = 0; i < 5000 && !loaded_is(ma, mb, mc); i++)
                sleep_ms(1);
        cr_assert(loaded_is(ma, mb, mc), "loaded here: a=%d b=%d c=%d",
                  agent_model_loaded(w.a, "a"), agent_model_loaded(w.a, "b"),
                  agent_model_loaded(w.a, "c"));
}

/* Waits (5 s at most) until the fake model server got @call (e.g. "unload:c") @n times. */
static void wait_calls(const char *call, size_t n)
{
        for (int i = 0; i < 5000 && fake_repo_count(&w.r, call) < n; i++)
                sleep_ms(1);
        cr_assert_eq(fake_repo_count(&w.r, call), n, "%s: %zu calls, expected %zu", call,
                     fake_repo_count(&w.r, call), n);
}

/* Waits until the agent has completed a pass after @before (it acted on its last view). */
static void wait_pass(unsigned long before)
{
        for (int i = 0; i < 5000 && agent_passes(w.a) <= before; i++)
                sleep_ms(1);
        cr_assert_gt(agent_passes(w.a), before);
}

Test(routing, without_placement_every_model_of_the_shared_list)
{
        struct agent_route_port port = routing_port(w.rt);
        char **addrs = NULL;
        size_t n = 9;
        bool pending = true;

        cr_assert_not(shared(SHARED, false));
        wait_loaded("a", "b", "c");
        cr_assert_not(routing_placement(w.rt));
        report("p-b", "10.0.0.2:9081", "a", false);
        deliver_set(); /* a set delivered without placement changes nothing */
        cr_assert_eq(agent_route_lookup(&port, "zzz", &addrs, &n, &pending), 0);
        cr_assert_eq(n, 0, "placement off: serve here");
        cr_assert_not(pending);
        cr_assert_null(addrs);
}

Test(routing, placement_loads_the_assignment_and_follows_it)
{
        unsigned long before;

        cr_assert(shared(SHARED, true), "placement on");
        /* the assignment is not known yet: nothing acted on */
        sleep_ms(20);
        cr_assert_eq(agent_passes(w.a), 0);
        /* listed, no assignment for this pod: nothing loaded */
        assignment("p-b", "[" ENTRY("b") "]");
        before = agent_passes(w.a);
        deliver_set();
        wait_pass(before);
        cr_assert_eq(fake_repo_count(&w.r, NULL), 0, "nothing assigned here: no load");

        assignment("p-a", "[" ENTRY("a") "," ENTRY("c") "]");
        deliver_set();
        wait_loaded("a", NULL, "c");
        cr_assert_eq(fake_repo_count(&w.r, "load:b"), 0);

        /* the assignment changes: c goes, b comes */
        assignment("p-a", "[" ENTRY("a") "," ENTRY("b") "]");
        deliver_set();
        wait_loaded("a", "b", NULL);
        wait_calls("unload:c", 1);
        cr_assert_eq(fake_repo_count(&w.r, "load:a"), 1, "a stays loaded");

        /* another replica's heartbeat changes nothing here */
        report("p-b", "10.0.0.2:9081", "c", false);
        deliver_set();
        sleep_ms(20);
        cr_assert_eq(fake_repo_count(&w.r, NULL), 4);

        /* the annotation goes away: every model of the shared list again */
        cr_assert_not(shared(SHARED, false));
        wait_loaded("a", "b", "c");
        cr_assert_eq(fake_repo_count(&w.r, "unload:a"), 0);
}

Test(routing, the_assignment_deleted_unloads_everything)
{
        cr_assert(shared(SHARED, true));
        assignment("p-a", "[" ENTRY("a") "]");
        deliver_set();
        wait_loaded("a", NULL, NULL);
        assignment("p-a", NULL);
        deliver_set();
        wait_loaded(NULL, NULL, NULL);
        wait_calls("unload:a", 1);
}

Test(routing, the_file_is_used_only_before_the_shared_configmap_answers)
{
        routing_shared_starting(w.rt);
        agent_set_desired(w.a, AGENT_SOURCE_FILE, "[" ENTRY("b") "]", 1);
        sleep_ms(20);
        cr_assert_eq(agent_passes(w.a), 0, "the first LIST is under way: the file waits");
        routing_shared_failed(w.rt);
        wait_loaded(NULL, "b", NULL); /* it failed before answering: the file meanwhile */

        /* it answers, without placement: its list from now on, failures or not */
        cr_assert_not(shared("[" ENTRY("a") "]", false));
        wait_loaded("a", NULL, NULL);
        routing_shared_failed(w.rt);
        agent_set_desired(w.a, AGENT_SOURCE_FILE, SHARED, 2);
        sleep_ms(20);
        wait_loaded("a", NULL, NULL);
}

/* Under placement the file (every model) is never used once the shared ConfigMap answered, not
 * even while this pod's assignment is still unknown. */
Test(routing, under_placement_a_failure_never_brings_the_file_back)
{
        routing_shared_starting(w.rt);
        agent_set_desired(w.a, AGENT_SOURCE_FILE, SHARED, 1);
        cr_assert(shared(SHARED, true)); /* answered: placement, the assignment not known yet */
        routing_shared_failed(w.rt);     /* e.g. the watch after the LIST is refused */
        sleep_ms(30);
        cr_assert_eq(agent_passes(w.a), 0, "nothing acted on: neither the file nor the API");
        assignment("p-a", "[" ENTRY("a") "]");
        deliver_set();
        wait_loaded("a", NULL, NULL);
        routing_shared_failed(w.rt);
        sleep_ms(20);
        wait_loaded("a", NULL, NULL);
        cr_assert_eq(fake_repo_count(&w.r, "load:b") + fake_repo_count(&w.r, "load:c"), 0);
}

Test(routing, the_port_forwards_waits_or_serves_here)
{
        struct agent_route_port port = routing_port(w.rt);
        char **addrs = NULL;
        size_t n = 0;
        bool pending = false;

        cr_assert(shared(SHARED, true));
        assignment("p-a", "[" ENTRY("a") "]");
        assignment("p-c", "[" ENTRY("c") "]");
        report("p-b", "10.0.0.2:9081", "b", false);
        report("p-d", "10.0.0.4:9081", "b", true);
        report("p-a", "10.0.0.1:9081", "b", false); /* this pod's own report: never a route */
        deliver_set();
        wait_loaded("a", NULL, NULL);

        cr_assert_eq(agent_route_lookup(&port, "a", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && !pending && !addrs, "loaded here: serve here");
        cr_assert_eq(agent_route_lookup(&port, "b", &addrs, &n, &pending), 0);
        cr_assert_eq(n, 2);
        cr_assert_str_eq(addrs[0], "10.0.0.2:9081", "the non-draining one first");
        cr_assert_str_eq(addrs[1], "10.0.0.4:9081");
        cr_assert_null(addrs[2]);
        cr_assert_not(pending);
        agent_route_addresses_free(addrs);
        cr_assert_eq(agent_route_lookup(&port, "c", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && pending, "assigned to p-c, loaded nowhere: wait for it");
        cr_assert_eq(agent_route_lookup(&port, "zzz", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && !pending, "unknown: serve here (404 from the model server)");

        /* 41 s without a heartbeat: p-b and p-d are stale, b has no route any more */
        fake_clock_advance(&w.wall, 41 * USEC_PER_SEC);
        cr_assert_eq(agent_route_lookup(&port, "b", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && !pending);
}

Test(routing, hand_over_waits_for_a_non_draining_holder)
{
        char first[64];

        cr_assert(shared(SHARED, true));
        assignment("p-a", "[" ENTRY("a") "," ENTRY("b") "]");
        deliver_set();
        wait_loaded("a", "b", NULL);
        cr_assert_eq(routing_handover_left(w.rt, first, sizeof(first)), 2);
        cr_assert_str_eq(first, "a");
        report("p-b", "10.0.0.2:9081", "a", true); /* a draining holder does not count */
        report("p-c", "10.0.0.3:9081", "b", false);
        deliver_set();
        cr_assert_eq(routing_handover_left(w.rt, first, sizeof(first)), 1);
        cr_assert_str_eq(first, "a");
        report("p-b", "10.0.0.2:9081", "a", false);
        deliver_set();
        cr_assert_eq(routing_handover_left(w.rt, first, sizeof(first)), 0);
        cr_assert_str_eq(first, "");
}

/* SIGTERM under placement: the stop begins without its wait; what is loaded stays loaded while
 * the controller moves the models away, and nothing new is loaded. */
Test(routing, draining_keeps_serving_what_is_loaded)
{
        char first[64];

        cr_assert(shared(SHARED, true));
        assignment("p-a", "[" ENTRY("a") "]");
        deliver_set();
        wait_loaded("a", NULL, NULL);
        agent_stop_begin(w.a);
        assignment("p-a", "[" ENTRY("b") "]"); /* a placed elsewhere, b here: neither acted on */
        deliver_set();
        sleep_ms(50);
        cr_assert(agent_model_loaded(w.a, "a"));
        cr_assert_eq(fake_repo_count(&w.r, "unload:a"), 0);
        cr_assert_eq(fake_repo_count(&w.r, "load:b"), 0);
        cr_assert_eq(routing_handover_left(w.rt, first, sizeof(first)), 1);
        report("p-b", "10.0.0.2:9081", "a", false);
        deliver_set();
        cr_assert_eq(routing_handover_left(w.rt, first, sizeof(first)), 0);
        cr_assert(agent_stop(w.a), "no call in flight");
}

/* The fake port the proxy's tests use answers as the real one does. */
Test(routing, the_fake_port)
{
        struct fake_route_port f;
        const char *addrs_in[] = { "10.0.0.9:9081", "10.0.0.8:9081" };
        char **addrs = NULL;
        size_t n = 0;
        bool pending = false;

        fake_route_port_init(&f);
        cr_assert_eq(agent_route_lookup(&f.port, "m", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && !pending && !addrs);
        fake_route_set(&f, "m", addrs_in, 2, false);
        fake_route_set(&f, "p", NULL, 0, true);
        cr_assert_eq(agent_route_lookup(&f.port, "m", &addrs, &n, &pending), 0);
        cr_assert(n == 2 && !pending);
        cr_assert_str_eq(addrs[1], "10.0.0.8:9081");
        agent_route_addresses_free(addrs);
        cr_assert_eq(agent_route_lookup(&f.port, "p", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && pending);
        fake_route_fail(&f, true);
        cr_assert_eq(agent_route_lookup(&f.port, "m", &addrs, &n, &pending), -ENOMEM);
        fake_route_fail(&f, false);
        fake_route_clear(&f, "m");
        cr_assert_eq(agent_route_lookup(&f.port, "m", &addrs, &n, &pending), 0);
        cr_assert(n == 0 && !pending);
        cr_assert_eq(fake_route_lookups(&f, "p"), 1);
        cr_assert_eq(fake_route_lookups(&f, NULL), 5);
        fake_route_port_release(&f);
}
