/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-apiserver.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http/server.h"
#include "util/time-util.h"

#define FAKE_PATH_MAX 512

struct fake_apiserver {
        pthread_mutex_t lock;
        pthread_cond_t cond;     /* objects changed, watches ended, or stopping */
        struct http_server *srv; /* NULL while "down" */
        uint16_t port;
        char url[64];

        uint64_t rv;
        uint64_t compacted; /* history up to and including this version is gone */
        json_t *objects;    /* "coll|ns|name" -> object */
        json_t *log;        /* array of { rv, coll, ns, type, object } */

        enum fake_watch_fault watch_fault;
        unsigned watch_fault_n;
        unsigned list_fail_code, list_fail_n;
        unsigned hold_msec;
        unsigned slow_write_msec, slow_write_n;
        unsigned end_gen;
        bool stopping;
        bool paused;

        unsigned n_lists, n_watches;
        json_t *by_method; /* method -> count */
};

struct parsed_path {
        char coll[FAKE_PATH_MAX]; /* "/api/v1|configmaps" */
        char ns[128];
        char name[256];
};

static int parse_path(const char *path, struct parsed_path *ret)
{
        char copy[FAKE_PATH_MAX], *segs[16], *s;
        size_t n = 0, pre, i;
        int k;

        if (strlen(path) >= sizeof(copy))
                return -EINVAL;
        memcpy(copy, path, strlen(path) + 1);
        /* split on '/', skipping empty segments */
        for (s = copy; *s && n < ELEMENTSOF(segs);) {
                char *e;

                while (*s == '/')
                        s++;
                if (!*s)
                        break;
                segs[n++] = s;
                e = strchr(s, '/');
                if (!e)
                        break;
                *e = '\0';
                s = e + 1;
        }
        if (n >= 2 && streq(segs[0], "api"))
                pre = 2;
        else if (n >= 3 && streq(segs[0], "apis"))
                pre = 3;
        else
                return -EINVAL;
        *ret = (struct parsed_path){ 0 };
        i = pre;
        if (n - pre >= 3 && streq(segs[i], "namespaces")) {
                (void)snprintf(ret->ns, sizeof(ret->ns), "%s", segs[i + 1]);
                i += 2;
        }
        if (i >= n)
                return -EINVAL;
        k = snprintf(ret->coll, sizeof(ret->coll), "/%s/%s%s%s|%s", segs[0], segs[1],
                     pre == 3 ? "/" : "", pre == 3 ? segs[2] : "", segs[i]);
        if (k < 0 || (size_t)k >= sizeof(ret->coll))
                return -EINVAL;
        if (i + 1 < n)
                (void)snprintf(ret->name, sizeof(ret->name), "%s", segs[i + 1]);
        return 0;
}

static void object_key(const char *coll, const char *ns, const char *name, char *buf, size_t len)
{
        (void)snprintf(buf, len, "%s|%s|%s", coll, ns, name);
}

static json_t *status_body(unsigned code, const char *reason, const char *message)
{
        return json_pack("{s:s,s:s,s:{},s:s,s:s,s:s,s:i}", "kind", "Status", "apiVersion", "v1",
                         "metadata", "status", code < 300 ? "Success" : "Failure", "message",
                         message, "reason", reason, "code", (int)code);
}

/* Stores a copy of obj (deep) under coll/ns with a new resourceVersion. Called locked. */
static uint64_t put_locked(struct fake_apiserver *f, const char *coll, const char *ns, json_t *obj,
                           json_t **ret_stored)
{
        const char *name = json_string_value(
                json_object_get(json_object_get(obj, "metadata"), "name"));
        char key[FAKE_PATH_MAX * 2], rvs[32];
        json_t *copy, *meta, *ev;
        bool exists;

        if (!name)
                return 0;
        object_key(coll, ns, name, key, sizeof(key));
        exists = json_object_get(f->objects, key) != NULL;
        copy = json_deep_copy(obj);
        if (!copy)
                return 0;
        meta = json_object_get(copy, "metadata");
        f->rv++;
        (void)snprintf(rvs, sizeof(rvs), "%" PRIu64, f->rv);
        (void)json_object_set_new(meta, "resourceVersion", json_string(rvs));
        if (*ns)
                (void)json_object_set_new(meta, "namespace", json_string(ns));
        if (!json_object_get(meta, "uid")) {
                char uid[64];
                (void)snprintf(uid, sizeof(uid), "uid-%" PRIu64, f->rv);
                (void)json_object_set_new(meta, "uid", json_string(uid));
        }
        (void)json_object_set(f->objects, key, copy);
        ev = json_pack("{s:I,s:s,s:s,s:s,s:O}", "rv", (json_int_t)f->rv, "coll", coll, "ns", ns,
                       "type", exists ? "MODIFIED" : "ADDED", "object", copy);
        (void)json_array_append_new(f->log, ev);
        (void)pthread_cond_broadcast(&f->cond);
        if (ret_stored)
                *ret_stored = json_incref(copy);
        json_decref(copy);
        return f->rv;
}

