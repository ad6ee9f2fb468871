/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/modelconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json/json-util.h"
#include "serving/quantity.h"
#include "util/buf.h"

static void entry_release(struct model_entry *m)
{
        free(m->name);
        free(m->storage_uri);
        free(m->framework);
        free(m->memory);
        *m = (struct model_entry){ 0 };
}

void model_entries_init(struct model_entries *e)
{
        *e = (struct model_entries){ 0 };
}

void model_entries_release(struct model_entries *e)
{
        for (size_t i = 0; i < e->n; i++)
                entry_release(&e->items[i]);
        free(e->items);
        model_entries_init(e);
}

const struct model_entry *model_entries_get(const struct model_entries *e, const char *name)
{
        for (size_t i = 0; i < e->n; i++)
                if (streq(e->items[i].name, name))
                        return &e->items[i];
        return NULL;
}

static int entry_new(struct model_entry *m, const char *name, const char *storage_uri,
                     const char *framework, const char *memory)
{
        *m = (struct model_entry){
                .name = strdup(name ? name : ""),
                .storage_uri = strdup(storage_uri ? storage_uri : ""),
                .framework = strdup(framework ? framework : ""),
                .memory = strdup(memory ? memory : "0"),
        };
        if (!m->name || !m->storage_uri || !m->framework || !m->memory) {
                entry_release(m);
                return -ENOMEM;
        }
        return 0;
}

int model_entries_append(struct model_entries *e, const char *name, const char *storage_uri,
                         const char *framework, const char *memory)
{
        struct model_entry m, *items;
        int r;

        r = entry_new(&m, name, storage_uri, framework, memory);
        if (r < 0)
                return r;
        items = reallocarray(e->items, e->n + 1, sizeof(*items));
        if (!items) {
                entry_release(&m);
                return -ENOMEM;
        }
        e->items = items;
        e->items[e->n++] = m;
        return 0;
}

int model_entries_upsert(struct model_entries *e, const char *name, const char *storage_uri,
                         const char *framework, const char *memory)
{
        struct model_entry m;
        int r;

        for (size_t i = 0; i < e->n; i++)
                if (streq(e->items[i].name, name ? name : "")) {
                        r = entry_new(&m, name, storage_uri, framework, memory);
                        if (r < 0)
                                return r;
                        entry_release(&e->items[i]);
                        e->items[i] = m;
                        return 0;
                }
        return model_entries_append(e, name, storage_uri, framework, memory);
}

int model_entries_remove(struct model_entries *e, const char *name)
{
        for (size_t i = 0; i < e->n; i++)
                if (streq(e->items[i].name, name)) {
                        entry_release(&e->items[i]);
                        memmove(&e->items[i], &e->items[i + 1],
                                (e->n - i - 1) * sizeof(e->items[0]));
                        e->n--;
                        return 1;
                }
        return 0;
}

static int cmp_entry(const void *a, const void *b)
{
        const struct model_entry *x = a, *y = b;
        return strcmp(x->name, y->name);
}

void model_entries_sort(struct model_entries *e)
{
        if (e->n > 1)
                qsort(e->items, e->n, sizeof(e->items[0]), cmp_entry);
}

