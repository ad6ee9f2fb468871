/* SPDX-License-Identifier: Apache-2.0 */
#include "fake-kube-api.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "kube/status.h"

#define KEY_MAX      1024
#define RESOURCE_MAX 256

struct fault {
        enum fake_kube_verb verb;
        char *resource; /* owned, NULL = any */
        unsigned skip;  /* matching calls still to pass before failing */
        unsigned times; /* matching calls still to fail */
        int code;
};

struct call {
        enum fake_kube_verb verb;
        char resource[RESOURCE_MAX];
};

struct fake_kube_api {
        pthread_mutex_t lock;
        const struct clock *clock;
        json_t *objects; /* "group/resource\x1fns\x1fname" -> object (owned) */
        unsigned long rv;
        unsigned long uid;
        struct fault *faults;
        size_t n_faults;
        struct call *calls;
        size_t n_calls, n_calls_alloc;
};

static const char *const reasons[][2] = {
        { "400", "BadRequest" },    { "403", "Forbidden" },
        { "404", "NotFound" },      { "409", "Conflict" },
        { "410", "Gone" },          { "415", "UnsupportedMediaType" },
        { "422", "Invalid" },       { "429", "TooManyRequests" },
        { "500", "InternalError" }, { "503", "ServiceUnavailable" },
        { "504", "Timeout" },
};
/* Fills *st (may be NULL) and returns the errno for an HTTP code (0: transport timeout). */
static int fail_with(struct kube_status *st, int code, const char *reason, const char *fmt, ...)
        _printf_(4, 5);
static int fail_with(struct kube_status *st, int code, const char *reason, const char *fmt, ...)
{
        char codes[16];
        va_list ap;

        if (code == 0) {
                if (st) {
                        *st = (struct kube_status){ 0 };
                        (void)snprintf(st->message, sizeof(st->message),
                                       "fake: the request timed out");
                }
                return -ETIMEDOUT;
        }
        (void)snprintf(codes, sizeof(codes), "%d", code);
        for (size_t i = 0; !reason && i < ELEMENTSOF(reasons); i++)
                if (streq(reasons[i][0], codes))
                        reason = reasons[i][1];
        if (!reason)
                reason = "";
        if (st) {
                *st = (struct kube_status){ .http_code = code };
                (void)snprintf(st->reason, sizeof(st->reason), "%s", reason);
                va_start(ap, fmt);
                (void)vsnprintf(st->message, sizeof(st->message), fmt, ap);
                va_end(ap);
                if (code == 429 || code == 503)
                        st->retry_after = 1;
        }
        return kube_status_to_errno(code, reason);
}

struct fake_kube_api *fake_kube_api_new(const struct clock *clock)
{
        struct fake_kube_api *f = calloc(1, sizeof(*f));

        if (!f)
                return NULL;
        f->objects = json_object();
        if (!f->objects) {
                free(f);
                return NULL;
        }
        f->clock = clock ? clock : &clock_realtime;
        f->rv = 1000;
        (void)pthread_mutex_init(&f->lock, NULL);
        return f;
}

void fake_kube_api_clear_faults(struct fake_kube_api *f)
{
        (void)pthread_mutex_lock(&f->lock);
        for (size_t i = 0; i < f->n_faults; i++)
                free(f->faults[i].resource);
        free(f->faults);
        f->faults = NULL;
        f->n_faults = 0;
        (void)pthread_mutex_unlock(&f->lock);
}

struct fake_kube_api *fake_kube_api_free(struct fake_kube_api *f)
{
        if (!f)
                return NULL;
        fake_kube_api_clear_faults(f);
        free(f->calls);
        json_decref(f->objects);
        (void)pthread_mutex_destroy(&f->lock);
        free(f);
        return NULL;
}

