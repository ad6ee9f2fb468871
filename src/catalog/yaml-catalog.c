/* SPDX-License-Identifier: Apache-2.0 */
#include "catalog/yaml-catalog.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "catalog/limits.h"
#include "util/buf.h"
#include "util/parse-util.h"
#include "util/time-util.h"

struct catalog_models *catalog_models_ref(struct catalog_models *m)
{
        if (m)
                __atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
        return m;
}

void catalog_model_data_release(struct catalog_model_data *d)
{
        json_decref(d->model);
        catalog_record_unref(d->rec);
        json_decref(d->artifacts_json);
        for (size_t i = 0; i < d->n_artifacts; i++)
                catalog_record_unref(d->artifacts[i]);
        free(d->artifacts);
        *d = (struct catalog_model_data){ 0 };
}

struct catalog_models *catalog_models_unref(struct catalog_models *m)
{
        if (!m)
                return NULL;
        if (__atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        for (size_t i = 0; i < m->n; i++)
                catalog_model_data_release(&m->v[i]);
        free(m->v);
        json_decref(m->mcp_servers);
        free(m);
        return NULL;
}

/*
 * Values repeat across a catalog (a provider, a license, "model-artifact", a timestamp, the same
 * MetadataValue in many models): every value built here is immutable once parsed, so equal ones
 * are one shared jansson value (refcounted) instead of one copy per model. The table lives for
 * one parse; its keys are an unambiguous encoding of the value (kind, then length-prefixed
 * strings), built without serializing.
 */
struct intern_table {
        json_t *map;    /* key -> the shared value */
        struct buf key; /* scratch */
        json_t *stamp;  /* the load time (see catalog_models_stamp()) */
        /* the shared artifact records (a reference each), by the position their key maps to */
        struct catalog_record **records;
        size_t n_records, cap_records;
};

/* tag, then v in hexadecimal, then ';' (no printf: this runs for every value of a file) */
static int key_hex(struct buf *k, char tag, uint64_t v)
{
        char out[20];
        size_t n = 0;

        out[n++] = tag;
        do {
                out[n++] = "0123456789abcdef"[v & 15];
                v >>= 4;
        } while (v);
        out[n++] = ';';
        return buf_append(k, out, n);
}

static int key_bytes(struct buf *k, char tag, const char *s, size_t len)
{
        int r = key_hex(k, tag, len);

        return r < 0 ? r : buf_append(k, s, len);
}

static int intern_key(struct buf *k, const json_t *v);

/*
 * A member of a container: an object or array by its address. Equal addresses are equal values,
 * and no address in a key of the table is reused while the parse runs (the table holds the
 * value that holds it), so this never shares unequal values; it only misses a share when equal
 * containers were built apart, and those built here are shared already (interned bottom up).
 */
static int intern_member_key(struct buf *k, const json_t *v)
{
        if (json_is_object(v) || json_is_array(v))
                return key_hex(k, 'p', (uint64_t)(uintptr_t)v);
        return intern_key(k, v);
}

static int intern_key(struct buf *k, const json_t *v)
{
        const char *ks;
        json_t *e;
        size_t i;
        int r = 0;
        uint64_t bits;
        double d;

        switch (json_typeof(v)) {
        case JSON_STRING:
                return key_bytes(k, 's', json_string_value(v), json_string_length(v));
        case JSON_REAL:
                d = json_real_value(v);
                memcpy(&bits, &d, sizeof(bits));
                return key_hex(k, 'd', bits);
        case JSON_INTEGER:
                return key_hex(k, 'i', (uint64_t)json_integer_value(v));
        case JSON_TRUE:
                return buf_putc(k, 't');
        case JSON_FALSE:
                return buf_putc(k, 'f');
        case JSON_NULL:
                return buf_putc(k, 'n');
        case JSON_ARRAY:
                r = key_hex(k, 'a', json_array_size(v));
                json_array_foreach((json_t *)v, i, e)
                        if (r >= 0)
                                r = intern_member_key(k, e);
                return r;
        case JSON_OBJECT:
                r = key_hex(k, 'o', json_object_size(v));
                json_object_foreach((json_t *)v, ks, e) {
                        if (r >= 0)
                                r = key_bytes(k, 'k', ks, strlen(ks));
                        if (r >= 0)
                                r = intern_member_key(k, e);
                }
                return r;
        }
        return -EINVAL;
}

/* The shared value of the key in t->key (a new reference), or NULL when there is none yet. */
static json_t *intern_hit(struct intern_table *t)
{
        /* a string with a NUL cannot be a key: such values stay unshared */
        if (strlen(buf_str(&t->key)) != t->key.len)
                return NULL;
        return json_incref(json_object_get(t->map, buf_str(&t->key)));
}

/* Takes v, the value of the key in t->key, and shares it from now on; v, or NULL (no memory). */
static json_t *intern_add(struct intern_table *t, json_t *v)
{
        if (!v || strlen(buf_str(&t->key)) != t->key.len)
                return v;
        if (json_object_set(t->map, buf_str(&t->key), v) < 0) {
                json_decref(v);
                return NULL;
        }
        return v;
}

/* Takes v; returns the shared value equal to it (a new reference) or NULL (out of memory). */
static json_t *intern(struct ydoc *d, json_t *v)
{
        struct intern_table *t = d->userdata;
        json_t *hit;

        if (!v || !t)
                return v;
        buf_reset(&t->key);
        if (intern_key(&t->key, v) < 0)
                return v;
        hit = intern_hit(t);
        if (hit) {
                json_decref(v);
                return hit;
        }
        return intern_add(t, v);
}

/* The shared string s (a new reference), or NULL (out of memory); looked up before it is built
 * (most strings interned are repeats: a provider, a license, a time). */
static json_t *intern_string(struct ydoc *d, const char *s)
{
        struct intern_table *t = d->userdata;
        json_t *hit;

        if (!t)
                return json_string(s);
        buf_reset(&t->key);
        if (key_bytes(&t->key, 's', s, strlen(s)) < 0)
                return intern(d, json_string(s));
        hit = intern_hit(t);
        return hit ? hit : intern_add(t, json_string(s));
}

static int store_node(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        (void)d;
        (void)err;
        *(yaml_node_t **)ret = n;
        return 0;
}

/* v in decimal into buf (at least 21 bytes), without printf (two times per model and artifact). */
static void u64_decimal(char *buf, uint64_t v)
{
        char t[20];
        size_t n = 0;

        do {
                t[n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        for (size_t i = 0; i < n; i++)
                buf[i] = t[n - 1 - i];
        buf[n] = '\0';
}

/* A JSON string of milliseconds since the epoch; YAML may give it as a number or a string. */
static int field_epoch(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        const char *s = ynode_scalar(n);
        uint64_t v;
        char buf[32];
        json_t *j;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n))
                return 0;
        if (!s || safe_atou64(s, &v) < 0 || v > INT64_MAX) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "expected milliseconds since the epoch, got '%s'", s ? s : "?");
                return -EINVAL;
        }
        u64_decimal(buf, v);
        j = intern_string(d, buf);
        if (!j)
                return -ENOMEM;
        json_decref(*(json_t **)ret);
        *(json_t **)ret = j;
        return 0;
}

