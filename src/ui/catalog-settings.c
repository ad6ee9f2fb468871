/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/catalog-settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/json-util.h"
#include "json/yaml-doc.h"
#include "util/base64.h"
#include "util/buf.h"
#include "util/error-detail.h"

#define SOURCES_DEPTH_MAX 16U

static const char *strempty(const char *s)
{
        return s ? s : "";
}

static const struct yaml_limits sources_limits = {
        .size_max = UI_CATALOG_YAML_MAX,
        .depth_max = SOURCES_DEPTH_MAX,
        .nodes_max = 1000000,
        .cpu_usec_max = 5ULL * 1000000ULL,
};

void ui_catalog_change_done(struct ui_catalog_change *c)
{
        json_decref(c->user_data);
        free(c->api_key);
        *c = (struct ui_catalog_change){ 0 };
}

/* Whether v is a list of sources, each an object with a string id. */
static bool is_source_list(const json_t *v)
{
        json_t *e;
        size_t i;

        if (!json_is_array(v))
                return false;
        json_array_foreach(v, i, e)
                if (!json_is_object(e) || !json_is_string(json_object_get(e, "id")))
                        return false;
        return true;
}

/* The model sources of doc under one key, "catalogs": upstream's BFF reads and writes that
 * key, the catalog also reads "model_catalogs", whose entries are moved into "catalogs" (the same
 * sources for either reader). 0, -EINVAL (not lists of sources), -ENOMEM. */
static int one_section(json_t *doc)
{
        json_t *cats = json_object_get(doc, "catalogs"),
               *more = json_object_get(doc, "model_catalogs");

        if ((cats && !is_source_list(cats)) || (more && !is_source_list(more)))
                return -EINVAL;
        if (!cats) {
                if (json_object_set_new(doc, "catalogs", json_array()) < 0)
                        return -ENOMEM;
                cats = json_object_get(doc, "catalogs");
        }
        if (more &&
            (json_array_extend(cats, more) < 0 || json_object_del(doc, "model_catalogs") < 0))
                return -ENOMEM;
        return 0;
}

/* The sources.yaml of a ConfigMap's data (borrowed, may be NULL) as JSON: an object whose
 * "catalogs" is an array of objects, each with a string id. */
static int parse_sources(const json_t *data, const char *cm, json_t **ret, struct error_detail *err)
{
        const char *text = json_string_value(json_object_get(data, UI_CATALOG_SOURCES_KEY));
        struct error_detail yerr = { 0 };
        struct ydoc d;
        json_t *doc = NULL;
        int r;

        if (!text || !text[0]) {
                *ret = json_pack("{s:[]}", "catalogs");
                return *ret ? 0 : -ENOMEM;
        }
        r = ydoc_load(&d, UI_CATALOG_SOURCES_KEY, text, strlen(text), &sources_limits, &yerr);
        if (r == -ENOMEM)
                return r;
        if (r >= 0) {
                r = ydoc_root(&d) ? ydoc_to_json(&d, ydoc_root(&d), &doc, &yerr) : 0;
                ydoc_release(&d);
        }
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "ConfigMap %s: %s line %u: %s",
                                        cm, UI_CATALOG_SOURCES_KEY, yerr.line, yerr.message);
        if (!doc)
                doc = json_object();
        r = json_is_object(doc) ? one_section(doc) : -EINVAL;
        if (r < 0) {
                json_decref(doc);
                return r == -ENOMEM
                               ? r
                               : error_detail_set(
                                         err, ERROR_INVALID, -EINVAL,
                                         "ConfigMap %s: %s: catalogs must be a list of sources "
                                         "with an id",
                                         cm, UI_CATALOG_SOURCES_KEY);
        }
        *ret = doc;
        return 0;
}

static json_t *find_source(const json_t *doc, const char *id, size_t *ret_index)
{
        json_t *e;
        size_t i;

        json_array_foreach(json_object_get(doc, "catalogs"), i, e)
                if (streq(json_string_value(json_object_get(e, "id")), id)) {
                        if (ret_index)
                                *ret_index = i;
                        return e;
                }
        return NULL;
}

/* Both documents; 0, -EINVAL (err), -ENOMEM. */
static int parse_both(const struct ui_catalog_cms *cms, json_t **def, json_t **user,
                      struct error_detail *err)
{
        int r = parse_sources(cms->defaults, UI_CATALOG_DEFAULT_SOURCES_CM, def, err);

