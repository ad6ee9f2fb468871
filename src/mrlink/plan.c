/* SPDX-License-Identifier: Apache-2.0 */
#include "mrlink/plan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"

static const char *label_of(const json_t *labels, const char *key, bool *ret_has)
{
        json_t *v = json_object_get(labels, key);

        *ret_has = v != NULL;
        return json_string_value(v);
}

static bool has_finalizer(const json_t *isvc, const char *finalizer)
{
        json_t *f = json_get_path(isvc, "metadata", "finalizers", NULL), *e;
        size_t i;

        json_array_foreach(f, i, e)
                if (json_string_value(e) && streq(json_string_value(e), finalizer))
                        return true;
        return false;
}

int mrlink_isvc_read(const struct mrlink_config *cfg, const json_t *isvc, struct mrlink_isvc *ret)
{
        const json_t *labels = json_get_path(isvc, "metadata", "labels", NULL);
        const json_t *ann = json_get_path(isvc, "metadata", "annotations", NULL);
        struct mrlink_isvc v = { 0 };
        bool has_ns;
        const char *ns_label;

        v.ns = json_get_string_path(isvc, "metadata", "namespace", NULL);
        v.name = json_get_string_path(isvc, "metadata", "name", NULL);
        if (!v.ns || !v.name)
                return -EINVAL;
        v.uid = json_get_string_path(isvc, "metadata", "uid", NULL);
        v.resource_version = json_get_string_path(isvc, "metadata", "resourceVersion", NULL);
        v.isid = label_of(labels, cfg->isid_label, &v.has_isid);
        v.rmid = label_of(labels, cfg->rmid_label, &v.has_rmid);
        v.mvid = label_of(labels, cfg->mvid_label, &(bool){ false });
        if (v.mvid && !*v.mvid)
                v.mvid = NULL;
        v.mr_name = label_of(labels, cfg->name_label, &v.has_name);
        v.mr_url = label_of(ann, cfg->url_annotation, &v.has_url);
        ns_label = label_of(labels, cfg->namespace_label, &has_ns);
        v.mr_namespace = has_ns && ns_label ? ns_label : cfg->registries_namespace;
        v.status_url = json_get_string_path(isvc, "status", "url", NULL);
        v.runtime = json_get_string_path(isvc, "spec", "predictor", "model", "runtime", NULL);
        v.deletion_timestamp = json_get_string_path(isvc, "metadata", "deletionTimestamp", NULL);
        v.has_finalizer = has_finalizer(isvc, cfg->finalizer);
        *ret = v;
        return 0;
}

int mrlink_tm_read(const struct mrlink_config *cfg, const json_t *tm, struct mrlink_isvc *ret)
{
        struct mrlink_isvc v;
        int k;

        k = mrlink_isvc_read(cfg, tm, &v);
        if (k < 0)
                return k;
        v.has_isid = false;
        v.isid = NULL;
        v.has_finalizer = false;
        v.runtime = NULL;
        v.parent = json_get_string_path(tm, "spec", "inferenceService", NULL);
        *ret = v;
        return 0;
}

bool mrlink_tm_relevant(const struct mrlink_config *cfg, const json_t *tm)
{
        return json_object_get(json_get_path(tm, "metadata", "labels", NULL), cfg->rmid_label);
}

json_t *mrlink_tm_properties(const char *parent)
{
        return json_pack("{s:{s:s,s:s}}", "trainedModelInferenceService", "metadataType",
                         "MetadataStringValue", "string_value", parent ? parent : "");
}

bool mrlink_isvc_relevant(const struct mrlink_config *cfg, const json_t *isvc)
{
        const json_t *labels = json_get_path(isvc, "metadata", "labels", NULL);

        return json_object_get(labels, cfg->isid_label) ||
               json_object_get(labels, cfg->rmid_label) || has_finalizer(isvc, cfg->finalizer);
}

