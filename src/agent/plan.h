/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's level-based planner (pure: no I/O, no clock; "now" is an argument).
 *
 * Desired: the models.json entries. Actual: the model directories on disk (each with the
 * storageUri it was downloaded from, recorded inside the directory before it was renamed into
 * place, so a directory on disk is always complete) and the model server's repository index.
 * Memory: what this process did (the URI it last loaded per model, failures and their backoff);
 * after a restart memory is empty and the plan adopts what disk and server already agree on.
 *
 * One call yields every action that is due now; the shell starts them and plans again whenever
 * one finishes, so a model goes download -> load in two passes and a storageUri change goes
 * download (the new copy is swapped in atomically) -> load (the server reloads it) with the old
 * copy removed by the swap. Every model is on its own track: what is in flight for one model
 * (memory.busy, the shell's jobs) is an input, and the plan for the others never waits for it. A
 * model with a load or unload call in flight gets nothing until the call returns; a model whose
 * download in flight is no longer wanted (another storageUri, or not desired) gets ACTION_CANCEL
 * and, in the same plan, what it needs now (the new download, an unload, a removal).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "serving/modelconfig.h"
#include "util/macro.h"
#include "util/time-util.h"

enum server_state {
        SERVER_ABSENT,      /* not in the index */
        SERVER_UNAVAILABLE, /* in the repository, not loaded (or failed) */
        SERVER_LOADING,
        SERVER_READY,
        SERVER_UNLOADING,
        SERVER_UNKNOWN,
};

/* MLServer/Triton repository index "state" strings; anything else is SERVER_UNKNOWN. */
enum server_state server_state_from_string(const char *s);

struct disk_model {
        const char *name;       /* borrowed */
        const char *source_uri; /* borrowed; NULL when the record is missing or unreadable */
};

struct server_model {
        const char *name; /* borrowed */
        enum server_state state;
};

enum model_phase {
        PHASE_PENDING,
        PHASE_DOWNLOADING,
        PHASE_LOADING,
        PHASE_LOADED,
        PHASE_FAILED_TO_DOWNLOAD,
        PHASE_FAILED_TO_LOAD,
        PHASE_UNLOADING,
};

const char *model_phase_to_string(enum model_phase p);

/* What the shell has in flight for one model (at most one operation that counts). */
enum model_busy {
        BUSY_NONE,
        BUSY_DOWNLOAD,
        BUSY_LOAD,
        BUSY_UNLOAD,
};

/* What this process remembers about one model (owned by the shell, kept sorted by name). */
struct model_memory {
        char *name;        /* owned */
        char *loaded_uri;  /* owned; the storageUri whose copy we last loaded, NULL if none */
        char *failed_uri;  /* owned; the storageUri of the last failure, NULL if none */
        bool failed_load;  /* the last failure was a load (else a download) */
        unsigned failures; /* consecutive failures of failed_uri */
        usec_t retry_at;   /* monotonic; no new attempt before */
        char *reason;      /* owned; the last failure's message */
        enum model_phase phase;
        enum model_busy busy; /* in flight now (a cancelled download no longer counts) */
        char *busy_uri;       /* owned; the storageUri of the operation in flight */
        /* a copy this process downloaded and swapped in, not loaded since: always loaded, never
         * adopted (after a restart the server may still serve the previous copy under the name) */
        bool fresh_copy;
};

enum action_kind {
        ACTION_DOWNLOAD, /* fetch uri into a temp dir, record it, swap into <model-dir>/<name> */
        ACTION_LOAD,     /* POST load; on success memory.loaded_uri = uri */
        ACTION_ADOPT,    /* server and disk already agree (restart): memory.loaded_uri = uri */
        ACTION_UNLOAD,   /* POST unload of a model no longer desired */
        ACTION_REMOVE,   /* remove <model-dir>/<name> of a model no longer desired */
        ACTION_FORGET,   /* drop the memory of a model that is gone everywhere */
        ACTION_CANCEL,   /* the download in flight is no longer wanted: cancel it, discard it */
};

const char *action_kind_to_string(enum action_kind k);

struct action {
        enum action_kind kind;
        const char *name; /* borrowed from the inputs */
        const char *uri;  /* borrowed; the desired storageUri (DOWNLOAD/LOAD/ADOPT; CANCEL: the
                           * download's) */
};

struct plan_input {
        const struct model_entries *desired; /* sorted by name (modelconfig_parse() does) */
        const struct disk_model *disk;       /* sorted by name */
        size_t n_disk;
        const struct server_model *server; /* sorted by name */
        size_t n_server;
        bool server_known;                 /* false when the index could not be read */
        const struct model_memory *memory; /* sorted by name */
        size_t n_memory;
        usec_t now;
};

struct plan_result {
        struct action *actions; /* owned array */
        size_t n_actions;
        usec_t next_wake; /* earliest retry_at still in the future, USEC_INFINITY if none */
};

void plan_result_release(struct plan_result *r);

/*
 * Computes the actions due at input->now. Unloads come before removals of the same model, a
 * cancel before the model's other actions; a model whose last attempt at the same URI failed is
 * skipped until its retry_at; a model with a call in flight (BUSY_LOAD, BUSY_UNLOAD) or with
 * the download of its desired URI in flight is skipped. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int agent_plan(const struct plan_input *in, struct plan_result *ret);

/*
 * Retry delay after @failures consecutive failures: base * 2^(failures-1), capped at @max, then
 * scaled by a jitter factor in [0.5, 1.0] taken from @random01 (in [0, 1)).
 */
usec_t backoff_delay(unsigned failures, usec_t base, usec_t max, double random01);

/*
 * Why @name (@len bytes: it may hold U+0000) cannot be a model directory, or NULL when it can:
 * empty, ".", "..", a leading dot (hidden: "..data" is kubelet's, ".mp-tmp-" the agent's own
 * temporary directories), '/', U+0000, or longer than AGENT_NAME_MAX bytes (the temporary
 * directory ".mp-tmp-<name>-XXXXXX" must fit in NAME_MAX). Returns: a static string.
 */
#define AGENT_NAME_MAX 240
const char *agent_model_name_problem(const char *name, size_t len);

/* One models.json entry refused alone (its model is reported FailedToLoad with the reason). */
struct model_refusal {
        json_t *name; /* owned; a JSON string: it may hold U+0000 */
        char *reason; /* owned */
};

struct model_refusals {
        struct model_refusal *items; /* owned array, sorted by name */
        size_t n;
};

void model_refusals_release(struct model_refusals *r);

/*
 * The agent's reading of models.json: modelconfig_parse() entry by entry. The whole document is
 * rejected (-EINVAL, message in @reterr) only when it is not a JSON array; an entry that does not
 * decode, whose name is unsafe (agent_model_name_problem()), or whose name is listed again with
 * another spec is refused alone into @ret_refused (duplicates with equal specs count once). A
 * refused name that @previous (the last desired set, sorted; may be NULL) holds keeps that entry,
 * so one bad edit never unloads a model. Returns 0, -EINVAL, -ENOMEM; @ret sorted by name.
 */
_warn_unused_result_ int agent_desired_parse(const char *models_json,
                                             const struct model_entries *previous,
                                             struct model_entries *ret,
                                             struct model_refusals *ret_refused, char *reterr,
                                             size_t len_err);

/*
 * Whether two failure reasons say the same thing: equal but for durations ("after 0 ms",
 * "timed out after 10001 milliseconds"), which vary from one attempt to the next. A retry that
 * fails the same way is then no change of the reported state.
 */
bool agent_reason_same(const char *a, const char *b);
