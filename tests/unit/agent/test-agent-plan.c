/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "agent/plan.h"

static struct model_entries desired;

static void setup(void)
{
        model_entries_init(&desired);
}

static void teardown(void)
{
        model_entries_release(&desired);
}

static void want(const char *name, const char *uri)
{
        cr_assert_eq(model_entries_append(&desired, name, uri, "sklearn", "1Gi"), 0);
        model_entries_sort(&desired);
}

struct world {
        struct disk_model disk[8];
        size_t n_disk;
        struct server_model server[8];
        size_t n_server;
        struct model_memory mem[8];
        size_t n_mem;
        bool server_down;
        usec_t now;
};

static struct plan_result plan(struct world *w)
{
        struct plan_result r;
        struct plan_input in = {
                .desired = &desired,
                .disk = w->disk,
                .n_disk = w->n_disk,
                .server = w->server,
                .n_server = w->n_server,
                .server_known = !w->server_down,
                .memory = w->mem,
                .n_memory = w->n_mem,
                .now = w->now ? w->now : 1000,
        };
        cr_assert_eq(agent_plan(&in, &r), 0);
        return r;
}

static void expect(const struct plan_result *r, const char *spec)
{
        char got[512] = "";

        for (size_t i = 0; i < r->n_actions; i++) {
                size_t n = strlen(got);
                snprintf(got + n, sizeof(got) - n, "%s%s:%s", i ? " " : "",
                         action_kind_to_string(r->actions[i].kind), r->actions[i].name);
        }
        cr_assert_str_eq(got, spec);
}

TestSuite(plan, .init = setup, .fini = teardown);

Test(plan, new_model_downloads_then_loads)
{
        struct world w = { 0 };
        struct plan_result r;

        want("iris", "s3://b/iris");
        r = plan(&w);
        expect(&r, "download:iris");
        cr_assert_str_eq(r.actions[0].uri, "s3://b/iris");
        cr_assert_eq(r.next_wake, USEC_INFINITY);
        plan_result_release(&r);

        w.disk[w.n_disk++] = (struct disk_model){ "iris", "s3://b/iris" };
        w.server[w.n_server++] = (struct server_model){ "iris", SERVER_UNAVAILABLE };
        r = plan(&w);
        expect(&r, "load:iris");
        plan_result_release(&r);

        w.mem[w.n_mem++] = (struct model_memory){ .name = (char *)"iris",
                                                  .loaded_uri = (char *)"s3://b/iris" };
        w.server[0].state = SERVER_READY;
        r = plan(&w);
        expect(&r, "");
        plan_result_release(&r);
}

Test(plan, uri_change_downloads_again_then_reloads)
{
        struct world w = { .n_disk = 1, .n_server = 1, .n_mem = 1 };
        struct plan_result r;

        want("iris", "s3://b/v2");
        w.disk[0] = (struct disk_model){ "iris", "s3://b/v1" };
        w.server[0] = (struct server_model){ "iris", SERVER_READY };
        w.mem[0] = (struct model_memory){ .name = (char *)"iris",
                                          .loaded_uri = (char *)"s3://b/v1" };
        r = plan(&w);
        expect(&r, "download:iris");
        plan_result_release(&r);
        w.disk[0].source_uri = "s3://b/v2";
        r = plan(&w);
        expect(&r, "load:iris");
        plan_result_release(&r);
}

Test(plan, restart_adopts_what_disk_and_server_agree_on)
{
        struct world w = { .n_disk = 2, .n_server = 2 };
        struct plan_result r;

        want("a", "s3://b/a");
        want("b", "s3://b/b");
        w.disk[0] = (struct disk_model){ "a", "s3://b/a" };
        w.disk[1] = (struct disk_model){ "b", "s3://b/b" };
        w.server[0] = (struct server_model){ "a", SERVER_READY };
        w.server[1] = (struct server_model){ "b", SERVER_UNAVAILABLE };
        r = plan(&w);
        expect(&r, "adopt:a load:b");
        plan_result_release(&r);
}

Test(plan, record_missing_means_download)
{
        struct world w = { .n_disk = 1 };
        struct plan_result r;

        want("a", "s3://b/a");
        w.disk[0] = (struct disk_model){ "a", NULL };
        r = plan(&w);
        expect(&r, "download:a");
        plan_result_release(&r);
}

Test(plan, delete_unloads_then_removes_then_forgets)
{
        struct world w = { .n_disk = 1, .n_server = 1, .n_mem = 1 };
        struct plan_result r;

        w.disk[0] = (struct disk_model){ "gone", "s3://b/g" };
        w.server[0] = (struct server_model){ "gone", SERVER_READY };
        w.mem[0] = (struct model_memory){ .name = (char *)"gone",
                                          .loaded_uri = (char *)"s3://b/g" };
        r = plan(&w);
        expect(&r, "unload:gone");
        plan_result_release(&r);
        w.server[0].state = SERVER_UNAVAILABLE;
        r = plan(&w);
        expect(&r, "remove:gone");
        plan_result_release(&r);
        w.n_disk = 0;
        w.n_server = 0;
        r = plan(&w);
        expect(&r, "forget:gone");
        plan_result_release(&r);
}

