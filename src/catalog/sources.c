/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/sources.h"

#include <stdio.h>
#include <string.h>

#include "catalog/glob.h"
#include "catalog/limits.h"
#include "util/file-util.h"

static const char *const asset_type_names[CATALOG_ASSET__MAX] = {
        [CATALOG_ASSET_MODELS] = "models",
        [CATALOG_ASSET_MCP_SERVERS] = "mcp_servers",
};

const char *catalog_asset_type_to_string(enum catalog_asset_type t)
{
        if ((int)t < 0 || t >= CATALOG_ASSET__MAX)
                return NULL;
        return asset_type_names[t];
}

enum catalog_asset_type catalog_asset_type_from_string(const char *s)
{
        if (s)
                for (int i = 0; i < CATALOG_ASSET__MAX; i++)
                        if (streq(asset_type_names[i], s))
                                return (enum catalog_asset_type)i;
        return CATALOG_ASSET__INVALID;
}

void catalog_source_config_release(struct catalog_source_config *s)
{
        free(s->id);
        free(s->name);
        free(s->type);
        catalog_strv_free(s->labels);
        catalog_strv_free(s->included);
        catalog_strv_free(s->excluded);
        free(s->asset_type);
        json_decref(s->properties);
        free(s->base_dir);
        *s = (struct catalog_source_config){ .enabled = -1 };
}

void catalog_config_release(struct catalog_config *c)
{
        for (size_t i = 0; i < c->n_sources; i++)
                catalog_source_config_release(&c->sources[i]);
        free(c->sources);
        json_decref(c->labels);
        json_decref(c->named_queries);
        *c = (struct catalog_config){ 0 };
}

const struct catalog_source_config *catalog_config_find(const struct catalog_config *c,
                                                        const char *id)
{
        for (size_t i = 0; i < c->n_sources; i++)
                if (streq(c->sources[i].id, id))
                        return &c->sources[i];
        return NULL;
}

static struct catalog_source_config *config_find_mut(struct catalog_config *c, const char *id)
{
        return (struct catalog_source_config *)catalog_config_find(c, id);
}

static int config_add_source(struct catalog_config *c, struct catalog_source_config **ret)
{
        struct catalog_source_config *n;

        if (c->n_sources >= CATALOG_SOURCES_MAX)
                return -E2BIG;
        n = reallocarray(c->sources, c->n_sources + 1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        c->sources = n;
        n[c->n_sources] = (struct catalog_source_config){ .enabled = -1 };
        *ret = &n[c->n_sources++];
        return 0;
}

static int field_properties(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        if (!ynode_is_null(n) && n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "properties must be a mapping");
                return -EINVAL;
        }
        return ydoc_field_json(d, n, ret, err);
}

#define SOURCE_FIELD(key, fn, member)                                   \
        {                                                               \
                key, fn, offsetof(struct catalog_source_config, member) \
        }

/* The fields of a model or an MCP source; only the names of the two pattern lists differ. */
#define SOURCE_FIELDS(included_key, excluded_key)                                                 \
        SOURCE_FIELD("id", ydoc_field_string, id), SOURCE_FIELD("name", ydoc_field_string, name), \
                SOURCE_FIELD("type", ydoc_field_string, type),                                    \
                SOURCE_FIELD("enabled", ydoc_field_tristate, enabled),                            \
                SOURCE_FIELD("labels", catalog_field_strv, labels),                               \
                SOURCE_FIELD(included_key, catalog_field_strv, included),                         \
                SOURCE_FIELD(excluded_key, catalog_field_strv, excluded),                         \
                SOURCE_FIELD("assetType", ydoc_field_string, asset_type),                         \
                SOURCE_FIELD("properties", field_properties, properties),                         \
        {                                                                                         \
                NULL, NULL, 0                                                                     \
        }

static const struct yfield model_source_fields[] = {
        SOURCE_FIELDS("includedModels", "excludedModels"),
};

static const struct yfield mcp_source_fields[] = {
        SOURCE_FIELDS("includedServers", "excludedServers"),
};

