/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the agent reports, on its in-memory ports: the reporter (src/agent/reporter.h) writing the
 * agent's states to the fake status sink (tests/fakes/fake-agent-ports.h), which records every
 * report. Each report is read back the way the controller reads it (serving/report.h,
 * serving/replicas.h: the ConfigMap the real sink applies, agent/status-writer.h) down to the
 * ModelLoaded condition. The reporter is stepped by the test on fake clocks, except where its
 * thread is the point (a hung sink, the stop). Milliseconds each; no API server.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent-world.h"
#include "agent/reporter.h"
#include "agent/status-writer.h"
#include "serving/replicas.h"
#include "serving/report.h"

#define WALL0 (1796601600 * USEC_PER_SEC) /* 2026-12-07T00:00:00Z */
#define POD   "iris-predictor-0"

static struct {
        struct agent_world aw;
        struct fake_sink s;
        struct fake_clock mono; /* the reporter's: when to write */
        struct fake_clock wall; /* the report's heartbeat time */
        struct reporter *rep;
} w;

static void setup(void)
{
        agent_world_setup(&w.aw);
        fake_sink_init(&w.s);
        fake_clock_init(&w.mono, 5000 * USEC_PER_SEC);
        fake_clock_init(&w.wall, WALL0);
        w.rep = NULL;
}

static void teardown(void)
{
        fake_sink_block(&w.s, false);
        w.rep = reporter_free(w.rep);
        agent_world_teardown(&w.aw);
        fake_sink_release_all(&w.s);
}

TestSuite(agent_status, .init = setup, .fini = teardown);

/* A reporter on the fake sink; @fake_clocks: the test's clocks (else the real ones, for the
 * thread); @interval: 0 = the default. */
static void new_reporter(bool fake_clocks, usec_t interval)
{
        int r = reporter_new(w.aw.a, &w.s.port,
                             &(struct reporter_options){
                                     .pod = POD,
                                     .interval = interval,
                                     .heartbeat = 10 * USEC_PER_SEC,
                                     .clock = fake_clocks ? &w.mono.clock : NULL,
                                     .wall = fake_clocks ? &w.wall.clock : NULL,
                             },
                             &w.rep);
        cr_assert_eq(r, 0, "reporter_new: %d", r);
}

static void start(void)
{
        agent_world_start(&w.aw, 2);
        new_reporter(true, 0);
}

static const char *data_string(const json_t *data, const char *key)
{
        const char *s = json_string_value(json_object_get(data, key));

        cr_assert_not_null(s, "the report has no string %s", key);
        return s;
}

/* The report models.json of the @i-th report taken (SIZE_MAX: the last), into @buf. */
static const char *models_of(size_t i, char *buf, size_t len)
{
        json_auto_t *data = fake_sink_report(&w.s, i);

        cr_assert_not_null(data, "report %zu", i);
        (void)snprintf(buf, len, "%s", data_string(data, REPORT_KEY_MODELS));
        return buf;
}

/* The ConfigMap the real sink would apply for @data, owned by the pod. */
static json_t *configmap_of(const json_t *data)
{
        json_t *cm = status_writer_object(data, "ns", POD, "iris", "uid-1");

        cr_assert_not_null(cm);
        return cm;
}

/* The controller's ModelLoaded for @model from the @i-th report alone: "status reason: message". */
static const char *model_loaded_of(size_t i, const char *model, const char *uri, char *buf,
                                   size_t len)
{
        json_auto_t *data = fake_sink_report(&w.s, i);
        json_auto_t *cms = json_array();
        struct replica_set set = { 0 };
        struct model_loaded ml = { 0 };

        cr_assert_not_null(data);
        cr_assert_eq(json_array_append_new(cms, configmap_of(data)), 0);
        cr_assert_eq(replica_set_build(cms, clock_now(&w.wall.clock), &set), 0);
        cr_assert_eq(set.n, 1, "the report counts as a replica");
        cr_assert_eq(model_loaded_summarize(&set, model, uri, &ml), 0);
        (void)snprintf(buf, len, "%s %s: %s", ml.status, ml.reason, ml.message);
        model_loaded_release(&ml);
        replica_set_release(&set);
        return buf;
}