static uint64_t delete_locked(struct fake_apiserver *f, const char *coll, const char *ns,
                              const char *name)
{
        char key[FAKE_PATH_MAX * 2], rvs[32];
        json_t *obj, *copy, *ev;

        object_key(coll, ns, name, key, sizeof(key));
        obj = json_object_get(f->objects, key);
        if (!obj)
                return 0;
        copy = json_deep_copy(obj);
        f->rv++;
        (void)snprintf(rvs, sizeof(rvs), "%" PRIu64, f->rv);
        (void)json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion",
                                  json_string(rvs));
        ev = json_pack("{s:I,s:s,s:s,s:s,s:o}", "rv", (json_int_t)f->rv, "coll", coll, "ns", ns,
                       "type", "DELETED", "object", copy);
        (void)json_array_append_new(f->log, ev);
        (void)json_object_del(f->objects, key);
        (void)pthread_cond_broadcast(&f->cond);
        return f->rv;
}

static bool in_scope(const char *coll, const char *ns, const char *ocoll, const char *ons)
{
        return streq(coll, ocoll) && (!*ns || streq(ns, ons));
}

static int handle_list(struct fake_apiserver *f, const struct parsed_path *p, struct http_req *req,
                       struct http_resp *resp)
{
        const char *limit_s = http_req_query(req, "limit");
        const char *cont = http_req_query(req, "continue");
        unsigned long limit = limit_s ? strtoul(limit_s, NULL, 10) : 0;
        uint64_t list_rv;
        unsigned long offset = 0, i = 0;
        json_t *items = json_array(), *obj, *meta;
        const char *key;
        char rvs[32], next[64] = "", list_kind[128] = "", list_av[128] = "";

        f->n_lists++;
        if (f->list_fail_n > 0) {
                unsigned code = f->list_fail_code;
                f->list_fail_n--;
                json_decref(items);
                http_resp_set_json(resp, code,
                                   status_body(code, code == 410 ? "Expired" : "InternalError",
                                               "injected list failure"));
                return 0;
        }
        list_rv = f->rv;
        if (cont && *cont) {
                uint64_t crv = 0;
                if (sscanf(cont, "%" SCNu64 ":%lu", &crv, &offset) != 2 || crv < f->compacted) {
                        json_decref(items);
                        http_resp_set_json(
                                resp, 410,
                                status_body(410, "Expired",
                                            "The provided continue parameter is too old"));
                        return 0;
                }
                list_rv = crv;
        }
        json_object_foreach(f->objects, key, obj) {
                char oc[FAKE_PATH_MAX], ons[128];
                const char *bar1 = strchr(key, '|'), *bar2 = bar1 ? strchr(bar1 + 1, '|') : NULL;
                const char *bar3 = bar2 ? strchr(bar2 + 1, '|') : NULL;

                if (!bar3)
                        continue;
                (void)snprintf(oc, sizeof(oc), "%.*s", (int)(bar2 - key), key);
                (void)snprintf(ons, sizeof(ons), "%.*s", (int)(bar3 - bar2 - 1), bar2 + 1);
                if (!in_scope(p->coll, p->ns, oc, ons))
                        continue;
                if (i++ < offset)
                        continue;
                if (limit > 0 && json_array_size(items) == limit) {
                        (void)snprintf(next, sizeof(next), "%" PRIu64 ":%lu", list_rv, i - 1);
                        break;
                }
                /* like the real server: items carry no kind/apiVersion, the list does */
                if (!*list_kind && json_string_value(json_object_get(obj, "kind")))
                        (void)snprintf(list_kind, sizeof(list_kind), "%sList",
                                       json_string_value(json_object_get(obj, "kind")));
                if (!*list_av && json_string_value(json_object_get(obj, "apiVersion")))
                        (void)snprintf(list_av, sizeof(list_av), "%s",
                                       json_string_value(json_object_get(obj, "apiVersion")));
                json_t *item = json_copy(obj);
                (void)json_object_del(item, "kind");
                (void)json_object_del(item, "apiVersion");
                (void)json_array_append_new(items, item);
        }
        (void)snprintf(rvs, sizeof(rvs), "%" PRIu64, list_rv);
        meta = json_pack("{s:s}", "resourceVersion", rvs);
        if (*next)
                (void)json_object_set_new(meta, "continue", json_string(next));
        http_resp_set_json(resp, 200,
                           json_pack("{s:s,s:s,s:o,s:o}", "kind", *list_kind ? list_kind : "List",
                                     "apiVersion", *list_av ? list_av : "v1", "metadata", meta,
                                     "items", items));
        return 0;
}