        if (r < 0)
                return r;
        r = parse_sources(cms->user, UI_CATALOG_SOURCES_CM, user, err);
        if (r < 0) {
                json_decref(*def);
                *def = NULL;
        }
        return r;
}

/* A list of strings from an entry: the key at the top level, else under properties (older
 * files). Borrowed; NULL when absent. */
static json_t *entry_list(const json_t *e, const char *key)
{
        json_t *v = json_object_get(e, key);

        return v ? v : json_object_get(json_object_get(e, "properties"), key);
}

/* Sets in view the fields entry (borrowed) sets: upstream's CatalogSourceConfig. */
static int overlay(json_t *view, const json_t *e)
{
        static const char *const plain[] = { "id", "name", "type", "labels" };
        const char *org = json_string_value(
                json_object_get(json_object_get(e, "properties"), "allowedOrganization"));
        json_t *v;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(plain); i++)
                if ((v = json_object_get(e, plain[i])))
                        r |= json_object_set(view, plain[i], v);
        if ((v = json_object_get(e, "enabled")))
                r |= json_object_set_new(view, "enabled", json_boolean(!json_is_false(v)));
        if ((v = entry_list(e, "includedModels")))
                r |= json_object_set(view, "includedModels", v);
        if ((v = entry_list(e, "excludedModels")))
                r |= json_object_set(view, "excludedModels", v);
        if (org)
                r |= json_object_set_new(view, "allowedOrganization", json_string(org));
        return r < 0 ? -ENOMEM : 0;
}

/* The merged view of id: the default entry (if any) overlaid with the user's (if any). */
static json_t *merged_view(const json_t *def_e, const json_t *user_e)
{
        json_t *view = json_pack("{s:b,s:b}", "enabled", true, "isDefault", def_e != NULL);

        if (!view)
                return NULL;
        if ((def_e && overlay(view, def_e) < 0) || (user_e && overlay(view, user_e) < 0)) {
                json_decref(view);
                return NULL;
        }
        return view;
}

/* Inserts view (taken) into out, kept sorted by id. */
static int insert_sorted(json_t *out, json_t *view)
{
        const char *id = json_string_value(json_object_get(view, "id"));
        size_t i = json_array_size(out);

        if (!view)
                return -ENOMEM;
        while (i > 0 &&
               strcmp(json_string_value(json_object_get(json_array_get(out, i - 1), "id")), id) > 0)
                i--;
        return json_array_insert_new(out, i, view) < 0 ? -ENOMEM : 0;
}

int ui_catalog_sources_list(const struct ui_catalog_cms *cms, json_t **ret,
                            struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL, *out = NULL;
        json_t *e;
        size_t i;
        int r;

        r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        out = json_array();
        if (!out)
                return -ENOMEM;
        /* sorted by id: a stable order for the console */
        json_array_foreach(json_object_get(def, "catalogs"), i, e) {
                const char *id = json_string_value(json_object_get(e, "id"));

                if (insert_sorted(out, merged_view(e, find_source(user, id, NULL))) < 0)
                        return -ENOMEM;
        }
        json_array_foreach(json_object_get(user, "catalogs"), i, e)
                if (!find_source(def, json_string_value(json_object_get(e, "id")), NULL) &&
                    insert_sorted(out, merged_view(NULL, e)) < 0)
                        return -ENOMEM;
        *ret = json_pack("{s:O}", "catalogs", out);
        return *ret ? 0 : -ENOMEM;
}

/* The yamlCatalogPath of id: the user entry's, else the default's (borrowed; NULL). */
static const char *yaml_path(const json_t *def_e, const json_t *user_e)
{
        const char *p = json_string_value(
                json_object_get(json_object_get(user_e, "properties"), "yamlCatalogPath"));

        return p ? p
                 : json_string_value(json_object_get(json_object_get(def_e, "properties"),
                                                     "yamlCatalogPath"));
}

