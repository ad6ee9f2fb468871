/* SPDX-License-Identifier: Apache-2.0 */
/*
 * About 1,000 lines, one module on purpose: the pure planner of plan.h, in the order a plan is
 * made — per-TrainedModel metadata, finalizer and status rules; then the InferenceService pass
 * (read models.json, admit by memory, fit the ConfigMap, write it, plan each model); then the
 * orphan plan, the JSON view for the golden tests and the write Event. Every part works on the
 * private struct planner and the tm_plan/isvc_plan layouts, and the golden tests pin the whole.
 */
#include "serving/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "util/buf.h"
#include "serving/conditions.h"
#include "serving/isvc.h"
#include "serving/modelconfig.h"
#include "serving/quantity.h"
#include "serving/replicas.h"
#include "serving/spread.h"
#include "serving/trainedmodel.h"

static const char *const state_names[TM_STATE__MAX] = {
        [TM_STATE_IGNORED] = "Ignored",
        [TM_STATE_READY] = "Ready",
        [TM_STATE_PENDING] = "Pending",
        [TM_STATE_WAITING_ISVC] = "WaitingForInferenceService",
        [TM_STATE_WAITING_MMS] = "WaitingForMultiModelPredictor",
        [TM_STATE_WAITING_MEMORY] = "WaitingForMemory",
        [TM_STATE_DOES_NOT_FIT] = "DoesNotFit",
        [TM_STATE_INVALID] = "Invalid",
        [TM_STATE_DELETING] = "Deleting",
        [TM_STATE_FINALIZED] = "Finalized",
        [TM_STATE_PARENT_MISSING] = "ParentMissing",
};

const char *tm_state_to_string(enum tm_state s)
{
        if (s < 0 || s >= TM_STATE__MAX)
                return NULL;
        return state_names[s];
}

bool tm_state_is_waiting(enum tm_state s)
{
        return s == TM_STATE_WAITING_ISVC || s == TM_STATE_WAITING_MMS ||
               s == TM_STATE_WAITING_MEMORY || s == TM_STATE_DOES_NOT_FIT || s == TM_STATE_INVALID;
}

void tm_plan_release(struct tm_plan *p)
{
        free(p->name);
        json_decref(p->metadata_patch);
        json_decref(p->status);
        free(p->event_message);
        spread_tm_free(p->placement);
        *p = (struct tm_plan){ 0 };
}

void isvc_plan_release(struct isvc_plan *p)
{
        for (size_t i = 0; i < p->n_tms; i++)
                tm_plan_release(&p->tms[i]);
        free(p->tms);
        free(p->configmap_name);
        free(p->models_json);
        json_decref(p->configmap_create);
        json_decref(p->configmap_patch);
        spread_writes_free(p->assignment_writes, p->n_assignment_writes);
        json_decref(p->isvc_status_patch);
        free(p->placement_summary);
        *p = (struct isvc_plan){ 0 };
}

/* Per-TrainedModel working state. */
struct tm_work {
        struct trained_model tm;
        bool readable;
        bool ours;               /* spec.inferenceService names this InferenceService */
        bool observed_listed;    /* the observed models.json lists its name */
        bool observed_identical; /* ... with exactly the entry we want */
        bool had_allocated;      /* label allocated == this InferenceService */
        bool admitted;
        bool eligible; /* admitted and allowed into models.json */
        bool listed;   /* in the desired models.json */
        bool full;     /* eligible but does not fit */
        char memory[QUANTITY_STRING_MAX];
        /* placement (serving/spread.h) */
        unsigned copies;     /* modelplane.io/copies, default 1 */
        bool copies_invalid; /* the annotation was set to something else: read as 1 */
        bool in_spread;      /* one of the models placed, at spread_idx */
        size_t spread_idx;
        size_t wanted_idx;   /* its entry in planner.wanted, when listed */
        const char *refusal; /* borrowed; why placement admits it nowhere */
};

struct order_ctx {
        const struct tm_work *w;
        size_t idx;
};

/* By name, then input position. */
static int cmp_name_index(const void *a, const void *b)
{
        const struct order_ctx *x = a, *y = b;
        int c = strcmp(x->w->tm.name, y->w->tm.name);

        if (c != 0)
                return c;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* had_allocated first, then creationTimestamp, then name. */
static int cmp_admission(const void *a, const void *b)
{
        const struct order_ctx *x = a, *y = b;

        if (x->w->had_allocated != y->w->had_allocated)
                return x->w->had_allocated ? -1 : 1;
        if (x->w->tm.created != y->w->tm.created)
                return x->w->tm.created < y->w->tm.created ? -1 : 1;
        return strcmp(x->w->tm.name, y->w->tm.name);
}

/* listed already first, then creationTimestamp, then name. */
static int cmp_fit(const void *a, const void *b)
{
        const struct order_ctx *x = a, *y = b;

        if (x->w->observed_listed != y->w->observed_listed)
                return x->w->observed_listed ? -1 : 1;
        if (x->w->tm.created != y->w->tm.created)
                return x->w->tm.created < y->w->tm.created ? -1 : 1;
        return strcmp(x->w->tm.name, y->w->tm.name);
}

/* Decoded size of the ConfigMap's other data: every data value but models.json + binaryData. */
static size_t other_data_bytes(const json_t *cm)
{
        const json_t *data = json_object_get(cm, "data"), *bin = json_object_get(cm, "binaryData");
        const char *key;
        json_t *v;
        size_t total = 0;

        if (json_is_object(data))
                json_object_foreach((json_t *)data, key, v)
                        if (!streq(key, MODELCONFIG_KEY) && json_is_string(v))
                                total += json_string_length(v);
        if (json_is_object(bin))
                json_object_foreach((json_t *)bin, key, v)
                        if (json_is_string(v)) {
                                const char *s = json_string_value(v);
                                size_t len = json_string_length(v), pad = 0;
                                if (len > 0 && s[len - 1] == '=')
                                        pad++;
                                if (len > 1 && s[len - 2] == '=')
                                        pad++;
                                total += len / 4 * 3 - MIN(pad, len / 4 * 3);
                        }
        return total;
}

static const char *label_of(const struct trained_model *tm, const char *key)
{
        return trained_model_label(tm, key);
}

/* A JSON merge patch {"metadata": {...}} or NULL when @changes is empty. Takes @changes. */
static json_t *metadata_patch_new(json_t *changes, const char *resource_version)
{
        json_auto_t *c = changes;

        if (!c || json_object_size(c) == 0)
                return NULL;
        if (resource_version &&
            json_object_set_new(c, "resourceVersion", json_string(resource_version)) < 0)
                return NULL;
        return json_pack("{s:O}", "metadata", c);
}

static bool is_isvc_ref(const json_t *ref)
{
        const char *kind = json_get_string_path(ref, "kind", NULL);
        const char *api = json_get_string_path(ref, "apiVersion", NULL);

        return kind && streq(kind, "InferenceService") && api &&
               strneq(api, "serving.kserve.io/", strlen("serving.kserve.io/"));
}

/*
 * The ownerReferences list we want: all non-InferenceService references kept, references to
 * other InferenceServices dropped, one non-controller reference to @isvc (when @uid is known).
 * Returns a new reference, or NULL (OOM). Sets *ret_changed.
 */
static json_t *owner_refs_desired(const json_t *current, const char *isvc, const char *uid,
                                  bool *ret_changed)
{
        json_auto_t *out = json_array();
        bool have = false;
        size_t i;
        json_t *ref;

        if (!out)
                return NULL;
        json_array_foreach(current, i, ref) {
                if (is_isvc_ref(ref)) {
                        const char *n = json_get_string_path(ref, "name", NULL);
                        const char *u = json_get_string_path(ref, "uid", NULL);
                        /* keep one reference to this InferenceService (same uid when known) */
                        if (have || !n || !streq(n, isvc) || (uid && (!u || !streq(u, uid))))
                                continue;
                        have = true;
                }
                if (json_array_append(out, ref) < 0)
                        return NULL;
        }
        if (uid && !have) {
                json_t *r = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                                      "serving.kserve.io/v1beta1", "kind", "InferenceService",
                                      "name", isvc, "uid", uid);
                if (!r || json_array_append_new(out, r) < 0)
                        return NULL;
        }
        if (current)
                *ret_changed = !json_equal(out, (json_t *)current);
        else
                *ret_changed = json_array_size(out) > 0;
        return TAKE_PTR(out);
}

