/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/conditions.h"

#include <stdlib.h>
#include <string.h>

static const char *const dependents[] = {
        CONDITION_INFERENCE_SERVICE_READY,
        CONDITION_MEMORY_RESOURCE_AVAILABLE,
        CONDITION_IS_MMS_PREDICTOR,
};

static bool is_dependent(const char *type)
{
        for (size_t i = 0; i < ELEMENTSOF(dependents); i++)
                if (streq(type, dependents[i]))
                        return true;
        return false;
}

static const char *severity_of(const char *type)
{
        return streq(type, CONDITION_READY) || is_dependent(type) ? "" : "Info";
}

static const char *nz(const char *s)
{
        return s ? s : "";
}

static void condition_release(struct condition *c)
{
        free(c->type);
        free(c->status);
        free(c->severity);
        free(c->reason);
        free(c->message);
        *c = (struct condition){ 0 };
}

static int condition_fill(struct condition *c, const char *type, const char *status,
                          const char *severity, const char *reason, const char *message)
{
        *c = (struct condition){
                .type = strdup(nz(type)),
                .status = strdup(nz(status)),
                .severity = strdup(nz(severity)),
                .reason = strdup(nz(reason)),
                .message = strdup(nz(message)),
        };
        if (!c->type || !c->status || !c->severity || !c->reason || !c->message) {
                condition_release(c);
                return -ENOMEM;
        }
        return 0;
}

void conditions_init(struct conditions *c)
{
        *c = (struct conditions){ .items = NULL, .n = 0, .next_seq = 1 };
}

void conditions_release(struct conditions *c)
{
        for (size_t i = 0; i < c->n; i++)
                condition_release(&c->items[i]);
        free(c->items);
        conditions_init(c);
}

int conditions_copy(const struct conditions *c, struct conditions *ret)
{
        struct conditions out;
        int r;

        conditions_init(&out);
        if (c->n > 0) {
                out.items = calloc(c->n, sizeof(*out.items));
                if (!out.items)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < c->n; i++) {
                const struct condition *s = &c->items[i];
                r = condition_fill(&out.items[i], s->type, s->status, s->severity, s->reason,
                                   s->message);
                if (r < 0) {
                        conditions_release(&out);
                        return r;
                }
                out.items[i].ltt = s->ltt;
                out.items[i].seq = s->seq;
                out.n = i + 1;
        }
        out.next_seq = c->next_seq;
        *ret = out;
        return 0;
}

static const char *obj_string(const json_t *o, const char *key)
{
        const json_t *v = json_object_get(o, key);
        return json_is_string(v) ? json_string_value(v) : "";
}

int conditions_from_json(const json_t *v, struct conditions *ret)
{
        struct conditions out;
        size_t i;
        json_t *e;
        int r;

        conditions_init(&out);
        if (!v || json_is_null(v)) {
                *ret = out;
                return 0;
        }
        if (!json_is_array(v))
                return -EINVAL;
        out.items = calloc(json_array_size(v) + 1, sizeof(*out.items));
        if (!out.items)
                return -ENOMEM;
        json_array_foreach(v, i, e) {
                struct condition *c = &out.items[out.n];
                usec_t t = 0;

                if (!json_is_object(e) || !json_is_string(json_object_get(e, "type")))
                        continue;
                r = condition_fill(c, obj_string(e, "type"), obj_string(e, "status"),
                                   obj_string(e, "severity"), obj_string(e, "reason"),
                                   obj_string(e, "message"));
                if (r < 0) {
                        conditions_release(&out);
                        return r;
                }
                if (parse_rfc3339(obj_string(e, "lastTransitionTime"), &t) >= 0)
                        c->ltt = t;
                out.n++;
        }
        *ret = out;
        return 0;
}

