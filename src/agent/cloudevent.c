/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/cloudevent.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/base64.h"
#include "util/buf.h"
#include "util/string-util.h"
#include "util/time-util.h"

void ce_strv_free(char **v)
{
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

void ce_format_time(uint64_t usec, char buf[static 32])
{
        if (format_micro_time(usec, buf, 32) < 0)
                (void)snprintf(buf, 32, "1970-01-01T00:00:00.000000Z");
}

char *ce_header_encode(const char *s)
{
        struct buf b = BUF_INIT(SIZE_MAX / 4);

        if (buf_puts(&b, "") < 0)
                return NULL;
        for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
                int r = *c < 0x20 || *c == 0x7f ? buf_printf(&b, "%%%02X", *c)
                                                : buf_putc(&b, (char)*c);
                if (r < 0) {
                        buf_release(&b);
                        return NULL;
                }
        }
        return b.p;
}

static bool set(const char *s)
{
        return s && *s;
}

/* Appends "Name: encoded value" to @v at *n. */
static int add(char **v, size_t *n, const char *name, const char *value)
{
        char *enc = ce_header_encode(value), *line = NULL;

        if (!enc)
                return -ENOMEM;
        if (asprintf(&line, "%s: %s", name, enc) < 0)
                line = NULL;
        free(enc);
        if (!line)
                return -ENOMEM;
        v[(*n)++] = line;
        return 0;
}

static const char *or_empty(const char *s)
{
        return s ? s : "";
}

