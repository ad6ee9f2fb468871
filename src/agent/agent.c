/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/disk.h"
#include "agent/plan.h"
#include "agent/repo.h"
#include "agent/served.h"
#include "agent/uri.h"
#include "serving/modelconfig.h"
#include "util/string-util.h"
#include "util/file-util.h"
#include "util/log.h"

#define REASON_MAX        1024
#define AGENT_RESYNC_USEC (30 * USEC_PER_SEC)

enum job_kind {
        JOB_DOWNLOAD,
        JOB_LOAD,
        JOB_UNLOAD,
};

enum job_state {
        JOB_QUEUED,
        JOB_RUNNING,
        JOB_DONE, /* finished, or dropped: the planner's thread collects it */
};

/* One download or model-server call of one model. Lives in agent.jobs from its dispatch until
 * the planner's thread has recorded its outcome. */
struct job {
        struct job *next;
        enum job_kind kind;
        enum job_state state; /* under lock */
        char *name;           /* owned */
        char *uri;            /* owned; may be NULL (unload) */
        atomic_bool cancel;   /* no longer wanted: never swapped in, result discarded */
        bool retry;           /* a new attempt after a failure of the same URI */
        int r;
        char reason[REASON_MAX];
};

static struct job *job_free(struct job *j)
{
        if (j) {
                free(j->name);
                free(j->uri);
                free(j);
        }
        return NULL;
}

struct agent {
        struct agent_options o;
        char *model_dir;
        char *server_url;
        struct agent_fetch_port fetch;
        struct agent_repo_port repo;
        const struct clock *clock;

        pthread_mutex_t lock;
        pthread_cond_t cond;      /* the planner's thread waits on it; so does agent_stop() */
        pthread_cond_t work_cond; /* the workers wait on it */
        /* under lock */
        struct source_state sources; /* the views of models.json and which one is acted on */
        unsigned long generation;
        bool kicked;
        bool stopping;            /* the stop began: nothing new starts */
        bool stop_waited;         /* agent_stop() has waited for the calls in flight */
        usec_t stop_began;        /* monotonic time the stop began */
        bool stop;                /* the threads end */
        struct job *jobs;         /* queued, running and done, oldest first */
        unsigned running_calls;   /* load/unload calls in flight */
        unsigned workers_alive;   /* worker threads not yet ended */
        struct model_memory *mem; /* sorted by name; mutated by the planner's thread only */
        size_t n_mem;
        struct model_refusals refused; /* the last models.json's refused entries */
        struct agent_counters counters;
        struct served served; /* its own lock: read by the proxy's threads (agent_model_loaded) */
        /* the planner's thread only */
        struct model_entries last_desired;
        char *last_json;        /* the models.json last_desired was parsed from (NULL: none) */
        struct disk_list *disk; /* the model directory's listing */
        void *conn;             /* its model-server connection */
        struct repo_index ix;   /* the server's index as last read, own calls applied */
        bool ix_fresh;          /* false: read it at the next pass (index_view()) */
        usec_t ix_read_at;      /* the agent's clock at that read */

        atomic_ulong passes;
        atomic_ulong status_generation; /* bumped on every per-model state change */

        pthread_t thread;
        bool started;
        pthread_t *workers;
        size_t n_workers; /* started */
};

static void index_apply(struct agent *a, const struct job *j);

/* ---- the real ports ---- */

static int real_fetch(void *userdata, const char *uri, const char *dir, const atomic_bool *cancel,
                      char *reterr, size_t len_err)
{
        struct agent *a = userdata;

        /* a worker's downloads reuse its connections (fetch_thread_keep()) */
        fetch_thread_keep();
        return fetch_model_cancellable(a->o.fetch, uri, dir, cancel, reterr, len_err);
}

static void real_worker_end(void *userdata)
{
        (void)userdata;
        fetch_thread_release();
}

static const struct agent_fetch_ops real_fetch_ops = { .fetch = real_fetch,
                                                       .worker_end = real_worker_end };

static int real_open(void *userdata, long timeout_sec, void **ret_conn)
{
        struct agent *a = userdata;
        struct repo_client *c = NULL;
        int r;

        r = repo_client_new(a->server_url, timeout_sec, &c);
        if (r < 0)
                return r;
        *ret_conn = c;
        return 0;
}

static void real_close(void *conn)
{
        repo_client_free(conn);
}

static int real_index(void *conn, struct repo_index *ret, char *reterr, size_t len)
{
        return repo_index(conn, ret, reterr, len);
}

static int real_load(void *conn, const char *name, char *reterr, size_t len)
{
        return repo_load(conn, name, reterr, len);
}

static int real_unload(void *conn, const char *name, char *reterr, size_t len)
{
        return repo_unload(conn, name, reterr, len);
}

static const struct agent_repo_ops real_repo_ops = {
        .open = real_open,
        .close = real_close,
        .index = real_index,
        .load = real_load,
        .unload = real_unload,
};

static usec_t agent_now(const struct agent *a)
{
        return clock_now(a->clock);
}

static void memory_release(struct model_memory *m)
{
        free(m->name);
        free(m->loaded_uri);
        free(m->failed_uri);
        free(m->reason);
        free(m->busy_uri);
}

int agent_new(const struct agent_options *opts, struct agent **ret)
{
        struct agent *a = calloc(1, sizeof(*a));
        pthread_condattr_t ca;
        int r;

        if (!a)
                return -ENOMEM;
        a->o = *opts;
        if (a->o.download_workers == 0)
                a->o.download_workers = 4;
        if (a->o.retry_base == 0)
                a->o.retry_base = USEC_PER_SEC;
        if (a->o.retry_max == 0)
                a->o.retry_max = 5 * USEC_PER_MINUTE;
        if (a->o.load_timeout_sec == 0)
                a->o.load_timeout_sec = 300;
        if (a->o.stop_timeout == 0)
                a->o.stop_timeout = 25 * USEC_PER_SEC;
        a->fetch = opts->fetch_port ? *opts->fetch_port
                                    : (struct agent_fetch_port){ &real_fetch_ops, a };
        a->repo = opts->repo_port ? *opts->repo_port
                                  : (struct agent_repo_port){ &real_repo_ops, a };
        a->clock = opts->clock ? opts->clock : &clock_monotonic;
        a->model_dir = strdup(opts->model_dir);
        a->server_url = strdup(opts->server_url ? opts->server_url : "");
        pthread_mutex_init(&a->lock, NULL);
        served_init(&a->served);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&a->cond, &ca);
        pthread_cond_init(&a->work_cond, &ca);
        pthread_condattr_destroy(&ca);
        a->o.model_dir = a->model_dir;
        a->o.server_url = a->server_url;
        if (!a->model_dir || !a->server_url) {
                agent_free(a);
                return -ENOMEM;
        }
        r = disk_list_new(a->model_dir, true, &a->disk);
        if (r < 0) {
                agent_free(a);
                return r;
        }
        r = a->repo.ops->open(a->repo.userdata,
                              MIN((long)AGENT_INDEX_TIMEOUT_SEC, (long)a->o.load_timeout_sec),
                              &a->conn);
        if (r < 0) {
                agent_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

static void cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, usec_t deadline, bool *timeout)
{
        struct timespec ts = usec_to_timespec(deadline);

        *timeout = pthread_cond_timedwait(c, m, &ts) == ETIMEDOUT;
}