/*
 * One MetadataValue kind: the key of its value and how that value is normalised. normalise()
 * returns 0 with the value (a new reference, NULL when it is missing or of the wrong type),
 * -EINVAL when it is present but unreadable, or -ENOMEM.
 */
struct metadata_kind {
        const char *type;
        const char *vkey;
        int (*normalise)(json_t *v, json_t **ret);
};

static int metadata_string(json_t *v, json_t **ret)
{
        AUTOFREE char *t = NULL;

        if (!v || json_is_string(v)) {
                *ret = json_incref(v);
                return 0;
        }
        /* a plain scalar that looked like a number stays text */
        t = json_dumps(v, JSON_ENCODE_ANY);
        if (!t)
                return -ENOMEM;
        *ret = json_string(t);
        return 0;
}

static int metadata_int(json_t *v, json_t **ret)
{
        char b[32];
        int64_t i;

        if (json_is_integer(v))
                i = json_integer_value(v);
        else if (!json_is_string(v) || safe_atoi64(json_string_value(v), &i) < 0)
                return -EINVAL;
        snprintf(b, sizeof(b), "%" PRId64, i);
        *ret = json_string(b);
        return 0;
}

static int metadata_double(json_t *v, json_t **ret)
{
        const char *s = json_string_value(v);
        char *end;
        double f;

        if (json_is_number(v)) {
                *ret = json_real(json_number_value(v));
                return 0;
        }
        if (!s) {
                *ret = NULL;
                return 0;
        }
        errno = 0;
        f = strtod(s, &end);
        if (errno != 0 || *end != '\0' || end == s)
                return -EINVAL;
        *ret = json_real(f);
        return 0;
}

static int metadata_bool(json_t *v, json_t **ret)
{
        *ret = json_is_boolean(v) ? json_incref(v) : NULL;
        return 0;
}

static int metadata_struct(json_t *v, json_t **ret)
{
        *ret = json_is_string(v) ? json_incref(v) : NULL;
        return 0;
}

static const struct metadata_kind metadata_kinds[] = {
        { "MetadataStringValue", "string_value", metadata_string },
        { "MetadataIntValue", "int_value", metadata_int },
        { "MetadataDoubleValue", "double_value", metadata_double },
        { "MetadataBoolValue", "bool_value", metadata_bool },
        { "MetadataStructValue", "struct_value", metadata_struct },
};

static const struct metadata_kind *metadata_kind_find(const char *type)
{
        for (size_t i = 0; i < ELEMENTSOF(metadata_kinds); i++)
                if (streq(type, metadata_kinds[i].type))
                        return &metadata_kinds[i];
        return NULL;
}

/* {"metadataType": type, vkey: value} (takes value; NULL when out of memory), without json_pack's
 * format parsing (it ran for every property of a file). */
