/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-agent-ports.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/macro.h"

#define FAKE_WAIT_USEC (5 * USEC_PER_SEC)

static void deadline_in(struct timespec *ts, usec_t d)
{
        *ts = usec_to_timespec(now_realtime() + d);
}

/* ---- fetch ---- */

static struct fake_fetch_rule *rule_find(struct fake_fetch *f, const char *uri)
{
        for (size_t i = 0; i < f->n_rules; i++)
                if (streq(f->rules[i].uri, uri))
                        return &f->rules[i];
        return NULL;
}

static struct fake_fetch_rule *rule_get(struct fake_fetch *f, const char *uri)
{
        struct fake_fetch_rule *r = rule_find(f, uri);

        if (r || f->n_rules == FAKE_AGENT_MAX)
                return r;
        r = &f->rules[f->n_rules];
        *r = (struct fake_fetch_rule){ .uri = strdup(uri) };
        if (!r->uri)
                return NULL; /* out of memory: no rule (the allocation-fault torture) */
        f->n_rules++;
        return r;
}

static int fake_fetch_fn(void *userdata, const char *uri, const char *dir,
                         const atomic_bool *cancel, char *reterr, size_t len_err)
{
        struct fake_fetch *f = userdata;
        struct fake_fetch_rule *rule;
        char path[4096];
        FILE *out;
        int r = 0;

        pthread_mutex_lock(&f->lock);
        if (f->n_calls < ELEMENTSOF(f->calls) && (f->calls[f->n_calls] = strdup(uri)))
                f->n_calls++;
        f->running++;
        pthread_cond_broadcast(&f->cond);
        rule = rule_find(f, uri);
        while (rule && rule->block && !rule->released && !atomic_load(cancel)) {
                struct timespec ts;
                deadline_in(&ts, 10 * USEC_PER_MSEC); /* the cancel flag is polled */
                (void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
        }
        if (rule && rule->block && !rule->released) {
                f->cancelled++;
                r = -ECANCELED;
                (void)snprintf(reterr, len_err, "cancelled");
        } else if (rule && rule->reason) {
                r = -EIO;
                (void)snprintf(reterr, len_err, "%s", rule->reason);
        }
        f->running--;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
        if (r < 0)
                return r;
        (void)snprintf(path, sizeof(path), "%s/model.bin", dir);
        out = fopen(path, "we");
        if (!out) {
                (void)snprintf(reterr, len_err, "cannot write %s", path);
                return -EIO;
        }
        (void)fprintf(out, "%s\n", uri);
        (void)fclose(out);
        return 0;
}

static void fake_worker_end(void *userdata)
{
        struct fake_fetch *f = userdata;

        pthread_mutex_lock(&f->lock);
        f->worker_ends++;
        pthread_mutex_unlock(&f->lock);
}

static const struct agent_fetch_ops fake_fetch_ops = { .fetch = fake_fetch_fn,
                                                       .worker_end = fake_worker_end };

void fake_fetch_init(struct fake_fetch *f)
{
        *f = (struct fake_fetch){ .port = { &fake_fetch_ops, f } };
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->cond, NULL);
}

void fake_fetch_release_all(struct fake_fetch *f)
{
        for (size_t i = 0; i < f->n_rules; i++) {
                free(f->rules[i].uri);
                free(f->rules[i].reason);
        }
        for (size_t i = 0; i < f->n_calls; i++)
                free(f->calls[i]);
        pthread_cond_destroy(&f->cond);
        pthread_mutex_destroy(&f->lock);
}

void fake_fetch_block(struct fake_fetch *f, const char *uri)
{
        struct fake_fetch_rule *r;

        pthread_mutex_lock(&f->lock);
        r = rule_get(f, uri);
        if (r)
                r->block = true;
        pthread_mutex_unlock(&f->lock);
}