/* Caller holds the lock. Drops what is queued and cancels the downloads in flight. */
static void jobs_stop(struct agent *a)
{
        for (struct job *j = a->jobs; j; j = j->next) {
                if (j->state == JOB_DONE)
                        continue;
                if (j->state == JOB_QUEUED || j->kind == JOB_DOWNLOAD)
                        atomic_store(&j->cancel, true);
                if (j->state == JOB_QUEUED) {
                        j->state = JOB_DONE;
                        j->r = -ECANCELED;
                }
        }
}

/* Caller holds the lock. The stop begins (once): nothing new starts, what is queued is dropped,
 * downloads in flight are cancelled. */
static void stop_begin(struct agent *a)
{
        if (!a->stopping)
                a->stop_began = now_monotonic();
        a->stopping = true;
        jobs_stop(a);
        pthread_cond_broadcast(&a->cond);
        pthread_cond_broadcast(&a->work_cond);
}

void agent_stop_begin(struct agent *a)
{
        pthread_mutex_lock(&a->lock);
        stop_begin(a);
        pthread_mutex_unlock(&a->lock);
}

bool agent_stop(struct agent *a)
{
        bool timeout = false, was;
        usec_t deadline, now;
        unsigned left;

        pthread_mutex_lock(&a->lock);
        stop_begin(a);
        deadline = a->stop_began + a->o.stop_timeout; /* one budget from the stop's beginning */
        now = now_monotonic();
        was = a->stop_waited;
        a->stop_waited = true;
        if (!was && a->running_calls > 0)
                log_info("agent: stopping: waiting up to %.1f s for %u model server calls",
                         (double)(deadline > now ? deadline - now : 0) / (double)USEC_PER_SEC,
                         a->running_calls);
        while (a->running_calls > 0 && !timeout)
                cond_wait_until(&a->cond, &a->lock, deadline, &timeout);
        left = a->running_calls;
        pthread_mutex_unlock(&a->lock);
        if (left > 0 && !was)
                log_warn("agent: stopping with %u model server calls still in flight", left);
        return left == 0;
}

bool agent_free_checked(struct agent *a)
{
        usec_t deadline;
        bool timeout = false;

        if (!a)
                return true;
        if (a->started) {
                (void)agent_stop(a);
                /* the calls had their time in agent_stop(); a download is not worth waiting
                 * for (cancelled: the fake ones return at once, a real one at its end) */
                deadline = now_monotonic() + USEC_PER_SEC;
                pthread_mutex_lock(&a->lock);
                a->stop = true;
                pthread_cond_broadcast(&a->cond);
                pthread_cond_broadcast(&a->work_cond);
                pthread_mutex_unlock(&a->lock);
                pthread_join(a->thread, NULL);
                pthread_mutex_lock(&a->lock);
                while (a->workers_alive > 0 && !timeout)
                        cond_wait_until(&a->cond, &a->lock, deadline, &timeout);
                pthread_mutex_unlock(&a->lock);
                if (timeout) {
                        /* a download or call that does not return: it still uses @a */
                        log_warn("agent: leaving %u worker threads behind at exit",
                                 a->workers_alive);
                        return false;
                }
                for (size_t i = 0; i < a->n_workers; i++)
                        pthread_join(a->workers[i], NULL);
        }
        free(a->workers);
        while (a->jobs) {
                struct job *j = a->jobs;
                a->jobs = j->next;
                job_free(j);
        }
        for (size_t i = 0; i < a->n_mem; i++)
                memory_release(&a->mem[i]);
        free(a->mem);
        source_state_release(&a->sources);
        model_entries_release(&a->last_desired);
        free(a->last_json);
        disk_list_free(a->disk);
        repo_index_release(&a->ix);
        model_refusals_release(&a->refused);
        if (a->conn)
                a->repo.ops->close(a->conn);
        pthread_cond_destroy(&a->cond);
        pthread_cond_destroy(&a->work_cond);
        pthread_mutex_destroy(&a->lock);
        served_release(&a->served);
        free(a->model_dir);
        free(a->server_url);
        free(a);
        return true;
}

struct agent *agent_free(struct agent *a)
{
        (void)agent_free_checked(a);
        return NULL;
}

static const char *source_name(enum agent_source source)
{
        return source == AGENT_SOURCE_API ? "API" : "file";
}

/* Under a->lock: wakes the reconciler when the desired set changed. */
static void sources_changed(struct agent *a, bool changed)
{
        if (!changed)
                return;
        a->generation++;
        pthread_cond_broadcast(&a->cond);
}

void agent_set_desired(struct agent *a, enum agent_source source, const char *models_json,
                       uint64_t generation)
{
        char *copy = strdup(models_json);
        const char *was, *now;
        enum source_verdict v;
        uint64_t held;
        bool changed;

        if (!copy) {
                log_error("agent: out of memory taking models.json");
                return;
        }
        pthread_mutex_lock(&a->lock);
        held = a->sources.views[source].generation;
        was = source_effective_name(&a->sources);
        v = source_offer(&a->sources, source, TAKE_PTR(copy), generation, &changed);
        now = source_effective_name(&a->sources);
        sources_changed(a, changed);
        pthread_mutex_unlock(&a->lock);
        if (v == SOURCE_OLDER)
                log_warn(
                        "agent: dropped a models.json from the %s older than the one held (generation %" PRIu64
                        " < %" PRIu64 ")",
                        source_name(source), generation, held);
        else if (!streq(was, now))
                log_info("agent: models.json from the %s from now on (generation %" PRIu64 ")", now,
                         generation);
        else if (changed)
                log_debug("agent: models.json from the %s changed (generation %" PRIu64 ")", now,
                          generation);
}