static json_t *metadata_value_new(const char *type, const char *vkey, json_t *value)
{
        json_t *o = json_object();

        if (!o) {
                json_decref(value);
                return NULL;
        }
        /* json_object_set_new() takes the value even when it fails */
        if (json_object_set_new(o, "metadataType", json_string(type)) < 0 ||
            json_object_set_new(o, vkey, value) < 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/*
 * The shared MetadataValue {"metadataType": kind's type, kind's vkey: value} (takes value; a new
 * reference, or NULL when out of memory). Its key is intern_key()'s of that object, built from
 * the parts, so that a repeat (most are) costs no object built and freed.
 */
static json_t *intern_metadata_value(struct ydoc *d, const struct metadata_kind *kind,
                                     json_t *value)
{
        struct intern_table *t = d->userdata;
        json_t *hit;
        int r;

        if (!t)
                return metadata_value_new(kind->type, kind->vkey, value);
        buf_reset(&t->key);
        r = key_hex(&t->key, 'o', 2);
        if (r >= 0)
                r = key_bytes(&t->key, 'k', "metadataType", strlen("metadataType"));
        if (r >= 0)
                r = key_bytes(&t->key, 's', kind->type, strlen(kind->type));
        if (r >= 0)
                r = key_bytes(&t->key, 'k', kind->vkey, strlen(kind->vkey));
        if (r >= 0)
                r = intern_member_key(&t->key, value);
        if (r < 0)
                return intern(d, metadata_value_new(kind->type, kind->vkey, value));
        hit = intern_hit(t);
        if (hit) {
                json_decref(value);
                return hit;
        }
        return intern_add(t, metadata_value_new(kind->type, kind->vkey, value));
}

/*
 * The shared MetadataValue of kind for the value raw (borrowed, NULL when missing) of property
 * key; exact: the property had no other members. A new reference in *ret, or -EINVAL with err.
 */
static int metadata_value_of(struct ydoc *d, const char *key, unsigned line,
                             const struct metadata_kind *kind, json_t *raw, bool exact,
                             json_t **ret, struct error_detail *err)
{
        json_t *value = NULL;
        int r;

        r = kind->normalise(raw, &value);
        if (r == -EINVAL) {
                error_detail_set_at(err, -EINVAL, d->file, line, "custom property '%s': invalid %s",
                                    key, kind->vkey);
                return r;
        }
        if (r < 0)
                return r;
        if (!value || !exact) {
                json_decref(value);
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "custom property '%s': %s needs exactly metadataType and %s",
                                    key, kind->type, kind->vkey);
                return -EINVAL;
        }
        *ret = intern_metadata_value(d, kind, value);
        return *ret ? 0 : -ENOMEM;
}

/* Normalises one property as written (raw) into a shared MetadataValue (a new reference). */
static int custom_property_value(struct ydoc *d, const char *key, unsigned line, json_t *raw,
                                 json_t **ret, struct error_detail *err)
{
        const char *type = json_string_value(json_object_get(raw, "metadataType"));
        const struct metadata_kind *kind;

        if (!json_is_object(raw) || !type) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "custom property '%s' needs a metadataType", key);
                return -EINVAL;
        }
        kind = metadata_kind_find(type);
        if (!kind) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "custom property '%s': unknown metadataType '%s'", key, type);
                return -EINVAL;
        }
        return metadata_value_of(d, key, line, kind, json_object_get(raw, kind->vkey),
                                 json_object_size(raw) == 2, ret, err);
}

/*
 * custom_property_value() for the usual shape, {metadataType: <a kind's type>, <its value key>:
 * <scalar>}, read from the nodes without the jansson object ydoc_to_json() would build for it
 * and free again (customProperties were 10% of a load's instructions): 1 with *ret, 0 when v has another shape (nothing visited: the caller takes the
 * general path, which also words its errors), or a negative errno with err.
 */
static int custom_property_direct(struct ydoc *d, const char *key, unsigned line, yaml_node_t *v,
                                  json_t **ret, struct error_detail *err)
{
        const struct metadata_kind *kind;
        yaml_node_t *k0, *k1, *v0, *v1, *tnode, *vnode;
        json_auto_t *j0 = NULL, *j1 = NULL;
        const char *s0, *s1;
        int r;

        if (v->type != YAML_MAPPING_NODE ||
            v->data.mapping.pairs.top - v->data.mapping.pairs.start != 2)
                return 0;
        k0 = ydoc_node(d, v->data.mapping.pairs.start[0].key);
        v0 = ydoc_node(d, v->data.mapping.pairs.start[0].value);
        k1 = ydoc_node(d, v->data.mapping.pairs.start[1].key);
        v1 = ydoc_node(d, v->data.mapping.pairs.start[1].value);
        s0 = ynode_scalar(k0);
        s1 = ynode_scalar(k1);
        if (!s0 || !s1 || !ynode_scalar(v0) || !ynode_scalar(v1))
                return 0;
        tnode = streq(s0, "metadataType") ? v0 : streq(s1, "metadataType") ? v1 : NULL;
        vnode = tnode == v0 ? v1 : v0;
        /* a kind's type name reads as that string whether quoted or plain (not a number, bool or
         * null), so the scalar's text is what ydoc_to_json() would give */
        kind = tnode ? metadata_kind_find(ynode_scalar(tnode)) : NULL;
        if (!kind || !streq(tnode == v0 ? s1 : s0, kind->vkey))
                return 0;
        /* the visits of ydoc_to_json(v): the mapping, then its values in order */
        r = ydoc_visit(d, v, err);
        if (r >= 0)
                r = ydoc_to_json(d, v0, &j0, err);
        if (r >= 0)
                r = ydoc_to_json(d, v1, &j1, err);
        if (r < 0)
                return r;
        r = metadata_value_of(d, key, line, kind, vnode == v0 ? j0 : j1, true, ret, err);
        return r < 0 ? r : 1;
}

/* Adds the property of one mapping pair (k: v) to out. */
static int custom_property_add(struct ydoc *d, yaml_node_t *k, yaml_node_t *v, json_t *out,
                               struct error_detail *err)
{
        const char *key = ynode_scalar(k);
        unsigned line = ynode_line(k);
        json_auto_t *raw = NULL;
        json_t *value = NULL;
        int r;

