/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/oci.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json/json-util.h"

void oci_ref_release(struct oci_ref *r)
{
        free(r->host);
        free(r->repository);
        free(r->tag);
        free(r->digest);
        *r = (struct oci_ref){ 0 };
}

static bool is_lower_alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool oci_digest_valid(const char *s)
{
        if (!s || !strneq(s, "sha256:", 7) || strlen(s) != 7 + 64)
                return false;
        for (const char *p = s + 7; *p; p++)
                if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
                        return false;
        return true;
}

/* A path component: [a-z0-9]+ joined by '.', '_', "__" or any number of '-'. */
static bool component_valid(const char *s, size_t n)
{
        size_t i = 0;

        if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
                return false;
        while (i < n) {
                if (is_lower_alnum(s[i])) {
                        i++;
                        continue;
                }
                if (s[i] == '.' || (s[i] == '_' && s[i + 1] != '_')) {
                        i++;
                } else if (s[i] == '_' && i + 2 < n && s[i + 2] != '_') {
                        i += 2;
                } else if (s[i] == '-') {
                        while (i < n && s[i] == '-')
                                i++;
                } else {
                        return false;
                }
                if (i >= n || !is_lower_alnum(s[i]))
                        return false;
        }
        return true;
}

static bool repository_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > OCI_REPOSITORY_MAX)
                return false;
        for (const char *p = s;;) {
                size_t len = strcspn(p, "/");

                if (!component_valid(p, len))
                        return false;
                if (!p[len])
                        return true;
                p += len + 1;
        }
}

static bool tag_valid(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > OCI_TAG_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || (i > 0 && (c == '.' || c == '-'));

                if (!ok)
                        return false;
        }
        return true;
}

static bool host_valid(const char *s, size_t n)
{
        if (n == 0 || n > 253)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
                        return false;
        }
        return true;
}

static int ref_invalid(struct error_detail *e, const char *s, const char *why)
{
        return error_detail_set(e, ERROR_INVALID, -EINVAL, "'%.200s' is not an image reference: %s",
                                s, why);
}

/* Splits "name[:tag][@digest]" (name without its host) into @ret. */
static int ref_split_name(const char *orig, const char *name, struct oci_ref *ret,
                          struct error_detail *e)
{
        const char *at = strchr(name, '@'), *slash, *colon;
        size_t namelen;

        if (at) {
                if (!oci_digest_valid(at + 1))
                        return ref_invalid(e, orig, "the digest is not sha256:<64 hex digits>");
                ret->digest = strdup(at + 1);
                if (!ret->digest)
                        return -ENOMEM;
        }
        namelen = at ? (size_t)(at - name) : strlen(name);
        slash = memrchr(name, '/', namelen);
        colon = memrchr(slash ? slash : name, ':',
                        namelen - (size_t)((slash ? slash : name) - name));
        if (colon) {
                ret->tag = strndup(colon + 1, namelen - (size_t)(colon + 1 - name));
                if (!ret->tag)
                        return -ENOMEM;
                if (!tag_valid(ret->tag))
                        return ref_invalid(e, orig, "the tag is not [A-Za-z0-9_][A-Za-z0-9._-]*");
                namelen = (size_t)(colon - name);
        } else if (!at) {
                ret->tag = strdup("latest");
                if (!ret->tag)
                        return -ENOMEM;
        }
        ret->repository = strndup(name, namelen);
        if (!ret->repository)
                return -ENOMEM;
        if (!repository_valid(ret->repository))
                return ref_invalid(e, orig,
                                   "the repository is not lowercase [a-z0-9] components "
                                   "separated by '/', '.', '_' or '-'");
        return 0;
}

int oci_ref_parse(const char *s, struct oci_ref *ret, struct error_detail *e)
{
        const char *name = s, *slash;
        size_t first;
        int r;

        *ret = (struct oci_ref){ 0 };
        if (!s || !*s)
                return ref_invalid(e, "", "empty");
        if (strlen(s) > OCI_REFERENCE_MAX)
                return ref_invalid(e, s, "longer than 1024 bytes");
        if (strneq(name, "oci://", 6))
                name += 6;
        else if (strneq(name, "docker://", 9))
                name += 9;
        slash = strchr(name, '/');
        first = slash ? (size_t)(slash - name) : 0;
        if (slash && (memchr(name, '.', first) || memchr(name, ':', first) ||
                      (first == 9 && strneq(name, "localhost", 9)))) {
                if (!host_valid(name, first))
                        return ref_invalid(e, s, "the registry host is not a host[:port]");
                ret->host = strndup(name, first);
                name = slash + 1;
        } else {
                ret->host = strdup("docker.io");
        }
        if (!ret->host)
                r = -ENOMEM;
        else
                r = ref_split_name(s, name, ret, e);
        if (r >= 0 && streq(ret->host, "docker.io") && !strchr(ret->repository, '/')) {
                char *lib = NULL;

                if (asprintf(&lib, "library/%s", ret->repository) < 0)
                        r = -ENOMEM;
                else {
                        free(ret->repository);
                        ret->repository = lib;
                }
        }
        if (r == -ENOMEM)
                error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        if (r < 0)
                oci_ref_release(ret);
        return r;
}