void fake_fetch_fail(struct fake_fetch *f, const char *uri, const char *reason)
{
        struct fake_fetch_rule *r;

        pthread_mutex_lock(&f->lock);
        r = rule_get(f, uri);
        if (r) {
                free(r->reason);
                r->reason = reason ? strdup(reason) : NULL;
        }
        pthread_mutex_unlock(&f->lock);
}

void fake_fetch_release(struct fake_fetch *f, const char *uri)
{
        struct fake_fetch_rule *r;

        pthread_mutex_lock(&f->lock);
        r = rule_find(f, uri);
        if (r)
                r->released = true;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
}

static size_t fetch_count_locked(struct fake_fetch *f, const char *uri)
{
        size_t n = 0;

        for (size_t i = 0; i < f->n_calls; i++)
                if (!uri || streq(f->calls[i], uri))
                        n++;
        return n;
}

size_t fake_fetch_count(struct fake_fetch *f, const char *uri)
{
        size_t n;

        pthread_mutex_lock(&f->lock);
        n = fetch_count_locked(f, uri);
        pthread_mutex_unlock(&f->lock);
        return n;
}

bool fake_fetch_wait_count(struct fake_fetch *f, const char *uri, size_t n)
{
        struct timespec ts;
        bool ok;

        deadline_in(&ts, FAKE_WAIT_USEC);
        pthread_mutex_lock(&f->lock);
        while (fetch_count_locked(f, uri) < n)
                if (pthread_cond_timedwait(&f->cond, &f->lock, &ts) == ETIMEDOUT)
                        break;
        ok = fetch_count_locked(f, uri) >= n;
        pthread_mutex_unlock(&f->lock);
        return ok;
}

/* ---- repository ---- */

static int cmp_entry(const void *x, const void *y)
{
        return strcmp(((const struct repo_entry *)x)->name, ((const struct repo_entry *)y)->name);
}

static struct fake_repo_model *model_find(struct fake_repo *r, const char *name)
{
        for (size_t i = 0; i < r->n_models; i++)
                if (streq(r->models[i].name, name))
                        return &r->models[i];
        return NULL;
}

static void model_set(struct fake_repo *r, const char *name, enum server_state state)
{
        struct fake_repo_model *m = model_find(r, name);

        if (!m && r->n_models < FAKE_AGENT_MAX) {
                m = &r->models[r->n_models];
                m->name = strdup(name);
                if (!m->name)
                        return; /* out of memory: not listed */
                r->n_models++;
        }
        if (m)
                m->state = state;
}

static void record(struct fake_repo *r, const char *verb, const char *name)
{
        char *s = NULL;

        if (r->n_calls < ELEMENTSOF(r->calls) && asprintf(&s, "%s:%s", verb, name) >= 0)
                r->calls[r->n_calls++] = s;
        pthread_cond_broadcast(&r->cond);
}

static int fake_open(void *userdata, long timeout_sec, void **ret_conn)
{
        (void)timeout_sec;
        *ret_conn = userdata;
        return 0;
}

static void fake_close(void *conn)
{
        (void)conn;
}

static int fake_index(void *conn, struct repo_index *ret, char *reterr, size_t len)
{
        struct fake_repo *r = conn;
        struct repo_index ix = { 0 };

        pthread_mutex_lock(&r->lock);
        r->indexes++;
        if (r->down) {
                pthread_mutex_unlock(&r->lock);
                (void)snprintf(reterr, len, "connection refused");
                return -EIO;
        }
        ix.items = calloc(r->n_models + 1, sizeof(*ix.items));
        for (size_t i = 0; ix.items && i < r->n_models; i++) {
                ix.items[ix.n] = (struct repo_entry){ .name = strdup(r->models[i].name),
                                                      .state = r->models[i].state };
                if (ix.items[ix.n].name)
                        ix.n++;
        }
        pthread_mutex_unlock(&r->lock);
        if (!ix.items)
                return -ENOMEM;
        qsort(ix.items, ix.n, sizeof(*ix.items), cmp_entry);
        *ret = ix;
        return 0;
}

