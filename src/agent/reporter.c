/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/reporter.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "serving/report.h"
#include "util/log.h"

#define NOT_WRITTEN ((unsigned long)-1)

struct reporter {
        struct agent *agent;
        struct status_sink_port sink;
        char *pod;
        usec_t interval, heartbeat;
        const struct clock *clock, *wall;

        /* the step's state: one thread at a time (the reporter's, or the caller's before it) */
        unsigned long written_generation; /* NOT_WRITTEN before the first report */
        usec_t written_at;                /* clock time of the last report written */
        usec_t retry_at;                  /* after a failure: no attempt before */
        usec_t backoff;                   /* the retry delay now; 0 after a success */

        unsigned long written_meta; /* meta_generation of the last report written */

        pthread_mutex_t lock; /* the counters, stop, the address and draining */
        pthread_cond_t wake;
        struct reporter_counters counters;
        bool stop;
        char *address;                 /* data.address; NULL: none */
        bool draining;                 /* data.draining */
        unsigned long meta_generation; /* bumped when either changes: a report is due at once */
        bool started;
        pthread_t thread;
};

/* The report's data object (serving/report.h) from agent_status(). NULL on OOM. */
static json_t *report_of(struct reporter *r, const char *address, bool draining)
{
        json_t *models = agent_status(r->agent), *m, *data = NULL;
        struct report_model *rm;
        size_t i, n = json_array_size(models);

        if (!models)
                return NULL;
        rm = calloc(n ? n : 1, sizeof(*rm));
        if (rm) {
                json_array_foreach(models, i, m)
                        rm[i] = (struct report_model){
                                .name = json_string_value(json_object_get(m, "name")),
                                .state = json_string_value(json_object_get(m, "state")),
                                .storage_uri = json_string_value(json_object_get(m, "storageUri")),
                                .reason = json_string_value(json_object_get(m, "reason")),
                        };
                struct report_meta meta = {
                        .pod = r->pod,
                        .address = address,
                        .draining = draining,
                        .beat = clock_now(r->wall),
                        .period_sec = (unsigned)(r->heartbeat / USEC_PER_SEC),
                };

                data = report_data_encode(rm, n, &meta);
        }
        free(rm);
        json_decref(models);
        return data;
}

static int write_report(struct reporter *r, char *err, size_t len)
{
        AUTOFREE char *address = NULL;
        json_t *data;
        bool draining, oom;
        int ret;

        pthread_mutex_lock(&r->lock);
        address = r->address ? strdup(r->address) : NULL;
        oom = r->address && !address;
        draining = r->draining;
        pthread_mutex_unlock(&r->lock);
        data = oom ? NULL : report_of(r, address, draining);
        if (!data) {
                (void)snprintf(err, len, "cannot make the report: %s", errno_to_string(-ENOMEM));
                return -ENOMEM;
        }
        ret = r->sink.ops->write(r->sink.userdata, data, err, len);
        json_decref(data);
        return ret < 0 ? ret : 0;
}

static void record_failure(struct reporter *r, int ret, const char *err, usec_t now)
{
        unsigned long failures;

        r->backoff = r->backoff ? r->backoff * 2 : r->interval;
        if (r->backoff > r->heartbeat)
                r->backoff = r->heartbeat;
        r->retry_at = now + r->backoff;
        pthread_mutex_lock(&r->lock);
        r->counters.failed++;
        failures = ++r->counters.failures;
        pthread_mutex_unlock(&r->lock);
        log_emit(failures == 1 ? LOG_LEVEL_WARN : LOG_LEVEL_DEBUG, ret, NULL,
                 "agent: cannot write the model status of pod %s: %s (retried)", r->pod,
                 err[0] ? err : errno_to_string(ret));
}

static void record_success(struct reporter *r, unsigned long generation, unsigned long meta,
                           usec_t now)
{
        unsigned long failures;

        r->written_generation = generation;
        r->written_meta = meta;
        r->written_at = now;
        r->backoff = 0;
        pthread_mutex_lock(&r->lock);
        r->counters.written++;
        failures = r->counters.failures;
        r->counters.failures = 0;
        pthread_mutex_unlock(&r->lock);
        if (failures)
                log_info("agent: model status of pod %s written again after %lu failed writes",
                         r->pod, failures);
}

