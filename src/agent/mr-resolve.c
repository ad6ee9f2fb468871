/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/mr-resolve.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/mr-uri.h"
#include "json/json-util.h"
#include "registry-client/client.h"
#include "util/log.h"

static const char *env(const char *name)
{
        const char *v = getenv(name); /* NOLINT(concurrency-mt-unsafe): read at start-up */

        return v && *v ? v : NULL;
}

/* "host:port" or a URL -> a URL without a trailing '/'. */
static char *base_of(const char *v, const char *scheme)
{
        char *out = NULL;
        size_t n;

        if (strstr(v, "://"))
                out = strdup(v);
        else if (asprintf(&out, "%s://%s", scheme, v) < 0)
                out = NULL;
        if (!out)
                return NULL;
        n = strlen(out);
        while (n > 0 && out[n - 1] == '/')
                out[--n] = '\0';
        return out;
}

static int allowed_from(const char *list, struct mr_resolve_config *c)
{
        const char *p = list;

        while (p && *p) {
                size_t l = strcspn(p, ",");
                const char *s = p, *e = p + l;
                char **n;

                while (s < e && (*s == ' ' || *s == '\t'))
                        s++;
                while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
                        e--;
                if (e > s) {
                        n = reallocarray(c->allowed, c->n_allowed + 1, sizeof(*n));
                        if (!n)
                                return -ENOMEM;
                        c->allowed = n;
                        c->allowed[c->n_allowed] = strndup(s, (size_t)(e - s));
                        if (!c->allowed[c->n_allowed])
                                return -ENOMEM;
                        c->n_allowed++;
                }
                p += l + (p[l] == ',');
        }
        return 0;
}

int mr_resolve_config_from_env(struct mr_resolve_config *c)
{
        const char *scheme = env("MODEL_REGISTRY_SCHEME");

        *c = (struct mr_resolve_config){ 0 };
        c->scheme = strdup(scheme ? scheme : "http");
        if (!c->scheme)
                return -ENOMEM;
        c->base_url = base_of(env("MODEL_REGISTRY_BASE_URL") ? env("MODEL_REGISTRY_BASE_URL")
                                                             : "localhost:8080",
                              c->scheme);
        if (!c->base_url)
                return -ENOMEM;
        c->service_name = strdup(env("MODEL_REGISTRY_SERVICE_NAME")
                                         ? env("MODEL_REGISTRY_SERVICE_NAME")
                                         : "model-registry-service");
        c->cluster_domain = strdup(env("MODEL_REGISTRY_CLUSTER_DOMAIN")
                                           ? env("MODEL_REGISTRY_CLUSTER_DOMAIN")
                                           : "svc.cluster.local");
        if (!c->service_name || !c->cluster_domain)
                return -ENOMEM;
        if (env("MODEL_REGISTRY_TOKEN") && !(c->token = strdup(env("MODEL_REGISTRY_TOKEN"))))
                return -ENOMEM;
        return allowed_from(env("ALLOWED_ARTIFACT_URI_PREFIXES"), c);
}

void mr_resolve_config_release(struct mr_resolve_config *c)
{
        free(c->base_url);
        free(c->scheme);
        free(c->service_name);
        free(c->cluster_domain);
        if (c->token)
                explicit_bzero(c->token, strlen(c->token));
        free(c->token);
        free(c->ca_file);
        for (size_t i = 0; i < c->n_allowed; i++)
                free(c->allowed[i]);
        free(c->allowed);
        *c = (struct mr_resolve_config){ 0 };
}

/* One resolution: the client and what the messages name. */
struct res {
        const struct mr_resolve_config *c;
        struct mr_client *m;
        const char *uri, *url;
        struct mr_uri u;
        char *err;
        size_t len;
};

static int say(struct res *x, int r, const char *fmt, ...) _printf_(3, 4);
static int say(struct res *x, int r, const char *fmt, ...)
{
        char what[512];
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        (void)snprintf(x->err, x->len, "%.300s: %s", x->uri, what);
        return r;
}

/* A failed registry call: not found is the caller's to word; the rest names the registry. */
static int call_failed(struct res *x, int r, const struct error_detail *e, const char *what)
{
        if (r == -ENOMEM)
                return r;
        if (e->status)
                return say(x, r,
                           "the model registry at %s answered HTTP %d while looking up %s: %s",
                           x->url, e->status, what,
                           e->message[0] ? e->message : errno_to_string(r));
        return say(x, r, "the model registry at %s failed while looking up %s: %s", x->url, what,
                   e->message[0] ? e->message : errno_to_string(r));
}

static bool archived(const json_t *o)
{
        const char *st = json_string_value(json_object_get(o, "state"));

        return st && streq(st, "ARCHIVED");
}

static int find_model(struct res *x, json_t **ret)
{
        struct error_detail e = { 0 };
        int r = mr_find_registered_model(x->m, x->u.model, ret, &e);

        if (r == -ENOENT)
                return say(x, r, "no registered model named \"%s\" in the model registry at %s",
                           x->u.model, x->url);
        if (r < 0)
                return call_failed(x, r, &e, "the registered model");
        if (archived(*ret))
                return say(x, -EACCES, "the registered model \"%s\" is archived", x->u.model);
        return 0;
}