static int fake_load(void *conn, const char *name, char *reterr, size_t len)
{
        struct fake_repo *r = conn;
        int ret = 0;

        pthread_mutex_lock(&r->lock);
        record(r, "load", name);
        r->running_loads++;
        pthread_cond_broadcast(&r->cond);
        while (r->block_loads)
                pthread_cond_wait(&r->cond, &r->lock);
        r->running_loads--;
        if (r->fail_name && streq(r->fail_name, name)) {
                (void)snprintf(reterr, len, "%s", r->fail_reason);
                ret = -EIO;
        } else {
                model_set(r, name, SERVER_READY);
        }
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        return ret;
}

static int fake_unload(void *conn, const char *name, char *reterr, size_t len)
{
        struct fake_repo *r = conn;
        struct fake_repo_model *m;

        (void)reterr;
        (void)len;
        pthread_mutex_lock(&r->lock);
        record(r, "unload", name);
        m = model_find(r, name);
        if (m)
                m->state = SERVER_UNAVAILABLE;
        pthread_mutex_unlock(&r->lock);
        return 0;
}

static const struct agent_repo_ops fake_repo_ops = {
        .open = fake_open,
        .close = fake_close,
        .index = fake_index,
        .load = fake_load,
        .unload = fake_unload,
};

void fake_repo_init(struct fake_repo *r)
{
        *r = (struct fake_repo){ .port = { &fake_repo_ops, r } };
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->cond, NULL);
}

void fake_repo_release_all(struct fake_repo *r)
{
        for (size_t i = 0; i < r->n_models; i++)
                free(r->models[i].name);
        for (size_t i = 0; i < r->n_calls; i++)
                free(r->calls[i]);
        free(r->fail_name);
        free(r->fail_reason);
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
}

void fake_repo_set(struct fake_repo *r, const char *name, enum server_state state)
{
        pthread_mutex_lock(&r->lock);
        model_set(r, name, state);
        pthread_mutex_unlock(&r->lock);
}

void fake_repo_block_loads(struct fake_repo *r, bool block)
{
        pthread_mutex_lock(&r->lock);
        r->block_loads = block;
        pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
}

void fake_repo_set_down(struct fake_repo *r, bool down)
{
        pthread_mutex_lock(&r->lock);
        r->down = down;
        pthread_mutex_unlock(&r->lock);
}

void fake_repo_release_loads(struct fake_repo *r)
{
        fake_repo_block_loads(r, false);
}

void fake_repo_fail_load(struct fake_repo *r, const char *name, const char *reason)
{
        pthread_mutex_lock(&r->lock);
        free(r->fail_name);
        free(r->fail_reason);
        r->fail_name = name ? strdup(name) : NULL;
        r->fail_reason = strdup(reason ? reason : "");
        if (!r->fail_name || !r->fail_reason) { /* none, or out of memory */
                free(r->fail_name);
                free(r->fail_reason);
                r->fail_name = r->fail_reason = NULL;
        }
        pthread_mutex_unlock(&r->lock);
}

size_t fake_repo_count(struct fake_repo *r, const char *call)
{
        size_t n = 0;

        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < r->n_calls; i++)
                if (!call || streq(r->calls[i], call))
                        n++;
        pthread_mutex_unlock(&r->lock);
        return n;
}

size_t fake_repo_indexes(struct fake_repo *r)
{
        size_t n;

        pthread_mutex_lock(&r->lock);
        n = r->indexes;
        pthread_mutex_unlock(&r->lock);
        return n;
}

bool fake_repo_wait_running(struct fake_repo *r, unsigned n)
{
        struct timespec ts;
        bool ok;

        deadline_in(&ts, FAKE_WAIT_USEC);
        pthread_mutex_lock(&r->lock);
        while (r->running_loads < n)
                if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT)
                        break;
        ok = r->running_loads >= n;
        pthread_mutex_unlock(&r->lock);
        return ok;
}