static int append_line(struct buf *b, json_t *ev)
{
        char *s = json_dumps(ev, JSON_COMPACT);
        int r;

        if (!s)
                return -ENOMEM;
        r = buf_puts(b, s);
        if (r >= 0)
                r = buf_putc(b, '\n');
        free(s);
        return r;
}

/* Appends the events after from in scope; returns how many, and the last rv in *last. */
static size_t collect_events(struct fake_apiserver *f, const struct parsed_path *p, uint64_t from,
                             struct buf *out)
{
        size_t i, n = 0;
        json_t *e;

        json_array_foreach(f->log, i, e) {
                uint64_t erv = (uint64_t)json_integer_value(json_object_get(e, "rv"));
                json_t *ev;

                if (erv <= from ||
                    !in_scope(p->coll, p->ns, json_string_value(json_object_get(e, "coll")),
                              json_string_value(json_object_get(e, "ns"))))
                        continue;
                ev = json_pack("{s:O,s:O}", "type", json_object_get(e, "type"), "object",
                               json_object_get(e, "object"));
                if (ev && append_line(out, ev) >= 0)
                        n++;
                json_decref(ev);
        }
        return n;
}

static int handle_watch(struct fake_apiserver *f, const struct parsed_path *p, struct http_req *req,
                        struct http_resp *resp)
{
        const char *rv_s = http_req_query(req, "resourceVersion");
        const char *bm = http_req_query(req, "allowWatchBookmarks");
        const char *to = http_req_query(req, "timeoutSeconds");
        enum fake_watch_fault fault = FAKE_WATCH_OK;
        uint64_t from = rv_s && *rv_s ? strtoull(rv_s, NULL, 10) : f->rv;
        usec_t hold = (usec_t)f->hold_msec * USEC_PER_MSEC, deadline;
        unsigned gen = f->end_gen;
        struct buf out = BUF_INIT(64U * 1024U * 1024U);
        size_t n = 0;

