/* SPDX-License-Identifier: Apache-2.0 */
#include "ui/access.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the Service reference ---- */

/* An RFC 1123 label: lower-case alphanumerics and '-', not at either end, 1-63 bytes. */
static bool label_valid(const char *s, size_t n)
{
        if (n == 0 || n > UI_K8S_NAME_MAX || s[0] == '-' || s[n - 1] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
                        return false;
        return true;
}

static int ref_set(struct ui_service_ref *ret, const char *ns, size_t ns_len, const char *name,
                   size_t name_len)
{
        if (!label_valid(ns, ns_len) || !label_valid(name, name_len))
                return -EINVAL;
        memcpy(ret->ns, ns, ns_len);
        ret->ns[ns_len] = 0;
        memcpy(ret->name, name, name_len);
        ret->name[name_len] = 0;
        return 0;
}

int ui_service_ref_parse(const char *s, struct ui_service_ref *ret)
{
        const char *slash = s ? strchr(s, '/') : NULL;

        if (!slash)
                return -EINVAL;
        return ref_set(ret, s, (size_t)(slash - s), slash + 1, strlen(slash + 1));
}

int ui_service_ref_from_url(const char *url, const char *own_ns, struct ui_service_ref *ret)
{
        const char *host, *end, *dot1, *dot2;

        if (!url)
                return -ENOENT;
        host = strstr(url, "://");
        if (!host)
                return -ENOENT;
        host += 3;
        end = host + strcspn(host, ":/?#");
        dot1 = memchr(host, '.', (size_t)(end - host));
        if (!dot1) /* a Service of the server's own namespace, by its short name */
                return own_ns && !(end - host == 9 && strncmp(host, "localhost", 9) == 0) &&
                                       ref_set(ret, own_ns, strlen(own_ns), host,
                                               (size_t)(end - host)) >= 0
                               ? 0
                               : -ENOENT;
        dot2 = memchr(dot1 + 1, '.', (size_t)(end - dot1 - 1));
        /* NAME.NAMESPACE.svc, then nothing or ".DOMAIN" */
        if (!dot2 || (size_t)(end - dot2) < 4 || strncmp(dot2, ".svc", 4) != 0 ||
            (dot2 + 4 != end && dot2[4] != '.'))
                return -ENOENT;
        return ref_set(ret, dot1 + 1, (size_t)(dot2 - dot1 - 1), host, (size_t)(dot1 - host)) < 0
                       ? -ENOENT
                       : 0;
}

/* ---- the review ---- */

json_t *ui_access_review_body(const struct ui_identity *id, const struct ui_service_ref *svc)
{
        bool self = id->mode == UI_AUTH_BEARER;
        json_t *body, *spec, *groups;

        body = json_pack("{s:s,s:s,s:{s:{s:s,s:s,s:s,s:s,s:s}}}", "apiVersion",
                         "authorization.k8s.io/v1", "kind",
                         self ? "SelfSubjectAccessReview" : "SubjectAccessReview", "spec",
                         "resourceAttributes", "verb", "get", "group", "", "resource", "services",
                         "namespace", svc->ns, "name", svc->name);
        if (!body || self)
                return body;
        spec = json_object_get(body, "spec");
        groups = json_array();
        if (!groups || json_object_set_new(spec, "user", json_string(id->user)) < 0 ||
            json_object_set_new(spec, "groups", groups) < 0) {
                json_decref(body);
                return NULL;
        }
        for (size_t i = 0; i < id->n_groups; i++)
                if (json_array_append_new(groups, json_string(id->groups[i])) < 0) {
                        json_decref(body);
                        return NULL;
                }
        return body;
}

const char *ui_access_review_path(const struct ui_identity *id)
{
        return id->mode == UI_AUTH_BEARER ? "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
                                          : "/apis/authorization.k8s.io/v1/subjectaccessreviews";
}

bool ui_access_review_allowed(const json_t *answer)
{
        return json_is_true(json_object_get(json_object_get(answer, "status"), "allowed"));
}

void ui_access_refusal(const char *user, const char *what, const struct ui_service_ref *svc,
                       char *msg, size_t len)
{
        (void)snprintf(msg, len,
                       "%s%s%s may not use %s: that needs permission to get the Service "
                       "\"%s\" in namespace \"%s\" (ask an administrator for a RoleBinding there "
                       "that allows get on services/%s)",
                       user && user[0] ? "user \"" : "you", user && user[0] ? user : "",
                       user && user[0] ? "\"" : "", what, svc->name, svc->ns, svc->name);
}

/* ---- the cache key ---- */

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void hash_str(gnutls_hash_hd_t h, const char *s)
{
        (void)gnutls_hash(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

int ui_access_key(const struct ui_identity *id, const struct ui_service_ref *svc,
                  uint8_t ret[UI_ACCESS_KEY_SIZE])
{
        const char *sorted[UI_GROUPS_MAX];
        size_t n = MIN(id->n_groups, (size_t)UI_GROUPS_MAX);
        gnutls_hash_hd_t h;
        uint8_t mode = (uint8_t)id->mode;

        if (gnutls_hash_init(&h, GNUTLS_DIG_SHA256) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                sorted[i] = id->groups[i];
        if (n > 1)
                qsort(sorted, n, sizeof(sorted[0]), cmp_str);
        (void)gnutls_hash(h, &mode, 1);
        hash_str(h, id->mode == UI_AUTH_BEARER ? id->token : id->user);
        for (size_t i = 0; i < n; i++)
                hash_str(h, sorted[i]);
        (void)gnutls_hash(h, "\n", 1); /* the groups end here */
        hash_str(h, svc->ns);
        hash_str(h, svc->name);
        gnutls_hash_deinit(h, ret);
        return 0;
}

/* ---- the cache ---- */

#define WAYS 4U

struct access_entry {
        uint8_t key[UI_ACCESS_KEY_SIZE];
        usec_t expires; /* 0: empty */
        bool allowed;
};

struct ui_access_cache {
        usec_t ttl_allow, ttl_deny;
        size_t n_sets;
        struct access_entry *e; /* n_sets * WAYS */
};

int ui_access_cache_new(size_t capacity, usec_t ttl_allow, usec_t ttl_deny,
                        struct ui_access_cache **ret)
{
        struct ui_access_cache *c;
        size_t sets = MAX(capacity / WAYS, (size_t)1);

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->e = calloc(sets * WAYS, sizeof(*c->e));
        if (!c->e) {
                free(c);
                return -ENOMEM;
        }
        c->n_sets = sets;
        c->ttl_allow = ttl_allow;
        c->ttl_deny = ttl_deny;
        *ret = c;
        return 0;
}

struct ui_access_cache *ui_access_cache_free(struct ui_access_cache *c)
{
        if (!c)
                return NULL;
        explicit_bzero(c->e, c->n_sets * WAYS * sizeof(*c->e));
        free(c->e);
        free(c);
        return NULL;
}

static struct access_entry *set_of(struct ui_access_cache *c, const uint8_t *key)
{
        uint64_t h;

        memcpy(&h, key, sizeof(h)); /* a digest: any 8 bytes are uniform */
        return &c->e[(h % c->n_sets) * WAYS];
}

int ui_access_cache_get(struct ui_access_cache *c, const uint8_t key[UI_ACCESS_KEY_SIZE],
                        usec_t now)
{
        struct access_entry *set;
        int r = -ENOENT;

        set = set_of(c, key);
        for (size_t i = 0; i < WAYS; i++)
                if (set[i].expires > now && memcmp(set[i].key, key, UI_ACCESS_KEY_SIZE) == 0) {
                        r = set[i].allowed ? 1 : 0;
                        break;
                }
        return r;
}

void ui_access_cache_put(struct ui_access_cache *c, const uint8_t key[UI_ACCESS_KEY_SIZE],
                         bool allowed, usec_t now)
{
        struct access_entry *set, *slot;
        usec_t ttl = allowed ? c->ttl_allow : c->ttl_deny;

        if (ttl == 0)
                return;
        set = set_of(c, key);
        slot = &set[0];
        for (size_t i = 0; i < WAYS; i++) {
                if (memcmp(set[i].key, key, UI_ACCESS_KEY_SIZE) == 0) {
                        slot = &set[i];
                        break;
                }
                if (set[i].expires < slot->expires)
                        slot = &set[i];
        }
        memcpy(slot->key, key, UI_ACCESS_KEY_SIZE);
        slot->allowed = allowed;
        slot->expires = now + ttl;
}