void agent_set_api_state(struct agent *a, enum source_api state)
{
        const char *was, *now;
        bool changed;

        pthread_mutex_lock(&a->lock);
        was = source_effective_name(&a->sources);
        changed = source_set_api(&a->sources, state);
        now = source_effective_name(&a->sources);
        sources_changed(a, changed);
        pthread_mutex_unlock(&a->lock);
        if (!streq(was, now))
                log_info("agent: models.json from the %s from now on (the API has not answered)",
                         now);
}

void agent_kick(struct agent *a)
{
        pthread_mutex_lock(&a->lock);
        a->kicked = true;
        pthread_cond_broadcast(&a->cond);
        pthread_mutex_unlock(&a->lock);
}

void agent_counters(struct agent *a, struct agent_counters *ret)
{
        pthread_mutex_lock(&a->lock);
        *ret = a->counters;
        ret->in_flight = 0;
        ret->listings = disk_list_scans(a->disk);
        for (const struct job *j = a->jobs; j; j = j->next)
                if (j->state != JOB_DONE)
                        ret->in_flight++;
        pthread_mutex_unlock(&a->lock);
}

unsigned long agent_status_generation(struct agent *a)
{
        return atomic_load(&a->status_generation);
}

unsigned long agent_passes(struct agent *a)
{
        return atomic_load(&a->passes);
}

/* Caller holds the lock. Whether @name (a C string) is a refused entry's. */
static bool is_refused(const struct agent *a, const char *name)
{
        for (size_t i = 0; i < a->refused.n; i++) {
                const json_t *n = a->refused.items[i].name;
                if (json_string_length(n) == strlen(name) && streq(json_string_value(n), name))
                        return true;
        }
        return false;
}