static int view_of(const struct ui_catalog_cms *cms, const json_t *def, const json_t *user,
                   const char *id, json_t **ret)
{
        const json_t *def_e = find_source(def, id, NULL), *user_e = find_source(user, id, NULL);
        json_t *view, *text;
        const char *path;

        if (!def_e && !user_e)
                return -ENOENT;
        view = merged_view(def_e, user_e);
        if (!view)
                return -ENOMEM;
        path = yaml_path(def_e, user_e);
        if (path && streq(strempty(json_string_value(json_object_get(view, "type"))), "yaml")) {
                text = json_object_get(cms->user, path);
                if (!text)
                        text = json_object_get(cms->defaults, path);
                if (json_object_set_new(view, "yamlCatalogPath", json_string(path)) < 0 ||
                    (json_is_string(text) && json_object_set(view, "yaml", text) < 0)) {
                        json_decref(view);
                        return -ENOMEM;
                }
        }
        *ret = view;
        return 0;
}

int ui_catalog_source_get(const struct ui_catalog_cms *cms, const char *id, json_t **ret,
                          struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL;
        int r;

        r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        r = view_of(cms, def, user, id, ret);
        if (r == -ENOENT)
                return error_detail_set(err, ERROR_NOT_FOUND, r, "no catalog source '%s'", id);
        return r;
}

/* ---- changes ---- */

static int check_id(const char *id, struct error_detail *err)
{
        bool alnum = false;

        if (!id || !id[0])
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "id is required");
        for (const char *p = id; *p; p++) {
                if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_'))
                        return error_detail_set(
                                err, ERROR_INVALID, -EINVAL,
                                "invalid catalog source id '%.64s': only lowercase letters, "
                                "digits and underscores",
                                id);
                alnum |= *p != '_';
        }
        if (!alnum)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "catalog source id '%s' must contain a letter or a digit",
                                        id);
        if (strlen(id) > UI_CATALOG_ID_MAX)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "catalog source id is longer than %u bytes",
                                        UI_CATALOG_ID_MAX);
        return 0;
}

/* Upstream's names for an hf source's key: the Secret and its label (the catalog's
 * HF_API_KEY_<label> variable): the id in capitals without leading or trailing '_', at most 63
 * bytes (a label value's limit). */
static void secret_names(const char *id, struct ui_catalog_change *c)
{
        size_t n = 0;

        (void)snprintf(c->secret_name, sizeof(c->secret_name), "catalog-%s-apikey", id);
        for (char *p = c->secret_name; *p; p++)
                if (*p == '_')
                        *p = '-';
        while (*id == '_')
                id++;
        for (; *id && n < sizeof(c->source_label) - 1; id++)
                c->source_label[n++] = (char)toupper((unsigned char)*id);
        while (n > 0 && c->source_label[n - 1] == '_')
                n--;
        c->source_label[n] = '\0';
}

/* A string field of the payload: 1 with *ret (borrowed) when set, 0 when absent or null,
 * -EINVAL when not a string. */
static int payload_string(const json_t *p, const char *key, const char **ret,
                          struct error_detail *err)
{
        json_t *v = json_object_get(p, key);

        *ret = NULL;
        if (!v || json_is_null(v))
                return 0;
        if (!json_is_string(v))
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "%s must be a string", key);
        *ret = json_string_value(v);
        return 1;
}

/* A list-of-strings field: 1 when set (a list of at most 1,000 strings), 0 absent, -EINVAL. */
static int payload_list(const json_t *p, const char *key, struct error_detail *err)
{
        json_t *v = json_object_get(p, key), *s;
        size_t i;

        if (!v || json_is_null(v))
                return 0;
        if (!json_is_array(v) || json_array_size(v) > 1000)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "%s must be a list of at most 1000 strings", key);
        json_array_foreach(v, i, s)
                if (!json_is_string(s) || !json_string_value(s)[0])
                        return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                                "%s[%zu] must be a non-empty string", key, i);
        return 1;
}

static int check_yaml(const char *text, struct error_detail *err)
{
        struct error_detail yerr = { 0 };
        struct ydoc d;
        int r;

        if (strlen(text) > UI_CATALOG_YAML_MAX)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "yaml is larger than %zu bytes", UI_CATALOG_YAML_MAX);
        r = ydoc_load(&d, "yaml", text, strlen(text), &sources_limits, &yerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "yaml line %u: %s", yerr.line,
                                        yerr.message);
        if (!ydoc_root(&d) || ydoc_root(&d)->type != YAML_MAPPING_NODE)
                r = error_detail_set(err, ERROR_INVALID, -EINVAL,
                                     "yaml must be a catalog: a mapping with models");
        ydoc_release(&d);
        return r;
}