Test(plan, unrelated_delete_leaves_others_alone)
{
        struct world w = { .n_disk = 2, .n_server = 2, .n_mem = 2 };
        struct plan_result r;

        want("keep", "s3://b/k");
        w.disk[0] = (struct disk_model){ "drop", "s3://b/d" };
        w.disk[1] = (struct disk_model){ "keep", "s3://b/k" };
        w.server[0] = (struct server_model){ "drop", SERVER_READY };
        w.server[1] = (struct server_model){ "keep", SERVER_READY };
        w.mem[0] = (struct model_memory){ .name = (char *)"drop",
                                          .loaded_uri = (char *)"s3://b/d" };
        w.mem[1] = (struct model_memory){ .name = (char *)"keep",
                                          .loaded_uri = (char *)"s3://b/k" };
        r = plan(&w);
        expect(&r, "unload:drop");
        plan_result_release(&r);
}

Test(plan, failure_waits_for_its_backoff)
{
        struct world w = { .n_mem = 1, .now = 5000 };
        struct plan_result r;

        want("a", "s3://b/a");
        w.mem[0] = (struct model_memory){ .name = (char *)"a",
                                          .failed_uri = (char *)"s3://b/a",
                                          .failures = 1,
                                          .retry_at = 9000 };
        r = plan(&w);
        expect(&r, "");
        cr_assert_eq(r.next_wake, 9000);
        plan_result_release(&r);
        w.now = 9000;
        r = plan(&w);
        expect(&r, "download:a");
        plan_result_release(&r);
        /* a new URI is not held back by the old one's failure */
        w.now = 5000;
        model_entries_release(&desired);
        want("a", "s3://b/a2");
        r = plan(&w);
        expect(&r, "download:a");
        plan_result_release(&r);
}

Test(plan, failed_load_is_retried_not_adopted)
{
        struct world w = { .n_disk = 1, .n_server = 1, .n_mem = 1, .now = 10000 };
        struct plan_result r;

        want("a", "s3://b/a");
        w.disk[0] = (struct disk_model){ "a", "s3://b/a" };
        w.server[0] = (struct server_model){ "a", SERVER_READY };
        w.mem[0] = (struct model_memory){ .name = (char *)"a",
                                          .failed_uri = (char *)"s3://b/a",
                                          .failed_load = true,
                                          .failures = 2,
                                          .retry_at = 9000 };
        r = plan(&w);
        expect(&r, "load:a");
        plan_result_release(&r);
}

Test(plan, server_lost_a_loaded_model)
{
        struct world w = { .n_disk = 1, .n_server = 0, .n_mem = 1 };
        struct plan_result r;

        want("a", "s3://b/a");
        w.disk[0] = (struct disk_model){ "a", "s3://b/a" };
        w.mem[0] = (struct model_memory){ .name = (char *)"a", .loaded_uri = (char *)"s3://b/a" };
        r = plan(&w);
        expect(&r, "load:a");
        plan_result_release(&r);
        /* index unreadable: nothing to decide about a loaded model */
        w.server_down = true;
        r = plan(&w);
        expect(&r, "");
        plan_result_release(&r);
}

Test(plan, server_down_unloads_only_what_we_loaded)
{
        struct world w = { .n_disk = 2, .n_mem = 1, .server_down = true };
        struct plan_result r;

        w.disk[0] = (struct disk_model){ "mine", "s3://b/m" };
        w.disk[1] = (struct disk_model){ "stray", "s3://b/s" };
        w.mem[0] = (struct model_memory){ .name = (char *)"mine",
                                          .loaded_uri = (char *)"s3://b/m" };
        r = plan(&w);
        expect(&r, "unload:mine remove:stray");
        plan_result_release(&r);
}

Test(plan, empty_world)
{
        struct world w = { 0 };
        struct plan_result r = plan(&w);

        expect(&r, "");
        plan_result_release(&r);
}

Test(plan_util, backoff)
{
        usec_t base = USEC_PER_SEC, max = 60 * USEC_PER_SEC;

        cr_assert_eq(backoff_delay(1, base, max, 0.999999), (usec_t)(base * 0.9999995));
        cr_assert_eq(backoff_delay(1, base, max, 0), base / 2);
        cr_assert_eq(backoff_delay(3, base, max, 0), 2 * base);
        cr_assert_eq(backoff_delay(100, base, max, 0), max / 2);
        cr_assert_eq(backoff_delay(100, base, max, 2.0), max / 2, "out-of-range jitter is clamped");
        cr_assert_eq(server_state_from_string("READY"), SERVER_READY);
        cr_assert_eq(server_state_from_string("bogus"), SERVER_UNKNOWN);
        cr_assert_str_eq(model_phase_to_string(PHASE_FAILED_TO_LOAD), "FailedToLoad");
}
