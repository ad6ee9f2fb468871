/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/events.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/log.h"

#define AGGREGATED_PREFIX "(combined from similar events): "

static const struct gvr events_gvr = { "", "v1", "events" };

static const char *const event_type_names[EVENT_TYPE__MAX] = {
        [EVENT_NORMAL] = "Normal",
        [EVENT_WARNING] = "Warning",
};

const char *event_type_to_string(enum event_type t)
{
        if (t < 0 || t >= EVENT_TYPE__MAX)
                return NULL;
        return event_type_names[t];
}

/* ---- correlator (pure apart from the clock) ---- */

struct event_correlator {
        struct event_correlator_options opts; /* component/host point at the copies below */
        char *component, *host;               /* owned */
        json_t *agg;  /* owned LRU: aggregate key -> { "msgs": {message: true}, "last": usec } */
        json_t *obs;  /* owned LRU: event key -> { "count", "name", "first" } */
        json_t *spam; /* owned LRU: object key -> { "tokens": real, "last": usec } */
        unsigned seq;
};

struct event_correlator *event_correlator_new(const struct event_correlator_options *opts)
{
        struct event_correlator *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        if (opts)
                c->opts = *opts;
        if (!c->opts.max_similar)
                c->opts.max_similar = 10;
        if (!c->opts.aggregate_interval)
                c->opts.aggregate_interval = 600 * USEC_PER_SEC;
        if (!c->opts.spam_burst)
                c->opts.spam_burst = 25;
        if (!c->opts.spam_refill)
                c->opts.spam_refill = 300 * USEC_PER_SEC;
        if (!c->opts.lru_size)
                c->opts.lru_size = 4096;
        if (!c->opts.clock)
                c->opts.clock = &clock_monotonic;
        c->component = strdup(c->opts.component ? c->opts.component : "modelplane");
        c->host = strdup(c->opts.host ? c->opts.host : "");
        c->agg = json_object();
        c->obs = json_object();
        c->spam = json_object();
        if (!c->component || !c->host || !c->agg || !c->obs || !c->spam)
                return event_correlator_free(c);
        c->opts.component = c->component;
        c->opts.host = c->host;
        return c;
}

struct event_correlator *event_correlator_free(struct event_correlator *c)
{
        if (!c)
                return NULL;
        free(c->component);
        free(c->host);
        json_decref(c->agg);
        json_decref(c->obs);
        json_decref(c->spam);
        free(c);
        return NULL;
}

/* LRU on a jansson object: iteration order is insertion order, so re-inserting moves a key to
 * the back and the front is the least recently used. */
static json_t *lru_take(json_t *cache, const char *key)
{
        json_t *v = json_incref(json_object_get(cache, key));

        if (v)
                (void)json_object_del(cache, key);
        return v; /* new reference or NULL */
}

static int lru_put(json_t *cache, const char *key, json_t *v /* steals */, size_t max)
{
        if (json_object_set_new_nocheck(cache, key, v) < 0)
                return -ENOMEM;
        while (json_object_size(cache) > max) {
                void *it = json_object_iter(cache);
                if (!it)
                        break;
                (void)json_object_del(cache, json_object_iter_key(it));
        }
        return 0;
}

static int join_key(struct buf *b, const char *const *parts, size_t n)
{
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                r = buf_puts(b, parts[i] ? parts[i] : "");
                if (r >= 0)
                        r = buf_putc(b, '\x1f');
        }
        return r;
}

/* The spam key (source and object), the aggregation key (+ type, reason) and the event key
 * (+ message), each extending the one before. */
static int build_keys(const struct event_correlator *c, const struct event_object_ref *obj,
                      enum event_type type, const char *reason, const char *message,
                      struct buf *skey, struct buf *akey, struct buf *ekey)
{
        const char *const sparts[] = { c->component, c->host,  obj->kind,       obj->namespace,
                                       obj->name,    obj->uid, obj->api_version };
        const char *const aparts[] = { event_type_to_string(type), reason };
        int r;

        r = join_key(skey, sparts, ELEMENTSOF(sparts));
        if (r >= 0)
                r = buf_puts(akey, buf_str(skey));
        if (r >= 0)
                r = join_key(akey, aparts, ELEMENTSOF(aparts));
        if (r >= 0)
                r = buf_puts(ekey, buf_str(akey));
        if (r >= 0)
                r = buf_puts(ekey, message);
        return r;
}