static int validate_patterns(struct ydoc *d, unsigned line, const struct catalog_source_config *s,
                             struct error_detail *err)
{
        for (char **p = s->included; p && *p; p++) {
                if (catalog_glob_validate(*p) < 0) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "source '%s': empty or whitespace-only pattern",
                                            s->id ? s->id : "");
                        return -EINVAL;
                }
                if (catalog_strv_contains(s->excluded, *p)) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "source '%s': pattern '%s' is both included and "
                                            "excluded",
                                            s->id ? s->id : "", *p);
                        return -EINVAL;
                }
        }
        for (char **p = s->excluded; p && *p; p++)
                if (catalog_glob_validate(*p) < 0) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "source '%s': empty or whitespace-only pattern",
                                            s->id ? s->id : "");
                        return -EINVAL;
                }
        return 0;
}

/*
 * The directory part of file, as POSIX dirname(3) computes it ("." without a slash, "/" for
 * the root, trailing slashes dropped), without dirname's static buffer or its in-place edit.
 */
static int dir_of(const char *file, char **ret)
{
        size_t len = strlen(file);
        char *d;

        while (len > 1 && file[len - 1] == '/')
                len--; /* "a/b/" is "a/b" */
        while (len > 0 && file[len - 1] != '/')
                len--; /* drop the last component */
        while (len > 1 && file[len - 1] == '/')
                len--; /* and the slashes before it, but keep a lone "/" */
        d = len == 0 ? strdup(".") : strndup(file, len);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

/* Parses one entry of model_catalogs/catalogs/mcp_catalogs into a fresh struct. */
static int parse_source(struct ydoc *d, yaml_node_t *n, bool mcp, struct catalog_source_config *s,
                        struct error_detail *err)
{
        unsigned line = ynode_line(n);
        int r;

        if (n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "a catalog source must be a mapping");
                return -EINVAL;
        }
        s->is_mcp = mcp;
        r = ydoc_dispatch(d, n, mcp ? mcp_source_fields : model_source_fields, s, err);
        if (r < 0)
                return r;
        if (!s->id || s->id[0] == '\0') {
                error_detail_set_at(err, -EINVAL, d->file, line, "catalog source without id");
                return -EINVAL;
        }
        if (s->asset_type && catalog_asset_type_from_string(s->asset_type) < 0) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "source '%s': invalid assetType '%s'", s->id, s->asset_type);
                return -EINVAL;
        }
        if (s->properties) {
                json_t *p = json_object_get(s->properties, "yamlCatalogPath");

                if (p && !json_is_string(p)) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "source '%s': yamlCatalogPath must be a string", s->id);
                        return -EINVAL;
                }
                r = dir_of(d->file, &s->base_dir);
                if (r < 0)
                        return r;
        }
        return validate_patterns(d, line, s, err);
}

static int parse_source_list(struct ydoc *d, yaml_node_t *n, bool mcp, bool legacy,
                             struct catalog_config *c, struct error_detail *err)
{
        int r;

        if (ynode_is_null(n))
                return 0;
        if (n->type != YAML_SEQUENCE_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "expected a list of sources");
                return -EINVAL;
        }
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
                yaml_node_t *item = ydoc_node(d, *it);
                struct catalog_source_config s = { .enabled = -1 }, *dst, *existing;

                r = parse_source(d, item, mcp, &s, err);
                if (r < 0) {
                        catalog_source_config_release(&s);
                        return r;
                }
                existing = config_find_mut(c, s.id);
                if (existing) {
                        /* legacy `catalogs` merges under model_catalogs, which wins */
                        if (legacy && !existing->is_mcp) {
                                catalog_source_config_release(&s);
                                continue;
                        }
                        if (existing->is_mcp != mcp)
                                error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                                    "source id '%s' is in both model_catalogs and "
                                                    "mcp_catalogs",
                                                    s.id);
                        else
                                error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                                    "duplicate source id '%s'", s.id);
                        catalog_source_config_release(&s);
                        return -EINVAL;
                }
                r = config_add_source(c, &dst);
                if (r < 0) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                            "too many sources (limit %u)", CATALOG_SOURCES_MAX);
                        catalog_source_config_release(&s);
                        return r;
                }
                *dst = s;
        }
        return 0;
}

