/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * In-memory implementations of the agent's ports (src/agent/agent.h, src/agent/reporter.h) for
 * the fast tests of its shell: a fetch whose downloads finish at once, fail, or block until the
 * test releases them (or the agent cancels them), a model server repository whose load calls
 * finish at once, fail, or block until released, and a status sink that records every report
 * written and fails or blocks on demand. Each counts and records every call. Thread-safe (one
 * mutex each); the waits are bounded (5 s) so a broken agent fails a test instead of hanging it.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "agent/reporter.h"

#define FAKE_AGENT_MAX 64

struct fake_fetch_rule {
        char *uri;    /* owned */
        char *reason; /* owned; fail with -EIO and this message; NULL: succeed */
        bool block;   /* wait until fake_fetch_release() or a cancel */
        bool released;
};

struct fake_fetch {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct fake_fetch_rule rules[FAKE_AGENT_MAX];
        size_t n_rules;
        char *calls[4 * FAKE_AGENT_MAX]; /* owned; every URI fetched, in order */
        size_t n_calls;
        unsigned running;
        unsigned cancelled;           /* blocked downloads that returned -ECANCELED */
        unsigned worker_ends;         /* download workers that ended (worker_end) */
        struct agent_fetch_port port; /* hand &port to agent_options.fetch_port */
};

void fake_fetch_init(struct fake_fetch *f);
void fake_fetch_release_all(struct fake_fetch *f); /* frees; releases what is blocked first */
/* Rules for @uri (copied), before the agent fetches it. */
void fake_fetch_block(struct fake_fetch *f, const char *uri);
void fake_fetch_fail(struct fake_fetch *f, const char *uri, const char *reason);
/* Lets a blocked download of @uri finish (successfully unless a failure rule says otherwise). */
void fake_fetch_release(struct fake_fetch *f, const char *uri);
/* How many times @uri was fetched (NULL: any). */
size_t fake_fetch_count(struct fake_fetch *f, const char *uri);
/* Waits until @uri has been fetched @n times; returns false after 5 s. */
bool fake_fetch_wait_count(struct fake_fetch *f, const char *uri, size_t n);

struct fake_repo_model {
        char *name; /* owned */
        enum server_state state;
};

struct fake_repo {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct fake_repo_model models[FAKE_AGENT_MAX]; /* what the index lists */
        size_t n_models;
        char *fail_name; /* owned; its loads fail with fail_reason */
        char *fail_reason;
        bool block_loads; /* loads wait until fake_repo_release_loads() */
        bool down;        /* the index fails (the server does not answer) */
        size_t indexes;   /* index calls answered or failed */
        unsigned running_loads;
        char *calls[4 * FAKE_AGENT_MAX]; /* owned; "load:<name>", "unload:<name>" in order */
        size_t n_calls;
        struct agent_repo_port port; /* hand &port to agent_options.repo_port */
};

void fake_repo_init(struct fake_repo *r);
void fake_repo_release_all(struct fake_repo *r);
/* The server already holds @name in @state (a restart: the agent adopts it). */
void fake_repo_set(struct fake_repo *r, const char *name, enum server_state state);
void fake_repo_block_loads(struct fake_repo *r, bool block);
/* The index fails with -EIO from now on (@down) or answers again. */
void fake_repo_set_down(struct fake_repo *r, bool down);
void fake_repo_release_loads(struct fake_repo *r); /* unblocks, and blocks no more */
void fake_repo_fail_load(struct fake_repo *r, const char *name, const char *reason);
/* How many "load:<name>" / "unload:<name>" calls were made (@call like "load:iris"; NULL any). */
size_t fake_repo_count(struct fake_repo *r, const char *call);
/* How many times the index was asked. */
size_t fake_repo_indexes(struct fake_repo *r);
/* Waits until @n loads are running at once; returns false after 5 s. */
bool fake_repo_wait_running(struct fake_repo *r, unsigned n);

#define FAKE_SINK_MAX 256

struct fake_sink {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        json_t *reports[FAKE_SINK_MAX]; /* owned copies of every report taken, in order */
        size_t n_reports;
        size_t calls; /* write attempts, failed ones included */
        int fail;     /* < 0: the next fail_times writes return it (with fail_message) */
        unsigned fail_times;
        char fail_message[128];
        bool block;       /* writes wait until fake_sink_block(false) (a hung connection) */
        unsigned waiting; /* writes waiting now */
        struct status_sink_port port; /* hand &port to reporter_new() */
};

void fake_sink_init(struct fake_sink *s);
void fake_sink_release_all(struct fake_sink *s); /* frees the reports */
/* The next @times writes fail with @err (negative errno) and @message ("HTTP 409 Conflict"). */
void fake_sink_fail(struct fake_sink *s, int err, const char *message, unsigned times);
void fake_sink_block(struct fake_sink *s, bool block);
/* Reports taken so far; attempts (failed ones included). */
size_t fake_sink_count(struct fake_sink *s);
size_t fake_sink_calls(struct fake_sink *s);
/* The @i-th report taken (0 = the first; SIZE_MAX = the last). Returns: new reference or NULL. */
json_t *fake_sink_report(struct fake_sink *s, size_t i);
/* Waits until @n reports were taken / @n writes wait in a block; false after 5 s. */
bool fake_sink_wait_count(struct fake_sink *s, size_t n);
bool fake_sink_wait_blocked(struct fake_sink *s, unsigned n);