int mrlink_service_url(const struct mrlink_config *cfg, const json_t *svc, char *buf, size_t len)
{
        const char *ext = json_get_string_path(svc, "metadata", "annotations",
                                               cfg->service_annotation, NULL);
        const char *name = json_get_string_path(svc, "metadata", "name", NULL);
        const char *ns = json_get_string_path(svc, "metadata", "namespace", NULL);
        json_t *ports = json_get_path(svc, "spec", "ports", NULL), *p;
        size_t i;
        int n;

        if (ext) {
                n = snprintf(buf, len, "https://%s", ext);
                return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
        }
        if (!name || !ns)
                return -EINVAL;
        json_array_foreach(ports, i, p) {
                const char *pn = json_string_value(json_object_get(p, "name"));
                json_t *port = json_object_get(p, "port");

                if (!pn || !streq(pn, "http-api") || !json_is_integer(port))
                        continue;
                n = snprintf(buf, len, "http://%s.%s.svc.cluster.local:%" JSON_INTEGER_FORMAT, name,
                             ns, json_integer_value(port));
                return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
        }
        return -ENOPROTOOPT;
}

int mrlink_pick_service(const json_t *items, const json_t **ret_svc, char *names, size_t names_len)
{
        size_t n = json_array_size(items), used = 0;

        if (names_len > 0)
                names[0] = '\0';
        if (n == 0)
                return -ENOENT;
        if (n > 1) {
                for (size_t i = 0; i < n && used < names_len; i++) {
                        const char *nm = json_get_string_path(json_array_get(items, i), "metadata",
                                                              "name", NULL);
                        int k = snprintf(names + used, names_len - used, "%s%s", i > 0 ? ", " : "",
                                         nm ? nm : "?");
                        if (k < 0)
                                break;
                        used += (size_t)k;
                }
                return -ENOTUNIQ;
        }
        *ret_svc = json_array_get(items, 0);
        return 0;
}

int mrlink_rewrite_url(const char *map, const char *url, char *buf, size_t len)
{
        size_t ulen = strlen(url);
        const char *p = map;
        int n;

        while (p && *p) {
                const char *end = strchr(p, ','), *eq;
                size_t elen = end ? (size_t)(end - p) : strlen(p);

                eq = memchr(p, '=', elen);
                if (eq && (size_t)(eq - p) == ulen && strncmp(p, url, ulen) == 0) {
                        size_t tlen = elen - ulen - 1;

                        if (tlen >= len)
                                return -ENAMETOOLONG;
                        memcpy(buf, eq + 1, tlen);
                        buf[tlen] = '\0';
                        return 0;
                }
                p = end ? end + 1 : NULL;
        }
        n = snprintf(buf, len, "%s", url);
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *mrlink_record_url(const json_t *record)
{
        return json_get_string_path(record, "customProperties", "url", "string_value", NULL);
}

bool mrlink_url_differs(const json_t *record, const char *status_url)
{
        const char *cur = mrlink_record_url(record);

        if (!cur)
                cur = "";
        if (!status_url)
                return *cur != '\0';
        return !streq(cur, status_url);
}

json_t *mrlink_url_patch(const json_t *record, const char *status_url)
{
        json_t *props = json_object_get(record, "customProperties");
        json_auto_t *copy = json_is_object(props) ? json_deep_copy(props) : json_object();

        if (!copy)
                return NULL;
        if (json_object_set_new(copy, "url",
                                json_pack("{s:s,s:s}", "metadataType", "MetadataStringValue",
                                          "string_value", status_url ? status_url : "")) < 0)
                return NULL;
        return json_pack("{s:O}", "customProperties", copy);
}

static bool version_differs(const json_t *record, const char *mvid)
{
        json_t *cur = json_object_get(record, "modelVersionId");
        char b[32];

        if (json_is_integer(cur)) {
                (void)snprintf(b, sizeof(b), "%" JSON_INTEGER_FORMAT, json_integer_value(cur));
                return !streq(b, mvid);
        }
        return !json_is_string(cur) || !streq(json_string_value(cur), mvid);
}

int mrlink_record_patch(const json_t *record, const struct mrlink_record_want *want, json_t **ret)
{
        const char *state = json_string_value(json_object_get(record, "desiredState"));
        json_auto_t *patch = json_object();

        *ret = NULL;
        if (!patch)
                return -ENOMEM;
        if (mrlink_url_differs(record, want->url)) {
                json_auto_t *p = mrlink_url_patch(record, want->url);

                if (!p || json_object_update(patch, p) < 0)
                        return -ENOMEM;
        }
        if (want->follow_version && want->mvid && version_differs(record, want->mvid) &&
            json_object_set_new(patch, "modelVersionId", json_string(want->mvid)) < 0)
                return -ENOMEM;
        if (want->deployed && (!state || !streq(state, "DEPLOYED")) &&
            json_object_set_new(patch, "desiredState", json_string("DEPLOYED")) < 0)
                return -ENOMEM;
        if (json_object_size(patch) > 0)
                *ret = TAKE_PTR(patch);
        return 0;
}

bool mrlink_needs_undeploy(const json_t *record)
{
        const char *s = json_string_value(json_object_get(record, "desiredState"));

        return s && !streq(s, "UNDEPLOYED");
}

const char *mrlink_record_id(const json_t *record, char *buf, size_t len)
{
        json_t *id = json_object_get(record, "id");

        if (json_is_string(id) && *json_string_value(id))
                return json_string_value(id);
        if (json_is_integer(id)) {
                int n = snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(id));
                return n < 0 || (size_t)n >= len ? NULL : buf;
        }
        return NULL;
}