static int make_key(const struct gvr *r, const char *ns, const char *name, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%s/%s\x1f%s\x1f%s", r->group ? r->group : "", r->resource,
                         ns ? ns : "", name ? name : "");
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Records the call and returns the armed fault's HTTP code + 1 when it fails, else 0. */
static int record_call(struct fake_kube_api *f, enum fake_kube_verb verb, const struct gvr *r,
                       const char *subresource)
{
        char res[RESOURCE_MAX];

        (void)snprintf(res, sizeof(res), "%s%s%s", r->resource, subresource ? "/" : "",
                       subresource ? subresource : "");
        if (f->n_calls == f->n_calls_alloc) {
                size_t n = f->n_calls_alloc ? f->n_calls_alloc * 2 : 64;
                struct call *p = reallocarray(f->calls, n, sizeof(*p));
                if (p) {
                        f->calls = p;
                        f->n_calls_alloc = n;
                }
        }
        if (f->n_calls < f->n_calls_alloc) {
                f->calls[f->n_calls].verb = verb;
                memcpy(f->calls[f->n_calls].resource, res, sizeof(res));
                f->n_calls++;
        }
        for (size_t i = 0; i < f->n_faults; i++) {
                struct fault *x = &f->faults[i];

                if (x->times == 0 || (x->verb != FAKE_KUBE_ANY && x->verb != verb) ||
                    (x->resource && !streq(x->resource, res)))
                        continue;
                if (x->skip > 0) {
                        x->skip--;
                        continue;
                }
                x->times--;
                return x->code + 1;
        }
        return 0;
}

static int injected(struct kube_status *st, int code_plus_one, enum fake_kube_verb verb)
{
        int code = code_plus_one - 1;

        return fail_with(st, code, code == 409 && verb == FAKE_KUBE_CREATE ? "AlreadyExists" : NULL,
                         "fake: injected failure %d", code);
}

static unsigned long next_rv(struct fake_kube_api *f)
{
        return ++f->rv;
}

static int set_rv(struct fake_kube_api *f, json_t *obj)
{
        char rv[32];
        json_t *meta = json_object_get(obj, "metadata");

        (void)snprintf(rv, sizeof(rv), "%lu", next_rv(f));
        return json_object_set_new(meta, "resourceVersion", json_string(rv)) < 0 ? -ENOMEM : 0;
}

static int set_now(struct fake_kube_api *f, json_t *meta, const char *field)
{
        char ts[64];

        if (format_rfc3339(clock_now(f->clock), ts, sizeof(ts)) < 0)
                return -EINVAL;
        return json_object_set_new(meta, field, json_string(ts)) < 0 ? -ENOMEM : 0;
}

/* RFC 7386 JSON merge patch of target (modified in place; may be replaced) with patch. */
static json_t *merge_patch(json_t *target, const json_t *patch)
{
        const char *k;
        json_t *v;

        if (!json_is_object(patch)) {
                json_decref(target);
                return json_deep_copy(patch);
        }
        if (!json_is_object(target)) {
                json_decref(target);
                target = json_object();
                if (!target)
                        return NULL;
        }
        json_object_foreach((json_t *)patch, k, v) {
                if (json_is_null(v)) {
                        (void)json_object_del(target, k);
                        continue;
                }
                json_t *cur = json_object_get(target, k);
                json_t *merged = merge_patch(cur ? json_incref(cur) : NULL, v);
                if (!merged || json_object_set_new(target, k, merged) < 0) {
                        json_decref(target);
                        return NULL;
                }
        }
        return target;
}

static bool streq_ptr(const char *a, const char *b)
{
        return a && b && streq(a, b);
}

static bool has_finalizers(const json_t *obj)
{
        return json_array_size(json_get_path(obj, "metadata", "finalizers", NULL)) > 0;
}

static bool is_deleting(const json_t *obj)
{
        return json_get_path(obj, "metadata", "deletionTimestamp", NULL) != NULL;
}

/* Stores obj (stolen) under key after a write: a deleting object without finalizers goes. */
static int store_written(struct fake_kube_api *f, const char *key, json_t *obj, json_t **ret_obj)
{
        int k;

        if (is_deleting(obj) && !has_finalizers(obj)) {
                (void)json_object_del(f->objects, key);
                (void)next_rv(f);
        } else {
                k = set_rv(f, obj);
                if (k >= 0)
                        k = json_object_set(f->objects, key, obj) < 0 ? -ENOMEM : 0;
                if (k < 0) {
                        json_decref(obj);
                        return k;
                }
        }
        if (ret_obj)
                *ret_obj = json_deep_copy(obj);
        json_decref(obj);
        return ret_obj && !*ret_obj ? -ENOMEM : 0;
}

