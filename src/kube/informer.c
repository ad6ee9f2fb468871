/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/informer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/metrics.h"
#include "kube/workqueue.h"
#include "util/log.h"
#include "util/memory.h"
#include "util/string-util.h"

/* A list is at most this many pages (bounds a server that keeps returning continue tokens). */
#define INFORMER_LIST_PAGES_MAX 100000U

enum enqueue_kind {
        ENQUEUE_SELF,
        ENQUEUE_OWNER,
        ENQUEUE_MAPPED,
};

struct enqueue_ctx {
        enum enqueue_kind kind;
        struct workqueue *q; /* borrowed */
        char *group;         /* owned */
        char *owner_kind;    /* owned */
        informer_map_fn fn;
        informer_update_pred update_pred; /* may be NULL: every update */
        void *userdata;
};

struct informer {
        char *name, *group, *version, *resource, *ns, *label_selector, *field_selector; /* owned */
        struct gvr gvr;             /* points at the owned strings */
        struct kube_client *client; /* owned */
        struct cache *cache;        /* owned */
        const struct clock *clock;
        struct informer_options opts; /* numbers only; pointers in it are not used */

        struct informer_handler *handlers; /* owned */
        size_t n_handlers;
        struct enqueue_ctx **ctxs; /* owned */
        size_t n_ctxs;

        pthread_t thread;
        bool started;
        atomic_bool cancel;
        pthread_mutex_t lock;
        pthread_cond_t cond; /* cancel or synced */

        /* informer thread state; rv and stats are read by others under lock */
        char rv[64];
        struct informer_stats stats;
        usec_t backoff_cur;
        usec_t backoff_last;
        unsigned seed;
        unsigned events_in_watch;
        usec_t last_resync;         /* clock time */
        struct metric *undecodable; /* borrowed from opts.metrics; NULL without metrics */
};

#define INFORMER_UNDECODABLE_METRIC "modelplane_informer_undecodable_objects_total"

static int setup_metrics(struct informer *inf, struct metrics_registry *reg)
{
        static const char *const labels[] = { "resource", NULL };
        struct metric_family *f;
        int r;

        if (!reg)
                return 0;
        r = metrics_register(reg, METRIC_COUNTER, INFORMER_UNDECODABLE_METRIC,
                             "Objects an informer skipped because they could not be decoded or "
                             "cached (see the controller's warnings for which).",
                             labels, /* buckets= */ NULL, 0, &f);
        if (r < 0)
                return r;
        return metric_family_child(f, (const char *const[]){ inf->name }, &inf->undecodable);
}

