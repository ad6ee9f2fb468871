/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/agent.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/plan.h"
#include "agent/repo.h"
#include "agent/uri.h"
#include "serving/modelconfig.h"
#include "util/log.h"

#define SOURCE_RECORD     ".modelplane-source"
#define TMP_PREFIX        ".mp-tmp-"
#define REASON_MAX        1024
#define AGENT_RESYNC_USEC (30 * USEC_PER_SEC)

struct agent {
        struct agent_options o;
        char *model_dir;
        char *server_url;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        /* under lock */
        struct source_state sources; /* the views of models.json and which one is acted on */
        unsigned long generation;
        bool stop;
        struct model_memory *mem; /* sorted by name; mutated by the reconciler thread only */
        size_t n_mem;
        struct model_entries last_desired; /* reconciler thread only */
        atomic_ulong passes;
        atomic_ulong status_generation; /* bumped on every per-model state change */

        pthread_t thread;
        bool started;
        struct repo_client *repo;
};

static void memory_release(struct model_memory *m)
{
        free(m->name);
        free(m->loaded_uri);
        free(m->failed_uri);
        free(m->reason);
}

int agent_new(const struct agent_options *opts, struct agent **ret)
{
        struct agent *a = calloc(1, sizeof(*a));
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
        a->model_dir = strdup(opts->model_dir);
        a->server_url = strdup(opts->server_url);
        pthread_mutex_init(&a->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&a->cond, &ca);
        pthread_condattr_destroy(&ca);
        a->o.model_dir = a->model_dir;
        a->o.server_url = a->server_url;
        if (!a->model_dir || !a->server_url) {
                agent_free(a);
                return -ENOMEM;
        }
        r = repo_client_new(a->server_url, a->o.load_timeout_sec, &a->repo);
        if (r < 0) {
                agent_free(a);
                return r;
        }
        *ret = a;
        return 0;
}

