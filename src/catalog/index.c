/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The catalog snapshot: built once per reload, immutable and refcounted afterwards, read by every
 * request. Why one file (about 3,100 lines) and not one module per concern: every section below
 * (stable ids, the snapshot, filter_options, build, keyset pagination, models, in-memory lists, MCP
 * servers) works on the private layout of struct catalog_index and struct catalog_model, which
 * index.h keeps opaque. Splitting by concern would need an internal header that publishes those
 * layouts to several sources, and the hot paths (model_match(), models_select_presorted()) read
 * them directly, by design, without accessors. The sections are ordered so that each uses only
 * what comes before it (one forward declaration, model_resolve_fields()). A split, if it comes,
 * follows the "---- ... ----" markers, starting with keyset pagination, which touches neither
 * layout (only struct keyed and struct sort_key).
 */
#include "catalog/index.h"

#include <assert.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "catalog/glob.h"
#include "catalog/limits.h"
#include "catalog/postings.h"
#include "catalog/wire.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/parse-util.h"

/* ---- small helpers ---- */

static const char *str_or(const char *s, const char *def)
{
        return s ? s : def;
}

static const char *const state_names[CATALOG_SOURCE__MAX] = {
        [CATALOG_SOURCE_AVAILABLE] = "available",
        [CATALOG_SOURCE_PARTIALLY_AVAILABLE] = "partially-available",
        [CATALOG_SOURCE_ERROR] = "error",
        [CATALOG_SOURCE_DISABLED] = "disabled",
};

const char *catalog_source_state_to_string(enum catalog_source_state s)
{
        if ((int)s < 0 || s >= CATALOG_SOURCE__MAX)
                return NULL;
        return state_names[s];
}

void catalog_source_load_release(struct catalog_source_load *l)
{
        free(l->error);
        catalog_models_unref(l->data);
        *l = (struct catalog_source_load){ 0 };
}

/* Strict standard base64 with padding, decoding to a C string (no NUL inside); -EINVAL. */
static int b64_decode(const char *in, char **ret)
{
        AUTOFREE char *out = NULL;
        size_t n;
        int r;

        r = base64_decode(in, &out, &n);
        if (r < 0)
                return r;
        if (strlen(out) != n)
                return -EINVAL;
        *ret = TAKE_PTR(out);
        return 0;
}

char *catalog_token_encode(const char *value, const char *id)
{
        AUTOFREE char *plain = NULL;

        if (asprintf(&plain, "%s:%s", value, id) < 0)
                return NULL;
        return base64_encode(plain, strlen(plain));
}

static json_t *list_json(json_t *items /* takes */, const char *next, uint32_t page_size)
{
        size_t n = json_array_size(items);

        return json_pack("{s:o, s:s, s:I, s:I}", "items", items, "nextPageToken", next ? next : "",
                         "pageSize", (json_int_t)page_size, "size", (json_int_t)n);
}

/* ---- stable ids ---- */

/* One id; its key is keys + off (NUL-terminated), in the map's one key buffer. */
struct id_entry {
        size_t off;
        int64_t id;
};

/* Entries sorted by key; all keys in one allocation (no malloc per model and artifact). */
struct catalog_ids {
        struct id_entry *v;
        size_t n;
        char *keys; /* owned */
        int64_t next;
};

struct catalog_ids *catalog_ids_new(void)
{
        struct catalog_ids *ids = calloc(1, sizeof(*ids));

        if (ids)
                ids->next = 1;
        return ids;
}

struct catalog_ids *catalog_ids_free(struct catalog_ids *ids)
{
        if (!ids)
                return NULL;
        free(ids->v);
        free(ids->keys);
        free(ids);
        return NULL;
}

static int id_entry_cmp(const void *a, const void *b, void *keys)
{
        return strcmp((const char *)keys + ((const struct id_entry *)a)->off,
                      (const char *)keys + ((const struct id_entry *)b)->off);
}

/* The entry of key in the sorted map, or NULL. */
static const struct id_entry *ids_find(const struct catalog_ids *ids, const char *key)
{
        size_t lo = 0, hi = ids->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(key, ids->keys + ids->v[mid].off);

                if (c == 0)
                        return &ids->v[mid];
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return NULL;
}

/* ---- the snapshot ---- */

struct catalog_model {
        const struct catalog_index *index;       /* borrowed; the owning snapshot */
        const struct catalog_source_config *src; /* borrowed from the index config */
        const struct catalog_model_data *data;   /* borrowed from the source's data */
        int64_t id;
        int64_t create_ms, update_ms;
        bool has_accuracy;
        double accuracy;
        char *haystack; /* owned; lower-cased name, description, provider, tasks */
        /* owned; the CatalogModel served, serialized once (compact, insertion order); the JSON
         * tree it came from is not kept (the JSON API decodes this text) */
        char *wire_text;
        size_t wire_len;
        /* the ids of data->artifacts: catalog_index.art_ids[art_off ...] (the served
         * CatalogArtifact objects, with their ids, are built when a request lists them) */
        size_t art_off;
        /* borrowed from data->rec: the well-known fields, resolved once (filter hot path) */
        uint8_t fields[16]; /* of model_string_fields[i]: its member in data->rec (FIELD_*) */
        const json_t *custom;
        /* the custom properties of all artifacts, by interned name id (filter hot path) */
        struct art_prop *aprops; /* owned; sorted by id */
        size_t n_aprops;
};

struct art_prop {
        uint32_t id;      /* index into catalog_index.prop_names */
        const json_t *mv; /* borrowed MetadataValue */
};

static void model_resolve_fields(struct catalog_model *m);
static int index_postings_build(struct catalog_index *idx);
static bool filter_is_total(const struct filterq_node *n);

struct index_source {
        enum catalog_source_state state;
        char *error;                 /* owned */
        struct catalog_models *data; /* owned reference */
};

struct catalog_index {
        unsigned refs;
        struct catalog_config config; /* owned */
        struct index_source *sources; /* owned; parallel to config.sources */
        struct catalog_model *models; /* owned; sorted by NAME ASC (case-insensitive, id) */
        size_t n_models;
        struct catalog_model **by_id; /* owned array of borrowed; sorted by id */
        /* every typed custom property holds a value of its metadataType's JSON type, so a
         * filter can fail with -EDOM only through its own literals (see filter_is_total()) */
        bool well_typed;
        json_t *filter_options;  /* owned */
        json_t *mcp;             /* owned; array of MCPServer wire objects */
        int64_t *art_ids;        /* owned; the artifacts' ids, per model from art_off */
        const char **prop_names; /* owned array of borrowed keys; sorted, unique */
        size_t n_prop_names;
        json_t *mcp_filter_options; /* owned */
        /* owned; (source, name) -> model for gets, and the postings of filterQuery equality
         * comparisons (see index_postings_build()); positions index models, ranks by_id */
        struct catalog_postings *postings;
};

struct catalog_index *catalog_index_ref(struct catalog_index *idx)
{
        if (idx)
                __atomic_add_fetch(&idx->refs, 1, __ATOMIC_RELAXED);
        return idx;
}

static void index_free(struct catalog_index *idx)
{
        for (size_t i = 0; i < idx->n_models; i++) {
                free(idx->models[i].haystack);
                free(idx->models[i].aprops);
                free(idx->models[i].wire_text);
        }
        free(idx->art_ids);
        free(idx->models);
        free(idx->by_id);
        free(idx->prop_names);
        catalog_postings_free(idx->postings);
        if (idx->sources)
                for (size_t i = 0; i < idx->config.n_sources; i++) {
                        free(idx->sources[i].error);
                        catalog_models_unref(idx->sources[i].data);
                }
        free(idx->sources);
        json_decref(idx->filter_options);
        json_decref(idx->mcp);
        json_decref(idx->mcp_filter_options);
        catalog_config_release(&idx->config);
        free(idx);
}

struct catalog_index *catalog_index_unref(struct catalog_index *idx)
{
        if (!idx)
                return NULL;
        if (__atomic_sub_fetch(&idx->refs, 1, __ATOMIC_ACQ_REL) == 0) {
                index_free(idx);
                /* the last reader of an old snapshot returns its pages to the system */
                malloc_trim(0);
        }
        return NULL;
}

size_t catalog_index_n_models(const struct catalog_index *idx)
{
        return idx->n_models;
}

const struct catalog_config *catalog_index_config(const struct catalog_index *idx)
{
        return &idx->config;
}

static ssize_t source_pos(const struct catalog_index *idx, const char *id)
{
        for (size_t i = 0; i < idx->config.n_sources; i++)
                if (streq(idx->config.sources[i].id, id))
                        return (ssize_t)i;
        return -1;
}

struct catalog_models *catalog_index_source_data(const struct catalog_index *idx, const char *id)
{
        ssize_t i = source_pos(idx, id);

        return i < 0 ? NULL : idx->sources[i].data;
}

enum catalog_source_state catalog_index_source_state(const struct catalog_index *idx,
                                                     const char *id)
{
        ssize_t i = source_pos(idx, id);

        return i < 0 ? CATALOG_SOURCE__INVALID : idx->sources[i].state;
}

static int model_name_cmp(const char *a, const char *b)
{
        int c = strcasecmp(a, b);

        return c != 0 ? c : strcmp(a, b);
}

static int model_cmp_name_asc(const void *pa, const void *pb)
{
        const struct catalog_model *a = pa, *b = pb;
        int c = model_name_cmp(a->data->name, b->data->name);

        if (c != 0)
                return c;
        return a->id < b->id ? -1 : a->id > b->id;
}

static int model_cmp_id(const void *pa, const void *pb)
{
        const struct catalog_model *a = *(struct catalog_model *const *)pa;
        const struct catalog_model *b = *(struct catalog_model *const *)pb;

        return a->id < b->id ? -1 : a->id > b->id;
}

/* An epoch-ms string value as a number (0 when absent or unreadable). */
static int64_t epoch_value(const json_t *j)
{
        int64_t v = 0;
        const char *s = json_string_value(j);

        if (s && safe_atoi64(s, &v) < 0)
                v = 0;
        return v;
}

static int64_t epoch_of(const json_t *o, const char *key)
{
        return epoch_value(json_object_get(o, key));
}

static double metadata_number(const json_t *mv, bool *ret_ok)
{
        const char *type = json_string_value(json_object_get(mv, "metadataType"));
        int64_t i;

        *ret_ok = false;
        if (!type)
                return 0;
        if (streq(type, "MetadataDoubleValue") &&
            json_is_number(json_object_get(mv, "double_value"))) {
                *ret_ok = true;
                return json_number_value(json_object_get(mv, "double_value"));
        }
        if (streq(type, "MetadataIntValue") &&
            safe_atoi64(json_string_value(json_object_get(mv, "int_value")), &i) == 0) {
                *ret_ok = true;
                return (double)i;
        }
        return 0;
}

static int lower_append(struct buf *b, const char *s)
{
        int r;

        size_t start = b->len;

        if (!s)
                return 0;
        r = buf_puts(b, s);
        if (r < 0)
                return r;
        for (char *p = b->p + start; *p; p++)
                *p = (char)tolower((unsigned char)*p);
        return buf_putc(b, '\x1f');
}

/* The model's accuracy: the highest overall_average of its artifacts. */
static void model_accuracy(struct catalog_model *m)
{
        for (size_t i = 0; i < m->data->n_artifacts; i++) {
                json_t *avg = json_object_get(catalog_record_get(m->data->artifacts[i],
                                                                 "customProperties"),
                                              "overall_average");
                bool ok;
                double d;

                if (!avg)
                        continue;
                d = metadata_number(avg, &ok);
                if (ok && (!m->has_accuracy || d > m->accuracy)) {
                        m->accuracy = d;
                        m->has_accuracy = true;
                }
        }
}

/*
 * The served text of a model through jansson: a copy with the ids and the model-level
 * customProperties strings only, dumped. catalog_wire_model() writes the same bytes without the
 * copy; this is for the models it does not write (a real number in a field).
 */
static int model_wire_jansson(struct catalog_model *m, const char *id, const char *source_id)
{
        const struct catalog_record *src = m->data->rec;
        json_t *custom = catalog_record_get(src, "customProperties");
        json_auto_t *wire = catalog_record_to_json(src), *strings = json_object();
        const char *k;
        json_t *v;

        if (!wire || !strings)
                return -ENOMEM;
        json_object_foreach(custom, k, v)
                if (streq(str_or(json_string_value(json_object_get(v, "metadataType")), ""),
                          "MetadataStringValue") &&
                    json_object_set(strings, k, v) < 0)
                        return -ENOMEM;
        if (json_object_set_new(wire, "id", json_string(id)) < 0 ||
            json_object_set_new(wire, "source_id", json_string(source_id)) < 0 ||
            json_object_set(wire, "customProperties", strings) < 0)
                return -ENOMEM;
        m->wire_text = json_dumps(wire, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!m->wire_text)
                return -ENOMEM;
        m->wire_len = strlen(m->wire_text);
        return 0;
}

