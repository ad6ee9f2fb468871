/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/replicas.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "serving/conditions.h"
#include "serving/modelconfig.h"
#include "util/parse-util.h"

#define MODELCONFIG_PREFIX "modelconfig-"
#define MODELCONFIG_SUFFIX "-0"

static const char *nz(const char *s)
{
        return s ? s : "";
}

static bool has_pod_owner(const json_t *cm)
{
        const json_t *refs = json_get_path(cm, "metadata", "ownerReferences", NULL);
        size_t i;
        json_t *ref;

        json_array_foreach(refs, i, ref) {
                const char *kind = json_string_value(json_object_get(ref, "kind"));
                const char *api = json_string_value(json_object_get(ref, "apiVersion"));
                if (kind && api && streq(kind, "Pod") && streq(api, "v1"))
                        return true;
        }
        return false;
}

static bool is_report(const json_t *cm)
{
        const char *v = json_get_string_path(cm, "metadata", "labels", REPLICAS_STATUS_LABEL, NULL);
        const char *isvc = json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                NULL);

        return v && streq(v, REPLICAS_STATUS_LABEL_VAL) && isvc && isvc[0] != '\0';
}

bool replicas_is_assignment(const json_t *cm)
{
        const char *v = json_get_string_path(cm, "metadata", "labels", REPLICAS_PLACEMENT_LABEL,
                                             NULL);
        const char *isvc = json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                NULL);

        return v && streq(v, REPLICAS_PLACEMENT_ASSIGNMENT) && isvc && isvc[0] != '\0' &&
               !is_report(cm);
}

bool replica_report_counts(const json_t *cm)
{
        return is_report(cm) && has_pod_owner(cm) &&
               !json_get_path(cm, "metadata", "deletionTimestamp", NULL) &&
               json_get_string_path(cm, "metadata", "name", NULL);
}

bool replica_report_heartbeat(const json_t *cm, usec_t *ret_beat, usec_t *ret_stale_after)
{
        unsigned period;

        if (!report_heartbeat(json_object_get(cm, "data"), ret_beat, &period))
                return false;
        *ret_stale_after = (usec_t)period * REPLICAS_STALE_PERIODS * USEC_PER_SEC;
        return true;
}

bool replica_report_stale(const json_t *cm, usec_t now)
{
        usec_t beat, after;

        return replica_report_heartbeat(cm, &beat, &after) && now > beat && now - beat > after;
}

static bool same_path(const json_t *a, const json_t *b, const char *k1, const char *k2)
{
        const json_t *x = json_get_path(a, k1, k2, NULL), *y = json_get_path(b, k1, k2, NULL);

        return (!x && !y) || (x && y && json_equal((json_t *)x, (json_t *)y));
}

bool replica_report_heartbeat_only(const json_t *old_cm, const json_t *new_cm)
{
        const json_t *od = json_object_get(old_cm, "data"), *nd = json_object_get(new_cm, "data");
        const char *key;
        json_t *v;

        if (!is_report(old_cm) || !is_report(new_cm) || !json_is_object(od) ||
            !json_is_object(nd) || json_object_size(od) != json_object_size(nd))
                return false;
        json_object_foreach((json_t *)nd, key, v) {
                json_t *o = json_object_get(od, key);
                if (!o)
                        return false;
                if (!streq(key, REPORT_KEY_HEARTBEAT) && !json_equal(o, v))
                        return false;
        }
        return same_path(old_cm, new_cm, "metadata", "name") &&
               same_path(old_cm, new_cm, "metadata", "labels") &&
               same_path(old_cm, new_cm, "metadata", "ownerReferences") &&
               same_path(old_cm, new_cm, "metadata", "deletionTimestamp");
}

static int cmp_replica(const void *a, const void *b)
{
        return strcmp(((const struct replica *)a)->pod, ((const struct replica *)b)->pod);
}