static json_t *status_entry(const struct model_memory *m)
{
        json_auto_t *o = json_pack("{s:s, s:s}", "name", m->name, "state",
                                   model_phase_to_string(m->phase));

        if (!o)
                return NULL;
        if (m->loaded_uri && json_object_set_new(o, "storageUri", json_string(m->loaded_uri)) < 0)
                return NULL;
        if (m->reason &&
            (m->phase == PHASE_FAILED_TO_LOAD || m->phase == PHASE_FAILED_TO_DOWNLOAD) &&
            json_object_set_new(o, "reason", json_string(m->reason)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static int cmp_status(const void *x, const void *y)
{
        const json_t *a = json_object_get(*(json_t *const *)x, "name");
        const json_t *b = json_object_get(*(json_t *const *)y, "name");
        size_t la = json_string_length(a), lb = json_string_length(b);
        int c = memcmp(json_string_value(a), json_string_value(b), MIN(la, lb));

        return c != 0 ? c : (la > lb) - (la < lb);
}

/* Caller holds the lock. Every entry, sorted by name, into @items (n_mem + refused.n). */
static int status_items(struct agent *a, json_t **items, size_t *ret_n)
{
        size_t n = 0;

        for (size_t i = 0; i < a->n_mem; i++) {
                if (is_refused(a, a->mem[i].name))
                        continue; /* the refusal is what counts */
                items[n] = status_entry(&a->mem[i]);
                if (!items[n])
                        return -ENOMEM;
                n++;
        }
        for (size_t i = 0; i < a->refused.n; i++) {
                items[n] = json_pack("{s:O, s:s, s:s}", "name", a->refused.items[i].name, "state",
                                     model_phase_to_string(PHASE_FAILED_TO_LOAD), "reason",
                                     a->refused.items[i].reason);
                if (!items[n])
                        return -ENOMEM;
                n++;
        }
        *ret_n = n;
        return 0;
}

json_t *agent_status(struct agent *a)
{
        json_auto_t *arr = json_array();
        AUTOFREE json_t **items = NULL;
        size_t n = 0;
        int r;

        if (!arr)
                return NULL;
        pthread_mutex_lock(&a->lock);
        items = calloc(a->n_mem + a->refused.n + 1, sizeof(json_t *));
        r = items ? status_items(a, items, &n) : -ENOMEM;
        pthread_mutex_unlock(&a->lock);
        if (r >= 0 && n > 1)
                qsort(items, n, sizeof(json_t *), cmp_status);
        for (size_t i = 0; items && items[i]; i++)
                if (r >= 0 && json_array_append(arr, items[i]) < 0)
                        r = -ENOMEM;
        for (size_t i = 0; items && items[i]; i++)
                json_decref(items[i]);
        if (r < 0)
                return NULL; /* never a report that silently misses models */
        return TAKE_PTR(arr);
}

/* ---- memory (the planner's thread; writes under lock for agent_status()) ---- */

static struct model_memory *mem_find(struct agent *a, const char *name, size_t *ret_pos)
{
        bool found;
        size_t pos = sorted_find(a->mem, a->n_mem, sizeof(*a->mem), name, &found);

        if (ret_pos)
                *ret_pos = pos;
        return found ? &a->mem[pos] : NULL;
}

/* Never takes the agent's lock (the planner holds it while it plans): the served set. */
bool agent_model_loaded(struct agent *a, const char *name)
{
        return served_has(&a->served, name);
}

/* Caller holds the lock. Puts @m in the served set or takes it out, by its phase. */
static void served_sync(struct agent *a, const struct model_memory *m)
{
        if (served_set(&a->served, m->name, m->phase == PHASE_LOADED && !is_refused(a, m->name)) <
            0)
                log_error("agent: out of memory: model %s is taken as not Loaded here", m->name);
}

/* Caller holds the lock. */
static struct model_memory *mem_get(struct agent *a, const char *name)
{
        struct model_memory *m, *v;
        size_t pos;

        m = mem_find(a, name, &pos);
        if (m)
                return m;
        v = reallocarray(a->mem, a->n_mem + 1, sizeof(*v));
        if (!v)
                return NULL;
        a->mem = v;
        memmove(&a->mem[pos + 1], &a->mem[pos], (a->n_mem - pos) * sizeof(*v));
        a->mem[pos] = (struct model_memory){ .name = strdup(name) };
        if (!a->mem[pos].name) {
                memmove(&a->mem[pos], &a->mem[pos + 1], (a->n_mem - pos) * sizeof(*v));
                return NULL;
        }
        a->n_mem++;
        return &a->mem[pos];
}

/* Returns whether the value changed. */
static bool set_str(char **p, const char *v)
{
        char *c;

        if ((!*p && !v) || (*p && v && streq(*p, v)))
                return false;
        c = v ? strdup(v) : NULL;
        free(*p);
        *p = c;
        return true;
}

/* Caller holds the lock. Sets what agent_status() reports, bumping its generation on a change. */
static void mem_report(struct agent *a, struct model_memory *m, enum model_phase phase,
                       const char *reason)
{
        bool changed = m->phase != phase;

        m->phase = phase;
        if (changed)
                served_sync(a, m);
        if (changed || !agent_reason_same(m->reason, reason))
                changed |= set_str(&m->reason, reason);
        if (changed)
                atomic_fetch_add(&a->status_generation, 1);
}

/* Records a success or a failure of @name at @uri. A failure that repeats the last one of the
 * same URI only moves the retry time (same state, same reason: no status change). */
/* @name's copy on disk was swapped in by this process and is not loaded yet (@fresh). */
static void mem_fresh_copy(struct agent *a, const char *name, bool fresh)
{
        struct model_memory *m;

        pthread_mutex_lock(&a->lock);
        m = mem_find(a, name, NULL);
        if (m)
                m->fresh_copy = fresh;
        pthread_mutex_unlock(&a->lock);
}

static void mem_update(struct agent *a, const char *name, const char *uri, enum model_phase phase,
                       const char *loaded_uri, const char *reason)
{
        struct model_memory *m;

        pthread_mutex_lock(&a->lock);
        m = mem_get(a, name);
        if (!m) {
                pthread_mutex_unlock(&a->lock);
                log_error("agent: out of memory tracking model %s", name);
                return;
        }
        if (phase == PHASE_FAILED_TO_DOWNLOAD || phase == PHASE_FAILED_TO_LOAD) {
                if (!(m->failed_uri && uri && streq(m->failed_uri, uri)))
                        m->failures = 0;
                m->failures++;
                (void)set_str(&m->failed_uri, uri);
                m->failed_load = phase == PHASE_FAILED_TO_LOAD;
                m->retry_at = agent_now(a) + backoff_delay(m->failures, a->o.retry_base,
                                                           a->o.retry_max, fetch_jitter01());
                mem_report(a, m, phase, reason);
        } else {
                if (phase == PHASE_LOADED || phase == PHASE_PENDING || phase == PHASE_UNLOADING) {
                        (void)set_str(&m->failed_uri, NULL);
                        m->failures = 0;
                        m->retry_at = 0;
                }
                mem_report(a, m, phase, NULL);
        }
        if (phase == PHASE_LOADED)
                m->fresh_copy = false;
        if (phase == PHASE_LOADED && set_str(&m->loaded_uri, loaded_uri))
                atomic_fetch_add(&a->status_generation, 1);
        if (phase == PHASE_UNLOADING && set_str(&m->loaded_uri, NULL))
                atomic_fetch_add(&a->status_generation, 1);
        pthread_mutex_unlock(&a->lock);
}

/*
 * The model server's index could not be read (it died, or does not answer): a model it held is
 * not served by this replica now, so it is reported FailedToLoad with the reason. What it was
 * loaded from is kept, and no failure is recorded against the URI: when the server answers
 * again, mem_server_back() restores Loaded for what it still holds, and the planner reloads
 * what it lost.
 */
static void mem_server_lost(struct agent *a, const char *why)
{
        AUTOFREE char *reason = NULL;

        if (asprintf(&reason, "model server unavailable: %s", why) < 0)
                return;
        pthread_mutex_lock(&a->lock);
        for (size_t i = 0; i < a->n_mem; i++) {
                struct model_memory *m = &a->mem[i];
                if (m->phase != PHASE_LOADED)
                        continue;
                mem_report(a, m, PHASE_FAILED_TO_LOAD, reason);
        }
        pthread_mutex_unlock(&a->lock);
}

static void mem_server_back(struct agent *a, const struct server_model *server, size_t n)
{
        pthread_mutex_lock(&a->lock);
        for (size_t i = 0; i < a->n_mem; i++) {
                struct model_memory *m = &a->mem[i];
                if (m->phase != PHASE_FAILED_TO_LOAD || m->failed_uri || !m->loaded_uri ||
                    m->busy != BUSY_NONE)
                        continue;
                for (size_t j = 0; j < n; j++)
                        if (streq(server[j].name, m->name) && server[j].state == SERVER_READY) {
                                mem_report(a, m, PHASE_LOADED, NULL);
                                break;
                        }
        }
        pthread_mutex_unlock(&a->lock);
}

static void mem_forget(struct agent *a, const char *name)
{
        size_t pos;

        pthread_mutex_lock(&a->lock);
        if (mem_find(a, name, &pos)) {
                (void)served_set(&a->served, name, false);
                memory_release(&a->mem[pos]);
                memmove(&a->mem[pos], &a->mem[pos + 1], (a->n_mem - pos - 1) * sizeof(a->mem[0]));
                a->n_mem--;
                atomic_fetch_add(&a->status_generation, 1);
        }
        pthread_mutex_unlock(&a->lock);
}

/* Caller holds the lock. Marks what is in flight for @name (the planner's input). */
static void mem_busy(struct agent *a, struct model_memory *m, enum model_busy busy, const char *uri)
{
        (void)a;
        m->busy = busy;
        (void)set_str(&m->busy_uri, busy == BUSY_NONE ? NULL : uri);
}

/* ---- disk ---- */

/* ---- jobs: downloads and model-server calls, each on its own worker ---- */

static void download_one(struct agent *a, struct job *j)
{
        AUTOFREE char *tmp = NULL, *final = NULL;
        int r;

        if (asprintf(&tmp, "%s/" DISK_TMP_PREFIX "%s-XXXXXX", a->model_dir, j->name) < 0 ||
            asprintf(&final, "%s/%s", a->model_dir, j->name) < 0) {
                j->r = -ENOMEM;
                snprintf(j->reason, sizeof(j->reason), "out of memory");
                return;
        }
        if (!mkdtemp(tmp)) {
                j->r = negative_errno();
                snprintf(j->reason, sizeof(j->reason), "cannot create %s: %s", tmp,
                         errno_to_string(-j->r));
                return;
        }
        (void)chmod(tmp, 0755);
        r = a->fetch.ops->fetch(a->fetch.userdata, j->uri, tmp, &j->cancel, j->reason,
                                sizeof(j->reason));
        if (r >= 0) {
                r = disk_write_record(tmp, j->uri);
                if (r < 0)
                        snprintf(j->reason, sizeof(j->reason), "cannot record the source in %s: %s",
                                 tmp, errno_to_string(-r));
        }
        if (r >= 0) {
                bool exchanged = false;

                /* swap in atomically: a reader sees the old copy or the new, never a mix; under
                 * the lock, so that a download cancelled by the planner is never swapped in */
                pthread_mutex_lock(&a->lock);
                if (atomic_load(&j->cancel))
                        r = -ECANCELED;
                else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) == 0)
                        exchanged = true;
                else if (errno != ENOENT || rename(tmp, final) < 0)
                        r = negative_errno();
                pthread_mutex_unlock(&a->lock);
                if (exchanged)
                        (void)remove_tree(tmp, false); /* now the old copy */
                if (r < 0)
                        snprintf(j->reason, sizeof(j->reason), "cannot move %s into place: %s", tmp,
                                 errno_to_string(-r));
        }
        if (r < 0)
                (void)remove_tree(tmp, false);
        j->r = r;
}

/* One load or unload call on the model server through @conn (opened on first use). */
static void run_call(struct agent *a, void **conn, struct job *j)
{
        int r;

        if (!*conn) {
                r = a->repo.ops->open(a->repo.userdata, (long)a->o.load_timeout_sec, conn);
                if (r < 0) {
                        *conn = NULL;
                        j->r = r;
                        (void)snprintf(j->reason, sizeof(j->reason),
                                       "cannot create a model server client: %s",
                                       errno_to_string(-r));
                        return;
                }
        }
        if (j->kind == JOB_LOAD)
                j->r = a->repo.ops->load(*conn, j->name, j->reason, sizeof(j->reason));
        else
                j->r = a->repo.ops->unload(*conn, j->name, j->reason, sizeof(j->reason));
}

/* Caller holds the lock. The oldest queued job this worker takes, or NULL. */
static struct job *job_next(struct agent *a, bool calls)
{
        for (struct job *j = a->jobs; j; j = j->next)
                if (j->state == JOB_QUEUED && (j->kind != JOB_DOWNLOAD) == calls)
                        return j;
        return NULL;
}

struct worker_arg {
        struct agent *a;
        bool calls; /* load/unload calls, else downloads */
};

static void *worker_thread(void *userdata)
{
        struct worker_arg *w = userdata;
        struct agent *a = w->a;
        bool calls = w->calls;
        void *conn = NULL;
        struct job *j = NULL;

        free(w);
        pthread_mutex_lock(&a->lock);
        for (;;) {
                while (!a->stop && !(j = job_next(a, calls)))
                        pthread_cond_wait(&a->work_cond, &a->lock);
                if (a->stop)
                        break;
                j->state = JOB_RUNNING;
                if (calls)
                        a->running_calls++;
                pthread_mutex_unlock(&a->lock);
                if (calls)
                        run_call(a, &conn, j);
                else
                        download_one(a, j);
                pthread_mutex_lock(&a->lock);
                j->state = JOB_DONE;
                if (calls)
                        a->running_calls--;
                pthread_cond_broadcast(&a->cond);
        }
        a->workers_alive--;
        pthread_cond_broadcast(&a->cond);
        pthread_mutex_unlock(&a->lock);
        if (conn)
                a->repo.ops->close(conn);
        if (!calls && a->fetch.ops->worker_end)
                a->fetch.ops->worker_end(a->fetch.userdata);
        return NULL;
}

/* Starts @n workers of one kind. Returns how many started. */
static size_t workers_start(struct agent *a, bool calls, size_t n)
{
        size_t started = 0;

        for (size_t i = 0; i < n; i++) {
                struct worker_arg *w = malloc(sizeof(*w));

                if (!w)
                        break;
                *w = (struct worker_arg){ .a = a, .calls = calls };
                pthread_mutex_lock(&a->lock);
                a->workers_alive++;
                pthread_mutex_unlock(&a->lock);
                if (pthread_create(&a->workers[a->n_workers], NULL, worker_thread, w) != 0) {
                        free(w);
                        pthread_mutex_lock(&a->lock);
                        a->workers_alive--;
                        pthread_mutex_unlock(&a->lock);
                        break;
                }
                a->n_workers++;
                started++;
        }
        return started;
}

/* Queues a job for @ac's model and marks it in flight. Returns 1 when queued, 0 when the agent
 * is stopping, -ENOMEM. */
static int job_dispatch(struct agent *a, const struct action *ac, enum job_kind kind)
{
        static const enum model_busy busy[] = {
                [JOB_DOWNLOAD] = BUSY_DOWNLOAD,
                [JOB_LOAD] = BUSY_LOAD,
                [JOB_UNLOAD] = BUSY_UNLOAD,
        };
        struct job *j = calloc(1, sizeof(*j));
        struct model_memory *m;
        bool retry;

        if (!j)
                return -ENOMEM;
        *j = (struct job){ .kind = kind, .name = strdup(ac->name) };
        if (!j->name || (ac->uri && !(j->uri = strdup(ac->uri)))) {
                job_free(j);
                return -ENOMEM;
        }
        pthread_mutex_lock(&a->lock);
        m = a->stopping ? NULL : mem_get(a, ac->name);
        if (!m) {
                bool stopping = a->stopping;
                pthread_mutex_unlock(&a->lock);
                job_free(j);
                return stopping ? 0 : -ENOMEM;
        }
        /* a new attempt after a failure of the same URI keeps the failure's state and reason:
         * a retry is not a change of state (it is counted) */
        retry = kind != JOB_UNLOAD && m->failed_uri && ac->uri && streq(m->failed_uri, ac->uri) &&
                m->failed_load == (kind == JOB_LOAD);
        j->retry = retry;
        if (retry)
                a->counters.retries++;
        else if (kind == JOB_DOWNLOAD)
                mem_report(a, m, PHASE_DOWNLOADING, NULL);
        else if (kind == JOB_LOAD)
                mem_report(a, m, PHASE_LOADING, NULL);
        else
                mem_report(a, m, PHASE_UNLOADING, NULL);
        if (kind == JOB_UNLOAD) {
                /* no longer loaded from anything, nor failing (as mem_update() does) */
                (void)set_str(&m->failed_uri, NULL);
                m->failures = 0;
                m->retry_at = 0;
                if (set_str(&m->loaded_uri, NULL))
                        atomic_fetch_add(&a->status_generation, 1);
        }
        mem_busy(a, m, busy[kind], ac->uri);
        /* append: workers take the oldest first */
        struct job **tail = &a->jobs;
        while (*tail)
                tail = &(*tail)->next;
        *tail = j;
        pthread_cond_broadcast(&a->work_cond);
        pthread_mutex_unlock(&a->lock);
        return 1;
}

/* The planner no longer wants @name's download: it is dropped if still queued, else its result
 * is discarded when it returns (and it is never swapped in: download_one() checks under the
 * lock). */
static void job_cancel(struct agent *a, const char *name)
{
        struct model_memory *m;

        pthread_mutex_lock(&a->lock);
        for (struct job *j = a->jobs; j; j = j->next) {
                if (j->kind != JOB_DOWNLOAD || j->state == JOB_DONE || atomic_load(&j->cancel) ||
                    !streq(j->name, name))
                        continue;
                atomic_store(&j->cancel, true);
                if (j->state == JOB_QUEUED) {
                        j->state = JOB_DONE;
                        j->r = -ECANCELED;
                }
                a->counters.downloads_cancelled++;
                log_info("agent: model %s: download of %s cancelled (no longer wanted)", name,
                         j->uri);
        }
        m = mem_find(a, name, NULL);
        if (m && m->busy == BUSY_DOWNLOAD)
                mem_busy(a, m, BUSY_NONE, NULL);
        pthread_mutex_unlock(&a->lock);
}

/* Records a finished job's outcome (the planner's thread). A cancelled one changes nothing. */
static void job_complete(struct agent *a, struct job *j)
{
        struct model_memory *m;

        index_apply(a, j);
        pthread_mutex_lock(&a->lock);
        m = mem_find(a, j->name, NULL);
        if (!atomic_load(&j->cancel) && m)
                mem_busy(a, m, BUSY_NONE, NULL);
        pthread_mutex_unlock(&a->lock);
        if (atomic_load(&j->cancel))
                return;
        switch (j->kind) {
        case JOB_DOWNLOAD:
                if (j->r < 0) {
                        log_error("agent: model %s: download failed: %s", j->name, j->reason);
                        mem_update(a, j->name, j->uri, PHASE_FAILED_TO_DOWNLOAD, NULL, j->reason);
                } else {
                        log_info("agent: model %s downloaded", j->name);
                        mem_update(a, j->name, j->uri, PHASE_LOADING, NULL, NULL);
                        mem_fresh_copy(a, j->name, true);
                }
                break;
        case JOB_LOAD:
                if (j->r < 0) {
                        log_error("agent: model %s: load failed: %s", j->name, j->reason);
                        mem_update(a, j->name, j->uri, PHASE_FAILED_TO_LOAD, NULL, j->reason);
                } else {
                        log_info("agent: model %s loaded (%s)", j->name, j->uri);
                        mem_update(a, j->name, j->uri, PHASE_LOADED, j->uri, NULL);
                }
                break;
        case JOB_UNLOAD:
                if (j->r < 0 && j->r != -ENOENT)
                        log_warn("agent: model %s: unload failed: %s", j->name, j->reason);
                else
                        log_info("agent: model %s unloaded", j->name);
                break;
        }
        pthread_mutex_lock(&a->lock);
        if (j->kind == JOB_DOWNLOAD)
                (*(j->r < 0 ? &a->counters.downloads_failed : &a->counters.downloads_ok))++;
        else if (j->kind == JOB_LOAD)
                (*(j->r < 0 ? &a->counters.loads_failed : &a->counters.loads_ok))++;
        else
                a->counters.unloads++;
        pthread_mutex_unlock(&a->lock);
}

/* Caller holds the lock. Unlinks the finished jobs into a list of their own. */
static struct job *jobs_take_done(struct agent *a)
{
        struct job *done = NULL, **tail = &done;

        for (struct job **p = &a->jobs; *p;) {
                struct job *j = *p;
                if (j->state != JOB_DONE) {
                        p = &j->next;
                        continue;
                }
                *p = j->next;
                j->next = NULL;
                *tail = j;
                tail = &j->next;
        }
        return done;
}

static bool jobs_any_done(const struct agent *a)
{
        for (const struct job *j = a->jobs; j; j = j->next)
                if (j->state == JOB_DONE)
                        return true;
        return false;
}

/* ---- one pass ---- */

/* Under a->lock: the models.json to act on (borrowed), NULL until known (agent/source.h). */
static const char *effective_desired(struct agent *a)
{
        return source_effective(&a->sources);
}

/* The desired models from @models_json (its refused entries into a->refused), or the last good
 * set when the document is rejected whole: one bad write must not unload everything. Fails only
 * for -ENOMEM. */
static int pass_desired(struct agent *a, const char *models_json, struct model_entries *ret)
{
        CLEANUP(model_refusals_release) struct model_refusals refused = { 0 };
        char err[REASON_MAX] = "";
        bool changed;
        int r;

        model_entries_init(ret);
        /* most passes follow a download or a call, not a new models.json: the text is the same,
         * and so is what it decodes to (its refusals included) */
        if (a->last_json && models_json && streq(a->last_json, models_json)) {
                *ret = a->last_desired;
                model_entries_init(&a->last_desired);
                return 0;
        }
        free(a->last_json);
        a->last_json = NULL;
        r = agent_desired_parse(models_json, &a->last_desired, ret, &refused, err, sizeof(err));
        if (r >= 0 && models_json)
                a->last_json = strdup(models_json); /* NULL on OOM: parsed again next time */
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_error("agent: models.json rejected, keeping the previous %zu models: %s",
                          a->last_desired.n, err);
                *ret = a->last_desired;
                model_entries_init(&a->last_desired);
                return 0;
        }
        pthread_mutex_lock(&a->lock);
        changed = refused.n != a->refused.n;
        for (size_t i = 0; !changed && i < refused.n; i++)
                changed = !json_equal(refused.items[i].name, a->refused.items[i].name) ||
                          !streq(refused.items[i].reason, a->refused.items[i].reason);
        if (changed) {
                for (size_t i = 0; i < refused.n; i++)
                        log_error("agent: models.json entry %s refused: %s",
                                  json_string_value(refused.items[i].name),
                                  refused.items[i].reason);
                a->counters.refused += refused.n;
                model_refusals_release(&a->refused);
                a->refused = refused;
                refused = (struct model_refusals){ 0 };
                for (size_t i = 0; i < a->n_mem; i++)
                        served_sync(a, &a->mem[i]);
                atomic_fetch_add(&a->status_generation, 1);
        }
        pthread_mutex_unlock(&a->lock);
        return 0;
}

