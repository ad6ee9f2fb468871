/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's shell (src/agent/agent.c) on its in-memory ports: the scheduling of downloads and
 * model-server calls, models.json entries refused alone, the status, the stop. Milliseconds each:
 * the fakes block until the test releases them, and waits poll the agent's status (bounded).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent-world.h"
#include "agent/agent.h"
#include "agent/fetch.h"

/* ---- the world (tests/support/agent-world.h) ---- */

static struct agent_world w;

static void setup(void)
{
        agent_world_setup(&w);
}

static void teardown(void)
{
        agent_world_teardown(&w);
}

TestSuite(agent_shell, .init = setup, .fini = teardown);

/* Waits (5 s at most) until @field of the agent's counters reaches @n; returns its value. */
#define WAIT_COUNTER(field, n)                      \
        __extension__({                             \
                struct agent_counters c_;           \
                for (int i_ = 0; i_ < 5000; i_++) { \
                        agent_counters(w.a, &c_);   \
                        if (c_.field == (n))        \
                                break;              \
                        agent_world_sleep_ms(1);    \
                }                                   \
                c_.field;                           \
        })

/* Issue 29 (2): a 65 s download delayed an unrelated create and delete by ~62 s. */
Test(agent_shell, create_and_delete_while_a_download_is_in_flight)
{
        char buf[64];

        agent_world_on_disk(&w, "old", "s3://b/old");
        fake_repo_set(&w.r, "old", SERVER_READY);
        fake_fetch_block(&w.f, "s3://b/slow");
        agent_world_start(&w, 4);
        agent_world_want(&w,
                         "[" AGENT_ENTRY("old", "s3://b/old") "," AGENT_ENTRY("slow",
                                                                              "s3://b/slow") "]");
        agent_world_wait_state(&w, "old", "Loaded");
        cr_assert(fake_fetch_wait_count(&w.f, "s3://b/slow", 1));

        /* the slow download stays in flight: a create and a delete are acted on now */
        agent_world_want(&w,
                         "[" AGENT_ENTRY("new", "s3://b/new") "," AGENT_ENTRY("slow",
                                                                              "s3://b/slow") "]");
        agent_world_wait_state(&w, "new", "Loaded");
        agent_world_wait_state(&w, "old", "absent");
        cr_assert_eq(fake_repo_count(&w.r, "unload:old"), 1);
        cr_assert_not(agent_world_dir_exists(&w, "old"));
        cr_assert_str_eq(agent_world_state(&w, "slow", buf, sizeof(buf)), "Downloading");
        cr_assert_eq(w.f.running, 1, "the slow download is still in flight");

        fake_fetch_release(&w.f, "s3://b/slow");
        agent_world_wait_state(&w, "slow", "Loaded");
        cr_assert_eq(fake_repo_count(&w.r, "load:slow"), 1);
}

/* A change or a delete while the model's own download is in flight: cancelled, never loaded. */
Test(agent_shell, change_and_delete_cancel_the_download_in_flight)
{
        json_auto_t *e = NULL;

        fake_fetch_block(&w.f, "s3://b/v1");
        fake_fetch_block(&w.f, "s3://b/gone");
        agent_world_start(&w, 4);
        agent_world_want(&w, "[" AGENT_ENTRY("m", "s3://b/v1") "," AGENT_ENTRY("gone",
                                                                               "s3://b/gone") "]");
        cr_assert(fake_fetch_wait_count(&w.f, "s3://b/v1", 1));
        cr_assert(fake_fetch_wait_count(&w.f, "s3://b/gone", 1));

        agent_world_want(&w, "[" AGENT_ENTRY("m", "s3://b/v2") "]");
        agent_world_wait_state(&w, "m", "Loaded");
        e = agent_world_entry(&w, "m");
        cr_assert_str_eq(json_string_value(json_object_get(e, "storageUri")), "s3://b/v2");
        agent_world_wait_state(&w, "gone", "absent");
        for (int i = 0; i < 5000 && w.f.cancelled < 2; i++)
                agent_world_sleep_ms(1);
        cr_assert_eq(w.f.cancelled, 2, "both downloads were cancelled");
        cr_assert_eq(fake_repo_count(&w.r, "load:m"), 1);
        cr_assert_eq(fake_repo_count(&w.r, "load:gone"), 0);
        cr_assert_not(agent_world_dir_exists(&w, "gone"));
}