        if (!key || key[0] == '\0') {
                error_detail_set_at(err, -EINVAL, d->file, line, "invalid customProperties key");
                return -EINVAL;
        }
        if (json_object_get(out, key)) {
                error_detail_set_at(err, -EINVAL, d->file, line, "duplicate key '%s'", key);
                return -EINVAL;
        }
        r = custom_property_direct(d, key, line, v, &value, err);
        if (r == 0)
                r = ydoc_to_json(d, v, &raw, err);
        if (r == 0)
                r = custom_property_value(d, key, line, raw, &value, err);
        if (r < 0)
                return r;
        return json_object_set_new(out, key, value) < 0 ? -ENOMEM : 0;
}

static int custom_properties_fill(struct ydoc *d, yaml_node_t *n, json_t *out,
                                  struct error_detail *err)
{
        if (n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "customProperties must be a mapping");
                return -EINVAL;
        }
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                int r = custom_property_add(d, ydoc_node(d, p->key), ydoc_node(d, p->value), out,
                                            err);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Validates and normalises a customProperties mapping into MetadataValue JSON. */
static int field_custom_properties(struct ydoc *d, yaml_node_t *n, void *ret,
                                   struct error_detail *err)
{
        json_auto_t *out = NULL;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        out = json_object();
        if (!out)
                return -ENOMEM;
        if (!ynode_is_null(n)) {
                r = custom_properties_fill(d, n, out, err);
                if (r < 0)
                        return r;
        }
        /* the whole map is shared too: models and artifacts of one shape often repeat it (its
         * MetadataValues are shared already, so the key is short to build) */
        out = intern(d, TAKE_PTR(out));
        if (!out)
                return -ENOMEM;
        json_decref(*(json_t **)ret);
        *(json_t **)ret = TAKE_PTR(out);
        return 0;
}

struct artifact_parse {
        char *artifact_type, *metrics_type, *uri, *name, *description, *external_id;
        json_t *create, *update, *custom;
};

static void artifact_parse_release(struct artifact_parse *a)
{
        free(a->artifact_type);
        free(a->metrics_type);
        free(a->uri);
        free(a->name);
        free(a->description);
        free(a->external_id);
        json_decref(a->create);
        json_decref(a->update);
        json_decref(a->custom);
}

static const struct yfield artifact_fields[] = {
        { "artifactType", ydoc_field_string, offsetof(struct artifact_parse, artifact_type) },
        { "metricsType", ydoc_field_string, offsetof(struct artifact_parse, metrics_type) },
        { "uri", ydoc_field_string, offsetof(struct artifact_parse, uri) },
        { "name", ydoc_field_string, offsetof(struct artifact_parse, name) },
        { "description", ydoc_field_string, offsetof(struct artifact_parse, description) },
        { "externalId", ydoc_field_string, offsetof(struct artifact_parse, external_id) },
        { "createTimeSinceEpoch", field_epoch, offsetof(struct artifact_parse, create) },
        { "lastUpdateTimeSinceEpoch", field_epoch, offsetof(struct artifact_parse, update) },
        { "customProperties", field_custom_properties, offsetof(struct artifact_parse, custom) },
        { NULL, NULL, 0 },
};

/* A URI needs a scheme ("oci:", "s3:", "https:" ...) followed by something. */
static bool uri_valid(const char *u)
{
        const char *c = strchr(u, ':');

        if (!c || c == u || c[1] == '\0')
                return false;
        for (const char *p = u; p < c; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                      (p > u && ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '.'))))
                        return false;
        return true;
}

/* Checks the artifactType and metricsType of a and adds them to b. */
static int artifact_kind_add(struct ydoc *d, const struct artifact_parse *a, unsigned line,
                             struct catalog_record_builder *b, struct error_detail *err)
{
        int r;

        if (!a->artifact_type || streq(a->artifact_type, "model-artifact")) {
                if (!a->uri || !uri_valid(a->uri)) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            a->uri ? "artifact uri '%s' is not a valid URI"
                                                   : "model artifact without uri%s",
                                            a->uri ? a->uri : "");
                        return -EINVAL;
                }
                if (a->metrics_type) {
                        error_detail_set_at(err, -EINVAL, d->file, line,
                                            "metricsType is only valid on metrics artifacts");
                        return -EINVAL;
                }
                return catalog_record_builder_add(b, "artifactType",
                                                  intern_string(d, "model-artifact"));
        }
        if (!streq(a->artifact_type, "metrics-artifact")) {
                error_detail_set_at(err, -EINVAL, d->file, line, "unknown artifactType '%s'",
                                    a->artifact_type);
                return -EINVAL;
        }
        if (!a->metrics_type || !(streq(a->metrics_type, "performance-metrics") ||
                                  streq(a->metrics_type, "accuracy-metrics"))) {
                error_detail_set_at(err, -EINVAL, d->file, line,
                                    "metrics artifact needs metricsType performance-metrics or "
                                    "accuracy-metrics");
                return -EINVAL;
        }
        r = catalog_record_builder_add(b, "artifactType", intern_string(d, "metrics-artifact"));
        if (r < 0)
                return r;
        return catalog_record_builder_add(b, "metricsType", intern_string(d, a->metrics_type));
}

static int rec_string(struct catalog_record_builder *b, const char *key, const char *v)
{
        return v ? catalog_record_builder_add(b, key, json_string(v)) : 0;
}