int ce_http_headers(const struct ce_event *ev, char ***ret)
{
        char t[32], rt[32];
        char **v;
        size_t n = 0;
        int r = 0;

        if (!set(ev->id) || !set(ev->type) || !set(ev->source))
                return -EINVAL;
        if (set(ev->content_type) && strpbrk(ev->content_type, "\r\n"))
                return -EINVAL; /* an ordinary header: not encoded, but never a line break */
        ce_format_time(ev->time_usec, t);
        ce_format_time(ev->recorded_usec, rt);
        /* KServe sets the four extensions even when empty; an empty header is legal and the SDKs
         * read it as "" */
        const char *const h[][2] = {
                { "Ce-Specversion", "1.0" },
                { "Ce-Id", ev->id },
                { "Ce-Source", ev->source },
                { "Ce-Type", ev->type },
                { "Ce-Time", t },
                { "Ce-Recordedtime", rt },
                { "Ce-Inferenceservicename", or_empty(ev->inference_service) },
                { "Ce-Namespace", or_empty(ev->namespace_) },
                { "Ce-Component", or_empty(ev->component) },
                { "Ce-Endpoint", or_empty(ev->endpoint) },
                { "Ce-Metadata", set(ev->metadata_json) ? ev->metadata_json : "{}" },
                { "Ce-Annotations", ev->annotations_json },
        };
        v = calloc(ELEMENTSOF(h) + 2, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(h) && r >= 0; i++)
                if (set(h[i][1]) || !streq(h[i][0], "Ce-Annotations"))
                        r = add(v, &n, h[i][0], h[i][1]);
        if (r >= 0 && set(ev->content_type) &&
            asprintf(&v[n], "Content-Type: %s", ev->content_type) < 0) {
                v[n] = NULL;
                r = -ENOMEM;
        }
        if (r < 0) {
                ce_strv_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

/* An object from JSON text, or NULL. */
static json_t *obj(const char *text)
{
        json_t *j = set(text) ? json_loads(text, 0, NULL) : NULL;

        if (j && !json_is_object(j)) {
                json_decref(j);
                return NULL;
        }
        return j;
}

static int put_str(json_t *o, const char *k, const char *v)
{
        return set(v) ? json_object_set_new(o, k, json_string(v)) : 0;
}

/* The scheme (lowered, as Go's) and host of scheme://[user@]host..., and where the rest starts;
 * all unset (rest = s) for a URL of another form. -ENOMEM. */
static int url_authority(const char *s, char **ret_scheme, char **ret_host, bool *ret_user,
                         const char **ret_rest)
{
        const char *colon = strchr(s, ':'), *auth, *at;
        size_t n;

        *ret_scheme = *ret_host = NULL;
        *ret_user = false;
        *ret_rest = s;
        if (!colon || colon == s || !strneq(colon, "://", 3) ||
            strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") !=
                    (size_t)(colon - s))
                return 0;
        auth = colon + 3;
        n = strcspn(auth, "/?#");
        at = memchr(auth, '@', n);
        *ret_user = at != NULL;
        *ret_host = at ? strndup(at + 1, n - (size_t)(at + 1 - auth)) : strndup(auth, n);
        *ret_scheme = strndup(s, (size_t)(colon - s));
        if (!*ret_host || !*ret_scheme)
                return -ENOMEM;
        for (char *c = *ret_scheme; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
        *ret_rest = auth + n;
        return 0;
}

/* Splits an absolute URL as Go's url.Parse does for the ones a logger sees
 * (scheme://[user@]host[/path][?query][#fragment]) into the fields of Go's url.URL, as
 * encoding/json writes that struct: every field, User `{}` when there is user information (its
 * fields are unexported) and null otherwise, Path decoded with the raw form in RawPath when it
 * held escapes. A URL of another form is all Path, with no scheme or host. NULL on OOM. */
static json_t *go_url(const char *s)
{
        AUTOFREE char *scheme = NULL, *host = NULL, *path = NULL, *query = NULL, *decoded = NULL;
        const char *rest, *q, *f;
        bool user;
        json_t *o;
        int r;

        if (url_authority(s, &scheme, &host, &user, &rest) < 0)
                return NULL;
        f = strchr(rest, '#');
        q = strchr(rest, '?');
        if (q && f && q > f)
                q = NULL;
        path = strndup(rest, q ? (size_t)(q - rest) : f ? (size_t)(f - rest) : strlen(rest));
        query = q ? strndup(q + 1, f ? (size_t)(f - q - 1) : strlen(q + 1)) : strdup("");
        if (!path || !query)
                return NULL;
        if (strchr(path, '%') && percent_decode(path, strlen(path), &decoded) < 0)
                decoded = NULL; /* not a valid escape: Go would refuse the URL; kept as it is */
        o = json_object();
        if (!o)
                return NULL;
        r = json_object_set_new(o, "Scheme", json_string(scheme ? scheme : "")) |
            json_object_set_new(o, "Opaque", json_string("")) |
            json_object_set_new(o, "User", user ? json_object() : json_null()) |
            json_object_set_new(o, "Host", json_string(host ? host : "")) |
            json_object_set_new(o, "Path", json_string(decoded ? decoded : path)) |
            json_object_set_new(o, "RawPath", json_string(decoded ? path : "")) |
            json_object_set_new(o, "OmitHost", json_false()) |
            json_object_set_new(o, "ForceQuery", json_false()) |
            json_object_set_new(o, "RawQuery", json_string(query)) |
            json_object_set_new(o, "Fragment", json_string(f ? f + 1 : "")) |
            json_object_set_new(o, "RawFragment", json_string(""));
        if (r != 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

/* One LogRequest as Go's encoding/json writes it; url and sourceUri as text (KServe's records)
 * or, with @go_urls, as url.URL structures (what KServe's agent sends its marshaller). */
static json_t *record_object(const struct ce_event *ev, bool go_urls)
{
        json_t *o = json_object(), *md = obj(ev->metadata_json), *an = obj(ev->annotations_json);
        char *b64 = base64_encode(ev->body ? ev->body : "", ev->body_len), t[32];
        int r = o && b64 ? 0 : -1;

        ce_format_time(ev->time_usec, t);
        if (r == 0 && set(ev->log_url))
                r = go_urls ? json_object_set_new(o, "url", go_url(ev->log_url))
                            : put_str(o, "url", ev->log_url);
        if (r == 0)
                r = put_str(o, "bytes", b64) | put_str(o, "contentType", ev->content_type) |
                    put_str(o, "reqType", ev->type) | put_str(o, "id", ev->id);
        if (r == 0 && set(ev->source))
                r = go_urls ? json_object_set_new(o, "sourceUri", go_url(ev->source))
                            : put_str(o, "sourceUri", ev->source);
        if (r == 0)
                r = put_str(o, "inferenceService", ev->inference_service) |
                    put_str(o, "namespace", ev->namespace_) |
                    put_str(o, "component", ev->component) | put_str(o, "endpoint", ev->endpoint);
        if (r == 0 && md && json_object_size(md) > 0)
                r = json_object_set(o, "metadata", md);
        if (r == 0 && an && json_object_size(an) > 0)
                r = json_object_set(o, "annotations", an);
        if (r == 0)
                r = put_str(o, "certName", ev->cert_name);
        if (r == 0 && ev->tls_skip_verify)
                r = json_object_set_new(o, "tlsSkipVerify", json_true());
        if (r == 0)
                r = json_object_set_new(o, "occurrenceTime", json_string(t));
        json_decref(md);
        json_decref(an);
        free(b64);
        if (r != 0) {
                json_decref(o);
                return NULL;
        }
        return o;
}

char *ce_record_json(const struct ce_event *ev)
{
        json_t *o = record_object(ev, false);
        char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

        json_decref(o);
        return s;
}

/* The JSON array of @n records. Owned, NULL on OOM. */
static char *records_array(const struct ce_event *evs, size_t n, bool go_urls)
{
        json_t *a = json_array();
        char *s = NULL;
        int r = a ? 0 : -1;

        for (size_t i = 0; i < n && r == 0; i++)
                r = json_array_append_new(a, record_object(&evs[i], go_urls));
        if (r == 0)
                s = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(a);
        return s;
}

char *ce_records_text(const struct ce_event *evs, size_t n, bool csv)
{
        struct buf b = BUF_INIT(SIZE_MAX / 4);
        int r;

        if (!csv)
                return n == 1 ? ce_record_json(&evs[0]) : records_array(evs, n, false);
        r = buf_puts(&b, ce_record_csv_header());
        for (size_t i = 0; i < n && r >= 0; i++) {
                AUTOFREE char *row = ce_record_csv(&evs[i]);

                r = row ? buf_puts(&b, row) : -ENOMEM;
        }
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return b.p;
}

char *ce_marshal_request(const struct ce_event *evs, size_t n)
{
        return records_array(evs, n, true);
}

const char *ce_record_csv_header(void)
{
        return "url,bytes,contentType,reqType,id,sourceUri,inferenceService,namespace,component,"
               "endpoint,metadata,annotations,certName,tlsSkipVerify\n";
}

/* One CSV field: quoted when it holds a comma, quote, CR or LF (RFC 4180), as Go's csv. */
static int csv_field(struct buf *b, const char *s, bool last)
{
        int r = 0;

        s = s ? s : "";
        if (!strpbrk(s, ",\"\r\n") && !(s[0] == ' ' || s[0] == '\t'))
                r = buf_puts(b, s);
        else {
                r = buf_putc(b, '"');
                for (const char *c = s; *c && r >= 0; c++)
                        r = *c == '"' ? buf_puts(b, "\"\"") : buf_putc(b, *c);
                if (r >= 0)
                        r = buf_putc(b, '"');
        }
        if (r >= 0)
                r = buf_putc(b, last ? '\n' : ',');
        return r;
}

/* Compact JSON of an object given as text ("" when absent, empty or not an object). Owned. */
static char *compact(const char *text)
{
        json_t *j = obj(text);
        /* an empty map is "", as in KServe's csv: its agent's marshaller call drops the empty
         * map (omitempty), so its marshaller reads none */
        char *s = j && json_object_size(j) > 0 ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)
                                               : strdup("");

        json_decref(j);
        return s;
}

char *ce_record_csv(const struct ce_event *ev)
{
        struct buf b = BUF_INIT(SIZE_MAX / 4);
        char *b64 = base64_encode(ev->body ? ev->body : "", ev->body_len);
        char *md = compact(ev->metadata_json), *an = compact(ev->annotations_json);
        const char *f[] = { ev->log_url,
                            b64,
                            ev->content_type,
                            ev->type,
                            ev->id,
                            ev->source,
                            ev->inference_service,
                            ev->namespace_,
                            ev->component,
                            ev->endpoint,
                            md,
                            an,
                            ev->cert_name,
                            ev->tls_skip_verify ? "true" : "false" };
        int r = b64 && md && an ? 0 : -ENOMEM;

        for (size_t i = 0; i < ELEMENTSOF(f) && r >= 0; i++)
                r = csv_field(&b, f[i], i + 1 == ELEMENTSOF(f));
        free(b64);
        free(md);
        free(an);
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return b.p;
}

/* Go's http.CanonicalHeaderKey: the first letter and each letter after '-' upper case. */
static void canonical(char *s)
{
        bool up = true;

        for (char *c = s; *c; c++) {
                if (*c >= 'a' && *c <= 'z' && up)
                        *c = (char)(*c - 'a' + 'A');
                else if (*c >= 'A' && *c <= 'Z' && !up)
                        *c = (char)(*c - 'A' + 'a');
                up = *c == '-';
        }
}

char *ce_metadata_json(const char *const *allow, size_t n_allow, const char *const *names,
                       const char *const *values, size_t n)
{
        json_t *o = json_object();
        char *s = NULL;
        int r = o ? 0 : -1;

        for (size_t i = 0; i < n && r == 0; i++) {
                bool allowed = false;
                char key[256];
                json_t *arr;

                for (size_t k = 0; k < n_allow && !allowed; k++)
                        allowed = strcasecmp(allow[k], names[i]) == 0;
                if (!allowed || strlen(names[i]) >= sizeof(key))
                        continue;
                (void)snprintf(key, sizeof(key), "%s", names[i]);
                canonical(key);
                arr = json_object_get(o, key);
                if (!arr) {
                        arr = json_array();
                        r = json_object_set_new(o, key, arr);
                }
                if (r == 0)
                        r = json_array_append_new(arr, json_string(values[i]));
        }
        if (r == 0)
                s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_SORT_KEYS);
        json_decref(o);
        return s;
}

char *ce_annotations_json(const char *const *items, size_t n)
{
        json_t *o = json_object();
        char *s = NULL;
        int r = o ? 0 : -1;

        for (size_t i = 0; i < n && r == 0; i++) {
                const char *eq = strchr(items[i], '=');
                char *k;

                if (!eq)
                        continue;
                k = strndup(items[i], (size_t)(eq - items[i]));
                r = k ? json_object_set_new(o, k, json_string(eq + 1)) : -1;
                free(k);
        }
        if (r == 0 && json_object_size(o) > 0)
                s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(o);
        return s;
}

void ce_store_url_release(struct ce_store_url *u)
{
        free(u->bucket);
        free(u->account);
        free(u->prefix);
        *u = (struct ce_store_url){ .store = CE_STORE__INVALID };
}

static bool name_is_plain(const char *s, size_t n)
{
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_",
                            s[i]) ||
                    s[i] == 0)
                        return false;
        return true;
}

/* A key prefix without leading and trailing '/', and without "." or ".." segments. */
static int prefix_of(const char *p, char **ret)
{
        char *q;
        size_t n;

        while (*p == '/')
                p++;
        q = strdup(p);
        if (!q)
                return -ENOMEM;
        for (n = strlen(q); n > 0 && q[n - 1] == '/'; n--)
                q[n - 1] = 0;
        for (const char *s = q; *s;) {
                size_t k = strcspn(s, "/");
                if ((k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.')) {
                        free(q);
                        return -EINVAL;
                }
                s += k;
                s += strspn(s, "/");
        }
        *ret = q;
        return 0;
}

/* BUCKET or CONTAINER@ACCOUNT[.HOST] of @auth (@n bytes) into @u. */
static int store_authority(struct ce_store_url *u, const char *auth, size_t n)
{
        const char *at = memchr(auth, '@', n), *host, *dot;
        size_t hn;

        if (u->store != CE_STORE_AZURE) {
                if (!name_is_plain(auth, n))
                        return -EINVAL;
                u->bucket = strndup(auth, n);
                return u->bucket ? 0 : -ENOMEM;
        }
        if (!at)
                return -EINVAL;
        host = at + 1;
        hn = n - (size_t)(host - auth);
        dot = memchr(host, '.', hn);
        if (dot)
                hn = (size_t)(dot - host);
        if (!name_is_plain(auth, (size_t)(at - auth)) || !name_is_plain(host, hn))
                return -EINVAL;
        u->bucket = strndup(auth, (size_t)(at - auth));
        u->account = strndup(host, hn);
        return u->bucket && u->account ? 0 : -ENOMEM;
}

int ce_store_url_parse(const char *url, struct ce_store_url *ret)
{
        static const struct {
                const char *scheme;
                enum ce_store store;
        } schemes[] = { { "s3://", CE_STORE_S3 },
                        { "gs://", CE_STORE_GCS },
                        { "abfs://", CE_STORE_AZURE },
                        { "file://", CE_STORE_FILE } };
        struct ce_store_url u = { .store = CE_STORE__INVALID };
        const char *rest = NULL;
        size_t n;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(schemes) && !rest; i++)
                if (strncmp(url, schemes[i].scheme, strlen(schemes[i].scheme)) == 0) {
                        u.store = schemes[i].store;
                        rest = url + strlen(schemes[i].scheme);
                }
        if (!rest)
                return -EPROTONOSUPPORT;
        if (strpbrk(rest, "?#"))
                return -EINVAL;
        if (u.store == CE_STORE_FILE) {
                if (rest[0] != '/')
                        return -EINVAL;
                u.prefix = strdup(rest);
                r = u.prefix ? 0 : -ENOMEM;
        } else {
                n = strcspn(rest, "/");
                r = store_authority(&u, rest, n);
                if (r >= 0)
                        r = prefix_of(rest + n, &u.prefix);
        }
        if (r < 0) {
                ce_store_url_release(&u);
                return r;
        }
        *ret = u;
        return 0;
}

int ce_record_key(const char *const parts[static 5], const char *id, bool response, const char *ext,
                  char **ret)
{
        CLEANUP(buf_release) struct buf b = BUF_INIT(16384);
        int r = 0;

        if (!id || !*id || strchr(id, '/') || streq(id, ".") || streq(id, ".."))
                return -EINVAL;
        for (size_t i = 0; i < 5 && r >= 0; i++)
                if (parts[i] && *parts[i])
                        r = buf_printf(&b, "%s/", parts[i]);
        if (r >= 0)
                r = buf_printf(&b, "%s-%s.%s", id, response ? "response" : "request", ext);
        if (r < 0)
                return r;
        *ret = strdup(buf_str(&b));
        return *ret ? 0 : -ENOMEM;
}