static json_t *finalizers_without(const json_t *current)
{
        json_auto_t *out = json_array();
        size_t i;
        json_t *f;

        if (!out)
                return NULL;
        json_array_foreach(current, i, f)
                if (!(json_is_string(f) && streq(json_string_value(f), TM_FINALIZER)) &&
                    json_array_append(out, f) < 0)
                        return NULL;
        return TAKE_PTR(out);
}

static json_t *finalizers_with(const json_t *current)
{
        json_auto_t *out = current ? json_copy((json_t *)current) : json_array();

        if (!out || json_array_append_new(out, json_string(TM_FINALIZER)) < 0)
                return NULL;
        return TAKE_PTR(out);
}

static int set_event(struct tm_plan *p, const char *type, const char *reason, const char *fmt, ...)
        _printf_(4, 5);

static int set_event(struct tm_plan *p, const char *type, const char *reason, const char *fmt, ...)
{
        va_list ap;
        char *m;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&m, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        free(p->event_message);
        p->event_type = type;
        p->event_reason = reason;
        p->event_message = m;
        return 0;
}

/* True when setting key of obj to want (NULL: not set) changes nothing. */
static bool same_member(const json_t *obj, const char *key, const json_t *want)
{
        return !want || json_equal(json_object_get(obj, key), (json_t *)want);
}

/*
 * The status we want: the observed one with new conditions and, when given, URLs. When that is
 * what was observed (the steady state of every pass), p->status is the observed object itself,
 * shared and read-only: no copy of it is made (plan.h).
 */
static int status_build(const struct trained_model *tm, const struct conditions *conds,
                        const char *url, const char *address_url, struct tm_plan *p)
{
        json_auto_t *c = conditions_to_json(conds), *u = NULL, *a = NULL, *st = NULL;

        if (!c)
                return -ENOMEM;
        if (url && !(u = json_string(url)))
                return -ENOMEM;
        if (address_url && !(a = json_pack("{s:s}", "url", address_url)))
                return -ENOMEM;
        if (json_is_object(tm->status) && same_member(tm->status, "conditions", c) &&
            same_member(tm->status, "url", u) && same_member(tm->status, "address", a)) {
                p->status_changed = false;
                p->status = json_incref((json_t *)tm->status);
                return 0;
        }
        st = tm->status ? json_deep_copy(tm->status) : json_object();
        if (!st || json_object_set(st, "conditions", c) < 0)
                return -ENOMEM;
        if (u && json_object_set(st, "url", u) < 0)
                return -ENOMEM;
        if (a && json_object_set(st, "address", a) < 0)
                return -ENOMEM;
        p->status_changed = true; /* a member set above differs from what was observed */
        p->status = TAKE_PTR(st);
        return 0;
}

/*
 * Adds the ownerReferences for (isvc, uid) to changes (taken over) when they differ, and stores
 * the metadata patch in p when anything is to change.
 */
static int plan_refs_and_patch(const struct trained_model *tm, json_t *changes_in, const char *isvc,
                               const char *uid, struct tm_plan *p)
{
        json_auto_t *changes = changes_in, *refs = NULL;
        bool refs_changed = false;

        refs = owner_refs_desired(tm->owner_references, isvc, uid, &refs_changed);
        if (!refs)
                return -ENOMEM;
        if (refs_changed && json_object_set(changes, "ownerReferences", refs) < 0)
                return -ENOMEM;
        if (json_object_size(changes) > 0) {
                p->metadata_patch = metadata_patch_new(TAKE_PTR(changes), tm->resource_version);
                if (!p->metadata_patch)
                        return -ENOMEM;
        }
        return 0;
}

/* Whether the API server takes @v as a label value: no label is planned that it would refuse
 * (the TrainedModel reader marks such a parent name invalid, serving/trainedmodel.h). */
static bool label_value_ok(const char *v)
{
        return strlen(v) <= TM_LABEL_VALUE_MAX;
}

/* Without the finalizer (plan_input.no_finalizer): a live model's TM_FINALIZER goes with the
 * metadata patch planned anyway, or, when there is none, later and paced (release_finalizer). */
static int plan_finalizer_drop(const struct trained_model *tm, struct tm_plan *p)
{
        json_t *meta = json_object_get(p->metadata_patch, "metadata");

        if (!meta) {
                p->release_finalizer = true;
                return 0;
        }
        return json_object_set_new(meta, "finalizers", finalizers_without(tm->finalizers)) < 0
                       ? -ENOMEM
                       : 0;
}

static int plan_metadata(const struct trained_model *tm, const char *isvc, const char *uid,
                         bool admitted, bool no_finalizer, struct tm_plan *p)
{
        json_auto_t *changes = json_object(), *labels = json_object();
        bool labelled = label_value_ok(isvc);
        const char *cur;
        int r;

        if (!changes || !labels)
                return -ENOMEM;
        cur = label_of(tm, TM_LABEL_ISVC);
        if (labelled && (!cur || !streq(cur, isvc)) &&
            json_object_set_new(labels, TM_LABEL_ISVC, json_string(isvc)) < 0)
                return -ENOMEM;
        /* a label naming a former parent is dropped: it must not claim the model */
        if (!labelled && cur && json_object_set_new(labels, TM_LABEL_ISVC, json_null()) < 0)
                return -ENOMEM;
        cur = label_of(tm, TM_LABEL_ALLOCATED);
        if (labelled && admitted && (!cur || !streq(cur, isvc)) &&
            json_object_set_new(labels, TM_LABEL_ALLOCATED, json_string(isvc)) < 0)
                return -ENOMEM;
        if (!admitted && tm->labels && json_object_get(tm->labels, TM_LABEL_ALLOCATED) &&
            json_object_set_new(labels, TM_LABEL_ALLOCATED, json_null()) < 0)
                return -ENOMEM;
        if (json_object_size(labels) > 0 && json_object_set(changes, "labels", labels) < 0)
                return -ENOMEM;

        if (!no_finalizer && !tm->has_finalizer &&
            json_object_set_new(changes, "finalizers", finalizers_with(tm->finalizers)) < 0)
                return -ENOMEM;

        r = plan_refs_and_patch(tm, TAKE_PTR(changes), isvc, uid, p);
        if (r < 0 || !no_finalizer || !tm->has_finalizer)
                return r;
        return plan_finalizer_drop(tm, p);
}