struct agent *agent_free(struct agent *a)
{
        if (!a)
                return NULL;
        if (a->started) {
                pthread_mutex_lock(&a->lock);
                a->stop = true;
                pthread_cond_broadcast(&a->cond);
                pthread_mutex_unlock(&a->lock);
                pthread_join(a->thread, NULL);
        }
        for (size_t i = 0; i < a->n_mem; i++)
                memory_release(&a->mem[i]);
        free(a->mem);
        source_state_release(&a->sources);
        model_entries_release(&a->last_desired);
        repo_client_free(a->repo);
        pthread_cond_destroy(&a->cond);
        pthread_mutex_destroy(&a->lock);
        free(a->model_dir);
        free(a->server_url);
        free(a);
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

unsigned long agent_status_generation(struct agent *a)
{
        return atomic_load(&a->status_generation);
}

unsigned long agent_passes(struct agent *a)
{
        return atomic_load(&a->passes);
}

json_t *agent_status(struct agent *a)
{
        json_t *arr = json_array();

        if (!arr)
                return NULL;
        pthread_mutex_lock(&a->lock);
        for (size_t i = 0; i < a->n_mem; i++) {
                const struct model_memory *m = &a->mem[i];
                json_t *o = json_pack("{s:s, s:s}", "name", m->name, "state",
                                      model_phase_to_string(m->phase));
                if (!o)
                        continue;
                if (m->loaded_uri)
                        json_object_set_new(o, "storageUri", json_string(m->loaded_uri));
                if (m->reason &&
                    (m->phase == PHASE_FAILED_TO_LOAD || m->phase == PHASE_FAILED_TO_DOWNLOAD))
                        json_object_set_new(o, "reason", json_string(m->reason));
                json_array_append_new(arr, o);
        }
        pthread_mutex_unlock(&a->lock);
        return arr;
}

/* ---- memory (reconciler thread; writes under lock for agent_status()) ---- */

static struct model_memory *mem_find(struct agent *a, const char *name, size_t *ret_pos)
{
        size_t lo = 0, hi = a->n_mem;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(a->mem[mid].name, name);
                if (c == 0) {
                        if (ret_pos)
                                *ret_pos = mid;
                        return &a->mem[mid];
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (ret_pos)
                *ret_pos = lo;
        return NULL;
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

static void set_str(char **p, const char *v)
{
        char *c = v ? strdup(v) : NULL;
        free(*p);
        *p = c;
}

/* Records a success or a failure of @name at @uri. */
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
        m->phase = phase;
        if (phase == PHASE_FAILED_TO_DOWNLOAD || phase == PHASE_FAILED_TO_LOAD) {
                if (!(m->failed_uri && uri && streq(m->failed_uri, uri)))
                        m->failures = 0;
                m->failures++;
                set_str(&m->failed_uri, uri);
                set_str(&m->reason, reason);
                m->failed_load = phase == PHASE_FAILED_TO_LOAD;
                m->retry_at = now_monotonic() + backoff_delay(m->failures, a->o.retry_base,
                                                              a->o.retry_max, fetch_jitter01());
        } else if (phase == PHASE_LOADED || phase == PHASE_PENDING || phase == PHASE_UNLOADING) {
                set_str(&m->failed_uri, NULL);
                set_str(&m->reason, NULL);
                m->failures = 0;
                m->retry_at = 0;
        }
        atomic_fetch_add(&a->status_generation, 1);
        if (phase == PHASE_LOADED)
                set_str(&m->loaded_uri, loaded_uri);
        if (phase == PHASE_UNLOADING)
                set_str(&m->loaded_uri, NULL);
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
                m->phase = PHASE_FAILED_TO_LOAD;
                set_str(&m->reason, reason);
                atomic_fetch_add(&a->status_generation, 1);
        }
        pthread_mutex_unlock(&a->lock);
}

static void mem_server_back(struct agent *a, const struct server_model *server, size_t n)
{
        pthread_mutex_lock(&a->lock);
        for (size_t i = 0; i < a->n_mem; i++) {
                struct model_memory *m = &a->mem[i];
                if (m->phase != PHASE_FAILED_TO_LOAD || m->failed_uri || !m->loaded_uri)
                        continue;
                for (size_t j = 0; j < n; j++)
                        if (streq(server[j].name, m->name) && server[j].state == SERVER_READY) {
                                m->phase = PHASE_LOADED;
                                set_str(&m->reason, NULL);
                                atomic_fetch_add(&a->status_generation, 1);
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
                memory_release(&a->mem[pos]);
                memmove(&a->mem[pos], &a->mem[pos + 1], (a->n_mem - pos - 1) * sizeof(a->mem[0]));
                a->n_mem--;
                atomic_fetch_add(&a->status_generation, 1);
        }
        pthread_mutex_unlock(&a->lock);
}

/* ---- disk ---- */

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
                return -1;
        return 0;
}

static int rm_rf(const char *path)
{
        /* glibc's nftw() is thread-safe without FTW_CHDIR (it never changes the cwd) */
        if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0 && /* NOLINT(concurrency-mt-unsafe) */
            errno != ENOENT)
                return negative_errno();
        return 0;
}

static char *read_record(const char *dir, const char *name)
{
        AUTOFREE char *path = NULL;
        char buf[8192];
        ssize_t n;
        AUTOCLOSE int fd = -EBADF;

        if (asprintf(&path, "%s/%s/" SOURCE_RECORD, dir, name) < 0)
                return NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return strdup(buf);
}

struct disk_scan {
        struct disk_model *items;
        char **owned; /* names and uris to free */
        size_t n, n_owned;
};

static void disk_scan_release(struct disk_scan *d)
{
        for (size_t i = 0; i < d->n_owned; i++)
                free(d->owned[i]);
        free(d->owned);
        free(d->items);
        *d = (struct disk_scan){ 0 };
}

static int cmp_disk(const void *x, const void *y)
{
        return strcmp(((const struct disk_model *)x)->name, ((const struct disk_model *)y)->name);
}