/* One step; @final: the last one (a retry does not wait for its delay). */
static int step(struct reporter *r, bool final)
{
        /* the generation before the snapshot: a change between the two is written again */
        unsigned long g = agent_status_generation(r->agent), mg;
        usec_t now = clock_now(r->clock);
        bool failing = r->backoff > 0;
        char err[512] = "";
        int ret;

        pthread_mutex_lock(&r->lock);
        mg = r->meta_generation;
        pthread_mutex_unlock(&r->lock);
        if (failing ? !final && now < r->retry_at
                    : g == r->written_generation && mg == r->written_meta &&
                              now - r->written_at < r->heartbeat)
                return 0;
        ret = write_report(r, err, sizeof(err));
        if (ret < 0) {
                record_failure(r, ret, err, now);
                return ret;
        }
        record_success(r, g, mg, now);
        return 1;
}

int reporter_step(struct reporter *r)
{
        return step(r, false);
}

static void *reporter_thread(void *userdata)
{
        struct reporter *r = userdata;

        pthread_mutex_lock(&r->lock);
        while (!r->stop) {
                struct timespec ts = usec_to_timespec(now_realtime() + r->interval);

                pthread_mutex_unlock(&r->lock);
                (void)step(r, false);
                pthread_mutex_lock(&r->lock);
                if (!r->stop)
                        (void)pthread_cond_timedwait(&r->wake, &r->lock, &ts);
        }
        pthread_mutex_unlock(&r->lock);
        (void)step(r, true);
        return NULL;
}

int reporter_new(struct agent *agent, const struct status_sink_port *sink,
                 const struct reporter_options *opts, struct reporter **ret)
{
        struct reporter *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        *r = (struct reporter){
                .agent = agent,
                .sink = *sink,
                .pod = strdup(opts->pod),
                .interval = opts->interval ? opts->interval : 500 * USEC_PER_MSEC,
                .heartbeat = opts->heartbeat >= USEC_PER_SEC
                                     ? opts->heartbeat / USEC_PER_SEC * USEC_PER_SEC
                                     : 10 * USEC_PER_SEC,
                .clock = opts->clock ? opts->clock : &clock_monotonic,
                .wall = opts->wall ? opts->wall : &clock_realtime,
                .written_generation = NOT_WRITTEN,
                .written_meta = NOT_WRITTEN,
        };
        if (!r->pod) {
                free(r);
                return -ENOMEM;
        }
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->wake, NULL);
        *ret = r;
        return 0;
}

int reporter_start(struct reporter *r)
{
        int ret = -pthread_create(&r->thread, NULL, reporter_thread, r);

        if (ret < 0)
                return ret;
        r->started = true;
        return 0;
}

struct reporter *reporter_free(struct reporter *r)
{
        if (!r)
                return NULL;
        if (r->started) {
                pthread_mutex_lock(&r->lock);
                r->stop = true;
                pthread_cond_broadcast(&r->wake);
                pthread_mutex_unlock(&r->lock);
                pthread_join(r->thread, NULL);
        }
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        free(r->pod);
        free(r->address);
        free(r);
        return NULL;
}

/* A change of the report's metadata: written at the next step, and the thread woken for it. */
static void meta_changed_locked(struct reporter *r)
{
        r->meta_generation++;
        pthread_cond_broadcast(&r->wake);
}

int reporter_set_address(struct reporter *r, const char *address)
{
        char *copy = strdup(address);

        if (!copy)
                return -ENOMEM;
        pthread_mutex_lock(&r->lock);
        free(r->address);
        r->address = copy;
        meta_changed_locked(r);
        pthread_mutex_unlock(&r->lock);
        return 0;
}

void reporter_set_draining(struct reporter *r)
{
        pthread_mutex_lock(&r->lock);
        if (!r->draining) {
                r->draining = true;
                meta_changed_locked(r);
        }
        pthread_mutex_unlock(&r->lock);
}

void reporter_counters(struct reporter *r, struct reporter_counters *ret)
{
        pthread_mutex_lock(&r->lock);
        *ret = r->counters;
        pthread_mutex_unlock(&r->lock);
}