/*
 * The top-level field key as JSON into *ret: a list (YAML_SEQUENCE_NODE) or a mapping of at most
 * max items (what names them in the error). *ret stays NULL when the value is null.
 */
static int bounded_json(struct ydoc *d, yaml_node_t *n, yaml_node_type_t type, const char *key,
                        const char *what, size_t max, json_t **ret, struct error_detail *err)
{
        json_auto_t *v = NULL;
        bool list = type == YAML_SEQUENCE_NODE;
        int r;

        if (ynode_is_null(n))
                return 0;
        if (n->type != type) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n), "%s must be %s", key,
                                    list ? "a list" : "a mapping");
                return -EINVAL;
        }
        r = ydoc_to_json(d, n, &v, err);
        if (r < 0)
                return r;
        if ((list ? json_array_size(v) : json_object_size(v)) > max) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(n), "too many %s", what);
                return -E2BIG;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

static int parse_labels(struct ydoc *d, yaml_node_t *n, struct catalog_config *c,
                        struct error_detail *err)
{
        json_auto_t *v = NULL;
        size_t i;
        json_t *l;
        int r;

        r = bounded_json(d, n, YAML_SEQUENCE_NODE, "labels", "labels", CATALOG_LABELS_MAX, &v, err);
        if (r < 0 || !v)
                return r;
        json_array_foreach(v, i, l) {
                yaml_node_t *item = ydoc_node(d, n->data.sequence.items.start[i]);
                const char *k;
                json_t *val;

                if (!json_is_object(l)) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                            "a label must be a mapping");
                        return -EINVAL;
                }
                val = json_object_get(l, "name");
                if (!val || !(json_is_string(val) || json_is_null(val))) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                            "a label needs a name (a string or null)");
                        return -EINVAL;
                }
                json_object_foreach(l, k, val) {
                        if (streq(k, "name"))
                                continue;
                        if (!json_is_string(val)) {
                                error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                                    "label value '%s' must be a string", k);
                                return -EINVAL;
                        }
                }
        }
        c->labels = TAKE_PTR(v);
        return 0;
}

static bool filter_operator_valid(const char *op)
{
        static const char *const ops[] = { "=", "!=", "<>",   ">",     ">=",
                                           "<", "<=", "LIKE", "ILIKE", "IN" };

        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (strcasecmp(op, ops[i]) == 0)
                        return true;
        return false;
}

/* Validates {field: {operator, value}} and returns it normalised (operator upper-cased). */
static int check_filters(struct ydoc *d, unsigned line, const char *qname, json_t *filters,
                         struct error_detail *err)
{
        const char *field;
        json_t *f;

        if (!json_is_object(filters) || json_object_size(filters) == 0) {
                error_detail_set_at(err, -EINVAL, d->file, line, "named query '%s' has no filters",
                                    qname);
                return -EINVAL;
        }
        json_object_foreach(filters, field, f) {
                json_t *op = json_object_get(f, "operator");
                json_t *val = json_object_get(f, "value");

                if (!json_is_object(f) || json_object_size(f) != 2 || !json_is_string(op) || !val ||
                    json_is_object(val) || json_is_null(val)) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "named query '%s': field '%s' needs exactly operator "
                                            "and value",
                                            qname, field);
                        return -EINVAL;
                }
                if (!filter_operator_valid(json_string_value(op))) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "named query '%s': invalid operator '%s'", qname,
                                            json_string_value(op));
                        return -EINVAL;
                }
                if (json_is_array(val) != (strcasecmp(json_string_value(op), "IN") == 0)) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "named query '%s': operator IN needs a list value "
                                            "and a list value needs IN",
                                            qname);
                        return -EINVAL;
                }
        }
        return 0;
}

/* The line of key in mapping n (for messages about values already converted to JSON). */
static unsigned line_of_key(struct ydoc *d, yaml_node_t *n, const char *key)
{
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *s = ynode_scalar(k);

                if (s && streq(s, key))
                        return ynode_line(k);
        }
        return ynode_line(n);
}