/* Writes doc as data's sources.yaml. */
static int set_sources(json_t *data, const json_t *doc)
{
        AUTOFREE char *text = NULL;
        int r = ydoc_dump_json(doc, SOURCES_DEPTH_MAX, &text, NULL);

        if (r < 0)
                return r;
        return json_object_set_new(data, UI_CATALOG_SOURCES_KEY, json_string(text)) < 0 ? -ENOMEM
                                                                                        : 0;
}

/* The user ConfigMap's data with doc written back as its sources.yaml (a copy of cms->user). */
static int user_data_with(const struct ui_catalog_cms *cms, const json_t *doc, json_t **ret)
{
        json_t *data = cms->user ? json_deep_copy(cms->user) : json_object();
        int r;

        if (!data)
                return -ENOMEM;
        r = set_sources(data, doc);
        if (r < 0) {
                json_decref(data);
                return r;
        }
        *ret = data;
        return 0;
}

/* Copies the payload's lists and enabled flag into entry e. */
static int entry_common(json_t *e, const json_t *payload)
{
        static const char *const lists[] = { "labels", "includedModels", "excludedModels" };
        json_t *v;
        int r = 0;

        if ((v = json_object_get(payload, "enabled")) && json_is_boolean(v))
                r |= json_object_set(e, "enabled", v);
        for (size_t i = 0; i < ELEMENTSOF(lists); i++)
                if ((v = json_object_get(payload, lists[i])) && json_is_array(v)) {
                        r |= json_object_set(e, lists[i], v);
                        /* the top-level key now decides: an older properties copy goes */
                        (void)json_object_del(json_object_get(e, "properties"), lists[i]);
                }
        return r < 0 ? -ENOMEM : 0;
}

/* An hf source's key from the payload: a raw "hf_..." token goes into the Secret; any other
 * non-empty value names an existing Secret; "" removes the key. */
static int hf_key(json_t *props, const char *id, const char *key, struct ui_catalog_change *c)
{
        secret_names(id, c);
        if (!key[0]) {
                c->secret = UI_CATALOG_SECRET_DELETE;
                (void)json_object_del(props, "apiKey");
                return 0;
        }
        if (strncmp(key, "hf_", 3) == 0) {
                c->secret = UI_CATALOG_SECRET_PUT;
                c->api_key = strdup(key);
                if (!c->api_key)
                        return -ENOMEM;
                return json_object_set_new(props, "apiKey", json_string(c->secret_name)) < 0
                               ? -ENOMEM
                               : 0;
        }
        return json_object_set_new(props, "apiKey", json_string(key)) < 0 ? -ENOMEM : 0;
}

static int check_payload(const json_t *payload, struct error_detail *err)
{
        static const char *const strs[] = { "id",   "name",   "type",
                                            "yaml", "apiKey", "allowedOrganization" };
        static const char *const lists[] = { "labels", "includedModels", "excludedModels" };
        const char *s;
        json_t *v;
        int r;

        if (!json_is_object(payload))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "data must be a catalog source object");
        for (size_t i = 0; i < ELEMENTSOF(strs); i++)
                if ((r = payload_string(payload, strs[i], &s, err)) < 0)
                        return r;
        for (size_t i = 0; i < ELEMENTSOF(lists); i++)
                if ((r = payload_list(payload, lists[i], err)) < 0)
                        return r;
        v = json_object_get(payload, "enabled");
        if (v && !json_is_null(v) && !json_is_boolean(v))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "enabled must be true or false");
        return 0;
}

/* The payload's string fields (borrowed; NULL when absent). */
struct fields {
        const char *id, *name, *type, *yaml, *org, *key;
};

static void read_fields(const json_t *payload, struct fields *f)
{
        (void)payload_string(payload, "id", &f->id, NULL);
        (void)payload_string(payload, "name", &f->name, NULL);
        (void)payload_string(payload, "type", &f->type, NULL);
        (void)payload_string(payload, "yaml", &f->yaml, NULL);
        (void)payload_string(payload, "allowedOrganization", &f->org, NULL);
        (void)payload_string(payload, "apiKey", &f->key, NULL);
}

static bool empty(const char *s)
{
        return !s || !s[0];
}