#define WAIT_FAILED(n)                                                           \
        do {                                                                     \
                struct agent_counters c_ = { 0 };                                \
                for (int i_ = 0; i_ < 5000 && c_.downloads_failed < (n); i_++) { \
                        agent_counters(w.aw.a, &c_);                             \
                        agent_world_sleep_ms(1);                                 \
                }                                                                \
                cr_assert_eq(c_.downloads_failed, (n));                          \
        } while (0)

/* The report is serving/report.h's encoding, byte for byte where it is text. */
Test(agent_status, the_report_is_the_codec_output)
{
        json_auto_t *data = NULL;
        struct report rep = { 0 };
        char buf[256];

        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);

        data = fake_sink_report(&w.s, 0);
        cr_assert_str_eq(
                data_string(data, REPORT_KEY_MODELS),
                "[{\"name\":\"iris\",\"state\":\"Loaded\",\"storageUri\":\"s3://b/iris\"}]");
        cr_assert_str_eq(data_string(data, REPORT_KEY_POD), POD);
        cr_assert_str_eq(data_string(data, REPORT_KEY_HEARTBEAT), "2026-12-07T00:00:00Z");
        cr_assert_str_eq(data_string(data, REPORT_KEY_PERIOD), "10");
        cr_assert_null(json_object_get(data, REPORT_KEY_DRAINING));

        /* and the controller's decoder reads it back */
        cr_assert_eq(report_data_decode(data, &rep), 0);
        cr_assert_eq(rep.n, 1);
        cr_assert_str_eq(rep.models[0].state, "Loaded");
        cr_assert_str_eq(rep.models[0].storage_uri, "s3://b/iris");
        cr_assert_str_eq(rep.pod, POD);
        cr_assert(rep.has_heartbeat);
        cr_assert_eq(rep.heartbeat, WALL0);
        cr_assert_eq(rep.period_sec, 10);
        report_release(&rep);
        cr_assert_str_eq(model_loaded_of(0, "iris", "s3://b/iris", buf, sizeof(buf)),
                         "True Loaded: 1/1 replicas loaded");
}

