/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/azure.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/base64.h"
#include "util/buf.h"
#include "util/string-util.h"

void azure_conn_release(struct azure_conn *c)
{
        free(c->account);
        free(c->key);
        free(c->endpoint);
        *c = (struct azure_conn){ 0 };
}

static int set_field(char **field, const char *v, size_t n)
{
        free(*field);
        *field = strndup(v, n);
        return *field ? 0 : -ENOMEM;
}

/* What a connection string says besides the account's fields. */
struct conn_extra {
        char *proto, *suffix;
        bool dev;
};

/* One KEY=VALUE of a connection string (unknown keys are ignored). */
static int conn_field(struct azure_conn *c, struct conn_extra *x, const char *k, size_t kn,
                      const char *v, size_t vn)
{
#define KEY_IS(name) (kn == strlen(name) && strncasecmp(k, name, kn) == 0)
        if (KEY_IS("AccountName"))
                return set_field(&c->account, v, vn);
        if (KEY_IS("AccountKey"))
                return set_field(&c->key, v, vn);
        if (KEY_IS("BlobEndpoint"))
                return set_field(&c->endpoint, v, vn);
        if (KEY_IS("DefaultEndpointsProtocol"))
                return set_field(&x->proto, v, vn);
        if (KEY_IS("EndpointSuffix"))
                return set_field(&x->suffix, v, vn);
        if (KEY_IS("UseDevelopmentStorage"))
                x->dev = vn == 4 && strncasecmp(v, "true", 4) == 0;
#undef KEY_IS
        return 0;
}

/* UseDevelopmentStorage=true: Azurite's documented well-known account, where none is given. */
static int conn_development(struct azure_conn *c)
{
        int r = 0;

        if (!c->account)
                r = set_field(&c->account, "devstoreaccount1", 16);
        if (r >= 0 && !c->key)
                r = set_field(&c->key,
                              "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6"
                              "tq/K1SZFPTOtr/KBHBeksoGMGw==",
                              88);
        if (r >= 0 && !c->endpoint)
                r = set_field(&c->endpoint, "http://127.0.0.1:10000/devstoreaccount1", 39);
        return r;
}

/* The endpoint: given, or built from the suffix; without a trailing '/'. */
static int conn_endpoint(struct azure_conn *c, const struct conn_extra *x)
{
        if (!c->endpoint && c->account && x->suffix &&
            asprintf(&c->endpoint, "%s://%s.blob.%s", x->proto ? x->proto : "https", c->account,
                     x->suffix) < 0) {
                c->endpoint = NULL;
                return -ENOMEM;
        }
        if (c->endpoint)
                for (size_t n = strlen(c->endpoint); n > 0 && c->endpoint[n - 1] == '/'; n--)
                        c->endpoint[n - 1] = 0;
        return 0;
}

int azure_connection_string_parse(const char *s, struct azure_conn *ret)
{
        struct azure_conn c = { 0 };
        struct conn_extra x = { 0 };
        int r = 0;

        for (const char *p = s; *p && r >= 0;) {
                size_t n = strcspn(p, ";");
                const char *eq = memchr(p, '=', n);

                if (n > 0 && (!eq || eq == p))
                        r = -EINVAL;
                else if (n > 0)
                        r = conn_field(&c, &x, p, (size_t)(eq - p), eq + 1,
                                       n - (size_t)(eq - p) - 1);
                p += n;
                if (*p == ';')
                        p++;
        }
        if (r >= 0 && x.dev)
                r = conn_development(&c);
        if (r >= 0)
                r = conn_endpoint(&c, &x);
        free(x.proto);
        free(x.suffix);
        if (r < 0) {
                azure_conn_release(&c);
                return r;
        }
        *ret = c;
        return 0;
}

/* Percent-decodes @n bytes of @s into @b ('+' is a space, as in a form). */
static int put_decoded(struct buf *b, const char *s, size_t n)
{
        AUTOFREE char *d = NULL;
        int r = percent_decode_form(s, n, &d);

        return r < 0 ? r : buf_puts(b, d);
}

static char lower(char c)
{
        if (c >= 'A' && c <= 'Z')
                return (char)(c + ('a' - 'A'));
        return c;
}

struct qparam {
        const char *name, *value;
        size_t nlen, vlen;
};

static int qparam_cmp(const void *a, const void *b)
{
        const struct qparam *x = a, *y = b;
        int c = strncasecmp(x->name, y->name, MIN(x->nlen, y->nlen));

        if (c != 0)
                return c;
        return x->nlen < y->nlen ? -1 : x->nlen > y->nlen ? 1 : 0;
}

#define QUERY_PARAMS_MAX 16

/* The query parameters of @query (may be NULL; up to a '#') into @qs. Returns how many, -EINVAL
 * past QUERY_PARAMS_MAX. */
static int query_params(const char *query, struct qparam qs[QUERY_PARAMS_MAX])
{
        int nq = 0;

        for (const char *p = query; p && *p && *p != '#';) {
                size_t n = strcspn(p, "&#");
                const char *eq = memchr(p, '=', n);

                if (n > 0) {
                        if (nq >= (int)QUERY_PARAMS_MAX)
                                return -EINVAL;
                        qs[nq].name = p;
                        qs[nq].nlen = eq ? (size_t)(eq - p) : n;
                        qs[nq].value = eq ? eq + 1 : p + n;
                        qs[nq].vlen = eq ? n - qs[nq].nlen - 1 : 0;
                        nq++;
                }
                p += n;
                if (*p == '&')
                        p++;
        }
        return nq;
}

