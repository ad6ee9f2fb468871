/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/service.h"

#include <malloc.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "catalog/hf-sync.h"
#include "catalog/limits.h"

/* The last successfully parsed catalog file of one source. */
struct good_entry {
        char *source_id; /* owned */
        char *path;      /* owned */
        struct stat st;
        struct catalog_models *data; /* owned reference */
};

/* An hf source: its settings and the outcome of its last sync (refreshed every syncInterval). */
struct hf_entry {
        char *source_id; /* owned */
        char *key;       /* owned; catalog_hf_config_key() of cfg */
        struct catalog_hf_config cfg;
        enum catalog_source_state state;
        char *error;                 /* owned */
        struct catalog_models *data; /* owned reference; the last data a sync delivered */
        usec_t next_sync;            /* CLOCK_MONOTONIC */
};

/*
 * A thread that runs reloads on request. Every thread allocates from its own malloc arena, and
 * a snapshot is built while the previous one still serves: built by one thread, the snapshots
 * interleave in one arena with each other and with the parse, and the pages the freed one
 * shared with the live one stay resident (RSS grew 51 -> 82 MiB over 8 reloads of 10,000
 * models with the heap in use flat at 41 MiB). Two builders take turns, so a snapshot is built
 * in the arena its predecessor's predecessor emptied, and the one it replaces leaves its own
 * arena empty for malloc_trim().
 */
struct builder {
        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool has_job, quit;        /* protected by lock */
        struct catalog_service *s; /* set by the thread that has the reload_lock */
        struct error_detail *err;  /* the job's */
        int r;                     /* the job's result */
};

struct catalog_service {
        char **paths; /* owned strv */
        size_t n_paths;
        char *base_dir; /* owned */
        unsigned poll_interval_ms, debounce_ms;
        catalog_reload_fn on_reload;
        void *userdata;

        /* protects current and generation; writer-preferring so a swap is never starved by a
         * stream of requests taking references */
        pthread_rwlock_t lock;
        struct catalog_index *current;
        uint64_t generation;

        pthread_mutex_t reload_lock; /* serialises reloads; protects everything below */
        struct catalog_ids *ids;
        struct good_entry *good;
        size_t n_good;
        char **watched_files; /* owned strv: configs + catalog files of the current snapshot */
        uint64_t signature;

        struct hf_entry *hf; /* owned array, protected by reload_lock */
        size_t n_hf;
        struct catalog_hf_opts hf_opts;
        atomic_bool stopping; /* aborts a running hub sync */

        pthread_t thread;
        bool thread_started;
        int stop_fd;

        struct builder builders[2]; /* protected by reload_lock */
        unsigned next_builder;
};

static void hf_entry_release(struct hf_entry *e)
{
        free(e->source_id);
        free(e->key);
        catalog_hf_config_release(&e->cfg);
        free(e->error);
        catalog_models_unref(e->data);
        memset(e, 0, sizeof(*e));
}

static struct hf_entry *hf_find(struct catalog_service *s, const char *id)
{
        for (size_t i = 0; i < s->n_hf; i++)
                if (streq(s->hf[i].source_id, id))
                        return &s->hf[i];
        return NULL;
}

/*
 * Syncs e from the hub now. A sync that delivers models replaces the data (partially-available
 * when some failed); one that delivers nothing keeps the last data and shows the error.
 */
static int hf_sync_entry(struct catalog_service *s, struct hf_entry *e)
{
        struct catalog_hf_result res = { 0 };
        int r;

        r = catalog_hf_sync(&e->cfg, &s->hf_opts, &res);
        e->next_sync = now_monotonic() + e->cfg.sync_interval;
        if (r < 0)
                return r;
        free(e->error);
        e->error = TAKE_PTR(res.error);
        if (res.data) {
                catalog_models_unref(e->data);
                e->data = TAKE_PTR(res.data);
                e->state = e->error ? CATALOG_SOURCE_PARTIALLY_AVAILABLE : CATALOG_SOURCE_AVAILABLE;
        } else
                e->state = CATALOG_SOURCE_ERROR;
        catalog_hf_result_release(&res);
        return 0;
}

