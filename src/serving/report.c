/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse-util.h"

static int cmp_model(const void *a, const void *b)
{
        return strcmp(((const struct report_model *)a)->name,
                      ((const struct report_model *)b)->name);
}

static int cmp_model_ptr(const void *a, const void *b)
{
        return cmp_model(*(const struct report_model *const *)a,
                         *(const struct report_model *const *)b);
}

static json_t *entry(const struct report_model *m)
{
        json_t *o = json_pack("{s:s,s:s}", "name", m->name, "state", m->state);

        if (!o)
                return NULL;
        if ((m->storage_uri &&
             json_object_set_new(o, "storageUri", json_string(m->storage_uri)) < 0) ||
            (m->reason && json_object_set_new(o, "reason", json_string(m->reason)) < 0)) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* models.json: the entries sorted by name, compact. NULL on OOM or a model without name/state. */
static char *models_json(const struct report_model *models, size_t n)
{
        const struct report_model **sorted = calloc(n ? n : 1, sizeof(const struct report_model *));
        json_t *arr = json_array();
        char *out = NULL;
        size_t i;

        if (!sorted || !arr)
                goto out;
        for (i = 0; i < n; i++) {
                if (!models[i].name || !models[i].state)
                        goto out;
                sorted[i] = &models[i];
        }
        qsort(sorted, n, sizeof(const struct report_model *), cmp_model_ptr);
        for (i = 0; i < n; i++)
                if (json_array_append_new(arr, entry(sorted[i])) < 0)
                        goto out;
        out = json_dumps(arr, JSON_COMPACT);
out:
        free(sorted);
        json_decref(arr);
        return out;
}

json_t *report_data_encode(const struct report_model *models, size_t n,
                           const struct report_meta *meta)
{
        char when[40], period[16];
        char *text;
        json_t *data;

        if (!meta->pod || format_rfc3339(meta->beat, when, sizeof(when)) < 0)
                return NULL;
        (void)snprintf(period, sizeof(period), "%u", meta->period_sec);
        text = models_json(models, n);
        if (!text)
                return NULL;
        data = json_pack("{s:s,s:s,s:s,s:s}", REPORT_KEY_MODELS, text, REPORT_KEY_POD, meta->pod,
                         REPORT_KEY_HEARTBEAT, when, REPORT_KEY_PERIOD, period);
        free(text);
        if (data && ((meta->address && json_object_set_new(data, REPORT_KEY_ADDRESS,
                                                           json_string(meta->address)) < 0) ||
                     (meta->draining &&
                      json_object_set_new(data, REPORT_KEY_DRAINING, json_string("true")) < 0))) {
                json_decref(data);
                return NULL;
        }
        return data;
}

void report_release(struct report *r)
{
        free(r->models);
        json_decref(r->doc);
        *r = (struct report){ 0 };
}

static const char *string_of(const json_t *data, const char *key)
{
        return json_string_value(json_object_get(data, key));
}

bool report_heartbeat(const json_t *data, usec_t *ret_beat, unsigned *ret_period_sec)
{
        const char *beat = string_of(data, REPORT_KEY_HEARTBEAT);
        const char *period = string_of(data, REPORT_KEY_PERIOD);
        uint32_t secs = REPORT_PERIOD_DEFAULT;

        *ret_period_sec = REPORT_PERIOD_DEFAULT;
        if (period && safe_atou32(period, &secs) >= 0 && secs > 0 && secs <= REPORT_PERIOD_MAX)
                *ret_period_sec = secs;
        return beat && parse_rfc3339(beat, ret_beat) >= 0;
}

int report_data_decode(const json_t *data, struct report *ret)
{
        const char *text = string_of(data, REPORT_KEY_MODELS);
        const char *address = string_of(data, REPORT_KEY_ADDRESS);
        const char *draining = string_of(data, REPORT_KEY_DRAINING);
        struct report r = {
                .pod = string_of(data, REPORT_KEY_POD),
                .draining = draining && streq(draining, "true"),
        };
        json_t *m;
        size_t i;

        if (address && address[0] && strlen(address) <= REPORT_ADDRESS_MAX)
                r.address = address;

        r.has_heartbeat = report_heartbeat(data, &r.heartbeat, &r.period_sec);
        if (text && strlen(text) <= REPORT_MODELS_JSON_MAX)
                r.doc = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        if (r.doc && !json_is_array(r.doc)) {
                json_decref(r.doc);
                r.doc = NULL;
        }
        if (r.doc) {
                r.models = calloc(json_array_size(r.doc) + 1, sizeof(*r.models));
                if (!r.models) {
                        json_decref(r.doc);
                        return -ENOMEM;
                }
                json_array_foreach(r.doc, i, m) {
                        struct report_model e = {
                                .name = json_string_value(json_object_get(m, "name")),
                                .state = json_string_value(json_object_get(m, "state")),
                                .storage_uri = json_string_value(json_object_get(m, "storageUri")),
                                .reason = json_string_value(json_object_get(m, "reason")),
                        };

                        if (e.name && e.state)
                                r.models[r.n++] = e;
                }
                qsort(r.models, r.n, sizeof(*r.models), cmp_model);
        }
        *ret = r;
        return 0;
}

const struct report_model *report_find(const struct report *r, const char *name)
{
        struct report_model key = { .name = name };

        if (!r->models || !name)
                return NULL;
        return bsearch(&key, r->models, r->n, sizeof(*r->models), cmp_model);
}