/* The metadata patch without TM_FINALIZER. Returns: new reference; NULL on OOM. */
static json_t *finalizer_removal_patch(const struct trained_model *tm)
{
        json_t *changes = json_pack("{s:o}", "finalizers", finalizers_without(tm->finalizers));

        return changes ? metadata_patch_new(changes, tm->resource_version) : NULL;
}

static int plan_finalizer_removal(const struct trained_model *tm, struct tm_plan *p)
{
        if (!tm->has_finalizer)
                return 0;
        p->metadata_patch = finalizer_removal_patch(tm);
        return p->metadata_patch ? 0 : -ENOMEM;
}

/* §2.2 step 6, in KServe's order: InferenceServiceReady, IsMMSPredictor, MemoryResource... */
static int mark_conditions(const struct tm_work *w, const struct isvc_info *info, usec_t now,
                           struct conditions *c)
{
        const struct trained_model *tm = &w->tm;
        bool impl_ok = info->has_impl && info->mms;
        int r;

        r = info->ready ? conditions_mark_true(c, CONDITION_INFERENCE_SERVICE_READY, now)
                        : conditions_mark_false(c, CONDITION_INFERENCE_SERVICE_READY,
                                                REASON_INFERENCE_SERVICE_NOT_READY,
                                                MESSAGE_INFERENCE_SERVICE_NOT_READY, now);
        if (r < 0)
                return r;
        r = impl_ok ? conditions_mark_true(c, CONDITION_IS_MMS_PREDICTOR, now)
                    : conditions_mark_false(c, CONDITION_IS_MMS_PREDICTOR,
                                            REASON_IS_NOT_MMS_PREDICTOR,
                                            MESSAGE_IS_NOT_MMS_PREDICTOR, now);
        if (r < 0)
                return r;
        if (!tm->valid)
                return conditions_mark_false(c, CONDITION_MEMORY_RESOURCE_AVAILABLE,
                                             REASON_INVALID_SPEC, tm->invalid_message, now);
        if (w->admitted)
                return conditions_mark_true(c, CONDITION_MEMORY_RESOURCE_AVAILABLE, now);
        /* under placement: the planner's shortfall ("needs 2Gi; the most free ...") */
        return conditions_mark_false(c, CONDITION_MEMORY_RESOURCE_AVAILABLE,
                                     REASON_MEMORY_RESOURCE_NOT_AVAILABLE,
                                     w->refusal ? w->refusal
                                                : MESSAGE_MEMORY_RESOURCE_NOT_AVAILABLE,
                                     now);
}

static enum tm_state active_state(const struct tm_work *w, const struct isvc_info *info)
{
        if (!w->tm.valid)
                return TM_STATE_INVALID;
        if (!w->admitted)
                return TM_STATE_WAITING_MEMORY;
        if (!info->has_impl || !info->mms)
                return TM_STATE_WAITING_MMS;
        if (!info->ready)
                return TM_STATE_WAITING_ISVC;
        if (w->full)
                return TM_STATE_DOES_NOT_FIT;
        return w->observed_identical ? TM_STATE_READY : TM_STATE_PENDING;
}

/* Ready of a model that does not fit (W4) or is not listed yet (W3). */
static int mark_ready(const struct trained_model *tm, enum tm_state state, const char *cm_name,
                      usec_t now, struct conditions *c)
{
        AUTOFREE char *msg = NULL;

        if (state == TM_STATE_DOES_NOT_FIT) {
                if (asprintf(&msg,
                             "models.json of ConfigMap \"%s\" would exceed %zu bytes: model \"%s\" "
                             "does not fit",
                             cm_name, MODELCONFIG_DATA_MAX, tm->name) < 0)
                        return -ENOMEM;
                return conditions_mark_false(c, CONDITION_READY, REASON_MODEL_CONFIG_FULL, msg,
                                             now);
        }
        if (state == TM_STATE_PENDING) {
                if (asprintf(&msg,
                             "Waiting for models.json of ConfigMap \"%s\" to list model \"%s\"",
                             cm_name, tm->name) < 0)
                        return -ENOMEM;
                return conditions_set(c, CONDITION_READY, CONDITION_STATUS_UNKNOWN, "",
                                      REASON_MODEL_CONFIG_PENDING, msg, now);
        }
        return 0;
}

/* Events: Normal on models.json changes, Warning for invalid / full. */
static int active_event(const struct tm_work *w, const char *cm_name, struct tm_plan *p)
{
        const struct trained_model *tm = &w->tm;

        if (p->state == TM_STATE_INVALID && p->status_changed)
                return set_event(p, "Warning", REASON_INVALID_SPEC, "%s", tm->invalid_message);
        if (p->state == TM_STATE_DOES_NOT_FIT && p->status_changed)
                return set_event(p, "Warning", REASON_MODEL_CONFIG_FULL,
                                 "Model \"%s\" does not fit in models.json of ConfigMap \"%s\"",
                                 tm->name, cm_name);
        if (w->listed && !w->observed_listed)
                return set_event(p, "Normal", "ModelAdded",
                                 "Added model \"%s\" to models.json of ConfigMap \"%s\"", tm->name,
                                 cm_name);
        if (w->listed && !w->observed_identical)
                return set_event(p, "Normal", "ModelUpdated",
                                 "Updated model \"%s\" in models.json of ConfigMap \"%s\"",
                                 tm->name, cm_name);
        if (!w->listed && w->observed_listed)
                return set_event(p, "Normal", "ModelRemoved",
                                 "Removed model \"%s\" from models.json of ConfigMap \"%s\"",
                                 tm->name, cm_name);
        return 0;
}