int informer_new(const struct informer_options *opts, struct informer **ret)
{
        struct informer *inf;
        pthread_condattr_t attr;
        int r = 0;

        if (!opts || !ret || !opts->client || !opts->gvr.version || !opts->gvr.resource)
                return -EINVAL;
        inf = calloc(1, sizeof(*inf));
        if (!inf)
                return -ENOMEM;
        (void)pthread_mutex_init(&inf->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&inf->cond, &attr);
        (void)pthread_condattr_destroy(&attr);
        inf->opts = *opts;
        inf->clock = opts->clock ? opts->clock : &clock_monotonic;
        if (inf->opts.page_size == 0)
                inf->opts.page_size = INFORMER_PAGE_SIZE_DEFAULT;
        if (inf->opts.backoff_initial == 0)
                inf->opts.backoff_initial = INFORMER_BACKOFF_INITIAL;
        if (inf->opts.backoff_max == 0)
                inf->opts.backoff_max = INFORMER_BACKOFF_MAX;
        if (inf->opts.backoff_reset == 0)
                inf->opts.backoff_reset = INFORMER_BACKOFF_RESET;
        inf->seed = (unsigned)(now_monotonic() ^ (uintptr_t)inf);

        if (r >= 0)
                r = strdup_opt(opts->name ? opts->name : opts->gvr.resource, &inf->name);
        if (r >= 0)
                r = strdup_opt(opts->gvr.group ? opts->gvr.group : "", &inf->group);
        if (r >= 0)
                r = strdup_opt(opts->gvr.version, &inf->version);
        if (r >= 0)
                r = strdup_opt(opts->gvr.resource, &inf->resource);
        if (r >= 0)
                r = strdup_opt(opts->namespace, &inf->ns);
        if (r >= 0)
                r = strdup_opt(opts->label_selector, &inf->label_selector);
        if (r >= 0)
                r = strdup_opt(opts->field_selector, &inf->field_selector);
        if (r >= 0) {
                inf->cache = cache_new(&opts->cache);
                if (!inf->cache)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = kube_client_dup(opts->client, &inf->client);
        if (r >= 0)
                r = setup_metrics(inf, opts->metrics);
        if (r < 0) {
                informer_free(inf);
                return r;
        }
        inf->gvr = (struct gvr){ .group = inf->group,
                                 .version = inf->version,
                                 .resource = inf->resource };
        *ret = inf;
        return 0;
}

struct informer *informer_free(struct informer *inf)
{
        if (!inf)
                return NULL;
        informer_stop(inf);
        for (size_t i = 0; i < inf->n_ctxs; i++) {
                free(inf->ctxs[i]->group);
                free(inf->ctxs[i]->owner_kind);
                free(inf->ctxs[i]);
        }
        free(inf->ctxs);
        free(inf->handlers);
        kube_client_free(inf->client);
        cache_free(inf->cache);
        free(inf->name);
        free(inf->group);
        free(inf->version);
        free(inf->resource);
        free(inf->ns);
        free(inf->label_selector);
        free(inf->field_selector);
        (void)pthread_cond_destroy(&inf->cond);
        (void)pthread_mutex_destroy(&inf->lock);
        free(inf);
        return NULL;
}

struct cache *informer_cache(struct informer *inf)
{
        return inf ? inf->cache : NULL;
}

int informer_add_handler(struct informer *inf, const struct informer_handler *h)
{
        struct informer_handler *n;

        if (!inf || !h)
                return -EINVAL;
        if (inf->started)
                return -EBUSY;
        n = reallocarray(inf->handlers, inf->n_handlers + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        inf->handlers = n;
        n[inf->n_handlers++] = *h;
        return 0;
}

/* ---- enqueue helpers ---- */

int informer_owner_keys(const json_t *obj, const char *owner_group, const char *owner_kind,
                        json_t **ret_keys)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);
        json_t *refs = json_get_path(obj, "metadata", "ownerReferences", NULL), *ref;
        json_auto_t *keys = json_array();
        size_t i;

        if (!owner_kind || !ret_keys)
                return -EINVAL;
        if (!keys)
                return -ENOMEM;
        json_array_foreach(refs, i, ref) {
                const char *av = json_string_value(json_object_get(ref, "apiVersion"));
                const char *kind = json_string_value(json_object_get(ref, "kind"));
                const char *name = json_string_value(json_object_get(ref, "name"));
                const char *slash;
                size_t glen;
                char key[CACHE_KEY_MAX];
                int n;

                if (!av || !kind || !name || !streq(kind, owner_kind))
                        continue;
                slash = strchr(av, '/');
                glen = slash ? (size_t)(slash - av) : 0;
                if (owner_group &&
                    (strlen(owner_group) != glen || strncmp(av, owner_group, glen) != 0))
                        continue;
                if (ns && *ns)
                        n = snprintf(key, sizeof(key), "%s/%s", ns, name);
                else
                        n = snprintf(key, sizeof(key), "%s", name);
                if (n < 0 || (size_t)n >= sizeof(key))
                        continue;
                if (json_array_append_new(keys, json_string(key)) < 0)
                        return -ENOMEM;
        }
        *ret_keys = TAKE_PTR(keys);
        return 0;
}

/* Enqueues the keys obj maps to; failures (OOM) are logged: a lost key waits for the resync. */
static void enqueue_obj(struct enqueue_ctx *ctx, const json_t *obj)
{
        json_auto_t *keys = NULL;
        char key[CACHE_KEY_MAX];
        json_t *k;
        size_t i;
        int r;

        switch (ctx->kind) {
        case ENQUEUE_SELF:
                if (cache_key_of(obj, key, sizeof(key)) < 0)
                        return;
                r = workqueue_add(ctx->q, key);
                break;
        case ENQUEUE_OWNER:
                r = informer_owner_keys(obj, ctx->group, ctx->owner_kind, &keys);
                break;
        case ENQUEUE_MAPPED:
        default:
                r = ctx->fn(ctx->userdata, obj, &keys);
                break;
        }
        json_array_foreach(keys, i, k)
                if (json_is_string(k) && r >= 0)
                        r = workqueue_add(ctx->q, json_string_value(k));
        if (r < 0)
                (void)log_warn_errno(r, "Failed to enqueue a reconcile key, ignoring");
}