/* Lists model directories; removes crash leftovers (no download runs during a scan). */
static int disk_scan(struct agent *a, struct disk_scan *ret)
{
        struct disk_scan d = { 0 };
        struct dirent *de;
        DIR *dir = opendir(a->model_dir);

        if (!dir)
                return negative_errno();
        /* readdir() is thread-safe on a stream of one thread (glibc; readdir_r is deprecated) */
        while ((de = readdir(dir))) { /* NOLINT(concurrency-mt-unsafe) */
                AUTOFREE char *path = NULL;
                struct stat st;
                char *name, *uri;

                if (strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
                        if (asprintf(&path, "%s/%s", a->model_dir, de->d_name) >= 0) {
                                log_info("agent: removing leftover %s", path);
                                (void)rm_rf(path);
                        }
                        continue;
                }
                if (!model_name_is_safe(de->d_name))
                        continue;
                if (asprintf(&path, "%s/%s", a->model_dir, de->d_name) < 0)
                        goto oom;
                if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                if (!(d.items = reallocarray(d.items, d.n + 1, sizeof(*d.items))) ||
                    !(d.owned = reallocarray(d.owned, d.n_owned + 2, sizeof(*d.owned))))
                        goto oom;
                name = strdup(de->d_name);
                if (!name)
                        goto oom;
                uri = read_record(a->model_dir, de->d_name);
                d.owned[d.n_owned++] = name;
                if (uri)
                        d.owned[d.n_owned++] = uri;
                d.items[d.n++] = (struct disk_model){ .name = name, .source_uri = uri };
        }
        closedir(dir);
        if (d.n > 1)
                qsort(d.items, d.n, sizeof(*d.items), cmp_disk);
        *ret = d;
        return 0;
oom:
        closedir(dir);
        disk_scan_release(&d);
        return -ENOMEM;
}

/* ---- downloads ---- */

struct job {
        const char *name;
        const char *uri;
        int r;
        char reason[REASON_MAX];
};

struct pool {
        struct agent *a;
        struct job *jobs;
        size_t n;
        atomic_size_t next;
};

static int write_record(const char *dir, const char *uri)
{
        AUTOFREE char *path = NULL;
        AUTOCLOSE int fd = -EBADF;
        size_t len = strlen(uri);

        if (asprintf(&path, "%s/" SOURCE_RECORD, dir) < 0)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();
        /* a short write sets no errno: ENOSPC is what a full volume gives */
        errno = 0;
        if (write(fd, uri, len) != (ssize_t)len || write(fd, "\n", 1) != 1)
                return errno ? negative_errno() : -ENOSPC;
        if (fsync(fd) < 0 || close(TAKE_FD(fd)) < 0)
                return negative_errno();
        return 0;
}

static void download_one(struct agent *a, struct job *j)
{
        AUTOFREE char *tmp = NULL, *final = NULL;
        int r;

        if (asprintf(&tmp, "%s/" TMP_PREFIX "%s-XXXXXX", a->model_dir, j->name) < 0 ||
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
        r = fetch_model(a->o.fetch, j->uri, tmp, j->reason, sizeof(j->reason));
        if (r >= 0) {
                r = write_record(tmp, j->uri);
                if (r < 0)
                        snprintf(j->reason, sizeof(j->reason), "cannot record the source in %s: %s",
                                 tmp, errno_to_string(-r));
        }
        if (r >= 0) {
                /* swap in atomically: a reader sees the old copy or the new, never a mix */
                if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) == 0) {
                        (void)rm_rf(tmp); /* now the old copy */
                } else if (errno == ENOENT) {
                        if (rename(tmp, final) < 0)
                                r = negative_errno();
                } else {
                        r = negative_errno();
                }
                if (r < 0)
                        snprintf(j->reason, sizeof(j->reason), "cannot move %s into place: %s", tmp,
                                 errno_to_string(-r));
        }
        if (r < 0)
                (void)rm_rf(tmp);
        j->r = r;
}

static void *pool_worker(void *userdata)
{
        struct pool *p = userdata;
        size_t i;

        while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
                download_one(p->a, &p->jobs[i]);
        return NULL;
}

static void run_downloads(struct agent *a, struct job *jobs, size_t n)
{
        struct pool p = { .a = a, .jobs = jobs, .n = n };
        size_t nw = MIN((size_t)a->o.download_workers, n);
        pthread_t *t = calloc(nw, sizeof(*t));
        size_t started = 0;

        for (size_t i = 0; t && i < nw; i++)
                if (pthread_create(&t[i], NULL, pool_worker, &p) == 0)
                        started++;
        if (started == 0)
                pool_worker(&p);
        for (size_t i = 0; i < started; i++)
                pthread_join(t[i], NULL);
        free(t);
}

/* ---- one pass ---- */

