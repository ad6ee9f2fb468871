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
 * Desired-set sources: agent_set_desired() with a source id. While the API source is healthy
 * (AGENT_SOURCE_API) its bytes win over the mounted file's, which lags behind by the kubelet's
 * sync period; when it is not, the file's bytes are used. Until some source has delivered once,
 * the agent does nothing (a restart never unloads models before knowing what is desired).
 */

#include <jansson.h>
#include <stdbool.h>

#include "agent/fetch.h"
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

enum agent_source {
        AGENT_SOURCE_FILE,
        AGENT_SOURCE_API,
};

_warn_unused_result_ int agent_new(const struct agent_options *opts, struct agent **ret);
/* Stops the thread if running; accepts NULL; returns NULL. */
struct agent *agent_free(struct agent *a);
DEFINE_CLEANUP_FUNC(struct agent *, agent_free)

/* Starts the reconciler thread. */
_warn_unused_result_ int agent_start(struct agent *a);

/* Hands over the latest models.json of @source (copied; NULL = the source lost it). Thread-safe. */
void agent_set_desired(struct agent *a, enum agent_source source, const char *models_json);
/* Marks the API source healthy or not (not: the file's bytes are used). Thread-safe. */
void agent_set_api_healthy(struct agent *a, bool healthy);

/*
 * A snapshot of the per-model states: [{"name","storageUri","state","reason"?}] sorted by name.
 * Thread-safe. Returns: new reference; NULL on OOM.
 */
json_t *agent_status(struct agent *a);
/* How many passes have completed (tests and probes). Thread-safe. */
unsigned long agent_passes(struct agent *a);