/* The report's pod: data.pod, else the name without "modelstatus-". */
static const char *report_pod(const json_t *cm)
{
        const char *pod = json_get_string_path(cm, "data", REPORT_KEY_POD, NULL);
        const char *name = json_get_string_path(cm, "metadata", "name", NULL);

        if (pod && pod[0] != '\0')
                return pod;
        if (strncmp(name, REPLICAS_STATUS_PREFIX, strlen(REPLICAS_STATUS_PREFIX)) == 0)
                return name + strlen(REPLICAS_STATUS_PREFIX);
        return name;
}

/* Marks @r stale when @cm's heartbeat is too old at @now; else lowers *next_stale to the time
 * it would turn stale. */
static void replica_judge(struct replica *r, const json_t *cm, usec_t now, usec_t *next_stale)
{
        usec_t beat, after;
        char when[32];

        if (!replica_report_heartbeat(cm, &beat, &after))
                return;
        if (now > beat && now - beat > after) {
                r->stale = true;
                if (format_rfc3339(beat, when, sizeof(when)) < 0)
                        (void)snprintf(when, sizeof(when), "?");
                /* the time, not the age: the message stays the same while the report stays stale,
                 * so the status is not rewritten on every pass */
                (void)snprintf(r->stale_reason, sizeof(r->stale_reason),
                               "no heartbeat since %s (over %llus)", when,
                               (unsigned long long)(after / USEC_PER_SEC));
                return;
        }
        if (*next_stale == 0 || beat + after + USEC_PER_SEC < *next_stale)
                *next_stale = beat + after + USEC_PER_SEC;
}

/* Parses one report; an unreadable one keeps report.doc NULL (its models count as Unknown). */
static int replica_read(const json_t *cm, struct replica *ret)
{
        const json_t *refs = json_get_path(cm, "metadata", "ownerReferences", NULL);
        size_t i;
        json_t *ref;

        *ret = (struct replica){ .pod = report_pod(cm) };
        json_array_foreach(refs, i, ref) {
                const char *kind = json_string_value(json_object_get(ref, "kind"));
                const char *api = json_string_value(json_object_get(ref, "apiVersion"));
                if (kind && api && streq(kind, "Pod") && streq(api, "v1")) {
                        ret->owner_name = json_string_value(json_object_get(ref, "name"));
                        ret->owner_uid = json_string_value(json_object_get(ref, "uid"));
                        break;
                }
        }
        return report_data_decode(json_object_get(cm, "data"), &ret->report);
}

void replica_set_release(struct replica_set *s)
{
        for (size_t i = 0; i < s->n; i++) {
                report_release(&s->items[i].report);
        }
        free(s->items);
        json_decref(s->configmaps);
        *s = (struct replica_set){ 0 };
}

int replica_set_build(json_t *configmaps, usec_t now, struct replica_set *ret)
{
        struct replica_set s = { .configmaps = json_incref(configmaps) };
        size_t i;
        json_t *cm;

        s.items = calloc(json_array_size(configmaps) + 1, sizeof(*s.items));
        if (!s.items) {
                replica_set_release(&s);
                return -ENOMEM;
        }
        json_array_foreach(configmaps, i, cm) {
                if (!replica_report_counts(cm))
                        continue;
                if (replica_read(cm, &s.items[s.n]) < 0) {
                        replica_set_release(&s);
                        return -ENOMEM;
                }
                replica_judge(&s.items[s.n], cm, now, &s.next_stale);
                s.n++;
        }
        qsort(s.items, s.n, sizeof(*s.items), cmp_replica);
        *ret = s;
        return 0;
}

void model_loaded_release(struct model_loaded *m)
{
        free(m->message);
        json_decref(m->detail);
        *m = (struct model_loaded){ 0 };
}

/* Progress order of the not-loaded states: the least advanced gives the in-progress reason. */
static const char *const progress_order[] = { "Unknown", "Pending", "Unloading", "Downloading",
                                              "Loading" };