struct owned_action {
        enum action_kind kind;
        char *name; /* owned */
        char *uri;  /* owned; may be NULL */
};

/* Under a->lock: the models.json to act on (borrowed), NULL until known (agent/source.h). */
static const char *effective_desired(struct agent *a)
{
        return source_effective(&a->sources);
}

/* One load or unload call on the model server. */
static void server_call(struct agent *a, struct repo_client *repo, const struct owned_action *ac)
{
        char err[REASON_MAX];
        int r;

        if (ac->kind == ACTION_LOAD) {
                mem_update(a, ac->name, ac->uri, PHASE_LOADING, NULL, NULL);
                r = repo_load(repo, ac->name, err, sizeof(err));
                if (r < 0) {
                        log_error("agent: model %s: load failed: %s", ac->name, err);
                        mem_update(a, ac->name, ac->uri, PHASE_FAILED_TO_LOAD, NULL, err);
                } else {
                        log_info("agent: model %s loaded (%s)", ac->name, ac->uri);
                        mem_update(a, ac->name, ac->uri, PHASE_LOADED, ac->uri, NULL);
                }
        } else if (ac->kind == ACTION_UNLOAD) {
                mem_update(a, ac->name, NULL, PHASE_UNLOADING, NULL, NULL);
                r = repo_unload(repo, ac->name, err, sizeof(err));
                if (r < 0 && r != -ENOENT)
                        log_warn("agent: model %s: unload failed: %s", ac->name, err);
                else
                        log_info("agent: model %s unloaded", ac->name);
        }
}

struct call_pool {
        struct agent *a;
        const struct owned_action *acts;
        size_t n;
        atomic_size_t next;
};

static void *call_worker(void *userdata)
{
        struct call_pool *p = userdata;
        CLEANUP(repo_client_freep) struct repo_client *repo = NULL;
        size_t i;

        if (repo_client_new(p->a->server_url, p->a->o.load_timeout_sec, &repo) < 0)
                return NULL; /* the other workers (or the caller) take the calls */
        while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
                server_call(p->a, repo, &p->acts[i]);
        return NULL;
}

/* Load and unload calls, concurrently (a model server loads models in parallel), bounded. */
static void run_calls(struct agent *a, const struct owned_action *acts, size_t n)
{
        AUTOFREE struct owned_action *calls = calloc(n + 1, sizeof(*calls));
        struct call_pool p = { .a = a };
        pthread_t t[64];
        size_t nw, started = 0;

        if (!calls)
                return;
        for (size_t i = 0; i < n; i++)
                if (acts[i].kind == ACTION_LOAD || acts[i].kind == ACTION_UNLOAD)
                        calls[p.n++] = acts[i]; /* shallow: acts owns the strings */
        p.acts = calls;
        nw = MIN(MIN((size_t)a->o.download_workers, p.n), ELEMENTSOF(t));
        if (nw > 1)
                for (size_t i = 0; i < nw; i++)
                        if (pthread_create(&t[i], NULL, call_worker, &p) == 0)
                                started++;
        for (size_t i = 0; i < started; i++)
                pthread_join(t[i], NULL);
        /* whatever no worker took (none started, or their clients failed) runs here */
        for (size_t i; (i = atomic_fetch_add(&p.next, 1)) < p.n;)
                server_call(a, a->repo, &calls[i]);
}

/* The desired models from @models_json, or the last good set when it is rejected: one bad write
 * must not unload everything. Fails only for -ENOMEM. */
static int pass_desired(struct agent *a, const char *models_json, struct model_entries *ret)
{
        char err[REASON_MAX];
        int r;

        model_entries_init(ret);
        r = modelconfig_parse(models_json, ret, err, sizeof(err));
        if (r >= 0)
                return 0;
        log_error("agent: models.json rejected, keeping the previous %zu models: %s",
                  a->last_desired.n, err);
        model_entries_release(ret);
        if (r == -ENOMEM)
                return r;
        *ret = a->last_desired;
        model_entries_init(&a->last_desired);
        return 0;
}

/* What one pass sees: the model directory and what the model server has. */
struct observed {
        struct disk_scan disk;
        struct repo_index ix;
        struct server_model *server; /* owned array of ix.n; names borrowed from ix */
        bool server_known;
};