/* A new source's required fields, upstream's rules. */
static int check_new(const struct fields *f, struct error_detail *err)
{
        int r = check_id(f->id, err);

        if (r < 0)
                return r;
        if (empty(f->name))
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "name is required");
        if (empty(f->type))
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "type is required");
        if (!streq(f->type, "yaml") && !streq(f->type, "hf"))
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "unsupported catalog source type '%.32s' (supported: yaml, hf)", f->type);
        if (streq(f->type, "yaml") && empty(f->yaml))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "yaml is required for a yaml source");
        if (streq(f->type, "hf") && empty(f->org))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "allowedOrganization is required for an hf source");
        return f->yaml ? check_yaml(f->yaml, err) : 0;
}

/* The entry of a new source (new reference in *ret); an hf key's Secret goes into c. */
static int new_entry(const struct fields *f, const json_t *payload, const char *path,
                     struct ui_catalog_change *c, json_t **ret)
{
        CLEANUP(json_decrefp) json_t *e = NULL, *props = NULL;
        int r;

        e = json_pack("{s:s,s:s,s:s,s:b}", "id", f->id, "name", f->name, "type", f->type, "enabled",
                      true);
        props = json_object();
        if (!e || !props || entry_common(e, payload) < 0)
                return -ENOMEM;
        if (streq(strempty(f->type), "yaml"))
                r = json_object_set_new(props, "yamlCatalogPath", json_string(path));
        else {
                r = json_object_set_new(props, "allowedOrganization", json_string(f->org));
                if (r >= 0 && !empty(f->key))
                        r = hf_key(props, f->id, f->key, c);
        }
        if (r < 0 || json_object_set(e, "properties", props) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(e);
        return 0;
}

int ui_catalog_source_create(const struct ui_catalog_cms *cms, const json_t *payload,
                             struct ui_catalog_change *ret, struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL, *e = NULL;
        CLEANUP(ui_catalog_change_done) struct ui_catalog_change c = { 0 };
        struct fields f = { 0 };
        char path[UI_CATALOG_ID_MAX + 8];
        int r;

        r = check_payload(payload, err);
        if (r < 0)
                return r;
        read_fields(payload, &f);
        r = check_new(&f, err);
        if (r < 0)
                return r;
        r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        if (find_source(def, f.id, NULL) || find_source(user, f.id, NULL))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "catalog source '%s' already exists%s", f.id,
                                        find_source(def, f.id, NULL) ? " (a default source)" : "");
        (void)snprintf(path, sizeof(path), "%s.yaml", f.id);
        r = new_entry(&f, payload, path, &c, &e);
        if (r >= 0 && json_array_append(json_object_get(user, "catalogs"), e) < 0)
                r = -ENOMEM;
        if (r >= 0)
                r = user_data_with(cms, user, &c.user_data);
        if (r >= 0 && f.yaml && json_object_set_new(c.user_data, path, json_string(f.yaml)) < 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        *ret = c;
        c = (struct ui_catalog_change){ 0 };
        return 0;
}

/* The fields an override of a default source may not set. */
static int check_default_override(const json_t *payload, struct error_detail *err)
{
        static const char *const kept[] = { "name", "labels", "yaml" };

        for (size_t i = 0; i < ELEMENTSOF(kept); i++) {
                json_t *v = json_object_get(payload, kept[i]);

                if (v && !json_is_null(v) && !(json_is_string(v) && !json_string_value(v)[0]) &&
                    !(json_is_array(v) && json_array_size(v) == 0))
                        return error_detail_set(
                                err, ERROR_INVALID, -EPERM,
                                "cannot change the default source's '%s' (only enabled, "
                                "includedModels, excludedModels and allowedOrganization)",
                                kept[i]);
        }
        return 0;
}

/* The type of the source (the user's entry's, else the default's) into buf. */
static const char *current_type(const json_t *def_e, const json_t *user_e, char *buf, size_t n)
{
        const char *t = json_string_value(json_object_get(user_e, "type"));

        if (!t)
                t = json_string_value(json_object_get(def_e, "type"));
        (void)snprintf(buf, n, "%s", strempty(t));
        return buf;
}

/* Applies the payload's fields to entry e (a source of type cur_type). */
static int update_entry(json_t *e, const json_t *payload, const struct fields *f,
                        const char *cur_type, const char *id, struct ui_catalog_change *c)
{
        json_t *props;

        if (!empty(f->name) && json_object_set_new(e, "name", json_string(f->name)) < 0)
                return -ENOMEM;
        if (entry_common(e, payload) < 0)
                return -ENOMEM;
        if (!f->org && !f->key)
                return 0;
        props = json_object_get(e, "properties");
        if (!props) {
                if (json_object_set_new(e, "properties", json_object()) < 0)
                        return -ENOMEM;
                props = json_object_get(e, "properties");
        }
        if (!empty(f->org) &&
            json_object_set_new(props, "allowedOrganization", json_string(f->org)) < 0)
                return -ENOMEM;
        if (f->key && streq(cur_type, "hf"))
                return hf_key(props, id, f->key, c);
        return 0;
}

int ui_catalog_source_update(const struct ui_catalog_cms *cms, const char *id,
                             const json_t *payload, struct ui_catalog_change *ret,
                             struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL, *e = NULL;
        CLEANUP(ui_catalog_change_done) struct ui_catalog_change c = { 0 };
        const json_t *def_e, *user_e;
        struct fields f = { 0 };
        const char *cur_type, *path;
        char type_buf[32], fallback[UI_CATALOG_ID_MAX + 8];
        size_t index = 0;
        int r;

        r = check_payload(payload, err);
        if (r >= 0)
                r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        read_fields(payload, &f);
        def_e = find_source(def, id, NULL);
        user_e = find_source(user, id, &index);
        if (!def_e && !user_e)
                return error_detail_set(err, ERROR_NOT_FOUND, -ENOENT, "no catalog source '%s'",
                                        id);
        /* a copy: the user's entry is replaced below */
        cur_type = current_type(def_e, user_e, type_buf, sizeof(type_buf));
        if (!empty(f.type) && !streq(f.type, cur_type))
                return error_detail_set(
                        err, ERROR_INVALID, -EPERM,
                        "cannot change catalog source '%s' from type '%s' to '%.32s'", id, cur_type,
                        f.type);
        if (def_e && (r = check_default_override(payload, err)) < 0)
                return r;
        if (!empty(f.yaml) && (r = check_yaml(f.yaml, err)) < 0)
                return r;

        /* the user's entry, or a new override entry of the default source */
        e = user_e ? json_deep_copy(user_e) : json_pack("{s:s}", "id", id);
        if (!e)
                return -ENOMEM;
        r = update_entry(e, payload, &f, cur_type, id, &c);
        if (r >= 0)
                r = user_e ? json_array_set(json_object_get(user, "catalogs"), index, e)
                           : json_array_append(json_object_get(user, "catalogs"), e);
        if (r >= 0)
                r = user_data_with(cms, user, &c.user_data);
        if (r < 0)
                return -ENOMEM;
        path = yaml_path(def_e, e);
        (void)snprintf(fallback, sizeof(fallback), "%s.yaml", id);
        if (!empty(f.yaml) && streq(cur_type, "yaml") &&
            json_object_set_new(c.user_data, path ? path : fallback, json_string(f.yaml)) < 0)
                return -ENOMEM;
        *ret = c;
        c = (struct ui_catalog_change){ 0 };
        return 0;
}

int ui_catalog_source_delete(const struct ui_catalog_cms *cms, const char *id,
                             struct ui_catalog_change *ret, json_t **ret_view,
                             struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL, *view = NULL;
        struct ui_catalog_change c = { 0 };
        const json_t *user_e;
        const char *path, *type, *key;
        size_t index = 0;
        int r;

        r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        if (find_source(def, id, NULL))
                return error_detail_set(
                        err, ERROR_INVALID, -EPERM,
                        "cannot delete '%s': it is a default source (disable it instead)", id);
        user_e = find_source(user, id, &index);
        if (!user_e)
                return error_detail_set(err, ERROR_NOT_FOUND, -ENOENT, "no catalog source '%s'",
                                        id);
        r = view_of(cms, def, user, id, &view);
        if (r < 0)
                return r;
        type = json_string_value(json_object_get(user_e, "type"));
        path = yaml_path(NULL, user_e);
        key = json_string_value(json_object_get(json_object_get(user_e, "properties"), "apiKey"));
        if (type && streq(type, "hf") && key && key[0]) {
                secret_names(id, &c);
                /* only the Secret this console made for the source; a named one stays */
                if (streq(key, c.secret_name))
                        c.secret = UI_CATALOG_SECRET_DELETE;
        }
        /* the entry (and the strings borrowed from it) goes with the removal: the catalog key
         * is dropped from the copy of the data first */
        c.user_data = cms->user ? json_deep_copy(cms->user) : json_object();
        if (!c.user_data)
                return -ENOMEM;
        if (path && type && streq(type, "yaml"))
                (void)json_object_del(c.user_data, path);
        if (json_array_remove(json_object_get(user, "catalogs"), index) < 0 ||
            set_sources(c.user_data, user) < 0) {
                ui_catalog_change_done(&c);
                return -ENOMEM;
        }
        *ret = c;
        if (ret_view)
                *ret_view = TAKE_PTR(view);
        return 0;
}

/* ---- preview ---- */

/* A Secret's name: a DNS subdomain (lowercase letters, digits, '-' and '.', alphanumeric ends). */
static bool secret_name_ok(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > UI_CATALOG_SECRET_NAME_MAX || !isalnum((unsigned char)s[0]) ||
            !isalnum((unsigned char)s[n - 1]))
                return false;
        for (const char *p = s; *p; p++)
                if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '-' ||
                      *p == '.'))
                        return false;
        return true;
}