/* Issue 29 (4): one name with U+0000 made the agent reject the whole models.json. */
Test(agent_shell, a_nul_name_is_refused_beside_a_good_model)
{
        json_auto_t *st = NULL;
        bool seen = false;
        size_t i;
        json_t *e;

        agent_world_start(&w, 2);
        agent_world_want(&w,
                         "[" AGENT_ENTRY("bad\\u0000x",
                                         "s3://b/bad") "," AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w, "iris", "Loaded");
        st = agent_status(w.a);
        json_array_foreach(st, i, e) {
                json_t *n = json_object_get(e, "name");
                if (json_string_length(n) == 5 && memcmp(json_string_value(n), "bad\0x", 5) == 0) {
                        seen = true;
                        cr_assert_str_eq(json_string_value(json_object_get(e, "state")),
                                         "FailedToLoad");
                        cr_assert(
                                strstr(json_string_value(json_object_get(e, "reason")), "U+0000"));
                }
        }
        cr_assert(seen, "the refused entry is reported under its name");
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/bad"), 0);
}

/* A loaded model whose entry turns invalid keeps running (one bad edit unloads nothing) and is
 * reported with the refusal. */
Test(agent_shell, an_entry_turned_invalid_keeps_the_model_and_reports_it)
{
        json_auto_t *e = NULL;

        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w, "iris", "Loaded");
        agent_world_want(
                &w,
                "[{\"modelName\":\"iris\",\"modelSpec\":{\"storageUri\":\"s3://b/iris2\",\"memory\":\"lots\"}}]");
        agent_world_wait_state(&w, "iris", "FailedToLoad");
        e = agent_world_entry(&w, "iris");
        cr_assert(strstr(json_string_value(json_object_get(e, "reason")), "invalid entry"));
        agent_world_sleep_ms(20);
        cr_assert_eq(fake_repo_count(&w.r, "unload:iris"), 0);
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/iris2"), 0);
}

/* Issue 29 (4): "..", ".", "" were downloaded then failed; ".hidden", "..data", ".mp-tmp-x-..."
 * stayed Loading for ever. */
Test(agent_shell, unsafe_names_are_never_fetched)
{
        static const char *const bad[] = { ".",  "..", "", ".hidden", "..data", ".mp-tmp-x-abc123",
                                           "a/b" };
        char long_name[242], buf[64];
        json_auto_t *e = NULL;

        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        agent_world_start(&w, 2);
        char json[4096];
        int n = snprintf(json, sizeof(json), "[");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                n += snprintf(
                        json + n, sizeof(json) - (size_t)n,
                        "{\"modelName\":\"%s\",\"modelSpec\":{\"storageUri\":\"s3://b/u%zu\"}},",
                        bad[i], i);
        n += snprintf(json + n, sizeof(json) - (size_t)n,
                      "{\"modelName\":\"%s\",\"modelSpec\":{\"storageUri\":\"s3://b/long\"}},",
                      long_name);
        /* a duplicate with another spec is refused; an identical one counts once */
        (void)snprintf(json + n, sizeof(json) - (size_t)n, "%s,%s,%s,%s,%s]",
                       AGENT_ENTRY("dup", "s3://b/d1"), AGENT_ENTRY("dup", "s3://b/d2"),
                       AGENT_ENTRY("twin", "s3://b/twin"), AGENT_ENTRY("twin", "s3://b/twin"),
                       AGENT_ENTRY("ok", "s3://b/ok"));
        agent_world_want(&w, json);
        agent_world_wait_state(&w, "ok", "Loaded");
        agent_world_wait_state(&w, "twin", "Loaded");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_assert_str_eq(agent_world_state(&w, bad[i], buf, sizeof(buf)), "FailedToLoad",
                                 "name '%s'", bad[i]);
        cr_assert_str_eq(agent_world_state(&w, long_name, buf, sizeof(buf)), "FailedToLoad");
        e = agent_world_entry(&w, "dup");
        cr_assert_str_eq(json_string_value(json_object_get(e, "state")), "FailedToLoad");
        cr_assert(strstr(json_string_value(json_object_get(e, "reason")), "twice"));
        /* only the good ones were fetched */
        cr_assert_eq(fake_fetch_count(&w.f, NULL), 2, "fetched %zu", fake_fetch_count(&w.f, NULL));
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/ok"), 1);
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/twin"), 1);
}