/* 1. aggregation by everything but the message: past max_similar distinct messages within the
 * interval, the Event is keyed without its message and says it combines similar ones. Sets
 * d->message and *ret_key (@ekey or @akey). */
static int aggregate(struct event_correlator *c, const char *akey, const char *ekey,
                     const char *message, usec_t now, struct event_decision *d,
                     const char **ret_key)
{
        json_auto_t *rec = lru_take(c->agg, akey);
        json_t *msgs;

        if (rec && now - (usec_t)json_integer_value(json_object_get(rec, "last")) >
                           c->opts.aggregate_interval)
                json_decref(TAKE_PTR(rec));
        if (!rec) {
                rec = json_pack("{s:{},s:I}", "msgs", "last", (json_int_t)now);
                if (!rec)
                        return -ENOMEM;
        }
        (void)json_object_set_new(rec, "last", json_integer((json_int_t)now));
        msgs = json_object_get(rec, "msgs");
        if (json_object_set_new_nocheck(msgs, message, json_true()) < 0)
                return -ENOMEM;
        if (json_object_size(msgs) < c->opts.max_similar) {
                *ret_key = ekey;
                (void)snprintf(d->message, sizeof(d->message), "%.*s", EVENT_MESSAGE_MAX, message);
        } else {
                /* keep the set bounded: forget the oldest message */
                void *it = json_object_iter(msgs);
                if (it)
                        (void)json_object_del(msgs, json_object_iter_key(it));
                *ret_key = akey;
                (void)snprintf(d->message, sizeof(d->message), AGGREGATED_PREFIX "%.*s",
                               EVENT_MESSAGE_MAX, message);
        }
        return lru_put(c->agg, akey, TAKE_PTR(rec), c->opts.lru_size);
}

/* 2. deduplication: the same key again patches the existing Event */
static int deduplicate(struct event_correlator *c, const char *key,
                       const struct event_object_ref *obj, usec_t now_real,
                       struct event_decision *d)
{
        json_auto_t *o = lru_take(c->obs, key);

        if (o) {
                d->action = EVENT_ACTION_PATCH;
                d->count = (unsigned)json_integer_value(json_object_get(o, "count")) + 1;
                (void)snprintf(d->name, sizeof(d->name), "%s",
                               json_string_value(json_object_get(o, "name")));
                d->first_seen = (usec_t)json_integer_value(json_object_get(o, "first"));
                json_decref(TAKE_PTR(o));
        } else {
                d->action = EVENT_ACTION_CREATE;
                d->count = 1;
                /* client-go: "<name>.<hex nanoseconds>"; the sequence keeps names unique */
                (void)snprintf(d->name, sizeof(d->name), "%.*s.%llx", 200, obj->name,
                               (unsigned long long)(now_real * 1000ULL + (c->seq++ % 1000U)));
                d->first_seen = now_real;
        }
        o = json_pack("{s:I,s:s,s:I}", "count", (json_int_t)d->count, "name", d->name, "first",
                      (json_int_t)d->first_seen);
        if (!o)
                return -ENOMEM;
        return lru_put(c->obs, key, TAKE_PTR(o), c->opts.lru_size);
}

/* 3. spam filter per involved object: token bucket */
static int spam_filter(struct event_correlator *c, const char *skey, usec_t now,
                       struct event_decision *d)
{
        json_auto_t *s = lru_take(c->spam, skey);
        double tokens = s ? json_real_value(json_object_get(s, "tokens"))
                          : (double)c->opts.spam_burst;
        usec_t last = s ? (usec_t)json_integer_value(json_object_get(s, "last")) : now;

        json_decref(TAKE_PTR(s));
        if (now > last)
                tokens += (double)(now - last) / (double)c->opts.spam_refill;
        if (tokens > (double)c->opts.spam_burst)
                tokens = (double)c->opts.spam_burst;
        if (tokens >= 1.0)
                tokens -= 1.0;
        else
                d->action = EVENT_ACTION_DROP;
        s = json_pack("{s:f,s:I}", "tokens", tokens, "last", (json_int_t)MAX(now, last));
        if (!s)
                return -ENOMEM;
        return lru_put(c->spam, skey, TAKE_PTR(s), c->opts.lru_size);
}