const char *oci_ref_api_host(const struct oci_ref *r)
{
        return streq(r->host, "docker.io") ? "registry-1.docker.io" : r->host;
}

void oci_challenge_release(struct oci_challenge *c)
{
        free(c->realm);
        free(c->service);
        free(c->scope);
        *c = (struct oci_challenge){ 0 };
}

static bool is_tchar(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_ows(const char *p)
{
        while (*p == ' ' || *p == '\t')
                p++;
        return p;
}

/* A token or quoted-string at *p into @out (size n); advances *p. -EINVAL when malformed. */
static int read_param_value(const char **p, char *out, size_t n)
{
        const char *s = *p;
        size_t len = 0;

        if (*s == '"') {
                s++;
                while (*s && *s != '"') {
                        if (*s == '\\' && s[1])
                                s++;
                        if ((unsigned char)*s < 0x20 || len + 1 >= n)
                                return -EINVAL;
                        out[len++] = *s++;
                }
                if (*s != '"')
                        return -EINVAL;
                s++;
        } else {
                while (is_tchar(*s) || *s == '/' || *s == '=') {
                        if (len + 1 >= n)
                                return -EINVAL;
                        out[len++] = *s++;
                }
                if (len == 0)
                        return -EINVAL;
        }
        out[len] = '\0';
        *p = s;
        return 0;
}

struct challenge_scan {
        enum oci_auth_scheme scheme; /* of the challenge being read */
        char realm[OCI_CHALLENGE_MAX], service[OCI_CHALLENGE_MAX], scope[OCI_CHALLENGE_MAX];
        bool have_basic, have_bearer;
        char bearer_realm[OCI_CHALLENGE_MAX], bearer_service[OCI_CHALLENGE_MAX],
                bearer_scope[OCI_CHALLENGE_MAX];
};

static void scan_keep(struct challenge_scan *sc)
{
        if (sc->scheme == OCI_AUTH_BASIC)
                sc->have_basic = true;
        if (sc->scheme == OCI_AUTH_BEARER && !sc->have_bearer) {
                sc->have_bearer = true;
                memcpy(sc->bearer_realm, sc->realm, sizeof(sc->realm));
                memcpy(sc->bearer_service, sc->service, sizeof(sc->service));
                memcpy(sc->bearer_scope, sc->scope, sizeof(sc->scope));
        }
}

/* The auth-scheme at p (length n). */
static enum oci_auth_scheme scheme_of(const char *p, size_t n)
{
        if (n == 5 && strncasecmp(p, "Basic", 5) == 0)
                return OCI_AUTH_BASIC;
        if (n == 6 && strncasecmp(p, "Bearer", 6) == 0)
                return OCI_AUTH_BEARER;
        return OCI_AUTH_NONE;
}

/* One auth-param "name=value" at *p: stored when it is one of ours. 1 when p does not start
 * with name '=' (a new challenge), 0 when read, -EINVAL. */
static int scan_param(struct challenge_scan *sc, const char **p)
{
        const char *s = *p, *name = s;
        char value[OCI_CHALLENGE_MAX];
        size_t n;

        while (is_tchar(*s))
                s++;
        n = (size_t)(s - name);
        s = skip_ows(s);
        if (n == 0 || *s != '=')
                return 1;
        s = skip_ows(s + 1);
        if (read_param_value(&s, value, sizeof(value)) < 0)
                return -EINVAL;
        if (n == 5 && strncasecmp(name, "realm", 5) == 0)
                memcpy(sc->realm, value, sizeof(value));
        else if (n == 7 && strncasecmp(name, "service", 7) == 0)
                memcpy(sc->service, value, sizeof(value));
        else if (n == 5 && strncasecmp(name, "scope", 5) == 0)
                memcpy(sc->scope, value, sizeof(value));
        *p = s;
        return 0;
}

static int scan_challenges(struct challenge_scan *sc, const char *p)
{
        unsigned params = 0;
        bool in_challenge = false;

        for (;;) {
                const char *tok;
                int r;

                p = skip_ows(p);
                while (*p == ',')
                        p = skip_ows(p + 1);
                if (!*p)
                        break;
                if (in_challenge) {
                        r = scan_param(sc, &p);
                        if (r < 0)
                                return r;
                        if (r == 0) {
                                if (++params > OCI_CHALLENGE_PARAMS)
                                        return -EINVAL;
                                continue;
                        }
                        scan_keep(sc);
                }
                tok = p;
                while (is_tchar(*p))
                        p++;
                if (p == tok)
                        return -EINVAL;
                sc->scheme = scheme_of(tok, (size_t)(p - tok));
                sc->realm[0] = sc->service[0] = sc->scope[0] = '\0';
                in_challenge = true;
                if (*p && *p != ' ' && *p != ',')
                        return -EINVAL;
        }
        if (in_challenge)
                scan_keep(sc);
        return 0;
}

static int dup_nonempty(const char *s, char **ret)
{
        if (!*s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

int oci_challenge_parse(const char *value, struct oci_challenge *ret, struct error_detail *e)
{
        AUTOFREE struct challenge_scan *sc = NULL;
        int r;

        *ret = (struct oci_challenge){ 0 };
        if (!value || strlen(value) >= OCI_CHALLENGE_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the registry's WWW-Authenticate header is missing or "
                                        "longer than 4 KiB");
        sc = calloc(1, sizeof(*sc));
        if (!sc)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (scan_challenges(sc, value) < 0)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the registry's WWW-Authenticate header is malformed: "
                                        "'%.200s'",
                                        value);
        if (sc->have_bearer) {
                if (!strneq(sc->bearer_realm, "https://", 8) &&
                    !strneq(sc->bearer_realm, "http://", 7))
                        return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                                "the registry's Bearer challenge has no http(s) "
                                                "realm: '%.200s'",
                                                value);
                ret->scheme = OCI_AUTH_BEARER;
                r = dup_nonempty(sc->bearer_realm, &ret->realm);
                if (r >= 0)
                        r = dup_nonempty(sc->bearer_service, &ret->service);
                if (r >= 0)
                        r = dup_nonempty(sc->bearer_scope, &ret->scope);
                if (r < 0) {
                        oci_challenge_release(ret);
                        return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
                }
                return 0;
        }
        if (sc->have_basic) {
                ret->scheme = OCI_AUTH_BASIC;
                return 0;
        }
        return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                "the registry asks for an authentication scheme other than Basic "
                                "or Bearer: '%.200s'",
                                value);
}

