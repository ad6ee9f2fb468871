/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Which models.json the agent acts on (pure: no I/O, no clock, no logging). Two sources hand
 * over views: the API (the ConfigMap, followed by watch-configmap.c's reflector) and the mounted
 * file (watch-file.c). Every view carries its source's generation:
 *
 *  - API: the resourceVersion of the LIST or watch event that delivered it (etcd's revision: a
 *    number that only grows; source_generation_from_rv());
 *  - file: the modification time, in ns, of the directory that kubelet's "..data" symlink points
 *    to (each projection is a new directory), or of models.json itself without one.
 *
 * The rules:
 *  - Within a source a view older than the one held (a lower generation) is dropped; 0 is an
 *    unknown generation and never compared.
 *  - Once the API has answered (delivered a view), its view is the desired set for good: an API
 *    error (a restart of the API server, a network cut) keeps its last view, and the file is not
 *    used again. The file lags behind the ConfigMap by kubelet's sync period plus its cache TTL
 *    (60-90 s and more): going back to it after an error would undo, then redo, every change of
 *    the last minute (a deleted model loaded again, a new one unloaded). A view the API delivers
 *    after an error comes from a quorum LIST or a watch that continues one, so it is never older
 *    than what kubelet projected.
 *  - Before the API has answered: while it is starting (its first LIST is under way) nothing is
 *    used, so a file older than the ConfigMap is never acted on for the few milliseconds the LIST
 *    takes; once that LIST failed (no RBAC, API server unreachable), the file is used until the
 *    API answers. Without an API source the file is the desired set.
 *  - Until the source in use has delivered a view there is no desired set (source_effective()
 *    is NULL: the agent does nothing, so a restart never unloads models before it knows).
 */

#include <stdbool.h>
#include <stdint.h>

#include "util/macro.h"

enum agent_source {
        AGENT_SOURCE_FILE,
        AGENT_SOURCE_API,
        AGENT_SOURCE__MAX,
};

enum source_api {
        SOURCE_API_OFF,      /* no API source: the file decides */
        SOURCE_API_STARTING, /* its first LIST is under way: nothing decides yet */
        SOURCE_API_FAILING,  /* it has never answered and failed: the file decides meanwhile */
        SOURCE_API_ANSWERED, /* it has delivered a view: its (last) view decides from now on */
};

struct source_view {
        char *models_json;   /* owned; NULL = none yet */
        uint64_t generation; /* 0 = unknown */
};

/* Zero-initialised = no API source, no views. Fields read-only outside this module. */
struct source_state {
        struct source_view views[AGENT_SOURCE__MAX];
        enum source_api api;
};

void source_state_release(struct source_state *s);

enum source_verdict {
        SOURCE_TAKEN, /* a new view of that source, held from now on */
        SOURCE_SAME,  /* the bytes held already (the generation moves on) */
        SOURCE_OLDER, /* older than the view held: dropped */
};

/*
 * A view of @source: @models_json (not NULL; takes ownership, freed unless taken) with
 * @generation. A view of the API means it answered. *@ret_changed (may be NULL) tells whether
 * source_effective() now returns other bytes than before. Returns the verdict.
 */
enum source_verdict source_offer(struct source_state *s, enum agent_source source,
                                 char *models_json, uint64_t generation, bool *ret_changed);

/*
 * The API source starts (SOURCE_API_STARTING) or failed (SOURCE_API_FAILING); ANSWERED comes
 * only with a view, and a source that has answered stays so (its failures keep its view).
 * Returns whether source_effective() now returns other bytes than before.
 */
bool source_set_api(struct source_state *s, enum source_api api);

/* The models.json to act on (borrowed; valid until the next call on @s), or NULL: none yet. */
const char *source_effective(const struct source_state *s);
/* The source that source_effective() comes from, as a word for logs: "API", "file" or "none". */
const char *source_effective_name(const struct source_state *s);

/* A resourceVersion as a generation: its decimal value, 0 when it is not one (never compared). */
uint64_t source_generation_from_rv(const char *rv);
