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

/* The storageUri changed while the agent was down: after a restart it downloads the new copy,
 * and then the server still says READY for the name (the old copy): that copy is loaded, not
 * adopted (found by bench/agent; the server went on serving the old version). */
Test(plan, a_copy_downloaded_after_a_restart_is_loaded_not_adopted)
{
        struct world w = { .n_disk = 1, .n_server = 1 };
        struct plan_result r;

        want("a", "s3://b/v2");
        w.disk[0] = (struct disk_model){ "a", "s3://b/v1" };
        w.server[0] = (struct server_model){ "a", SERVER_READY };
        r = plan(&w);
        expect(&r, "download:a");
        plan_result_release(&r);
        w.disk[0].source_uri = "s3://b/v2";
        w.mem[w.n_mem++] = (struct model_memory){ .name = (char *)"a", .fresh_copy = true };
        r = plan(&w);
        expect(&r, "load:a");
        plan_result_release(&r);
}

/* A copy removed behind the agent's back and downloaded again from the same storageUri: the
 * fresh copy is loaded (the state was left at Loading with no load call). */
Test(plan, a_fresh_copy_of_the_loaded_uri_is_loaded_again)
{
        struct world w = { .n_disk = 1, .n_server = 1, .n_mem = 1 };
        struct plan_result r;

        want("a", "s3://b/a");
        w.disk[0] = (struct disk_model){ "a", "s3://b/a" };
        w.server[0] = (struct server_model){ "a", SERVER_READY };
        w.mem[0] = (struct model_memory){ .name = (char *)"a",
                                          .loaded_uri = (char *)"s3://b/a",
                                          .fresh_copy = true };
        r = plan(&w);
        expect(&r, "load:a");
        plan_result_release(&r);
        w.mem[0].fresh_copy = false;
        r = plan(&w);
        expect(&r, "");
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

Test(plan, reasons_that_differ_only_in_durations_are_the_same)
{
        cr_assert(agent_reason_same("connect to 127.0.0.1 port 1 after 0 ms: refused",
                                    "connect to 127.0.0.1 port 1 after 12 ms: refused"));
        cr_assert(agent_reason_same("timed out after 10001 milliseconds",
                                    "timed out after 9999 milliseconds"));
        cr_assert_not(agent_reason_same("HTTP 500 InternalError", "HTTP 503 SlowDown"));
        cr_assert_not(agent_reason_same("port 1 after 0 ms", "port 2 after 0 ms"));
        cr_assert(agent_reason_same(NULL, NULL));
        cr_assert_not(agent_reason_same("x", NULL));
}

/* What is in flight is an input: a model waits for its own work, never for another's. */
Test(plan, in_flight_work_is_waited_for_or_cancelled)
{
        struct world w = { .n_mem = 3, .n_disk = 1, .n_server = 1 };
        struct plan_result r;

        want("slow", "s3://b/slow");
        want("new", "s3://b/new");
        /* slow: its download in flight; loading: a load call in flight; old: loaded, deleted */
        w.mem[0] = (struct model_memory){ .name = (char *)"loading",
                                          .busy = BUSY_LOAD,
                                          .busy_uri = (char *)"s3://b/l" };
        w.mem[1] = (struct model_memory){ .name = (char *)"old",
                                          .loaded_uri = (char *)"s3://b/old" };
        w.mem[2] = (struct model_memory){ .name = (char *)"slow",
                                          .busy = BUSY_DOWNLOAD,
                                          .busy_uri = (char *)"s3://b/slow" };
        w.disk[0] = (struct disk_model){ "old", "s3://b/old" };
        w.server[0] = (struct server_model){ "old", SERVER_READY };
        r = plan(&w);
        expect(&r, "download:new unload:old");
        plan_result_release(&r);

        /* slow's storageUri changes: cancel, and download the new one at once */
        model_entries_release(&desired);
        want("slow", "s3://b/slow2");
        r = plan(&w);
        expect(&r, "unload:old cancel:slow download:slow");
        cr_assert_str_eq(r.actions[1].uri, "s3://b/slow");
        cr_assert_str_eq(r.actions[2].uri, "s3://b/slow2");
        plan_result_release(&r);

        /* slow deleted: cancel; the old copy goes */
        model_entries_release(&desired);
        w.disk[0] = (struct disk_model){ "slow", "s3://b/slow0" };
        w.server[0] = (struct server_model){ "slow", SERVER_UNAVAILABLE };
        r = plan(&w);
        expect(&r, "forget:old cancel:slow remove:slow");
        plan_result_release(&r);
}

Test(plan, models_json_entries_are_refused_alone)
{
        struct model_entries got = { 0 }, prev = { 0 };
        struct model_refusals refused = { 0 };
        char err[256] = "";

        cr_assert_eq(
                agent_desired_parse(
                        "[{\"modelName\":\"a\\u0000b\",\"modelSpec\":{\"storageUri\":\"s3://x\"}},"
                        "{\"modelName\":\"..\",\"modelSpec\":{\"storageUri\":\"s3://x\"}},"
                        "{\"modelName\":\"kept\",\"modelSpec\":{\"memory\":\"bad\"}},"
                        "{\"modelName\":\"d\",\"modelSpec\":{\"storageUri\":\"s3://1\"}},"
                        "{\"modelName\":\"d\",\"modelSpec\":{\"storageUri\":\"s3://2\"}},"
                        "null, 7,"
                        "{\"modelName\":\"iris\",\"modelSpec\":{\"storageUri\":\"s3://i\"}}]",
                        NULL, &got, &refused, err, sizeof(err)),
                0, "%s", err);
        cr_assert_eq(got.n, 1);
        cr_assert_str_eq(got.items[0].name, "iris");
        cr_assert_eq(refused.n, 5);
        /* sorted by name, bytes and length: "#6" (the 7), "..", "a\0b", "d", "kept" */
        cr_assert_str_eq(json_string_value(refused.items[0].name), "#6");
        cr_assert_str_eq(json_string_value(refused.items[1].name), "..");
        cr_assert_eq(json_string_length(refused.items[2].name), 3);
        cr_assert_str_eq(json_string_value(refused.items[3].name), "d");
        cr_assert_str_eq(json_string_value(refused.items[4].name), "kept");
        model_entries_release(&got);
        model_refusals_release(&refused);

        /* a refused name that the previous set had keeps its previous entry */
        cr_assert_eq(model_entries_append(&prev, "kept", "s3://k", "sklearn", "1Gi"), 0);
        cr_assert_eq(
                agent_desired_parse("[{\"modelName\":\"kept\",\"modelSpec\":{\"memory\":\"bad\"}}]",
                                    &prev, &got, &refused, err, sizeof(err)),
                0);
        cr_assert_eq(got.n, 1);
        cr_assert_str_eq(got.items[0].storage_uri, "s3://k");
        cr_assert_eq(refused.n, 1);
        model_entries_release(&got);
        model_refusals_release(&refused);
        model_entries_release(&prev);

        /* only a document that is not an array is rejected whole */
        cr_assert_eq(agent_desired_parse("{}", NULL, &got, &refused, err, sizeof(err)), -EINVAL);
        cr_assert_eq(agent_desired_parse("[", NULL, &got, &refused, err, sizeof(err)), -EINVAL);
}

Test(plan, unsafe_model_names)
{
        static const char *const bad[] = { "",        ".",      "..",
                                           ".hidden", "..data", ".mp-tmp-x-abc123",
                                           "a/b",     "/" };
        char long_name[AGENT_NAME_MAX + 2];

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_not_null(agent_model_name_problem(bad[i], strlen(bad[i])), "%s", bad[i]);
        cr_assert_not_null(agent_model_name_problem("a\0b", 3));
        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        cr_assert_not_null(agent_model_name_problem(long_name, strlen(long_name)));
        long_name[AGENT_NAME_MAX] = 0;
        cr_assert_null(agent_model_name_problem(long_name, strlen(long_name)));
        cr_assert_null(agent_model_name_problem("iris-v1.2", 9));
}