static size_t progress_rank(const char *state)
{
        for (size_t i = 0; i < ELEMENTSOF(progress_order); i++)
                if (streq(state, progress_order[i]))
                        return i;
        return 0; /* a state this controller does not know: as unknown */
}

/* The state of @model on replica @r, and its reason (borrowed, may be NULL). */
static const char *replica_state(const struct replica *r, const char *model,
                                 const char *storage_uri, const char **ret_reason)
{
        const struct report_model *m;

        *ret_reason = NULL;
        if (r->stale) {
                *ret_reason = r->stale_reason;
                return REPLICAS_STATE_STALE;
        }
        if (!r->report.doc)
                return "Unknown";
        m = report_find(&r->report, model);
        if (!m)
                return "Pending";
        if (streq(m->state, "Loaded") && storage_uri && m->storage_uri &&
            !streq(m->storage_uri, storage_uri))
                return "Pending";
        *ret_reason = m->reason;
        return m->state;
}

/* A copy of @s cut to at most @max bytes at a UTF-8 character boundary. */
static char *utf8_cut(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n > max) {
                n = max;
                while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
                        n--;
        }
        return strndup(s, n);
}

static int detail_add(json_t *detail, const char *pod, const char *state, const char *reason)
{
        json_auto_t *o = json_pack("{s:s, s:s}", "pod", pod, "state", state);
        AUTOFREE char *cut = NULL;

        if (!o)
                return -ENOMEM;
        if (reason && reason[0] != '\0') {
                cut = utf8_cut(reason, REPLICAS_REASON_MAX);
                if (!cut || json_object_set_new(o, "reason", json_string(cut)) < 0)
                        return -ENOMEM;
        }
        return json_array_append(detail, o) < 0 ? -ENOMEM : 0;
}

/* What the replicas of one model report, folded: the first replica that failed to load, to
 * download, or is stale (with its reason), and the earliest progress state seen. */
struct replica_tally {
        const struct replica *failed_load, *failed_download, *stale;
        const char *failed_load_reason, *failed_download_reason;
        size_t progress;
};

static void tally_first(const struct replica **slot, const char **slot_reason,
                        const struct replica *r, const char *reason)
{
        if (*slot)
                return;
        *slot = r;
        if (slot_reason)
                *slot_reason = reason;
}

static void tally_add(struct replica_tally *t, struct model_loaded *m, const struct replica *r,
                      const char *state, const char *reason)
{
        if (streq(state, "Loaded"))
                m->loaded++;
        else if (streq(state, "FailedToLoad"))
                tally_first(&t->failed_load, &t->failed_load_reason, r, reason);
        else if (streq(state, "FailedToDownload"))
                tally_first(&t->failed_download, &t->failed_download_reason, r, reason);
        else if (streq(state, REPLICAS_STATE_STALE))
                tally_first(&t->stale, NULL, r, reason);
        else if (progress_rank(state) < t->progress)
                t->progress = progress_rank(state);
}

/* The condition for a model with at least one failed replica; returns asprintf()'s result. */
static int summarize_failed(const struct replica_tally *t, const char *noun, struct model_loaded *m)
{
        const struct replica *f = t->failed_load ? t->failed_load : t->failed_download;
        AUTOFREE char *why = utf8_cut(t->failed_load ? nz(t->failed_load_reason)
                                                     : nz(t->failed_download_reason),
                                      REPLICAS_REASON_MAX);

        m->status = CONDITION_STATUS_FALSE;
        m->reason = t->failed_load ? "FailedToLoad" : "FailedToDownload";
        if (!why)
                return -1;
        return asprintf(&m->message, "%u/%u %s loaded; %s: %s%s%s", m->loaded, m->total, noun,
                        f->pod, m->reason, why[0] ? ": " : "", why);
}