/* ---- status sink ---- */

static int fake_sink_write(void *userdata, const json_t *data, char *reterr, size_t len_err)
{
        struct fake_sink *s = userdata;
        json_t *copy;
        int r = 0;

        pthread_mutex_lock(&s->lock);
        s->calls++;
        s->waiting++;
        pthread_cond_broadcast(&s->cond);
        while (s->block)
                pthread_cond_wait(&s->cond, &s->lock);
        s->waiting--;
        if (s->fail < 0 && s->fail_times > 0) {
                s->fail_times--;
                r = s->fail;
                (void)snprintf(reterr, len_err, "%s", s->fail_message);
        } else if (s->n_reports == ELEMENTSOF(s->reports)) {
                r = -ENOSPC;
                (void)snprintf(reterr, len_err, "fake sink full");
        } else if (!(copy = json_deep_copy(data))) {
                r = -ENOMEM;
        } else {
                s->reports[s->n_reports++] = copy;
        }
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
        return r;
}

static const struct status_sink_ops fake_sink_ops = { .write = fake_sink_write };

void fake_sink_init(struct fake_sink *s)
{
        *s = (struct fake_sink){ .port = { &fake_sink_ops, s } };
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
}

void fake_sink_release_all(struct fake_sink *s)
{
        for (size_t i = 0; i < s->n_reports; i++)
                json_decref(s->reports[i]);
        pthread_cond_destroy(&s->cond);
        pthread_mutex_destroy(&s->lock);
}

void fake_sink_fail(struct fake_sink *s, int err, const char *message, unsigned times)
{
        pthread_mutex_lock(&s->lock);
        s->fail = err;
        s->fail_times = times;
        (void)snprintf(s->fail_message, sizeof(s->fail_message), "%s", message ? message : "");
        pthread_mutex_unlock(&s->lock);
}

void fake_sink_block(struct fake_sink *s, bool block)
{
        pthread_mutex_lock(&s->lock);
        s->block = block;
        pthread_cond_broadcast(&s->cond);
        pthread_mutex_unlock(&s->lock);
}

size_t fake_sink_count(struct fake_sink *s)
{
        size_t n;

        pthread_mutex_lock(&s->lock);
        n = s->n_reports;
        pthread_mutex_unlock(&s->lock);
        return n;
}

size_t fake_sink_calls(struct fake_sink *s)
{
        size_t n;

        pthread_mutex_lock(&s->lock);
        n = s->calls;
        pthread_mutex_unlock(&s->lock);
        return n;
}

json_t *fake_sink_report(struct fake_sink *s, size_t i)
{
        json_t *r = NULL;

        pthread_mutex_lock(&s->lock);
        if (i == SIZE_MAX && s->n_reports > 0)
                i = s->n_reports - 1;
        if (i < s->n_reports)
                r = json_incref(s->reports[i]);
        pthread_mutex_unlock(&s->lock);
        return r;
}

bool fake_sink_wait_count(struct fake_sink *s, size_t n)
{
        struct timespec ts;
        bool ok;

        deadline_in(&ts, FAKE_WAIT_USEC);
        pthread_mutex_lock(&s->lock);
        while (s->n_reports < n)
                if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
                        break;
        ok = s->n_reports >= n;
        pthread_mutex_unlock(&s->lock);
        return ok;
}

bool fake_sink_wait_blocked(struct fake_sink *s, unsigned n)
{
        struct timespec ts;
        bool ok;

        deadline_in(&ts, FAKE_WAIT_USEC);
        pthread_mutex_lock(&s->lock);
        while (s->waiting < n)
                if (pthread_cond_timedwait(&s->cond, &s->lock, &ts) == ETIMEDOUT)
                        break;
        ok = s->waiting >= n;
        pthread_mutex_unlock(&s->lock);
        return ok;
}
