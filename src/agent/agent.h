/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's reconciler: the imperative shell around agent_plan(). One thread runs passes; a
 * pass reads the desired set (the latest models.json given by any source), the actual set (the
 * model directories under model_dir and the model server's repository index), plans, and
 * executes: downloads in parallel (bounded), then loads, unloads and removals. A pass that did
 * something is followed at once by another, so every change converges through the same path.
 *
 * Disk layout: <model_dir>/<name>/ is a complete copy; it holds ".modelplane-source" (the
 * storageUri it came from), written before the directory is renamed into place. Downloads go to
 * <model_dir>/.mp-tmp-<name>-XXXXXX/ (hidden, so model servers that scan the repository never
 * see them) and are swapped in with renameat2(RENAME_EXCHANGE); leftovers of a crash are removed
 * by the next pass. There is no other state on disk.
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
#include <stdbool.h>
#include <stdint.h>

#include "agent/fetch.h"
#include "agent/source.h"
#include "util/macro.h"
#include "util/time-util.h"

struct agent;

struct agent_options {
        const char *model_dir;  /* borrowed; must exist */
        const char *server_url; /* borrowed; model server base URL */
        unsigned download_workers;
        const struct fetch_config *fetch; /* borrowed; lives as long as the agent */
        usec_t retry_base;                /* first retry delay after a failure (default 1 s) */
        usec_t retry_max;                 /* cap (default 5 min) */
        long load_timeout_sec;            /* per load call (default 300) */
};

_warn_unused_result_ int agent_new(const struct agent_options *opts, struct agent **ret);
/* Stops the thread if running; accepts NULL; returns NULL. */
struct agent *agent_free(struct agent *a);
DEFINE_CLEANUP_FUNC(struct agent *, agent_free)

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
 * A snapshot of the per-model states: [{"name","storageUri","state","reason"?}] sorted by name.
 * Thread-safe. Returns: new reference; NULL on OOM.
 */
json_t *agent_status(struct agent *a);
/* Changes whenever agent_status() would answer differently (coalescing writers poll it). */
unsigned long agent_status_generation(struct agent *a);
/* How many passes have completed (tests and probes). Thread-safe. */
unsigned long agent_passes(struct agent *a);