/* What one pass sees: the model directory and what the model server has. */
struct observed {
        const struct disk_model *disk; /* borrowed: the agent's listing */
        size_t n_disk;
        const struct repo_index *ix; /* borrowed: the agent's kept index */
        struct server_model *server; /* owned array of ix->n; names borrowed from ix */
        bool server_known;
};

static void observed_release(struct observed *o)
{
        free(o->server);
}

/*
 * The model server's index, read again only when it may be out of date: INDEX_REFRESH_USEC after
 * the last read, or at once when a call of this agent failed or was cancelled, the last read
 * failed, or the index could not be kept. In between, the outcome of each load and unload call
 * is applied to the kept copy (job_complete()), so a create's passes (models.json changed, then
 * the download done) ask the server nothing: at 1,000 models an index is a 1,000-entry answer
 * per pass. A server that restarts and loses its models is seen at the next read, as it was at
 * the next pass before (the planner's resync comes every AGENT_RESYNC_USEC anyway).
 */
#define INDEX_REFRESH_USEC (5 * USEC_PER_SEC)

static int index_view(struct agent *a, char *err, size_t len)
{
        struct repo_index fresh = { 0 };
        usec_t now = agent_now(a);
        int r;

        if (a->ix_fresh && now - a->ix_read_at < INDEX_REFRESH_USEC)
                return 0;
        r = a->repo.ops->index(a->conn, &fresh, err, len);
        pthread_mutex_lock(&a->lock);
        a->counters.indexes++;
        pthread_mutex_unlock(&a->lock);
        repo_index_release(&a->ix);
        a->ix_fresh = r >= 0;
        if (r < 0)
                return r;
        a->ix = fresh;
        a->ix_read_at = now;
        return 0;
}

