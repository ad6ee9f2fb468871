/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/s3-xml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/string-util.h"

void s3_list_release(struct s3_list *l)
{
        for (size_t i = 0; i < l->n_keys; i++) {
                free(l->keys[i]);
                free(l->md5s[i]);
        }
        free(l->keys);
        free(l->sizes);
        free(l->md5s);
        free(l->next_token);
        *l = (struct s3_list){ 0 };
}

int s3_list_add(struct s3_list *l, char *key, uint64_t size, char *md5)
{
        char **keys, **md5s;
        uint64_t *sizes;

        if (l->n_keys >= S3_LIST_KEYS_MAX) {
                free(key);
                free(md5);
                return -E2BIG;
        }
        keys = reallocarray(l->keys, l->n_keys + 1, sizeof(*keys));
        if (keys)
                l->keys = keys;
        sizes = keys ? reallocarray(l->sizes, l->n_keys + 1, sizeof(*sizes)) : NULL;
        if (sizes)
                l->sizes = sizes;
        md5s = sizes ? reallocarray(l->md5s, l->n_keys + 1, sizeof(*md5s)) : NULL;
        if (!md5s) {
                free(key);
                free(md5);
                return -ENOMEM;
        }
        l->md5s = md5s;
        l->keys[l->n_keys] = key;
        l->sizes[l->n_keys] = size;
        l->md5s[l->n_keys++] = md5;
        return 0;
}

/* Decimal digits (at most 19) as a size; S3_SIZE_UNKNOWN otherwise. */
static uint64_t parse_size(const char *s, size_t n)
{
        uint64_t v = 0;

        if (n == 0 || n > 19)
                return S3_SIZE_UNKNOWN;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return S3_SIZE_UNKNOWN;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        return v;
}