static int latest_version(struct res *x, const char *mid, json_t **ret)
{
        AUTOFREE char *token = NULL;
        unsigned archived_seen = 0;

        for (unsigned page = 0; page < MR_RESOLVE_PAGES_MAX; page++) {
                json_auto_t *list = NULL;
                AUTOFREE char *q = NULL;
                struct error_detail e = { 0 };
                const char *next;
                json_t *v;
                size_t i;
                int r;

                if (asprintf(&q, "orderBy=CREATE_TIME&sortOrder=DESC&pageSize=100%s%s",
                             token ? "&nextPageToken=" : "", token ? token : "") < 0)
                        return -ENOMEM;
                r = mr_get_under(x->m, "/registered_models", mid, "/versions", q, &list, &e);
                if (r < 0)
                        return call_failed(x, r, &e, "the versions");
                json_array_foreach(json_object_get(list, "items"), i, v) {
                        if (archived(v)) {
                                archived_seen++;
                                continue;
                        }
                        *ret = json_incref(v);
                        return 0;
                }
                next = json_string_value(json_object_get(list, "nextPageToken"));
                if (!next || !*next)
                        break;
                free(token);
                token = strdup(next);
                if (!token)
                        return -ENOMEM;
        }
        if (archived_seen)
                return say(x, -EACCES, "every version of the model \"%s\" is archived (%u)",
                           x->u.model, archived_seen);
        return say(x, -ENOENT, "the registered model \"%s\" has no version", x->u.model);
}

static int find_version(struct res *x, const char *mid, json_t **ret)
{
        struct error_detail e = { 0 };
        int r;

        if (!x->u.version)
                return latest_version(x, mid, ret);
        r = mr_find_model_version(x->m, x->u.version, mid, ret, &e);
        if (r == -ENOENT)
                return say(x, r, "the registered model \"%s\" has no version named \"%s\"",
                           x->u.model, x->u.version);
        if (r < 0)
                return call_failed(x, r, &e, "the version");
        if (archived(*ret))
                return say(x, -EACCES, "version \"%s\" of the model \"%s\" is archived",
                           x->u.version, x->u.model);
        return 0;
}

static bool prefix_allowed(const struct mr_resolve_config *c, const char *uri)
{
        if (c->n_allowed == 0)
                return true;
        for (size_t i = 0; i < c->n_allowed; i++)
                if (strncmp(uri, c->allowed[i], strlen(c->allowed[i])) == 0)
                        return true;
        return false;
}

static int artifact_uri(struct res *x, const json_t *version, char **ret)
{
        const char *vid = json_string_value(json_object_get(version, "id"));
        const char *vname = json_string_value(json_object_get(version, "name"));
        json_auto_t *list = NULL;
        struct error_detail e = { 0 };
        json_t *a;
        size_t i;
        int r;

        if (!vid)
                return say(x, -EIO, "the model registry at %s answered a version without an id",
                           x->url);
        r = mr_get_under(x->m, "/model_versions", vid, "/artifacts",
                         "artifactType=model-artifact&orderBy=CREATE_TIME&sortOrder=DESC&"
                         "pageSize=100",
                         &list, &e);
        if (r < 0)
                return call_failed(x, r, &e, "the version's artifacts");
        json_array_foreach(json_object_get(list, "items"), i, a) {
                const char *uri = json_string_value(json_object_get(a, "uri"));
                const char *type = json_string_value(json_object_get(a, "artifactType"));

                if (!uri || !*uri || (type && !streq(type, "model-artifact")))
                        continue;
                if (mr_uri_is(uri))
                        return say(x, -ELOOP,
                                   "the model artifact of version \"%s\" is itself a "
                                   "model-registry:// URI (%.200s)",
                                   vname ? vname : vid, uri);
                if (!prefix_allowed(x->c, uri))
                        return say(x, -EACCES,
                                   "the model artifact URI %.200s is outside "
                                   "ALLOWED_ARTIFACT_URI_PREFIXES",
                                   uri);
                *ret = strdup(uri);
                return *ret ? 0 : -ENOMEM;
        }
        return say(x, -ENOENT,
                   "version \"%s\" of the model \"%s\" has no model artifact with a URI",
                   vname ? vname : vid, x->u.model);
}

int mr_resolve(const struct mr_resolve_config *c, const char *uri, char **ret_uri, char *err,
               size_t len)
{
        struct res x = { .c = c, .uri = uri, .err = err, .len = len };
        CLEANUP(mr_client_freep) struct mr_client *m = NULL;
        AUTOFREE char *host_url = NULL;
        json_auto_t *model = NULL, *version = NULL;
        const char *mid;
        int r;

        r = mr_uri_parse(uri, &x.u, err, len);
        if (r < 0)
                return r;
        if (x.u.host)
                host_url = base_of(x.u.host, c->scheme ? c->scheme : "http");
        else if (x.u.ns)
                host_url = mr_uri_namespace_url(
                        c->scheme ? c->scheme : "http",
                        c->service_name ? c->service_name : "model-registry-service", x.u.ns,
                        c->cluster_domain ? c->cluster_domain : "svc.cluster.local", c->base_url);
        if ((x.u.host || x.u.ns) && !host_url) {
                mr_uri_release(&x.u);
                return -ENOMEM;
        }
        x.url = host_url ? host_url : c->base_url;
        r = mr_client_new(&(struct mr_client_config){ .base_url = x.url,
                                                      .token = c->token,
                                                      .ca_file = c->ca_file,
                                                      .timeout_ms = c->timeout_ms,
                                                      .transport = c->transport },
                          &m);
        if (r < 0) {
                mr_uri_release(&x.u);
                return r == -ENOMEM ? r : say(&x, r, "bad model registry URL %s", x.url);
        }
        x.m = m;
        r = find_model(&x, &model);
        mid = r >= 0 ? json_string_value(json_object_get(model, "id")) : NULL;
        if (r >= 0 && !mid)
                r = say(&x, -EIO, "the model registry at %s answered a model without an id", x.url);
        if (r >= 0)
                r = find_version(&x, mid, &version);
        if (r >= 0)
                r = artifact_uri(&x, version, ret_uri);
        mr_uri_release(&x.u);
        return r;
}