static void enqueue_on_add(void *userdata, json_t *obj)
{
        enqueue_obj(userdata, obj);
}

static void enqueue_on_update(void *userdata, json_t *old_obj, json_t *new_obj)
{
        struct enqueue_ctx *ctx = userdata;

        if (ctx->update_pred && !ctx->update_pred(ctx->userdata, old_obj, new_obj))
                return;
        if (ctx->kind != ENQUEUE_SELF)
                enqueue_obj(ctx, old_obj);
        enqueue_obj(ctx, new_obj);
}

static void enqueue_ctx_release(struct enqueue_ctx *t)
{
        free(t->group);
        free(t->owner_kind);
}

/* Adds a handler with a copy of tmpl, which owns tmpl's strings from then on, also on failure. */
static int add_enqueue(struct informer *inf, struct enqueue_ctx *tmpl)
{
        struct informer_handler h = { .on_add = enqueue_on_add,
                                      .on_update = enqueue_on_update,
                                      .on_delete = enqueue_on_add };
        struct enqueue_ctx *ctx, **n;
        int r;

        if (inf->started) {
                enqueue_ctx_release(tmpl);
                return -EBUSY;
        }
        ctx = calloc(1, sizeof(*ctx));
        if (!ctx) {
                enqueue_ctx_release(tmpl);
                return -ENOMEM;
        }
        *ctx = *tmpl;
        n = reallocarray(inf->ctxs, inf->n_ctxs + 1, sizeof(struct enqueue_ctx *));
        if (!n) {
                enqueue_ctx_release(ctx);
                free(ctx);
                return -ENOMEM;
        }
        inf->ctxs = n;
        n[inf->n_ctxs++] = ctx; /* owns group/owner_kind from now on */
        h.userdata = ctx;
        r = informer_add_handler(inf, &h);
        return r;
}

int informer_enqueue_self(struct informer *inf, struct workqueue *q)
{
        struct enqueue_ctx t = { .kind = ENQUEUE_SELF, .q = q };

        if (!inf || !q)
                return -EINVAL;
        return add_enqueue(inf, &t);
}

int informer_enqueue_owner(struct informer *inf, struct workqueue *q, const char *owner_group,
                           const char *owner_kind)
{
        struct enqueue_ctx t = { .kind = ENQUEUE_OWNER, .q = q };

        if (!inf || !q || !owner_kind)
                return -EINVAL;
        t.group = strdup(owner_group ? owner_group : "");
        t.owner_kind = strdup(owner_kind);
        if (!t.group || !t.owner_kind) {
                enqueue_ctx_release(&t);
                return -ENOMEM;
        }
        return add_enqueue(inf, &t);
}

int informer_enqueue_mapped(struct informer *inf, struct workqueue *q, informer_map_fn fn,
                            void *userdata)
{
        struct enqueue_ctx t = { .kind = ENQUEUE_MAPPED, .q = q, .fn = fn, .userdata = userdata };

        if (!inf || !q || !fn)
                return -EINVAL;
        return add_enqueue(inf, &t);
}

int informer_enqueue_mapped_if(struct informer *inf, struct workqueue *q, informer_map_fn fn,
                               informer_update_pred update_pred, void *userdata)
{
        struct enqueue_ctx t = { .kind = ENQUEUE_MAPPED,
                                 .q = q,
                                 .fn = fn,
                                 .update_pred = update_pred,
                                 .userdata = userdata };

        if (!inf || !q || !fn)
                return -EINVAL;
        return add_enqueue(inf, &t);
}

/* ---- dispatch ---- */