/* Appends the UTF-8 encoding of @cp to @out; returns the bytes written, 0 if invalid. */
static size_t put_utf8(unsigned long cp, char *out)
{
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xC0 | (cp >> 6));
                out[1] = (char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xE0 | (cp >> 12));
                out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[2] = (char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

/* A named entity at @s (after the '&', @n bytes left): writes its character. Returns the bytes
 * consumed, 0 when none matches. */
static size_t named_entity(const char *s, size_t n, char *o)
{
        static const struct {
                const char *ent;
                char c;
        } ents[] = {
                { "amp;", '&' }, { "lt;", '<' }, { "gt;", '>' }, { "quot;", '"' }, { "apos;", '\'' }
        };

        for (size_t e = 0; e < ELEMENTSOF(ents); e++) {
                size_t k = strlen(ents[e].ent);
                if (n >= k && strncmp(s, ents[e].ent, k) == 0) {
                        *o = ents[e].c;
                        return k;
                }
        }
        return 0;
}

static int digit_value(char c, bool hex)
{
        if (hex)
                return unhexchar(c);
        return c >= '0' && c <= '9' ? c - '0' : -EINVAL;
}

/* A character reference "#NNN;" or "#xHHH;" at @s (after the '&', @n bytes left): writes its
 * UTF-8 to @o (never more bytes than its text). Returns the bytes consumed, 0 when bad. */
static size_t char_reference(const char *s, size_t n, char *o, size_t *ret_written)
{
        bool hex;
        size_t j, digits = 0;
        unsigned long cp = 0;

        if (n < 3 || s[0] != '#')
                return 0;
        hex = s[1] == 'x' || s[1] == 'X';
        for (j = hex ? 2 : 1; j < n && s[j] != ';' && digits < 8; j++, digits++) {
                int v = digit_value(s[j], hex);
                if (v < 0)
                        return 0;
                cp = cp * (hex ? 16 : 10) + (unsigned long)v;
        }
        if (j >= n || s[j] != ';' || digits == 0)
                return 0;
        *ret_written = put_utf8(cp, o);
        return *ret_written == 0 ? 0 : j + 1;
}

/* Decodes @n bytes of element text; returns an owned string, NULL on OOM or a bad entity. */
static char *decode_text(const char *s, size_t n, int *ret_err)
{
        AUTOFREE char *out = malloc(n + 1);
        size_t i = 0, len = 0; /* read from s[i], written to out[len] */

        if (!out) {
                *ret_err = -ENOMEM;
                return NULL;
        }
        while (i < n) {
                size_t k, w = 1;

                if (s[i] == 0)
                        break;
                if (s[i] != '&') {
                        out[len++] = s[i++];
                        continue;
                }
                k = named_entity(s + i + 1, n - i - 1, out + len);
                if (k == 0)
                        k = char_reference(s + i + 1, n - i - 1, out + len, &w);
                if (k == 0)
                        break;
                len += w;
                i += 1 + k;
        }
        if (i < n) {
                *ret_err = -EBADMSG;
                return NULL;
        }
        out[len] = 0;
        return TAKE_PTR(out);
}

/* Finds "<tag>" at or after @from (before @end); sets the text span. Returns the end or NULL. */
static const char *find_element(const char *from, const char *end, const char *tag,
                                const char **ret_text, size_t *ret_len)
{
        char open[64], close[64];
        size_t lo, lc;
        const char *p = from;

        lo = (size_t)snprintf(open, sizeof(open), "<%s>", tag);
        lc = (size_t)snprintf(close, sizeof(close), "</%s>", tag);
        while (p && (size_t)(end - p) >= lo) {
                const char *q = memmem(p, (size_t)(end - p), open, lo), *c;
                if (!q)
                        return NULL;
                q += lo;
                c = memmem(q, (size_t)(end - q), close, lc);
                if (!c)
                        return NULL;
                *ret_text = q;
                *ret_len = (size_t)(c - q);
                return c + lc;
        }
        return NULL;
}

int s3_list_parse(const char *xml, size_t len, struct s3_list *l)
{
        const char *end = xml + len, *p = xml, *text, *cend;
        size_t tlen;
        int r = 0;

        if (!memmem(xml, len, "<ListBucketResult", 17))
                return -EBADMSG;
        while ((cend = find_element(p, end, "Contents", &text, &tlen))) {
                const char *ktext, *stext;
                size_t klen, slen;
                uint64_t size = S3_SIZE_UNKNOWN;
                char *key;

                if (!find_element(text, text + tlen, "Key", &ktext, &klen))
                        return -EBADMSG;
                if (find_element(text, text + tlen, "Size", &stext, &slen))
                        size = parse_size(stext, slen);
                if (l->n_keys >= S3_LIST_KEYS_MAX)
                        return -E2BIG;
                key = decode_text(ktext, klen, &r);
                if (!key)
                        return r;
                r = s3_list_add(l, key, size, NULL);
                if (r < 0)
                        return r;
                p = cend;
        }
        l->truncated = false;
        if (find_element(xml, end, "IsTruncated", &text, &tlen))
                l->truncated = tlen == 4 && strncmp(text, "true", 4) == 0;
        free(l->next_token);
        l->next_token = NULL;
        if (find_element(xml, end, "NextContinuationToken", &text, &tlen)) {
                l->next_token = decode_text(text, tlen, &r);
                if (!l->next_token)
                        return r;
        }
        if (l->truncated && !l->next_token)
                return -EBADMSG;
        return 0;
}

/* One <Blob> element's text (text, tlen): its name, Content-Length and Content-MD5 listed. */
static int azure_blob_add(const char *text, size_t tlen, struct s3_list *l)
{
        const char *ntext, *stext, *mtext;
        size_t nlen, slen, mlen;
        uint64_t size = S3_SIZE_UNKNOWN;
        char *name, *md5 = NULL;
        int r = 0;

        if (!find_element(text, text + tlen, "Name", &ntext, &nlen))
                return -EBADMSG;
        if (find_element(text, text + tlen, "Content-Length", &stext, &slen))
                size = parse_size(stext, slen);
        if (l->n_keys >= S3_LIST_KEYS_MAX)
                return -E2BIG;
        if (find_element(text, text + tlen, "Content-MD5", &mtext, &mlen) && mlen > 0) {
                md5 = decode_text(mtext, mlen, &r);
                if (!md5)
                        return r;
        }
        name = decode_text(ntext, nlen, &r);
        if (!name) {
                free(md5);
                return r;
        }
        return s3_list_add(l, name, size, md5);
}

int azure_list_parse(const char *xml, size_t len, struct s3_list *l)
{
        const char *end = xml + len, *p = xml, *text, *cend, *blobs_end;
        size_t tlen;
        int r = 0;

        if (!memmem(xml, len, "<EnumerationResults", 19))
                return -EBADMSG;
        /* the blobs, then NextMarker: a name never holds a raw '<' */
        blobs_end = find_element(xml, end, "Blobs", &text, &tlen) ? text + tlen : NULL;
        if (blobs_end)
                p = text;
        while (blobs_end && (cend = find_element(p, blobs_end, "Blob", &text, &tlen))) {
                r = azure_blob_add(text, tlen, l);
                if (r < 0)
                        return r;
                p = cend;
        }
        free(l->next_token);
        l->next_token = NULL;
        l->truncated = false;
        if (find_element(blobs_end ? blobs_end : xml, end, "NextMarker", &text, &tlen) &&
            tlen > 0) {
                l->next_token = decode_text(text, tlen, &r);
                if (!l->next_token)
                        return r;
                l->truncated = true;
        }
        return 0;
}

bool s3_error_parse(const char *xml, size_t len, char *buf, size_t buf_len)
{
        const char *end = xml + len, *code, *msg = NULL;
        size_t lcode, lmsg = 0;
        AUTOFREE char *c = NULL, *m = NULL;
        int r;

        if (!memmem(xml, len, "<Error", 6) || !find_element(xml, end, "Code", &code, &lcode))
                return false;
        if (!find_element(xml, end, "Message", &msg, &lmsg))
                lmsg = 0;
        c = decode_text(code, lcode, &r);
        m = lmsg ? decode_text(msg, lmsg, &r) : strdup("");
        if (!c || !m)
                return false;
        snprintf(buf, buf_len, "%s%s%s", c, *m ? ": " : "", m);
        return true;
}