/* One condition as JSON (empty strings and a zero time left out). Returns: owned; NULL: OOM. */
static json_t *condition_to_json(const struct condition *s)
{
        json_auto_t *o = json_pack("{s:s,s:s}", "type", s->type, "status", s->status);
        char ts[64];

        if (!o)
                return NULL;
        if (s->severity[0] != '\0' &&
            json_object_set_new(o, "severity", json_string(s->severity)) < 0)
                return NULL;
        if (s->ltt != 0 && (format_rfc3339(s->ltt, ts, sizeof(ts)) < 0 ||
                            json_object_set_new(o, "lastTransitionTime", json_string(ts)) < 0))
                return NULL;
        if (s->reason[0] != '\0' && json_object_set_new(o, "reason", json_string(s->reason)) < 0)
                return NULL;
        if (s->message[0] != '\0' && json_object_set_new(o, "message", json_string(s->message)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

json_t *conditions_to_json(const struct conditions *c)
{
        json_auto_t *a = json_array();

        if (!a)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                if (json_array_append_new(a, condition_to_json(&c->items[i])) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

const struct condition *conditions_get(const struct conditions *c, const char *type)
{
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->items[i].type, type))
                        return &c->items[i];
        return NULL;
}

bool conditions_is_true(const struct conditions *c, const char *type)
{
        const struct condition *x = conditions_get(c, type);
        return x && streq(x->status, CONDITION_STATUS_TRUE);
}

bool conditions_is_ready(const struct conditions *c)
{
        return conditions_is_true(c, CONDITION_READY);
}

static int cmp_type(const void *a, const void *b)
{
        const struct condition *x = a, *y = b;
        return strcmp(x->type, y->type);
}

static bool same_state(const struct condition *a, const char *status, const char *severity,
                       const char *reason, const char *message)
{
        return streq(a->status, nz(status)) && streq(a->severity, nz(severity)) &&
               streq(a->reason, nz(reason)) && streq(a->message, nz(message));
}

int conditions_set(struct conditions *c, const char *type, const char *status, const char *severity,
                   const char *reason, const char *message, usec_t now)
{
        struct condition nc, *items;
        size_t kept = 0;
        int r;

        if (!type)
                return -EINVAL;
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->items[i].type, type) &&
                    same_state(&c->items[i], status, severity, reason, message))
                        return 0; /* identical apart from ltt: nothing changes */

        r = condition_fill(&nc, type, status, severity, reason, message);
        if (r < 0)
                return r;
        nc.ltt = now;
        nc.seq = c->next_seq++;

        items = reallocarray(c->items, c->n + 1, sizeof(*items));
        if (!items) {
                condition_release(&nc);
                return -ENOMEM;
        }
        c->items = items;
        for (size_t i = 0; i < c->n; i++) {
                if (streq(items[i].type, type)) {
                        condition_release(&items[i]);
                        continue;
                }
                items[kept++] = items[i];
        }
        items[kept++] = nc;
        c->n = kept;
        qsort(c->items, c->n, sizeof(*c->items), cmp_type);
        return 0;
}

/* Newest first: by ltt, then by setting order within the pass (deterministic, unlike Go's sort). */
static int cmp_newest(const void *a, const void *b)
{
        const struct condition *x = *(const struct condition *const *)a;
        const struct condition *y = *(const struct condition *const *)b;

        if (x->ltt != y->ltt)
                return x->ltt > y->ltt ? -1 : 1;
        if (x->seq != y->seq)
                return x->seq > y->seq ? -1 : 1;
        return 0;
}

/*
 * knative findUnhappyDependent(): the newest False terminal condition, else the newest Unknown,
 * else a synthetic Unknown when fewer terminal conditions than dependents exist. Returns 1 and
 * fills the out-params when one is found, 0 otherwise.
 */
static int find_unhappy(const struct conditions *c, const char **ret_status,
                        const char **ret_reason, const char **ret_message)
{
        const struct condition *sorted[64];
        size_t n = 0;

        for (size_t i = 0; i < c->n && n < ELEMENTSOF(sorted); i++)
                if (c->items[i].severity[0] == '\0' && !streq(c->items[i].type, CONDITION_READY))
                        sorted[n++] = &c->items[i];
        qsort(sorted, n, sizeof(const struct condition *), cmp_newest);

        for (size_t i = 0; i < n; i++)
                if (streq(sorted[i]->status, CONDITION_STATUS_FALSE)) {
                        *ret_status = sorted[i]->status;
                        *ret_reason = sorted[i]->reason;
                        *ret_message = sorted[i]->message;
                        return 1;
                }
        for (size_t i = 0; i < n; i++)
                if (streq(sorted[i]->status, CONDITION_STATUS_UNKNOWN)) {
                        *ret_status = sorted[i]->status;
                        *ret_reason = sorted[i]->reason;
                        *ret_message = sorted[i]->message;
                        return 1;
                }
        if (n < ELEMENTSOF(dependents)) {
                *ret_status = CONDITION_STATUS_UNKNOWN;
                *ret_reason = "";
                *ret_message = "";
                return 1;
        }
        return 0;
}

int conditions_mark_true(struct conditions *c, const char *type, usec_t now)
{
        const char *status, *reason, *message;
        int r;

        r = conditions_set(c, type, CONDITION_STATUS_TRUE, severity_of(type), NULL, NULL, now);
        if (r < 0)
                return r;

        if (find_unhappy(c, &status, &reason, &message) > 0) {
                /* copy: the strings belong to an element conditions_set() may free */
                AUTOFREE char *s = strdup(status), *rs = strdup(reason), *m = strdup(message);
                if (!s || !rs || !m)
                        return -ENOMEM;
                return conditions_set(c, CONDITION_READY, s, "", rs, m, now);
        }
        if (!streq(type, CONDITION_READY))
                return conditions_set(c, CONDITION_READY, CONDITION_STATUS_TRUE, "", NULL, NULL,
                                      now);
        return 0;
}

int conditions_mark_false(struct conditions *c, const char *type, const char *reason,
                          const char *message, usec_t now)
{
        int r;

        r = conditions_set(c, type, CONDITION_STATUS_FALSE, severity_of(type), reason, message,
                           now);
        if (r < 0)
                return r;
        if (is_dependent(type))
                return conditions_set(c, CONDITION_READY, CONDITION_STATUS_FALSE, "", reason,
                                      message, now);
        return 0;
}

int conditions_mark_unknown(struct conditions *c, const char *type, const char *reason,
                            const char *message, usec_t now)
{
        int r;

        r = conditions_set(c, type, CONDITION_STATUS_UNKNOWN, severity_of(type), reason, message,
                           now);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(dependents); i++) {
                const struct condition *d = conditions_get(c, dependents[i]);
                if (d && streq(d->status, CONDITION_STATUS_FALSE)) {
                        const struct condition *ready = conditions_get(c, CONDITION_READY);
                        if (!ready || !streq(ready->status, CONDITION_STATUS_FALSE))
                                return conditions_mark_false(c, CONDITION_READY, reason, message,
                                                             now);
                        return 0;
                }
        }
        if (is_dependent(type))
                return conditions_set(c, CONDITION_READY, CONDITION_STATUS_UNKNOWN, "", reason,
                                      message, now);
        return 0;
}

int conditions_set_condition(struct conditions *c, const char *type, const char *status,
                             const char *reason, const char *message, usec_t now)
{
        if (!status)
                return 0;
        if (streq(status, CONDITION_STATUS_TRUE))
                return conditions_mark_true(c, type, now);
        if (streq(status, CONDITION_STATUS_FALSE))
                return conditions_mark_false(c, type, reason, message, now);
        if (streq(status, CONDITION_STATUS_UNKNOWN))
                return conditions_mark_unknown(c, type, reason, message, now);
        return 0;
}

void conditions_keep_transition_times(struct conditions *c, const struct conditions *observed)
{
        for (size_t i = 0; i < c->n; i++) {
                struct condition *x = &c->items[i];
                const struct condition *o = conditions_get(observed, x->type);
                if (o && same_state(o, x->status, x->severity, x->reason, x->message))
                        x->ltt = o->ltt;
        }
}
