/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/registries.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/deploy.h"

#define ADDRESS_MAX 253U

static bool streq_opt(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

/* A host[:port] or an IP address as it may go into a URL: no user info, path, query or space. */
static bool address_valid(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n > ADDRESS_MAX)
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") ==
               n;
}

/* The annotation ".../external-address-rest" (any prefix), or NULL. */
static const char *external_address(const json_t *annotations)
{
        static const char suffix[] = "/external-address-rest";
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)annotations, key, v) {
                size_t n = strlen(key);

                if (n > sizeof(suffix) - 1 && streq(key + n - (sizeof(suffix) - 1), suffix) &&
                    json_is_string(v))
                        return json_string_value(v);
        }
        return NULL;
}

/* The port named http-api or https-api: its number, or 0. */
static long api_port(const json_t *service, bool *ret_https)
{
        const json_t *p;
        size_t i;

        json_array_foreach(json_get_path(service, "spec", "ports", NULL), i, p) {
                const char *name = json_string_value(json_object_get(p, "name"));
                json_int_t port = json_integer_value(json_object_get(p, "port"));

                if ((streq_opt(name, "http-api") || streq_opt(name, "https-api")) && port > 0 &&
                    port <= 65535) {
                        *ret_https = streq(name, "https-api");
                        return (long)port;
                }
        }
        return 0;
}

static int set_url(struct ui_registry *reg, const char *host, long port)
{
        const char *scheme = reg->https ? "https" : "http";
        bool v6 = strchr(host, ':') && host[0] != '[';
        int n;

        if (port > 0)
                n = snprintf(reg->url, sizeof(reg->url), "%s://%s%s%s:%ld", scheme, v6 ? "[" : "",
                             host, v6 ? "]" : "", port);
        else
                n = snprintf(reg->url, sizeof(reg->url), "%s://%s", scheme, host);
        return n > 0 && (size_t)n < sizeof(reg->url) ? 0 : -EINVAL;
}

int ui_registry_from_service(const json_t *service, bool external, struct ui_registry *ret,
                             char *msg, size_t len)
{
        const char *name = json_get_string_path(service, "metadata", "name", NULL);
        const char *ns = json_get_string_path(service, "metadata", "namespace", NULL);
        const char *comp = json_get_string_path(service, "metadata", "labels", "component", NULL);
        const json_t *ann = json_get_path(service, "metadata", "annotations", NULL);
        const char *ip = json_get_string_path(service, "spec", "clusterIP", NULL);
        const char *ext = external ? external_address(ann) : NULL;
        struct ui_registry reg = { 0 };
        long port;

        if (!streq_opt(comp, "model-registry"))
                return -ENOENT;
        if (!ui_rfc1123_label(name) || !ui_rfc1123_label(ns)) {
                (void)snprintf(msg, len, "a model registry Service needs a name and a namespace");
                return -EINVAL;
        }
        port = api_port(service, &reg.https);
        if (port == 0) {
                (void)snprintf(msg, len, "Service %s/%s has no port named http-api or https-api",
                               ns, name);
                return -EINVAL;
        }
        if (ext && !address_valid(ext)) {
                (void)snprintf(msg, len, "Service %s/%s: its external-address-rest is not a host",
                               ns, name);
                return -EINVAL;
        }
        if (!ext && (!address_valid(ip) || streq(ip, "None"))) {
                (void)snprintf(msg, len, "Service %s/%s has no cluster IP", ns, name);
                return -EINVAL;
        }
        if (set_url(&reg, ext ? ext : ip, ext ? 0 : port) < 0) {
                (void)snprintf(msg, len, "Service %s/%s: its address is too long", ns, name);
                return -EINVAL;
        }
        memcpy(reg.name, name, strlen(name) + 1);
        memcpy(reg.svc.name, name, strlen(name) + 1);
        memcpy(reg.svc.ns, ns, strlen(ns) + 1);
        reg.display_name = json_string_value(json_object_get(ann, "displayName"));
        reg.description = json_string_value(json_object_get(ann, "description"));
        *ret = reg;
        return 0;
}

json_t *ui_registry_entry(const struct ui_registry *reg, bool available)
{
        char addr[UI_REGISTRY_URL_MAX + sizeof(UI_REGISTRY_API_PATH)];

        (void)snprintf(addr, sizeof(addr), "%s%s", reg->url, UI_REGISTRY_API_PATH);
        return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "name", reg->name, "displayName",
                         reg->display_name ? reg->display_name : "", "description",
                         reg->description ? reg->description : "", "serverAddress", addr, "isHttps",
                         reg->https, "isAvailable", available);
}

bool ui_endpoints_ready(const json_t *endpoints)
{
        const json_t *sub;
        size_t i;

        json_array_foreach(json_object_get(endpoints, "subsets"), i, sub)
                if (json_array_size(json_object_get(sub, "addresses")) > 0)
                        return true;
        return false;
}

/* Whether the array a (of strings) holds s or "*". */
static bool has_or_star(const json_t *a, const char *s)
{
        const json_t *v;
        size_t i;

        json_array_foreach(a, i, v) {
                const char *x = json_string_value(v);

                if (streq_opt(x, s) || streq_opt(x, "*"))
                        return true;
        }
        return false;
}

static bool has_string(const json_t *a, const char *s)
{
        const json_t *v;
        size_t i;

        json_array_foreach(a, i, v)
                if (streq_opt(json_string_value(v), s))
                        return true;
        return false;
}

int ui_rules_service_names(const json_t *review, size_t max, json_t *names)
{
        const json_t *rule, *n;
        size_t i, j;

        json_array_foreach(json_get_path(review, "status", "resourceRules", NULL), i, rule) {
                if (!has_or_star(json_object_get(rule, "resources"), "services") ||
                    !has_or_star(json_object_get(rule, "verbs"), "get") ||
                    !has_or_star(json_object_get(rule, "apiGroups"), ""))
                        continue;
                json_array_foreach(json_object_get(rule, "resourceNames"), j, n) {
                        const char *s = json_string_value(n);

                        if (json_array_size(names) >= max)
                                return 0;
                        if (!ui_rfc1123_label(s) || has_string(names, s))
                                continue;
                        if (json_array_append_new(names, json_string(s)) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

json_t *ui_rules_review_body(const char *ns)
{
        return json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "authorization.k8s.io/v1", "kind",
                         "SelfSubjectRulesReview", "spec", "namespace", ns);
}