/*
 * The assetType of a structured named query ({assetType, filters}): "models" when absent;
 * -EINVAL with err for another key or an unknown asset type.
 */
static int named_query_asset_type(struct ydoc *d, unsigned line, const char *qname, const json_t *q,
                                  const char **ret, struct error_detail *err)
{
        const json_t *asset = json_object_get(q, "assetType");

        if (json_object_size(q) != (asset ? 2U : 1U)) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "named query '%s': unknown key (expected assetType, filters)",
                                    qname);
                return -EINVAL;
        }
        if (!asset) {
                *ret = "models";
                return 0;
        }
        if (!json_is_string(asset) ||
            catalog_asset_type_from_string(json_string_value(asset)) < 0) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "named query '%s': invalid assetType", qname);
                return -EINVAL;
        }
        *ret = json_string_value(asset);
        return 0;
}

/*
 * One named query, structured ({assetType, filters}) or the short form ({field: {operator,
 * value}}, models), added to out as {assetType, filters}.
 */
static int parse_named_query(struct ydoc *d, unsigned line, const char *qname, json_t *q,
                             json_t *out, struct error_detail *err)
{
        json_t *filters = json_object_get(q, "filters");
        const char *at = "models";
        int r;

        if (!json_is_object(q)) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "named query '%s' must be a mapping", qname);
                return -EINVAL;
        }
        if (filters) {
                r = named_query_asset_type(d, line, qname, q, &at, err);
                if (r < 0)
                        return r;
        } else
                filters = q;
        r = check_filters(d, line, qname, filters, err);
        if (r < 0)
                return r;
        if (json_object_set_new(out, qname,
                                json_pack("{s:s, s:O}", "assetType", at, "filters", filters)) < 0)
                return -ENOMEM;
        return 0;
}

static int parse_named_queries(struct ydoc *d, yaml_node_t *n, struct catalog_config *c,
                               struct error_detail *err)
{
        json_auto_t *v = NULL, *out = NULL;
        const char *qname;
        json_t *q;
        int r;

        r = bounded_json(d, n, YAML_MAPPING_NODE, "namedQueries", "named queries",
                         CATALOG_NAMED_QUERIES_MAX, &v, err);
        if (r < 0 || !v)
                return r;
        out = json_object();
        if (!out)
                return -ENOMEM;
        json_object_foreach(v, qname, q) {
                r = parse_named_query(d, line_of_key(d, n, qname), qname, q, out, err);
                if (r < 0)
                        return r;
        }
        c->named_queries = TAKE_PTR(out);
        return 0;
}

/* The top-level keys of a sources file, in the order their values are parsed. */
enum top_key {
        TOP_MODEL_CATALOGS,
        TOP_CATALOGS, /* the legacy name of model_catalogs */
        TOP_MCP_CATALOGS,
        TOP_LABELS,
        TOP_NAMED_QUERIES,
        TOP__MAX,
};

static const char *const top_key_names[TOP__MAX] = {
        [TOP_MODEL_CATALOGS] = "model_catalogs", [TOP_CATALOGS] = "catalogs",
        [TOP_MCP_CATALOGS] = "mcp_catalogs",     [TOP_LABELS] = "labels",
        [TOP_NAMED_QUERIES] = "namedQueries",
};

/* Sorts the root mapping's values by key into values[]; -EINVAL for an unknown or repeated key. */
static int collect_top_level(struct ydoc *d, yaml_node_t *root, yaml_node_t *values[TOP__MAX],
                             struct error_detail *err)
{
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *key = ynode_scalar(k);
                size_t t = 0;

                if (!key) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "mapping keys must be scalars");
                        return -EINVAL;
                }
                while (t < TOP__MAX && !streq(key, top_key_names[t]))
                        t++;
                if (t == TOP__MAX) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "unknown key '%s'", key);
                        return -EINVAL;
                }
                if (values[t]) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "duplicate key '%s'", key);
                        return -EINVAL;
                }
                values[t] = ydoc_node(d, p->value);
        }
        return 0;
}