int event_correlate(struct event_correlator *c, const struct event_object_ref *obj,
                    enum event_type type, const char *reason, const char *message, usec_t now_real,
                    struct event_decision *ret)
{
        CLEANUP(buf_releasep) struct buf skey = BUF_INIT(8192);
        CLEANUP(buf_releasep) struct buf akey = BUF_INIT(8192);
        CLEANUP(buf_releasep) struct buf ekey = BUF_INIT(16384);
        struct event_decision d = { 0 };
        const char *key;
        usec_t now;
        int r;

        if (!c || !obj || !obj->name || !obj->kind || !reason || !message || !ret ||
            !event_type_to_string(type))
                return -EINVAL;
        now = clock_now(c->opts.clock);

        r = build_keys(c, obj, type, reason, message, &skey, &akey, &ekey);
        if (r < 0)
                return r;
        r = aggregate(c, buf_str(&akey), buf_str(&ekey), message, now, &d, &key);
        if (r < 0)
                return r;
        r = deduplicate(c, key, obj, now_real, &d);
        if (r < 0)
                return r;
        r = spam_filter(c, buf_str(&skey), now, &d);
        if (r < 0)
                return r;

        *ret = d;
        return 0;
}

/* ---- recorder ---- */

struct event_recorder {
        struct event_correlator *corr; /* owned */
        struct kube_client *client;    /* owned; its own budget (kube_client_dup_budget) */
        size_t queue_max;
        unsigned max_tries;
        usec_t retry_sleep;

        pthread_mutex_t lock;
        pthread_cond_t cond; /* work queued, idle, or stop */
        json_t *queue;       /* owned; array of { ns, name, create, patch|null } */
        json_t *pending;     /* owned; Event name -> its item in queue (not sent yet) */
        bool busy;
        bool stop;
        pthread_t thread;
        bool started;
        struct event_recorder_stats st;
};

static json_t *event_body(struct event_recorder *r, const struct event_object_ref *obj,
                          const char *ns, enum event_type type, const char *reason,
                          const struct event_decision *d, const char *first, const char *now)
{
        json_t *involved = json_pack("{s:s,s:s}", "kind", obj->kind, "name", obj->name);

        if (!involved)
                return NULL;
        if (obj->api_version)
                (void)json_object_set_new(involved, "apiVersion", json_string(obj->api_version));
        if (obj->namespace)
                (void)json_object_set_new(involved, "namespace", json_string(obj->namespace));
        if (obj->uid)
                (void)json_object_set_new(involved, "uid", json_string(obj->uid));
        if (obj->resource_version)
                (void)json_object_set_new(involved, "resourceVersion",
                                          json_string(obj->resource_version));
        return json_pack("{s:s,s:s,s:{s:s,s:s},s:o,s:s,s:s,s:s,s:i,s:s,s:s,s:{s:s,s:s},s:s,s:s}",
                         "apiVersion", "v1", "kind", "Event", "metadata", "name", d->name,
                         "namespace", ns, "involvedObject", involved, "reason", reason, "message",
                         d->message, "type", event_type_to_string(type), "count", (int)d->count,
                         "firstTimestamp", first, "lastTimestamp", now, "source", "component",
                         r->corr->component, "host", r->corr->host, "reportingComponent",
                         r->corr->component, "reportingInstance", r->corr->host);
}

/* Folds decision d into the queued item of the same Event: count, message, lastTimestamp of the
 * body to create and of the patch (when the Event exists already). Called under the lock. */