/* The canonicalized resource's parameters: "\nname:decoded value", names lower-cased, sorted. */
static int put_params(struct buf *b, struct qparam *qs, size_t nq)
{
        int r = 0;

        qsort(qs, nq, sizeof(qs[0]), qparam_cmp);
        for (size_t i = 0; i < nq && r >= 0; i++) {
                r = buf_putc(b, '\n');
                for (size_t k = 0; k < qs[i].nlen && r >= 0; k++)
                        r = buf_putc(b, lower(qs[i].name[k]));
                if (r >= 0)
                        r = buf_putc(b, ':');
                if (r >= 0)
                        r = put_decoded(b, qs[i].value, qs[i].vlen);
        }
        return r;
}

int azure_string_to_sign_upload(const char *account, const char *url, const char *date,
                                const char *version, const struct azure_upload *up, char **ret)
{
        CLEANUP(buf_release) struct buf b = BUF_INIT(16384);
        struct qparam qs[QUERY_PARAMS_MAX];
        const char *host = strstr(url, "://"), *path;
        char length[24] = "";
        size_t plen;
        int nq, r;

        if (!host)
                return -EINVAL;
        path = host + 3 + strcspn(host + 3, "/?#");
        if (*path != '/')
                return -EINVAL;
        plen = strcspn(path, "?#");
        nq = query_params(path[plen] == '?' ? path + plen + 1 : NULL, qs);
        if (nq < 0)
                return nq;
        if (up && up->content_length > 0)
                (void)snprintf(length, sizeof(length), "%llu",
                               (unsigned long long)up->content_length);
        /* VERB, then Content-Encoding, -Language, -Length, -MD5, -Type, Date, If-Modified-Since,
         * If-Match, If-None-Match, If-Unmodified-Since, Range; then the x-ms-* headers, sorted */
        r = buf_printf(&b, "%s\n\n\n%s\n\n%s\n\n\n\n\n\n\n", up ? up->method : "GET", length,
                       up && up->content_type ? up->content_type : "");
        if (r >= 0 && up && up->blob_type)
                r = buf_printf(&b, "x-ms-blob-type:%s\n", up->blob_type);
        if (r >= 0)
                r = buf_printf(&b, "x-ms-date:%s\nx-ms-version:%s\n/%s%.*s", date, version, account,
                               (int)plen, path);
        if (r >= 0)
                r = put_params(&b, qs, (size_t)nq);
        if (r < 0)
                return r;
        *ret = strdup(buf_str(&b));
        return *ret ? 0 : -ENOMEM;
}

int azure_string_to_sign(const char *account, const char *url, const char *date,
                         const char *version, char **ret)
{
        return azure_string_to_sign_upload(account, url, date, version, /* up= */ NULL, ret);
}

int azure_shared_key_signature(const char *key, const char *text, char **ret)
{
        AUTOFREE char *raw = NULL;
        uint8_t mac[32];
        size_t n = 0;
        int r;

        r = base64_decode(key, &raw, &n);
        if (r < 0)
                return r;
        if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, raw, n, text, strlen(text), mac) < 0)
                return -EIO;
        *ret = base64_encode(mac, sizeof(mac));
        return *ret ? 0 : -ENOMEM;
}

/* Whether @host (@n bytes) is an Azure blob host: "<account>.blob.core.windows.net" or the DNS
 * zone form "<account>.z<1-2 digits>.blob.storage.azure.net"; the account's length in *ret. */
static bool blob_host(const char *host, size_t n, size_t *ret_account)
{
        static const char *const suffixes[] = { ".blob.core.windows.net",
                                                ".blob.storage.azure.net" };
        const char *dot = memchr(host, '.', n);

        if (!dot || dot == host)
                return false;
        *ret_account = (size_t)(dot - host);
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t k = strlen(suffixes[i]);
                const char *rest = dot;

                if (n - *ret_account < k || strncasecmp(host + n - k, suffixes[i], k) != 0)
                        continue;
                if (i == 0)
                        return rest == host + n - k;
                /* ".zNN" between the account and the suffix */
                if (rest[1] != 'z' && rest[1] != 'Z')
                        continue;
                size_t digits = (size_t)(host + n - k - (rest + 2));
                if (rest + 2 > host + n - k || digits < 1 || digits > 2)
                        continue;
                if (strspn(rest + 2, "0123456789") >= digits)
                        return true;
        }
        return false;
}

bool azure_blob_url_split(const char *url, char **ret_endpoint, char **ret_account,
                          char **ret_container, char **ret_prefix)
{
        const char *host, *slash, *c, *cend, *p;
        size_t hlen, alen = 0;
        char *e, *a, *k, *q;

        *ret_endpoint = *ret_account = *ret_container = *ret_prefix = NULL;
        if (strncasecmp(url, "https://", 8) != 0)
                return false;
        host = url + 8;
        slash = strchr(host, '/');
        if (!slash || strcspn(host, "?#@") < (size_t)(slash - host))
                return false;
        hlen = (size_t)(slash - host);
        if (!blob_host(host, hlen, &alen))
                return false;
        c = slash + 1;
        cend = c + strcspn(c, "/?#");
        if (cend == c || strpbrk(c, "?#"))
                return false;
        p = *cend == '/' ? cend + 1 : cend;
        while (*p == '/')
                p++;
        e = strndup(url, 8 + hlen);
        a = strndup(host, alen);
        k = strndup(c, (size_t)(cend - c));
        q = strdup(p);
        if (!e || !a || !k || !q) {
                free(e);
                free(a);
                free(k);
                free(q);
                return false;
        }
        for (size_t n = strlen(q); n > 0 && q[n - 1] == '/'; n--)
                q[n - 1] = 0;
        for (char *s = a; *s; s++)
                *s = lower(*s);
        for (char *s = e; *s; s++)
                *s = lower(*s);
        *ret_endpoint = e;
        *ret_account = a;
        *ret_container = k;
        *ret_prefix = q;
        return true;
}