int oci_token_parse(const char *body, size_t len, char **ret, struct error_detail *e)
{
        json_auto_t *doc = NULL;
        const char *t;
        int r;

        if (len > OCI_TOKEN_ANSWER_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the token answer is larger than 64 KiB");
        r = json_parse_bounded(body, len, &doc, e);
        if (r < 0) {
                char why[sizeof(e->message)];

                (void)snprintf(why, sizeof(why), "%s", e ? e->message : "");
                return error_detail_set(e, ERROR_INVALID, r,
                                        "the registry's token answer is not JSON: %.400s", why);
        }
        t = json_get_string_path(doc, "token", NULL);
        if (!t || !*t)
                t = json_get_string_path(doc, "access_token", NULL);
        if (!t || !*t)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the token answer has no \"token\" or \"access_token\"");
        if (strlen(t) > OCI_TOKEN_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the token is longer than 16 KiB");
        for (const char *p = t; *p; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                                "the token holds a character a header cannot");
        *ret = strdup(t);
        return *ret ? 0 : error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
}

static void copy_printable(char *dst, size_t n, const char *src, size_t len)
{
        size_t i;

        if (n == 0)
                return;
        for (i = 0; i < len && i + 1 < n; i++)
                dst[i] = (char)(((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i]);
        dst[i] = '\0';
}

/* "CODE: message; CODE: message" of the first 4 errors into buf (n > 0). */
static void format_errors(const json_t *errors, char *buf, size_t n)
{
        size_t i, used = 0;
        json_t *it;

        json_array_foreach(errors, i, it) {
                const char *code = json_get_string_path(it, "code", NULL);
                const char *msg = json_get_string_path(it, "message", NULL);
                char one[512];
                int w;

                if (i >= 4)
                        break;
                w = snprintf(one, sizeof(one), "%s%s%s%s", i ? "; " : "", code ? code : "",
                             code && msg ? ": " : "", msg ? msg : "");
                if (w < 0)
                        break;
                copy_printable(buf + used, n - used, one, strlen(one));
                used = strlen(buf);
                if (used + 1 >= n)
                        break;
        }
}

const char *oci_error_message(const char *body, size_t len, char *buf, size_t n)
{
        json_auto_t *doc = NULL;
        json_t *errors;
        size_t line;

        if (n == 0)
                return buf;
        buf[0] = '\0';
        if (!body || len == 0)
                return buf;
        len = MIN(len, (size_t)OCI_ERROR_BODY_MAX);
        errors = json_parse_bounded(body, len, &doc, NULL) >= 0 ? json_object_get(doc, "errors")
                                                                : NULL;
        if (json_is_array(errors) && json_array_size(errors) > 0) {
                format_errors(errors, buf, n);
                return buf;
        }
        for (line = 0; line < len && body[line] && body[line] != '\r' && body[line] != '\n';)
                line++;
        copy_printable(buf, n, body, line);
        return buf;
}

static int descriptor_read(json_t *d, const char *field, struct oci_descriptor *ret,
                           struct error_detail *e)
{
        const char *mt = json_get_string_path(d, "mediaType", NULL);
        const char *digest = json_get_string_path(d, "digest", NULL);
        json_t *size = json_object_get(d, "size");

        if (!mt || strlen(mt) >= sizeof(ret->media_type))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, field,
                                              "%s: no media type, or a longer one than 127 bytes",
                                              field);
        if (!oci_digest_valid(digest))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, field,
                                              "%s: the digest is not sha256:<64 hex digits>",
                                              field);
        if (!json_is_integer(size) || json_integer_value(size) < 0)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, field, "%s: no size",
                                              field);
        (void)snprintf(ret->media_type, sizeof(ret->media_type), "%s", mt);
        (void)snprintf(ret->digest, sizeof(ret->digest), "%s", digest);
        ret->size = (uint64_t)json_integer_value(size);
        return 0;
}