/* Planner's thread. What a finished load or unload call did to the server, on the kept index. */
static void index_apply(struct agent *a, const struct job *j)
{
        enum server_state state;

        if (j->kind == JOB_DOWNLOAD)
                return;
        if (atomic_load(&j->cancel) || (j->r < 0 && !(j->kind == JOB_UNLOAD && j->r == -ENOENT))) {
                a->ix_fresh = false; /* what the server did is not known: ask it */
                return;
        }
        /* an unloaded model stays in the index, UNAVAILABLE (MLServer, Triton) */
        state = j->kind == JOB_LOAD ? SERVER_READY : SERVER_UNAVAILABLE;
        if (repo_index_set(&a->ix, j->name, state) < 0)
                a->ix_fresh = false;
}

static int observe(struct agent *a, struct observed *o)
{
        char err[REASON_MAX] = "";
        int r;

        r = disk_list_view(a->disk, &o->disk, &o->n_disk);
        if (r < 0)
                return log_error_errno(r, "agent: cannot list %s", a->model_dir);
        r = index_view(a, err, sizeof(err));
        o->ix = &a->ix;
        o->server_known = r >= 0;
        if (r < 0)
                log_warn("agent: model server index unavailable: %s", err);
        o->server = calloc(o->ix->n + 1, sizeof(*o->server));
        if (!o->server)
                return -ENOMEM;
        for (size_t i = 0; i < o->ix->n; i++)
                o->server[i] = (struct server_model){ .name = o->ix->items[i].name,
                                                      .state = o->ix->items[i].state };
        if (o->server_known)
                mem_server_back(a, o->server, o->ix->n);
        else
                mem_server_lost(a, err);
        return 0;
}

