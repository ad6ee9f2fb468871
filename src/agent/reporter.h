/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The reporter: hands the agent's per-model states, as the per-pod report (serving/report.h, the
 * one codec the controller reads back), to a status sink (the port below; the real one is the
 * ConfigMap "modelstatus-<pod>", agent/status-writer.h; tests/fakes/fake-agent-ports.h has an
 * in-memory one that records every report).
 *
 * When it writes (reporter_step()):
 *   - after a change: agent_status_generation() moved since the last report written, or the
 *     address or draining was set (reporter_set_address(), reporter_set_draining()). Changes
 *     are coalesced: the thread steps every @interval, so however many models change meanwhile,
 *     one report carries them all. A retry of a failed download or load is not a change (the
 *     agent keeps the failure's state and reason, agent.h), so it writes nothing;
 *   - when the heartbeat is due: @heartbeat after the last report written, even without a
 *     change (the controller takes a report several periods old for a dead agent);
 *   - after a failed write, again once its retry delay has passed: @interval, doubling up to
 *     @heartbeat, reset by a success. The write that succeeds carries the state of that moment.
 * The sink is called from the reporter's own thread only, so a sink that fails or hangs (the API
 * server answers 409 or 500, the connection is lost) delays the report, never a download or a
 * load call: the agent's threads do not wait for the reporter.
 *
 * Logging: the first failure of a run of failures is a warning, the later ones are debug, and
 * the success that ends the run says how many writes failed.
 */

#include <jansson.h>
#include <stddef.h>

#include "util/macro.h"
#include "util/time-util.h"

struct agent;

/* Where reports go. */
struct status_sink_ops {
        /* Writes one report: @data is its data object (serving/report.h; borrowed). Returns 0 or
         * a negative errno with a message in @reterr; a failure is retried (see above). Called
         * from one thread at a time. */
        int (*write)(void *userdata, const json_t *data, char *reterr, size_t len_err);
};

struct status_sink_port {
        const struct status_sink_ops *ops;
        void *userdata;
};

struct reporter_options {
        const char *pod;           /* borrowed (copied); the report's "pod" */
        usec_t interval;           /* how often the thread looks for a change; 0 = 500 ms */
        usec_t heartbeat;          /* whole seconds; below 1 s = 10 s */
        const struct clock *clock; /* borrowed; when to write; NULL: monotonic */
        const struct clock *wall;  /* borrowed; the report's heartbeat time; NULL: realtime */
};

struct reporter;

/* @agent, @sink: borrowed, must outlive the reporter. No thread yet (reporter_start()). */
_warn_unused_result_ int reporter_new(struct agent *agent, const struct status_sink_port *sink,
                                      const struct reporter_options *opts, struct reporter **ret);
/* Stops the thread if started (after one last step that writes a change or retries a failure at
 * once) and frees. NULL-safe; returns NULL. */
struct reporter *reporter_free(struct reporter *r);
DEFINE_CLEANUP_FUNC(struct reporter *, reporter_free)

/* Starts the thread: reporter_step() at once, then every interval. */
_warn_unused_result_ int reporter_start(struct reporter *r);

/*
 * One decision: writes a report if a change, the heartbeat or a retry is due at the clock's
 * now. Returns 1 (written), 0 (nothing due), or the sink's negative errno (-ENOMEM when the
 * report could not be made). Not to be called while the thread runs.
 */
int reporter_step(struct reporter *r);

/*
 * For placement (docs/placement.md): data.address ("host:port" where the other replicas reach
 * this agent's proxy; copied) and data.draining ("true" once the agent got SIGTERM) from now on.
 * Either change makes a report due at once (the thread is woken). Thread-safe.
 */
_warn_unused_result_ int reporter_set_address(struct reporter *r, const char *address);
void reporter_set_draining(struct reporter *r);

struct reporter_counters {
        unsigned long written;  /* reports the sink took */
        unsigned long failed;   /* writes that failed */
        unsigned long failures; /* consecutive failures now (0: the last write succeeded) */
};

/* A snapshot. Thread-safe. */
void reporter_counters(struct reporter *r, struct reporter_counters *ret);