/* Builds the served JSON of one model (ids assigned, model-level customProperties strings only). */
static int model_build(struct catalog_model *m, const char *source_id)
{
        const struct catalog_record *src = m->data->rec;
        struct buf hay = BUF_INIT(SIZE_MAX);
        char idbuf[32];
        json_t *v;
        size_t i;
        int r;

        snprintf(idbuf, sizeof(idbuf), "%" PRId64, m->id);
        r = catalog_wire_model(src, idbuf, source_id, &m->wire_text, &m->wire_len);
        if (r == -ENOTSUP)
                r = model_wire_jansson(m, idbuf, source_id);
        if (r < 0)
                return r;

        model_accuracy(m);
        m->create_ms = epoch_value(catalog_record_get(src, "createTimeSinceEpoch"));
        m->update_ms = epoch_value(catalog_record_get(src, "lastUpdateTimeSinceEpoch"));

        r = lower_append(&hay, m->data->name);
        if (r >= 0)
                r = lower_append(&hay, json_string_value(catalog_record_get(src, "description")));
        if (r >= 0)
                r = lower_append(&hay, json_string_value(catalog_record_get(src, "provider")));
        json_array_foreach(catalog_record_get(src, "tasks"), i, v)
                if (r >= 0)
                        r = lower_append(&hay, json_string_value(v));
        if (r < 0) {
                buf_release(&hay);
                return r;
        }
        /* exactly sized: it lives as long as the snapshot */
        m->haystack = hay.p ? realloc(hay.p, hay.len + 1) : strdup("");
        if (!m->haystack) {
                buf_release(&hay);
                return -ENOMEM;
        }
        return 0;
}