/* Issue 29 (Why 5): while S3 answered 500, ModelLoaded flipped 10 times in 40 s. */
Test(agent_shell, a_retry_does_not_change_the_reported_state)
{
        json_auto_t *before = NULL, *after = NULL;
        struct agent_counters c;
        unsigned long g;

        fake_fetch_fail(&w.f, "s3://b/iris", "HTTP 500 InternalError: try again");
        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w, "iris", "FailedToDownload");
        before = agent_status(w.a);
        g = agent_status_generation(w.a);
        for (size_t n = 2; n <= 4; n++) {
                /* the last failure recorded (its back-off set), then past the back-off */
                cr_assert_eq(WAIT_COUNTER(downloads_failed, n - 1), n - 1);
                fake_clock_advance(&w.clk, 2 * USEC_PER_SEC);
                agent_kick(w.a);
                cr_assert(fake_fetch_wait_count(&w.f, "s3://b/iris", n), "retry %zu", n);
        }
        cr_assert_eq(WAIT_COUNTER(downloads_failed, 4), 4);
        after = agent_status(w.a);
        cr_assert(json_equal(before, after), "the report did not change");
        cr_assert_eq(agent_status_generation(w.a), g, "no status change was signalled");
        agent_counters(w.a, &c);
        cr_assert_eq(c.retries, 3);
        cr_assert_eq(c.downloads_failed, 4);

        /* it works at last: that is a change */
        fake_fetch_fail(&w.f, "s3://b/iris", NULL);
        fake_clock_advance(&w.clk, 2 * USEC_PER_SEC);
        agent_kick(w.a);
        agent_world_wait_state(&w, "iris", "Loaded");
}

/* A delete while the model server does not answer its index: one unload call, then the model
 * leaves the disk and the report (no unload after unload). */
Test(agent_shell, a_delete_while_the_server_index_is_down_unloads_once)
{
        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w, "iris", "Loaded");
        fake_repo_set_down(&w.r, true);
        agent_kick(w.a);
        agent_world_wait_state(&w, "iris", "FailedToLoad"); /* model server unavailable */
        agent_world_want(&w, "[]");
        agent_world_wait_state(&w, "iris", "absent");
        cr_assert_eq(fake_repo_count(&w.r, "unload:iris"), 1);
        cr_assert_not(agent_world_dir_exists(&w, "iris"));
}

struct stopper {
        struct agent *a;
        bool ok;
};

static void *stop_thread(void *userdata)
{
        struct stopper *s = userdata;
        s->ok = agent_stop(s->a);
        return NULL;
}

/* Issue 29 (Why 6): after SIGTERM during a long start-up the agent kept sending load calls. */
Test(agent_shell, stop_during_start_up_sends_no_load_call)
{
        static const char *const names[] = { "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8" };
        struct stopper s = { 0 };
        pthread_t t;
        char json[4096];
        int n = snprintf(json, sizeof(json), "[");

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char uri[64];
                (void)snprintf(uri, sizeof(uri), "s3://b/%s", names[i]);
                agent_world_on_disk(&w, names[i], uri);
                n += snprintf(json + n, sizeof(json) - (size_t)n,
                              "%s{\"modelName\":\"%s\",\"modelSpec\":{\"storageUri\":\"%s\"}}",
                              i ? "," : "", names[i], uri);
        }
        (void)snprintf(json + n, sizeof(json) - (size_t)n, "]");
        fake_repo_block_loads(&w.r, true);
        agent_world_start(&w, 2);
        agent_world_want(&w, json);
        cr_assert(fake_repo_wait_running(&w.r, 2));
        cr_assert_eq(WAIT_COUNTER(in_flight, 8), 8, "2 loads running, 6 queued");

        s.a = w.a;
        cr_assert_eq(pthread_create(&t, NULL, stop_thread, &s), 0);
        /* the stop has begun when the queue is dropped */
        cr_assert_eq(WAIT_COUNTER(in_flight, 2), 2, "queued loads dropped");
        fake_repo_release_loads(&w.r);
        pthread_join(t, NULL);
        cr_assert(s.ok, "the calls in flight finished within the stop timeout");
        agent_kick(w.a);
        agent_world_sleep_ms(20);
        cr_assert_eq(fake_repo_count(&w.r, NULL), 2, "no load call after the stop began (%zu)",
                     fake_repo_count(&w.r, NULL));
}

/* ---- OOM (issue 29 item 8) ---- */

static atomic_long json_allocs_left = -1; /* < 0: no limit */
static json_malloc_t json_malloc_before;  /* jansson's allocator before the test's */

static void *limited_malloc(size_t n)
{
        if (atomic_load(&json_allocs_left) >= 0 && atomic_fetch_sub(&json_allocs_left, 1) <= 0)
                return NULL;
        return json_malloc_before(n);
}

