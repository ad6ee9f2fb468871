/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/batcher.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/batch.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/uuid.h"

#define BATCH_MAX_CALLERS 1024
#define RESPONSE_MAX      ((size_t)256 << 20)

/* One caller in a batch. */
struct waiter {
        struct batch_req req;
        unsigned code;
        char *body;
};

struct batch {
        struct batch *next;
        char *path, *key;
        struct waiter *w[BATCH_MAX_CALLERS];
        size_t n, rows;
        bool closed, done;
        unsigned refs;
        struct timespec deadline;
        pthread_cond_t cond;
};

struct batcher {
        struct batcher_config c;
        char *upstream;
        pthread_mutex_t lock;
        struct batch *open; /* batches still taking callers */
        struct batcher_stats st;
        bool cancelled; /* atomic: batches in flight end (shutdown) */
};

void batcher_cancel(struct batcher *b)
{
        if (b)
                __atomic_store_n(&b->cancelled, true, __ATOMIC_RELAXED);
}

/* Ends a transfer in flight once the batcher is cancelled. */
static int progress(void *userdata, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
        struct batcher *b = userdata;

        (void)dt, (void)dn, (void)ut, (void)un;
        return __atomic_load_n(&b->cancelled, __ATOMIC_RELAXED) ? 1 : 0;
}

int batcher_start(const struct batcher_config *cfg, struct batcher **ret)
{
        struct batcher *b = calloc(1, sizeof(*b));

        if (!b)
                return -ENOMEM;
        b->c = *cfg;
        if (!b->c.max_batch_size)
                b->c.max_batch_size = 32;
        if (!b->c.max_latency_ms)
                b->c.max_latency_ms = 5000;
        if (!b->c.upstream_timeout_sec)
                b->c.upstream_timeout_sec = 600;
        b->upstream = strdup(cfg->upstream);
        if (!b->upstream) {
                free(b);
                return -ENOMEM;
        }
        pthread_mutex_init(&b->lock, NULL);
        *ret = b;
        return 0;
}

struct batcher *batcher_stop(struct batcher *b)
{
        if (!b)
                return NULL;
        /* the proxy has stopped: no caller waits any more */
        pthread_mutex_destroy(&b->lock);
        free(b->upstream);
        free(b);
        return NULL;
}

void batcher_get_stats(struct batcher *b, struct batcher_stats *ret)
{
        pthread_mutex_lock(&b->lock);
        *ret = b->st;
        pthread_mutex_unlock(&b->lock);
}

/* POSTs the merged body; *ret_code 0 when the model server could not be reached. */
static int post(struct batcher *b, const char *path, const char *body, unsigned *ret_code,
                struct buf *resp)
{
        AUTOFREE char *url = NULL;
        struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
        CURL *curl = curl_easy_init();
        long code = 0;
        CURLcode cr = CURLE_OUT_OF_MEMORY;

        if (asprintf(&url, "%s%s", b->upstream, path) < 0)
                url = NULL;
        if (curl && h && url) {
                struct curl_slist *t = curl_slist_append(h, "Expect:");
                h = t ? t : h;
                curl_easy_setopt(curl, CURLOPT_URL, url);
                curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, buf_write_cb);
                curl_easy_setopt(curl, CURLOPT_WRITEDATA, resp);
                curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
                curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)b->c.upstream_timeout_sec);
                curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
                curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
                curl_easy_setopt(curl, CURLOPT_XFERINFODATA, b);
                curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
                cr = curl_easy_perform(curl);
                curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        }
        if (cr != CURLE_OK)
                log_warn("batcher: POST %s: %s", url ? url : path, curl_easy_strerror(cr));
        curl_slist_free_all(h);
        if (curl)
                curl_easy_cleanup(curl);
        *ret_code = cr == CURLE_OK ? (unsigned)code : 0;
        return 0;
}

static char *error_body(const char *msg)
{
        json_t *o = json_pack("{s:s}", "error", msg);
        char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

        json_decref(o);
        return s;
}

/* A 200 answer cut back per caller; an answer that does not add up is a 500 to each. */
static void answer_split(struct batch *bt, const struct batch_req *reqs, const struct buf *resp)
{
        char *out[BATCH_MAX_CALLERS], err[256] = "", id[UUID_STRING_LEN] = "";
        int r;

        if (uuid_random(id) < 0)
                (void)snprintf(id, sizeof(id), "batch");
        r = batch_split(reqs, bt->n, resp->p ? resp->p : "", resp->len, id, out, err, sizeof(err));
        for (size_t i = 0; i < bt->n; i++) {
                bt->w[i]->code = r < 0 ? 500 : 200;
                bt->w[i]->body = r < 0 ? error_body(err[0] ? err : "out of memory") : out[i];
        }
}

/* The model server's failure (or none reached: 502), to every caller. */
static void answer_failure(struct batch *bt, unsigned code, const struct buf *resp)
{
        for (size_t i = 0; i < bt->n; i++) {
                bt->w[i]->code = code ? code : 502;
                bt->w[i]->body = code ? strndup(resp->p ? resp->p : "", resp->len)
                                      : error_body("model server unreachable");
        }
}

/* The merged body could not be made (out of memory): 500 to every caller. */
static void answer_oom(struct batch *bt)
{
        for (size_t i = 0; i < bt->n; i++) {
                bt->w[i]->code = 500;
                bt->w[i]->body = error_body("out of memory");
        }
}