/* The properties.apiKey of an entry (borrowed; NULL: none or empty). */
static const char *entry_key(const json_t *e)
{
        const char *k = json_string_value(
                json_object_get(json_object_get(e, "properties"), "apiKey"));

        return k && k[0] ? k : NULL;
}

int ui_catalog_preview_secret(const struct ui_catalog_cms *cms, const json_t *data, char *ret_name,
                              struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *def = NULL, *user = NULL;
        const char *id = json_string_value(json_object_get(data, "id")),
                   *type = json_string_value(json_object_get(data, "type")),
                   *given = json_string_value(
                           json_object_get(json_object_get(data, "properties"), "apiKey"));
        const json_t *def_e, *user_e;
        const char *key;
        char cur[32];
        int r;

        ret_name[0] = '\0';
        if (!type || !streq(type, "hf") || empty(id) || !empty(given))
                return 0;
        r = parse_both(cms, &def, &user, err);
        if (r < 0)
                return r;
        def_e = find_source(def, id, NULL);
        user_e = find_source(user, id, NULL);
        if (!def_e && !user_e)
                return error_detail_set(err, ERROR_NOT_FOUND, -ENOENT, "no catalog source '%.*s'",
                                        (int)UI_CATALOG_ID_MAX, id);
        if (!streq(current_type(def_e, user_e, cur, sizeof(cur)), "hf"))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "catalog source '%s' is not a Hugging Face source", id);
        key = user_e && entry_key(user_e) ? entry_key(user_e) : entry_key(def_e);
        if (!key)
                return 0;
        if (!secret_name_ok(key))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "catalog source '%s': its apiKey names no Secret", id);
        (void)snprintf(ret_name, UI_CATALOG_SECRET_NAME_MAX + 1, "%s", key);
        return 1;
}