static int check_rv(const json_t *stored, const json_t *body, struct kube_status *st,
                    const char *name)
{
        const char *want = json_get_string_path(body, "metadata", "resourceVersion", NULL);
        const char *have = json_get_string_path(stored, "metadata", "resourceVersion", NULL);

        if (want && have && !streq(want, have))
                return fail_with(
                        st, 409, "Conflict",
                        "Operation cannot be fulfilled on %s: the object has been modified; please apply your changes to the latest version and try again",
                        name);
        return 0;
}

/* Under the lock: the stored object (borrowed) and its key, or a 404. */
static int lookup(struct fake_kube_api *f, const struct gvr *r, const char *ns, const char *name,
                  char key[static KEY_MAX], json_t **ret, struct kube_status *reterr)
{
        int k;

        k = make_key(r, ns, name, key, KEY_MAX);
        if (k < 0)
                return k;
        *ret = json_object_get(f->objects, key);
        if (!*ret)
                return fail_with(reterr, 404, "NotFound", "%s \"%s\" not found", r->resource, name);
        return 0;
}

static int op_get(void *userdata, const struct gvr *r, const char *ns, const char *name,
                  json_t **ret_obj, struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        char key[KEY_MAX];
        json_t *obj = NULL;
        int k;

        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_GET, r, NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_GET);
        else
                k = lookup(f, r, ns, name, key, &obj, reterr);
        if (k >= 0 && ret_obj && !(*ret_obj = json_deep_copy(obj)))
                k = -ENOMEM;
        (void)pthread_mutex_unlock(&f->lock);
        return k;
}

/* Does obj match one selector term ("k=v" or "k", len bytes)? */
static bool term_matches(const json_t *labels, const char *term, size_t len)
{
        const char *eq = memchr(term, '=', len);
        size_t klen = eq ? (size_t)(eq - term) : len;
        char key[256];
        const char *v;

        if (klen >= sizeof(key))
                return false;
        memcpy(key, term, klen);
        key[klen] = '\0';
        v = json_string_value(json_object_get(labels, key));
        if (!v)
                return false;
        return !eq || (strlen(v) == len - klen - 1 && strneq(v, eq + 1, len - klen - 1));
}

/* Does obj match the label selector ("k=v,k2,k3=v3"; NULL or "" matches everything)? */
static bool labels_match(const json_t *obj, const char *selector)
{
        const json_t *labels = json_get_path(obj, "metadata", "labels", NULL);

        for (const char *p = selector; p && *p;) {
                size_t len = strcspn(p, ",");

                if (len > 0 && !term_matches(labels, p, len))
                        return false;
                p += len;
                if (*p == ',')
                        p++;
        }
        return true;
}

struct entry {
        const char *key; /* borrowed from f->objects */
        json_t *obj;     /* borrowed */
};

static int entry_cmp(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;

        return strcmp(x->key, y->key);
}

/* Under the lock: copies of the matching objects, in key (name) order, into items. */
static int collect(struct fake_kube_api *f, const char *prefix, const char *selector, json_t *items)
{
        AUTOFREE struct entry *e = calloc(json_object_size(f->objects) + 1, sizeof(*e));
        size_t n = 0;
        const char *key;
        json_t *obj;

        if (!e)
                return -ENOMEM;
        json_object_foreach(f->objects, key, obj)
                if (strneq(key, prefix, strlen(prefix)) && labels_match(obj, selector))
                        e[n++] = (struct entry){ .key = key, .obj = obj };
        qsort(e, n, sizeof(*e), entry_cmp);
        for (size_t i = 0; i < n; i++)
                if (json_array_append_new(items, json_deep_copy(e[i].obj)) < 0)
                        return -ENOMEM;
        return 0;
}

static int op_list(void *userdata, const struct gvr *r, const char *ns,
                   const struct kube_list_options *opts, json_t **ret_list,
                   struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        json_auto_t *items = json_array();
        char prefix[KEY_MAX], rv[32];
        int k;

        if (!items)
                return -ENOMEM;
        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_LIST, r, NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_LIST);
        else
                k = make_key(r, ns, NULL, prefix, sizeof(prefix));
        if (k >= 0) {
                if (!ns)
                        strchr(prefix, '\x1f')[1] = '\0'; /* any namespace */
                k = collect(f, prefix, opts ? opts->label_selector : NULL, items);
                (void)snprintf(rv, sizeof(rv), "%lu", f->rv);
        }
        (void)pthread_mutex_unlock(&f->lock);
        if (k < 0)
                return k;
        if (ret_list) {
                *ret_list = json_pack("{s:s,s:{s:s},s:O}", "kind", "List", "metadata",
                                      "resourceVersion", rv, "items", items);
                if (!*ret_list)
                        return -ENOMEM;
        }
        return 0;
}