/* Sends a closed batch and fills in every caller's answer. Called without the lock. */
static void run(struct batcher *b, struct batch *bt)
{
        struct batch_req reqs[BATCH_MAX_CALLERS];
        AUTOFREE char *merged = NULL;
        struct buf resp = BUF_INIT(RESPONSE_MAX);
        unsigned code = 0;

        for (size_t i = 0; i < bt->n; i++)
                reqs[i] = bt->w[i]->req;
        merged = batch_merge(reqs, bt->n);
        log_debug("batcher: %zu requests, %zu rows to %s", bt->n, bt->rows, bt->path);
        if (merged)
                (void)post(b, bt->path, merged, &code, &resp);
        if (!merged)
                answer_oom(bt);
        else if (code == 200)
                answer_split(bt, reqs, &resp);
        else
                answer_failure(bt, code, &resp);
        buf_release(&resp);
}

static void unlink_open(struct batcher *b, struct batch *bt)
{
        for (struct batch **p = &b->open; *p; p = &(*p)->next)
                if (*p == bt) {
                        *p = bt->next;
                        return;
                }
}

static struct batch *find_open(struct batcher *b, const char *path, const char *key)
{
        for (struct batch *bt = b->open; bt; bt = bt->next)
                if (streq(bt->path, path) && streq(bt->key, key) && bt->n < BATCH_MAX_CALLERS)
                        return bt;
        return NULL;
}

static struct batch *batch_new(struct batcher *b, const char *path, const char *key)
{
        struct batch *bt = calloc(1, sizeof(*bt));
        pthread_condattr_t ca;

        if (!bt)
                return NULL;
        bt->path = strdup(path);
        bt->key = strdup(key);
        if (!bt->path || !bt->key) {
                free(bt->path);
                free(bt->key);
                free(bt);
                return NULL;
        }
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&bt->cond, &ca);
        pthread_condattr_destroy(&ca);
        clock_gettime(CLOCK_MONOTONIC, &bt->deadline);
        bt->deadline.tv_sec += b->c.max_latency_ms / 1000;
        bt->deadline.tv_nsec += (long)(b->c.max_latency_ms % 1000) * 1000000L;
        if (bt->deadline.tv_nsec >= 1000000000L) {
                bt->deadline.tv_sec++;
                bt->deadline.tv_nsec -= 1000000000L;
        }
        bt->next = b->open;
        b->open = bt;
        return bt;
}

static void batch_unref(struct batch *bt)
{
        if (--bt->refs > 0)
                return;
        pthread_cond_destroy(&bt->cond);
        free(bt->path);
        free(bt->key);
        free(bt);
}

/* A V1 body KServe's batcher refuses: its 400 and words. */
static int refuse_v1(struct batcher *b, int r, unsigned *ret_code, char **ret_body)
{
        pthread_mutex_lock(&b->lock);
        b->st.refused++;
        pthread_mutex_unlock(&b->lock);
        *ret_code = 400;
        *ret_body = error_body(r == -ENOMEM
                                       ? "out of memory"
                                       : "can't Unmarshal body or no instances in the request");
        return *ret_body ? 0 : -ENOMEM;
}

int batcher_submit(struct batcher *b, const char *path, const char *body, size_t len,
                   unsigned *ret_code, char **ret_body)
{
        enum batch_kind kind = batch_kind_of_path(path);
        struct waiter me = { 0 };
        struct batch *bt;
        bool leader;
        int r;

        if (kind < 0)
                return -EMEDIUMTYPE;
        r = batch_req_parse(kind, body, len, &me.req);
        if (r < 0 && kind == BATCH_V1)
                return refuse_v1(b, r, ret_code, ret_body);
        if (r < 0) {
                pthread_mutex_lock(&b->lock);
                b->st.passthrough++;
                pthread_mutex_unlock(&b->lock);
                return -EMEDIUMTYPE; /* V2 the batcher cannot merge: the model server judges it */
        }
        pthread_mutex_lock(&b->lock);
        bt = find_open(b, path, me.req.key);
        leader = !bt;
        if (!bt)
                bt = batch_new(b, path, me.req.key);
        if (!bt) {
                pthread_mutex_unlock(&b->lock);
                batch_req_release(&me.req);
                return -ENOMEM;
        }
        bt->w[bt->n++] = &me;
        bt->rows += me.req.rows;
        bt->refs++;
        b->st.requests++;
        if (bt->rows >= b->c.max_batch_size || bt->n == BATCH_MAX_CALLERS) {
                /* full: closed now, sent by whoever fills it (the opener may still sleep) */
                unlink_open(b, bt);
                bt->closed = true;
                leader = true;
                pthread_cond_broadcast(&bt->cond); /* the opener stops waiting for the latency */
        }
        if (leader && !bt->closed) {
                /* the opener: wait for the latency or for a caller that fills the batch */
                while (!bt->closed &&
                       pthread_cond_timedwait(&bt->cond, &b->lock, &bt->deadline) != ETIMEDOUT)
                        ;
                if (bt->closed)
                        leader = false; /* the filler sends it */
                else {
                        unlink_open(b, bt);
                        bt->closed = true;
                }
        }
        if (leader) {
                b->st.batches++;
                pthread_mutex_unlock(&b->lock);
                run(b, bt);
                pthread_mutex_lock(&b->lock);
                bt->done = true;
                pthread_cond_broadcast(&bt->cond);
        }
        while (!bt->done)
                pthread_cond_wait(&bt->cond, &b->lock);
        batch_unref(bt);
        pthread_mutex_unlock(&b->lock);
        batch_req_release(&me.req);
        *ret_code = me.code;
        *ret_body = me.body;
        return me.body ? 0 : -ENOMEM;
}