static int rec_json(struct catalog_record_builder *b, const char *key, json_t *v)
{
        return v ? catalog_record_builder_add(b, key, json_incref(v)) : 0;
}

/*
 * Adds the other fields of a to b, in the order an artifact is served, then the load time for
 * the times it lacks (where catalog_models_stamp() places them: last, create first), so that
 * the artifact is complete before it is interned and never changed afterwards.
 */
static int artifact_to_record(struct ydoc *d, struct artifact_parse *a,
                              struct catalog_record_builder *b)
{
        const struct intern_table *t = d->userdata;
        int r;

        r = rec_string(b, "uri", a->uri);
        if (r >= 0)
                r = rec_string(b, "name", a->name);
        if (r >= 0)
                r = rec_string(b, "description", a->description);
        if (r >= 0)
                r = rec_string(b, "externalId", a->external_id);
        if (r >= 0)
                r = rec_json(b, "createTimeSinceEpoch", a->create);
        if (r >= 0)
                r = rec_json(b, "lastUpdateTimeSinceEpoch", a->update);
        /* an empty map is one shared object too (most model artifacts have none) */
        if (r >= 0 && !a->custom)
                a->custom = intern(d, json_object());
        if (r >= 0)
                r = a->custom ? rec_json(b, "customProperties", a->custom) : -ENOMEM;
        if (r >= 0 && !a->create)
                r = rec_json(b, "createTimeSinceEpoch", t->stamp);
        if (r >= 0 && !a->update)
                r = rec_json(b, "lastUpdateTimeSinceEpoch", t->stamp);
        return r;
}

/* The table key of the record b would build: intern_key()'s of the equal object, tagged 'r'. */
static int intern_record_key(struct buf *k, const struct catalog_record_builder *b)
{
        int r = key_hex(k, 'r', b->n);

        for (size_t i = 0; i < b->n && r >= 0; i++) {
                r = key_bytes(k, 'k', b->v[i].key, strlen(b->v[i].key));
                if (r >= 0)
                        r = intern_member_key(k, b->v[i].value);
        }
        return r;
}

/* Keeps a reference to rec in t under the key in t->key; -ENOMEM. */
static int intern_record_add(struct intern_table *t, struct catalog_record *rec)
{
        if (t->n_records == t->cap_records) {
                size_t cap = t->cap_records ? t->cap_records * 2 : 64;
                struct catalog_record **v = reallocarray(t->records, cap,
                                                         sizeof(struct catalog_record *));

                if (!v)
                        return -ENOMEM;
                t->records = v;
                t->cap_records = cap;
        }
        if (json_object_set_new(t->map, buf_str(&t->key), json_integer((json_int_t)t->n_records)) <
            0)
                return -ENOMEM;
        t->records[t->n_records++] = catalog_record_ref(rec);
        return 0;
}

/* The shared record of b's members (b is emptied): a new reference; -ENOMEM. */
static int intern_record(struct ydoc *d, struct catalog_record_builder *b,
                         struct catalog_record **ret)
{
        struct intern_table *t = d->userdata;
        CLEANUP(catalog_record_unrefp) struct catalog_record *rec = NULL;
        json_t *pos = NULL;
        int r;

        buf_reset(&t->key);
        r = intern_record_key(&t->key, b);
        /* a string with a NUL cannot be a key: such records stay unshared */
        if (r >= 0 && strlen(buf_str(&t->key)) == t->key.len)
                pos = json_object_get(t->map, buf_str(&t->key));
        else
                return catalog_record_build(b, ret);
        if (pos) {
                catalog_record_builder_release(b);
                *ret = catalog_record_ref(t->records[json_integer_value(pos)]);
                return 0;
        }
        r = catalog_record_build(b, &rec);
        if (r >= 0)
                r = intern_record_add(t, rec);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rec);
        return 0;
}

static int parse_artifact(struct ydoc *d, yaml_node_t *n, struct catalog_record **ret,
                          struct error_detail *err)
{
        CLEANUP(artifact_parse_release) struct artifact_parse a = { 0 };
        CLEANUP(catalog_record_builder_release) struct catalog_record_builder b = { 0 };
        unsigned line = ynode_line(n);
        int r;

        if (n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, line, "an artifact must be a mapping");
                return -EINVAL;
        }
        r = ydoc_dispatch(d, n, artifact_fields, &a, err);
        if (r < 0)
                return r;
        r = artifact_kind_add(d, &a, line, &b, err);
        if (r < 0)
                return r;
        r = artifact_to_record(d, &a, &b);
        if (r < 0)
                return r;
        /* equal artifacts (metrics of one shape, without times) are one shared record; the
         * index gives each its id by position, never by identity */
        return intern_record(d, &b, ret);
}

struct model_parse {
        char *name, *description, *readme, *maturity, *provider, *logo, *license, *license_link,
                *library_name, *external_id;
        char **language, **tasks;
        json_t *create, *update, *custom;
        yaml_node_t *artifacts;
};

static void model_parse_release(struct model_parse *m)
{
        free(m->name);
        free(m->description);
        free(m->readme);
        free(m->maturity);
        free(m->provider);
        free(m->logo);
        free(m->license);
        free(m->license_link);
        free(m->library_name);
        free(m->external_id);
        catalog_strv_free(m->language);
        catalog_strv_free(m->tasks);
        json_decref(m->create);
        json_decref(m->update);
        json_decref(m->custom);
}