/* agent_status() on OOM: NULL, never a report that silently misses models. */
Test(agent_shell, status_is_complete_or_null_under_oom)
{
        size_t complete = 0, null = 0;

        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("a", "s3://b/a") "," AGENT_ENTRY(
                                     "b", "s3://b/b") "," AGENT_ENTRY("c", "s3://b/c") "]");
        agent_world_wait_state(&w, "a", "Loaded");
        agent_world_wait_state(&w, "b", "Loaded");
        agent_world_wait_state(&w, "c", "Loaded");
        json_free_t json_free_before;

        json_get_alloc_funcs(&json_malloc_before, &json_free_before);
        json_set_alloc_funcs(limited_malloc, json_free_before);
        for (long k = 0; k < 40; k++) {
                json_t *st;

                atomic_store(&json_allocs_left, k);
                st = agent_status(w.a);
                atomic_store(&json_allocs_left, -1);
                if (!st) {
                        null++;
                        continue;
                }
                cr_assert_eq(json_array_size(st), 3, "with %ld allocations: %zu entries", k,
                             json_array_size(st));
                complete++;
                json_decref(st);
        }
        json_set_alloc_funcs(json_malloc_before, json_free_before);
        cr_assert_gt(null, 0);
        cr_assert_gt(complete, 0);
}

/* The model directory's listing is kept between passes (agent.c, disk_view()) and read again
 * once the directory changes: a model directory removed behind the agent's back, long after the
 * last listing, is downloaded again on the next pass. */
Test(agent_shell, a_directory_removed_behind_the_agent_is_fetched_again)
{
        char path[128];
        unsigned long passes;

        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("a", "s3://b/a") "]");
        agent_world_wait_state(&w, "a", "Loaded");
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/a"), 1);
        agent_world_sleep_ms(300); /* the next listing is not "racy": it may be kept */
        passes = agent_passes(w.a);
        agent_kick(w.a);
        agent_world_wait_pass(&w, passes);
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/a"), 1, "nothing changed: nothing fetched");
        (void)snprintf(path, sizeof(path), "%s/a", w.dir);
        cr_assert_eq(fetch_empty_dir(path), 0);
        cr_assert_eq(rmdir(path), 0);
        agent_kick(w.a);
        for (int i = 0; i < 5000 && fake_fetch_count(&w.f, "s3://b/a") < 2; i++)
                agent_world_sleep_ms(1);
        cr_assert_eq(fake_fetch_count(&w.f, "s3://b/a"), 2, "the removed copy was not noticed");
        agent_world_wait_state(&w, "a", "Loaded");
        cr_assert(agent_world_dir_exists(&w, "a"));
}

/* ---- the proxy's question never waits for a plan ---- */

/* A clock that, once armed, holds its first caller until released: every read of the agent's
 * clock after an idle planner is made under the agent's lock (agent_wait(), the plan's "now",
 * a worker's backoff), so a held caller holds that lock. */
struct gate {
        struct clock inner;
        pthread_mutex_t m;
        pthread_cond_t c;
        bool armed, entered, released;
};

static usec_t gate_now(void *userdata)
{
        struct gate *g = userdata;

        pthread_mutex_lock(&g->m);
        if (g->armed && !g->entered) {
                g->entered = true;
                pthread_cond_broadcast(&g->c);
                while (!g->released)
                        pthread_cond_wait(&g->c, &g->m);
        }
        pthread_mutex_unlock(&g->m);
        return clock_now(&g->inner);
}

static const struct clock_ops gate_ops = { .now = gate_now };

static bool gate_entered(struct gate *g)
{
        bool e;

        pthread_mutex_lock(&g->m);
        e = g->entered;
        pthread_mutex_unlock(&g->m);
        return e;
}

struct asker {
        struct agent *a;
        atomic_bool done;
        bool here, absent;
};

static void *ask(void *userdata)
{
        struct asker *k = userdata;

        k->here = agent_model_loaded(k->a, "m");
        k->absent = agent_model_loaded(k->a, "absent");
        atomic_store(&k->done, true);
        return NULL;
}

/* Placement's forwarder asks agent_model_loaded() on every request: it took the agent's lock,
 * which the planner holds while it plans every model, so each request waited for the plan. */