static bool is_index_type(const char *mt)
{
        return mt && (streq(mt, OCI_MT_INDEX) || streq(mt, DOCKER_MT_LIST));
}

int oci_manifest_parse(const char *body, size_t len, struct oci_manifest *ret,
                       struct error_detail *e)
{
        json_auto_t *doc = NULL;
        json_t *layers, *it;
        const char *mt;
        size_t i;
        int r;

        *ret = (struct oci_manifest){ 0 };
        if (len > OCI_MANIFEST_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the manifest is larger than 4 MiB");
        r = json_parse_bounded(body, len, &doc, e);
        if (r < 0)
                return r;
        mt = json_get_string_path(doc, "mediaType", NULL);
        if (is_index_type(mt) || (!mt && json_is_array(json_object_get(doc, "manifests"))))
                return error_detail_set(e, ERROR_INVALID, -EMEDIUMTYPE, "an image index");
        if (json_integer_value(json_object_get(doc, "schemaVersion")) != 2)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "schemaVersion",
                                              "the manifest's schemaVersion is not 2");
        if (mt && !streq(mt, OCI_MT_MANIFEST) && !streq(mt, DOCKER_MT_MANIFEST))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "mediaType",
                                              "the manifest's media type '%.100s' is not an "
                                              "image manifest",
                                              mt);
        ret->docker = mt && streq(mt, DOCKER_MT_MANIFEST);
        r = descriptor_read(json_object_get(doc, "config"), "config", &ret->config, e);
        if (r < 0)
                return r;
        layers = json_object_get(doc, "layers");
        if (!json_is_array(layers))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "layers",
                                              "the manifest has no layers array");
        if (json_array_size(layers) > OCI_LAYERS_MAX)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "layers",
                                              "the manifest has more than 128 layers");
        json_array_foreach(layers, i, it) {
                r = descriptor_read(it, "layers", &ret->layers[i], e);
                if (r < 0)
                        return r;
        }
        ret->n_layers = json_array_size(layers);
        return 0;
}

