/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/uri.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "agent/azure.h"
#include "agent/cloudevent.h"
#include "agent/mr-uri.h"

void storage_uri_release(struct storage_uri *u)
{
        free(u->bucket);
        free(u->key);
        free(u->url);
        free(u->path);
        free(u->account);
        *u = (struct storage_uri){ 0 };
}

_printf_(3, 4) static void report(char *reterr, size_t len, const char *fmt, ...)
{
        va_list ap;

        if (reterr && len > 0) {
                va_start(ap, fmt);
                (void)vsnprintf(reterr, len, fmt, ap);
                va_end(ap);
        }
}

/* Writes the message into reterr and yields -EINVAL (a macro: the caller's path sees the code). */
#define fail(reterr, len, ...) (report((reterr), (len), __VA_ARGS__), -EINVAL)

static int split_bucket(const char *uri, const char *rest, struct storage_uri *u, char *reterr,
                        size_t len)
{
        const char *slash = strchr(rest, '/');
        size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
        const char *key = slash ? slash + 1 : "";

        if (blen == 0)
                return fail(reterr, len, "storageUri %s: no bucket name", uri);
        while (*key == '/')
                key++;
        u->bucket = strndup(rest, blen);
        u->key = strdup(key);
        if (!u->bucket || !u->key)
                return -ENOMEM;
        /* trailing slashes of a prefix carry no meaning */
        for (size_t n = strlen(u->key); n > 0 && u->key[n - 1] == '/'; n--)
                u->key[n - 1] = 0;
        return 0;
}

static int parse_http(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        const char *host = strstr(uri, "://") + 3;

        if (*host == 0 || *host == '/')
                return fail(reterr, len, "storageUri %s: no host", uri);
        if (azure_blob_url_split(uri, &u->url, &u->account, &u->bucket, &u->key)) {
                u->kind = STORAGE_AZURE;
                if (*u->key && !relative_path_is_safe(u->key))
                        return fail(reterr, len, "storageUri %s: a '..' in the blob prefix", uri);
                return 0;
        }
        u->kind = STORAGE_HTTP;
        u->url = strdup(uri);
        return u->url ? 0 : -ENOMEM;
}

static int parse_pvc(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        int r;

        u->kind = STORAGE_LOCAL;
        r = split_bucket(uri, uri + 6, u, reterr, len);
        if (r == 0 && *u->key && !relative_path_is_safe(u->key))
                r = fail(reterr, len, "storageUri %s: path leaves the volume", uri);
        return r;
}

static int parse_local(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        const char *p = uri[0] == '/' ? uri : uri + 7;

        if (p[0] != '/')
                return fail(reterr, len, "storageUri %s: a local path must be absolute", uri);
        u->kind = STORAGE_LOCAL;
        u->path = strdup(p);
        return u->path ? 0 : -ENOMEM;
}

static bool hf_name_char(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
}

/* hf://ORG/REPO[:REVISION] (KServe's form): a repository id of two names of [A-Za-z0-9._-]
 * (not "." or "..", no "--" or ".." inside, as the Hub's own rule), a revision without blanks or
 * control characters. */