Test(agent_shell, model_loaded_is_answered_while_the_planner_holds_the_lock)
{
        static struct gate g = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };
        struct asker k = { 0 };
        unsigned long passes;
        bool entered, started, answered;
        pthread_t t;

        g.inner = w.clk.clock;
        w.clk.clock = (struct clock){ &gate_ops, &g };
        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("m", "s3://b/m") "]");
        agent_world_wait_state(&w, "m", "Loaded");
        do { /* the planner goes idle */
                passes = agent_passes(w.a);
                agent_world_sleep_ms(100);
        } while (agent_passes(w.a) != passes);

        /* no fatal assertion until the gate is released: the teardown needs the agent's lock */
        pthread_mutex_lock(&g.m);
        g.armed = true;
        pthread_mutex_unlock(&g.m);
        agent_world_want(&w, "[" AGENT_ENTRY("m", "s3://b/m") "," AGENT_ENTRY("n", "s3://b/n") "]");
        for (int i = 0; i < 5000 && !gate_entered(&g); i++)
                agent_world_sleep_ms(1);
        entered = gate_entered(&g);
        k.a = w.a;
        started = pthread_create(&t, NULL, ask, &k) == 0;
        for (int i = 0; started && i < 5000 && !atomic_load(&k.done); i++)
                agent_world_sleep_ms(1);
        answered = atomic_load(&k.done);
        pthread_mutex_lock(&g.m);
        g.released = true;
        pthread_cond_broadcast(&g.c);
        pthread_mutex_unlock(&g.m);
        if (started)
                pthread_join(t, NULL);
        cr_assert(entered, "the planner did not read the clock");
        cr_assert(started);
        cr_assert(answered, "agent_model_loaded() waited for the agent's lock");
        cr_assert(k.here, "m is Loaded here");
        cr_assert_not(k.absent);
        agent_world_wait_state(&w, "n", "Loaded");
        cr_assert(agent_model_loaded(w.a, "n"));
}

/* ---- the model server's index: read again only when it may be out of date ---- */

/* Issue 29 (bench/agent): each pass of a create asked the server for its whole index (1,000
 * entries at 1,000 models), twice per create, and listed the model directory whole after the
 * download (about 4,000 system calls at 1,000 models). Own calls are applied to a kept index
 * instead, read again after INDEX_REFRESH_USEC (5 s), after a failed call, and on a kick; the
 * listing follows inotify one entry at a time (agent/disk.h). */
Test(agent_shell, a_create_and_a_delete_neither_read_the_index_nor_list_the_directory)
{
        struct agent_counters c0, c1;
        size_t before;

        agent_world_start(&w, 2);
        agent_world_want(&w, "[" AGENT_ENTRY("a", "s3://b/a") "]");
        agent_world_wait_state(&w, "a", "Loaded");
        before = fake_repo_indexes(&w.r);
        agent_counters(w.a, &c0);
        agent_world_want(&w, "[" AGENT_ENTRY("a", "s3://b/a") "," AGENT_ENTRY("b", "s3://b/b") "]");
        agent_world_wait_state(&w, "b", "Loaded");
        agent_world_want(&w, "[" AGENT_ENTRY("b", "s3://b/b") "]");
        agent_world_wait_state(&w, "a", "absent");
        cr_assert_eq(fake_repo_indexes(&w.r), before, "a create and a delete read the index");
        agent_counters(w.a, &c1);
        cr_assert_eq(c1.indexes, c0.indexes);
        cr_assert_eq(c1.listings, c0.listings, "the model directory was listed whole again");
        cr_assert_eq(fake_repo_count(&w.r, "load:b"), 1);
        cr_assert_eq(fake_repo_count(&w.r, "unload:a"), 1);

        /* the server lost b (a restart): seen at the first pass 5 s on, here a create's */
        fake_repo_set(&w.r, "b", SERVER_UNAVAILABLE);
        fake_clock_advance(&w.clk, 5 * USEC_PER_SEC);
        agent_world_want(&w, "[" AGENT_ENTRY("b", "s3://b/b") "," AGENT_ENTRY("c", "s3://b/c") "]");
        agent_world_wait_state(&w, "c", "Loaded");
        for (int i = 0; i < 5000 && fake_repo_count(&w.r, "load:b") < 2; i++)
                agent_world_sleep_ms(1);
        cr_assert_eq(fake_repo_count(&w.r, "load:b"), 2, "b was not loaded again");
        cr_assert_gt(fake_repo_indexes(&w.r), before);
}

/* Each download worker keeps its connections open between downloads (fetch_thread_keep());
 * they are its own, so each worker closes them as it ends: the fetch port hears of every one. */
Test(agent_shell, every_download_worker_ends_through_the_fetch_port)
{
        agent_world_start(&w, 3);
        agent_world_want(&w, "[" AGENT_ENTRY("m", "s3://b/m") "]");
        agent_world_wait_state(&w, "m", "Loaded");
        cr_assert_eq(w.f.worker_ends, 0);
        w.a = agent_free(w.a);
        cr_assert_eq(w.f.worker_ends, 3, "%u of 3 download workers ended through the port",
                     w.f.worker_ends);
}