static void observed_release(struct observed *o)
{
        free(o->server);
        repo_index_release(&o->ix);
        disk_scan_release(&o->disk);
}

static int observe(struct agent *a, struct observed *o)
{
        char err[REASON_MAX] = "";
        int r;

        r = disk_scan(a, &o->disk);
        if (r < 0)
                return log_error_errno(r, "agent: cannot list %s", a->model_dir);
        r = repo_index(a->repo, &o->ix, err, sizeof(err));
        o->server_known = r >= 0;
        if (r < 0)
                log_warn("agent: model server index unavailable: %s", err);
        o->server = calloc(o->ix.n + 1, sizeof(*o->server));
        if (!o->server)
                return -ENOMEM;
        for (size_t i = 0; i < o->ix.n; i++)
                o->server[i] = (struct server_model){ .name = o->ix.items[i].name,
                                                      .state = o->ix.items[i].state };
        if (o->server_known)
                mem_server_back(a, o->server, o->ix.n);
        else
                mem_server_lost(a, err);
        return 0;
}

/* The plan's actions, copied: the plan borrows from the memory array, which the actions change. */
struct owned_actions {
        struct owned_action *items;
        size_t n;
};

static void owned_actions_release(struct owned_actions *oa)
{
        for (size_t i = 0; i < oa->n; i++) {
                free(oa->items[i].name);
                free(oa->items[i].uri);
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

static int owned_action_copy(const struct action *src, struct owned_action *ret)
{
        AUTOFREE char *name = strdup(src->name);
        AUTOFREE char *uri = src->uri ? strdup(src->uri) : NULL;

        if (!name || (src->uri && !uri))
                return -ENOMEM;
        *ret = (struct owned_action){ .kind = src->kind,
                                      .name = TAKE_PTR(name),
                                      .uri = TAKE_PTR(uri) };
        return 0;
}

static int owned_actions_copy(const struct plan_result *plan, struct owned_actions *ret)
{
        CLEANUP(owned_actions_release) struct owned_actions oa = { 0 };
        int r;

        oa.items = calloc(plan->n_actions + 1, sizeof(*oa.items));
        if (!oa.items)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_actions; i++) {
                r = owned_action_copy(&plan->actions[i], &oa.items[oa.n]);
                if (r < 0)
                        return r;
                oa.n++;
        }
        owned_actions_move(ret, &oa);
        return 0;
}

/* Runs the downloads of @acts concurrently and records each outcome. Returns how many ran. */
static int run_download_actions(struct agent *a, const struct owned_actions *acts)
{
        AUTOFREE struct job *jobs = calloc(acts->n + 1, sizeof(*jobs));
        size_t n_jobs = 0;

        if (!jobs)
                return -ENOMEM;
        for (size_t i = 0; i < acts->n; i++) {
                const struct owned_action *ac = &acts->items[i];

                if (ac->kind != ACTION_DOWNLOAD)
                        continue;
                jobs[n_jobs++] = (struct job){ .name = ac->name, .uri = ac->uri };
                mem_update(a, ac->name, ac->uri, PHASE_DOWNLOADING, NULL, NULL);
                log_info("agent: downloading model %s from %s", ac->name, ac->uri);
        }
        if (n_jobs > 0)
                run_downloads(a, jobs, n_jobs);
        for (size_t i = 0; i < n_jobs; i++) {
                if (jobs[i].r < 0) {
                        log_error("agent: model %s: download failed: %s", jobs[i].name,
                                  jobs[i].reason);
                        mem_update(a, jobs[i].name, jobs[i].uri, PHASE_FAILED_TO_DOWNLOAD, NULL,
                                   jobs[i].reason);
                } else {
                        log_info("agent: model %s downloaded", jobs[i].name);
                        mem_update(a, jobs[i].name, jobs[i].uri, PHASE_LOADING, NULL, NULL);
                }
        }
        return (int)n_jobs;
}

static int remove_model(struct agent *a, const char *name)
{
        AUTOFREE char *path = NULL;
        int r;

        if (asprintf(&path, "%s/%s", a->model_dir, name) < 0) {
                path = NULL;
                return -ENOMEM;
        }
        r = rm_rf(path);
        if (r < 0)
                log_error_errno(r, "agent: cannot remove %s", path);
        else
                log_info("agent: model %s removed from disk", name);
        return 0;
}

/* Finishes one action after the downloads and the model-server calls. Returns 1 when it counts
 * as executed, 0 when not (bookkeeping only), or -ENOMEM. */
static int finish_action(struct agent *a, const struct owned_action *ac)
{
        int r;

        switch (ac->kind) {
        case ACTION_DOWNLOAD:
                return 0; /* counted by run_download_actions() */
        case ACTION_ADOPT:
                log_info("agent: model %s already loaded from %s", ac->name, ac->uri);
                mem_update(a, ac->name, ac->uri, PHASE_LOADED, ac->uri, NULL);
                return 1;
        case ACTION_LOAD:
        case ACTION_UNLOAD:
                return 1; /* done by the call pool */
        case ACTION_REMOVE:
                r = remove_model(a, ac->name);
                return r < 0 ? r : 1;
        case ACTION_FORGET:
                mem_forget(a, ac->name);
                return 0; /* bookkeeping only: no further pass needed */
        }
        return 1;
}

/* Observes, plans against @desired and executes the plan. Returns how many actions it executed
 * (>= 0) and the next retry time. */
static int pass_act(struct agent *a, const struct model_entries *desired, usec_t *ret_wake)
{
        CLEANUP(observed_release) struct observed o = { 0 };
        CLEANUP(plan_result_release) struct plan_result plan = { 0 };
        CLEANUP(owned_actions_release) struct owned_actions acts = { 0 };
        int r, done;

        r = observe(a, &o);
        if (r < 0)
                return r;
        r = agent_plan(
                &(struct plan_input){
                        .desired = desired,
                        .disk = o.disk.items,
                        .n_disk = o.disk.n,
                        .server = o.server,
                        .n_server = o.ix.n,
                        .server_known = o.server_known,
                        .memory = a->mem,
                        .n_memory = a->n_mem,
                        .now = now_monotonic(),
                },
                &plan);
        if (r < 0)
                return r;
        *ret_wake = plan.next_wake;
        r = owned_actions_copy(&plan, &acts);
        if (r < 0)
                return r;
        r = run_download_actions(a, &acts);
        if (r < 0)
                return r;
        done = r;
        run_calls(a, acts.items, acts.n);
        for (size_t i = 0; i < acts.n; i++) {
                r = finish_action(a, &acts.items[i]);
                if (r < 0)
                        return r;
                done += r;
        }
        return done;
}

/* Returns how many actions it executed (>= 0) and the next retry time. */
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

static void *agent_thread(void *userdata)
{
        struct agent *a = userdata;
        unsigned long seen = 0;
        usec_t wake = USEC_INFINITY;
        bool again = false;

        for (;;) {
                AUTOFREE char *json = NULL;
                int r;

                pthread_mutex_lock(&a->lock);
                while (!a->stop && (!again && (seen == a->generation || !effective_desired(a)))) {
                        if (wake == USEC_INFINITY) {
                                pthread_cond_wait(&a->cond, &a->lock);
                        } else {
                                struct timespec ts = usec_to_timespec(wake);
                                if (pthread_cond_timedwait(&a->cond, &a->lock, &ts) == ETIMEDOUT &&
                                    effective_desired(a))
                                        break;
                        }
                }
                if (a->stop) {
                        pthread_mutex_unlock(&a->lock);
                        break;
                }
                seen = a->generation;
                json = strdup(effective_desired(a));
                pthread_mutex_unlock(&a->lock);
                if (!json) {
                        log_error("agent: out of memory");
                        again = true;
                        continue;
                }
                wake = USEC_INFINITY;
                r = pass(a, json, &wake);
                /* a periodic resync notices a model server that restarted and lost its models */
                wake = MIN(wake, now_monotonic() + AGENT_RESYNC_USEC);
                atomic_fetch_add(&a->passes, 1);
                if (r < 0) {
                        log_error_errno(r, "agent: reconcile pass failed");
                        wake = now_monotonic() + a->o.retry_base;
                        again = false;
                } else {
                        again = r > 0;
                }
        }
        return NULL;
}

int agent_start(struct agent *a)
{
        int r = pthread_create(&a->thread, NULL, agent_thread, a);
        if (r != 0)
                return -r;
        a->started = true;
        return 0;
}