/* A new object from obj (borrowed) for create/put: namespace, uid, timestamps, generation. */
static json_t *new_object(struct fake_kube_api *f, const char *ns, const json_t *obj)
{
        json_auto_t *o = json_deep_copy(obj);
        json_t *meta;
        char uid[64];

        if (!o)
                return NULL;
        meta = json_object_get(o, "metadata");
        if (!json_is_object(meta))
                return NULL;
        (void)snprintf(uid, sizeof(uid), "00000000-0000-4000-8000-%012lu", ++f->uid);
        if (ns && json_object_set_new(meta, "namespace", json_string(ns)) < 0)
                return NULL;
        if (!ns)
                (void)json_object_del(meta, "namespace");
        if (!json_object_get(meta, "uid") && json_object_set_new(meta, "uid", json_string(uid)) < 0)
                return NULL;
        if (!json_object_get(meta, "creationTimestamp") &&
            set_now(f, meta, "creationTimestamp") < 0)
                return NULL;
        if (json_object_set_new(meta, "generation", json_integer(1)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

static int op_create(void *userdata, const struct gvr *r, const char *ns, const json_t *obj,
                     const struct kube_write_options *opts, json_t **ret_obj,
                     struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        char key[KEY_MAX];
        json_t *o;
        int k;

        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_CREATE, r, opts ? opts->subresource : NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_CREATE);
        else if (!name)
                k = fail_with(reterr, 422, "Invalid", "metadata.name: Required value");
        else
                k = make_key(r, ns, name, key, sizeof(key));
        if (k >= 0 && json_object_get(f->objects, key))
                k = fail_with(reterr, 409, "AlreadyExists", "%s \"%s\" already exists", r->resource,
                              name);
        if (k >= 0) {
                o = new_object(f, ns, obj);
                k = o ? store_written(f, key, o, ret_obj) : -ENOMEM;
        }
        (void)pthread_mutex_unlock(&f->lock);
        return k;
}

/* The stored object with body applied (new reference): merge patch or replacement, of .status
 * only (subresource "status") or of everything but .status. */
static json_t *apply_body(const json_t *stored, const json_t *body, bool replace, bool status)
{
        json_auto_t *out = json_deep_copy(stored);
        json_t *old_status = json_object_get(stored, "status");

        if (!out)
                return NULL;
        if (status) {
                json_t *s = json_object_get(body, "status");
                json_t *merged;

                if (!s)
                        return TAKE_PTR(out);
                merged = replace ? json_deep_copy(s)
                                 : merge_patch(old_status ? json_deep_copy(old_status) : NULL, s);
                if (!merged || json_object_set_new(out, "status", merged) < 0)
                        return NULL;
                return TAKE_PTR(out);
        }
        if (replace) {
                json_decref(out);
                out = json_deep_copy(body);
        } else {
                json_auto_t *p = json_deep_copy(body);
                if (!p)
                        return NULL;
                (void)json_object_del(p, "status");
                out = merge_patch(TAKE_PTR(out), p);
        }
        if (!out)
                return NULL;
        (void)json_object_del(out, "status");
        if (old_status && json_object_set(out, "status", old_status) < 0)
                return NULL;
        return TAKE_PTR(out);
}

/* update and patch: preconditions, the body applied, identity fields kept. */
static int write_existing(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                          const char *name, const json_t *body, bool replace,
                          const struct kube_write_options *opts, json_t **ret_obj,
                          struct kube_status *reterr)
{
        bool status = opts && opts->subresource && streq(opts->subresource, "status");
        char key[KEY_MAX];
        json_t *stored, *out, *meta;
        int k;

        k = lookup(f, r, ns, name, key, &stored, reterr);
        if (k < 0)
                return k;
        k = check_rv(stored, body, reterr, name);
        if (k < 0)
                return k;
        out = apply_body(stored, body, replace, status);
        if (!out)
                return -ENOMEM;
        meta = json_object_get(out, "metadata");
        if (!json_is_object(meta)) {
                json_decref(out);
                return fail_with(reterr, 422, "Invalid", "metadata: Required value");
        }
        /* what a client cannot change */
        static const char *const keep[] = {
                "name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "generation"
        };
        for (size_t i = 0; i < ELEMENTSOF(keep); i++) {
                json_t *v = json_get_path(stored, "metadata", keep[i], NULL);
                if (!v) {
                        (void)json_object_del(meta, keep[i]);
                        continue;
                }
                if (json_object_set(meta, keep[i], v) < 0) {
                        json_decref(out);
                        return -ENOMEM;
                }
        }
        if (!json_equal(json_object_get(stored, "spec"), json_object_get(out, "spec"))) {
                json_int_t g = json_integer_value(json_object_get(meta, "generation"));
                if (json_object_set_new(meta, "generation", json_integer(g + 1)) < 0) {
                        json_decref(out);
                        return -ENOMEM;
                }
        }
        return store_written(f, key, out, ret_obj);
}

static int op_update(void *userdata, const struct gvr *r, const char *ns, const char *name,
                     const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                     struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        int k;

        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_UPDATE, r, opts ? opts->subresource : NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_UPDATE);
        else
                k = write_existing(f, r, ns, name, obj, true, opts, ret_obj, reterr);
        (void)pthread_mutex_unlock(&f->lock);
        return k;
}

static int op_patch(void *userdata, const struct gvr *r, const char *ns, const char *name,
                    enum kube_patch_type type, const json_t *patch,
                    const struct kube_write_options *opts, json_t **ret_obj,
                    struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        int k;

        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_PATCH, r, opts ? opts->subresource : NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_PATCH);
        else if (type != KUBE_PATCH_MERGE)
                k = fail_with(reterr, 415, "UnsupportedMediaType",
                              "fake: only merge patches are implemented");
        else
                k = write_existing(f, r, ns, name, patch, false, opts, ret_obj, reterr);
        (void)pthread_mutex_unlock(&f->lock);
        return k;
}