static int plan_active(const struct tm_work *w, const struct isvc_info *info,
                       const struct plan_input *in, const char *cm_name, struct tm_plan *p)
{
        const char *isvc = in->isvc_name;
        usec_t now = in->now;
        const struct trained_model *tm = &w->tm;
        CLEANUP(conditions_releasep) struct conditions observed = { 0 }, c = { 0 };
        AUTOFREE char *url = NULL, *address_url = NULL;
        bool all_true;
        int r;

        if (conditions_from_json(json_object_get(tm->status, "conditions"), &observed) < 0)
                conditions_init(&observed);
        r = conditions_copy(&observed, &c);
        if (r >= 0)
                r = mark_conditions(w, info, now, &c);
        if (r < 0)
                return r;
        p->state = active_state(w, info);
        r = mark_ready(tm, p->state, cm_name, now, &c);
        if (r < 0)
                return r;
        conditions_keep_transition_times(&c, &observed);

        /* §2.2 step 7: URLs only once all three conditions are True */
        all_true = tm->valid && info->ready && info->has_impl && info->mms && w->admitted;
        if (all_true && info->url) {
                url = isvc_model_url(info->url, info->protocol, tm->name);
                if (!url)
                        return -ENOMEM;
        }
        if (all_true && info->address_url) {
                address_url = isvc_model_url(info->address_url, info->protocol, tm->name);
                if (!address_url)
                        return -ENOMEM;
        }
        r = status_build(tm, &c, url, address_url, p);
        if (r < 0)
                return r;
        r = plan_metadata(tm, isvc, info->uid, w->admitted, in->no_finalizer, p);
        if (r < 0)
                return r;
        r = active_event(w, cm_name, p);
        if (r < 0 || !w->copies_invalid || p->event_type || !p->status_changed)
                return r;
        /* the webhook refuses it; one that got in anyway is read as the default */
        return set_event(p, "Warning", "InvalidCopies",
                         "Annotation " SPREAD_COPIES_ANNOTATION " of TrainedModel \"%s\" is not a "
                         "positive integer or \"" SPREAD_COPIES_ALL "\": placed with 1 copy",
                         tm->name);
}

/* The label that lets the controller watch its modelconfig ConfigMaps (drift repair): the
 * InferenceService's name under serving.kserve.io/inferenceservice (serving/replicas.h). */
static bool configmap_labelled(const json_t *cm, const char *isvc)
{
        const char *v = json_get_string_path(cm, "metadata", "labels", REPLICAS_ISVC_LABEL, NULL);

        return v && streq(v, isvc);
}

/* The placement annotation of modelconfig-<isvc>-0 as wanted (@spread) and as observed. */
static bool configmap_annotation_ok(const json_t *cm, bool spread)
{
        const char *v = json_get_string_path(cm, "metadata", "annotations", SPREAD_ANNOTATION,
                                             NULL);

        return spread ? v && streq(v, SPREAD_ON)
                      : !json_get_path(cm, "metadata", "annotations", SPREAD_ANNOTATION, NULL);
}

/* A merge patch of models.json (NULL: unchanged), with the label when @isvc is given (NULL:
 * present) and, when @annotate, the placement annotation set (@spread) or removed. */