bool mrlink_undeploy_expired(const char *deletion_timestamp, usec_t now, usec_t timeout,
                             usec_t *ret_remaining)
{
        usec_t t;

        *ret_remaining = 0;
        if (!deletion_timestamp || parse_rfc3339(deletion_timestamp, &t) < 0)
                return true;
        if (now >= t && now - t >= timeout)
                return true;
        *ret_remaining = now >= t ? timeout - (now - t) : timeout;
        return false;
}

usec_t mrlink_undeploy_retry_delay(usec_t elapsed, usec_t remaining)
{
        usec_t d = elapsed / 4;

        if (d < USEC_PER_SEC)
                d = USEC_PER_SEC;
        if (d > 60 * USEC_PER_SEC)
                d = 60 * USEC_PER_SEC;
        if (d > remaining + USEC_PER_SEC)
                d = remaining + USEC_PER_SEC;
        return d;
}

int mrlink_fingerprint(const struct mrlink_isvc *v, const char *id, char *buf, size_t len)
{
        /* fields separated by \x1f; absent values as \x1e so that absent != empty */
#define F(s) ((s) ? (s) : "\x1e")
        int n = snprintf(
                buf, len,
                "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%d\x1f%d",
                F(v->uid), F(id ? id : v->isid), F(v->rmid), F(v->mvid), F(v->mr_name),
                F(v->mr_url), F(v->mr_namespace), F(v->status_url), F(v->runtime), F(v->parent),
                F(v->deletion_timestamp), v->has_finalizer, v->has_isid || id);
#undef F
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

json_t *mrlink_finalizer_patch(const json_t *isvc, const char *finalizer, bool add, const char *rv)
{
        json_t *f = json_get_path(isvc, "metadata", "finalizers", NULL), *e;
        json_auto_t *list = json_array();
        size_t i;

        if (!list)
                return NULL;
        json_array_foreach(f, i, e) {
                const char *s = json_string_value(e);
                if (s && streq(s, finalizer))
                        continue;
                if (json_array_append(list, e) < 0)
                        return NULL;
        }
        if (add && json_array_append_new(list, json_string(finalizer)) < 0)
                return NULL;
        if (rv)
                return json_pack("{s:{s:O,s:s}}", "metadata", "finalizers", list, "resourceVersion",
                                 rv);
        return json_pack("{s:{s:O}}", "metadata", "finalizers", list);
}