static int delete_locked(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                         const char *name, const struct kube_delete_options *opts, json_t **ret_obj,
                         struct kube_status *reterr)
{
        char key[KEY_MAX];
        json_t *stored, *out;
        int k;

        k = lookup(f, r, ns, name, key, &stored, reterr);
        if (k < 0)
                return k;
        if (opts && opts->precondition_rv &&
            !streq_ptr(opts->precondition_rv,
                       json_get_string_path(stored, "metadata", "resourceVersion", NULL)))
                return fail_with(reterr, 409, "Conflict",
                                 "Precondition failed: ResourceVersion in precondition: %s",
                                 opts->precondition_rv);
        if (opts && opts->precondition_uid &&
            !streq_ptr(opts->precondition_uid,
                       json_get_string_path(stored, "metadata", "uid", NULL)))
                return fail_with(reterr, 409, "Conflict",
                                 "Precondition failed: UID in precondition: %s",
                                 opts->precondition_uid);
        out = json_deep_copy(stored);
        if (!out)
                return -ENOMEM;
        if (has_finalizers(stored) && !is_deleting(stored) &&
            set_now(f, json_object_get(out, "metadata"), "deletionTimestamp") < 0) {
                json_decref(out);
                return -ENOMEM;
        }
        if (!has_finalizers(stored)) {
                /* gone at once: the answer is the last state */
                (void)json_object_del(f->objects, key);
                (void)next_rv(f);
                if (ret_obj)
                        *ret_obj = out;
                else
                        json_decref(out);
                return 0;
        }
        return store_written(f, key, out, ret_obj);
}

static int op_delete(void *userdata, const struct gvr *r, const char *ns, const char *name,
                     const struct kube_delete_options *opts, json_t **ret_obj,
                     struct kube_status *reterr)
{
        struct fake_kube_api *f = userdata;
        int k;