static void dispatch(struct informer *inf, json_t *old_obj, json_t *new_obj)
{
        for (size_t i = 0; i < inf->n_handlers; i++) {
                const struct informer_handler *h = &inf->handlers[i];

                if (!old_obj && new_obj && h->on_add)
                        h->on_add(h->userdata, new_obj);
                else if (old_obj && new_obj && h->on_update)
                        h->on_update(h->userdata, old_obj, new_obj);
                else if (old_obj && !new_obj && h->on_delete)
                        h->on_delete(h->userdata, old_obj);
        }
}

static void on_replace_change(void *userdata, json_t *old_obj, json_t *new_obj)
{
        dispatch(userdata, old_obj, new_obj);
}

static void set_rv(struct informer *inf, const char *rv)
{
        if (!rv || !*rv)
                return;
        (void)pthread_mutex_lock(&inf->lock);
        (void)snprintf(inf->rv, sizeof(inf->rv), "%s", rv);
        (void)pthread_mutex_unlock(&inf->lock);
}

/* ---- undecodable objects ---- */

/* Appends string s with NUL characters shown as \0. */
static void append_escaped(struct buf *b, const json_t *s)
{
        const char *p = json_string_value(s);

        for (size_t i = 0; i < json_string_length(s); i++)
                if (buf_append(b, p[i] == '\0' ? "\\0" : &p[i], p[i] == '\0' ? 2 : 1) < 0)
                        return; /* the description is cut at its limit */
}

/* "namespace/name" of obj for a log line: what can be read of it. */
static void describe(const json_t *obj, char *buf, size_t len)
{
        const json_t *meta = json_is_object(obj) ? json_object_get(obj, "metadata") : NULL;
        const json_t *ns = json_object_get(meta, "namespace");
        const json_t *name = json_object_get(meta, "name");
        struct buf b = BUF_INIT(len);

        if (!json_is_string(name)) {
                (void)snprintf(buf, len, "%s",
                               json_is_object(obj) ? "(no metadata.name)" : "(not an object)");
                return;
        }
        if (json_is_string(ns)) {
                append_escaped(&b, ns);
                if (buf_puts(&b, "/") < 0)
                        buf_reset(&b);
        }
        append_escaped(&b, name);
        (void)snprintf(buf, len, "%s", b.len > 0 ? buf_str(&b) : "(empty name)");
        buf_release(&b);
}

/* Skips obj: counted, one warning with its name. */
static void skip_undecodable(struct informer *inf, const json_t *obj, int err)
{
        char what[CACHE_KEY_MAX + 32];

        describe(obj, what, sizeof(what));
        (void)pthread_mutex_lock(&inf->lock);
        inf->stats.undecodable++;
        (void)pthread_mutex_unlock(&inf->lock);
        if (inf->undecodable)
                metric_inc(inf->undecodable);
        (void)log_warn_errno(err, "Skipping %s object %s: it cannot be decoded or cached",
                             inf->name, what);
}

/* ---- list ---- */

/*
 * The API server leaves kind and apiVersion out of list items, while watch events carry them:
 * set them from the list's own ("ConfigMapList" -> "ConfigMap") so that every cached object looks
 * the same whichever way it arrived. The list was just parsed for us, so it is still ours to change.
 */