static const struct yfield model_fields[] = {
        { "name", ydoc_field_string, offsetof(struct model_parse, name) },
        { "description", ydoc_field_string, offsetof(struct model_parse, description) },
        { "readme", ydoc_field_string, offsetof(struct model_parse, readme) },
        { "maturity", ydoc_field_string, offsetof(struct model_parse, maturity) },
        { "provider", ydoc_field_string, offsetof(struct model_parse, provider) },
        { "logo", ydoc_field_string, offsetof(struct model_parse, logo) },
        { "license", ydoc_field_string, offsetof(struct model_parse, license) },
        { "licenseLink", ydoc_field_string, offsetof(struct model_parse, license_link) },
        { "libraryName", ydoc_field_string, offsetof(struct model_parse, library_name) },
        { "externalId", ydoc_field_string, offsetof(struct model_parse, external_id) },
        { "language", catalog_field_strv, offsetof(struct model_parse, language) },
        { "tasks", catalog_field_strv, offsetof(struct model_parse, tasks) },
        { "createTimeSinceEpoch", field_epoch, offsetof(struct model_parse, create) },
        { "lastUpdateTimeSinceEpoch", field_epoch, offsetof(struct model_parse, update) },
        { "customProperties", field_custom_properties, offsetof(struct model_parse, custom) },
        { "artifacts", store_node, offsetof(struct model_parse, artifacts) },
        { NULL, NULL, 0 },
};

static json_t *strv_to_json(char *const *v)
{
        json_t *a = json_array();

        if (!a)
                return NULL;
        for (; v && *v; v++)
                if (json_array_append_new(a, json_string(*v)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        return a;
}

/* Parses the artifacts list (node, may be NULL) of a model into ret's artifacts. */
static int parse_artifacts(struct ydoc *d, yaml_node_t *node, struct catalog_model_data *ret,
                           struct error_detail *err)
{
        size_t count;

        if (!node || ynode_is_null(node))
                return 0;
        if (node->type != YAML_SEQUENCE_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(node),
                                    "artifacts must be a list");
                return -EINVAL;
        }
        count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
        if (count > CATALOG_ARTIFACTS_PER_MODEL_MAX) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(node),
                                    "too many artifacts (limit %u)",
                                    CATALOG_ARTIFACTS_PER_MODEL_MAX);
                return -E2BIG;
        }
        ret->artifacts = calloc(count ? count : 1, sizeof(struct catalog_record *));
        if (!ret->artifacts)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                int r = parse_artifact(d, ydoc_node(d, node->data.sequence.items.start[i]),
                                       &ret->artifacts[i], err);

                if (r < 0)
                        return r;
                ret->n_artifacts++;
        }
        return 0;
}

/* Sets key to the epoch-ms string stamp (shared) unless o already has it. */
static int stamp_missing(json_t *o, const char *key, json_t *stamp)
{
        if (json_object_get(o, key))
                return 0;
        return json_object_set(o, key, stamp) < 0 ? -ENOMEM : 0;
}

/* Moves d's tree into its record (the index reads only the record). */
static int model_compact(struct catalog_model_data *d)
{
        struct catalog_record *rec = NULL;
        int r;

        r = catalog_record_from_json(d->model, &rec);
        if (r < 0)
                return r;
        catalog_record_unref(d->rec);
        d->rec = rec;
        json_decref(d->model);
        d->model = NULL;
        return 0;
}

/* rec_string() for a value that repeats across models (a provider, a license). */
static int rec_shared_string(struct ydoc *d, struct catalog_record_builder *b, const char *key,
                             const char *v)
{
        return v ? catalog_record_builder_add(b, key, intern_string(d, v)) : 0;
}

static int rec_strv(struct ydoc *d, struct catalog_record_builder *b, const char *key,
                    char *const *v)
{
        return v ? catalog_record_builder_add(b, key, intern(d, strv_to_json(v))) : 0;
}

/* Adds the fields of m to b, in the order a model is served. */
static int model_to_record(struct ydoc *d, struct model_parse *m, struct catalog_record_builder *b)
{
        int r;

        r = rec_string(b, "name", m->name);
        if (r >= 0)
                r = rec_string(b, "description", m->description);
        if (r >= 0)
                r = rec_string(b, "readme", m->readme);
        if (r >= 0)
                r = rec_shared_string(d, b, "maturity", m->maturity);
        if (r >= 0)
                r = rec_strv(d, b, "language", m->language);
        if (r >= 0)
                r = rec_strv(d, b, "tasks", m->tasks);
        if (r >= 0)
                r = rec_shared_string(d, b, "provider", m->provider);
        if (r >= 0)
                r = rec_shared_string(d, b, "logo", m->logo);
        if (r >= 0)
                r = rec_shared_string(d, b, "license", m->license);
        if (r >= 0)
                r = rec_shared_string(d, b, "licenseLink", m->license_link);
        if (r >= 0)
                r = rec_shared_string(d, b, "libraryName", m->library_name);
        if (r >= 0)
                r = rec_string(b, "externalId", m->external_id);
        if (r >= 0)
                r = rec_json(b, "createTimeSinceEpoch", m->create);
        if (r >= 0)
                r = rec_json(b, "lastUpdateTimeSinceEpoch", m->update);
        if (r >= 0 && !m->custom)
                m->custom = intern(d, json_object());
        if (r >= 0)
                r = m->custom ? rec_json(b, "customProperties", m->custom) : -ENOMEM;
        return r;
}