        (void)pthread_mutex_lock(&f->lock);
        k = record_call(f, FAKE_KUBE_DELETE, r, NULL);
        if (k > 0)
                k = injected(reterr, k, FAKE_KUBE_DELETE);
        else
                k = delete_locked(f, r, ns, name, opts, ret_obj, reterr);
        (void)pthread_mutex_unlock(&f->lock);
        return k;
}

static const struct kube_api_ops fake_ops = {
        .get = op_get,
        .list = op_list,
        .create = op_create,
        .update = op_update,
        .patch = op_patch,
        .remove = op_delete,
};

struct kube_api fake_kube_api_port(struct fake_kube_api *f)
{
        return (struct kube_api){ .ops = &fake_ops, .userdata = f };
}

unsigned long fake_kube_api_put(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                                const json_t *obj)
{
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        const json_t *old;
        char key[KEY_MAX];
        unsigned long rv = 0;
        json_t *o;

        if (!name || make_key(r, ns, name, key, sizeof(key)) < 0)
                return 0;
        (void)pthread_mutex_lock(&f->lock);
        old = json_object_get(f->objects, key);
        o = new_object(f, ns, obj);
        if (o && old)
                (void)json_object_set(json_object_get(o, "metadata"), "uid",
                                      json_get_path(old, "metadata", "uid", NULL));
        if (o && set_rv(f, o) >= 0 && json_object_set(f->objects, key, o) >= 0)
                rv = f->rv;
        json_decref(o);
        (void)pthread_mutex_unlock(&f->lock);
        return rv;
}

bool fake_kube_api_remove(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                          const char *name)
{
        char key[KEY_MAX];
        bool found;

        if (make_key(r, ns, name, key, sizeof(key)) < 0)
                return false;
        (void)pthread_mutex_lock(&f->lock);
        found = json_object_del(f->objects, key) == 0;
        if (found)
                (void)next_rv(f);
        (void)pthread_mutex_unlock(&f->lock);
        return found;
}

json_t *fake_kube_api_get(struct fake_kube_api *f, const struct gvr *r, const char *ns,
                          const char *name)
{
        char key[KEY_MAX];
        json_t *o;

        if (make_key(r, ns, name, key, sizeof(key)) < 0)
                return NULL;
        (void)pthread_mutex_lock(&f->lock);
        o = json_deep_copy(json_object_get(f->objects, key));
        (void)pthread_mutex_unlock(&f->lock);
        return o;
}

unsigned long fake_kube_api_rv(struct fake_kube_api *f)
{
        unsigned long rv;

        (void)pthread_mutex_lock(&f->lock);
        rv = f->rv;
        (void)pthread_mutex_unlock(&f->lock);
        return rv;
}

int fake_kube_api_fail(struct fake_kube_api *f, enum fake_kube_verb verb, const char *resource,
                       unsigned nth, unsigned times, int http_code)
{
        struct fault *p;
        char *res = NULL;

        if (nth == 0 || times == 0 || verb < 0 || verb >= FAKE_KUBE_VERB__MAX)
                return -EINVAL;
        if (resource && !(res = strdup(resource)))
                return -ENOMEM;
        (void)pthread_mutex_lock(&f->lock);
        p = reallocarray(f->faults, f->n_faults + 1, sizeof(*p));
        if (p) {
                f->faults = p;
                f->faults[f->n_faults++] = (struct fault){ .verb = verb,
                                                           .resource = res,
                                                           .skip = nth - 1,
                                                           .times = times,
                                                           .code = http_code };
        }
        (void)pthread_mutex_unlock(&f->lock);
        if (!p) {
                free(res);
                return -ENOMEM;
        }
        return 0;
}

unsigned fake_kube_api_calls(struct fake_kube_api *f, enum fake_kube_verb verb,
                             const char *resource)
{
        unsigned n = 0;

        (void)pthread_mutex_lock(&f->lock);
        for (size_t i = 0; i < f->n_calls; i++)
                if ((verb == FAKE_KUBE_ANY || f->calls[i].verb == verb) &&
                    (!resource || streq(f->calls[i].resource, resource)))
                        n++;
        (void)pthread_mutex_unlock(&f->lock);
        return n;
}

void fake_kube_api_reset_calls(struct fake_kube_api *f)
{
        (void)pthread_mutex_lock(&f->lock);
        f->n_calls = 0;
        (void)pthread_mutex_unlock(&f->lock);
}