static int parse_top_value(struct ydoc *d, enum top_key t, yaml_node_t *v, struct catalog_config *c,
                           struct error_detail *err)
{
        switch (t) {
        case TOP_MODEL_CATALOGS:
                return parse_source_list(d, v, false, false, c, err);
        case TOP_CATALOGS:
                return parse_source_list(d, v, false, true, c, err);
        case TOP_MCP_CATALOGS:
                return parse_source_list(d, v, true, false, c, err);
        case TOP_LABELS:
                return parse_labels(d, v, c, err);
        case TOP_NAMED_QUERIES:
                return parse_named_queries(d, v, c, err);
        case TOP__MAX:
                break;
        }
        return -EINVAL;
}

static int parse_document(struct ydoc *d, struct catalog_config *c, struct error_detail *err)
{
        yaml_node_t *root, *values[TOP__MAX] = { 0 };
        int r;

        r = ydoc_root_mapping(d, "the sources file", &root, err);
        if (r < 0 || !root)
                return r;
        r = collect_top_level(d, root, values, err);
        if (r < 0)
                return r;
        for (enum top_key t = 0; t < TOP__MAX; t++) {
                if (!values[t])
                        continue;
                r = parse_top_value(d, t, values[t], c, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int catalog_config_parse(const char *file, const char *data, size_t len, struct catalog_config *ret,
                         struct error_detail *err)
{
        struct catalog_config c = { 0 };
        struct ydoc d;
        int r;

        r = ydoc_load(&d, file, data, len, &catalog_yaml_limits, err);
        if (r < 0)
                return r;
        r = parse_document(&d, &c, err);
        ydoc_release(&d);
        if (r < 0) {
                catalog_config_release(&c);
                return r;
        }
        *ret = c;
        return 0;
}

int catalog_config_load_file(const char *path, struct catalog_config *ret, struct error_detail *err)
{
        AUTOFREE char *data = NULL;
        size_t len;
        int r;

        r = catalog_read_file_reported(path, (size_t)CATALOG_FILE_MAX, &data, &len, err);
        if (r < 0)
                return r;
        return catalog_config_parse(path, data, len, ret, err);
}

static int replace_str(char **dst, const char *src)
{
        char *s;

        if (!src)
                return 0;
        s = strdup(src);
        if (!s)
                return -ENOMEM;
        free(*dst);
        *dst = s;
        return 0;
}

static int replace_strv(char ***dst, char *const *src)
{
        char **v = NULL;
        int r;

        if (!src)
                return 0;
        r = catalog_strv_copy(src, &v);
        if (r < 0)
                return r;
        catalog_strv_free(*dst);
        *dst = v;
        return 0;
}

static int merge_source(struct catalog_source_config *dst, const struct catalog_source_config *src)
{
        int r;

        if ((r = replace_str(&dst->name, src->name)) < 0 ||
            (r = replace_str(&dst->type, src->type)) < 0 ||
            (r = replace_strv(&dst->labels, src->labels)) < 0 ||
            (r = replace_strv(&dst->included, src->included)) < 0 ||
            (r = replace_strv(&dst->excluded, src->excluded)) < 0)
                return r;
        if (src->enabled >= 0)
                dst->enabled = src->enabled;
        if (!dst->asset_type || dst->is_mcp) {
                r = replace_str(&dst->asset_type, src->asset_type);
                if (r < 0)
                        return r;
        }
        if (src->properties) {
                r = replace_str(&dst->base_dir, src->base_dir);
                if (r < 0)
                        return r;
                json_decref(dst->properties);
                dst->properties = json_deep_copy(src->properties);
                if (!dst->properties)
                        return -ENOMEM;
        }
        return 0;
}

/* The source of dst with s's id, added (id and kind only) when dst has none. */
static int merge_target(struct catalog_config *dst, const struct catalog_source_config *s,
                        struct catalog_source_config **ret, struct error_detail *err)
{
        struct catalog_source_config *t = config_find_mut(dst, s->id);
        int r;

        if (t && t->is_mcp != s->is_mcp) {
                error_detail_set_at(err, -EINVAL, NULL, 0,
                                    "source id '%s' is both a model and an MCP source", s->id);
                return -EINVAL;
        }
        if (!t) {
                r = config_add_source(dst, &t);
                if (r < 0) {
                        error_detail_set_at(err, -EINVAL, NULL, 0, "too many sources (limit %u)",
                                            CATALOG_SOURCES_MAX);
                        return r;
                }
                t->id = strdup(s->id);
                if (!t->id)
                        return -ENOMEM;
                t->is_mcp = s->is_mcp;
        }
        *ret = t;
        return 0;
}

/* -EINVAL with err when a pattern of the merged source is both included and excluded. */
static int check_include_exclude(const struct catalog_source_config *t, struct error_detail *err)
{
        if (!t->included || !t->excluded)
                return 0;
        for (char **p = t->included; *p; p++)
                if (catalog_strv_contains(t->excluded, *p)) {
                        error_detail_set_at(
                                err, -EINVAL, NULL, 0,
                                "source '%s': pattern '%s' is both included and excluded", t->id,
                                *p);
                        return -EINVAL;
                }
        return 0;
}

static int merge_sources(struct catalog_config *dst, const struct catalog_config *src,
                         struct error_detail *err)
{
        for (size_t i = 0; i < src->n_sources; i++) {
                struct catalog_source_config *t;
                int r;

                r = merge_target(dst, &src->sources[i], &t, err);
                if (r < 0)
                        return r;
                r = merge_source(t, &src->sources[i]);
                if (r < 0)
                        return r;
                r = check_include_exclude(t, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Labels of src replace those of dst with the same name, the others are appended. */
static int merge_labels(struct catalog_config *dst, const json_t *labels)
{
        size_t i;
        json_t *v;

        if (!dst->labels) {
                dst->labels = json_array();
                if (!dst->labels)
                        return -ENOMEM;
        }
        json_array_foreach(labels, i, v) {
                json_t *name = json_object_get(v, "name");
                size_t j = 0;

                while (j < json_array_size(dst->labels) &&
                       !json_equal(json_object_get(json_array_get(dst->labels, j), "name"), name))
                        j++;
                if (j < json_array_size(dst->labels) ? json_array_set(dst->labels, j, v) < 0
                                                     : json_array_append(dst->labels, v) < 0)
                        return -ENOMEM;
        }
        return json_array_size(dst->labels) > CATALOG_LABELS_MAX ? -E2BIG : 0;
}

/* A named query defined again: later files override individual fields of the same query. */
static int override_named_query(json_t *queries, const char *k, const json_t *old, json_t *v)
{
        json_t *copy = json_deep_copy(old);

        if (!copy ||
            json_object_update(json_object_get(copy, "filters"), json_object_get(v, "filters")) <
                    0 ||
            json_object_set(copy, "assetType", json_object_get(v, "assetType")) < 0) {
                json_decref(copy);
                return -ENOMEM;
        }
        return json_object_set_new(queries, k, copy) < 0 ? -ENOMEM : 0;
}

static int merge_named_queries(struct catalog_config *dst, json_t *queries)
{
        const char *k;
        json_t *v;

        if (!dst->named_queries) {
                dst->named_queries = json_object();
                if (!dst->named_queries)
                        return -ENOMEM;
        }
        json_object_foreach(queries, k, v) {
                const json_t *old = json_object_get(dst->named_queries, k);
                int r = old ? override_named_query(dst->named_queries, k, old, v)
                            : (json_object_set(dst->named_queries, k, v) < 0 ? -ENOMEM : 0);

                if (r < 0)
                        return r;
        }
        return json_object_size(dst->named_queries) > CATALOG_NAMED_QUERIES_MAX ? -E2BIG : 0;
}

int catalog_config_merge(struct catalog_config *dst, const struct catalog_config *src,
                         struct error_detail *err)
{
        int r;

        r = merge_sources(dst, src, err);
        if (r >= 0 && src->labels)
                r = merge_labels(dst, src->labels);
        if (r >= 0 && src->named_queries)
                r = merge_named_queries(dst, src->named_queries);
        return r < 0 ? r : 0;
}

/* Loads file and merges it into all; a missing file is nothing when optional. */
static int load_one(const char *file, bool optional, struct catalog_config *all,
                    struct error_detail *err)
{
        struct catalog_config one = { 0 };
        int r;

        r = catalog_config_load_file(file, &one, err);
        if (r == -ENOENT && optional) {
                /* a later file not there (yet) adds nothing: the console's ConfigMap
                 * model-catalog-sources before its first change (an optional mount) */
                if (err)
                        *err = (struct error_detail){ 0 };
                return 0;
        }
        if (r < 0)
                return r;
        r = catalog_config_merge(all, &one, err);
        if (r < 0 && err && !err->file[0]) {
                /* a merge error names no file yet: the one being merged */
                (void)snprintf(err->file, sizeof(err->file), "%s", file);
                err->line = 0;
        }
        catalog_config_release(&one);
        return r;
}

int catalog_config_load(char *const *files, size_t n, struct catalog_config *ret,
                        struct error_detail *err)
{
        struct catalog_config all = { 0 };
        int r = 0;

        if (n > CATALOG_CONFIG_FILES_MAX) {
                error_detail_set_at(err, -E2BIG, NULL, 0, "too many config files (limit %u)",
                                    CATALOG_CONFIG_FILES_MAX);
                return -E2BIG;
        }
        for (size_t i = 0; i < n; i++) {
                r = load_one(files[i], i > 0, &all, err);
                if (r < 0)
                        goto fail;
        }
        for (size_t i = 0; i < all.n_sources; i++) {
                struct catalog_source_config *s = &all.sources[i];

                if (s->enabled < 0)
                        s->enabled = 1;
                if (!s->labels) {
                        s->labels = calloc(1, sizeof(char *));
                        if (!s->labels) {
                                r = -ENOMEM;
                                goto fail;
                        }
                }
        }
        if (!all.labels)
                all.labels = json_array();
        if (!all.named_queries)
                all.named_queries = json_object();
        if (!all.labels || !all.named_queries) {
                r = -ENOMEM;
                goto fail;
        }
        *ret = all;
        return 0;
fail:
        catalog_config_release(&all);
        return r;
}

int catalog_source_yaml_path(const struct catalog_source_config *s, char **ret)
{
        const char *p = json_string_value(json_object_get(s->properties, "yamlCatalogPath"));

        if (!p || p[0] == '\0')
                return -ENOENT;
        return path_resolve(s->base_dir, p, ret);
}

int catalog_source_excluded(const struct catalog_source_config *s, char ***ret)
{
        json_t *legacy = json_object_get(s->properties, "excludedModels");
        size_t n = catalog_strv_length(s->excluded), k = 0;
        CLEANUP(catalog_strv_freep) char **v = NULL;
        size_t i;
        json_t *e;

        v = calloc(n + json_array_size(legacy) + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (i = 0; i < n; i++) {
                v[k] = strdup(s->excluded[i]);
                if (!v[k++])
                        return -ENOMEM;
        }
        json_array_foreach(legacy, i, e) {
                if (!json_is_string(e))
                        continue;
                v[k] = strdup(json_string_value(e));
                if (!v[k++])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int catalog_source_parse_preview(const char *file, const char *data, size_t len,
                                 struct catalog_source_config *ret, struct error_detail *err)
{
        struct catalog_source_config s = { .enabled = -1 };
        struct ydoc d;
        yaml_node_t *root;
        int r;

        r = ydoc_load(&d, file, data, len, &catalog_yaml_limits, err);
        if (r < 0)
                return r;
        root = ydoc_root(&d);
        if (!root || root->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, file, ynode_line(root),
                                    "config must be a mapping");
                ydoc_release(&d);
                return -EINVAL;
        }
        r = ydoc_dispatch(&d, root, model_source_fields, &s, err); /* a preview is a model source */
        if (r >= 0)
                r = validate_patterns(&d, ynode_line(root), &s, err);
        ydoc_release(&d);
        if (r < 0) {
                catalog_source_config_release(&s);
                return r;
        }
        *ret = s;
        return 0;
}