int ui_catalog_secret_key(const json_t *secret, char **ret, struct error_detail *err)
{
        const char *name = json_string_value(
                           json_object_get(json_object_get(secret, "metadata"), "name")),
                   *b64 = json_string_value(
                           json_object_get(json_object_get(secret, "data"), "apiKey"));
        char *key = NULL;
        size_t len = 0;
        int r;

        if (!name)
                name = "(unnamed)";
        if (!b64 || !b64[0])
                return error_detail_set(
                        err, ERROR_INVALID, -EINVAL,
                        "Secret %.253s has no apiKey: the source's key is not there", name);
        /* base64 of UI_CATALOG_KEY_MAX bytes */
        if (strlen(b64) > (size_t)(UI_CATALOG_KEY_MAX + 2) / 3 * 4)
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "Secret %.253s: apiKey is longer than %u bytes", name,
                                        UI_CATALOG_KEY_MAX);
        r = base64_decode(b64, &key, &len);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || strlen(key) != len || len > UI_CATALOG_KEY_MAX) {
                if (r >= 0) {
                        explicit_bzero(key, len);
                        free(key);
                }
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "Secret %.253s: apiKey is not a key (base64 text)", name);
        }
        *ret = key;
        return 0;
}

/* The properties of a preview's config: an hf source's organization and key; a yaml source's
 * path when the request has no catalog text, else *ret_yaml (borrowed). */