static int parse_hf(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        const char *repo = uri + 5, *colon = strchr(repo, ':');
        size_t rlen = colon ? (size_t)(colon - repo) : strlen(repo);
        const char *slash = memchr(repo, '/', rlen);
        const char *rev = colon ? colon + 1 : "main";
        size_t olen = slash ? (size_t)(slash - repo) : 0, nlen = slash ? rlen - olen - 1 : 0;

        if (!slash || olen == 0 || nlen == 0 || memchr(slash + 1, '/', nlen))
                return fail(reterr, len, "storageUri %s: not hf://ORG/REPO[:REVISION]", uri);
        for (size_t i = 0; i < rlen; i++)
                if (repo + i != slash && !hf_name_char(repo[i]))
                        return fail(reterr, len, "storageUri %s: '%c' in the repository id", uri,
                                    repo[i]);
        if ((olen <= 2 && repo[0] == '.') || (nlen <= 2 && slash[1] == '.') ||
            memmem(repo, rlen, "..", 2) || memmem(repo, rlen, "--", 2))
                return fail(reterr, len, "storageUri %s: not a repository id", uri);
        if (!*rev)
                return fail(reterr, len, "storageUri %s: empty revision", uri);
        for (const char *p = rev; *p; p++)
                if ((unsigned char)*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#')
                        return fail(reterr, len, "storageUri %s: bad character in the revision",
                                    uri);
        u->kind = STORAGE_HF;
        u->bucket = strndup(repo, rlen);
        u->key = strdup(rev);
        return u->bucket && u->key ? 0 : -ENOMEM;
}

/* model-registry://: checked here, resolved through the registry when fetched (mr-resolve.h). */
static int parse_model_registry(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        struct mr_uri m;
        char why[512];
        int r;

        r = mr_uri_parse(uri, &m, why, sizeof(why));
        if (r < 0)
                return r == -ENOMEM ? r : fail(reterr, len, "storageUri %s", why);
        mr_uri_release(&m);
        u->kind = STORAGE_MODEL_REGISTRY;
        u->url = strdup(uri);
        return u->url ? 0 : -ENOMEM;
}

static int parse_unsupported(const char *uri, char *reterr, size_t len)
{
        const char *colon = strstr(uri, "://");

        if (colon)
                return fail(reterr, len, "storageUri %s: unsupported scheme '%.*s'", uri,
                            (int)(colon - uri), uri);
        return fail(reterr, len, "storageUri %s: not a URI nor an absolute path", uri);
}

/* Dispatches on the scheme; @u may be partly filled on failure. */
static int parse_by_scheme(const char *uri, struct storage_uri *u, char *reterr, size_t len)
{
        if (strncmp(uri, "s3://", 5) == 0) {
                u->kind = STORAGE_S3;
                return split_bucket(uri, uri + 5, u, reterr, len);
        }
        if (strncmp(uri, "gs://", 5) == 0) {
                u->kind = STORAGE_GCS;
                return split_bucket(uri, uri + 5, u, reterr, len);
        }
        if (strncasecmp(uri, "http://", 7) == 0 || strncasecmp(uri, "https://", 8) == 0)
                return parse_http(uri, u, reterr, len);
        if (strncmp(uri, "hf://", 5) == 0)
                return parse_hf(uri, u, reterr, len);
        if (strncmp(uri, "pvc://", 6) == 0)
                return parse_pvc(uri, u, reterr, len);
        if (mr_uri_is(uri))
                return parse_model_registry(uri, u, reterr, len);
        if (strncmp(uri, "file://", 7) == 0 || uri[0] == '/')
                return parse_local(uri, u, reterr, len);
        return parse_unsupported(uri, reterr, len);
}

int storage_uri_parse(const char *uri, struct storage_uri *ret, char *reterr, size_t len)
{
        struct storage_uri u = { 0 };
        int r;

        if (!uri || !*uri)
                return fail(reterr, len, "storageUri is empty");
        if (strchr(uri, '\n') || strchr(uri, '\r'))
                return fail(reterr, len, "storageUri contains a line break");
        r = parse_by_scheme(uri, &u, reterr, len);
        if (r < 0) {
                storage_uri_release(&u);
                return r;
        }
        *ret = u;
        return 0;
}

/* The path part of an URL: after "scheme://host", before '?' or '#'; length in @ret_len. */
static const char *url_path(const char *url, size_t *ret_len)
{
        const char *p = strstr(url, "://");

        p = p ? p + 3 : url;
        p += strcspn(p, "/?#");
        *ret_len = strcspn(p, "?#");
        return p;
}

static bool ends_with_ci(const char *s, size_t n, const char *suffix)
{
        size_t k = strlen(suffix);
        return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

enum archive_kind archive_kind_from_url(const char *url)
{
        size_t n;
        const char *p = url_path(url, &n);

        if (ends_with_ci(p, n, ".tar.gz") || ends_with_ci(p, n, ".tgz") ||
            ends_with_ci(p, n, ".tar"))
                return ARCHIVE_TAR_GZ;
        if (ends_with_ci(p, n, ".zip"))
                return ARCHIVE_ZIP;
        return ARCHIVE_NONE;
}

char *url_file_name(const char *url)
{
        size_t n, start;
        const char *p = url_path(url, &n);
        char *name;

        start = n;
        while (start > 0 && p[start - 1] != '/')
                start--;
        name = strndup(p + start, n - start);
        if (!name)
                return NULL;
        if (!model_name_is_safe(name) || strchr(name, '%')) {
                free(name);
                return strdup("model");
        }
        return name;
}

bool relative_path_is_safe(const char *path)
{
        const char *p = path;

        if (!path || !*path || path[0] == '/')
                return false;
        while (*p) {
                size_t seg = strcspn(p, "/");
                if (seg == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                p += seg;
                while (*p == '/')
                        p++;
        }
        return true;
}

/* Depth of the directory containing @entry after lexical resolution, or -1 if it escapes. */
static long walk(const char *p, size_t n, long depth)
{
        size_t i = 0;

        while (i < n) {
                size_t seg = 0;
                while (i + seg < n && p[i + seg] != '/')
                        seg++;
                if (seg == 2 && p[i] == '.' && p[i + 1] == '.') {
                        if (--depth < 0)
                                return -1;
                } else if (!(seg == 0 || (seg == 1 && p[i] == '.'))) {
                        depth++;
                }
                i += seg + 1;
        }
        return depth;
}

bool link_target_is_safe(const char *entry, const char *target)
{
        const char *slash;
        long depth;

        if (!relative_path_is_safe(entry) || !target || !*target || target[0] == '/')
                return false;
        slash = strrchr(entry, '/');
        depth = slash ? walk(entry, (size_t)(slash - entry), 0) : 0;
        if (depth < 0)
                return false;
        return walk(target, strlen(target), depth) >= 0;
}

bool model_name_is_safe(const char *name)
{
        size_t n = name ? strlen(name) : 0;

        return n > 0 && n <= 253 && name[0] != '.' && !strchr(name, '/');
}

char *url_headers_env_name(const char *url, bool *ret_oom)
{
        const char *p = strstr(url, "://"), *end, *at;
        size_t n;
        char *name;

        *ret_oom = false;
        if (!p)
                return NULL;
        p += 3;
        end = p + strcspn(p, "/?#");
        at = memchr(p, '@', (size_t)(end - p));
        if (at)
                p = at + 1;
        if (*p == '[') {
                const char *close = memchr(p, ']', (size_t)(end - p));
                if (!close)
                        return NULL;
                p++;
                n = (size_t)(close - p);
        } else {
                const char *colon = memchr(p, ':', (size_t)(end - p));
                n = (size_t)((colon ? colon : end) - p);
        }
        if (n == 0)
                return NULL;
        if (asprintf(&name, "%.*s-headers", (int)n, p) < 0) {
                *ret_oom = true;
                return NULL;
        }
        return name;
}

/* RFC 9110 5.6.2: tchar. */
static bool is_token(const char *s)
{
        if (!*s)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s)))
                        return false;
        return true;
}

static bool has_control(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return true;
        return false;
}

int url_headers_parse(const char *json, char ***ret, char *reterr, size_t len)
{
        json_auto_t *o = json_loads(json, JSON_REJECT_DUPLICATES, NULL);
        const char *name;
        char **v;
        size_t i = 0;
        json_t *val;

        if (!json_is_object(o))
                return fail(reterr, len, "not a JSON object of header names and values");
        v = calloc(json_object_size(o) + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        json_object_foreach(o, name, val) {
                const char *s = json_string_value(val);

                if (!s || !is_token(name) || has_control(s, json_string_length(val))) {
                        ce_strv_free(v);
                        return fail(reterr, len, "header %.100s: %s", name,
                                    !s                ? "the value is not a string"
                                    : !is_token(name) ? "not a header name"
                                                      : "the value holds a control character");
                }
                if (asprintf(&v[i], "%s: %s", name, s) < 0) {
                        v[i] = NULL;
                        ce_strv_free(v);
                        return -ENOMEM;
                }
                i++;
        }
        *ret = v;
        return 0;
}