/* The plan's actions, copied: the plan borrows from the memory array, which the actions change. */
struct owned_actions {
        struct action *items; /* names and uris owned */
        size_t n;
};

static void owned_actions_release(struct owned_actions *oa)
{
        for (size_t i = 0; i < oa->n; i++) {
                free((char *)oa->items[i].name);
                free((char *)oa->items[i].uri);
        }
        free(oa->items);
        *oa = (struct owned_actions){ 0 };
}

/* Moves @from's actions to @to (empty) and leaves @from empty: the ownership transfer spelt out
 * member by member, so that clang-tidy's analyzer, which does not model CLEANUP(), sees which
 * variable owns the array afterwards. */
static void owned_actions_move(struct owned_actions *to, struct owned_actions *from)
{
        to->items = TAKE_PTR(from->items);
        to->n = from->n;
        from->n = 0;
}

static int owned_actions_copy(const struct plan_result *plan, struct owned_actions *ret)
{
        CLEANUP(owned_actions_release) struct owned_actions oa = { 0 };

        oa.items = calloc(plan->n_actions + 1, sizeof(*oa.items));
        if (!oa.items)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_actions; i++) {
                const struct action *src = &plan->actions[i];
                AUTOFREE char *name = strdup(src->name);
                AUTOFREE char *uri = src->uri ? strdup(src->uri) : NULL;

                if (!name || (src->uri && !uri))
                        return -ENOMEM;
                oa.items[oa.n++] = (struct action){ .kind = src->kind,
                                                    .name = TAKE_PTR(name),
                                                    .uri = TAKE_PTR(uri) };
        }
        owned_actions_move(ret, &oa);
        return 0;
}

