/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's reconciler: the imperative shell around agent_plan(). One thread plans; a pass
 * reads the desired set (the latest models.json given by any source; decoded again only when its
 * text changed), the actual set (the model directories under model_dir, listed again only when
 * the directory's mtime, ctime or inode moved, git's "racy" rule, or after 60 s; and the model
 * server's repository index) and what is in flight,
 * plans, and starts what is due without waiting for it: downloads go to a pool of
 * download_workers threads, load and unload calls to another pool of the same size, adoptions,
 * removals and the bookkeeping happen at once. Every model is on its own track: a slow download
 * or load never delays another model's create, change or delete; each finished job wakes the
 * planner, which plans again. A download whose model is no longer wanted (deleted, or another
 * storageUri) is cancelled (the fetch port may stop early) and its result is discarded: it is
 * never swapped in nor loaded.
 *
 * models.json is read entry by entry (agent_desired_parse()): an entry that does not decode, an
 * unsafe name (agent_model_name_problem(): ".", "..", "", a leading dot, '/', U+0000, too long)
 * or a name listed twice with different specs is refused alone, reported FailedToLoad with the
 * reason, and never downloaded; the rest is applied. Only a document that is not a JSON array is
 * rejected whole (the previous set is kept).
 *
 * Status: agent_status() changes only when a model's state, reason or loaded storageUri does; a
 * retry of a failure keeps the failure's state and reason (the counts are in agent_counters()).
 *
 * Stop: agent_stop() starts no call nor download any more, drops what is queued, cancels the
 * downloads in flight, and waits up to stop_timeout (counted from the stop's beginning) for the
 * load and unload calls in flight. agent_stop_begin() begins it without waiting (placement's
 * hand-over: the replica goes on serving what it holds).
 *
 * Ports (for tests: tests/fakes/fake-agent-ports.h): the fetch (downloads), the model server's
 * repository API and the clock; NULL in agent_options means the real ones.
 *
 * Disk layout: <model_dir>/<name>/ is a complete copy; it holds ".modelplane-source" (the
 * storageUri it came from), written before the directory is renamed into place. A copy this
 * process downloaded is always loaded, never adopted (after a restart the model server may still
 * serve the previous copy under the name). Downloads go to
 * <model_dir>/.mp-tmp-<name>-XXXXXX/ (hidden, so model servers that scan the repository never
 * see them) and are swapped in with renameat2(RENAME_EXCHANGE); leftovers of a crash are removed
 * by the first pass (before any download starts). There is no other state on disk.
 *
 * Desired-set sources: agent_set_desired() with a source id and the view's generation (the
 * ConfigMap's resourceVersion from the API watch, the projection's mtime from the mounted file),
 * agent_set_api_state() for the API source's start and failures; agent/source.h decides which
 * view is acted on. In short: the mounted file only while the API source has never answered
 * since start (and not while its first LIST is under way); once it has answered, its last view
 * stays the desired set through API errors (the file lags behind by kubelet's sync period and
 * would undo the last minute's changes); within a source an older view never replaces a newer
 * one. Until the source in use has delivered once, the agent does nothing (a restart never
 * unloads models before knowing what is desired).
 */

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent/fetch.h"
#include "agent/repo.h"
#include "agent/source.h"
#include "util/macro.h"
#include "util/time-util.h"

struct agent;

/* Downloads (the real one: fetch_model() with agent_options.fetch). */
struct agent_fetch_ops {
        /* Downloads @uri into the empty directory @dir; as fetch_model(). It returns -ECANCELED
         * early once *@cancel is set (the real one, fetch_model_cancellable(), within about a
         * second: libcurl's progress callback; the agent discards the result either way).
         * Called from several threads. */
        int (*fetch)(void *userdata, const char *uri, const char *dir, const atomic_bool *cancel,
                     char *reterr, size_t len_err);
        /* May be NULL. Called by a download worker as it ends, from its own thread: the real
         * one closes the connections its fetches kept open (fetch_thread_release()). */
        void (*worker_end)(void *userdata);
};

struct agent_fetch_port {
        const struct agent_fetch_ops *ops;
        void *userdata;
};

/* How long the planner waits for the model server's index: a server that hangs is seen as
 * unavailable then, and the planner goes on (deletes, creates) instead of waiting for the load
 * timeout (300 s by default). */
#define AGENT_INDEX_TIMEOUT_SEC 30

/* The model server's repository API (the real one: repo.h, one client per connection). */
struct agent_repo_ops {
        /* A connection for one thread (new; closed by close()), whose calls give up after
         * @timeout_sec: the planner's (index reads only) AGENT_INDEX_TIMEOUT_SEC, the call
         * workers' --load-timeout. */
        int (*open)(void *userdata, long timeout_sec, void **ret_conn);
        void (*close)(void *conn);
        int (*index)(void *conn, struct repo_index *ret, char *reterr, size_t len);
        int (*load)(void *conn, const char *name, char *reterr, size_t len);
        int (*unload)(void *conn, const char *name, char *reterr, size_t len);
};

struct agent_repo_port {
        const struct agent_repo_ops *ops;
        void *userdata;
};

struct agent_options {
        const char *model_dir;  /* borrowed; must exist */
        const char *server_url; /* borrowed; model server base URL */
        unsigned download_workers;
        const struct fetch_config *fetch; /* borrowed; lives as long as the agent */
        usec_t retry_base;                /* first retry delay after a failure (default 1 s) */
        usec_t retry_max;                 /* cap (default 5 min) */
        long load_timeout_sec;            /* per load call (default 300) */
        usec_t stop_timeout;              /* agent_stop()'s wait for calls (default 25 s) */
        const struct agent_fetch_port *fetch_port; /* borrowed; NULL: fetch_model() */
        const struct agent_repo_port *repo_port;   /* borrowed; NULL: repo.h at server_url */
        const struct clock *clock; /* borrowed; backoff and retry times; NULL: monotonic */
};

/* What the agent did since it started (for metrics; retries are not status changes). */
struct agent_counters {
        unsigned long downloads_ok, downloads_failed, downloads_cancelled;
        unsigned long loads_ok, loads_failed, unloads;
        unsigned long retries;   /* downloads and loads started again after a failure */
        unsigned long refused;   /* models.json entries refused (per read of models.json) */
        unsigned long in_flight; /* downloads and calls queued or running now */
        unsigned long listings;  /* whole listings of the model directory (agent/disk.h) */
        unsigned long indexes;   /* reads of the model server's index */
};

_warn_unused_result_ int agent_new(const struct agent_options *opts, struct agent **ret);
/* Stops (agent_stop()) and frees; accepts NULL; returns NULL. If a worker is still busy 1 s
 * after the stop (a download running to its end, a call that does not return), the agent is left
 * allocated for it and only the caller's pointer is cleared: the process is about to exit. */
struct agent *agent_free(struct agent *a);
DEFINE_CLEANUP_FUNC(struct agent *, agent_free)
/* agent_free(); returns false when a worker was left running (a download that goes on to its
 * end): the process should then end with _exit(), since tearing libcurl and OpenSSL down under a
 * running transfer is not safe. */
bool agent_free_checked(struct agent *a);

/* Starts the reconciler thread. */
_warn_unused_result_ int agent_start(struct agent *a);

/*
 * Hands over the latest models.json of @source (copied; not NULL) with its @generation (0 =
 * unknown; agent/source.h). A view of AGENT_SOURCE_API means the API answered. Thread-safe.
 */
void agent_set_desired(struct agent *a, enum agent_source source, const char *models_json,
                       uint64_t generation);
/*
 * The API source starts (SOURCE_API_STARTING: the file waits for its first answer) or failed
 * (SOURCE_API_FAILING: the file is used if the API has never answered; once it has, its last
 * view is kept). Thread-safe.
 */
void agent_set_api_state(struct agent *a, enum source_api state);

/*
 * A snapshot of the per-model states: [{"name","storageUri"?,"state","reason"?}] sorted by name,
 * refused models.json entries included (FailedToLoad with the reason). Thread-safe. Returns: new
 * reference; NULL on OOM (never a partial list).
 */
json_t *agent_status(struct agent *a);
/* Whether @name is Loaded here now (the proxy's forwarding under placement asks it for each
 * request it might forward). Thread-safe; a binary search under the lock. */
bool agent_model_loaded(struct agent *a, const char *name);
/* Changes whenever agent_status() would answer differently (coalescing writers poll it). */
unsigned long agent_status_generation(struct agent *a);
/* How many passes have completed (tests and probes). Thread-safe. */
unsigned long agent_passes(struct agent *a);

/*
 * Begins the stop: no new load, unload or download from now on, queued jobs dropped, downloads
 * in flight cancelled; waits for the calls in flight until stop_timeout after the stop began
 * (here, or in an earlier agent_stop_begin()). Returns true when none is left. Idempotent.
 * Thread-safe.
 */
bool agent_stop(struct agent *a);
/*
 * Begins the stop as agent_stop() does, without waiting: the models loaded stay loaded and
 * reported (a draining replica keeps serving them while placement hands them over; see
 * docs/placement.md). Idempotent. Thread-safe.
 */
void agent_stop_begin(struct agent *a);

/* Observes (the model server's index read again) and plans again now (e.g. after a test moved its
 * fake clock or took its fake server down). Thread-safe. */
void agent_kick(struct agent *a);

/* A snapshot of the counters. Thread-safe. */
void agent_counters(struct agent *a, struct agent_counters *ret);