/* The model's CatalogArtifact objects as served (with ids): a new array of private copies. */
static json_t *model_artifacts_json(const struct catalog_model *m)
{
        json_auto_t *arts = json_array();
        char idbuf[32];

        if (!arts)
                return NULL;
        for (size_t i = 0; i < m->data->n_artifacts; i++) {
                json_t *a = catalog_record_to_json(m->data->artifacts[i]);

                snprintf(idbuf, sizeof(idbuf), "%" PRId64, m->index->art_ids[m->art_off + i]);
                if (!a || json_object_set_new(a, "id", json_string(idbuf)) < 0 ||
                    json_array_append_new(arts, a) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return TAKE_PTR(arts);
}

/* ---- filter_options ---- */

static int cmp_strp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *const option_string_fields[][2] = {
        /* { option key, model JSON key } */
        { "description", "description" },
        { "readme", "readme" },
        { "maturity", "maturity" },
        { "language", "language" },
        { "tasks", "tasks" },
        { "provider", "provider" },
        { "license", "license" },
        { "library_name", "libraryName" },
};

/* The entry of acc for key, created empty when missing (borrowed), or NULL (out of memory). */
static json_t *option_entry(json_t *acc, const char *key)
{
        json_t *e = json_object_get(acc, key);

        if (e)
                return e;
        e = json_object();
        if (!e || json_object_set_new(acc, key, e) < 0)
                return NULL;
        return e;
}

/* Adds a string to the set of e, or marks e "bad" when the value or the set is too large. */
static int option_add_string(json_t *e, const json_t *value)
{
        json_t *set = json_object_get(e, "s");

        if (json_object_get(e, "bad"))
                return 0;
        if (!set) {
                set = json_object();
                if (!set || json_object_set_new(e, "s", set) < 0)
                        return -ENOMEM;
        }
        if (strlen(json_string_value(value)) > CATALOG_FILTER_OPTION_VALUE_LEN_MAX ||
            json_object_size(set) >= CATALOG_FILTER_OPTION_VALUES_MAX) {
                json_object_del(e, "s");
                return json_object_set_new(e, "bad", json_true()) < 0 ? -ENOMEM : 0;
        }
        return json_object_set_new(set, json_string_value(value), json_true()) < 0 ? -ENOMEM : 0;
}

/* Widens the range (min, max) of e to include the number value. */
static int option_add_number(json_t *e, const json_t *value)
{
        double d = json_number_value(value);
        json_t *mn = json_object_get(e, "min"), *mx = json_object_get(e, "max");

        if ((!mn || d < json_real_value(mn)) && json_object_set_new(e, "min", json_real(d)) < 0)
                return -ENOMEM;
        if ((!mx || d > json_real_value(mx)) && json_object_set_new(e, "max", json_real(d)) < 0)
                return -ENOMEM;
        return 0;
}

/* Accumulates one observed value for key into acc: {key: {"s": {value: true}, "min", "max", "bad"}}. */
static int option_add(json_t *acc, const char *key, const json_t *value)
{
        json_t *e = option_entry(acc, key);

        if (!e)
                return -ENOMEM;
        if (json_is_string(value))
                return option_add_string(e, value);
        if (json_is_number(value))
                return option_add_number(e, value);
        return 0;
}

/*
 * prefix, name and suffix into key (n bytes), cut as snprintf() would cut it: this runs for
 * every custom property of every model and artifact, and printf's format parsing was 1% of a load.
 */
static void option_key(char *key, size_t n, const char *prefix, const char *name,
                       const char *suffix)
{
        const char *parts[] = { prefix, name, suffix };
        size_t len = 0;

        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                size_t l = MIN(strlen(parts[i]), n - 1 - len);

                memcpy(key + len, parts[i], l);
                len += l;
        }
        key[len] = '\0';
}

/* skip_artifact_keys: leaves out the properties "metricsType" and "model_id" (artifacts). */
static int option_add_custom(json_t *acc, const char *prefix, const json_t *custom,
                             bool skip_artifact_keys)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)custom, k, v) {
                const char *type = json_string_value(json_object_get(v, "metadataType"));
                char key[512];
                json_auto_t *num = NULL;
                int r = 0;

                if (!type ||
                    (skip_artifact_keys && (streq(k, "metricsType") || streq(k, "model_id"))))
                        continue;
                if (streq(type, "MetadataStringValue")) {
                        option_key(key, sizeof(key), prefix, k, ".string_value");
                        r = option_add(acc, key, json_object_get(v, "string_value"));
                } else if (streq(type, "MetadataDoubleValue")) {
                        option_key(key, sizeof(key), prefix, k, ".double_value");
                        r = option_add(acc, key, json_object_get(v, "double_value"));
                } else if (streq(type, "MetadataIntValue")) {
                        bool ok;
                        double d = metadata_number(v, &ok);

                        if (!ok)
                                continue;
                        num = json_real(d);
                        option_key(key, sizeof(key), prefix, k, ".int_value");
                        r = option_add(acc, key, num);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

/* option_add() for val, or for each element when val is an array; strings_only skips others. */
static int option_add_all(json_t *acc, const char *key, const json_t *val, bool strings_only)
{
        size_t j;
        json_t *e;

        if (json_is_array(val)) {
                json_array_foreach(val, j, e) {
                        int r = option_add(acc, key, e);

                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (!val || (strings_only && !json_is_string(val)))
                return 0;
        return option_add(acc, key, val);
}

/* Accumulates the filterable values of one model and of its artifacts into acc. */
static int model_options_add(json_t *acc, const struct catalog_model_data *data)
{
        const struct catalog_record *src = data->rec;
        int r;

        for (size_t f = 0; f < ELEMENTSOF(option_string_fields); f++) {
                r = option_add_all(acc, option_string_fields[f][0],
                                   catalog_record_get(src, option_string_fields[f][1]), false);
                if (r < 0)
                        return r;
        }
        r = option_add_custom(acc, "", catalog_record_get(src, "customProperties"), false);
        if (r < 0)
                return r;
        /* the artifacts' maps are read in place (a copy without the two keys was made and
         * freed for every artifact) */
        for (size_t j = 0; j < data->n_artifacts; j++) {
                r = option_add_custom(acc, "artifacts.",
                                      catalog_record_get(data->artifacts[j], "customProperties"),
                                      true);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The keys of set, sorted, as a new JSON array of strings, or NULL (out of memory). */
static json_t *option_values(const json_t *set)
{
        json_auto_t *vals = json_array();
        AUTOFREE const char **sorted = calloc(json_object_size(set) + 1, sizeof(*sorted));
        size_t n = 0;
        const char *sk;
        json_t *sv;

        if (!vals || !sorted)
                return NULL;
        json_object_foreach((json_t *)set, sk, sv)
                sorted[n++] = sk;
        qsort(sorted, n, sizeof(*sorted), cmp_strp);
        for (size_t j = 0; j < n; j++)
                if (json_array_append_new(vals, json_string(sorted[j])) < 0)
                        return NULL;
        return TAKE_PTR(vals);
}

/* The filter option of one accumulated entry e (a new reference), NULL in *ret to leave it out. */
static int option_summary(const json_t *e, json_t **ret)
{
        json_t *set = json_object_get(e, "s");
        json_auto_t *vals = NULL;

        *ret = NULL;
        if (set) {
                vals = option_values(set);
                if (!vals)
                        return -ENOMEM;
                *ret = json_pack("{s:s, s:O}", "type", "string", "values", vals);
        } else if (json_object_get(e, "min"))
                *ret = json_pack("{s:s, s:{s:O, s:O}}", "type", "number", "range", "min",
                                 json_object_get(e, "min"), "max", json_object_get(e, "max"));
        else
                return 0;
        return *ret ? 0 : -ENOMEM;
}

/* Copies into named the filters of the named queries whose assetType (default "models") is asset. */
static int named_queries_add(const struct catalog_index *idx, const char *asset, json_t *named)
{
        const char *k;
        json_t *v;

        json_object_foreach(idx->config.named_queries, k, v) {
                if (!streq(str_or(json_string_value(json_object_get(v, "assetType")), "models"),
                           asset))
                        continue;
                if (json_object_set(named, k, json_object_get(v, "filters")) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int filter_options_build(struct catalog_index *idx)
{
        json_auto_t *acc = json_object(), *filters = json_object(), *named = json_object();
        const char *k;
        json_t *v;
        int r;

        if (!acc || !filters || !named)
                return -ENOMEM;
        for (size_t i = 0; i < idx->n_models; i++) {
                r = model_options_add(acc, idx->models[i].data);
                if (r < 0)
                        return r;
        }
        json_object_foreach(acc, k, v) {
                json_t *o;

                r = option_summary(v, &o);
                if (r < 0)
                        return r;
                if (o && json_object_set_new(filters, k, o) < 0)
                        return -ENOMEM;
        }
        r = named_queries_add(idx, "models", named);
        if (r < 0)
                return r;
        idx->filter_options = json_pack("{s:O, s:O}", "filters", filters, "namedQueries", named);
        return idx->filter_options ? 0 : -ENOMEM;
}

json_t *catalog_index_filter_options(const struct catalog_index *idx)
{
        return json_incref(idx->filter_options);
}

static int mcp_filter_options_build(struct catalog_index *idx)
{
        static const char *const keys[] = { "provider",   "license", "deploymentMode",
                                            "transports", "tags",    "version" };
        json_auto_t *acc = json_object(), *filters = json_object(), *named = json_object();
        const char *k;
        json_t *v, *sv;
        size_t i;
        int r;

        if (!acc || !filters || !named)
                return -ENOMEM;
        json_array_foreach(idx->mcp, i, sv)
                for (size_t f = 0; f < ELEMENTSOF(keys); f++) {
                        r = option_add_all(acc, keys[f], json_object_get(sv, keys[f]), true);
                        if (r < 0)
                                return r;
                }
        json_object_foreach(acc, k, v) {
                json_t *set = json_object_get(v, "s");
                json_auto_t *vals = NULL;

                if (!set)
                        continue;
                vals = option_values(set);
                if (!vals)
                        return -ENOMEM;
                if (json_object_set_new(filters, k,
                                        json_pack("{s:s, s:O}", "type", "string", "values", vals)) <
                    0)
                        return -ENOMEM;
        }
        r = named_queries_add(idx, "mcp_servers", named);
        if (r < 0)
                return r;
        idx->mcp_filter_options = json_pack("{s:O, s:O}", "filters", filters, "namedQueries",
                                            named);
        return idx->mcp_filter_options ? 0 : -ENOMEM;
}

json_t *catalog_index_mcp_filter_options(const struct catalog_index *idx)
{
        return json_incref(idx->mcp_filter_options);
}

json_t *catalog_index_mcp_servers(const struct catalog_index *idx)
{
        return idx->mcp;
}

static int art_prop_cmp(const void *a, const void *b)
{
        const struct art_prop *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

static ssize_t prop_name_id(const struct catalog_index *idx, const char *name)
{
        size_t lo = 0, hi = idx->n_prop_names;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(idx->prop_names[mid], name);

                if (c == 0)
                        return (ssize_t)mid;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/* The number of custom properties over the artifacts of one model. */
static size_t model_artifact_prop_count(const struct catalog_model_data *data)
{
        size_t total = 0;

        for (size_t j = 0; j < data->n_artifacts; j++)
                total += json_object_size(
                        catalog_record_get(data->artifacts[j], "customProperties"));
        return total;
}

/* Collects every artifact custom property name, sorted and unique, into idx->prop_names. */
static int prop_names_build(struct catalog_index *idx)
{
        size_t total = 0, n = 0;

        for (size_t i = 0; i < idx->n_models; i++)
                total += model_artifact_prop_count(idx->models[i].data);
        idx->prop_names = calloc(total + 1, sizeof(*idx->prop_names));
        if (!idx->prop_names)
                return -ENOMEM;
        for (size_t i = 0; i < idx->n_models; i++) {
                const struct catalog_model_data *d = idx->models[i].data;
                const char *k;
                json_t *v;

                for (size_t j = 0; j < d->n_artifacts; j++)
                        json_object_foreach(catalog_record_get(d->artifacts[j], "customProperties"),
                                            k, v)
                                idx->prop_names[n++] = k;
        }
        qsort(idx->prop_names, n, sizeof(*idx->prop_names), cmp_strp);
        idx->n_prop_names = 0;
        for (size_t i = 0; i < n; i++)
                if (idx->n_prop_names == 0 ||
                    !streq(idx->prop_names[idx->n_prop_names - 1], idx->prop_names[i]))
                        idx->prop_names[idx->n_prop_names++] = idx->prop_names[i];
        return 0;
}

/* The compact (id, value) list of m's artifact custom properties, sorted by id. */
static int model_aprops_build(const struct catalog_index *idx, struct catalog_model *m)
{
        size_t cnt = model_artifact_prop_count(m->data);
        const char *k;
        json_t *v;

        if (cnt == 0)
                return 0;
        m->aprops = calloc(cnt, sizeof(*m->aprops));
        if (!m->aprops)
                return -ENOMEM;
        for (size_t j = 0; j < m->data->n_artifacts; j++)
                json_object_foreach(catalog_record_get(m->data->artifacts[j], "customProperties"),
                                    k, v)
                        m->aprops[m->n_aprops++] = (struct art_prop){
                                .id = (uint32_t)prop_name_id(idx, k), .mv = v
                        };
        qsort(m->aprops, m->n_aprops, sizeof(*m->aprops), art_prop_cmp);
        return 0;
}

/* Interns the artifact custom property names and gives every model a compact (id, value) list. */
static int artifact_props_build(struct catalog_index *idx)
{
        int r = prop_names_build(idx);

        for (size_t i = 0; i < idx->n_models && r >= 0; i++)
                r = model_aprops_build(idx, &idx->models[i]);
        return r;
}

/* ---- build ---- */

/* "m\x1f<source>\x1f<name>" or "a\x1f<source>\x1f<name>\x1f<art>" (no printf: one per item) */
static int ids_key(struct buf *b, const char *source, const char *name, long art)
{
        char num[24], *p = num + sizeof(num);
        int r;

        buf_reset(b);
        r = buf_putc(b, art < 0 ? 'm' : 'a');
        if (r >= 0)
                r = buf_putc(b, '\x1f');
        if (r >= 0)
                r = buf_puts(b, source);
        if (r >= 0)
                r = buf_putc(b, '\x1f');
        if (r >= 0)
                r = buf_puts(b, name);
        if (r < 0 || art < 0)
                return r;
        do {
                *--p = (char)('0' + art % 10);
                art /= 10;
        } while (art > 0);
        *--p = '\x1f';
        return buf_append(b, p, (size_t)(num + sizeof(num) - p));
}

/* The stable-id map being built for the new snapshot (committed to ids when the build succeeds). */
struct id_builder {
        const struct catalog_ids *old;
        struct id_entry *v; /* owned */
        size_t n, cap;
        struct buf keys; /* every key of v, each with its NUL */
        int64_t next;
        struct buf key; /* scratch */
};

/* Looks up or allocates the id of b->key in the old map; appends it to the new one. */
static int id_builder_assign(struct id_builder *b, int64_t *ret)
{
        const struct id_entry *hit = ids_find(b->old, buf_str(&b->key));
        size_t off = b->keys.len;
        int64_t id;
        int r;

        id = hit ? hit->id : b->next++;
        if (id > INT32_MAX)
                return -E2BIG;
        if (b->n == b->cap) {
                size_t c = b->cap ? b->cap * 2 : 256;
                struct id_entry *p = reallocarray(b->v, c, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                b->v = p;
                b->cap = c;
        }
        r = buf_append(&b->keys, buf_str(&b->key), b->key.len + 1);
        if (r < 0)
                return r;
        b->v[b->n++] = (struct id_entry){ .off = off, .id = id };
        *ret = id;
        return 0;
}

/* A tool without accessType is served as "read_only", as upstream stores it. */
static int mcp_tools_default_access(json_t *tools)
{
        size_t i;
        json_t *t;

        json_array_foreach(tools, i, t)
                if (json_is_object(t) && !json_object_get(t, "accessType") &&
                    json_object_set_new(t, "accessType", json_string("read_only")) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * Whether every MetadataValue of a customProperties object holds its typed field with the JSON
 * type filterq_compare_metadata() expects (string_value a string, double_value a number,
 * bool_value a boolean; absent or null is fine; int_value is parsed leniently anyway).
 */
/* The typed field of one MetadataValue has the JSON type its metadataType names. */
static bool metadata_well_typed(const json_t *mv)
{
        const char *type = json_string_value(json_object_get(mv, "metadataType"));
        const char *field;
        const json_t *v;

        if (!type)
                return true;
        if (streq(type, "MetadataStringValue"))
                field = "string_value";
        else if (streq(type, "MetadataDoubleValue"))
                field = "double_value";
        else if (streq(type, "MetadataBoolValue"))
                field = "bool_value";
        else
                return true;
        v = json_object_get(mv, field);
        if (!v || json_is_null(v))
                return true;
        return field[0] == 's'   ? json_is_string(v)
               : field[0] == 'd' ? json_is_number(v)
                                 : json_is_boolean(v);
}

static bool custom_well_typed(const json_t *custom)
{
        const char *k;
        json_t *mv;

        json_object_foreach((json_t *)custom, k, mv)
                if (!metadata_well_typed(mv))
                        return false;
        return true;
}

/* Moves the loads into idx->sources and allocates the model arrays for what they serve. */
static int index_take_sources(struct catalog_index *idx, struct catalog_source_load *loads,
                              size_t n_loads)
{
        size_t total = 0, total_art = 0;

        idx->sources = calloc(n_loads + 1, sizeof(*idx->sources));
        if (!idx->sources) {
                for (size_t i = 0; i < n_loads; i++)
                        catalog_source_load_release(&loads[i]);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_loads; i++) {
                idx->sources[i].state = loads[i].state;
                idx->sources[i].error = TAKE_PTR(loads[i].error);
                idx->sources[i].data = TAKE_PTR(loads[i].data);
                if (idx->sources[i].data && !idx->config.sources[i].is_mcp &&
                    idx->config.sources[i].enabled) {
                        total += idx->sources[i].data->n;
                        for (size_t j = 0; j < idx->sources[i].data->n; j++)
                                total_art += idx->sources[i].data->v[j].n_artifacts;
                }
        }
        idx->models = calloc(total + 1, sizeof(*idx->models));
        idx->by_id = calloc(total + 1, sizeof(struct catalog_model *));
        idx->art_ids = calloc(total_art + 1, sizeof(*idx->art_ids));
        if (!idx->models || !idx->by_id || !idx->art_ids)
                return -ENOMEM;
        return 0;
}

/* One model of source s: ids for it and its artifacts, served text, resolved fields. */
static int index_add_model(struct catalog_index *idx, const struct catalog_source_config *s,
                           const struct catalog_model_data *d, size_t *n_art_ids,
                           struct id_builder *b)
{
        struct catalog_model *m = &idx->models[idx->n_models];
        size_t n_art = d->n_artifacts;
        int r;

        m->src = s;
        m->data = d;
        r = ids_key(&b->key, s->id, d->name, -1);
        if (r >= 0)
                r = id_builder_assign(b, &m->id);
        m->art_off = *n_art_ids;
        for (size_t a = 0; a < n_art && r >= 0; a++) {
                r = ids_key(&b->key, s->id, d->name, (long)a);
                if (r >= 0)
                        r = id_builder_assign(b, &idx->art_ids[(*n_art_ids)++]);
        }
        if (r >= 0)
                r = model_build(m, s->id);
        if (r >= 0)
                model_resolve_fields(m);
        idx->n_models++;
        return r;
}

static int index_add_models(struct catalog_index *idx, size_t n_loads, struct id_builder *b)
{
        size_t n_art_ids = 0;
        int r = 0;

        for (size_t i = 0; i < n_loads && r >= 0; i++) {
                const struct catalog_source_config *s = &idx->config.sources[i];
                struct catalog_models *data = idx->sources[i].data;
                CLEANUP(catalog_strv_freep) char **excluded = NULL;

                if (!data || s->is_mcp || !s->enabled)
                        continue;
                r = catalog_source_excluded(s, &excluded);
                for (size_t j = 0; j < data->n && r >= 0; j++) {
                        const struct catalog_model_data *d = &data->v[j];

                        /* hf sources are filtered by their sync (patterns with the org prefix) */
                        if (!(s->type && streq(s->type, "hf")) &&
                            !catalog_glob_included(s->included, excluded, d->name))
                                continue;
                        r = index_add_model(idx, s, d, &n_art_ids, b);
                }
        }
        return r;
}

/* The served MCPServer object of sv (a private copy with id, source_id, toolCount). */
static int mcp_server_wire(const struct catalog_source_config *s, const json_t *sv, int64_t id,
                           json_t *out)
{
        json_t *tools = json_object_get(sv, "tools");
        char idbuf[32];
        json_t *w;

        (void)snprintf(idbuf, sizeof(idbuf), "%" PRId64, id);
        w = json_deep_copy(sv);
        if (w && mcp_tools_default_access(json_object_get(w, "tools")) < 0) {
                json_decref(w);
                w = NULL;
        }
        if (!w || json_object_set_new(w, "id", json_string(idbuf)) < 0 ||
            json_object_set_new(w, "source_id", json_string(s->id)) < 0 ||
            json_object_set_new(w, "toolCount", json_integer((json_int_t)json_array_size(tools))) <
                    0 ||
            json_array_append_new(out, w) < 0)
                return -ENOMEM;
        return 0;
}

static int index_add_mcp(struct catalog_index *idx, size_t n_loads, struct id_builder *b)
{
        int r = 0;

        idx->mcp = json_array();
        if (!idx->mcp)
                return -ENOMEM;
        for (size_t i = 0; i < n_loads && r >= 0; i++) {
                const struct catalog_source_config *s = &idx->config.sources[i];
                struct catalog_models *data = idx->sources[i].data;
                size_t j;
                json_t *sv;

                if (!data || !s->is_mcp || !s->enabled || !data->mcp_servers)
                        continue;
                json_array_foreach(data->mcp_servers, j, sv) {
                        const char *name = json_string_value(json_object_get(sv, "name"));
                        int64_t id = 0;

                        if (!name || !catalog_glob_included(s->included, s->excluded, name))
                                continue;
                        buf_reset(&b->key);
                        r = buf_printf(&b->key, "s\x1f%s\x1f%s", s->id, name);
                        if (r >= 0)
                                r = id_builder_assign(b, &id);
                        if (r >= 0)
                                r = mcp_server_wire(s, sv, id, idx->mcp);
                        if (r < 0)
                                break;
                }
        }
        return r;
}

/* Orders, typing check and precomputed answers of a snapshot whose models are built. */
static int index_finish(struct catalog_index *idx)
{
        int r;

        qsort(idx->models, idx->n_models, sizeof(*idx->models), model_cmp_name_asc);
        for (size_t i = 0; i < idx->n_models; i++) {
                idx->by_id[i] = &idx->models[i];
                idx->models[i].index = idx;
        }
        qsort(idx->by_id, idx->n_models, sizeof(struct catalog_model *), model_cmp_id);
        idx->well_typed = true;
        for (size_t i = 0; i < idx->n_models && idx->well_typed; i++) {
                const struct catalog_model *m = &idx->models[i];

                idx->well_typed = custom_well_typed(m->custom);
                for (size_t j = 0; j < m->data->n_artifacts; j++)
                        if (!custom_well_typed(
                                    catalog_record_get(m->data->artifacts[j], "customProperties")))
                                idx->well_typed = false;
        }
        r = artifact_props_build(idx);
        if (r >= 0)
                r = index_postings_build(idx);
        if (r >= 0)
                r = filter_options_build(idx);
        if (r >= 0)
                r = mcp_filter_options_build(idx);
        return r;
}

int catalog_index_build(struct catalog_config *config, struct catalog_source_load *loads,
                        size_t n_loads, struct catalog_ids *ids, struct catalog_index **ret)
{
        CLEANUP(catalog_index_unrefp) struct catalog_index *idx = NULL;
        struct id_builder b = { .old = ids,
                                .next = ids->next,
                                .keys = BUF_INIT(SIZE_MAX),
                                .key = BUF_INIT((size_t)64 * 1024) };
        int r;

        if (n_loads != config->n_sources)
                return -EINVAL;
        idx = calloc(1, sizeof(*idx));
        if (!idx)
                return -ENOMEM;
        idx->refs = 1;
        idx->config = *config;
        *config = (struct catalog_config){ 0 };
        r = index_take_sources(idx, loads, n_loads);
        if (r < 0)
                return r;
        r = index_add_models(idx, n_loads, &b);
        if (r >= 0)
                r = index_add_mcp(idx, n_loads, &b);
        buf_release(&b.key);
        if (r < 0) {
                free(b.v);
                buf_release(&b.keys);
                return r;
        }
        /* commit the new id map (empty when nothing is served: b.v is NULL then) */
        if (b.n > 0)
                qsort_r(b.v, b.n, sizeof(*b.v), id_entry_cmp, b.keys.p);
        free(ids->v);
        free(ids->keys);
        ids->v = b.v;
        ids->n = b.n;
        ids->keys = buf_take(&b.keys, NULL);
        ids->next = b.next;
        r = index_finish(idx);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(idx);
        return 0;
}

/* ---- keyset pagination (models, artifacts) ---- */

struct sort_key {
        bool has;
        bool is_str;
        const char *s; /* borrowed */
        double num;
        int64_t id;
};

struct keyed {
        const void *item;
        struct sort_key key;
};

static int cmp_num(double a, double b)
{
        return a < b ? -1 : a > b ? 1 : 0;
}

struct sort_opts {
        bool desc;
        bool id_asc; /* ties by id ascending in both directions (property orderings, upstream) */
};

/*
 * Items with a value come first in either direction; then the value; then the id (reversed
 * with the value in DESC order, unless id_asc).
 */
static int sort_key_cmp(const struct sort_key *a, const struct sort_key *b,
                        const struct sort_opts *o)
{
        int c = 0;

        if (a->has != b->has)
                return a->has ? -1 : 1;
        if (a->has) {
                /* One ordering's keys, and the cursor decoded for it, all have its shape; asking
                 * both keys keeps a string compare from ever meeting a numeric key's NULL s. */
                if (a->is_str && b->is_str)
                        c = model_name_cmp(a->s, b->s);
                else
                        c = cmp_num(a->num, b->num);
        }
        if (c != 0)
                return o->desc ? -c : c;
        c = a->id < b->id ? -1 : a->id > b->id;
        return o->desc && !o->id_asc ? -c : c;
}

static int keyed_cmp(const void *pa, const void *pb, void *ud)
{
        const struct keyed *a = pa, *b = pb;

        return sort_key_cmp(&a->key, &b->key, ud);
}

static void format_value(const struct sort_key *k, char *buf, size_t n)
{
        if (!k->has)
                buf[0] = '\0';
        else if (k->is_str)
                snprintf(buf, n, "%s", k->s);
        else if (k->num == floor(k->num) && fabs(k->num) < 9e15)
                snprintf(buf, n, "%" PRId64, (int64_t)k->num);
        else
                snprintf(buf, n, "%.17g", k->num);
}

/*
 * Decodes a registry-format token into a cursor with the same shape (is_str, always_has) as the
 * list's keys. value_buf keeps the string alive.
 */
static int cursor_decode(const char *token, bool is_str, bool always_has, struct sort_key *ret,
                         char **ret_plain, struct error_detail *reterr)
{
        AUTOFREE char *plain = NULL;
        char *colon;
        int32_t id;
        int r;

        if (strlen(token) > CATALOG_TOKEN_MAX) {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid nextPageToken: token too long");
                return -EINVAL;
        }
        r = b64_decode(token, &plain);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid nextPageToken: illegal base64 data");
                return -EINVAL;
        }
        colon = strchr(plain, ':');
        if (!colon) {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid nextPageToken: missing ':' separator");
                return -EINVAL;
        }
        *colon = '\0';
        if (safe_atoi32(plain, &id) < 0) {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid nextPageToken: invalid id '%s'", plain);
                return -EINVAL;
        }
        *ret = (struct sort_key){ .id = id, .is_str = is_str };
        ret->has = always_has || colon[1] != '\0';
        if (is_str)
                ret->s = colon + 1;
        else if (ret->has) {
                char *end;

                errno = 0;
                ret->num = strtod(colon + 1, &end);
                if (errno != 0 || *end != '\0') {
                        (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                               "invalid nextPageToken: invalid value");
                        return -EINVAL;
                }
        }
        *ret_plain = TAKE_PTR(plain);
        return 0;
}

/*
 * Sorts v (unless presorted), pages it after the token and returns the items (json via
 * item_json) as a list object.
 */
/*
 * Sorts v (unless presorted) and finds the page after the token: [*ret_start, *ret_end) plus an
 * owned next token (NULL when this is the last page).
 */
static int keyed_window(struct keyed *v, size_t n, bool presorted, bool is_str, bool always_has,
                        bool id_asc, const struct catalog_page *page, size_t *ret_start,
                        size_t *ret_end, char **ret_next, struct error_detail *reterr)
{
        AUTOFREE char *plain = NULL;
        char *next = NULL;
        size_t start = 0, end;
        struct sort_opts opts = { .desc = page->desc, .id_asc = id_asc };
        int r;

        if (page->token && page->token[0]) {
                struct sort_key cur;

                r = cursor_decode(page->token, is_str, always_has, &cur, &plain, reterr);
                if (r < 0)
                        return r;
                if (!presorted)
                        qsort_r(v, n, sizeof(*v), keyed_cmp, &opts);
                /* lower bound: first item strictly after the cursor */
                {
                        size_t lo = 0, hi = n;

                        while (lo < hi) {
                                size_t mid = lo + (hi - lo) / 2;

                                if (sort_key_cmp(&v[mid].key, &cur, &opts) <= 0)
                                        lo = mid + 1;
                                else
                                        hi = mid;
                        }
                        start = lo;
                }
        } else if (!presorted)
                qsort_r(v, n, sizeof(*v), keyed_cmp, &opts);

        end = n - start > page->page_size ? start + page->page_size : n;
        if (end < n && end > start) {
                char value[1024], id[32];
                AUTOFREE char *p2 = NULL;

                format_value(&v[end - 1].key, value, sizeof(value));
                snprintf(id, sizeof(id), "%" PRId64, v[end - 1].key.id);
                if (asprintf(&p2, "%s:%s", id, value) < 0)
                        return -ENOMEM;
                next = base64_encode(p2, strlen(p2));
                if (!next)
                        return -ENOMEM;
        }
        *ret_start = start;
        *ret_end = end;
        *ret_next = next;
        return 0;
}

/* keyed_window() rendered as a list object, items via item_json. */
static int keyed_page(struct keyed *v, size_t n, bool presorted, bool is_str, bool always_has,
                      bool id_asc, const struct catalog_page *page,
                      json_t *(*item_json)(const void *item), json_t **ret,
                      struct error_detail *reterr)
{
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        size_t start, end;
        int r;

        if (!items)
                return -ENOMEM;
        r = keyed_window(v, n, presorted, is_str, always_has, id_asc, page, &start, &end, &next,
                         reterr);
        if (r < 0)
                return r;
        for (size_t i = start; i < end; i++)
                if (json_array_append_new(items, item_json(v[i].item)) < 0)
                        return -ENOMEM;
        *ret = list_json(TAKE_PTR(items), next, page->page_size);
        return *ret ? 0 : -ENOMEM;
}

/* ---- models ---- */

static const char *const model_string_fields[][2] = {
        { "name", "name" },
        { "description", "description" },
        { "readme", "readme" },
        { "maturity", "maturity" },
        { "provider", "provider" },
        { "logo", "logo" },
        { "license", "license" },
        { "licenseLink", "licenseLink" },
        { "license_link", "licenseLink" },
        { "libraryName", "libraryName" },
        { "library_name", "libraryName" },
        { "externalId", "externalId" },
        { "language", "language" },
        { "tasks", "tasks" },
};

/* catalog_model.fields[]: no such member, or one past what a uint8_t holds (looked up by name) */
enum { FIELD_ABSENT = UINT8_MAX, FIELD_FAR = UINT8_MAX - 1 };

static uint8_t field_position(const struct catalog_record *r, const char *key)
{
        for (size_t i = 0; r && i < r->n; i++)
                if (streq(r->v[i].key, key))
                        return i < FIELD_FAR ? (uint8_t)i : FIELD_FAR;
        return FIELD_ABSENT;
}

/* The value of the well-known field model_string_fields[i] of m (borrowed), or NULL. */
static const json_t *model_field(const struct catalog_model *m, size_t i)
{
        uint8_t at = m->fields[i];

        if (at == FIELD_ABSENT)
                return NULL;
        if (at == FIELD_FAR)
                return catalog_record_get(m->data->rec, model_string_fields[i][1]);
        return m->data->rec->v[at].value;
}

static bool match_json_any(const struct filterq_cmp *cmp, const json_t *v)
{
        size_t i;
        json_t *e;

        if (!json_is_array(v))
                return filterq_match_value(cmp, v);
        json_array_foreach(v, i, e)
                if (filterq_match_value(cmp, e))
                        return true;
        return false;
}

static bool match_int(const struct filterq_cmp *cmp, int64_t v)
{
        json_auto_t *j = json_integer(v);

        return j && filterq_match_value(cmp, j);
}

static const char *const artifact_string_fields[] = {
        "name", "uri", "artifactType", "metricsType", "externalId", "description",
};

/* 1 match, 0 no match, -EDOM when a custom property's value cannot be compared (upstream: 400) */
/* An artifact's member: of a served object or of a loaded record (borrowed), or NULL. */
typedef json_t *(*artifact_get_fn)(const void *a, const char *key);

static json_t *artifact_json_get(const void *a, const char *key)
{
        return json_object_get(a, key);
}

static json_t *artifact_record_get(const void *a, const char *key)
{
        return catalog_record_get(a, key);
}

static int artifact_match_property(artifact_get_fn get, const void *a, int64_t id, const char *p,
                                   const struct filterq_cmp *cmp)
{
        for (size_t i = 0; i < ELEMENTSOF(artifact_string_fields); i++)
                if (streq(p, artifact_string_fields[i]))
                        return filterq_match_value(cmp, get(a, p));
        if (streq(p, "id"))
                return match_int(cmp, id);
        if (streq(p, "createTimeSinceEpoch") || streq(p, "lastUpdateTimeSinceEpoch"))
                return get(a, p) && match_int(cmp, epoch_value(get(a, p)));
        return filterq_compare_metadata(cmp, json_object_get(get(a, "customProperties"), p));
}

static bool artifact_field_is_builtin(const char *p)
{
        for (size_t i = 0; i < ELEMENTSOF(artifact_string_fields); i++)
                if (streq(p, artifact_string_fields[i]))
                        return true;
        return streq(p, "id") || streq(p, "createTimeSinceEpoch") ||
               streq(p, "lastUpdateTimeSinceEpoch");
}

/* ud: a served CatalogArtifact (with its id) */
static int artifact_match(void *ud, const struct filterq_cmp *cmp)
{
        int64_t id = 0;

        (void)!safe_atoi64(str_or(json_string_value(json_object_get(ud, "id")), ""), &id);
        return artifact_match_property(artifact_json_get, ud, id, cmp->property, cmp);
}

/* An artifact custom property of m (ap): through the interned id and the compact per-model list. */
static int model_match_artifact_custom(const struct catalog_model *m, const char *ap,
                                       const struct filterq_cmp *cmp)
{
        ssize_t id = prop_name_id(m->index, ap);

        if (id < 0)
                return false;
        for (size_t i = 0; i < m->n_aprops && m->aprops[i].id <= (uint32_t)id; i++) {
                int r;

                if (m->aprops[i].id != (uint32_t)id)
                        continue;
                r = filterq_compare_metadata(cmp, m->aprops[i].mv);
                if (r != 0)
                        return r;
        }
        return false;
}

/* "artifacts.<ap>": whether any artifact of m matches (or -EDOM). */
static int model_match_artifacts(const struct catalog_model *m, const char *ap,
                                 const struct filterq_cmp *cmp)
{
        if (!artifact_field_is_builtin(ap))
                return model_match_artifact_custom(m, ap, cmp);
        for (size_t i = 0; i < m->data->n_artifacts; i++) {
                int r = artifact_match_property(artifact_record_get, m->data->artifacts[i],
                                                m->index->art_ids[m->art_off + i], ap, cmp);

                if (r != 0)
                        return r;
        }
        return false;
}

static int model_match(void *ud, const struct filterq_cmp *cmp)
{
        const struct catalog_model *m = ud;
        const char *p = cmp->property;
        const struct catalog_record *src = m->data->rec;

        if (strneq(p, "artifacts.", strlen("artifacts.")))
                return model_match_artifacts(m, p + strlen("artifacts."), cmp);
        for (size_t i = 0; i < ELEMENTSOF(model_string_fields); i++)
                if (streq(p, model_string_fields[i][0]))
                        return match_json_any(cmp, model_field(m, i));
        if (streq(p, "source_id")) {
                json_auto_t *s = json_string(m->src->id);

                return s && filterq_match_value(cmp, s);
        }
        if (streq(p, "id"))
                return match_int(cmp, m->id);
        if (streq(p, "createTimeSinceEpoch"))
                return catalog_record_get(src, p) && match_int(cmp, m->create_ms);
        if (streq(p, "lastUpdateTimeSinceEpoch"))
                return catalog_record_get(src, p) && match_int(cmp, m->update_ms);
        return filterq_compare_metadata(cmp, json_object_get(m->custom, p));
}

int catalog_filter_check_types(const struct filterq_node *n)
{
        const struct filterq_literal *l;
        bool ok = true;

        if (!n)
                return 0;
        if (n->kind != FILTERQ_CMP) {
                for (size_t i = 0; i < n->n_kids; i++) {
                        int r = catalog_filter_check_types(n->kids[i]);

                        if (r < 0)
                                return r;
                }
                return 0;
        }
        l = filterq_cmp_first_literal(&n->cmp);
        if (!l)
                return 0;
        switch (n->cmp.suffix) {
        case FILTERQ_SUFFIX_STRING:
                ok = l->type == FILTERQ_LIT_STRING;
                break;
        case FILTERQ_SUFFIX_DOUBLE:
        case FILTERQ_SUFFIX_INT:
                ok = l->type == FILTERQ_LIT_INT || l->type == FILTERQ_LIT_FLOAT;
                break;
        case FILTERQ_SUFFIX_BOOL:
                ok = l->type == FILTERQ_LIT_BOOL;
                break;
        default:
                break;
        }
        return ok ? 0 : -EDOM;
}

static void model_resolve_fields(struct catalog_model *m)
{
        static_assert(ELEMENTSOF(model_string_fields) <= ELEMENTSOF(m->fields), "fields");
        for (size_t i = 0; i < ELEMENTSOF(model_string_fields); i++)
                m->fields[i] = field_position(m->data->rec, model_string_fields[i][1]);
        m->custom = catalog_record_get(m->data->rec, "customProperties");
}

/* ---- postings: gets by (source, name) and candidates of filterQuery equalities ---- */

enum {
        POST_KEY,    /* (source id, name): the model */
        POST_SOURCE, /* ("", source id) */
        POST_FIELD,  /* (field, string value or array element) */
        POST_CUSTOM, /* (property, string_value of a MetadataStringValue) */
        POST_ART,    /* (property, string_value) of any of the model's artifacts */
};

/* The well-known fields with postings (JSON keys; long texts such as description have none). */
static const char *const posted_fields[] = {
        "name", "maturity", "provider", "license", "libraryName", "language", "tasks",
};

static int postings_add_custom(struct catalog_postings_builder *b, uint32_t kind,
                               const json_t *custom, uint32_t pos)
{
        const char *k;
        json_t *mv;

        json_object_foreach((json_t *)custom, k, mv) {
                const char *s = json_string_value(json_object_get(mv, "string_value"));
                int r;

                if (!s || !streq(str_or(json_string_value(json_object_get(mv, "metadataType")), ""),
                                 "MetadataStringValue"))
                        continue;
                r = catalog_postings_add(b, kind, k, s, pos);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The keys of the model at pos: what model_match() compares with strcmp for an equality. */
static int postings_add_model(struct catalog_postings_builder *b, const struct catalog_model *m,
                              uint32_t pos)
{
        int r = catalog_postings_add(b, POST_KEY, m->src->id, m->data->name, pos);
        size_t i;
        json_t *e;

        if (r >= 0)
                r = catalog_postings_add(b, POST_SOURCE, "", m->src->id, pos);
        for (size_t f = 0; f < ELEMENTSOF(posted_fields) && r >= 0; f++) {
                const json_t *v = catalog_record_get(m->data->rec, posted_fields[f]);

                if (json_is_string(v))
                        r = catalog_postings_add(b, POST_FIELD, posted_fields[f],
                                                 json_string_value(v), pos);
                json_array_foreach((json_t *)v, i, e)
                        if (r >= 0 && json_is_string(e))
                                r = catalog_postings_add(b, POST_FIELD, posted_fields[f],
                                                         json_string_value(e), pos);
        }
        if (r >= 0)
                r = postings_add_custom(b, POST_CUSTOM, m->custom, pos);
        for (size_t j = 0; j < m->data->n_artifacts && r >= 0; j++)
                r = postings_add_custom(b, POST_ART,
                                        catalog_record_get(m->data->artifacts[j],
                                                           "customProperties"),
                                        pos);
        return r;
}

/* Built once the models are in NAME order (positions) and by_id is sorted (ranks). */
static int index_postings_build(struct catalog_index *idx)
{
        struct catalog_postings_builder b = { 0 };
        AUTOFREE uint32_t *rank = malloc(idx->n_models * sizeof(*rank) + 1);
        int r = rank ? 0 : -ENOMEM;

        if (idx->n_models >= UINT32_MAX)
                return -E2BIG;
        for (size_t i = 0; i < idx->n_models && r >= 0; i++)
                rank[idx->by_id[i] - idx->models] = (uint32_t)i;
        for (size_t pos = 0; pos < idx->n_models && r >= 0; pos++)
                r = postings_add_model(&b, &idx->models[pos], (uint32_t)pos);
        if (r < 0) {
                catalog_postings_builder_release(&b);
                return r;
        }
        return catalog_postings_build(&b, rank, idx->n_models, &idx->postings);
}

/* The models a filter can match, in NAME (by_pos) and ID (by_rank) order, when postings say. */
struct candidates {
        bool active; /* false: every model */
        const uint32_t *by_pos, *by_rank;
        size_t n;
        uint32_t *owned; /* both lists of an IN, in one allocation */
};

/* Which postings serve comparison c of a model property with a string: false when none do. */
static bool cmp_posting_key(const struct filterq_cmp *c, uint32_t *kind, const char **a)
{
        const char *p = c->property;
        bool string_suffix = c->suffix == FILTERQ_SUFFIX_NONE || c->suffix == FILTERQ_SUFFIX_STRING;

        if (c->op == FILTERQ_OP_EQ ? c->value.type != FILTERQ_LIT_STRING : c->op != FILTERQ_OP_IN)
                return false;
        for (size_t i = 0; c->op == FILTERQ_OP_IN && i < c->n_list; i++)
                if (c->list[i].type != FILTERQ_LIT_STRING)
                        return false;
        if (strneq(p, "artifacts.", strlen("artifacts."))) {
                *kind = POST_ART;
                *a = p + strlen("artifacts.");
                return string_suffix && !artifact_field_is_builtin(*a);
        }
        for (size_t i = 0; i < ELEMENTSOF(model_string_fields); i++) {
                if (!streq(p, model_string_fields[i][0]))
                        continue;
                for (size_t f = 0; f < ELEMENTSOF(posted_fields); f++)
                        if (streq(model_string_fields[i][1], posted_fields[f])) {
                                *kind = POST_FIELD;
                                *a = posted_fields[f];
                                return true;
                        }
                return false;
        }
        *kind = streq(p, "source_id") ? POST_SOURCE : POST_CUSTOM;
        *a = *kind == POST_SOURCE ? "" : p;
        return *kind == POST_SOURCE ||
               (string_suffix && !streq(p, "id") && !streq(p, "createTimeSinceEpoch") &&
                !streq(p, "lastUpdateTimeSinceEpoch"));
}

/*
 * The union of the postings of an IN's values, in both orders; 0 when the lists hold bound
 * models or more (a smaller candidate set is known: the union is not worth building).
 */
static int in_candidates(const struct catalog_index *idx, const struct filterq_cmp *c,
                         uint32_t kind, const char *a, size_t bound, struct candidates *ret)
{
        AUTOFREE uint8_t *mark = NULL;
        struct catalog_posting one = { 0 };
        uint32_t *v;
        size_t n = 0, k = 0;

        for (size_t i = 0; i < c->n_list && n < bound; i++) {
                (void)catalog_postings_get(idx->postings, kind, a, c->list[i].s, &one);
                n += one.n;
        }
        if (n >= bound)
                return 0;
        if (c->n_list == 1) {
                *ret = (struct candidates){
                        .active = true, .by_pos = one.by_pos, .by_rank = one.by_rank, .n = one.n
                };
                return 1;
        }
        n = 0;
        mark = calloc(idx->n_models + 1, 1);
        if (!mark)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_list; i++) {
                struct catalog_posting p;

                (void)catalog_postings_get(idx->postings, kind, a, c->list[i].s, &p);
                for (size_t j = 0; j < p.n; j++)
                        if (!mark[p.by_pos[j]]) {
                                mark[p.by_pos[j]] = 1;
                                n++;
                        }
        }
        v = malloc(2 * n * sizeof(*v) + 1);
        if (!v)
                return -ENOMEM;
        for (size_t pos = 0; pos < idx->n_models; pos++)
                if (mark[pos])
                        v[k++] = (uint32_t)pos;
        for (size_t r = 0; r < idx->n_models; r++)
                if (mark[idx->by_id[r] - idx->models])
                        v[k++] = (uint32_t)(idx->by_id[r] - idx->models);
        *ret = (struct candidates){
                .active = true, .by_pos = v, .by_rank = v + n, .n = n, .owned = v
        };
        return 1;
}

/* 1 and the candidates of one comparison, 0 when no postings serve it (or none below bound). */
static int cmp_candidates(const struct catalog_index *idx, const struct filterq_cmp *c,
                          size_t bound, struct candidates *ret)
{
        struct catalog_posting p;
        const char *a;
        uint32_t kind;

        *ret = (struct candidates){ 0 };
        if (!cmp_posting_key(c, &kind, &a))
                return 0;
        if (c->op == FILTERQ_OP_IN)
                return in_candidates(idx, c, kind, a, bound, ret);
        (void)catalog_postings_get(idx->postings, kind, a, c->value.s, &p);
        *ret = (struct candidates){
                .active = true, .by_pos = p.by_pos, .by_rank = p.by_rank, .n = p.n
        };
        return 1;
}

/*
 * The smallest candidate set of the filter's top-level equalities (the filter itself or the
 * comparisons of its top AND): a superset of its matches. Only for a filter that cannot fail on
 * this snapshot (filter_is_total()), since the models skipped are never evaluated.
 */
static int filter_candidates(const struct catalog_index *idx, const struct filterq_node *f,
                             struct candidates *ret)
{
        *ret = (struct candidates){ 0 };
        if (!f || !idx->postings || !idx->well_typed || !filter_is_total(f))
                return 0;
        if (f->kind == FILTERQ_CMP)
                return cmp_candidates(idx, &f->cmp, SIZE_MAX, ret);
        /* the equalities first: their lists cost nothing, and bound the unions of the INs */
        for (size_t k = 0; f->kind == FILTERQ_AND && k < 2 * f->n_kids; k++) {
                bool ins_pass = k >= f->n_kids;
                const struct filterq_node *kid = f->kids[ins_pass ? k - f->n_kids : k];
                struct candidates c;
                int r;

                if (kid->kind != FILTERQ_CMP || (kid->cmp.op == FILTERQ_OP_IN) != ins_pass)
                        continue;
                r = cmp_candidates(idx, &kid->cmp, ret->active ? ret->n : SIZE_MAX, &c);
                if (r < 0) {
                        free(ret->owned);
                        return r;
                }
                if (r > 0 && (!ret->active || c.n < ret->n)) {
                        free(ret->owned);
                        *ret = c;
                } else
                        free(c.owned);
        }
        return ret->active;
}

/* The fixed orderBy values; ACCURACY (the last) orders models only. */
static const struct {
        const char *name;
        enum catalog_order o;
} fixed_orders[] = {
        { "ID", CATALOG_ORDER_ID },
        { "NAME", CATALOG_ORDER_NAME },
        { "CREATE_TIME", CATALOG_ORDER_CREATE_TIME },
        { "LAST_UPDATE_TIME", CATALOG_ORDER_LAST_UPDATE_TIME },
        { "ACCURACY", CATALOG_ORDER_ACCURACY },
};

/* Whether s names one of the first n fixed orders, stored in *ret. */
static bool fixed_order_find(const char *s, size_t n, enum catalog_order *ret)
{
        for (size_t i = 0; i < n; i++)
                if (streq(s, fixed_orders[i].name)) {
                        *ret = fixed_orders[i].o;
                        return true;
                }
        return false;
}

int catalog_order_parse_models(const char *s, enum catalog_order *ret_order, char **ret_property,
                               enum filterq_suffix *ret_suffix)
{
        static const struct {
                const char *suffix;
                enum filterq_suffix s;
        } suffixes[] = {
                { ".string_value", FILTERQ_SUFFIX_STRING },
                { ".double_value", FILTERQ_SUFFIX_DOUBLE },
                { ".int_value", FILTERQ_SUFFIX_INT },
        };
        size_t len;

        *ret_property = NULL;
        *ret_suffix = FILTERQ_SUFFIX_NONE;
        if (!s || s[0] == '\0') {
                *ret_order = CATALOG_ORDER_NAME;
                return 0;
        }
        if (fixed_order_find(s, ELEMENTSOF(fixed_orders), ret_order))
                return 0;
        len = strlen(s);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t sl = strlen(suffixes[i].suffix);

                if (len > sl && streq(s + len - sl, suffixes[i].suffix)) {
                        char *p = strndup(s, len - sl);

                        if (!p)
                                return -ENOMEM;
                        *ret_property = p;
                        *ret_suffix = suffixes[i].s;
                        *ret_order = CATALOG_ORDER_PROPERTY;
                        return 0;
                }
        }
        return -EINVAL;
}

/*
 * The value of a custom or well-known property p of an entity for ordering: direct is the
 * entity's member p, custom its customProperties.
 */
static void property_key(const json_t *direct, const json_t *custom, const char *p,
                         enum filterq_suffix suffix, struct sort_key *k)
{
        const json_t *mv = json_object_get(custom, p);
        bool ok;

        if (suffix == FILTERQ_SUFFIX_STRING) {
                if (json_is_string(direct)) {
                        k->has = true;
                        k->s = json_string_value(direct);
                } else if (mv &&
                           streq(str_or(json_string_value(json_object_get(mv, "metadataType")), ""),
                                 "MetadataStringValue")) {
                        k->has = true;
                        k->s = json_string_value(json_object_get(mv, "string_value"));
                }
                k->is_str = true;
                /* "" encodes "no value" in page tokens: treat an empty string as absent */
                if (!k->s || k->s[0] == '\0')
                        k->has = false;
                return;
        }
        k->num = metadata_number(mv, &ok);
        k->has = ok;
}

static json_t *model_item_json(const void *item)
{
        const struct catalog_model *m = item;

        return json_loadb(m->wire_text, m->wire_len, 0, NULL);
}

static bool model_in_sources(const struct catalog_model *m, char **sources)
{
        return !sources || catalog_strv_contains(sources, m->src->id);
}

static bool model_in_labels(const struct catalog_model *m, char **labels)
{
        if (!labels)
                return true;
        for (char **l = labels; *l; l++) {
                if (streq(*l, "null")) {
                        if (catalog_strv_length(m->src->labels) == 0)
                                return true;
                        continue;
                }
                for (char **sl = m->src->labels; sl && *sl; sl++)
                        if (strcasecmp(*sl, *l) == 0)
                                return true;
        }
        return false;
}

struct model_selection {
        struct keyed *v; /* owned */
        size_t n;
        bool is_str, always_has, presorted, id_asc;
};

/*
 * Whether evaluating n against a well-typed snapshot can only answer match or no match: no
 * comparison takes LIKE/ILIKE with a number or an ordering of booleans, the only -EDOM cases
 * left once catalog_filter_check_types() passed and every value has its declared type.
 */
static bool filter_is_total(const struct filterq_node *n)
{
        const struct filterq_cmp *c;
        size_t n_lit;

        if (!n)
                return true;
        if (n->kind != FILTERQ_CMP) {
                for (size_t i = 0; i < n->n_kids; i++)
                        if (!filter_is_total(n->kids[i]))
                                return false;
                return true;
        }
        c = &n->cmp;
        n_lit = c->op == FILTERQ_OP_IN ? c->n_list : 1;
        for (size_t i = 0; i < n_lit; i++) {
                const struct filterq_literal *l = c->op == FILTERQ_OP_IN ? &c->list[i] : &c->value;

                if ((c->op == FILTERQ_OP_LIKE || c->op == FILTERQ_OP_ILIKE) &&
                    l->type != FILTERQ_LIT_STRING)
                        return false;
                if (l->type == FILTERQ_LIT_BOOL && c->op != FILTERQ_OP_EQ &&
                    c->op != FILTERQ_OP_NE && c->op != FILTERQ_OP_IN)
                        return false;
        }
        return catalog_filter_check_types(n) == 0;
}

/* The number of models a presorted scan walks: the candidates, or all. */
static size_t presorted_n(const struct catalog_index *idx, const struct candidates *c)
{
        return c->active ? c->n : idx->n_models;
}

/*
 * The model at position pos of a presorted order (NAME: idx->models, ID: idx->by_id), among
 * the candidates c when they are active.
 */
static const struct catalog_model *presorted_at(const struct catalog_index *idx,
                                                const struct candidates *c,
                                                enum catalog_order order, bool desc, size_t pos)
{
        size_t i = desc ? presorted_n(idx, c) - 1 - pos : pos;

        if (c->active)
                return &idx->models[order == CATALOG_ORDER_NAME ? c->by_pos[i] : c->by_rank[i]];
        return order == CATALOG_ORDER_NAME ? &idx->models[i] : idx->by_id[i];
}

static void presorted_key(const struct catalog_model *m, enum catalog_order order,
                          struct sort_key *k)
{
        *k = (struct sort_key){ .has = true, .id = m->id };
        if (order == CATALOG_ORDER_NAME) {
                k->is_str = true;
                k->s = m->data->name;
        } else
                k->num = (double)m->id;
}

static bool model_selected(const struct catalog_model *m, const struct catalog_model_query *q,
                           const char *needle)
{
        return model_in_sources(m, q->sources) && model_in_labels(m, q->source_labels) &&
               (!needle || strstr(m->haystack, needle));
}

/*
 * The planned path for the presorted orders (ID, NAME): when the filter cannot fail on this
 * snapshot, the page is the first page_size + 1 matches strictly after the cursor in that order,
 * so the scan starts at the cursor (binary search) and stops there. keyed_window() then cuts the
 * same page and token from these as it would from the full selection. 1 when it answered, 0
 * when the full scan must run (another order, a filter that can fail, a token it cannot decode:
 * keyed_window() reports that).
 */
static int models_select_presorted(const struct catalog_index *idx,
                                   const struct catalog_model_query *q, const char *needle,
                                   const struct candidates *c, struct keyed **ret_v, size_t *ret_n)
{
        struct sort_opts opts = { .desc = q->page.desc };
        AUTOFREE struct keyed *v = NULL;
        size_t start = 0, n = 0, total = presorted_n(idx, c);

        if ((q->order != CATALOG_ORDER_ID && q->order != CATALOG_ORDER_NAME) ||
            (q->filter && (!idx->well_typed || !filter_is_total(q->filter))))
                return 0;
        /* the page and the one item that tells whether a next page exists */
        v = calloc(MIN((size_t)q->page.page_size, idx->n_models) + 2, sizeof(*v));
        if (!v)
                return -ENOMEM;
        if (q->page.token && q->page.token[0]) {
                AUTOFREE char *plain = NULL;
                struct sort_key cur;
                size_t lo = 0, hi = total;

                /* a bad token is the general path's to report */
                if (cursor_decode(q->page.token, q->order == CATALOG_ORDER_NAME, true, &cur, &plain,
                                  /* reterr= */ NULL) < 0)
                        return 0;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        struct sort_key k;

                        presorted_key(presorted_at(idx, c, q->order, q->page.desc, mid), q->order,
                                      &k);
                        if (sort_key_cmp(&k, &cur, &opts) <= 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                start = lo;
        }
        for (size_t pos = start; pos < total && n <= q->page.page_size; pos++) {
                const struct catalog_model *m = presorted_at(idx, c, q->order, q->page.desc, pos);
                int r;

                if (!model_selected(m, q, needle))
                        continue;
                r = filterq_eval(q->filter, model_match, (void *)m);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                v[n].item = m;
                presorted_key(m, q->order, &v[n].key);
                n++;
        }
        *ret_v = TAKE_PTR(v);
        *ret_n = n;
        return 1;
}

/* The search text of q lowercased (owned), NULL in *ret when q searches for nothing. */
static int needle_lower(const char *text, char **ret)
{
        char *needle;

        *ret = NULL;
        if (!text || !text[0])
                return 0;
        needle = strdup(text);
        if (!needle)
                return -ENOMEM;
        for (char *c = needle; *c; c++)
                *c = (char)tolower((unsigned char)*c);
        *ret = needle;
        return 0;
}

/* Whether the artifact key ak orders before k: ASC keeps the smallest value, DESC the largest. */
static bool artifact_key_wins(const struct sort_key *ak, const struct sort_key *k, bool desc)
{
        if (!k->has)
                return true;
        if (ak->is_str)
                return (model_name_cmp(ak->s, k->s) < 0) != desc;
        return (ak->num < k->num) != desc;
}

/* The key of m for an "artifacts.<property>" order (ap): the best value among its artifacts. */
static void artifacts_property_key(const struct catalog_model *m, const char *ap,
                                   const struct catalog_model_query *q, struct sort_key *k)
{
        for (size_t j = 0; j < m->data->n_artifacts; j++) {
                const struct catalog_record *a = m->data->artifacts[j];
                struct sort_key ak = { 0 };

                property_key(catalog_record_get(a, ap), catalog_record_get(a, "customProperties"),
                             ap, q->order_suffix, &ak);
                if (!ak.has || !artifact_key_wins(&ak, k, q->page.desc))
                        continue;
                k->has = true;
                k->is_str = ak.is_str;
                k->s = ak.s;
                k->num = ak.num;
        }
}

/* Fills the sort key k (zeroed) of m for the order of q. */
static void model_sort_key(const struct catalog_model *m, const struct catalog_model_query *q,
                           struct sort_key *k)
{
        k->id = m->id;
        switch (q->order) {
        case CATALOG_ORDER_NAME:
                k->has = k->is_str = true;
                k->s = m->data->name;
                break;
        case CATALOG_ORDER_ID:
                k->has = true;
                k->num = (double)m->id;
                break;
        case CATALOG_ORDER_CREATE_TIME:
                k->has = true;
                k->num = (double)m->create_ms;
                break;
        case CATALOG_ORDER_LAST_UPDATE_TIME:
                k->has = true;
                k->num = (double)m->update_ms;
                break;
        case CATALOG_ORDER_ACCURACY:
                k->has = m->has_accuracy;
                k->num = m->accuracy;
                break;
        case CATALOG_ORDER_PROPERTY:
                if (strneq(q->order_property, "artifacts.", strlen("artifacts.")))
                        artifacts_property_key(m, q->order_property + strlen("artifacts."), q, k);
                else
                        property_key(catalog_record_get(m->data->rec, q->order_property), m->custom,
                                     q->order_property, q->order_suffix, k);
                k->is_str = q->order_suffix == FILTERQ_SUFFIX_STRING;
                break;
        }
}

static void keyed_reverse(struct keyed *v, size_t n)
{
        for (size_t i = 0; i < n / 2; i++) {
                struct keyed t = v[i];

                v[i] = v[n - 1 - i];
                v[n - 1 - i] = t;
        }
}

/* The selection of the n matches in v (takes v), in index order, for the order of q. */
static struct model_selection selection_make(const struct catalog_model_query *q, struct keyed *v,
                                             size_t n)
{
        struct model_selection s = {
                .v = v, .n = n, .always_has = true, .id_asc = q->order == CATALOG_ORDER_PROPERTY
        };

        switch (q->order) {
        case CATALOG_ORDER_NAME:
                s.is_str = true;
                /* the index is kept in NAME ASC order; DESC is the exact reverse */
                s.presorted = true;
                if (q->page.desc)
                        keyed_reverse(v, n);
                break;
        case CATALOG_ORDER_ACCURACY:
                s.always_has = false;
                break;
        case CATALOG_ORDER_PROPERTY:
                s.always_has = false;
                s.is_str = q->order_suffix == FILTERQ_SUFFIX_STRING;
                break;
        default:
                break;
        }
        return s;
}

/* Filters the snapshot's models (or the candidates c) for q and computes their sort keys. */
static int models_select_in(const struct catalog_index *idx, const struct catalog_model_query *q,
                            const struct candidates *c, struct model_selection *ret)
{
        AUTOFREE struct keyed *v = NULL;
        AUTOFREE char *needle = NULL;
        size_t n = 0, total = presorted_n(idx, c);
        int r;

        r = needle_lower(q->q, &needle);
        if (r < 0)
                return r;
        r = models_select_presorted(idx, q, needle, c, &v, &n);
        if (r < 0)
                return r;
        if (r > 0) {
                *ret = (struct model_selection){ .v = TAKE_PTR(v),
                                                 .n = n,
                                                 .is_str = q->order == CATALOG_ORDER_NAME,
                                                 .always_has = true,
                                                 .presorted = true };
                return 0;
        }
        v = calloc(total + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < total; i++) {
                struct catalog_model *m = &idx->models[c->active ? c->by_pos[i] : i];

                if (!model_selected(m, q, needle))
                        continue;
                r = filterq_eval(q->filter, model_match, m);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                v[n].item = m;
                model_sort_key(m, q, &v[n].key);
                n++;
        }
        *ret = selection_make(q, TAKE_PTR(v), n);
        return 0;
}

static int models_select(const struct catalog_index *idx, const struct catalog_model_query *q,
                         struct model_selection *ret)
{
        struct candidates c;
        int r = filter_candidates(idx, q->filter, &c);

        if (r < 0)
                return r;
        r = models_select_in(idx, q, &c, ret);
        free(c.owned);
        return r;
}

int catalog_index_list_models(const struct catalog_index *idx, const struct catalog_model_query *q,
                              json_t **ret, struct error_detail *reterr)
{
        struct model_selection sel;
        int r;

        r = models_select(idx, q, &sel);
        if (r < 0)
                return r;
        r = keyed_page(sel.v, sel.n, sel.presorted, sel.is_str, sel.always_has, sel.id_asc,
                       &q->page, model_item_json, ret, reterr);
        free(sel.v);
        return r;
}

int catalog_index_list_models_text(const struct catalog_index *idx,
                                   const struct catalog_model_query *q, struct buf *out,
                                   struct error_detail *reterr)
{
        struct model_selection sel;
        AUTOFREE char *next = NULL;
        size_t start, end;
        int r;

        r = models_select(idx, q, &sel);
        if (r < 0)
                return r;
        r = keyed_window(sel.v, sel.n, sel.presorted, sel.is_str, sel.always_has, sel.id_asc,
                         &q->page, &start, &end, &next, reterr);
        if (r >= 0)
                r = buf_puts(out, "{\"items\":[");
        for (size_t i = start; r >= 0 && i < end; i++) {
                const struct catalog_model *m = sel.v[i].item;

                if (i > start)
                        r = buf_putc(out, ',');
                if (r >= 0)
                        r = buf_append(out, m->wire_text, m->wire_len);
        }
        /* base64 tokens need no JSON escaping */
        if (r >= 0)
                r = buf_printf(out,
                               "],\"nextPageToken\":\"%s\",\"pageSize\":%" PRIu32 ",\"size\":%zu}",
                               next ? next : "", q->page.page_size, end - start);
        free(sel.v);
        return r;
}

static const struct catalog_model *find_model(const struct catalog_index *idx,
                                              const char *source_id, const char *name)
{
        struct catalog_posting p;

        /* names are unique within a source: one position */
        if (!catalog_postings_get(idx->postings, POST_KEY, source_id, name, &p) || p.n == 0)
                return NULL;
        return &idx->models[p.by_pos[0]];
}

int catalog_index_get_model(const struct catalog_index *idx, const char *source_id,
                            const char *name, json_t **ret)
{
        const struct catalog_model *m = find_model(idx, source_id, name);

        if (!m)
                return -ENOENT;
        *ret = json_loadb(m->wire_text, m->wire_len, 0, NULL);
        if (!*ret)
                return -ENOMEM;
        return 0;
}

int catalog_index_get_model_text(const struct catalog_index *idx, const char *source_id,
                                 const char *name, const char **ret_text, size_t *ret_len)
{
        const struct catalog_model *m = find_model(idx, source_id, name);

        if (!m)
                return -ENOENT;
        *ret_text = m->wire_text;
        *ret_len = m->wire_len;
        return 0;
}

static json_t *artifact_item_json(const void *item)
{
        return json_incref((json_t *)item);
}

/* upstream's recommendations paging: after the item with the token's id; no token = first page */
static int perf_recommended_page(struct keyed *v, size_t n, const struct catalog_page *page,
                                 json_t **ret)
{
        AUTOFREE char *plain = NULL, *next = NULL;
        json_auto_t *items = json_array();
        size_t start = 0, end;
        int32_t id;

        if (!items)
                return -ENOMEM;
        if (page->token && page->token[0] && strlen(page->token) <= CATALOG_TOKEN_MAX &&
            b64_decode(page->token, &plain) == 0) {
                char *colon = strchr(plain, ':');

                if (colon)
                        *colon = '\0';
                if (safe_atoi32(plain, &id) == 0) {
                        start = n;
                        for (size_t i = 0; i < n; i++)
                                if (v[i].key.id == id) {
                                        start = i + 1;
                                        break;
                                }
                }
        }
        end = n - start > page->page_size ? start + page->page_size : n;
        if (end < n) {
                AUTOFREE char *p2 = NULL;

                if (asprintf(&p2, "%" PRId64 ":", v[end - 1].key.id) < 0)
                        return -ENOMEM;
                next = base64_encode(p2, strlen(p2));
                if (!next)
                        return -ENOMEM;
        }
        for (size_t i = start; i < end; i++)
                if (json_array_append(items, (json_t *)v[i].item) < 0)
                        return -ENOMEM;
        *ret = list_json(TAKE_PTR(items), next, page->page_size);
        return *ret ? 0 : -ENOMEM;
}

/*
 * Replaces v[i].item by a private copy with the targetRPS properties, for each i; *ret_k is how
 * many copies were made (v[0..k) then each own one reference), also on failure.
 */
static int perf_copies(struct keyed *v, size_t n, const struct catalog_perf_params *p,
                       size_t *ret_k)
{
        int r = 0;

        *ret_k = 0;
        for (size_t i = 0; i < n && r >= 0; i++) {
                json_t *orig = (json_t *)v[i].item;
                json_t *c = json_copy(orig);
                json_t *custom = json_copy(json_object_get(orig, "customProperties"));

                if (!c || !custom || json_object_set_new(c, "customProperties", custom) < 0) {
                        json_decref(c);
                        json_decref(custom);
                        return -ENOMEM;
                }
                v[i].item = c;
                *ret_k = i + 1;
                r = catalog_perf_add_target_rps(c, p->target_rps, p->rps_property);
        }
        return r;
}

/* The recommendations page: v sorted, then the kept ones moved to the front and paged. */
static int perf_recommend_page(struct keyed *v, size_t n, json_t **arts, bool *keep,
                               const struct catalog_perf_params *p, struct sort_opts *opts,
                               const struct catalog_artifact_query *q, json_t **ret)
{
        size_t m = 0;
        int r;

        qsort_r(v, n, sizeof(*v), keyed_cmp, opts);
        for (size_t i = 0; i < n; i++)
                arts[i] = (json_t *)v[i].item;
        r = catalog_perf_recommend(arts, n, p, keep);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (keep[i]) {
                        struct keyed t = v[m];

                        v[m++] = v[i];
                        v[i] = t;
                }
        return perf_recommended_page(v, m, &q->page, ret);
}

/*
 * The performance endpoint's extras over the selected artifacts v[0..n): validation of the
 * property names, targetRPS properties on private copies, the recommendations filter.
 */
static int perf_page(struct keyed *v, size_t n, bool is_str, bool always_has, bool id_asc,
                     const struct catalog_artifact_query *q, json_t **ret,
                     struct error_detail *reterr)
{
        struct catalog_perf_params p = *q->perf;
        struct sort_opts opts = { .desc = q->page.desc, .id_asc = id_asc };
        AUTOFREE json_t **arts = calloc(n + 1, sizeof(json_t *));
        AUTOFREE bool *keep = calloc(n + 1, sizeof(*keep));
        size_t k = 0;
        int r;

        if (!arts || !keep)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                arts[i] = (json_t *)v[i].item;
        r = catalog_perf_validate(arts, n, &p, reterr);
        if (r < 0)
                return r;
        if (!catalog_perf_active(&p))
                return keyed_page(v, n, false, is_str, always_has, id_asc, &q->page,
                                  artifact_item_json, ret, reterr);
        if (p.recommendations && p.target_rps <= 0)
                p.target_rps = 1;
        /* private copies with the computed properties; v[i].item then owns one reference */
        r = perf_copies(v, n, &p, &k);
        if (r >= 0 && !p.recommendations)
                r = keyed_page(v, n, false, is_str, always_has, id_asc, &q->page,
                               artifact_item_json, ret, reterr);
        else if (r >= 0)
                r = perf_recommend_page(v, n, arts, keep, &p, &opts, q, ret);
        for (size_t i = 0; i < k; i++)
                json_decref((json_t *)v[i].item);
        return r;
}

/* An artifact list's order: a fixed one, or a custom property (owned) with its value suffix. */
struct artifact_order {
        enum catalog_order order;
        enum filterq_suffix suffix;
        char *prop;
};

/* "<property>.<double|int|string>_value" of orderBy: the suffix starts at dot. */
static int artifact_order_property(const char *order_by, const char *dot, struct artifact_order *o,
                                   struct error_detail *reterr)
{
        if (dot == order_by) {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid orderBy '%s': empty property name", order_by);
                return -EINVAL;
        }
        if (streq(dot, ".double_value"))
                o->suffix = FILTERQ_SUFFIX_DOUBLE;
        else if (streq(dot, ".int_value"))
                o->suffix = FILTERQ_SUFFIX_INT;
        else if (streq(dot, ".string_value"))
                o->suffix = FILTERQ_SUFFIX_STRING;
        else {
                (void)error_detail_set(reterr, ERROR_INVALID, -EINVAL,
                                       "invalid orderBy '%s': unsupported value type", order_by);
                return -EINVAL;
        }
        o->prop = strndup(order_by, (size_t)(dot - order_by));
        if (!o->prop)
                return -ENOMEM;
        o->order = CATALOG_ORDER_PROPERTY;
        return 0;
}

/* The order of an artifact list from orderBy (NULL or empty: ID). */
static int artifact_order_parse(const char *order_by, struct artifact_order *o,
                                struct error_detail *reterr)
{
        const char *dot;

        *o = (struct artifact_order){ .order = CATALOG_ORDER_ID, .suffix = FILTERQ_SUFFIX_NONE };
        if (!order_by || !order_by[0])
                return 0;
        /* artifacts have no ACCURACY order */
        if (fixed_order_find(order_by, ELEMENTSOF(fixed_orders) - 1, &o->order))
                return 0;
        dot = strrchr(order_by, '.');
        if (dot)
                return artifact_order_property(order_by, dot, o, reterr);
        /* anything else falls back to ID ordering (upstream behaviour) */
        return 0;
}

/* 1 when the artifact a is in the list q asks for, 0 when not, or a negative errno. */
static int artifact_selected(json_t *a, const struct catalog_artifact_query *q)
{
        const char *type = json_string_value(json_object_get(a, "artifactType"));

        if (q->artifact_types && !catalog_strv_contains(q->artifact_types, type))
                return 0;
        if (q->performance_only &&
            !streq(str_or(json_string_value(json_object_get(a, "metricsType")), ""),
                   "performance-metrics"))
                return 0;
        return filterq_eval(q->filter, artifact_match, a);
}

/* Fills the sort key k (zeroed) of the artifact a for the order o. */
static void artifact_sort_key(const json_t *a, const struct artifact_order *o, struct sort_key *k)
{
        (void)!safe_atoi64(json_string_value(json_object_get(a, "id")), &k->id);
        k->has = true;
        switch (o->order) {
        case CATALOG_ORDER_NAME:
                k->is_str = true;
                k->s = str_or(json_string_value(json_object_get(a, "name")), "");
                break;
        case CATALOG_ORDER_CREATE_TIME:
                k->num = (double)epoch_of(a, "createTimeSinceEpoch");
                break;
        case CATALOG_ORDER_LAST_UPDATE_TIME:
                k->num = (double)epoch_of(a, "lastUpdateTimeSinceEpoch");
                break;
        case CATALOG_ORDER_PROPERTY:
                k->has = false;
                property_key(json_object_get(a, o->prop), json_object_get(a, "customProperties"),
                             o->prop, o->suffix, k);
                k->is_str = o->suffix == FILTERQ_SUFFIX_STRING;
                break;
        default:
                k->num = (double)k->id;
                break;
        }
}

int catalog_index_list_artifacts(const struct catalog_index *idx, const char *source_id,
                                 const char *name, const struct catalog_artifact_query *q,
                                 json_t **ret, struct error_detail *reterr)
{
        const struct catalog_model *m = find_model(idx, source_id, name);
        struct artifact_order o = { 0 };
        AUTOFREE char *prop = NULL;
        json_auto_t *arts = NULL;
        AUTOFREE struct keyed *v = NULL;
        bool always_has, is_str, by_prop;
        size_t n = 0, i;
        json_t *a;
        int r;

        if (!m)
                return -ENOENT;
        r = artifact_order_parse(q->order_by, &o, reterr);
        prop = o.prop;
        if (r < 0)
                return r;
        by_prop = o.order == CATALOG_ORDER_PROPERTY;
        always_has = !by_prop;
        is_str = o.order == CATALOG_ORDER_NAME || (by_prop && o.suffix == FILTERQ_SUFFIX_STRING);
        arts = model_artifacts_json(m);
        v = calloc(json_array_size(arts) + 1, sizeof(*v));
        if (!arts || !v)
                return -ENOMEM;
        json_array_foreach(arts, i, a) {
                r = artifact_selected(a, q);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                v[n].item = a;
                artifact_sort_key(a, &o, &v[n].key);
                n++;
        }
        if (q->perf)
                return perf_page(v, n, is_str, always_has, by_prop, q, ret, reterr);
        return keyed_page(v, n, false, is_str, always_has, by_prop, &q->page, artifact_item_json,
                          ret, reterr);
}

/* ---- in-memory lists (sources, labels, preview) ---- */

int catalog_page_memory(char *const *values, char *const *ids, size_t n,
                        const struct catalog_page *page, size_t *ret_start, size_t *ret_end,
                        char **ret_next)
{
        size_t start = 0, end;
        char *next = NULL;

        if (page->token && page->token[0] && strlen(page->token) <= CATALOG_TOKEN_MAX) {
                AUTOFREE char *plain = NULL;
                int r = b64_decode(page->token, &plain);

                if (r == -ENOMEM)
                        return r;
                if (r >= 0) {
                        /* compare whole "<value>:<id>" strings: values and ids may contain ':' */
                        size_t len = strlen(plain);

                        for (size_t i = 0; i < n; i++) {
                                size_t lv = strlen(values[i]);

                                if (lv + 1 + strlen(ids[i]) == len &&
                                    strneq(plain, values[i], lv) && plain[lv] == ':' &&
                                    streq(plain + lv + 1, ids[i])) {
                                        start = i + 1;
                                        break;
                                }
                        }
                }
        }
        end = n - start > page->page_size ? start + page->page_size : n;
        if (end < n && end > start) {
                next = catalog_token_encode(values[end - 1], ids[end - 1]);
                if (!next)
                        return -ENOMEM;
        }
        *ret_start = start;
        *ret_end = end;
        *ret_next = next;
        return 0;
}

static json_t *source_json(const struct catalog_index *idx, size_t i)
{
        const struct catalog_source_config *s = &idx->config.sources[i];
        const struct index_source *st = &idx->sources[i];
        json_t *o;

        o = json_pack("{s:s, s:s, s:b, s:o, s:s, s:o, s:s}", "id", s->id, "name",
                      s->name ? s->name : s->id, "enabled", s->enabled > 0, "labels",
                      catalog_strv_to_json(s->labels), "status",
                      catalog_source_state_to_string(st->state), "error",
                      st->error ? json_string(st->error) : json_null(), "assetType",
                      s->is_mcp ? "mcp_servers" : (s->asset_type ? s->asset_type : "models"));
        if (!o)
                return NULL;
        if (s->included && json_object_set_new(o, s->is_mcp ? "includedServers" : "includedModels",
                                               catalog_strv_to_json(s->included)) < 0)
                return json_decref(o), NULL;
        if (s->excluded && json_object_set_new(o, s->is_mcp ? "excludedServers" : "excludedModels",
                                               catalog_strv_to_json(s->excluded)) < 0)
                return json_decref(o), NULL;
        return o;
}

struct source_sort {
        const struct catalog_source_config *s;
        size_t pos;
        bool by_name;
};

static int source_sort_cmp(const void *pa, const void *pb)
{
        const struct source_sort *a = pa, *b = pb;
        int c = 0;

        if (a->by_name)
                c = strcmp(a->s->name ? a->s->name : a->s->id, b->s->name ? b->s->name : b->s->id);
        if (c == 0)
                c = strcmp(a->s->id, b->s->id);
        return c;
}

int catalog_index_list_sources(const struct catalog_index *idx,
                               const struct catalog_source_query *q, json_t **ret)
{
        size_t n_all = idx->config.n_sources, n = 0, start, end;
        AUTOFREE struct source_sort *v = calloc(n_all + 1, sizeof(*v));
        AUTOFREE char **values = calloc(n_all + 1, sizeof(char *));
        AUTOFREE char **ids = calloc(n_all + 1, sizeof(char *));
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        bool mcp;
        int r;

        if (!v || !values || !ids || !items)
                return -ENOMEM;
        mcp = q->asset_type && streq(q->asset_type, "mcp_servers");
        if (!q->asset_type || streq(q->asset_type, "models") || mcp)
                for (size_t i = 0; i < n_all; i++) {
                        const struct catalog_source_config *s = &idx->config.sources[i];
                        const char *display = s->name ? s->name : s->id;

                        if (s->is_mcp != mcp)
                                continue;
                        if (q->name && q->name[0] && !strcasestr(display, q->name))
                                continue;
                        v[n++] = (struct source_sort){ .s = s,
                                                       .pos = i,
                                                       .by_name = q->order_by_name };
                }
        qsort(v, n, sizeof(*v), source_sort_cmp);
        if (q->page.desc)
                for (size_t i = 0; i < n / 2; i++) {
                        struct source_sort t = v[i];

                        v[i] = v[n - 1 - i];
                        v[n - 1 - i] = t;
                }
        for (size_t i = 0; i < n; i++) {
                values[i] = q->order_by_name ? (v[i].s->name ? v[i].s->name : v[i].s->id)
                                             : v[i].s->id;
                ids[i] = v[i].s->id;
        }
        r = catalog_page_memory(values, ids, n, &q->page, &start, &end, &next);
        if (r < 0)
                return r;
        for (size_t i = start; i < end; i++)
                if (json_array_append_new(items, source_json(idx, v[i].pos)) < 0)
                        return -ENOMEM;
        *ret = list_json(TAKE_PTR(items), next, q->page.page_size);
        return *ret ? 0 : -ENOMEM;
}

struct label_sort {
        json_t *label;
        size_t pos;
        const char *value; /* NULL when the label lacks the key */
};

static int label_sort_cmp(const void *pa, const void *pb)
{
        const struct label_sort *a = pa, *b = pb;
        int c;

        if (!a->value != !b->value)
                return a->value ? -1 : 1;
        if (a->value) {
                c = strcmp(a->value, b->value);
                if (c != 0)
                        return c;
        }
        return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* The labels of asset type want into v, in config order, with their order_by value: the count. */
static size_t labels_collect(const struct catalog_index *idx, const char *want,
                             const char *order_by, struct label_sort *v)
{
        size_t n = 0, i;
        json_t *l;

        json_array_foreach(idx->config.labels, i, l) {
                const char *at = str_or(json_string_value(json_object_get(l, "assetType")),
                                        "models");

                if (!streq(at, want))
                        continue;
                v[n].label = l;
                v[n].pos = i;
                if (order_by) {
                        json_t *val = json_object_get(l, order_by);

                        v[n].value = json_is_string(val) ? json_string_value(val) : NULL;
                }
                n++;
        }
        return n;
}

/* Sorts v by order_by (NULL: config order); DESC reverses the labels that have the key. */
static void labels_order(struct label_sort *v, size_t n, const char *order_by, bool desc)
{
        size_t k = 0;

        if (order_by)
                qsort(v, n, sizeof(*v), label_sort_cmp);
        if (!desc)
                return;
        /* the others keep config order */
        while (k < n && v[k].value)
                k++;
        if (!order_by)
                k = n;
        for (size_t j = 0; j < k / 2; j++) {
                struct label_sort t = v[j];

                v[j] = v[k - 1 - j];
                v[k - 1 - j] = t;
        }
}

int catalog_index_list_labels(const struct catalog_index *idx, const struct catalog_label_query *q,
                              json_t **ret)
{
        size_t n_all = json_array_size(idx->config.labels), n, start, end;
        AUTOFREE struct label_sort *v = calloc(n_all + 1, sizeof(*v));
        AUTOFREE char **values = calloc(n_all + 1, sizeof(char *));
        AUTOFREE char **ids = calloc(n_all + 1, sizeof(char *));
        AUTOFREE char *idbuf = calloc(n_all + 1, 24);
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        const char *order_by = q->order_by && q->order_by[0] ? q->order_by : NULL;
        int r;

        if (!v || !values || !ids || !idbuf || !items)
                return -ENOMEM;
        n = labels_collect(idx, q->asset_type ? q->asset_type : "models", order_by, v);
        labels_order(v, n, order_by, q->page.desc);
        for (size_t j = 0; j < n; j++) {
                snprintf(idbuf + j * 24, 24, "%zu", v[j].pos);
                ids[j] = idbuf + j * 24;
                values[j] = (char *)(v[j].value ? v[j].value : "");
        }
        r = catalog_page_memory(values, ids, n, &q->page, &start, &end, &next);
        if (r < 0)
                return r;
        for (size_t j = start; j < end; j++)
                if (json_array_append(items, v[j].label) < 0)
                        return -ENOMEM;
        *ret = list_json(TAKE_PTR(items), next, q->page.page_size);
        return *ret ? 0 : -ENOMEM;
}

/* ---- MCP servers ---- */

static const json_t *json_walk(const json_t *o, const char *path)
{
        char seg[256];

        while (o && *path) {
                size_t len = strcspn(path, ".");

                if (len >= sizeof(seg))
                        return NULL;
                memcpy(seg, path, len);
                seg[len] = '\0';
                o = json_object_get(o, seg);
                path += len;
                if (*path == '.')
                        path++;
        }
        return o;
}

static int mcp_match(void *ud, const struct filterq_cmp *cmp)
{
        const json_t *s = ud;
        const char *p = cmp->property;
        const json_t *v = json_object_get(s, p);

        if (!v && strchr(p, '.'))
                v = json_walk(s, p);
        if (!v)
                v = json_object_get(json_object_get(s, "securityIndicators"), p);
        if (v && !json_is_object(v))
                return match_json_any(cmp, v);
        return filterq_match_metadata(cmp,
                                      json_object_get(json_object_get(s, "customProperties"), p));
}

static int tool_match(void *ud, const struct filterq_cmp *cmp)
{
        return match_json_any(cmp, json_object_get(ud, cmp->property));
}

static bool mcp_in_labels(const struct catalog_index *idx, const json_t *s, char **labels)
{
        const struct catalog_source_config *src;
        struct catalog_model m = { 0 };

        if (!labels)
                return true;
        src = catalog_config_find(&idx->config, json_string_value(json_object_get(s, "source_id")));
        if (!src)
                return false;
        m.src = src;
        return model_in_labels(&m, labels);
}

static json_t *mcp_item_json(const void *item)
{
        return json_incref((json_t *)item);
}

/* A copy of server s shaped for output: tools dropped or cut to tool_limit. */
static json_t *mcp_shape(const json_t *s, bool include_tools, uint32_t tool_limit)
{
        json_t *c = json_copy((json_t *)s), *tools;

        if (!c)
                return NULL;
        if (!include_tools) {
                json_object_del(c, "tools");
                return c;
        }
        tools = json_object_get(s, "tools");
        if (json_array_size(tools) > tool_limit) {
                json_t *cut = json_array();

                for (size_t i = 0; cut && i < tool_limit; i++)
                        if (json_array_append(cut, json_array_get(tools, i)) < 0) {
                                json_decref(cut);
                                cut = NULL;
                        }
                if (!cut || json_object_set_new(c, "tools", cut) < 0) {
                        json_decref(c);
                        return NULL;
                }
        }
        return c;
}

int catalog_index_list_mcp(const struct catalog_index *idx, const struct catalog_mcp_query *q,
                           json_t **ret, struct error_detail *reterr)
{
        size_t n_all = json_array_size(idx->mcp), n = 0, i;
        AUTOFREE struct keyed *v = calloc(n_all + 1, sizeof(*v));
        json_auto_t *out = NULL;
        json_t *s, *items;
        bool is_str = q->order == CATALOG_ORDER_NAME;
        int r;

        if (!v)
                return -ENOMEM;
        json_array_foreach(idx->mcp, i, s) {
                const char *name = json_string_value(json_object_get(s, "name"));
                struct sort_key *k = &v[n].key;

                if (q->name && q->name[0] && !filterq_like(q->name, name, false))
                        continue;
                if (q->q && q->q[0] && !strcasestr(name, q->q) &&
                    !strcasestr(str_or(json_string_value(json_object_get(s, "description")), ""),
                                q->q) &&
                    !strcasestr(str_or(json_string_value(json_object_get(s, "provider")), ""),
                                q->q))
                        continue;
                if (!mcp_in_labels(idx, s, q->source_labels))
                        continue;
                if (filterq_eval(q->filter, mcp_match, s) <= 0)
                        continue;
                v[n].item = s;
                (void)!safe_atoi64(json_string_value(json_object_get(s, "id")), &k->id);
                k->has = true;
                switch (q->order) {
                case CATALOG_ORDER_NAME:
                        k->is_str = true;
                        k->s = name;
                        break;
                case CATALOG_ORDER_CREATE_TIME:
                        k->num = (double)epoch_of(s, "createTimeSinceEpoch");
                        break;
                case CATALOG_ORDER_LAST_UPDATE_TIME:
                        k->num = (double)epoch_of(s, "lastUpdateTimeSinceEpoch");
                        break;
                default:
                        k->num = (double)k->id;
                        break;
                }
                n++;
        }
        r = keyed_page(v, n, false, is_str, true, false, &q->page, mcp_item_json, &out, reterr);
        if (r < 0)
                return r;
        items = json_object_get(out, "items");
        json_array_foreach(items, i, s)
                if (json_array_set_new(items, i, mcp_shape(s, q->include_tools, q->tool_limit)) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}

static const json_t *mcp_find(const struct catalog_index *idx, const char *id)
{
        size_t i;
        json_t *s;

        json_array_foreach(idx->mcp, i, s)
                if (streq(json_string_value(json_object_get(s, "id")), id))
                        return s;
        return NULL;
}

int catalog_index_get_mcp(const struct catalog_index *idx, const char *id, bool include_tools,
                          uint32_t tool_limit, json_t **ret)
{
        const json_t *s = mcp_find(idx, id);

        if (!s)
                return -ENOENT;
        *ret = mcp_shape(s, include_tools, tool_limit);
        return *ret ? 0 : -ENOMEM;
}

int catalog_index_list_mcp_tools(const struct catalog_index *idx, const char *id,
                                 const struct catalog_page *page, const struct filterq_node *filter,
                                 json_t **ret)
{
        const json_t *s = mcp_find(idx, id);
        json_t *tools = json_object_get(s, "tools"), *t;
        size_t n_all = json_array_size(tools), n = 0, start, end, i;
        AUTOFREE char **names = calloc(n_all + 1, sizeof(char *));
        AUTOFREE json_t **sel = calloc(n_all + 1, sizeof(json_t *));
        AUTOFREE char *next = NULL;
        json_auto_t *items = json_array();
        int r;

        if (!s)
                return -ENOENT;
        if (!names || !sel || !items)
                return -ENOMEM;
        json_array_foreach(tools, i, t) {
                const char *nm = json_string_value(json_object_get(t, "name"));

                if (!nm || filterq_eval(filter, tool_match, t) <= 0)
                        continue;
                names[n] = (char *)nm;
                sel[n++] = t;
        }
        r = catalog_page_memory(names, names, n, page, &start, &end, &next);
        if (r < 0)
                return r;
        for (i = start; i < end; i++)
                if (json_array_append(items, sel[i]) < 0)
                        return -ENOMEM;
        *ret = list_json(TAKE_PTR(items), next, page->page_size);
        return *ret ? 0 : -ENOMEM;
}

int catalog_index_get_mcp_tool(const struct catalog_index *idx, const char *id, const char *tool,
                               json_t **ret)
{
        const json_t *s = mcp_find(idx, id);
        size_t i;
        json_t *t;

        if (!s)
                return -ENOENT;
        json_array_foreach(json_object_get(s, "tools"), i, t)
                if (streq(str_or(json_string_value(json_object_get(t, "name")), ""), tool)) {
                        *ret = json_pack("{s:O, s:O, s:O}", "serverId", json_object_get(s, "id"),
                                         "serverName", json_object_get(s, "name"), "tool", t);
                        return *ret ? 0 : -ENOMEM;
                }
        return -ENOENT;
}