/* Fills status, reason and message of m from the tally; returns asprintf()'s result. */
static int summarize_condition(const struct replica_tally *t, const char *noun,
                               struct model_loaded *m)
{
        if (m->total == 0) {
                m->status = CONDITION_STATUS_UNKNOWN;
                m->reason = REPLICAS_REASON_NO_REPLICAS;
                return asprintf(&m->message,
                                "0/0 replicas loaded: no serving replica reports model status");
        }
        if (m->loaded == m->total) {
                m->status = CONDITION_STATUS_TRUE;
                m->reason = "Loaded";
                return asprintf(&m->message, "%u/%u %s loaded", m->loaded, m->total, noun);
        }
        if (t->failed_load || t->failed_download)
                return summarize_failed(t, noun, m);
        m->status = CONDITION_STATUS_UNKNOWN;
        if (t->stale) {
                m->reason = REPLICAS_STATE_STALE;
                return asprintf(&m->message, "%u/%u %s loaded; %s: %s: %s", m->loaded, m->total,
                                noun, t->stale->pod, REPLICAS_STATE_STALE, t->stale->stale_reason);
        }
        m->reason = progress_order[t->progress < ELEMENTSOF(progress_order) ? t->progress : 0];
        return asprintf(&m->message, "%u/%u %s loaded", m->loaded, m->total, noun);
}

static bool pod_listed(const char *const *pods, size_t n, const char *pod)
{
        for (size_t i = 0; i < n; i++)
                if (pods[i] && streq(pods[i], pod))
                        return true;
        return false;
}

/* Over every replica (pods NULL) or only the replicas named in pods. */
static int summarize(const struct replica_set *s, const char *model, const char *storage_uri,
                     const char *const *pods, size_t n_pods, const char *noun,
                     struct model_loaded *ret)
{
        struct model_loaded m = { .detail = json_array() };
        struct replica_tally t = { .progress = ELEMENTSOF(progress_order) };
        int k;

        if (!m.detail)
                return -ENOMEM;
        for (size_t i = 0; i < s->n; i++) {
                const char *reason, *state;

                if (pods && !pod_listed(pods, n_pods, s->items[i].pod))
                        continue;
                state = replica_state(&s->items[i], model, storage_uri, &reason);
                if (m.total < REPLICAS_DETAIL_MAX) {
                        k = detail_add(m.detail, s->items[i].pod, state, reason);
                        if (k < 0) {
                                model_loaded_release(&m);
                                return k;
                        }
                }
                m.total++;
                tally_add(&t, &m, &s->items[i], state, reason);
        }
        if (summarize_condition(&t, noun, &m) < 0) {
                m.message = NULL;
                model_loaded_release(&m);
                return -ENOMEM;
        }
        *ret = m;
        return 0;
}

int model_loaded_summarize(const struct replica_set *s, const char *model, const char *storage_uri,
                           struct model_loaded *ret)
{
        return summarize(s, model, storage_uri, NULL, 0, "replicas", ret);
}

int model_loaded_summarize_copies(const struct replica_set *s, const char *model,
                                  const char *storage_uri, const char *const *pods, size_t n_pods,
                                  struct model_loaded *ret)
{
        static const char *const none[] = { NULL };

        /* pods NULL: none assigned (summarize() takes NULL for every replica) */
        return summarize(s, model, storage_uri, pods ? pods : none, pods ? n_pods : 0, "copies",
                         ret);
}

static bool has_condition(const json_t *status, const char *type)
{
        const json_t *conds = json_object_get(status, "conditions");
        size_t i;
        json_t *c;

        json_array_foreach(conds, i, c)
                if (streq(nz(json_string_value(json_object_get(c, "type"))), type))
                        return true;
        return false;
}

/* The "since" of @pod's entry in @seen (the annotation as read, may be NULL or garbage) when it
 * is there in @state; NULL otherwise. Borrowed from @seen. */
static const char *seen_since(const json_t *seen, const char *pod, const char *state)
{
        size_t i;
        json_t *e;

        json_array_foreach(seen, i, e) {
                const char *p = json_string_value(json_object_get(e, "pod"));
                const char *st = json_string_value(json_object_get(e, "state"));

                if (p && streq(p, pod))
                        return st && streq(st, state)
                                       ? json_string_value(json_object_get(e, "since"))
                                       : NULL;
        }
        return NULL;
}