static int preview_props(const char *type, const json_t *props, const char *api_key, json_t *out,
                         const char **ret_yaml, struct error_detail *err)
{
        static const char *const hf_props[] = { "allowedOrganization", "apiKey" };
        const char *yaml = json_string_value(json_object_get(props, "yaml")),
                   *path = json_string_value(json_object_get(props, "yamlCatalogPath"));

        *ret_yaml = NULL;
        if (streq(type, "hf")) {
                for (size_t i = 0; i < ELEMENTSOF(hf_props); i++) {
                        json_t *v = json_object_get(props, hf_props[i]);

                        if (json_is_string(v) && json_object_set(out, hf_props[i], v) < 0)
                                return -ENOMEM;
                }
                if (api_key && json_object_set_new(out, "apiKey", json_string(api_key)) < 0)
                        return -ENOMEM;
                return 0;
        }
        if (!empty(yaml)) {
                if (strlen(yaml) > UI_CATALOG_YAML_MAX)
                        return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                                "yaml is larger than %zu bytes",
                                                UI_CATALOG_YAML_MAX);
                *ret_yaml = yaml;
                return 0;
        }
        if (empty(path))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "a yaml preview needs properties.yaml (the catalog) or "
                                        "properties.yamlCatalogPath");
        return json_object_set_new(out, "yamlCatalogPath", json_string(path)) < 0 ? -ENOMEM : 0;
}

/* The config part of a preview: type, the lists, and the type's properties; *ret_yaml is the
 * catalog to send as catalogData (borrowed from data; NULL: none). */
static int preview_config(const json_t *data, const char *api_key, json_t **ret,
                          const char **ret_yaml, struct error_detail *err)
{
        static const char *const lists[] = { "includedModels", "excludedModels" };
        CLEANUP(json_decrefp) json_t *cfg = NULL, *out_props = NULL;
        const json_t *props;
        const char *type;
        int r;

        if (!json_is_object(data))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "data must be a catalog source preview request");
        props = json_object_get(data, "properties");
        type = json_string_value(json_object_get(data, "type"));
        if (empty(type) || (!streq(type, "yaml") && !streq(type, "hf")))
                return error_detail_set(err, ERROR_INVALID, -EINVAL, "type must be yaml or hf");
        if (props && !json_is_object(props))
                return error_detail_set(err, ERROR_INVALID, -EINVAL,
                                        "properties must be an object");
        cfg = json_pack("{s:s}", "type", type);
        out_props = json_object();
        if (!cfg || !out_props)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
                json_t *v = json_object_get(data, lists[i]);

                if ((r = payload_list(data, lists[i], err)) < 0)
                        return r;
                if (json_array_size(v) > 0 && json_object_set(cfg, lists[i], v) < 0)
                        return -ENOMEM;
        }
        r = preview_props(type, props, api_key, out_props, ret_yaml, err);
        if (r < 0)
                return r;
        if (json_object_size(out_props) > 0 && json_object_set(cfg, "properties", out_props) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(cfg);
        return 0;
}

static int add_part(struct buf *b, const char *boundary, const char *name, const char *file,
                    const char *type, const char *content)
{
        return buf_printf(b,
                          "--%s\r\nContent-Disposition: form-data; name=\"%s\"; "
                          "filename=\"%s\"\r\nContent-Type: %s\r\n\r\n%s\r\n",
                          boundary, name, file, type, content);
}

int ui_catalog_preview_body(const json_t *data, const char *api_key, const char *boundary,
                            char **ret, size_t *ret_len, struct error_detail *err)
{
        CLEANUP(json_decrefp) json_t *cfg = NULL;
        CLEANUP(buf_releasep) struct buf b = BUF_INIT(2 * UI_CATALOG_YAML_MAX);
        AUTOFREE char *text = NULL;
        const char *yaml = NULL;
        int r;

        r = preview_config(data, api_key, &cfg, &yaml, err);
        if (r < 0)
                return r;
        text = json_dumps(cfg, JSON_COMPACT);
        if (!text)
                return -ENOMEM;
        if (strstr(text, boundary) || (yaml && strstr(yaml, boundary)))
                return -EEXIST;
        r = add_part(&b, boundary, "config", "config.json", "application/json", text);
        if (r >= 0 && yaml)
                r = add_part(&b, boundary, "catalogData", "catalog.yaml", "application/yaml", yaml);
        if (r >= 0)
                r = buf_printf(&b, "--%s--\r\n", boundary);
        if (r < 0)
                return r;
        *ret = buf_take(&b, ret_len);
        return *ret ? 0 : -ENOMEM;
}