        f->n_watches++;
        if (f->watch_fault_n > 0) {
                fault = f->watch_fault;
                f->watch_fault_n--;
        }
        if (fault == FAKE_WATCH_HTTP_410) {
                http_resp_set_json(resp, 410, status_body(410, "Gone", "injected 410"));
                return 0;
        }
        if (fault == FAKE_WATCH_HTTP_500) {
                http_resp_set_json(resp, 500, status_body(500, "InternalError", "injected 500"));
                return 0;
        }
        if (fault == FAKE_WATCH_ERROR_410 || from < f->compacted) {
                json_t *ev = json_pack("{s:s,s:o}", "type", "ERROR", "object",
                                       status_body(410, "Expired", "too old resource version"));
                (void)append_line(&out, ev);
                json_decref(ev);
                http_resp_set_text(resp, 200, "application/json", buf_str(&out));
                buf_release(&out);
                return 0;
        }
        if (to && strtoul(to, NULL, 10) > 0)
                hold = MIN(hold, (usec_t)strtoul(to, NULL, 10) * USEC_PER_SEC);
        deadline = now_monotonic() + hold;
        for (;;) {
                n = f->paused ? 0 : collect_events(f, p, from, &out);
                if (n > 0 || fault != FAKE_WATCH_OK || f->stopping || f->end_gen != gen ||
                    now_monotonic() >= deadline)
                        break;
                struct timespec ts = usec_to_timespec(deadline);
                (void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
        }
        if (n == 0 && from < f->compacted && fault == FAKE_WATCH_OK) {
                /* compacted while we held: what we owe this watch is gone */
                json_t *ev = json_pack("{s:s,s:o}", "type", "ERROR", "object",
                                       status_body(410, "Expired", "too old resource version"));
                (void)append_line(&out, ev);
                json_decref(ev);
        } else if (fault == FAKE_WATCH_GARBAGE)
                (void)!buf_puts(&out, "this is not json {\n");
        else if (fault == FAKE_WATCH_TRUNCATED)
                (void)!buf_puts(&out, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na");
        else if (n == 0 && !f->paused && bm && streq(bm, "true")) {
                /* every event in scope up to f->rv has been delivered: say so */
                char rvs[32];
                json_t *ev;
                (void)snprintf(rvs, sizeof(rvs), "%" PRIu64, f->rv);
                ev = json_pack("{s:s,s:{s:{s:s}}}", "type", "BOOKMARK", "object", "metadata",
                               "resourceVersion", rvs);
                (void)append_line(&out, ev);
                json_decref(ev);
        }
        http_resp_set_text(resp, 200, "application/json", buf_str(&out));
        buf_release(&out);
        return 0;
}

static void merge_patch(json_t *target, json_t *patch)
{
        const char *k;
        json_t *v;

        json_object_foreach(patch, k, v) {
                if (json_is_null(v))
                        (void)json_object_del(target, k);
                else if (json_is_object(v) && json_is_object(json_object_get(target, k)))
                        merge_patch(json_object_get(target, k), v);
                else
                        (void)json_object_set(target, k, v);
        }
}

static int handle_object(struct fake_apiserver *f, const struct parsed_path *p,
                         struct http_req *req, struct http_resp *resp)
{
        char key[FAKE_PATH_MAX * 2];
        json_t *cur, *body = NULL, *stored = NULL;

        object_key(p->coll, p->ns, p->name, key, sizeof(key));
        cur = json_object_get(f->objects, key);
        if (streq(req->method, "GET")) {
                if (!cur)
                        http_resp_set_json(resp, 404, status_body(404, "NotFound", "not found"));
                else
                        http_resp_set_json(resp, 200, json_incref(cur));
                return 0;
        }
        if (streq(req->method, "DELETE")) {
                if (!cur)
                        http_resp_set_json(resp, 404, status_body(404, "NotFound", "not found"));
                else {
                        (void)delete_locked(f, p->coll, p->ns, p->name);
                        http_resp_set_json(resp, 200, status_body(200, "", "deleted"));
                }
                return 0;
        }
        body = json_loadb(buf_str(&req->body), req->body.len, 0, NULL);
        if (!json_is_object(body)) {
                json_decref(body);
                http_resp_set_json(resp, 400, status_body(400, "BadRequest", "bad body"));
                return 0;
        }
        if (!cur) {
                json_decref(body);
                http_resp_set_json(resp, 404, status_body(404, "NotFound", "not found"));
                return 0;
        }
        if (streq(req->method, "PUT")) {
                const char *want = json_string_value(
                        json_object_get(json_object_get(body, "metadata"), "resourceVersion"));
                const char *have = json_string_value(
                        json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
                if (want && have && !streq(want, have)) {
                        json_decref(body);
                        http_resp_set_json(resp, 409,
                                           status_body(409, "Conflict",
                                                       "the object has been modified"));
                        return 0;
                }
                (void)json_object_set_new(json_object_get(body, "metadata"), "name",
                                          json_string(p->name));
                (void)put_locked(f, p->coll, p->ns, body, &stored);
        } else if (streq(req->method, "PATCH")) {
                json_t *copy = json_deep_copy(cur);
                merge_patch(copy, body);
                (void)put_locked(f, p->coll, p->ns, copy, &stored);
                json_decref(copy);
        } else {
                json_decref(body);
                http_resp_set_json(resp, 405, status_body(405, "MethodNotAllowed", "method"));
                return 0;
        }
        json_decref(body);
        http_resp_set_json(resp, 200, stored);
        return 0;
}

static int handle_create(struct fake_apiserver *f, const struct parsed_path *p,
                         struct http_req *req, struct http_resp *resp)
{
        json_t *body = json_loadb(buf_str(&req->body), req->body.len, 0, NULL), *meta,
               *stored = NULL;
        const char *name;
        char key[FAKE_PATH_MAX * 2];

        meta = json_object_get(body, "metadata");
        name = json_string_value(json_object_get(meta, "name"));
        if (!json_is_object(meta) || !name) {
                json_decref(body);
                http_resp_set_json(resp, 422, status_body(422, "Invalid", "metadata.name"));
                return 0;
        }
        object_key(p->coll, p->ns, name, key, sizeof(key));
        if (json_object_get(f->objects, key)) {
                json_decref(body);
                http_resp_set_json(resp, 409, status_body(409, "AlreadyExists", "exists"));
                return 0;
        }
        (void)put_locked(f, p->coll, p->ns, body, &stored);
        json_decref(body);
        http_resp_set_json(resp, 201, stored);
        return 0;
}

static int handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        struct fake_apiserver *f = userdata;
        struct parsed_path p;
        unsigned slow = 0;
        json_t *cnt;
        int r;

        if (parse_path(req->path, &p) < 0) {
                http_resp_set_json(resp, 404, status_body(404, "NotFound", "bad path"));
                return 0;
        }
        (void)pthread_mutex_lock(&f->lock);
        cnt = json_object_get(f->by_method, req->method);
        (void)json_object_set_new(f->by_method, req->method,
                                  json_integer(json_integer_value(cnt) + 1));
        if (p.name[0])
                r = handle_object(f, &p, req, resp);
        else if (streq(req->method, "POST"))
                r = handle_create(f, &p, req, resp);
        else if (http_req_query(req, "watch"))
                r = handle_watch(f, &p, req, resp);
        else
                r = handle_list(f, &p, req, resp);
        if (f->slow_write_n > 0 && !streq(req->method, "GET")) {
                f->slow_write_n--;
                slow = f->slow_write_msec;
        }
        (void)pthread_mutex_unlock(&f->lock);
        /* applied, but answered late: a client whose timeout is shorter never sees the answer */
        if (slow > 0)
                (void)usleep(slow * 1000U);
        return r;
}

static int listen_on(struct fake_apiserver *f, uint16_t port)
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };

        cfg.handler = handler;
        cfg.userdata = f;
        cfg.port = port;
        cfg.body_max = 4U * 1024U * 1024U;
        return http_server_start(&cfg, &f->srv);
}

int fake_apiserver_set_down(struct fake_apiserver *f, bool down)
{
        uint16_t port;
        int r = 0;

        if (down) {
                if (!f->srv)
                        return 0;
                f->port = http_server_port(f->srv);
                (void)pthread_mutex_lock(&f->lock);
                f->stopping = true; /* held watches end */
                (void)pthread_cond_broadcast(&f->cond);
                (void)pthread_mutex_unlock(&f->lock);
                f->srv = http_server_free(f->srv);
                (void)pthread_mutex_lock(&f->lock);
                f->stopping = false;
                (void)pthread_mutex_unlock(&f->lock);
                return 0;
        }
        if (f->srv)
                return 0;
        port = f->port;
        /* the old socket may linger for a moment */
        for (int i = 0; i < 100; i++) {
                r = listen_on(f, port);
                if (r >= 0)
                        break;
                usleep(20 * 1000);
        }
        return r;
}

int fake_apiserver_start(struct fake_apiserver **ret)
{
        struct fake_apiserver *f = calloc(1, sizeof(*f));
        pthread_condattr_t attr;
        int r;

        if (!f)
                return -ENOMEM;
        (void)pthread_mutex_init(&f->lock, NULL);
        (void)pthread_condattr_init(&attr);
        (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        (void)pthread_cond_init(&f->cond, &attr);
        (void)pthread_condattr_destroy(&attr);
        f->objects = json_object();
        f->log = json_array();
        f->by_method = json_object();
        f->hold_msec = 5000;
        r = listen_on(f, 0);
        if (r < 0) {
                fake_apiserver_free(f);
                return r;
        }
        (void)snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u",
                       (unsigned)http_server_port(f->srv));
        *ret = f;
        return 0;
}

struct fake_apiserver *fake_apiserver_free(struct fake_apiserver *f)
{
        if (!f)
                return NULL;
        (void)pthread_mutex_lock(&f->lock);
        f->stopping = true;
        (void)pthread_cond_broadcast(&f->cond);
        (void)pthread_mutex_unlock(&f->lock);
        http_server_free(f->srv);
        json_decref(f->objects);
        json_decref(f->log);
        json_decref(f->by_method);
        (void)pthread_cond_destroy(&f->cond);
        (void)pthread_mutex_destroy(&f->lock);
        free(f);
        return NULL;
}