static int configmap_patch_new(const json_t *cm, const char *models_json, const char *isvc,
                               bool annotate, bool spread, json_t **ret)
{
        const char *rv = json_get_string_path(cm, "metadata", "resourceVersion", NULL);
        json_auto_t *p = json_object(), *meta = json_object();

        if (!p || !meta)
                return -ENOMEM;
        if (models_json &&
            json_object_set_new(p, "data", json_pack("{s:s}", MODELCONFIG_KEY, models_json)) < 0)
                return -ENOMEM;
        if (annotate &&
            json_object_set_new(meta, "annotations",
                                json_pack("{s:o}", SPREAD_ANNOTATION,
                                          spread ? json_string(SPREAD_ON) : json_null())) < 0)
                return -ENOMEM;
        if (rv && json_object_set_new(meta, "resourceVersion", json_string(rv)) < 0)
                return -ENOMEM;
        if (isvc &&
            json_object_set_new(meta, "labels", json_pack("{s:s}", REPLICAS_ISVC_LABEL, isvc)) < 0)
                return -ENOMEM;
        if (json_object_size(meta) > 0 && json_object_set(p, "metadata", meta) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(p);
        return 0;
}

/* The state of one isvc_plan_compute() call, shared by its phases. */
struct planner {
        const struct plan_input *in; /* borrowed */
        struct isvc_plan plan;       /* what is being built; moved to the caller at the end */
        struct isvc_info info;
        char cm_name[MODELCONFIG_NAME_MAX];
        bool cm_ok;                /* the ConfigMap exists and has our name */
        const char *observed_data; /* borrowed; its models.json */
        struct model_entries observed, wanted, candidates;
        bool *claimed;           /* owned, parallel to observed (no_finalizer only): a readable
                                  * TrainedModel of this InferenceService has the entry's name */
        struct tm_work *work;    /* owned, parallel to in->tms */
        struct order_ctx *order; /* owned; scratch for the orderings */
        size_t *fit_order;       /* owned */
        bool *fits;              /* owned, parallel to candidates */
        /* placement (serving/spread.h) */
        bool spread;                  /* the InferenceService is annotated for it */
        struct spread_model *smodels; /* owned; the placed models, admission order */
        struct spread_held *held;     /* owned; models being deleted */
        struct spread_input sin;      /* points into the above */
        struct spread_result sres;
};

static void planner_release(struct planner *p)
{
        isvc_plan_release(&p->plan);
        model_entries_release(&p->observed);
        model_entries_release(&p->wanted);
        model_entries_release(&p->candidates);
        free(p->claimed);
        free(p->work);
        free(p->order);
        free(p->fit_order);
        free(p->fits);
        free(p->smodels);
        free(p->held);
        spread_result_release(&p->sres);
}

/* Phase 1: inputs checked; the ConfigMap's name and its observed models.json (a ConfigMap of
 * another name is no ConfigMap: §9.2 M2; a corrupt one is rewritten from the desired set). */
static int planner_init(struct planner *p, const struct plan_input *in)
{
        const json_t *cm = in->configmap;
        size_t n = in->n_tms;

        if (!in->isvc_name || in->isvc_name[0] == '\0' || (n > 0 && !in->tms))
                return -EINVAL;
        if (in->isvc && isvc_info_from_json(in->isvc, &p->info) < 0)
                return -EINVAL;
        if (cm && !json_is_object(cm))
                return -EINVAL;
        p->spread = in->isvc && spread_enabled(in->isvc);
        if (modelconfig_name(in->isvc_name, p->cm_name, sizeof(p->cm_name)) < 0)
                return -EINVAL;
        p->in = in;
        p->plan.isvc_found = in->isvc != NULL;
        p->plan.configmap_name = strdup(p->cm_name);
        if (!p->plan.configmap_name)
                return -ENOMEM;
        if (cm) {
                const char *name = json_get_string_path(cm, "metadata", "name", NULL);
                p->cm_ok = name && streq(name, p->cm_name);
        }
        if (p->cm_ok) {
                p->observed_data = json_get_string_path(cm, "data", MODELCONFIG_KEY, NULL);
                if (modelconfig_parse(p->observed_data, &p->observed, NULL, 0) < 0)
                        model_entries_init(&p->observed);
        }
        if (n > 0) {
                p->work = calloc(n, sizeof(*p->work));
                p->order = calloc(n, sizeof(*p->order));
                p->fit_order = calloc(n, sizeof(*p->fit_order));
                p->plan.tms = calloc(n, sizeof(*p->plan.tms));
                if (!p->work || !p->order || !p->fit_order || !p->plan.tms)
                        return -ENOMEM;
        }
        p->plan.n_tms = n;
        return 0;
}

/* modelplane.io/copies (serving/spread.h): absent is 1; anything invalid is 1, noted. */
static void read_copies(const json_t *tm, struct tm_work *w)
{
        const char *v = json_get_string_path(tm, "metadata", "annotations",
                                             SPREAD_COPIES_ANNOTATION, NULL);

        w->copies = 1;
        if (v && spread_copies_parse(v, &w->copies) < 0) {
                w->copies = 1;
                w->copies_invalid = true;
        }
}

/* no_finalizer: which observed entries a readable TrainedModel of this InferenceService names;
 * the others belong to TrainedModels that are gone (or moved away). */
static int claim_observed(struct planner *p)
{
        if (!p->in->no_finalizer || p->observed.n == 0)
                return 0;
        p->claimed = calloc(p->observed.n, sizeof(*p->claimed));
        if (!p->claimed)
                return -ENOMEM;
        for (size_t i = 0; i < p->in->n_tms; i++) {
                const struct tm_work *w = &p->work[i];
                const struct model_entry *o;

                if (!w->readable || !w->ours)
                        continue;
                o = model_entries_find_sorted(&p->observed, w->tm.name);
                if (o)
                        p->claimed[o - p->observed.items] = true;
        }
        return 0;
}

/* Phase 2: each TrainedModel read; a model passed twice is planned once (the first one). */
static int read_models(struct planner *p)
{
        const struct plan_input *in = p->in;
        size_t n_order = 0;

        for (size_t i = 0; i < in->n_tms; i++) {
                struct tm_work *w = &p->work[i];
                const char *alloc;

                w->readable = trained_model_from_json(in->tms[i], &w->tm) >= 0;
                p->plan.tms[i].name = strdup(w->readable ? w->tm.name : "");
                if (!p->plan.tms[i].name)
                        return -ENOMEM;
                if (!w->readable)
                        continue;
                w->ours = w->tm.isvc && streq(w->tm.isvc, in->isvc_name);
                w->observed_listed = model_entries_find_sorted(&p->observed, w->tm.name) != NULL;
                alloc = label_of(&w->tm, TM_LABEL_ALLOCATED);
                w->had_allocated = alloc && streq(alloc, in->isvc_name);
                if (w->tm.valid &&
                    quantity_to_canonical_string(&w->tm.memory, w->memory, sizeof(w->memory)) < 0)
                        return -ENOMEM;
                if (p->spread)
                        read_copies(in->tms[i], w);
        }
        for (size_t i = 0; i < in->n_tms; i++)
                if (p->work[i].readable)
                        p->order[n_order++] = (struct order_ctx){ .w = &p->work[i], .idx = i };
        if (n_order > 1)
                qsort(p->order, n_order, sizeof(*p->order), cmp_name_index);
        for (size_t j = 1; j < n_order; j++)
                if (streq(p->order[j].w->tm.name, p->order[j - 1].w->tm.name))
                        p->work[p->order[j].idx].readable = false;
        return claim_observed(p);
}

/* no_finalizer: the entries of gone TrainedModels are still loaded until models.json drops
 * them, so their memory counts, as a deleting model's does. false on overflow. */
static bool count_unclaimed(const struct planner *p, struct quantity *total)
{
        for (size_t i = 0; p->claimed && i < p->observed.n; i++) {
                const char *mem = p->observed.items[i].memory;
                struct quantity q;

                if (p->claimed[i] || !mem || quantity_parse(mem, &q) < 0 || quantity_sign(&q) < 0)
                        continue;
                if (quantity_add(total, &q) < 0)
                        return false;
        }
        return true;
}

/* Phase 3, memory admission (W2/W8): still-loaded deleting (or, without the finalizer, gone)
 * models first, then first fit. */
static void admit_memory(struct planner *p)
{
        bool total_overflow = false;
        struct quantity total;
        size_t n_order = 0;

        quantity_init_zero(&total, QUANTITY_BINARY_SI);
        total_overflow = !count_unclaimed(p, &total);
        for (size_t i = 0; i < p->in->n_tms; i++) {
                struct tm_work *w = &p->work[i];

                if (!w->readable || !w->ours || !w->tm.valid)
                        continue;
                if (w->tm.being_deleted) {
                        /* beyond any representable limit: nothing else can be admitted */
                        if (w->observed_listed && quantity_add(&total, &w->tm.memory) < 0)
                                total_overflow = true;
                        continue;
                }
                p->order[n_order++] = (struct order_ctx){ .w = w, .idx = i };
        }
        if (n_order > 1)
                qsort(p->order, n_order, sizeof(*p->order), cmp_admission);
        for (size_t j = 0; j < n_order; j++) {
                struct tm_work *w = &p->work[p->order[j].idx];
                struct quantity t = total;

                if (total_overflow || quantity_add(&t, &w->tm.memory) < 0)
                        continue; /* beyond any limit */
                if (isvc_memory_available(&p->info, &t)) {
                        w->admitted = true;
                        total = t;
                }
        }
}

static uint64_t memory_bytes(const struct quantity *q)
{
        uint64_t v;

        return quantity_to_u64_ceil(q, &v) < 0 ? UINT64_MAX : v;
}

/* Phase 3 under placement: the placement planner admits (serving/spread.h): valid models in
 * admission order; the memory of models being deleted stays taken where they are assigned. */
static int admit_spread(struct planner *p)
{
        bool limit_ok = p->info.has_impl && p->info.limit_known;
        size_t n_order = 0, n_held = 0;
        int r;

        p->smodels = calloc(p->in->n_tms + 1, sizeof(*p->smodels));
        p->held = calloc(p->in->n_tms + 1, sizeof(*p->held));
        if (!p->smodels || !p->held)
                return -ENOMEM;
        for (size_t i = 0; i < p->in->n_tms; i++) {
                struct tm_work *w = &p->work[i];

                if (!w->readable || !w->ours || !w->tm.valid)
                        continue;
                if (w->tm.being_deleted)
                        p->held[n_held++] = (struct spread_held){ w->tm.name,
                                                                  memory_bytes(&w->tm.memory) };
                else
                        p->order[n_order++] = (struct order_ctx){ .w = w, .idx = i };
        }
        if (n_order > 1)
                qsort(p->order, n_order, sizeof(*p->order), cmp_admission);
        for (size_t j = 0; j < n_order; j++) {
                struct tm_work *w = &p->work[p->order[j].idx];

                w->in_spread = true;
                w->spread_idx = j;
                p->smodels[j] = (struct spread_model){ .name = w->tm.name,
                                                       .storage_uri = w->tm.storage_uri,
                                                       .memory = memory_bytes(&w->tm.memory),
                                                       .copies = w->copies,
                                                       .status = w->tm.status };
        }
        p->sin = (struct spread_input){
                .isvc = p->in->isvc_name,
                .namespace_ = p->info.namespace_,
                .configmaps = p->in->configmaps,
                .now = p->in->now,
                .capacity = limit_ok ? memory_bytes(&p->info.memory_limit) : 0,
                .declared = spread_declared_replicas(p->in->isvc),
                .models = p->smodels,
                .n_models = n_order,
                .held = p->held,
                .n_held = n_held,
        };
        r = spread_compute(&p->sin, &p->sres);
        if (r < 0)
                return r;
        for (size_t j = 0; j < n_order; j++) {
                struct tm_work *w = &p->work[p->order[j].idx];

                /* without a known limit nothing is admitted, as without placement */
                w->admitted = limit_ok && p->sres.models[j].admitted;
                w->refusal = limit_ok ? p->sres.models[j].refusal : NULL;
        }
        return 0;
}

/* Phase 4, models.json (W4): eligible models fitted into the size budget, already-listed ones
 * first; p->wanted gets the entries that fit. */
static int fit_models_json(struct planner *p)
{
        const struct isvc_info *info = &p->info;
        size_t n_order = 0, other, budget;
        int r;

        for (size_t i = 0; i < p->in->n_tms; i++) {
                struct tm_work *w = &p->work[i];

                w->eligible = w->admitted && info->has_impl && info->mms &&
                              (info->ready || w->observed_listed);
                if (w->eligible)
                        p->order[n_order++] = (struct order_ctx){ .w = w, .idx = i };
        }
        if (n_order > 1)
                qsort(p->order, n_order, sizeof(*p->order), cmp_fit);
        for (size_t j = 0; j < n_order; j++) {
                const struct tm_work *w = &p->work[p->order[j].idx];

                r = model_entries_append(&p->candidates, w->tm.name, w->tm.storage_uri,
                                         w->tm.framework, w->memory);
                if (r < 0)
                        return r;
                p->fit_order[j] = j; /* candidates are in fit priority order */
        }
        if (p->candidates.n > 0) {
                p->fits = calloc(p->candidates.n, sizeof(*p->fits));
                if (!p->fits)
                        return -ENOMEM;
        }
        other = p->cm_ok ? other_data_bytes(p->in->configmap) : 0;
        budget = other < MODELCONFIG_DATA_MAX ? MODELCONFIG_DATA_MAX - other : 0;
        (void)modelconfig_fit(&p->candidates, p->fit_order, p->candidates.n, budget, p->fits);
        for (size_t j = 0; j < n_order; j++) {
                struct tm_work *w = &p->work[p->order[j].idx];
                const struct model_entry *c = &p->candidates.items[j], *o;

                if (!p->fits[j]) {
                        w->full = true;
                        continue;
                }
                w->listed = true;
                w->wanted_idx = p->wanted.n;
                o = model_entries_find_sorted(&p->observed, w->tm.name);
                w->observed_identical = o && model_entry_equal(o, c);
                r = model_entries_append(&p->wanted, c->name, c->storage_uri, c->framework,
                                         c->memory);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Phase 5: the desired bytes, and the ConfigMap patch (only on change) or create. */
static int plan_configmap_update(struct planner *p)
{
        struct isvc_plan *plan = &p->plan;
        const char *have = p->observed_data;
        bool same = (have && streq(have, plan->models_json)) ||
                    (streq(plan->models_json, "[]") && (!have || have[0] == '\0'));
        bool annotated = configmap_annotation_ok(p->in->configmap, p->spread);

        /* an unlabelled ConfigMap (KServe's, an older modelplane's) gets the label with its next
         * models.json write; no write for the label alone */
        if (same && annotated)
                return 0;
        return configmap_patch_new(p->in->configmap, same ? NULL : plan->models_json,
                                   configmap_labelled(p->in->configmap, p->in->isvc_name) ||
                                                   !label_value_ok(p->in->isvc_name)
                                           ? NULL
                                           : p->in->isvc_name,
                                   !annotated, p->spread, &plan->configmap_patch);
}

static int plan_configmap_create(struct planner *p)
{
        struct isvc_plan *plan = &p->plan;
        json_t *meta;

        plan->configmap_create = modelconfig_configmap_new(&p->info, plan->models_json);
        meta = json_object_get(plan->configmap_create, "metadata");
        if (!meta)
                return -ENOMEM;
        if (p->spread && json_object_set_new(meta, "annotations",
                                             json_pack("{s:s}", SPREAD_ANNOTATION, SPREAD_ON)) < 0)
                return -ENOMEM;
        if (!label_value_ok(p->in->isvc_name))
                return 0; /* unlabelled: read with a GET (serving/reconciler.c) */
        if (!json_is_object(json_object_get(meta, "labels")) &&
            json_object_set_new(meta, "labels", json_object()) < 0)
                return -ENOMEM;
        return json_object_set_new(json_object_get(meta, "labels"), REPLICAS_ISVC_LABEL,
                                   json_string(p->in->isvc_name)) < 0
                       ? -ENOMEM
                       : 0;
}

static int plan_configmap(struct planner *p)
{
        struct isvc_plan *plan = &p->plan;
        int r;

        r = modelconfig_serialize(&p->wanted, &plan->models_json, /* ret_len= */ NULL);
        if (r < 0)
                return r;
        if (p->cm_ok)
                return plan_configmap_update(p);
        if (p->info.has_impl && p->info.mms)
                return plan_configmap_create(p);
        free(plan->models_json);
        plan->models_json = NULL;
        return 0;
}

/* Phase 5b, placement: the assignment ConfigMaps of the listed models and the InferenceService's
 * status annotation; without placement, the leftovers of an earlier one removed. */
static int plan_spread(struct planner *p)
{
        struct isvc_plan *plan = &p->plan;
        int r = 0;

        if (!p->spread) {
                r = spread_plan_cleanup(p->in->isvc_name, p->in->configmaps,
                                        &plan->assignment_writes, &plan->n_assignment_writes);
                return r < 0 ? r
                             : spread_isvc_status_patch(p->in->isvc, NULL,
                                                        &plan->isvc_status_patch);
        }
        for (size_t i = 0; i < p->in->n_tms; i++) {
                const struct tm_work *w = &p->work[i];

                if (w->in_spread && w->listed)
                        p->smodels[w->spread_idx].entry = &p->wanted.items[w->wanted_idx];
        }
        /* only where modelconfig-<isvc>-0 is (or is being) written: a multi-model predictor */
        if (plan->models_json)
                r = spread_plan_writes(&p->sin, &p->sres, &plan->assignment_writes,
                                       &plan->n_assignment_writes);
        if (r < 0)
                return r;
        plan->placement = true;
        plan->placement_moved = p->sres.moved;
        plan->placement_summary = spread_status_summary(&p->sres);
        if (!plan->placement_summary)
                return -ENOMEM;
        return spread_isvc_status_patch(p->in->isvc, plan->placement_summary,
                                        &plan->isvc_status_patch);
}

/* Phase 6: each TrainedModel's state, metadata, status and event. Without a parent: live
 * models are deleted, deleting ones released (W6). */
static int plan_models(struct planner *p)
{
        bool parent = p->in->isvc != NULL;

        for (size_t i = 0; i < p->in->n_tms; i++) {
                struct tm_work *w = &p->work[i];
                struct tm_plan *t = &p->plan.tms[i];
                int r = 0;

                if (!w->readable || !w->ours) {
                        t->state = TM_STATE_IGNORED;
                        continue;
                }
                t->admitted = w->admitted;
                t->listed = w->listed;
                if (w->in_spread) /* moved: the plan owns it now */
                        t->placement = TAKE_PTR(p->sres.models[w->spread_idx].tm);
                if (!w->tm.being_deleted && !parent) {
                        t->state = TM_STATE_PARENT_MISSING;
                        t->delete_object = true;
                } else if (!w->tm.being_deleted)
                        r = plan_active(w, &p->info, p->in, p->cm_name, t);
                else if (parent && w->observed_listed) {
                        t->state = TM_STATE_DELETING;
                        r = set_event(t, "Normal", "ModelRemoved",
                                      "Removed model \"%s\" from models.json of ConfigMap \"%s\"",
                                      w->tm.name, p->cm_name);
                } else {
                        t->state = TM_STATE_FINALIZED;
                        r = plan_finalizer_removal(&w->tm, t);
                }
                if (r < 0)
                        return r;
                if (t->metadata_patch)
                        t->metadata_phase = w->tm.being_deleted ? TM_METADATA_FINALIZE
                                                                : TM_METADATA_FIRST;
        }
        return 0;
}

/* One planned status with the replicas' reports merged in: ModelLoaded over every replica, or
 * under placement over the replicas it is assigned (serving/spread.h). */
static int merge_loaded(const struct planner *p, const struct replica_set *set, size_t i)
{
        const struct tm_work *w = &p->work[i];
        struct tm_plan *t = &p->plan.tms[i];
        const json_t *observed = w->tm.status;
        const char *uri = json_get_string_path(p->in->tms[i], "spec", "model", "storageUri", NULL);
        bool rrl = p->in->ready_requires_loaded;
        CLEANUP(model_loaded_release) struct model_loaded m = { 0 };
        int r;

        if (p->plan.placement && !t->placement)
                return 0; /* not placed (invalid, not this InferenceService's) */
        if (!p->plan.placement) {
                r = model_loaded_summarize(set, t->name, uri, &m);
                if (r < 0 || !model_loaded_applies(observed, &m, rrl))
                        return r < 0 ? r : 0;
        }
        if (t->status == observed) {
                /* the plan shares the observed status (unchanged): edit a copy */
                json_t *copy = json_deep_copy(observed);

                if (!copy)
                        return -ENOMEM;
                json_decref(t->status);
                t->status = copy;
        }
        r = p->plan.placement ? spread_status_apply(t->status, observed, set, t->name, uri,
                                                    t->placement, rrl, p->in->now)
                              : model_loaded_apply(t->status, observed, &m, rrl, p->in->now);
        if (r >= 0)
                t->status_changed = !observed || !json_equal(t->status, (json_t *)observed);
        return r;
}

/* Phase 7, the replicas' reports (when the shell reads them): each planned status (only models
 * not being deleted have one) with ModelLoaded; when a fresh report turns stale. Placement
 * read the same reports at the same time already. */
static int plan_loaded(struct planner *p)
{
        CLEANUP(replica_set_release) struct replica_set own = { 0 };
        const struct replica_set *set = &own;
        int r = 0;

        if (!p->in->configmaps)
                return 0;
        if (p->plan.placement)
                set = &p->sres.set;
        else
                r = replica_set_build((json_t *)p->in->configmaps, p->in->now, &own);
        if (r < 0)
                return r;
        p->plan.next_stale = set->next_stale;
        for (size_t i = 0; r >= 0 && i < p->plan.n_tms; i++)
                if (p->plan.tms[i].status)
                        r = merge_loaded(p, set, i);
        return r;
}

int isvc_plan_compute(const struct plan_input *in, struct isvc_plan *ret)
{
        CLEANUP(planner_release) struct planner p = { 0 };
        int r;

        if (!in || !ret)
                return -EINVAL;
        r = planner_init(&p, in);
        if (r >= 0)
                r = read_models(&p);
        if (r >= 0 && in->isvc) {
                if (p.spread)
                        r = admit_spread(&p);
                else
                        admit_memory(&p);
                if (r >= 0)
                        r = fit_models_json(&p);
                if (r >= 0)
                        r = plan_configmap(&p);
                if (r >= 0)
                        r = plan_spread(&p);
        }
        if (r >= 0)
                r = plan_models(&p);
        if (r >= 0)
                r = plan_loaded(&p);
        if (r < 0)
                return r;
        *ret = p.plan;
        p.plan = (struct isvc_plan){ 0 };
        return 0;
}

static inline void tm_plan_releasep(struct tm_plan *p)
{
        tm_plan_release(p);
}

/* Labels and ownerReferences of a model that has no parent to belong to. */
static int orphan_metadata(const struct trained_model *tm, struct tm_plan *p)
{
        json_auto_t *changes = json_object(), *labels = json_object();

        if (!changes || !labels)
                return -ENOMEM;
        if (tm->labels && json_object_get(tm->labels, TM_LABEL_ISVC) &&
            json_object_set_new(labels, TM_LABEL_ISVC, json_null()) < 0)
                return -ENOMEM;
        if (tm->labels && json_object_get(tm->labels, TM_LABEL_ALLOCATED) &&
            json_object_set_new(labels, TM_LABEL_ALLOCATED, json_null()) < 0)
                return -ENOMEM;
        if (json_object_size(labels) > 0 && json_object_set(changes, "labels", labels) < 0)
                return -ENOMEM;
        return plan_refs_and_patch(tm, TAKE_PTR(changes), "", NULL, p);
}

int tm_plan_orphan(const json_t *obj, usec_t now, bool no_finalizer, struct tm_plan *ret)
{
        CLEANUP(tm_plan_releasep) struct tm_plan p = { 0 };
        CLEANUP(conditions_releasep) struct conditions observed = { 0 }, c = { 0 };
        struct trained_model tm;
        const char *msg;
        int r;

        if (trained_model_from_json(obj, &tm) < 0)
                return -EINVAL;
        p.name = strdup(tm.name);
        if (!p.name)
                return -ENOMEM;

        if (tm.being_deleted) {
                p.state = TM_STATE_FINALIZED;
                r = plan_finalizer_removal(&tm, &p);
                if (r < 0)
                        return r;
                p.metadata_phase = p.metadata_patch ? TM_METADATA_FINALIZE : TM_METADATA_NONE;
                *ret = p;
                p = (struct tm_plan){ 0 };
                return 0;
        }

        p.state = TM_STATE_INVALID;
        msg = tm.valid ? "spec.inferenceService is required" : tm.invalid_message;
        if (conditions_from_json(json_object_get(tm.status, "conditions"), &observed) < 0)
                conditions_init(&observed);
        r = conditions_copy(&observed, &c);
        if (r < 0)
                return r;
        r = conditions_mark_false(&c, CONDITION_INFERENCE_SERVICE_READY, REASON_INVALID_SPEC, msg,
                                  now);
        if (r >= 0)
                r = conditions_mark_false(&c, CONDITION_IS_MMS_PREDICTOR, REASON_INVALID_SPEC, msg,
                                          now);
        if (r >= 0)
                r = conditions_mark_false(&c, CONDITION_MEMORY_RESOURCE_AVAILABLE,
                                          REASON_INVALID_SPEC, msg, now);
        if (r < 0)
                return r;
        conditions_keep_transition_times(&c, &observed);
        r = status_build(&tm, &c, NULL, NULL, &p);
        if (r < 0)
                return r;
        r = orphan_metadata(&tm, &p);
        if (r < 0)
                return r;
        p.metadata_phase = p.metadata_patch ? TM_METADATA_FIRST : TM_METADATA_NONE;
        /* its own hand-off, paced: the label patch above is not conditioned on it */
        p.release_finalizer = no_finalizer && tm.has_finalizer;
        if (p.status_changed) {
                r = set_event(&p, "Warning", REASON_INVALID_SPEC, "%s", msg);
                if (r < 0)
                        return r;
        }
        *ret = p;
        p = (struct tm_plan){ 0 };
        return 0;
}

int tm_plan_release_finalizer(const json_t *obj, bool no_finalizer, json_t **ret)
{
        struct trained_model tm;

        *ret = NULL;
        if (trained_model_from_json(obj, &tm) < 0)
                return -EINVAL;
        if (!tm.has_finalizer || (!tm.being_deleted && !no_finalizer))
                return 0;
        *ret = finalizer_removal_patch(&tm);
        return *ret ? 0 : -ENOMEM;
}

static json_t *or_null(json_t *v)
{
        return v ? json_incref(v) : json_null();
}

json_t *isvc_plan_to_json(const struct isvc_plan *p)
{
        json_auto_t *tms = json_array();
        json_t *o;

        if (!tms)
                return NULL;
        for (size_t i = 0; i < p->n_tms; i++) {
                const struct tm_plan *t = &p->tms[i];
                json_t *event = t->event_type ? json_pack("{s:s, s:s, s:s?}", "type", t->event_type,
                                                          "reason", t->event_reason, "message",
                                                          t->event_message)
                                              : json_null();
                o = json_pack("{s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:b, s:o}", "name",
                              t->name ? t->name : "", "state", tm_state_to_string(t->state),
                              "admitted", t->admitted, "listed", t->listed, "deleteObject",
                              t->delete_object, "metadataPatch", or_null(t->metadata_patch),
                              "status", or_null(t->status), "statusChanged", t->status_changed,
                              "event", event);
                if (o && t->release_finalizer &&
                    json_object_set_new(o, "releaseFinalizer", json_true()) < 0)
                        json_decref(TAKE_PTR(o));
                if (o && t->metadata_phase != TM_METADATA_NONE &&
                    json_object_set_new(o, "metadataPhase",
                                        json_string(t->metadata_phase == TM_METADATA_FIRST
                                                            ? "first"
                                                            : "finalize")) < 0)
                        json_decref(TAKE_PTR(o));
                if (!o || json_array_append_new(tms, o) < 0)
                        return NULL;
        }
        o = json_pack("{s:b, s:s?, s:s?, s:o, s:o, s:O}", "isvcFound", p->isvc_found,
                      "configMapName", p->configmap_name, "modelsJson", p->models_json,
                      "configMapCreate", or_null(p->configmap_create), "configMapPatch",
                      or_null(p->configmap_patch), "trainedModels", tms);
        if (o && p->next_stale) {
                char when[64];

                if (format_rfc3339(p->next_stale, when, sizeof(when)) < 0 ||
                    json_object_set_new(o, "nextStale", json_string(when)) < 0)
                        json_decref(TAKE_PTR(o));
        }
        return o;
}

static const char *const write_event_reasons[] = { "ModelAdded", "ModelUpdated", "ModelRemoved" };
static const char *const write_event_verbs[] = { "added", "updated", "removed" };

/* Appends one kind's part, ', added 2 ("m1", "m2")', of the write's Event message. */
static int write_event_part(const struct isvc_plan *p, size_t kind, size_t count, struct buf *b)
{
        size_t named = 0;
        int r;

        r = buf_printf(b, "%s %s %zu (", buf_str(b)[0] ? "," : "", write_event_verbs[kind], count);
        for (size_t i = 0; r >= 0 && i < p->n_tms && named < PLAN_EVENT_NAMES; i++) {
                const struct tm_plan *t = &p->tms[i];

                if (!t->event_reason || !streq(t->event_reason, write_event_reasons[kind]))
                        continue;
                r = buf_printf(b, "%s\"%s\"", named ? ", " : "", t->name);
                named++;
        }
        if (r >= 0 && count > named)
                r = buf_printf(b, " and %zu more", count - named);
        return r < 0 ? r : buf_putc(b, ')');
}

/* Does the write only drop the entries of TrainedModels being deleted? Their delete is the
 * user's own act, and KServe posts no Event for it either; with deletes spread over many
 * InferenceServices an Event per such write was one Event write per delete (issue #12). */
static bool write_only_drops_deleted(const struct isvc_plan *p)
{
        for (size_t i = 0; i < p->n_tms; i++) {
                const struct tm_plan *t = &p->tms[i];

                if (t->event_type && streq(t->event_type, "Normal") &&
                    t->state != TM_STATE_DELETING)
                        return false;
        }
        return true;
}

int isvc_plan_write_event(const struct isvc_plan *p, const char **ret_reason, char **ret_message)
{
        CLEANUP(buf_releasep) struct buf parts = { 0 };
        size_t count[ELEMENTSOF(write_event_reasons)] = { 0 }, kinds = 0, last = 0;
        AUTOFREE char *msg = NULL;
        int r = 0;

        *ret_reason = NULL;
        *ret_message = NULL;
        for (size_t i = 0; i < p->n_tms; i++)
                for (size_t k = 0; p->tms[i].event_reason && k < ELEMENTSOF(count); k++)
                        count[k] += streq(p->tms[i].event_reason, write_event_reasons[k]);
        if (!count[0] && !count[1] && !count[2])
                return PLAN_EVENT_NONE;
        /* decided before any message is built */
        if (write_only_drops_deleted(p))
                return PLAN_EVENT_SKIPPED;
        buf_init(&parts, (size_t)64 * 1024);
        for (size_t k = 0; r >= 0 && k < ELEMENTSOF(count); k++) {
                if (!count[k])
                        continue;
                kinds++;
                last = k;
                r = write_event_part(p, k, count[k], &parts);
        }
        if (r < 0)
                return r;
        if (asprintf(&msg, "models.json of ConfigMap \"%s\":%s", p->configmap_name,
                     buf_str(&parts)) < 0)
                return -ENOMEM;
        *ret_reason = kinds == 1 ? write_event_reasons[last] : "ModelConfigUpdated";
        *ret_message = TAKE_PTR(msg);
        return PLAN_EVENT_POST;
}