const struct model_entry *model_entries_find_sorted(const struct model_entries *e, const char *name)
{
        size_t lo = 0, hi = e->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(e->items[mid].name, name);
                if (c == 0)
                        return &e->items[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* Sorts by name, keeping only the last of equal names (Go's map: later duplicates win). */
struct dedupe_key {
        struct model_entry m;
        size_t idx;
};

static int cmp_dedupe(const void *a, const void *b)
{
        const struct dedupe_key *x = a, *y = b;
        int c = strcmp(x->m.name, y->m.name);

        if (c != 0)
                return c;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int sort_dedupe(struct model_entries *e)
{
        AUTOFREE struct dedupe_key *keys = NULL;
        size_t out = 0;

        if (e->n < 2)
                return 0;
        keys = calloc(e->n, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < e->n; i++)
                keys[i] = (struct dedupe_key){ .m = e->items[i], .idx = i };
        qsort(keys, e->n, sizeof(*keys), cmp_dedupe);
        for (size_t i = 0; i < e->n; i++) {
                if (i + 1 < e->n && streq(keys[i].m.name, keys[i + 1].m.name)) {
                        entry_release(&keys[i].m);
                        continue;
                }
                e->items[out++] = keys[i].m;
        }
        e->n = out;
        return 0;
}

bool model_entry_equal(const struct model_entry *a, const struct model_entry *b)
{
        return streq(a->name, b->name) && streq(a->storage_uri, b->storage_uri) &&
               streq(a->framework, b->framework) && streq(a->memory, b->memory);
}

/* Go's encoding/json field lookup: exact name first, then ASCII case-insensitive. */
static json_t *get_fold(const json_t *o, const char *name)
{
        const char *key;
        json_t *v, *found = NULL;

        v = json_object_get(o, name);
        if (v)
                return v;
        json_object_foreach((json_t *)o, key, v)
                if (strcasecmp(key, name) == 0)
                        found = v; /* the last matching key wins, as when Go decodes twice */
        return found;
}

static int string_field(const json_t *o, const char *name, const char **ret, char *reterr,
                        size_t len_err)
{
        const json_t *v = get_fold(o, name);

        if (!v || json_is_null(v)) {
                *ret = "";
                return 0;
        }
        if (!json_is_string(v)) {
                (void)snprintf(reterr, len_err, "json: cannot unmarshal non-string into field %s",
                               name);
                return -EINVAL;
        }
        if (strlen(json_string_value(v)) != json_string_length(v)) {
                (void)snprintf(reterr, len_err, "field %s contains U+0000", name);
                return -EINVAL;
        }
        *ret = json_string_value(v);
        return 0;
}

/* One modelSpec object: storageUri, framework and memory (canonical quantity, "0" if absent). */
static int parse_model_spec(const json_t *spec, const char **uri, const char **framework,
                            char memory[static QUANTITY_STRING_MAX], char *reterr, size_t len_err)
{
        struct quantity q;
        int r;

        if (!json_is_object(spec)) {
                (void)snprintf(reterr, len_err, "json: cannot unmarshal non-object into modelSpec");
                return -EINVAL;
        }
        r = string_field(spec, "storageUri", uri, reterr, len_err);
        if (r < 0)
                return r;
        r = string_field(spec, "framework", framework, reterr, len_err);
        if (r < 0)
                return r;
        if (quantity_from_json(get_fold(spec, "memory"), &q) < 0) {
                (void)snprintf(reterr, len_err,
                               "quantities must match the regular expression "
                               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
                return -EINVAL;
        }
        if (quantity_to_canonical_string(&q, memory, QUANTITY_STRING_MAX) < 0)
                return -ENOMEM;
        return 0;
}

int modelconfig_parse_entry(const json_t *e, struct model_entries *out, char *reterr,
                            size_t len_err)
{
        const char *name, *uri = "", *framework = "";
        const json_t *spec;
        char memory[QUANTITY_STRING_MAX] = "0";
        int r;

        if (json_is_null(e))
                return 0; /* Go decodes null into a zero entry; it carries no model */
        if (!json_is_object(e)) {
                (void)snprintf(reterr, len_err,
                               "json: cannot unmarshal non-object into ModelConfig");
                return -EINVAL;
        }
        r = string_field(e, "modelName", &name, reterr, len_err);
        if (r < 0)
                return r;
        spec = get_fold(e, "modelSpec");
        if (spec && !json_is_null(spec)) {
                r = parse_model_spec(spec, &uri, &framework, memory, reterr, len_err);
                if (r < 0)
                        return r;
        }
        return model_entries_append(out, name, uri, framework, memory);
}

int modelconfig_parse(const char *data, struct model_entries *ret, char *reterr, size_t len_err)
{
        CLEANUP(model_entries_release) struct model_entries out = { 0 };
        json_auto_t *v = NULL;
        struct error_detail perr = { 0 };
        char dummy[1];
        size_t i;
        json_t *e;
        int r;

        if (!reterr) {
                reterr = dummy;
                len_err = sizeof(dummy);
        }
        if (!data || data[0] == '\0') {
                *ret = out;
                return 0;
        }
        r = json_parse_bounded(data, strlen(data), &v, &perr);
        if (r < 0) {
                (void)snprintf(reterr, len_err, "%s", perr.message);
                return r;
        }
        if (!json_is_array(v)) {
                (void)snprintf(reterr, len_err,
                               "json: cannot unmarshal non-array into []ModelConfig");
                return -EINVAL;
        }
        json_array_foreach(v, i, e) {
                r = modelconfig_parse_entry(e, &out, reterr, len_err);
                if (r < 0)
                        return r;
        }
        r = sort_dedupe(&out);
        if (r < 0)
                return r;
        *ret = out;
        out = (struct model_entries){ 0 };
        return 0;
}

/* Appends @s as a JSON string the way Go's encoding/json does with HTML escaping on. */
static int put_go_string(struct buf *b, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        int r;

        r = buf_putc(b, '"');
        if (r < 0)
                return r;
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                char esc[8];
                const char *out = NULL;

                switch (*p) {
                case '"':
                        out = "\\\"";
                        break;
                case '\\':
                        out = "\\\\";
                        break;
                case '\b':
                        out = "\\b";
                        break;
                case '\f':
                        out = "\\f";
                        break;
                case '\n':
                        out = "\\n";
                        break;
                case '\r':
                        out = "\\r";
                        break;
                case '\t':
                        out = "\\t";
                        break;
                case '<':
                case '>':
                case '&':
                        (void)snprintf(esc, sizeof(esc), "\\u00%c%c", hex[*p >> 4], hex[*p & 0xF]);
                        out = esc;
                        break;
                case 0xE2:
                        if (p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9)) {
                                out = p[2] == 0xA8 ? "\\u2028" : "\\u2029";
                                p += 2;
                        }
                        break;
                default:
                        if (*p < 0x20) {
                                (void)snprintf(esc, sizeof(esc), "\\u00%c%c", hex[*p >> 4],
                                               hex[*p & 0xF]);
                                out = esc;
                        }
                        break;
                }
                r = out ? buf_puts(b, out) : buf_putc(b, (char)*p);
                if (r < 0)
                        return r;
        }
        return buf_putc(b, '"');
}

static int put_entry(struct buf *b, const struct model_entry *m)
{
        int r;

        r = buf_puts(b, "{\"modelName\":");
        if (r >= 0)
                r = put_go_string(b, m->name);
        if (r >= 0)
                r = buf_puts(b, ",\"modelSpec\":{\"storageUri\":");
        if (r >= 0)
                r = put_go_string(b, m->storage_uri);
        if (r >= 0)
                r = buf_puts(b, ",\"framework\":");
        if (r >= 0)
                r = put_go_string(b, m->framework);
        if (r >= 0)
                r = buf_puts(b, ",\"memory\":");
        if (r >= 0)
                r = put_go_string(b, m->memory);
        if (r >= 0)
                r = buf_puts(b, "}}");
        return r;
}

static int cmp_entry_ptr(const void *a, const void *b)
{
        const struct model_entry *x = *(const struct model_entry *const *)a;
        const struct model_entry *y = *(const struct model_entry *const *)b;
        return strcmp(x->name, y->name);
}

int modelconfig_serialize(const struct model_entries *e, char **ret, size_t *ret_len)
{
        CLEANUP(buf_releasep) struct buf b = BUF_INIT(MODELCONFIG_SERIALIZE_MAX);
        AUTOFREE const struct model_entry **sorted = NULL;
        char *s;
        int r;

        if (e->n > 0) {
                sorted = calloc(e->n, sizeof(const struct model_entry *));
                if (!sorted)
                        return -ENOMEM;
                for (size_t i = 0; i < e->n; i++)
                        sorted[i] = &e->items[i];
                qsort(sorted, e->n, sizeof(const struct model_entry *), cmp_entry_ptr);
        }
        r = buf_putc(&b, '[');
        if (r < 0)
                return r;
        for (size_t i = 0; i < e->n; i++) {
                if (i > 0) {
                        r = buf_putc(&b, ',');
                        if (r < 0)
                                return r;
                }
                r = put_entry(&b, sorted[i]);
                if (r < 0)
                        return r;
        }
        r = buf_putc(&b, ']');
        if (r < 0)
                return r;
        s = buf_take(&b, ret_len);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

size_t modelconfig_entry_size(const struct model_entry *entry)
{
        struct buf b = BUF_INIT(MODELCONFIG_SERIALIZE_MAX);
        size_t n;

        n = put_entry(&b, entry) < 0 ? MODELCONFIG_SERIALIZE_MAX : b.len;
        buf_release(&b);
        return n;
}

size_t modelconfig_fit(const struct model_entries *e, const size_t *order, size_t n_order,
                       size_t budget, bool *ret_fits)
{
        size_t total = 2, k = 0; /* "[]" */

        for (size_t i = 0; i < e->n; i++)
                ret_fits[i] = false;
        for (size_t j = 0; j < n_order; j++) {
                size_t idx = order[j], add;

                if (idx >= e->n || ret_fits[idx])
                        continue;
                add = modelconfig_entry_size(&e->items[idx]) + (k > 0 ? 1 : 0);
                if (total + add <= budget) {
                        total += add;
                        ret_fits[idx] = true;
                        k++;
                }
        }
        return total;
}

int modelconfig_process(const char *before, const struct model_entries *upserts,
                        const char *const *deletes, size_t n_deletes, char **ret_after,
                        char *reterr, size_t len_err)
{
        CLEANUP(model_entries_release) struct model_entries cur = { 0 };
        int r;

        r = modelconfig_parse(before, &cur, reterr, len_err);
        if (r < 0)
                return r;
        for (size_t i = 0; upserts && i < upserts->n; i++) {
                const struct model_entry *m = &upserts->items[i];
                r = model_entries_upsert(&cur, m->name, m->storage_uri, m->framework, m->memory);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n_deletes; i++)
                (void)model_entries_remove(&cur, deletes[i]);
        return modelconfig_serialize(&cur, ret_after, /* ret_len= */ NULL);
}

int modelconfig_name(const char *isvc, char *buf, size_t len)
{
        int k = snprintf(buf, len, "modelconfig-%s-0", isvc);

        if (k < 0 || (size_t)k >= len)
                return -ENAMETOOLONG;
        return 0;
}

json_t *modelconfig_configmap_new(const struct isvc_info *isvc, const char *models_json)
{
        char name[MODELCONFIG_NAME_MAX];
        json_auto_t *cm = NULL;
        json_t *metadata;

        if (modelconfig_name(isvc->name, name, sizeof(name)) < 0)
                return NULL;
        cm = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                       "metadata", "name", name, "namespace", isvc->namespace_, "data",
                       MODELCONFIG_KEY, models_json ? models_json : "[]");
        if (!cm)
                return NULL;
        metadata = json_object_get(cm, "metadata");
        if (isvc->labels && json_object_size(isvc->labels) > 0 &&
            json_object_set_new(metadata, "labels", json_deep_copy(isvc->labels)) < 0)
                return NULL;
        if (isvc->uid) {
                json_t *refs = json_pack("[{s:s, s:s, s:s, s:s, s:b, s:b}]", "apiVersion",
                                         "serving.kserve.io/v1beta1", "kind", "InferenceService",
                                         "name", isvc->name, "uid", isvc->uid, "controller", 1,
                                         "blockOwnerDeletion", 1);
                if (!refs || json_object_set_new(metadata, "ownerReferences", refs) < 0)
                        return NULL;
        }
        return TAKE_PTR(cm);
}