/* The load of an hf source: its entry, created (and synced) when new or its settings changed. */
static int load_hf_source(struct catalog_service *s, const struct catalog_source_config *src,
                          struct catalog_source_load *l)
{
        struct catalog_hf_config cfg = { 0 };
        struct hf_entry *e;
        AUTOFREE char *key = NULL;
        char err[512];
        int r;

        r = catalog_hf_config_from_source(src, NULL, &cfg, err, sizeof(err));
        if (r == -EINVAL) {
                l->state = CATALOG_SOURCE_ERROR;
                l->error = strdup(err);
                return l->error ? 0 : -ENOMEM;
        }
        if (r < 0)
                return r;
        key = catalog_hf_config_key(&cfg);
        if (!key) {
                catalog_hf_config_release(&cfg);
                return -ENOMEM;
        }
        e = hf_find(s, src->id);
        if (!e || !streq(e->key, key)) {
                if (!e) {
                        struct hf_entry *v = reallocarray(s->hf, s->n_hf + 1, sizeof(*v));

                        if (!v) {
                                catalog_hf_config_release(&cfg);
                                return -ENOMEM;
                        }
                        s->hf = v;
                        e = &v[s->n_hf++];
                        *e = (struct hf_entry){ 0 };
                } else
                        hf_entry_release(e);
                e->source_id = strdup(src->id);
                if (!e->source_id) {
                        catalog_hf_config_release(&cfg);
                        return -ENOMEM;
                }
                e->key = TAKE_PTR(key);
                e->cfg = cfg;
                cfg = (struct catalog_hf_config){ 0 };
                r = hf_sync_entry(s, e);
                if (r < 0)
                        return r;
        }
        catalog_hf_config_release(&cfg);
        l->state = e->state;
        if (e->error) {
                l->error = strdup(e->error);
                if (!l->error)
                        return -ENOMEM;
        }
        l->data = catalog_models_ref(e->data);
        return 0;
}

static void good_release(struct good_entry *g)
{
        free(g->source_id);
        free(g->path);
        catalog_models_unref(g->data);
}

static struct good_entry *good_find(struct catalog_service *s, const char *id)
{
        for (size_t i = 0; i < s->n_good; i++)
                if (streq(s->good[i].source_id, id))
                        return &s->good[i];
        return NULL;
}