static int fill_kind(json_t *list)
{
        const char *lk = json_string_value(json_object_get(list, "kind"));
        const char *av = json_string_value(json_object_get(list, "apiVersion"));
        char kind[256];
        size_t n, i;
        json_t *item;

        if (!lk || !av)
                return 0;
        n = strlen(lk);
        if (n <= 4 || n - 4 >= sizeof(kind) || !streq(lk + n - 4, "List"))
                return 0;
        memcpy(kind, lk, n - 4);
        kind[n - 4] = '\0';
        json_array_foreach(json_object_get(list, "items"), i, item) {
                if (!json_is_object(item))
                        continue;
                if (!json_object_get(item, "kind") &&
                    json_object_set_new(item, "kind", json_string(kind)) < 0)
                        return -ENOMEM;
                if (!json_object_get(item, "apiVersion") &&
                    json_object_set_new(item, "apiVersion", json_string(av)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Adds a page's items to batch; an item that cannot be keyed or decoded is skipped and counted.
 * 0, or -ENOMEM. */
static int add_page_items(struct informer *inf, struct cache_batch *batch, json_t *list)
{
        json_t *item;
        size_t i;

        json_array_foreach(json_object_get(list, "items"), i, item) {
                char key[CACHE_KEY_MAX];
                int r = json_is_object(item) ? cache_key_of(item, key, sizeof(key)) : -EBADMSG;

                if (r >= 0)
                        r = cache_batch_add(batch, item);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        skip_undecodable(inf, item, r);
        }
        return 0;
}

/* The continue token of list into *cont: 1 when there is a next page, 0 after the last one,
 * -ENOMEM. */
static int next_page(json_t *list, char **cont)
{
        const char *next = json_get_string_path(list, "metadata", "continue", NULL);

        if (!next || !*next)
                return 0;
        free(*cont);
        *cont = strdup(next);
        return *cont ? 1 : -ENOMEM;
}

/*
 * Lists every page into a cache batch: each page's objects are transformed (and serialized for a
 * compact cache) as they arrive, so a large list never sits in memory as one parsed tree.
 */
static int list_all(struct informer *inf, struct cache_batch *batch, char *ret_rv, size_t rv_len,
                    struct kube_status *st)
{
        AUTOFREE char *cont = NULL;
        unsigned restarts = 0;
        bool first = true;
        int r;

        for (unsigned page = 0; page < INFORMER_LIST_PAGES_MAX; page++) {
                struct kube_list_options lo = { .label_selector = inf->label_selector,
                                                .field_selector = inf->field_selector,
                                                .limit = inf->opts.page_size,
                                                .continue_token = cont };
                json_auto_t *list = NULL;
                const char *rv;

                if (atomic_load(&inf->cancel))
                        return -ECANCELED;
                r = kube_list(inf->client, &inf->gvr, inf->ns, &lo, &list, st);
                if (r == -ESTALE && cont && restarts++ < 3) {
                        /* The continue token expired mid-list: start over (client-go does). */
                        cache_batch_clear(batch);
                        free(TAKE_PTR(cont));
                        first = true;
                        continue;
                }
                if (r >= 0)
                        r = fill_kind(list);
                if (r >= 0)
                        r = add_page_items(inf, batch, list);
                if (r < 0)
                        return r;
                rv = json_get_string_path(list, "metadata", "resourceVersion", NULL);
                if (rv && first) /* later pages are served at the first page's version */
                        (void)snprintf(ret_rv, rv_len, "%s", rv);
                first = false;
                r = next_page(list, &cont);
                if (r <= 0)
                        return r;
        }
        return -E2BIG;
}

static int do_list(struct informer *inf, struct kube_status *st)
{
        CLEANUP(cache_batch_freep) struct cache_batch *batch = NULL;
        char rv[64] = "";
        int r;

        r = cache_batch_new(inf->cache, &batch);
        if (r < 0)
                return r;
        r = list_all(inf, batch, rv, sizeof(rv), st);
        if (r < 0)
                return r;
        r = cache_batch_commit(batch, on_replace_change, inf);
        if (r < 0)
                return r;
        /* a big list leaves freed pages behind: give them back to the system */
        memory_trim();
        set_rv(inf, rv);
        (void)pthread_mutex_lock(&inf->lock);
        if (inf->stats.lists++ > 0)
                inf->stats.relists++;
        (void)pthread_cond_broadcast(&inf->cond);
        (void)pthread_mutex_unlock(&inf->lock);
        return 0;
}

/* ---- watch ---- */

static int on_event(void *userdata, const char *type, json_t *obj)
{
        struct informer *inf = userdata;
        json_t *old_obj = NULL, *new_obj = NULL;
        char key[CACHE_KEY_MAX];
        int r;

        if (streq(type, "ERROR"))
                return 0; /* kube_watch returns the Status's errno */
        inf->events_in_watch++;
        if (streq(type, "BOOKMARK")) {
                set_rv(inf, json_get_string_path(obj, "metadata", "resourceVersion", NULL));
                return 0;
        }
        if (streq(type, "DELETED")) {
                r = cache_key_of(obj, key, sizeof(key));
                if (r < 0)
                        skip_undecodable(inf, obj, r);
                else if (cache_delete(inf->cache, key, &old_obj) >= 0) {
                        dispatch(inf, old_obj, NULL);
                        json_decref(old_obj);
                }
        } else {
                r = cache_upsert(inf->cache, obj, &old_obj, &new_obj);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        skip_undecodable(inf, obj, r);
                else {
                        dispatch(inf, old_obj, new_obj);
                        json_decref(old_obj);
                        json_decref(new_obj);
                }
        }
        set_rv(inf, json_get_string_path(obj, "metadata", "resourceVersion", NULL));
        return 0;
}

static int do_watch(struct informer *inf, struct kube_status *st)
{
        char rv[64];
        struct kube_watch_options wo = { .label_selector = inf->label_selector,
                                         .field_selector = inf->field_selector,
                                         .resource_version = rv,
                                         .allow_bookmarks = true,
                                         .cancel = &inf->cancel };

        (void)pthread_mutex_lock(&inf->lock);
        memcpy(rv, inf->rv, sizeof(rv));
        inf->stats.watches++;
        (void)pthread_mutex_unlock(&inf->lock);
        wo.timeout_seconds = inf->opts.watch_timeout_seconds
                                     ? inf->opts.watch_timeout_seconds
                                     : 300U + (unsigned)(rand_r(&inf->seed) % 300U);
        inf->events_in_watch = 0;
        return kube_watch(inf->client, &inf->gvr, inf->ns, &wo, on_event, inf, st);
}

/* ---- backoff ---- */

/* Sleeps one backoff step (logging it); returns false when cancelled meanwhile. */
static bool backoff(struct informer *inf, int err, const char *what, const struct kube_status *st)
{
        usec_t now = clock_now(inf->clock), step, wait, deadline;

        if (inf->backoff_cur == 0 || now - inf->backoff_last > inf->opts.backoff_reset)
                inf->backoff_cur = inf->opts.backoff_initial;
        step = inf->backoff_cur;
        inf->backoff_cur = MIN(inf->backoff_cur * 2, inf->opts.backoff_max);
        inf->backoff_last = now;
        wait = step;
        if (!inf->opts.no_jitter)
                wait += (usec_t)((double)step * ((double)rand_r(&inf->seed) / (double)RAND_MAX));

        (void)pthread_mutex_lock(&inf->lock);
        inf->stats.backoffs++;
        inf->stats.errors++;
        (void)pthread_mutex_unlock(&inf->lock);
        (void)log_warn_errno(err, "Failed to %s %s%s%s, retrying in %.3fs", what, inf->name,
                             st && st->message[0] ? ": " : "", st ? st->message : "",
                             (double)wait / (double)USEC_PER_SEC);

        deadline = now_monotonic() + wait;
        (void)pthread_mutex_lock(&inf->lock);
        while (!atomic_load(&inf->cancel) && now_monotonic() < deadline) {
                struct timespec ts = usec_to_timespec(deadline);
                (void)pthread_cond_timedwait(&inf->cond, &inf->lock, &ts);
        }
        (void)pthread_mutex_unlock(&inf->lock);
        return !atomic_load(&inf->cancel);
}

/* Re-delivers every cached object as an update when the resync period has passed. */
static void maybe_resync(struct informer *inf)
{
        json_auto_t *all = NULL;
        usec_t now = clock_now(inf->clock);
        json_t *obj;
        size_t i;

        if (inf->opts.resync_period == 0)
                return;
        if (inf->last_resync == 0) {
                inf->last_resync = now;
                return;
        }
        if (now - inf->last_resync < inf->opts.resync_period)
                return;
        inf->last_resync = now;
        if (cache_list(inf->cache, &all) < 0)
                return; /* OOM: try again at the next period */
        json_array_foreach(all, i, obj)
                dispatch(inf, obj, obj);
        (void)pthread_mutex_lock(&inf->lock);
        inf->stats.resyncs++;
        (void)pthread_mutex_unlock(&inf->lock);
}

/* Lists when a list is due: 1 to go on to the watch, 0 to list again (after a backoff), -1 to
 * stop. */
static int list_step(struct informer *inf, bool *need_list, struct kube_status *st)
{
        int r;

        if (!*need_list)
                return 1;
        r = do_list(inf, st);
        if (r == -ECANCELED || atomic_load(&inf->cancel))
                return -1;
        if (r < 0)
                return backoff(inf, r, "list", st) ? 0 : -1;
        *need_list = false;
        return 1;
}

/* After a watch that ended with r (started at started): whether to go on. */
static bool after_watch(struct informer *inf, int r, const struct kube_status *st, usec_t started,
                        bool *need_list, unsigned *stale_in_a_row)
{
        if (r == 0) {
                *stale_in_a_row = 0;
                /* A server that closes watches at once must not make us spin. */
                return inf->events_in_watch != 0 || now_monotonic() - started >= USEC_PER_SEC ||
                       backoff(inf, -EPROTO, "watch (stream ended at once)", NULL);
        }
        if (r == -ESTALE) {
                /* 410 Gone / Expired: our resourceVersion is too old. Relist now. */
                (void)log_info("Watch of %s expired (%s), relisting", inf->name,
                               st->message[0] ? st->message : "410");
                *need_list = true;
                return (*stale_in_a_row)++ == 0 || backoff(inf, r, "watch", st);
        }
        *stale_in_a_row = 0;
        /* Resume the watch where it was after a refused connection or throttling; anything else
         * (garbage, truncated stream, 5xx) may have lost events: relist. */
        if (r != -ECONNREFUSED && r != -EAGAIN)
                *need_list = true;
        return backoff(inf, r, "watch", st);
}

static void *informer_thread(void *p)
{
        struct informer *inf = p;
        bool need_list = true;
        unsigned stale_in_a_row = 0;

        while (!atomic_load(&inf->cancel)) {
                struct kube_status st = { 0 };
                int step = list_step(inf, &need_list, &st), r;

                if (step < 0)
                        break;
                if (step == 0)
                        continue;
                maybe_resync(inf);

                usec_t started = now_monotonic();
                r = do_watch(inf, &st);
                if (r == -ECANCELED || atomic_load(&inf->cancel))
                        break;
                if (!after_watch(inf, r, &st, started, &need_list, &stale_in_a_row))
                        break;
        }
        return NULL;
}

int informer_start(struct informer *inf)
{
        int r;

        if (!inf)
                return -EINVAL;
        if (inf->started)
                return -EALREADY;
        atomic_store(&inf->cancel, false);
        r = pthread_create(&inf->thread, NULL, informer_thread, inf);
        if (r != 0)
                return -r;
        inf->started = true;
        return 0;
}

void informer_stop(struct informer *inf)
{
        if (!inf || !inf->started)
                return;
        atomic_store(&inf->cancel, true);
        (void)pthread_mutex_lock(&inf->lock);
        (void)pthread_cond_broadcast(&inf->cond);
        (void)pthread_mutex_unlock(&inf->lock);
        (void)pthread_join(inf->thread, NULL);
        inf->started = false;
}

bool informer_has_synced(struct informer *inf)
{
        return inf && cache_has_synced(inf->cache);
}

int informer_wait_synced(struct informer *inf, usec_t timeout)
{
        usec_t deadline = timeout == USEC_INFINITY ? USEC_INFINITY : now_monotonic() + timeout;
        int r = 0;

        if (!inf)
                return -EINVAL;
        (void)pthread_mutex_lock(&inf->lock);
        while (!cache_has_synced(inf->cache)) {
                if (atomic_load(&inf->cancel)) {
                        r = -ECANCELED;
                        break;
                }
                if (deadline == USEC_INFINITY)
                        (void)pthread_cond_wait(&inf->cond, &inf->lock);
                else {
                        struct timespec ts = usec_to_timespec(deadline);
                        if (pthread_cond_timedwait(&inf->cond, &inf->lock, &ts) == ETIMEDOUT &&
                            !cache_has_synced(inf->cache)) {
                                r = -ETIMEDOUT;
                                break;
                        }
                }
        }
        (void)pthread_mutex_unlock(&inf->lock);
        return r;
}

void informer_get_stats(struct informer *inf, struct informer_stats *ret)
{
        (void)pthread_mutex_lock(&inf->lock);
        *ret = inf->stats;
        (void)snprintf(ret->resource_version, sizeof(ret->resource_version), "%s", inf->rv);
        (void)pthread_mutex_unlock(&inf->lock);
}