/*
 * The record of a parsed model: its fields, then the load time for the times it lacks (where
 * catalog_models_stamp() places them). Built from the fields as soon as the model is parsed,
 * without a jansson object in between (a hash table and one allocation per member).
 */
static int model_record(struct ydoc *d, struct model_parse *m, struct catalog_record **ret)
{
        CLEANUP(catalog_record_builder_release) struct catalog_record_builder b = { 0 };
        const struct intern_table *t = d->userdata;
        int r;

        r = model_to_record(d, m, &b);
        if (r >= 0 && !catalog_record_builder_get(&b, "createTimeSinceEpoch"))
                r = catalog_record_builder_add(&b, "createTimeSinceEpoch", json_incref(t->stamp));
        if (r >= 0 && !catalog_record_builder_get(&b, "lastUpdateTimeSinceEpoch"))
                r = catalog_record_builder_add(&b, "lastUpdateTimeSinceEpoch",
                                               json_incref(t->stamp));
        return r < 0 ? r : catalog_record_build(&b, ret);
}

static int parse_model(struct ydoc *d, yaml_node_t *n, struct catalog_model_data *ret,
                       struct error_detail *err)
{
        CLEANUP(model_parse_release) struct model_parse m = { 0 };
        CLEANUP(catalog_model_data_release) struct catalog_model_data data = { 0 };
        unsigned line = ynode_line(n);
        int r;

        if (n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, line, "a model must be a mapping");
                return -EINVAL;
        }
        r = ydoc_dispatch(d, n, model_fields, &m, err);
        if (r < 0)
                return r;
        if (!m.name || m.name[0] == '\0') {
                error_detail_set_at(err, -EINVAL, d->file, line, "model without name");
                return -EINVAL;
        }
        r = parse_artifacts(d, m.artifacts, &data, err);
        if (r < 0)
                return r;
        r = model_record(d, &m, &data.rec);
        if (r < 0)
                return r;
        data.line = line;
        data.name = json_string_value(catalog_record_get(data.rec, "name"));
        *ret = data;
        data = (struct catalog_model_data){ 0 };
        return 0;
}

static int cmp_model_name(const void *a, const void *b)
{
        return strcmp(((const struct catalog_model_data *)a)->name,
                      ((const struct catalog_model_data *)b)->name);
}

/* Finds the models and mcp_servers nodes of the top-level mapping (root); source is ignored. */
static int catalog_top_keys(struct ydoc *d, yaml_node_t *root, yaml_node_t **ret_models,
                            yaml_node_t **ret_servers, struct error_detail *err)
{
        for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key), *v = ydoc_node(d, p->value);
                const char *key = ynode_scalar(k);
                bool known = key && (streq(key, "models") || streq(key, "mcp_servers"));

                if (key && streq(key, "source")) {
                        if (v->type != YAML_SCALAR_NODE) {
                                error_detail_set_at(err, -EINVAL, d->file, ynode_line(v),
                                                    "source must be a string");
                                return -EINVAL;
                        }
                } else if (known && streq(key, "models") && !*ret_models)
                        *ret_models = v;
                else if (known && streq(key, "mcp_servers") && !*ret_servers)
                        *ret_servers = v;
                else {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k), "%s key '%s'",
                                            known ? "duplicate" : "unknown", key ? key : "?");
                        return -EINVAL;
                }
        }
        return 0;
}

/* Checks MCP server i (as JSON in servers) has a name no earlier one has. */
static int mcp_server_check(struct ydoc *d, yaml_node_t *item, const json_t *servers, size_t i,
                            struct error_detail *err)
{
        json_t *sv = json_array_get(servers, i);
        const char *nm = json_string_value(json_object_get(sv, "name"));

        if (!json_is_object(sv) || !nm || nm[0] == '\0') {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                    "MCP server without name");
                return -EINVAL;
        }
        for (size_t j = 0; j < i; j++)
                if (streq(json_string_value(json_object_get(json_array_get(servers, j), "name")),
                          nm)) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(item),
                                            "duplicate MCP server name '%s'", nm);
                        return -EINVAL;
                }
        return 0;
}

static int parse_mcp_servers(struct ydoc *d, yaml_node_t *servers, struct catalog_models *m,
                             struct error_detail *err)
{
        int r;