static int coalesce(json_t *item, const struct event_decision *d, const char *now)
{
        json_t *targets[] = { json_object_get(item, "create"), json_object_get(item, "patch") };

        for (size_t i = 0; i < ELEMENTSOF(targets); i++) {
                if (!json_is_object(targets[i]))
                        continue;
                if (json_object_set_new(targets[i], "count", json_integer(d->count)) < 0 ||
                    json_object_set_new(targets[i], "message", json_string(d->message)) < 0 ||
                    json_object_set_new(targets[i], "lastTimestamp", json_string(now)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int event_recorder_emit(struct event_recorder *r, const struct event_object_ref *obj,
                        enum event_type type, const char *reason, const char *fmt, ...)
{
        char message[EVENT_MESSAGE_MAX + 1], first[40], now[40];
        struct event_decision d;
        json_t *create, *patch = NULL, *item;
        const char *ns;
        usec_t t = now_realtime();
        va_list ap;
        int k;

        if (!r || !obj || !obj->name || !obj->kind || !reason || !fmt)
                return -EINVAL;
        va_start(ap, fmt);
        (void)vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        ns = obj->namespace && *obj->namespace ? obj->namespace : "default";

        (void)pthread_mutex_lock(&r->lock);
        r->st.emitted++;
        k = event_correlate(r->corr, obj, type, reason, message, t, &d);
        if (k < 0 || d.action == EVENT_ACTION_DROP) {
                if (k >= 0)
                        r->st.dropped_spam++;
                else
                        r->st.dropped_failed++;
                (void)pthread_mutex_unlock(&r->lock);
                return k < 0 ? k : 0;
        }
        if (d.action == EVENT_ACTION_PATCH)
                r->st.aggregated++; /* a count increment of an existing Event */
        if (format_rfc3339(d.first_seen, first, sizeof(first)) < 0 ||
            format_rfc3339(t, now, sizeof(now)) < 0) {
                r->st.dropped_failed++;
                (void)pthread_mutex_unlock(&r->lock);
                return -EINVAL;
        }
        item = json_object_get(r->pending, d.name);
        if (item) {
                /* the Event is still queued: the queued write carries the new count */
                k = coalesce(item, &d, now);
                r->st.coalesced++;
                if (k < 0)
                        r->st.dropped_failed++;
                (void)pthread_mutex_unlock(&r->lock);
                return k;
        }
        if (json_array_size(r->queue) >= r->queue_max) {
                r->st.dropped_queue_full++;
                (void)pthread_mutex_unlock(&r->lock);
                return -ENOBUFS;
        }
        create = event_body(r, obj, ns, type, reason, &d, first, now);
        if (create && d.action == EVENT_ACTION_PATCH)
                patch = json_pack("{s:i,s:s,s:s}", "count", (int)d.count, "message", d.message,
                                  "lastTimestamp", now);
        item = create ? json_pack("{s:s,s:s,s:o,s:o?}", "ns", ns, "name", d.name, "create", create,
                                  "patch", patch)
                      : NULL;
        if (!item || json_object_set(r->pending, d.name, item) < 0 ||
            json_array_append_new(r->queue, item) < 0) {
                if (item)
                        (void)json_object_del(r->pending, d.name);
                r->st.dropped_failed++;
                (void)pthread_mutex_unlock(&r->lock);
                return -ENOMEM;
        }
        (void)pthread_cond_broadcast(&r->cond);
        (void)pthread_mutex_unlock(&r->lock);
        return 0;
}

/* One send with retries. Returns true when the API server took it. */
static bool send_item(struct event_recorder *r, json_t *item)
{
        const char *ns = json_string_value(json_object_get(item, "ns"));
        const char *name = json_string_value(json_object_get(item, "name"));
        json_t *create = json_object_get(item, "create");
        json_t *patch = json_object_get(item, "patch");
        struct kube_status st = { 0 };
        int k = 0;

        if (json_is_null(patch))
                patch = NULL;
        for (unsigned attempt = 0; attempt < r->max_tries; attempt++) {
                if (patch) {
                        k = kube_patch(r->client, &events_gvr, ns, name, KUBE_PATCH_MERGE, patch,
                                       NULL, NULL, &st);
                        if (k == -ENOENT) {
                                /* the Event expired (apiserver --event-ttl): create it anew */
                                patch = NULL;
                                attempt--;
                                continue;
                        }
                } else
                        k = kube_create(r->client, &events_gvr, ns, create, NULL, NULL, &st);
                if (k >= 0)
                        return true;
                /* a create tried again after a transient error finds the Event there: the earlier
                 * try was stored, only its answer was lost (a timeout). Names are unique per
                 * Event, so it is this one (client-go treats AlreadyExists as written too). */
                if (k == -EEXIST && !patch && attempt > 0)
                        return true;
                if (k == -EEXIST || k == -EINVAL || k == -EACCES || k == -ENOMEM)
                        break;
                /* transient: wait and retry, unless stopping */
                (void)pthread_mutex_lock(&r->lock);
                usec_t deadline = now_monotonic() + r->retry_sleep;
                while (!r->stop && now_monotonic() < deadline) {
                        struct timespec ts = usec_to_timespec(deadline);
                        (void)pthread_cond_timedwait(&r->cond, &r->lock, &ts);
                }
                bool stopping = r->stop;
                (void)pthread_mutex_unlock(&r->lock);
                if (stopping)
                        break;
        }
        (void)log_warn_errno(k, "Failed to write event %s/%s, dropping it: %s", ns, name,
                             st.message);
        return false;
}

static void *sender(void *p)
{
        struct event_recorder *r = p;

        (void)pthread_mutex_lock(&r->lock);
        for (;;) {
                json_t *item;
                bool ok;

                while (!r->stop && json_array_size(r->queue) == 0)
                        (void)pthread_cond_wait(&r->cond, &r->lock);
                if (r->stop)
                        break;
                item = json_incref(json_array_get(r->queue, 0));
                (void)json_array_remove(r->queue, 0);
                /* from now on a repeat is a new write (PATCH of the count) */
                (void)json_object_del(r->pending, json_string_value(json_object_get(item, "name")));
                r->busy = true;
                (void)pthread_mutex_unlock(&r->lock);
                ok = send_item(r, item);
                json_decref(item);
                (void)pthread_mutex_lock(&r->lock);
                r->busy = false;
                if (ok)
                        r->st.sent++;
                else
                        r->st.dropped_failed++;
                (void)pthread_cond_broadcast(&r->cond);
        }
        (void)pthread_mutex_unlock(&r->lock);
        return NULL;
}

int event_recorder_new(const struct event_recorder_options *opts, struct event_recorder **ret)
{
        struct event_recorder *r;
        pthread_condattr_t attr;
        int k;

        if (!opts || !opts->client || !ret)
                return -EINVAL;
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        (void)pthread_mutex_init(&r->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&r->cond, &attr);
        (void)pthread_condattr_destroy(&attr);
        r->queue_max = opts->queue_max ? opts->queue_max : 1000;
        r->max_tries = opts->max_tries ? opts->max_tries : 12;
        r->retry_sleep = opts->retry_sleep ? opts->retry_sleep : 10 * USEC_PER_SEC;
        r->queue = json_array();
        r->pending = json_object();
        r->corr = event_correlator_new(&opts->correlator);
        if (!r->queue || !r->pending || !r->corr) {
                event_recorder_free(r);
                return -ENOMEM;
        }
        r->st.queue_max = r->queue_max;
        /* Events have their own budget: they never wait for, nor slow, the reconciles' writes */
        k = kube_client_dup_budget(opts->client, opts->qps > 0 ? opts->qps : EVENT_QPS_DEFAULT,
                                   opts->burst ? opts->burst : EVENT_BURST_DEFAULT, &r->client);
        if (k >= 0) {
                k = -pthread_create(&r->thread, NULL, sender, r);
                r->started = k == 0;
        }
        if (k < 0) {
                event_recorder_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

struct event_recorder *event_recorder_free(struct event_recorder *r)
{
        if (!r)
                return NULL;
        if (r->started) {
                (void)pthread_mutex_lock(&r->lock);
                r->stop = true;
                (void)pthread_cond_broadcast(&r->cond);
                (void)pthread_mutex_unlock(&r->lock);
                (void)pthread_join(r->thread, NULL);
        }
        kube_client_free(r->client);
        event_correlator_free(r->corr);
        json_decref(r->queue);
        json_decref(r->pending);
        (void)pthread_cond_destroy(&r->cond);
        (void)pthread_mutex_destroy(&r->lock);
        free(r);
        return NULL;
}

int event_recorder_flush(struct event_recorder *r, usec_t timeout)
{
        usec_t deadline = now_monotonic() + timeout;
        int k = 0;

        if (!r)
                return -EINVAL;
        (void)pthread_mutex_lock(&r->lock);
        while (json_array_size(r->queue) > 0 || r->busy) {
                struct timespec ts = usec_to_timespec(deadline);
                if (pthread_cond_timedwait(&r->cond, &r->lock, &ts) == ETIMEDOUT &&
                    (json_array_size(r->queue) > 0 || r->busy)) {
                        k = -ETIMEDOUT;
                        break;
                }
        }
        (void)pthread_mutex_unlock(&r->lock);
        return k;
}

void event_recorder_stats(struct event_recorder *r, unsigned *ret_sent, unsigned *ret_dropped)
{
        struct event_recorder_stats st;

        event_recorder_get_stats(r, &st);
        if (ret_sent)
                *ret_sent = (unsigned)st.sent;
        if (ret_dropped)
                *ret_dropped = (unsigned)(st.dropped_spam + st.dropped_queue_full +
                                          st.dropped_failed);
}

void event_recorder_get_stats(struct event_recorder *r, struct event_recorder_stats *ret)
{
        (void)pthread_mutex_lock(&r->lock);
        *ret = r->st;
        ret->queued = json_array_size(r->queue);
        (void)pthread_mutex_unlock(&r->lock);
}