/* @detail with "since" on each entry: kept from @observed's annotation while the pod's state is
 * unchanged, else @now. Returns: new reference, NULL on OOM. */
static json_t *detail_with_since(const json_t *detail, const json_t *observed, usec_t now)
{
        const char *text = json_get_string_path(observed, "annotations", REPLICAS_ANNOTATION, NULL);
        json_auto_t *seen = text ? json_loads(text, 0, NULL) : NULL;
        json_auto_t *out = json_array();
        char when[64];
        size_t i;
        json_t *e;

        if (!out || format_rfc3339(now, when, sizeof(when)) < 0)
                return NULL;
        json_array_foreach(detail, i, e) {
                const char *since = seen_since(seen,
                                               nz(json_string_value(json_object_get(e, "pod"))),
                                               nz(json_string_value(json_object_get(e, "state"))));
                json_t *c = json_copy(e);

                if (!c || json_array_append_new(out, c) < 0 ||
                    json_object_set_new(c, "since", json_string(since ? since : when)) < 0)
                        return NULL;
        }
        return json_incref(out);
}

static int set_annotation(json_t *status, const json_t *observed, const json_t *detail, usec_t now)
{
        json_t *ann = json_object_get(status, "annotations");
        json_auto_t *full = detail_with_since(detail, observed, now);
        AUTOFREE char *s = full ? json_dumps(full, JSON_COMPACT) : NULL;

        if (!s)
                return -ENOMEM;
        if (!json_is_object(ann)) {
                ann = json_object();
                if (!ann || json_object_set_new(status, "annotations", ann) < 0)
                        return -ENOMEM;
        }
        return json_object_set_new(ann, REPLICAS_ANNOTATION, json_string(s)) < 0 ? -ENOMEM : 0;
}

bool model_loaded_applies(const json_t *observed, const struct model_loaded *m,
                          bool ready_requires_loaded)
{
        /* nobody reports: add nothing that was not there (KServe's agent, no API access) */
        return m->total > 0 || m->force || ready_requires_loaded ||
               has_condition(observed, CONDITION_MODEL_LOADED);
}

int model_loaded_apply(json_t *status, const json_t *observed, const struct model_loaded *m,
                       bool ready_requires_loaded, usec_t now)
{
        CLEANUP(conditions_releasep) struct conditions c = { 0 }, seen = { 0 };
        const struct condition *ready;
        json_t *arr;
        int k;

        if (!json_is_object(status))
                return -EINVAL;
        if (!model_loaded_applies(observed, m, ready_requires_loaded))
                return 0;
        k = conditions_from_json(json_object_get(status, "conditions"), &c);
        if (k < 0)
                return k;
        if (conditions_from_json(json_object_get(observed, "conditions"), &seen) < 0)
                conditions_init(&seen);
        k = conditions_set(&c, CONDITION_MODEL_LOADED, m->status, "Info", m->reason, m->message,
                           now);
        if (k < 0)
                return k;
        ready = conditions_get(&c, CONDITION_READY);
        if (ready_requires_loaded && m->loaded == 0 && ready &&
            streq(ready->status, CONDITION_STATUS_TRUE)) {
                const char *st = streq(m->status, CONDITION_STATUS_FALSE) && m->total > 0
                                         ? CONDITION_STATUS_FALSE
                                         : CONDITION_STATUS_UNKNOWN;
                k = conditions_set(&c, CONDITION_READY, st, "", m->reason, m->message, now);
                if (k < 0)
                        return k;
        }
        conditions_keep_transition_times(&c, &seen);
        arr = conditions_to_json(&c);
        if (!arr || json_object_set_new(status, "conditions", arr) < 0)
                return -ENOMEM;
        return set_annotation(status, observed, m->detail, now);
}