        if (servers->type != YAML_SEQUENCE_NODE && !ynode_is_null(servers)) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(servers),
                                    "mcp_servers must be a list");
                return -EINVAL;
        }
        r = ydoc_to_json(d, servers, &m->mcp_servers, err);
        if (r < 0)
                return r;
        if (json_array_size(m->mcp_servers) > CATALOG_MODELS_PER_SOURCE_MAX) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(servers),
                                    "too many MCP servers");
                return -E2BIG;
        }
        for (size_t i = 0; i < json_array_size(m->mcp_servers); i++) {
                r = mcp_server_check(d, ydoc_node(d, servers->data.sequence.items.start[i]),
                                     m->mcp_servers, i, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Names are unique within a source: sorts a copy of the order to find duplicates. */
static int model_names_check(struct ydoc *d, const struct catalog_models *m,
                             struct error_detail *err)
{
        AUTOFREE struct catalog_model_data *sorted = malloc(m->n * sizeof(*sorted) + 1);

        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, m->v, m->n * sizeof(*sorted));
        qsort(sorted, m->n, sizeof(*sorted), cmp_model_name);
        for (size_t i = 1; i < m->n; i++)
                if (streq(sorted[i].name, sorted[i - 1].name)) {
                        error_detail_set_at(err, -EINVAL, d->file,
                                            MAX(sorted[i].line, sorted[i - 1].line),
                                            "duplicate model name '%s'", sorted[i].name);
                        return -EINVAL;
                }
        return 0;
}

static int parse_models(struct ydoc *d, yaml_node_t *models, struct catalog_models *m,
                        struct error_detail *err)
{
        size_t count;
        int r;

        if (models->type != YAML_SEQUENCE_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(models),
                                    "models must be a list");
                return -EINVAL;
        }
        count = (size_t)(models->data.sequence.items.top - models->data.sequence.items.start);
        if (count > CATALOG_MODELS_PER_SOURCE_MAX) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(models),
                                    "too many models (limit %u)", CATALOG_MODELS_PER_SOURCE_MAX);
                return -E2BIG;
        }
        m->v = calloc(count ? count : 1, sizeof(*m->v));
        if (!m->v)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                r = parse_model(d, ydoc_node(d, models->data.sequence.items.start[i]), &m->v[i],
                                err);
                if (r < 0)
                        return r;
                m->n++;
        }
        return model_names_check(d, m, err);
}

static int parse_catalog(struct ydoc *d, struct catalog_models *m, struct error_detail *err)
{
        yaml_node_t *root, *models = NULL, *servers = NULL;
        int r;

        r = ydoc_root_mapping(d, "a catalog file", &root, err);
        if (r < 0 || !root)
                return r;
        r = catalog_top_keys(d, root, &models, &servers, err);
        if (r < 0)
                return r;
        if (servers) {
                r = parse_mcp_servers(d, servers, m, err);
                if (r < 0)
                        return r;
        }
        if (!models || ynode_is_null(models))
                return 0;
        return parse_models(d, models, m, err);
}

/* The load time as the epoch-ms string a missing time gets (shared by every value). */
static json_t *stamp_new(int64_t load_ms)
{
        char buf[32];

        (void)snprintf(buf, sizeof(buf), "%" PRId64, load_ms);
        return json_string(buf);
}

/* Stamps the producer's artifact objects of d (stamp borrowed) and moves them into records. */
static int artifacts_compact(struct catalog_model_data *d, json_t *stamp)
{
        size_t n = json_array_size(d->artifacts_json), j;
        json_t *a;
        int r = 0;

        if (!d->artifacts_json)
                return 0;
        if (d->artifacts)
                return -EINVAL;
        d->artifacts = calloc(n ? n : 1, sizeof(struct catalog_record *));
        if (!d->artifacts)
                return -ENOMEM;
        json_array_foreach(d->artifacts_json, j, a) {
                r = stamp_missing(a, "createTimeSinceEpoch", stamp);
                if (r >= 0)
                        r = stamp_missing(a, "lastUpdateTimeSinceEpoch", stamp);
                if (r >= 0)
                        r = catalog_record_from_json(a, &d->artifacts[j]);
                if (r < 0)
                        return r;
                d->n_artifacts++;
        }
        json_decref(d->artifacts_json);
        d->artifacts_json = NULL;
        return 0;
}

/* catalog_models_stamp() with the stamp made (borrowed). */
static int models_stamp(struct catalog_models *m, json_t *stamp)
{
        int r = 0;

        for (size_t i = 0; i < m->n && r >= 0; i++) {
                struct catalog_model_data *d = &m->v[i];

                if (d->model) {
                        r = stamp_missing(d->model, "createTimeSinceEpoch", stamp);
                        if (r >= 0)
                                r = stamp_missing(d->model, "lastUpdateTimeSinceEpoch", stamp);
                        if (r >= 0)
                                r = model_compact(d);
                }
                if (r >= 0)
                        r = artifacts_compact(d, stamp);
        }
        return r;
}

int catalog_models_stamp(struct catalog_models *m, int64_t load_ms)
{
        json_auto_t *stamp = stamp_new(load_ms);

        return stamp ? models_stamp(m, stamp) : -ENOMEM;
}

int catalog_models_parse(const char *file, const char *data, size_t len,
                         struct catalog_models **ret, struct error_detail *err)
{
        CLEANUP(catalog_models_unrefp) struct catalog_models *m = NULL;
        struct intern_table table = { .key = BUF_INIT(SIZE_MAX) };
        struct ydoc d;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->refs = 1;
        r = ydoc_load(&d, file, data, len, &catalog_yaml_limits, err);
        if (r < 0)
                return r;
        table.map = json_object();
        table.stamp = stamp_new((int64_t)(now_realtime() / USEC_PER_MSEC));
        d.userdata = &table;
        r = table.map && table.stamp ? parse_catalog(&d, m, err) : -ENOMEM;
        ydoc_release(&d);
        /* no models_stamp(): models and artifacts got the stamp as they were built */
        json_decref(table.map);
        json_decref(table.stamp);
        buf_release(&table.key);
        for (size_t i = 0; i < table.n_records; i++)
                catalog_record_unref(table.records[i]);
        free(table.records);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

int catalog_models_load_file(const char *path, struct catalog_models **ret,
                             struct error_detail *err)
{
        AUTOFREE char *data = NULL;
        size_t len;
        int r;

        r = catalog_read_file_reported(path, (size_t)CATALOG_FILE_MAX, &data, &len, err);
        if (r < 0)
                return r;
        return catalog_models_parse(path, data, len, ret, err);
}