const char *fake_apiserver_url(struct fake_apiserver *f)
{
        return f->url;
}

uint64_t fake_apiserver_put(struct fake_apiserver *f, const char *collection, json_t *obj)
{
        struct parsed_path p;
        uint64_t rv;

        if (parse_path(collection, &p) < 0)
                return 0;
        (void)pthread_mutex_lock(&f->lock);
        rv = put_locked(f, p.coll, p.ns, obj, NULL);
        (void)pthread_mutex_unlock(&f->lock);
        return rv;
}

uint64_t fake_apiserver_delete(struct fake_apiserver *f, const char *collection, const char *name)
{
        struct parsed_path p;
        uint64_t rv;

        if (parse_path(collection, &p) < 0)
                return 0;
        (void)pthread_mutex_lock(&f->lock);
        rv = delete_locked(f, p.coll, p.ns, name);
        (void)pthread_mutex_unlock(&f->lock);
        return rv;
}

json_t *fake_apiserver_get(struct fake_apiserver *f, const char *collection, const char *name)
{
        char key[FAKE_PATH_MAX * 2];
        struct parsed_path p;
        json_t *o;

        if (parse_path(collection, &p) < 0)
                return NULL;
        object_key(p.coll, p.ns, name, key, sizeof(key));
        (void)pthread_mutex_lock(&f->lock);
        o = json_deep_copy(json_object_get(f->objects, key));
        (void)pthread_mutex_unlock(&f->lock);
        return o;
}

uint64_t fake_apiserver_rv(struct fake_apiserver *f)
{
        uint64_t rv;

        (void)pthread_mutex_lock(&f->lock);
        rv = f->rv;
        (void)pthread_mutex_unlock(&f->lock);
        return rv;
}

void fake_apiserver_compact(struct fake_apiserver *f)
{
        (void)pthread_mutex_lock(&f->lock);
        f->compacted = f->rv;
        (void)json_array_clear(f->log);
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_end_watches(struct fake_apiserver *f)
{
        (void)pthread_mutex_lock(&f->lock);
        f->end_gen++;
        (void)pthread_cond_broadcast(&f->cond);
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_fail_watches(struct fake_apiserver *f, enum fake_watch_fault fault, unsigned n)
{
        (void)pthread_mutex_lock(&f->lock);
        f->watch_fault = fault;
        f->watch_fault_n = n;
        /* A held watch answers now with the fault. */
        f->end_gen++;
        (void)pthread_cond_broadcast(&f->cond);
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_pause_watches(struct fake_apiserver *f, bool paused)
{
        (void)pthread_mutex_lock(&f->lock);
        f->paused = paused;
        (void)pthread_cond_broadcast(&f->cond);
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_fail_lists(struct fake_apiserver *f, unsigned code, unsigned n)
{
        (void)pthread_mutex_lock(&f->lock);
        f->list_fail_code = code;
        f->list_fail_n = n;
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_slow_writes(struct fake_apiserver *f, unsigned msec, unsigned n)
{
        (void)pthread_mutex_lock(&f->lock);
        f->slow_write_msec = msec;
        f->slow_write_n = n;
        (void)pthread_mutex_unlock(&f->lock);
}

void fake_apiserver_set_watch_hold(struct fake_apiserver *f, unsigned msec)
{
        (void)pthread_mutex_lock(&f->lock);
        f->hold_msec = msec;
        (void)pthread_mutex_unlock(&f->lock);
}

unsigned fake_apiserver_lists(struct fake_apiserver *f)
{
        unsigned n;

        (void)pthread_mutex_lock(&f->lock);
        n = f->n_lists;
        (void)pthread_mutex_unlock(&f->lock);
        return n;
}

unsigned fake_apiserver_watches(struct fake_apiserver *f)
{
        unsigned n;

        (void)pthread_mutex_lock(&f->lock);
        n = f->n_watches;
        (void)pthread_mutex_unlock(&f->lock);
        return n;
}

unsigned fake_apiserver_requests(struct fake_apiserver *f, const char *method)
{
        unsigned n;

        (void)pthread_mutex_lock(&f->lock);
        n = (unsigned)json_integer_value(json_object_get(f->by_method, method));
        (void)pthread_mutex_unlock(&f->lock);
        return n;
}