int oci_index_pick(const char *body, size_t len, const char *os, const char *arch,
                   char ret_digest[OCI_DIGEST_LEN], struct error_detail *e)
{
        json_auto_t *doc = NULL;
        json_t *manifests, *it;
        char seen[256] = "";
        size_t i;
        int r;

        if (len > OCI_MANIFEST_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the index is larger than 4 MiB");
        r = json_parse_bounded(body, len, &doc, e);
        if (r < 0)
                return r;
        manifests = json_object_get(doc, "manifests");
        if (!json_is_array(manifests))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "manifests",
                                              "the index has no manifests array");
        json_array_foreach(manifests, i, it) {
                const char *o = json_get_string_path(it, "platform", "os", NULL);
                const char *a = json_get_string_path(it, "platform", "architecture", NULL);
                const char *d = json_get_string_path(it, "digest", NULL);
                size_t used = strlen(seen);

                if (o && a && streq(o, os) && streq(a, arch) && oci_digest_valid(d)) {
                        (void)snprintf(ret_digest, OCI_DIGEST_LEN, "%s", d);
                        return 0;
                }
                if (o && a && used + 2 < sizeof(seen))
                        (void)snprintf(seen + used, sizeof(seen) - used, "%s%.40s/%.40s",
                                       used ? ", " : "", o, a);
        }
        return error_detail_set(e, ERROR_NOT_FOUND, -ENOENT,
                                "the base image has no %s/%s manifest (it has: %s)", os, arch,
                                seen[0] ? seen : "none");
}

static json_t *history_entry(const char *created)
{
        json_t *h = json_pack("{s:s}", "created_by",
                              "modelplane async-upload: the model files under /models");

        if (h && created && json_object_set_new(h, "created", json_string(created)) < 0)
                json_decref(TAKE_PTR(h));
        return h;
}

/* Appends @diff_id and a history entry to the config @doc. -EINVAL when its rootfs is not
 * {"type": "layers", "diff_ids": [...]}. */
static int config_append(json_t *doc, const char *diff_id, const char *created,
                         struct error_detail *e)
{
        json_t *rootfs = json_object_get(doc, "rootfs"), *ids, *history;

        if (!json_is_object(rootfs))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "rootfs",
                                              "the base image's config has no rootfs");
        ids = json_object_get(rootfs, "diff_ids");
        if (!json_is_array(ids) || json_array_size(ids) >= OCI_LAYERS_MAX)
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "rootfs",
                                              "the base image's config has no diff_ids, or more "
                                              "than 127");
        if (json_array_append_new(ids, json_string(diff_id)) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        history = json_object_get(doc, "history");
        if (!json_is_array(history)) {
                history = json_array();
                if (!history || json_object_set_new(doc, "history", history) < 0)
                        return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        if (json_array_append_new(history, history_entry(created)) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (created && json_object_set_new(doc, "created", json_string(created)) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
}

char *oci_config_build(const char *base_config, size_t len, const char *diff_id, const char *os,
                       const char *arch, const char *created, struct error_detail *e)
{
        json_auto_t *doc = NULL;
        char *out;

        if (!oci_digest_valid(diff_id)) {
                error_detail_set(e, ERROR_INVALID, -EINVAL, "the diff_id is not a sha256 digest");
                return NULL;
        }
        if (base_config) {
                if (len > OCI_CONFIG_MAX) {
                        error_detail_set(e, ERROR_INVALID, -EINVAL,
                                         "the base image's config is larger than 4 MiB");
                        return NULL;
                }
                if (json_parse_bounded(base_config, len, &doc, e) < 0)
                        return NULL;
                if (!json_is_object(doc)) {
                        error_detail_set(e, ERROR_INVALID, -EINVAL,
                                         "the base image's config is not a JSON object");
                        return NULL;
                }
        } else {
                doc = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[]}}", "architecture", arch, "os", os,
                                "config", "rootfs", "type", "layers", "diff_ids");
                if (!doc) {
                        error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
                        return NULL;
                }
        }
        if (config_append(doc, diff_id, created, e) < 0)
                return NULL;
        out = json_dumps(doc, JSON_COMPACT);
        if (!out)
                error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return out;
}

static json_t *descriptor_json(const struct oci_descriptor *d)
{
        return json_pack("{s:s, s:s, s:I}", "mediaType", d->media_type, "digest", d->digest, "size",
                         (json_int_t)d->size);
}

char *oci_manifest_build(bool docker, const struct oci_descriptor *config,
                         const struct oci_descriptor *layers, size_t n_layers)
{
        json_auto_t *doc = NULL;
        json_t *arr;

        doc = json_pack("{s:i, s:s, s:o, s:[]}", "schemaVersion", 2, "mediaType",
                        docker ? DOCKER_MT_MANIFEST : OCI_MT_MANIFEST, "config",
                        descriptor_json(config), "layers");
        if (!doc)
                return NULL;
        arr = json_object_get(doc, "layers");
        for (size_t i = 0; i < n_layers; i++)
                if (json_array_append_new(arr, descriptor_json(&layers[i])) < 0)
                        return NULL;
        return json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
}