/* A refused models.json entry is in the report, with its reason, beside the good model. */
Test(agent_status, a_refused_entry_is_reported)
{
        char buf[512];

        start();
        agent_world_want(&w.aw,
                         "[" AGENT_ENTRY("..", "s3://b/dots") "," AGENT_ENTRY("iris",
                                                                              "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        models_of(0, buf, sizeof(buf));
        cr_assert(strstr(buf, "{\"name\":\"..\",\"state\":\"FailedToLoad\",\"reason\":\"unsafe "
                              "model name"),
                  "%s", buf);
        model_loaded_of(0, "..", NULL, buf, sizeof(buf));
        cr_assert(strstr(buf, "False FailedToLoad: 0/1 replicas loaded; " POD
                              ": FailedToLoad: unsafe model name") == buf,
                  "%s", buf);
        cr_assert_str_eq(model_loaded_of(0, "iris", "s3://b/iris", buf, sizeof(buf)),
                         "True Loaded: 1/1 replicas loaded");
}

/* One report after each real change, none without one; changes between two steps are one
 * report (coalesced). */
Test(agent_status, a_report_after_each_real_change)
{
        char a[512], b[512];

        start();
        agent_world_want(&w.aw, "[]");
        agent_world_wait_pass(&w.aw, 0);
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_str_eq(models_of(0, a, sizeof(a)), "[]");
        cr_assert_eq(reporter_step(w.rep), 0, "nothing changed");

        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_eq(reporter_step(w.rep), 0);

        /* two models created before the next step: one report */
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "," AGENT_ENTRY(
                                        "rose", "s3://b/rose") "," AGENT_ENTRY("tulip",
                                                                               "s3://b/tulip") "]");
        agent_world_wait_state(&w.aw, "rose", "Loaded");
        agent_world_wait_state(&w.aw, "tulip", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);

        agent_world_want(&w.aw, "[" AGENT_ENTRY("rose", "s3://b/rose") "," AGENT_ENTRY(
                                        "tulip", "s3://b/tulip2") "]");
        agent_world_wait_state(&w.aw, "iris", "absent");
        for (int i = 0; i < 5000; i++) {
                json_auto_t *e = agent_world_entry(&w.aw, "tulip");
                if (streq(json_string_value(json_object_get(e, "storageUri")), "s3://b/tulip2"))
                        break;
                agent_world_sleep_ms(1);
        }
        agent_world_wait_state(&w.aw, "tulip", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_eq(reporter_step(w.rep), 0);

        cr_assert_eq(fake_sink_count(&w.s), 4);
        cr_assert_eq(fake_sink_calls(&w.s), 4, "no write without a report");
        cr_assert_str_eq(
                models_of(1, a, sizeof(a)),
                "[{\"name\":\"iris\",\"state\":\"Loaded\",\"storageUri\":\"s3://b/iris\"}]");
        models_of(2, a, sizeof(a));
        cr_assert(strstr(a, "\"rose\"") && strstr(a, "\"tulip\"") && strstr(a, "\"iris\""), "%s",
                  a);
        models_of(3, b, sizeof(b));
        cr_assert(!strstr(b, "\"iris\"") && strstr(b, "s3://b/tulip2"), "%s", b);
        cr_assert_str_eq(model_loaded_of(3, "tulip", "s3://b/tulip2", a, sizeof(a)),
                         "True Loaded: 1/1 replicas loaded");
        cr_assert_str_eq(model_loaded_of(2, "tulip", "s3://b/tulip2", a, sizeof(a)),
                         "Unknown Pending: 0/1 replicas loaded", "the old copy is not the new");
}

/* Issue 29 (Why 6): while S3 answered 500, ModelLoaded flipped 10 times in 40 s and the status
 * was rewritten on every retry. A retry is not a change: no report, and ModelLoaded moves only
 * from the failure to Loaded. */
Test(agent_status, a_retry_writes_no_report_and_model_loaded_stays)
{
        char buf[512];

        fake_fetch_fail(&w.aw.f, "s3://b/iris", "HTTP 500 InternalError: try again");
        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "FailedToDownload");
        WAIT_FAILED(1UL);
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_str_eq(model_loaded_of(0, "iris", "s3://b/iris", buf, sizeof(buf)),
                         "False FailedToDownload: 0/1 replicas loaded; " POD
                         ": FailedToDownload: HTTP 500 InternalError: try again");
        for (unsigned long n = 2; n <= 5; n++) {
                fake_clock_advance(&w.aw.clk, 2 * USEC_PER_SEC); /* past the agent's back-off */
                agent_kick(w.aw.a);
                cr_assert(fake_fetch_wait_count(&w.aw.f, "s3://b/iris", n), "retry %lu", n);
                cr_assert_eq(reporter_step(w.rep), 0, "retry %lu in flight: no report", n);
                WAIT_FAILED(n);
                cr_assert_eq(reporter_step(w.rep), 0, "retry %lu failed: no report", n);
        }
        cr_assert_eq(fake_sink_calls(&w.s), 1, "%zu writes", fake_sink_calls(&w.s));

        fake_fetch_fail(&w.aw.f, "s3://b/iris", NULL);
        fake_clock_advance(&w.aw.clk, 2 * USEC_PER_SEC);
        agent_kick(w.aw.a);
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_eq(fake_sink_count(&w.s), 2);
        cr_assert_str_eq(model_loaded_of(1, "iris", "s3://b/iris", buf, sizeof(buf)),
                         "True Loaded: 1/1 replicas loaded");
}

/* Without a change the report is rewritten once per heartbeat, with the new time only; the
 * controller sees a heartbeat-only update (it reconciles nothing for it). */
Test(agent_status, the_heartbeat_rewrites_the_same_states)
{
        json_auto_t *d0 = NULL, *d1 = NULL, *d2 = NULL, *cm0 = NULL, *cm1 = NULL, *cm2 = NULL;
        char a[512], b[512];

        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        fake_clock_advance(&w.mono, 10 * USEC_PER_SEC - 1);
        fake_clock_advance(&w.wall, 10 * USEC_PER_SEC);
        cr_assert_eq(reporter_step(w.rep), 0, "the heartbeat is not due yet");
        fake_clock_advance(&w.mono, 1);
        cr_assert_eq(reporter_step(w.rep), 1, "the heartbeat is due");
        cr_assert_eq(reporter_step(w.rep), 0);
        fake_clock_advance(&w.mono, 10 * USEC_PER_SEC);
        fake_clock_advance(&w.wall, 10 * USEC_PER_SEC);
        cr_assert_eq(reporter_step(w.rep), 1);

        d0 = fake_sink_report(&w.s, 0);
        d1 = fake_sink_report(&w.s, 1);
        cr_assert_str_eq(models_of(0, a, sizeof(a)), models_of(1, b, sizeof(b)));
        cr_assert_str_eq(data_string(d1, REPORT_KEY_HEARTBEAT), "2026-12-07T00:00:10Z");
        cm0 = configmap_of(d0);
        cm1 = configmap_of(d1);
        cr_assert(replica_report_heartbeat_only(cm0, cm1));

        /* a change is not heartbeat-only */
        agent_world_want(&w.aw, "[]");
        agent_world_wait_state(&w.aw, "iris", "absent");
        cr_assert_eq(reporter_step(w.rep), 1);
        d2 = fake_sink_report(&w.s, SIZE_MAX);
        cm2 = configmap_of(d2);
        cr_assert_not(replica_report_heartbeat_only(cm1, cm2));
        cr_assert_eq(fake_sink_count(&w.s), 4);
}

/* The API answers 409, 500, or the connection is lost: the write is retried, after a delay
 * that doubles from the interval up to the heartbeat, and the write that succeeds carries the
 * state of that moment. */
Test(agent_status, a_failing_sink_is_retried_with_backoff)
{
        static const usec_t delays[] = { 500, 1000, 2000, 4000, 8000, 10000, 10000 }; /* ms */
        struct reporter_counters c;
        char buf[512];

        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");

        fake_sink_fail(&w.s, -ESTALE, "HTTP 409 Conflict", 1);
        cr_assert_eq(reporter_step(w.rep), -ESTALE);
        cr_assert_eq(reporter_step(w.rep), 0, "not before the retry delay");
        fake_clock_advance(&w.mono, delays[0] * USEC_PER_MSEC);
        fake_sink_fail(&w.s, -EIO, "HTTP 500 InternalError", 1);
        cr_assert_eq(reporter_step(w.rep), -EIO);
        fake_clock_advance(&w.mono, delays[1] * USEC_PER_MSEC - 1);
        cr_assert_eq(reporter_step(w.rep), 0);
        fake_clock_advance(&w.mono, 1);
        fake_sink_fail(&w.s, -ECONNRESET, "connection reset by peer", 5);
        cr_assert_eq(reporter_step(w.rep), -ECONNRESET);
        for (size_t i = 2; i < ELEMENTSOF(delays); i++) {
                fake_clock_advance(&w.mono, delays[i] * USEC_PER_MSEC - 1);
                cr_assert_eq(reporter_step(w.rep), 0, "retry %zu early", i);
                fake_clock_advance(&w.mono, 1);
                if (i + 1 < ELEMENTSOF(delays))
                        cr_assert_eq(reporter_step(w.rep), -ECONNRESET, "retry %zu", i);
        }
        reporter_counters(w.rep, &c);
        cr_assert_eq(c.failures, 7);
        cr_assert_eq(c.written, 0);

        /* meanwhile a model came: the write that succeeds has it */
        agent_world_want(&w.aw,
                         "[" AGENT_ENTRY("iris", "s3://b/iris") "," AGENT_ENTRY("rose",
                                                                                "s3://b/rose") "]");
        agent_world_wait_state(&w.aw, "rose", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        reporter_counters(w.rep, &c);
        cr_assert_eq(c.failures, 0);
        cr_assert_eq(c.failed, 7);
        cr_assert_eq(c.written, 1);
        cr_assert_eq(fake_sink_calls(&w.s), 8);
        models_of(0, buf, sizeof(buf));
        cr_assert(strstr(buf, "\"iris\"") && strstr(buf, "\"rose\""), "%s", buf);

        /* the delay starts over after a success */
        agent_world_want(&w.aw, "[]");
        agent_world_wait_state(&w.aw, "iris", "absent");
        fake_sink_fail(&w.s, -EIO, "HTTP 500", 1);
        cr_assert_eq(reporter_step(w.rep), -EIO);
        fake_clock_advance(&w.mono, delays[0] * USEC_PER_MSEC);
        cr_assert_eq(reporter_step(w.rep), 1);
}

/* A sink that hangs (a lost connection until its timeout) or fails holds no model back: the
 * loads go on, and the report catches up once the sink answers. */
Test(agent_status, a_hung_or_failing_sink_blocks_no_load)
{
        char buf[512];

        agent_world_start(&w.aw, 2);
        new_reporter(false, USEC_PER_MSEC);
        fake_sink_block(&w.s, true);
        cr_assert_eq(reporter_start(w.rep), 0);
        cr_assert(fake_sink_wait_blocked(&w.s, 1), "the first write hangs");

        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "," AGENT_ENTRY(
                                        "rose", "s3://b/rose") "," AGENT_ENTRY("tulip",
                                                                               "s3://b/tulip") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        agent_world_wait_state(&w.aw, "rose", "Loaded");
        agent_world_wait_state(&w.aw, "tulip", "Loaded");
        cr_assert_eq(fake_repo_count(&w.aw.r, NULL), 3);
        cr_assert_eq(fake_sink_count(&w.s), 0, "still hung");

        /* it answers, with errors first */
        fake_sink_fail(&w.s, -EIO, "HTTP 500 InternalError", 3);
        fake_sink_block(&w.s, false);
        for (int i = 0; i < 5000; i++) {
                if (fake_sink_count(&w.s) > 0 &&
                    strstr(models_of(SIZE_MAX, buf, sizeof(buf)), "\"tulip\",\"state\":\"Loaded\""))
                        break;
                agent_world_sleep_ms(1);
        }
        models_of(SIZE_MAX, buf, sizeof(buf));
        cr_assert(strstr(buf, "\"iris\",\"state\":\"Loaded\"") &&
                          strstr(buf, "\"rose\",\"state\":\"Loaded\"") &&
                          strstr(buf, "\"tulip\",\"state\":\"Loaded\""),
                  "%s", buf);
        cr_assert_geq(fake_sink_calls(&w.s), 4, "three failures, then a report");
}

/* At the stop, the last change is written at once (the thread does not wait for its interval). */
Test(agent_status, the_stop_writes_the_last_change)
{
        char buf[512];

        agent_world_start(&w.aw, 2);
        new_reporter(false, 3600 * USEC_PER_SEC);
        cr_assert_eq(reporter_start(w.rep), 0);
        cr_assert(fake_sink_wait_count(&w.s, 1));
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(fake_sink_count(&w.s), 1, "the interval is an hour");
        w.rep = reporter_free(w.rep);
        cr_assert_eq(fake_sink_count(&w.s), 2);
        cr_assert_str_eq(
                models_of(1, buf, sizeof(buf)),
                "[{\"name\":\"iris\",\"state\":\"Loaded\",\"storageUri\":\"s3://b/iris\"}]");
}

/* ---- OOM ---- */

static atomic_long json_allocs_left = -1; /* < 0: no limit */
static json_malloc_t json_malloc_before;  /* jansson's allocator before the test's */

static void *limited_malloc(size_t n)
{
        if (atomic_load(&json_allocs_left) >= 0 && atomic_fetch_sub(&json_allocs_left, 1) <= 0)
                return NULL;
        return json_malloc_before(n);
}

/* Out of memory while making the report: the write fails (and is retried), never a report that
 * misses a model. */
Test(agent_status, a_report_is_complete_or_not_written_under_oom)
{
        size_t complete = 0, failed = 0;
        char buf[512];

        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("a", "s3://b/a") "," AGENT_ENTRY(
                                        "b", "s3://b/b") "," AGENT_ENTRY("c", "s3://b/c") "]");
        agent_world_wait_state(&w.aw, "a", "Loaded");
        agent_world_wait_state(&w.aw, "b", "Loaded");
        agent_world_wait_state(&w.aw, "c", "Loaded");
        json_free_t json_free_before;

        json_get_alloc_funcs(&json_malloc_before, &json_free_before);
        json_set_alloc_funcs(limited_malloc, json_free_before);
        for (long k = 0; k < 1000 && complete < 3; k++) {
                size_t before = fake_sink_count(&w.s);
                int r;

                fake_clock_advance(&w.mono, 10 * USEC_PER_SEC); /* a heartbeat or retry is due */
                atomic_store(&json_allocs_left, k);
                r = reporter_step(w.rep);
                atomic_store(&json_allocs_left, -1);
                if (r < 0) {
                        cr_assert_eq(r, -ENOMEM, "with %ld allocations: %d", k, r);
                        cr_assert_eq(fake_sink_count(&w.s), before);
                        failed++;
                        continue;
                }
                cr_assert_eq(r, 1);
                models_of(SIZE_MAX, buf, sizeof(buf));
                cr_assert(strstr(buf, "\"a\"") && strstr(buf, "\"b\"") && strstr(buf, "\"c\""),
                          "with %ld allocations: %s", k, buf);
                complete++;
        }
        json_set_alloc_funcs(json_malloc_before, json_free_before);
        cr_assert_gt(failed, 0);
        cr_assert_gt(complete, 0);
}

/* Placement (docs/placement.md): the address and draining are written at once, with no model
 * change and long before the heartbeat, and stay in every later report. */
Test(agent_status, address_and_draining_are_written_at_once)
{
        json_auto_t *d1 = NULL, *d2 = NULL, *d3 = NULL;

        start();
        agent_world_want(&w.aw, "[" AGENT_ENTRY("iris", "s3://b/iris") "]");
        agent_world_wait_state(&w.aw, "iris", "Loaded");
        cr_assert_eq(reporter_step(w.rep), 1);
        cr_assert_eq(reporter_step(w.rep), 0, "nothing changed");
        cr_assert_eq(reporter_set_address(w.rep, "10.0.0.7:9081"), 0);
        cr_assert_eq(reporter_step(w.rep), 1, "the address is a change");
        cr_assert_eq(reporter_step(w.rep), 0);
        reporter_set_draining(w.rep);
        cr_assert_eq(reporter_step(w.rep), 1, "draining is a change");
        reporter_set_draining(w.rep);
        cr_assert_eq(reporter_step(w.rep), 0, "draining twice is one change");
        fake_clock_advance(&w.mono, 10 * USEC_PER_SEC);
        cr_assert_eq(reporter_step(w.rep), 1, "the heartbeat");

        d1 = fake_sink_report(&w.s, 1);
        d2 = fake_sink_report(&w.s, 2);
        d3 = fake_sink_report(&w.s, 3);
        cr_assert_str_eq(data_string(d1, REPORT_KEY_ADDRESS), "10.0.0.7:9081");
        cr_assert_null(json_object_get(d1, REPORT_KEY_DRAINING));
        cr_assert_str_eq(data_string(d2, REPORT_KEY_DRAINING), "true");
        cr_assert_str_eq(data_string(d3, REPORT_KEY_ADDRESS), "10.0.0.7:9081");
        cr_assert_str_eq(data_string(d3, REPORT_KEY_DRAINING), "true");
        cr_assert_eq(fake_sink_count(&w.s), 4);
}