int replicas_index_isvc(void *userdata, const json_t *obj, json_t **ret_values)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);
        const char *isvc = json_get_string_path(obj, "metadata", "labels", REPLICAS_ISVC_LABEL,
                                                NULL);
        char key[320];
        int n;

        (void)userdata;
        *ret_values = NULL;
        if (!ns || !(replica_report_counts(obj) || replicas_is_assignment(obj)))
                return 0;
        n = snprintf(key, sizeof(key), "%s/%s", ns, isvc);
        if (n < 0 || (size_t)n >= sizeof(key))
                return 0;
        *ret_values = json_pack("[s]", key);
        return *ret_values ? 0 : -ENOMEM;
}

/* "modelconfig-<isvc>-0" -> isvc (written to buf); false for any other name. */
static bool modelconfig_isvc(const char *name, char *buf, size_t len)
{
        size_t n = strlen(name), p = strlen(MODELCONFIG_PREFIX), s = strlen(MODELCONFIG_SUFFIX);

        if (n <= p + s || strncmp(name, MODELCONFIG_PREFIX, p) != 0 ||
            !streq(name + n - s, MODELCONFIG_SUFFIX) || n - p - s >= len)
                return false;
        memcpy(buf, name + p, n - p - s);
        buf[n - p - s] = '\0';
        return true;
}

int replicas_map_configmap(void *userdata, const json_t *obj, json_t **ret_keys)
{
        const char *ns = json_get_string_path(obj, "metadata", "namespace", NULL);
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        const char *isvc = NULL;
        char buf[MODELCONFIG_NAME_MAX], key[320];
        int n;

        (void)userdata;
        *ret_keys = NULL;
        if (!ns || !name)
                return 0;
        if (is_report(obj) || replicas_is_assignment(obj))
                isvc = json_get_string_path(obj, "metadata", "labels", REPLICAS_ISVC_LABEL, NULL);
        else if (modelconfig_isvc(name, buf, sizeof(buf)))
                isvc = buf;
        if (!isvc)
                return 0;
        n = snprintf(key, sizeof(key), "%s/%s", ns, isvc);
        if (n < 0 || (size_t)n >= sizeof(key))
                return 0;
        *ret_keys = json_pack("[s]", key);
        return *ret_keys ? 0 : -ENOMEM;
}

static bool is_modelconfig(const json_t *obj)
{
        const char *name = json_get_string_path(obj, "metadata", "name", NULL);
        char buf[MODELCONFIG_NAME_MAX];

        return name && modelconfig_isvc(name, buf, sizeof(buf));
}

json_t *replicas_transform_configmap(void *userdata, json_t *obj)
{
        json_t *meta = json_object_get(obj, "metadata"), *slim, *m;

        (void)userdata;
        if (!json_is_object(meta))
                return json_incref(obj);
        slim = json_object();
        m = json_copy(meta);
        if (!slim || !m) {
                json_decref(slim);
                json_decref(m);
                return NULL;
        }
        (void)json_object_del(m, "managedFields");
        if (json_object_set_new(slim, "metadata", m) < 0) {
                json_decref(slim);
                return NULL;
        }
        if (json_object_get(obj, "apiVersion"))
                (void)json_object_set(slim, "apiVersion", json_object_get(obj, "apiVersion"));
        if (json_object_get(obj, "kind"))
                (void)json_object_set(slim, "kind", json_object_get(obj, "kind"));
        if ((is_report(obj) || is_modelconfig(obj) || replicas_is_assignment(obj)) &&
            json_object_get(obj, "data") &&
            json_object_set(slim, "data", json_object_get(obj, "data")) < 0) {
                json_decref(slim);
                return NULL;
        }
        /* the 1 MiB budget of models.json counts the other keys (serving/plan.h) */
        if (is_modelconfig(obj) && json_object_get(obj, "binaryData") &&
            json_object_set(slim, "binaryData", json_object_get(obj, "binaryData")) < 0) {
                json_decref(slim);
                return NULL;
        }
        return slim;
}