static int remove_model(struct agent *a, const char *name)
{
        AUTOFREE char *path = NULL;
        int r;

        if (asprintf(&path, "%s/%s", a->model_dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = remove_tree(path, false);
        if (r < 0)
                log_error_errno(r, "agent: cannot remove %s", path);
        else
                log_info("agent: model %s removed from disk", name);
        return 0;
}

/* Starts or does one action. Returns 1 when it was done here and calls for another pass at once,
 * 0 when it was started (its end wakes the planner) or is bookkeeping, or -ENOMEM. */
static int act(struct agent *a, const struct action *ac)
{
        int r;

        switch (ac->kind) {
        case ACTION_CANCEL:
                job_cancel(a, ac->name);
                return 0;
        case ACTION_DOWNLOAD:
                log_info("agent: downloading model %s from %s", ac->name, ac->uri);
                r = job_dispatch(a, ac, JOB_DOWNLOAD);
                return r < 0 ? r : 0;
        case ACTION_LOAD:
                r = job_dispatch(a, ac, JOB_LOAD);
                return r < 0 ? r : 0;
        case ACTION_UNLOAD:
                r = job_dispatch(a, ac, JOB_UNLOAD);
                return r < 0 ? r : 0;
        case ACTION_ADOPT:
                log_info("agent: model %s already loaded from %s", ac->name, ac->uri);
                mem_update(a, ac->name, ac->uri, PHASE_LOADED, ac->uri, NULL);
                return 1;
        case ACTION_REMOVE:
                r = remove_model(a, ac->name);
                return r < 0 ? r : 1;
        case ACTION_FORGET:
                mem_forget(a, ac->name);
                return 0; /* bookkeeping only: no further pass needed */
        }
        return 0;
}

/* Observes, plans against @desired and starts the plan. Returns how many actions were done here
 * (>= 0: another pass follows at once when > 0) and the next retry time. */
static int pass_act(struct agent *a, const struct model_entries *desired, usec_t *ret_wake)
{
        CLEANUP(observed_release) struct observed o = { 0 };
        CLEANUP(plan_result_release) struct plan_result plan = { 0 };
        CLEANUP(owned_actions_release) struct owned_actions acts = { 0 };
        int r, done = 0;

        r = observe(a, &o);
        if (r < 0)
                return r;
        pthread_mutex_lock(&a->lock); /* the memory is read while workers may report */
        r = agent_plan(
                &(struct plan_input){
                        .desired = desired,
                        .disk = o.disk,
                        .n_disk = o.n_disk,
                        .server = o.server,
                        .n_server = o.ix->n,
                        .server_known = o.server_known,
                        .memory = a->mem,
                        .n_memory = a->n_mem,
                        .now = agent_now(a),
                },
                &plan);
        if (r >= 0)
                r = owned_actions_copy(&plan, &acts);
        pthread_mutex_unlock(&a->lock);
        if (r < 0)
                return r;
        *ret_wake = plan.next_wake;
        for (size_t i = 0; i < acts.n; i++) {
                r = act(a, &acts.items[i]);
                if (r < 0)
                        return r;
                done += r;
        }
        return done;
}

/* Returns how many actions it did itself (>= 0) and the next retry time. */
static int pass(struct agent *a, const char *models_json, usec_t *ret_wake)
{
        struct model_entries desired;
        int r;

        r = pass_desired(a, models_json, &desired);
        if (r < 0)
                return r;
        r = pass_act(a, &desired, ret_wake);
        model_entries_release(&a->last_desired);
        a->last_desired = desired;
        return r;
}

/* Caller holds the lock. Whether the planner's thread has something to do. */
static bool agent_due(struct agent *a, unsigned long seen, bool again)
{
        return a->stop || a->kicked || jobs_any_done(a) ||
               (!a->stopping && effective_desired(a) && (again || seen != a->generation));
}

/* Waits, under the lock, until something is due or @wake (the agent's clock) has passed. */
static void agent_wait(struct agent *a, unsigned long seen, bool again, usec_t *wake)
{
        while (!agent_due(a, seen, again)) {
                usec_t now = agent_now(a);
                bool timeout = false;

                if (*wake == USEC_INFINITY) {
                        pthread_cond_wait(&a->cond, &a->lock);
                        continue;
                }
                cond_wait_until(&a->cond, &a->lock,
                                now_monotonic() + (*wake > now ? *wake - now : 0), &timeout);
                if (timeout) {
                        *wake = USEC_INFINITY;
                        if (effective_desired(a))
                                return;
                }
        }
}

static void *agent_thread(void *userdata)
{
        struct agent *a = userdata;
        unsigned long seen = 0;
        usec_t wake = USEC_INFINITY;
        bool again = false;

        for (;;) {
                AUTOFREE char *json = NULL;
                struct job *done;
                bool have;
                int r;

                pthread_mutex_lock(&a->lock);
                agent_wait(a, seen, again, &wake);
                if (a->stop) {
                        pthread_mutex_unlock(&a->lock);
                        break;
                }
                if (a->kicked)
                        a->ix_fresh = false; /* a kick observes everything again */
                a->kicked = false;
                done = jobs_take_done(a);
                seen = a->generation;
                /* stopping: the outcomes of the calls in flight are still recorded, no pass */
                have = !a->stopping && effective_desired(a);
                json = have ? strdup(effective_desired(a)) : NULL;
                pthread_mutex_unlock(&a->lock);
                while (done) {
                        struct job *j = done;
                        done = j->next;
                        job_complete(a, j);
                        job_free(j);
                }
                if (!have)
                        continue;
                if (!json) {
                        log_error("agent: out of memory");
                        again = true;
                        continue;
                }
                wake = USEC_INFINITY;
                r = pass(a, json, &wake);
                /* a periodic resync notices a model server that restarted and lost its models */
                wake = MIN(wake, agent_now(a) + AGENT_RESYNC_USEC);
                atomic_fetch_add(&a->passes, 1);
                if (r < 0) {
                        log_error_errno(r, "agent: reconcile pass failed");
                        wake = agent_now(a) + a->o.retry_base;
                        again = false;
                } else {
                        again = r > 0;
                }
        }
        return NULL;
}

int agent_start(struct agent *a)
{
        size_t nw = a->o.download_workers;
        int r;

        a->workers = calloc(2 * nw, sizeof(*a->workers));
        if (!a->workers)
                return -ENOMEM;
        if (workers_start(a, false, nw) == 0 || workers_start(a, true, nw) == 0) {
                r = -EAGAIN;
                goto fail;
        }
        r = -pthread_create(&a->thread, NULL, agent_thread, a);
        if (r < 0)
                goto fail;
        a->started = true;
        return 0;
fail:
        pthread_mutex_lock(&a->lock);
        a->stop = true;
        pthread_cond_broadcast(&a->work_cond);
        pthread_mutex_unlock(&a->lock);
        for (size_t i = 0; i < a->n_workers; i++)
                pthread_join(a->workers[i], NULL);
        a->n_workers = 0;
        return r;
}