static int good_store(struct catalog_service *s, const char *id, const char *path,
                      const struct stat *st, struct catalog_models *data)
{
        struct good_entry *g = good_find(s, id);
        char *nid, *npath;

        if (!g) {
                struct good_entry *v = reallocarray(s->good, s->n_good + 1, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                s->good = v;
                g = &v[s->n_good++];
                *g = (struct good_entry){ 0 };
        }
        nid = strdup(id);
        npath = strdup(path);
        if (!nid || !npath) {
                free(nid);
                free(npath);
                return -ENOMEM;
        }
        good_release(g);
        *g = (struct good_entry){
                .source_id = nid, .path = npath, .st = *st, .data = catalog_models_ref(data)
        };
        return 0;
}

static bool stat_same(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static char *error_text(const struct error_detail *e)
{
        char buf[1200];

        return strdup(error_detail_format(e, buf, sizeof(buf)));
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++) {
                h ^= c[i];
                h *= UINT64_C(1099511628211);
        }
        return h;
}

static uint64_t sig_add(uint64_t h, const char *path, const struct stat *st, int e)
{
        h = fnv(h, path, strlen(path) + 1);
        if (!st)
                return fnv(h, &e, sizeof(e));
        h = fnv(h, &st->st_dev, sizeof(st->st_dev));
        h = fnv(h, &st->st_ino, sizeof(st->st_ino));
        h = fnv(h, &st->st_size, sizeof(st->st_size));
        return fnv(h, &st->st_mtim, sizeof(st->st_mtim));
}

#define SIG_INIT UINT64_C(14695981039346656037)

static uint64_t sig_add_path(uint64_t h, const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return sig_add(h, path, NULL, errno);
        return sig_add(h, path, &st, 0);
}

/*
 * A hash of the stat results of every watched file, in the order the reload read them. The
 * reload computes the same hash from the stats it took *before* reading each file, so a change
 * that lands while (or after) a file is read always shows up as a difference.
 */
static uint64_t files_signature(char *const *files)
{
        uint64_t h = SIG_INIT;

        for (char *const *f = files; f && *f; f++)
                h = sig_add_path(h, *f);
        return h;
}

/* stat()s path and adds the result to the signature sig; st is zeroed when stat() fails. */
static void stat_signed(const char *path, struct stat *st, uint64_t *sig)
{
        if (stat(path, st) < 0) {
                *sig = sig_add(*sig, path, NULL, errno);
                memset(st, 0, sizeof(*st));
        } else
                *sig = sig_add(*sig, path, st, 0);
}

/* Loads the yaml source src from path, reusing the last good models when the file is unchanged. */
static int load_yaml_file(struct catalog_service *s, const struct catalog_source_config *src,
                          const char *path, struct catalog_source_load *l, uint64_t *sig)
{
        CLEANUP(catalog_models_unrefp) struct catalog_models *data = NULL;
        struct error_detail err = { 0 };
        struct good_entry *g = good_find(s, src->id);
        struct stat st;
        int r;

        stat_signed(path, &st, sig);
        if (st.st_ino != 0 && g && streq(g->path, path) && stat_same(&g->st, &st)) {
                l->state = CATALOG_SOURCE_AVAILABLE;
                l->data = catalog_models_ref(g->data);
                return 0;
        }
        r = catalog_models_load_file(path, &data, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                l->error = error_text(&err);
                if (!l->error)
                        return -ENOMEM;
                /* a broken file keeps the last good models of this source serving */
                if (g)
                        l->data = catalog_models_ref(g->data);
                return 0;
        }
        r = good_store(s, src->id, path, &st, data);
        if (r < 0)
                return r;
        l->state = CATALOG_SOURCE_AVAILABLE;
        l->data = TAKE_PTR(data);
        return 0;
}

static int load_source(struct catalog_service *s, const struct catalog_source_config *src,
                       struct catalog_source_load *l, char **ret_path, uint64_t *sig)
{
        AUTOFREE char *path = NULL;
        int r;

        *ret_path = NULL;
        if (!src->enabled) {
                l->state = CATALOG_SOURCE_DISABLED;
                return 0;
        }
        l->state = CATALOG_SOURCE_ERROR;
        if (!src->type) {
                l->error = strdup("source has no type defined");
                return l->error ? 0 : -ENOMEM;
        }
        if (streq(src->type, "hf"))
                return load_hf_source(s, src, l);
        if (!streq(src->type, "yaml")) {
                if (asprintf(&l->error, "catalog type \"%s\" not registered", src->type) < 0)
                        l->error = NULL;
                return l->error ? 0 : -ENOMEM;
        }
        r = catalog_source_yaml_path(src, &path);
        if (r == -ENOENT) {
                l->error = strdup("missing required property yamlCatalogPath");
                return l->error ? 0 : -ENOMEM;
        }
        if (r < 0)
                return r;
        *ret_path = strdup(path);
        if (!*ret_path)
                return -ENOMEM;
        return load_yaml_file(s, src, path, l, sig);
}

/* Copies the config paths into files (from *n_files on) and adds their stats to sig. */
static int config_files_add(struct catalog_service *s, char **files, size_t *n_files, uint64_t *sig)
{
        for (size_t i = 0; i < s->n_paths; i++) {
                files[*n_files] = strdup(s->paths[i]);
                if (!files[(*n_files)++])
                        return -ENOMEM;
        }
        for (size_t i = 0; i < s->n_paths; i++)
                *sig = sig_add_path(*sig, s->paths[i]);
        return 0;
}

/* Loads every source of cfg into loads, adding the files read to files and their stats to sig. */
static int sources_load(struct catalog_service *s, const struct catalog_config *cfg,
                        struct catalog_source_load *loads, char **files, size_t *n_files,
                        uint64_t *sig)
{
        for (size_t i = 0; i < cfg->n_sources; i++) {
                char *path = NULL;
                int r = load_source(s, &cfg->sources[i], &loads[i], &path, sig);

                if (r < 0)
                        return r;
                if (path)
                        files[(*n_files)++] = path;
        }
        return 0;
}

/* Forgets the hf state and the last good data of sources cfg no longer configures (as such). */
static void sources_forget_unconfigured(struct catalog_service *s, const struct catalog_config *cfg)
{
        size_t kept = 0;

        /* forget hf sources that are no longer configured (or no longer hf); the rest keep
         * their order */
        for (size_t i = 0; i < s->n_hf; i++) {
                const struct catalog_source_config *c = catalog_config_find(cfg,
                                                                            s->hf[i].source_id);

                if (c && c->enabled && c->type && streq(c->type, "hf"))
                        s->hf[kept++] = s->hf[i];
                else
                        hf_entry_release(&s->hf[i]);
        }
        s->n_hf = kept;
        /* forget the last good data of sources that are no longer configured */
        kept = 0;
        for (size_t i = 0; i < s->n_good; i++) {
                if (catalog_config_find(cfg, s->good[i].source_id))
                        s->good[kept++] = s->good[i];
                else
                        good_release(&s->good[i]);
        }
        s->n_good = kept;
}

/* Makes idx (takes it) the served snapshot, with the files it was read from and their signature. */
static void index_publish(struct catalog_service *s, struct catalog_index *idx, char **files,
                          uint64_t sig)
{
        struct catalog_index *old;

        pthread_rwlock_wrlock(&s->lock);
        old = s->current;
        s->current = idx;
        s->generation++;
        pthread_rwlock_unlock(&s->lock);
        catalog_index_unref(old);

        catalog_strv_free(s->watched_files);
        s->watched_files = files;
        s->signature = sig;
}

static int reload_locked(struct catalog_service *s, struct error_detail *err)
{
        struct catalog_config cfg = { 0 };
        struct catalog_source_load *loads = NULL;
        struct catalog_index *idx = NULL;
        char **files = NULL;
        size_t n_files = 0, n_loads = 0;
        uint64_t sig = SIG_INIT;
        int r;

        /* the signature is taken before reading, so a change during the reload triggers another */
        files = calloc(s->n_paths + CATALOG_SOURCES_MAX + 1, sizeof(*files));
        if (!files)
                return -ENOMEM;
        r = config_files_add(s, files, &n_files, &sig);
        if (r < 0)
                goto out;
        r = catalog_config_load(s->paths, s->n_paths, &cfg, err);
        if (r < 0)
                goto out;
        n_loads = cfg.n_sources;
        loads = calloc(n_loads + 1, sizeof(*loads));
        if (!loads) {
                r = -ENOMEM;
                goto out;
        }
        r = sources_load(s, &cfg, loads, files, &n_files, &sig);
        if (r < 0)
                goto out;
        sources_forget_unconfigured(s, &cfg);
        r = catalog_index_build(&cfg, loads, n_loads, s->ids, &idx);
        if (r < 0)
                goto out;
        index_publish(s, idx, TAKE_PTR(files), sig);
        r = 0;
out:
        if (loads)
                for (size_t i = 0; i < n_loads; i++)
                        catalog_source_load_release(&loads[i]);
        free(loads);
        catalog_config_release(&cfg);
        catalog_strv_free(files);
        /* a load frees the whole parse (libyaml's document, the intermediate trees): give those
         * pages back, or RSS keeps the peak of every reload (issue 16: 83 -> 259 MiB in 20) */
        malloc_trim(0);
        return r;
}

static void *builder_main(void *arg)
{
        struct builder *b = arg;

        pthread_mutex_lock(&b->lock);
        for (;;) {
                while (!b->has_job && !b->quit)
                        pthread_cond_wait(&b->cond, &b->lock);
                if (!b->has_job)
                        break;
                pthread_mutex_unlock(&b->lock);
                b->r = reload_locked(b->s, b->err);
                pthread_mutex_lock(&b->lock);
                b->has_job = false;
                pthread_cond_broadcast(&b->cond);
        }
        pthread_mutex_unlock(&b->lock);
        return NULL;
}

/*
 * glibc raises its trim threshold to twice the largest mmap()ed block freed so far (a 9 MB
 * catalog file: 18 MB), and malloc_trim() does not release the top of a thread's arena: an
 * emptied builder arena stayed resident. A fixed threshold keeps that dynamic raise off.
 */
static void malloc_tune(void)
{
        /* NOLINTNEXTLINE(concurrency-mt-unsafe): glibc takes its arena lock; once (pthread_once) */
        (void)mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

static int builder_start(struct catalog_service *s, struct builder *b)
{
        static pthread_once_t tuned = PTHREAD_ONCE_INIT;
        int r;

        pthread_once(&tuned, malloc_tune);
        pthread_mutex_init(&b->lock, NULL);
        pthread_cond_init(&b->cond, NULL);
        b->s = s;
        r = pthread_create(&b->thread, NULL, builder_main, b);
        if (r != 0) {
                pthread_cond_destroy(&b->cond);
                pthread_mutex_destroy(&b->lock);
                return -r;
        }
        b->started = true;
        return 0;
}

static void builder_stop(struct builder *b)
{
        if (!b->started)
                return;
        pthread_mutex_lock(&b->lock);
        b->quit = true;
        pthread_cond_broadcast(&b->cond);
        pthread_mutex_unlock(&b->lock);
        pthread_join(b->thread, NULL);
        pthread_cond_destroy(&b->cond);
        pthread_mutex_destroy(&b->lock);
        b->started = false;
}

/* Runs the reload on the next builder (see struct builder); on the caller when it cannot start. */
static int reload_on_builder(struct catalog_service *s, struct error_detail *err)
{
        struct builder *b = &s->builders[s->next_builder];

        s->next_builder ^= 1;
        if (!b->started && builder_start(s, b) < 0)
                return reload_locked(s, err);
        pthread_mutex_lock(&b->lock);
        b->err = err;
        b->has_job = true;
        pthread_cond_broadcast(&b->cond);
        while (b->has_job)
                pthread_cond_wait(&b->cond, &b->lock);
        pthread_mutex_unlock(&b->lock);
        return b->r;
}

int catalog_service_reload(struct catalog_service *s, struct error_detail *err)
{
        int r;

        pthread_mutex_lock(&s->reload_lock);
        /* the first load has no predecessor to interleave with: it runs on the caller */
        r = s->generation == 0 ? reload_locked(s, err) : reload_on_builder(s, err);
        pthread_mutex_unlock(&s->reload_lock);
        return r;
}

/* A new string with dirname(3)'s answer for path ("a/b/" -> "a", "b" -> ".", "/b" -> "/"),
 * without dirname()'s static-buffer contract; NULL on ENOMEM. */
static char *dir_of(const char *path)
{
        size_t n = strlen(path);

        while (n > 1 && path[n - 1] == '/')
                n--;
        while (n > 0 && path[n - 1] != '/')
                n--;
        if (n == 0)
                return strdup(".");
        while (n > 1 && path[n - 1] == '/')
                n--;
        return strndup(path, n);
}

int catalog_service_new(const struct catalog_service_config *cfg, struct catalog_service **ret,
                        struct error_detail *err)
{
        struct catalog_service *s;
        int r;

        if (!cfg || cfg->n_config_paths == 0 || cfg->n_config_paths > CATALOG_CONFIG_FILES_MAX)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->stop_fd = -EBADF;
        {
                pthread_rwlockattr_t attr;

                pthread_rwlockattr_init(&attr);
                pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
                pthread_rwlock_init(&s->lock, &attr);
                pthread_rwlockattr_destroy(&attr);
        }
        pthread_mutex_init(&s->reload_lock, NULL);
        s->poll_interval_ms = cfg->poll_interval_ms ? cfg->poll_interval_ms : 5000;
        s->debounce_ms = cfg->debounce_ms ? cfg->debounce_ms : 200;
        s->on_reload = cfg->on_reload;
        s->userdata = cfg->userdata;
        if (cfg->hf_opts)
                s->hf_opts = *cfg->hf_opts;
        s->hf_opts.cancel = &s->stopping;
        s->paths = calloc(cfg->n_config_paths + 1, sizeof(char *));
        s->ids = catalog_ids_new();
        if (!s->paths || !s->ids) {
                catalog_service_free(s);
                return -ENOMEM;
        }
        for (size_t i = 0; i < cfg->n_config_paths; i++) {
                s->paths[i] = strdup(cfg->config_paths[i]);
                if (!s->paths[i]) {
                        catalog_service_free(s);
                        return -ENOMEM;
                }
                s->n_paths++;
        }
        {
                s->base_dir = dir_of(s->paths[0]);
                if (!s->base_dir) {
                        catalog_service_free(s);
                        return -ENOMEM;
                }
        }
        r = catalog_service_reload(s, err);
        if (r < 0) {
                catalog_service_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

static void *watch_thread(void *arg);

int catalog_service_watch_start(struct catalog_service *s)
{
        int r;

        if (s->thread_started)
                return -EBUSY;
        s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->stop_fd < 0)
                return negative_errno();
        r = pthread_create(&s->thread, NULL, watch_thread, s);
        if (r != 0)
                return -r;
        s->thread_started = true;
        return 0;
}

struct catalog_service *catalog_service_free(struct catalog_service *s)
{
        if (!s)
                return NULL;
        atomic_store(&s->stopping, true);
        if (s->thread_started) {
                uint64_t one = 1;

                (void)!write(s->stop_fd, &one, sizeof(one));
                pthread_join(s->thread, NULL);
        }
        if (s->stop_fd >= 0)
                close(s->stop_fd);
        builder_stop(&s->builders[0]);
        builder_stop(&s->builders[1]);
        catalog_index_unref(s->current);
        catalog_ids_free(s->ids);
        for (size_t i = 0; i < s->n_good; i++)
                good_release(&s->good[i]);
        free(s->good);
        for (size_t i = 0; i < s->n_hf; i++)
                hf_entry_release(&s->hf[i]);
        free(s->hf);
        catalog_strv_free(s->watched_files);
        catalog_strv_free(s->paths);
        free(s->base_dir);
        pthread_rwlock_destroy(&s->lock);
        pthread_mutex_destroy(&s->reload_lock);
        free(s);
        return NULL;
}

struct catalog_index *catalog_service_get(struct catalog_service *s)
{
        struct catalog_index *idx;

        pthread_rwlock_rdlock(&s->lock);
        idx = catalog_index_ref(s->current);
        pthread_rwlock_unlock(&s->lock);
        return idx;
}

uint64_t catalog_service_generation(struct catalog_service *s)
{
        uint64_t g;

        pthread_rwlock_rdlock(&s->lock);
        g = s->generation;
        pthread_rwlock_unlock(&s->lock);
        return g;
}

const char *catalog_service_base_dir(const struct catalog_service *s)
{
        return s->base_dir;
}

/* ---- watcher ---- */

/* A new inotify fd watching the parent directories of all watched files; -errno. */
static int inotify_setup(struct catalog_service *s)
{
        int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

        if (fd < 0)
                return negative_errno();
        pthread_mutex_lock(&s->reload_lock);
        for (char **f = s->watched_files; f && *f; f++) {
                AUTOFREE char *copy = dir_of(*f);

                if (!copy)
                        continue;
                /* failures (directory gone) are covered by the stat fallback */
                (void)inotify_add_watch(fd, copy,
                                        IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM |
                                                IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB |
                                                IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
        }
        pthread_mutex_unlock(&s->reload_lock);
        return fd;
}

static void drain(int fd)
{
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

        for (unsigned i = 0; i < 1024; i++)
                if (read(fd, buf, sizeof(buf)) <= 0)
                        break;
}

static void do_reload(struct catalog_service *s)
{
        struct error_detail err = { 0 };
        struct catalog_index *idx;
        int r;

        r = catalog_service_reload(s, &err);
        if (!s->on_reload)
                return;
        idx = r >= 0 ? catalog_service_get(s) : NULL;
        s->on_reload(s->userdata, r, &err, idx);
        catalog_index_unref(idx);
}

int catalog_service_sync_hf(struct catalog_service *s, bool all)
{
        struct error_detail err = { 0 };
        usec_t now = now_monotonic();
        unsigned synced = 0;
        int r = 0;

        pthread_mutex_lock(&s->reload_lock);
        for (size_t i = 0; i < s->n_hf && r >= 0; i++)
                if (all || s->hf[i].next_sync <= now) {
                        r = hf_sync_entry(s, &s->hf[i]);
                        synced++;
                }
        pthread_mutex_unlock(&s->reload_lock);
        if (r < 0 || synced == 0)
                return r < 0 ? r : 0;
        r = catalog_service_reload(s, &err);
        return r < 0 ? r : (int)synced;
}

/* Milliseconds until the next hf sync is due (capped at cap_ms). */
static int hf_wait_ms(struct catalog_service *s, int cap_ms)
{
        usec_t now = now_monotonic();
        int ms = cap_ms;

        pthread_mutex_lock(&s->reload_lock);
        for (size_t i = 0; i < s->n_hf; i++) {
                usec_t due = s->hf[i].next_sync;
                int64_t d = due <= now ? 0 : (int64_t)((due - now) / USEC_PER_MSEC) + 1;

                if (d < ms)
                        ms = (int)d;
        }
        pthread_mutex_unlock(&s->reload_lock);
        return ms;
}

/* hf sources whose syncInterval passed (the reload inside keeps on_reload quiet). */
static void watch_sync_hf(struct catalog_service *s)
{
        struct catalog_index *idx;

        if (catalog_service_sync_hf(s, false) <= 0 || !s->on_reload)
                return;
        idx = catalog_service_get(s);
        s->on_reload(s->userdata, 0, &(struct error_detail){ 0 }, idx);
        catalog_index_unref(idx);
}

/* After an inotify event, waits until the directory is quiet (bounded); false on stop. */
static bool watch_debounce(struct catalog_service *s, int in_fd, struct pollfd p[2])
{
        for (unsigned i = 0; i < 50; i++) {
                int k;

                drain(in_fd);
                k = poll(p, 2, (int)s->debounce_ms);
                if (k <= 0 || p[0].revents)
                        break;
        }
        return !p[0].revents;
}

/* Waits for an event, a due hf sync or the poll interval; false when stop was requested. */
static bool watch_wait(struct catalog_service *s, int in_fd)
{
        struct pollfd p[2] = {
                { .fd = s->stop_fd, .events = POLLIN },
                { .fd = in_fd, .events = POLLIN },
        };
        int k;

        k = poll(p, in_fd >= 0 ? 2 : 1, hf_wait_ms(s, (int)s->poll_interval_ms));
        if (k < 0) {
                /* never give up watching: fall back to the stat check */
                if (errno != EINTR)
                        (void)poll(p, 1, (int)s->poll_interval_ms);
                p[1].revents = 0;
        }
        if (p[0].revents)
                return false;
        watch_sync_hf(s);
        if (in_fd >= 0 && (p[1].revents & POLLIN))
                return watch_debounce(s, in_fd, p);
        return true;
}

/*
 * Events only prompt a check: other files in the same directory (logs, editors' temporaries)
 * must not cause reloads. The signature follows symlinks, so the ConfigMap "..data" swap
 * changes it.
 */
static bool watched_files_changed(struct catalog_service *s)
{
        bool changed;

        pthread_mutex_lock(&s->reload_lock);
        changed = files_signature(s->watched_files) != s->signature;
        pthread_mutex_unlock(&s->reload_lock);
        return changed;
}

static void *watch_thread(void *arg)
{
        struct catalog_service *s = arg;
        int in_fd = inotify_setup(s);

        while (watch_wait(s, in_fd)) {
                if (!watched_files_changed(s))
                        continue;
                do_reload(s);
                /* the set of files may have changed: re-arm the watches */
                if (in_fd >= 0)
                        close(in_fd);
                in_fd = inotify_setup(s);
        }
        if (in_fd >= 0)
                close(in_fd);
        return NULL;
}
