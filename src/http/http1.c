/* SPDX-License-Identifier: Apache-2.0 */
#include "http/http1.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "util/string-util.h"

/* RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" /
 * "_" / "`" / "|" / "~" / DIGIT / ALPHA */
static bool is_tchar(unsigned char c)
{
        if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
                return true;
        return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* field-vchar (VCHAR / obs-text), SP, HTAB: the bytes of a field value */
static bool is_value_byte(unsigned char c)
{
        return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7f);
}

static bool is_ows(unsigned char c)
{
        return c == ' ' || c == '\t';
}

static bool view_eq(const char *p, size_t len, const char *lit)
{
        return strlen(lit) == len && strncasecmp(p, lit, len) == 0;
}

_printf_(4, 0) static enum http1_state
        vrefuse(unsigned *ret_status, char *message, unsigned status, const char *fmt, va_list ap)
{
        (void)vsnprintf(message, HTTP1_MESSAGE_MAX, fmt, ap);
        *ret_status = status;
        return HTTP1_REFUSE;
}

_printf_(4, 5) static enum http1_state
        refuse(unsigned *ret_status, char *message, unsigned status, const char *fmt, ...);
static enum http1_state refuse(unsigned *ret_status, char *message, unsigned status,
                               const char *fmt, ...)
{
        enum http1_state st;
        va_list ap;

        va_start(ap, fmt);
        st = vrefuse(ret_status, message, status, fmt, ap);
        va_end(ap);
        return st;
}

/* A head that cannot be valid. A response that cannot be read is the server's fault: a gateway
 * answers it with 502, whatever the rule. */
_printf_(3, 4) static enum http1_state
        head_refuse(struct http1_head *h, unsigned status, const char *fmt, ...);
static enum http1_state head_refuse(struct http1_head *h, unsigned status, const char *fmt, ...)
{
        enum http1_state st;
        va_list ap;

        va_start(ap, fmt);
        st = vrefuse(&h->status, h->message, h->response ? 502U : status, fmt, ap);
        va_end(ap);
        return st;
}

#define HEAD_REFUSE(h, st, ...)  head_refuse((h), (st), __VA_ARGS__)
#define CHUNK_REFUSE(c, st, ...) refuse(&(c)->status, (c)->message, (st), __VA_ARGS__)

void http1_head_init(struct http1_head *h, const struct http1_limits *limits)
{
        *h = (struct http1_head){ .limits = limits ? *limits : HTTP1_LIMITS_DEFAULT };
}

void http1_head_init_response(struct http1_head *h, const struct http1_limits *limits)
{
        http1_head_init(h, limits);
        h->response = true;
}

/* "request" or "response", for the messages */
static const char *kind(const struct http1_head *h)
{
        return h->response ? "response" : "request";
}

/* Copies a field name for a message: at most 40 bytes, only visible ASCII. */
static const char *name_for_message(const char *p, size_t len, char out[48])
{
        size_t n = 0;

        for (size_t i = 0; i < len && n < 40; i++, n++) {
                out[n] = '?';
                if (p[i] > 0x20 && p[i] < 0x7f)
                        out[n] = p[i];
        }
        if (len > 40) {
                memcpy(out + n, "...", 3);
                n += 3;
        }
        out[n] = '\0';
        return out;
}

/* HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); 1.0 and 1.1 (and later 1.x, read as
 * 1.1) are served, other majors get 505. @where says where it was looked for, for the message. */
static enum http1_state parse_version(struct http1_head *h, const char *v, size_t len,
                                      const char *where)
{
        if (len != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
            v[7] < '0' || v[7] > '9')
                return HEAD_REFUSE(h, 400, "%s an HTTP version (HTTP/1.1)", where);
        if (v[5] != '1')
                return HEAD_REFUSE(h, 505,
                                   "HTTP version %.8s is not supported (HTTP/1.0 and "
                                   "HTTP/1.1 are)",
                                   v);
        h->version_minor = v[7] == '0' ? 0 : 1;
        return HTTP1_NEED_MORE;
}

/*
 * status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4); line excludes
 * CRLF. The space before an empty reason may be missing (§4: a client SHOULD ignore the reason;
 * servers that end the line after the code exist). Codes 100 to 599.
 */
static enum http1_state parse_status_line(struct http1_head *h, const char *buf, size_t off,
                                          size_t len)
{
        const char *line = buf + off;
        enum http1_state st;

        st = parse_version(h, line, len < 8 ? len : 8, "the status line does not start with");
        if (st != HTTP1_NEED_MORE)
                return st;
        if (len < 12 || line[8] != ' ' || (len > 12 && line[12] != ' '))
                return HEAD_REFUSE(h, 502, "the status line is not \"version code reason\"");
        for (size_t i = 9; i < 12; i++)
                if (line[i] < '0' || line[i] > '9')
                        return HEAD_REFUSE(h, 502, "the status code is not three digits");
        h->code = (unsigned)(line[9] - '0') * 100 + (unsigned)(line[10] - '0') * 10 +
                  (unsigned)(line[11] - '0');
        if (h->code < 100 || h->code > 599)
                return HEAD_REFUSE(h, 502, "status code %u is not between 100 and 599", h->code);
        h->reason_off = off + (len > 12 ? 13 : 12);
        h->reason_len = off + len - h->reason_off;
        for (size_t i = h->reason_off; i < off + len; i++)
                if (!is_value_byte((unsigned char)buf[i]))
                        return HEAD_REFUSE(h, 502,
                                           "byte 0x%02x is not allowed in the reason phrase",
                                           (unsigned char)buf[i]);
        return HTTP1_NEED_MORE;
}

/* The four target forms of RFC 9112 §3.2, each only with the methods it belongs to. */
static bool target_form_ok(const char *m, size_t mlen, const char *t, size_t tlen)
{
        size_t i = 0;

        if (t[0] == '/')
                return true;
        if (tlen == 1 && t[0] == '*')
                return view_eq(m, mlen, "OPTIONS");
        if (view_eq(m, mlen, "CONNECT"))
                return true;
        /* absolute-form: scheme ":" ... */
        if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
                return false;
        while (i < tlen && t[i] != ':' &&
               ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
                (t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' || t[i] == '.'))
                i++;
        return i < tlen && t[i] == ':';
}

/* request-line = method SP request-target SP HTTP-version (RFC 9112 §3); line excludes CRLF. */
static enum http1_state parse_request_line(struct http1_head *h, const char *buf, size_t off,
                                           size_t len)
{
        const char *line = buf + off;
        const char *sp1 = memchr(line, ' ', len);
        const char *sp2 = NULL;

        for (size_t i = len; i > 0; i--)
                if (line[i - 1] == ' ') {
                        sp2 = line + i - 1;
                        break;
                }
        if (!sp1 || sp1 == sp2)
                return HEAD_REFUSE(h, 400, "the request line is not \"method target version\"");
        if (sp1 == line)
                return HEAD_REFUSE(h, 400, "the request line starts with a space, not a method");
        for (const char *p = line; p < sp1; p++)
                if (!is_tchar((unsigned char)*p))
                        return HEAD_REFUSE(h, 400, "byte 0x%02x is not allowed in the method",
                                           (unsigned char)*p);
        h->method_off = off;
        h->method_len = (size_t)(sp1 - line);
        h->target_off = off + h->method_len + 1;
        h->target_len = (size_t)(sp2 - sp1 - 1);
        if (h->target_len > h->limits.target_max)
                return HEAD_REFUSE(h, 414, "the request target is over %zu bytes",
                                   h->limits.target_max);
        if (h->target_len == 0)
                return HEAD_REFUSE(h, 400, "the request target is empty");
        for (const char *p = sp1 + 1; p < sp2; p++)
                if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
                        return HEAD_REFUSE(h, 400,
                                           "byte 0x%02x is not allowed in the request "
                                           "target",
                                           (unsigned char)*p);
        if (!target_form_ok(line, h->method_len, sp1 + 1, h->target_len))
                return HEAD_REFUSE(h, 400,
                                   "the request target is not a path, \"*\" (OPTIONS), "
                                   "an authority (CONNECT) or an absolute URI");
        return parse_version(h, sp2 + 1, (size_t)(line + len - sp2 - 1),
                             "the request line does not end with");
}

/* Content-Length = 1*DIGIT (RFC 9110 §8.6); separate fields must agree. */
static enum http1_state on_content_length(struct http1_head *h, const char *v, size_t len)
{
        uint64_t n = 0;

        if (len == 0)
                return HEAD_REFUSE(h, 400, "Content-Length is empty");
        for (size_t i = 0; i < len; i++) {
                if (v[i] < '0' || v[i] > '9')
                        return HEAD_REFUSE(h, 400, "Content-Length is not one decimal number");
                if (n > (UINT64_MAX - 9) / 10)
                        return HEAD_REFUSE(h, 400, "Content-Length is too large");
                n = n * 10 + (uint64_t)(v[i] - '0');
        }
        if (h->has_content_length && h->content_length != n)
                return HEAD_REFUSE(h, 400, "two Content-Length fields with different values");
        h->has_content_length = true;
        h->content_length = n;
        return HTTP1_NEED_MORE;
}

/* One element of a Transfer-Encoding list: a coding, maybe with parameters. */
static void on_transfer_coding(struct http1_head *h, const char *v, size_t len)
{
        h->te_codings++;
        h->te_chunked_last = view_eq(v, len, "chunked");
        if (h->te_chunked_last) {
                h->te_chunked++;
                return;
        }
        for (size_t j = 0; j < len && v[j] != ';'; j++)
                if (!is_tchar((unsigned char)v[j]) && !is_ows((unsigned char)v[j]))
                        h->te_syntax_bad = true;
        if (h->te_unknown[0] == '\0')
                (void)name_for_message(v, len < 24 ? len : 24, h->te_unknown);
}

/*
 * Transfer-Encoding = #transfer-coding (RFC 9112 §6.1). Counts the codings named over all
 * fields; what they mean together is decided once the head is complete (check_framing()).
 */
static void on_transfer_encoding(struct http1_head *h, const char *v, size_t len)
{
        size_t i = 0;

        h->has_te = true;
        while (i <= len) {
                size_t start = i, end;

                while (i < len && v[i] != ',')
                        i++;
                end = i++;
                while (start < end && is_ows((unsigned char)v[start]))
                        start++;
                while (end > start && is_ows((unsigned char)v[end - 1]))
                        end--;
                if (start < end) /* empty list elements are allowed (RFC 9110 §5.6.1) */
                        on_transfer_coding(h, v + start, end - start);
        }
}

/* Connection = #connection-option (RFC 9110 §7.6.1): only close and keep-alive matter here. */
static void on_connection(struct http1_head *h, const char *v, size_t len)
{
        size_t i = 0;

        while (i < len) {
                size_t start, end;

                while (i < len && (v[i] == ',' || is_ows((unsigned char)v[i])))
                        i++;
                start = i;
                while (i < len && v[i] != ',' && !is_ows((unsigned char)v[i]))
                        i++;
                end = i;
                if (view_eq(v + start, end - start, "close"))
                        h->conn_close = true;
                else if (view_eq(v + start, end - start, "keep-alive"))
                        h->conn_keep_alive = true;
        }
}

static enum http1_state on_field(struct http1_head *h, const char *name, size_t nlen, const char *v,
                                 size_t vlen)
{
        if (view_eq(name, nlen, "Content-Length"))
                return on_content_length(h, v, vlen);
        if (view_eq(name, nlen, "Transfer-Encoding"))
                on_transfer_encoding(h, v, vlen);
        else if (view_eq(name, nlen, "Connection"))
                on_connection(h, v, vlen);
        else if (view_eq(name, nlen, "Expect"))
                h->expect_continue = h->expect_continue || view_eq(v, vlen, "100-continue");
        else if (!h->response && view_eq(name, nlen, "Host") && ++h->n_host > 1)
                return HEAD_REFUSE(h, 400, "more than one Host field");
        return HTTP1_NEED_MORE;
}

/*
 * Splits a field line (RFC 9112 §5: field-name ":" OWS field-value OWS) into name and value.
 * Shared by the head and http1_head_next_field(); the head checks the bytes.
 */
static bool split_field(const char *line, size_t len, size_t *ret_nlen, size_t *ret_voff,
                        size_t *ret_vlen)
{
        const char *colon = memchr(line, ':', len);
        size_t voff, vend = len;

        if (!colon)
                return false;
        voff = (size_t)(colon - line) + 1;
        while (voff < vend && is_ows((unsigned char)line[voff]))
                voff++;
        while (vend > voff && is_ows((unsigned char)line[vend - 1]))
                vend--;
        *ret_nlen = (size_t)(colon - line);
        *ret_voff = voff;
        *ret_vlen = vend - voff;
        return true;
}

static enum http1_state parse_field_line(struct http1_head *h, const char *line, size_t len)
{
        size_t nlen, voff, vlen;
        char nm[48];

        if (is_ows((unsigned char)line[0]))
                return HEAD_REFUSE(h, 400,
                                   "a header line starts with whitespace (obsolete line "
                                   "folding is not accepted)");
        if (!split_field(line, len, &nlen, &voff, &vlen))
                return HEAD_REFUSE(h, 400, "header line \"%s\" has no colon",
                                   name_for_message(line, len, nm));
        if (nlen == 0)
                return HEAD_REFUSE(h, 400, "a header line has an empty field name");
        for (size_t i = 0; i < nlen; i++) {
                if (is_ows((unsigned char)line[i]))
                        return HEAD_REFUSE(h, 400,
                                           "whitespace between header field name \"%s\" "
                                           "and its colon",
                                           name_for_message(line, i, nm));
                if (!is_tchar((unsigned char)line[i]))
                        return HEAD_REFUSE(h, 400,
                                           "byte 0x%02x is not allowed in a header field "
                                           "name",
                                           (unsigned char)line[i]);
        }
        for (size_t i = voff; i < voff + vlen; i++)
                if (!is_value_byte((unsigned char)line[i]))
                        return HEAD_REFUSE(h, 400,
                                           "byte 0x%02x is not allowed in the value of "
                                           "header field %s",
                                           (unsigned char)line[i],
                                           name_for_message(line, nlen, nm));
        if (++h->n_fields > h->limits.fields_max)
                return HEAD_REFUSE(h, 431, "over %zu header fields", h->limits.fields_max);
        h->field_bytes += nlen + vlen;
        if (h->field_bytes > h->limits.field_bytes_max)
                return HEAD_REFUSE(h, 431, "header fields over %zu KiB (%zu bytes)",
                                   h->limits.field_bytes_max / 1024, h->limits.field_bytes_max);
        return on_field(h, line, nlen, line + voff, vlen);
}

/*
 * RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any HTTP/1.1
 * request message that lacks a Host header field" (more than one is refused as it is read). An
 * HTTP/1.0 request may have none.
 */
static enum http1_state check_host(struct http1_head *h)
{
        if (h->n_host == 0 && h->version_minor >= 1 && !h->response && !h->limits.host_optional)
                return HEAD_REFUSE(h, 400, "an HTTP/1.1 request without a Host field");
        return HTTP1_COMPLETE;
}

/* Message framing once the head is complete (RFC 9112 §6), then Host. */
static enum http1_state check_framing(struct http1_head *h)
{
        if (!h->has_te)
                return check_host(h);
        if (h->has_content_length)
                return HEAD_REFUSE(h, 400, "Content-Length together with Transfer-Encoding");
        if (h->version_minor == 0)
                return HEAD_REFUSE(h, 400, "Transfer-Encoding in an HTTP/1.0 %s", kind(h));
        if (h->te_syntax_bad)
                return HEAD_REFUSE(h, 400, "Transfer-Encoding is not a list of codings");
        if (h->te_codings == 0)
                return HEAD_REFUSE(h, 400, "Transfer-Encoding is empty");
        if (h->te_chunked > 0 && !h->te_chunked_last)
                return HEAD_REFUSE(h, 400, "chunked is not the last transfer coding");
        if (h->te_chunked > 1)
                return HEAD_REFUSE(h, 400, "the chunked transfer coding is applied twice");
        if (h->te_codings > h->te_chunked)
                return HEAD_REFUSE(h, 501,
                                   "transfer coding \"%s\" is not supported (only "
                                   "chunked is)",
                                   h->te_unknown);
        h->chunked = true;
        return check_host(h);
}

/* The request line is not complete yet: refuse early a target already over its limit. */
static enum http1_state check_partial_request_line(struct http1_head *h, const char *buf,
                                                   size_t len)
{
        const char *line = buf + h->pos;
        size_t n = len - h->pos;
        const char *sp1 = n > 0 ? memchr(line, ' ', n) : NULL, *sp2; /* buf may be NULL */

        if (sp1 && !h->response) {
                size_t rest = n - (size_t)(sp1 + 1 - line);

                sp2 = memchr(sp1 + 1, ' ', rest);
                if ((sp2 ? (size_t)(sp2 - sp1 - 1) : rest) > h->limits.target_max)
                        return HEAD_REFUSE(h, 414, "the request target is over %zu bytes",
                                           h->limits.target_max);
        }
        if (len > h->limits.head_max)
                return HEAD_REFUSE(h, 400, "the %s line is over %zu bytes",
                                   h->response ? "status" : "request", h->limits.head_max);
        return HTTP1_NEED_MORE;
}

static enum http1_state parse_line(struct http1_head *h, const char *buf, size_t end)
{
        size_t len = end - h->pos;

        if (len > 0 && buf[h->pos + len - 1] == '\r')
                len--;
        if (memchr(buf + h->pos, '\r', len))
                return HEAD_REFUSE(h, 400, "a bare CR (not followed by LF) in the %s head",
                                   kind(h));
        if (!h->in_fields) {
                if (len == 0) /* empty lines before the start line are ignored (§2.2) */
                        return HTTP1_NEED_MORE;
                h->in_fields = true;
                h->start_off = h->pos;
                if (h->response)
                        return parse_status_line(h, buf, h->pos, len);
                return parse_request_line(h, buf, h->pos, len);
        }
        if (len == 0) {
                h->head_len = end + 1;
                return check_framing(h);
        }
        return parse_field_line(h, buf + h->pos, len);
}

enum http1_state http1_head_feed(struct http1_head *h, const char *buf, size_t len)
{
        if (h->status != 0)
                return HTTP1_REFUSE;
        if (h->head_len != 0)
                return HTTP1_COMPLETE;
        while (h->pos < len) {
                const char *lf = memchr(buf + h->pos, '\n', len - h->pos);
                size_t end;
                enum http1_state st;

                if (!lf)
                        break;
                end = (size_t)(lf - buf);
                if (end + 1 > h->limits.head_max)
                        return h->in_fields ? HEAD_REFUSE(h, 431, "the %s head is over %zu bytes",
                                                          kind(h), h->limits.head_max)
                                            : check_partial_request_line(h, buf, end + 1);
                st = parse_line(h, buf, end);
                h->pos = end + 1;
                if (st != HTTP1_NEED_MORE)
                        return st;
        }
        if (!h->in_fields)
                return check_partial_request_line(h, buf, len);
        if (len > h->limits.head_max)
                return HEAD_REFUSE(h, 431, "the %s head is over %zu bytes", kind(h),
                                   h->limits.head_max);
        return HTTP1_NEED_MORE;
}

bool http1_head_keep_alive(const struct http1_head *h)
{
        if (h->conn_close)
                return false;
        return h->version_minor >= 1 || h->conn_keep_alive;
}

bool http1_head_next_field(const struct http1_head *h, const char *buf, size_t *cursor,
                           const char **ret_name, size_t *ret_name_len, const char **ret_value,
                           size_t *ret_value_len)
{
        size_t pos = *cursor == 0 ? h->start_off : *cursor;
        size_t nlen, voff, vlen;

        for (;;) {
                const char *lf = memchr(buf + pos, '\n', h->head_len - pos);
                size_t line = pos, len;

                if (!lf)
                        return false;
                len = (size_t)(lf - (buf + pos));
                pos = (size_t)(lf - buf) + 1;
                if (len > 0 && buf[line + len - 1] == '\r')
                        len--;
                if (line <= h->start_off || len == 0)
                        continue; /* the start line; the final empty line ends the loop */
                if (!split_field(buf + line, len, &nlen, &voff, &vlen))
                        return false;
                *cursor = pos;
                *ret_name = buf + line;
                *ret_name_len = nlen;
                *ret_value = buf + line + voff;
                *ret_value_len = vlen;
                return true;
        }
}

/* The chunked decoder's states: one per place in the grammar of RFC 9112 §7.1. */
enum chunk_state {
        CHUNK_SIZE,    /* hex digits of chunk-size */
        CHUNK_SIZE_WS, /* BWS after the size, before ";" */
        CHUNK_EXT,     /* chunk-ext, up to CR */
        CHUNK_SIZE_LF, /* the LF of the size line */
        CHUNK_DATA,    /* chunk-data */
        CHUNK_DATA_CR, /* the CRLF after the data */
        CHUNK_DATA_LF,
        CHUNK_TRAILER,  /* the start of a trailer line (or of the final CRLF) */
        CHUNK_TR_NAME,  /* a trailer field's name */
        CHUNK_TR_VALUE, /* its value, up to CR */
        CHUNK_TR_LF,    /* the LF that ends a trailer line */
        CHUNK_END_LF,   /* the LF of the final CRLF */
        CHUNK_DONE,
};

void http1_chunked_init(struct http1_chunked *c, const struct http1_limits *limits)
{
        *c = (struct http1_chunked){ .limits = limits ? *limits : HTTP1_LIMITS_DEFAULT,
                                     .state = CHUNK_SIZE };
}

/* The end of a size line: the data comes next, or the trailers after the last chunk. */
static enum http1_state chunk_size_done(struct http1_chunked *c)
{
        if (c->size == 0) {
                c->state = CHUNK_TRAILER;
                return HTTP1_NEED_MORE;
        }
        if (__builtin_add_overflow(c->body_len, c->size, &c->body_len))
                return CHUNK_REFUSE(c, 400, "the chunked body is too large");
        c->remaining = c->size;
        c->state = CHUNK_DATA;
        return HTTP1_NEED_MORE;
}

/* chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF */
static enum http1_state chunk_size_byte(struct http1_chunked *c, unsigned char b)
{
        int d = unhexchar((char)b);

        switch (c->state) {
        case CHUNK_SIZE:
                if (d >= 0) {
                        if (++c->digits > 16)
                                return CHUNK_REFUSE(c, 400, "a chunk size over 16 hex digits");
                        c->size = c->size * 16 + (uint64_t)d;
                        return HTTP1_NEED_MORE;
                }
                if (c->digits == 0)
                        return CHUNK_REFUSE(c, 400,
                                            "a chunk size that is not a hexadecimal "
                                            "number");
                c->state = b == ';' ? CHUNK_EXT : is_ows(b) ? CHUNK_SIZE_WS : CHUNK_SIZE_LF;
                if (b == '\r' || b == ';' || is_ows(b))
                        return HTTP1_NEED_MORE;
                return CHUNK_REFUSE(c, 400, "byte 0x%02x after a chunk size", b);
        case CHUNK_SIZE_WS:
                if (b == ';')
                        c->state = CHUNK_EXT;
                else if (!is_ows(b))
                        return CHUNK_REFUSE(c, 400,
                                            "whitespace after a chunk size not followed "
                                            "by an extension");
                return HTTP1_NEED_MORE;
        case CHUNK_EXT:
                if (b == '\r')
                        c->state = CHUNK_SIZE_LF;
                else if (!is_value_byte(b))
                        return CHUNK_REFUSE(c, 400, "byte 0x%02x in a chunk extension", b);
                else if (++c->ext_len > c->limits.chunk_ext_max)
                        return CHUNK_REFUSE(c, 400, "chunk extensions over %zu bytes",
                                            c->limits.chunk_ext_max);
                return HTTP1_NEED_MORE;
        default: /* CHUNK_SIZE_LF */
                if (b != '\n')
                        return CHUNK_REFUSE(c, 400, "a chunk size line not ended by CRLF");
                return chunk_size_done(c);
        }
}

/* trailer-section = *( field-line CRLF ), then the final CRLF */
static enum http1_state chunk_trailer_byte(struct http1_chunked *c, unsigned char b)
{
        if (c->state != CHUNK_TRAILER && c->state != CHUNK_END_LF &&
            ++c->trailer_bytes > c->limits.field_bytes_max)
                return CHUNK_REFUSE(c, 431, "trailer fields over %zu bytes",
                                    c->limits.field_bytes_max);
        switch (c->state) {
        case CHUNK_TRAILER:
                if (b == '\r') {
                        c->state = CHUNK_END_LF;
                        return HTTP1_NEED_MORE;
                }
                if (is_ows(b))
                        return CHUNK_REFUSE(c, 400, "a trailer line starts with whitespace");
                if (!is_tchar(b))
                        return CHUNK_REFUSE(c, 400, "byte 0x%02x in a trailer field name", b);
                if (++c->n_trailers > c->limits.fields_max)
                        return CHUNK_REFUSE(c, 431, "over %zu trailer fields",
                                            c->limits.fields_max);
                c->state = CHUNK_TR_NAME;
                return HTTP1_NEED_MORE;
        case CHUNK_TR_NAME:
                if (b == ':')
                        c->state = CHUNK_TR_VALUE;
                else if (b == '\r' || b == '\n')
                        return CHUNK_REFUSE(c, 400, "a trailer line without a colon");
                else if (!is_tchar(b))
                        return CHUNK_REFUSE(c, 400, "byte 0x%02x in a trailer field name", b);
                return HTTP1_NEED_MORE;
        case CHUNK_TR_VALUE:
                if (b == '\r')
                        c->state = CHUNK_TR_LF;
                else if (!is_value_byte(b))
                        return CHUNK_REFUSE(c, 400, "byte 0x%02x in a trailer field value", b);
                return HTTP1_NEED_MORE;
        case CHUNK_TR_LF:
                if (b != '\n')
                        return CHUNK_REFUSE(c, 400, "a trailer line not ended by CRLF");
                c->state = CHUNK_TRAILER;
                return HTTP1_NEED_MORE;
        default: /* CHUNK_END_LF */
                if (b != '\n')
                        return CHUNK_REFUSE(c, 400, "the chunked body not ended by CRLF");
                c->state = CHUNK_DONE;
                return HTTP1_COMPLETE;
        }
}

static enum http1_state chunk_framing_byte(struct http1_chunked *c, unsigned char b)
{
        switch (c->state) {
        case CHUNK_DATA_CR:
                if (b != '\r')
                        return CHUNK_REFUSE(c, 400, "chunk data not followed by CRLF");
                c->state = CHUNK_DATA_LF;
                return HTTP1_NEED_MORE;
        case CHUNK_DATA_LF:
                if (b != '\n')
                        return CHUNK_REFUSE(c, 400, "chunk data not followed by CRLF");
                c->state = CHUNK_SIZE;
                c->size = 0;
                c->digits = 0;
                c->ext_len = 0;
                return HTTP1_NEED_MORE;
        case CHUNK_SIZE:
        case CHUNK_SIZE_WS:
        case CHUNK_EXT:
        case CHUNK_SIZE_LF:
                return chunk_size_byte(c, b);
        default:
                return chunk_trailer_byte(c, b);
        }
}

enum http1_state http1_chunked_feed(struct http1_chunked *c, const char *in, size_t len,
                                    size_t *ret_consumed, size_t *ret_data_off,
                                    size_t *ret_data_len)
{
        size_t i = 0;
        enum http1_state st = HTTP1_NEED_MORE;

        *ret_data_off = 0;
        *ret_data_len = 0;
        if (c->status != 0 || c->state == CHUNK_DONE) {
                *ret_consumed = 0;
                return c->status != 0 ? HTTP1_REFUSE : HTTP1_COMPLETE;
        }
        while (i < len && st == HTTP1_NEED_MORE) {
                if (c->state == CHUNK_DATA) {
                        size_t n = len - i < c->remaining ? len - i : (size_t)c->remaining;

                        *ret_data_off = i;
                        *ret_data_len = n;
                        c->remaining -= n;
                        if (c->remaining == 0)
                                c->state = CHUNK_DATA_CR;
                        i += n;
                        break;
                }
                st = chunk_framing_byte(c, (unsigned char)in[i++]);
        }
        *ret_consumed = i;
        return st;
}

enum stream_state {
        STREAM_HEAD,
        STREAM_INTERIM,     /* after a 1xx: the final response's head comes next */
        STREAM_LENGTH,      /* a Content-Length body */
        STREAM_CHUNKED,     /* a chunked body */
        STREAM_UNTIL_CLOSE, /* a response body that the connection's end ends */
        STREAM_END,         /* the body ended: HTTP1_EV_END next */
        STREAM_CLOSED,      /* after the last message, or a refusal */
};

/* A fresh head for the next message of the stream. */
static void stream_head_reset(struct http1_stream *s)
{
        if (s->response)
                http1_head_init_response(&s->head, &s->limits);
        else
                http1_head_init(&s->head, &s->limits);
}

void http1_stream_init(struct http1_stream *s, const struct http1_limits *limits)
{
        *s = (struct http1_stream){ .limits = limits ? *limits : HTTP1_LIMITS_DEFAULT,
                                    .state = STREAM_HEAD };
        stream_head_reset(s);
}

void http1_stream_init_response(struct http1_stream *s, const struct http1_limits *limits)
{
        http1_stream_init(s, limits);
        s->response = true;
        stream_head_reset(s);
}

void http1_stream_set_head_request(struct http1_stream *s, bool head_request)
{
        s->head_request = head_request;
}

static enum http1_event stream_refuse(struct http1_stream *s, unsigned status, const char *msg)
{
        s->state = STREAM_CLOSED;
        s->status = s->response ? 502U : status;
        s->message = msg;
        return HTTP1_EV_REFUSE;
}

/* The body of a message whose head is complete: chunked, Content-Length, or none. */
static void stream_body_start(struct http1_stream *s)
{
        s->body = s->head.chunked              ? HTTP1_BODY_CHUNKED
                  : s->head.has_content_length ? HTTP1_BODY_LENGTH
                                               : HTTP1_BODY_NONE;
        if (s->head.chunked) {
                http1_chunked_init(&s->chunked, &s->limits);
                s->state = STREAM_CHUNKED;
        } else if (s->head.content_length > 0) {
                s->remaining = s->head.content_length;
                s->state = STREAM_LENGTH;
        } else
                s->state = STREAM_END;
}

/* The framing of a response (RFC 9112 §6.3), once its head is complete. */
static void stream_response_start(struct http1_stream *s)
{
        unsigned code = s->head.code;

        s->body = HTTP1_BODY_NONE;
        if (code == 101) {
                s->state = STREAM_CLOSED; /* another protocol follows */
                return;
        }
        if (code < 200) {
                s->state = STREAM_INTERIM;
                return;
        }
        if (s->head_request || code == 204 || code == 304)
                s->state = STREAM_END;
        else if (!s->head.chunked && !s->head.has_content_length) {
                s->state = STREAM_UNTIL_CLOSE;
                s->body = HTTP1_BODY_UNTIL_CLOSE;
                s->close_after = true;
        } else
                stream_body_start(s);
}

static enum http1_event stream_head(struct http1_stream *s, const char *buf, size_t len,
                                    struct http1_step *step)
{
        switch (http1_head_feed(&s->head, buf, len)) {
        case HTTP1_NEED_MORE:
                return HTTP1_EV_NEED_MORE;
        case HTTP1_REFUSE:
                return stream_refuse(s, s->head.status, s->head.message);
        default:
                break;
        }
        step->consumed = s->head.head_len;
        s->close_after = !http1_head_keep_alive(&s->head);
        if (s->response)
                stream_response_start(s);
        else
                stream_body_start(s);
        return HTTP1_EV_HEAD;
}

static enum http1_event stream_body(struct http1_stream *s, const char *buf, size_t len,
                                    struct http1_step *step)
{
        if (s->state == STREAM_LENGTH) {
                size_t n = len < s->remaining ? len : (size_t)s->remaining;

                if (n == 0)
                        return HTTP1_EV_NEED_MORE;
                s->remaining -= n;
                if (s->remaining == 0)
                        s->state = STREAM_END;
                step->consumed = step->data_len = n;
                return HTTP1_EV_DATA;
        }
        switch (http1_chunked_feed(&s->chunked, buf, len, &step->consumed, &step->data_off,
                                   &step->data_len)) {
        case HTTP1_REFUSE:
                return stream_refuse(s, s->chunked.status, s->chunked.message);
        case HTTP1_COMPLETE:
                s->state = STREAM_END;
                return HTTP1_EV_END;
        default:
                return step->data_len > 0 ? HTTP1_EV_DATA : HTTP1_EV_NEED_MORE;
        }
}

/* The message ended: the next head, or the end of the stream. */
static enum http1_event stream_end(struct http1_stream *s)
{
        s->state = s->close_after ? STREAM_CLOSED : STREAM_HEAD;
        s->head_request = false;
        stream_head_reset(s);
        return HTTP1_EV_END;
}

enum http1_event http1_stream_feed(struct http1_stream *s, const char *buf, size_t len,
                                   struct http1_step *ret_step)
{
        *ret_step = (struct http1_step){ 0 };
        switch (s->state) {
        case STREAM_INTERIM: /* the interim head stays readable until the next one starts */
                if (len == 0)
                        return HTTP1_EV_NEED_MORE;
                stream_head_reset(s);
                s->state = STREAM_HEAD;
                return stream_head(s, buf, len, ret_step);
        case STREAM_HEAD:
                return stream_head(s, buf, len, ret_step);
        case STREAM_LENGTH:
        case STREAM_CHUNKED: {
                enum http1_event ev = stream_body(s, buf, len, ret_step);

                if (ev != HTTP1_EV_END)
                        return ev;
                break; /* the chunked body ended: fall to the end of the message */
        }
        case STREAM_UNTIL_CLOSE:
                ret_step->consumed = ret_step->data_len = len;
                return len > 0 ? HTTP1_EV_DATA : HTTP1_EV_NEED_MORE;
        case STREAM_END:
                break;
        default: /* STREAM_CLOSED */
                ret_step->consumed = len;
                return HTTP1_EV_NEED_MORE;
        }
        return stream_end(s);
}

enum http1_event http1_stream_eof(struct http1_stream *s, size_t pending)
{
        enum stream_state st = (enum stream_state)s->state;

        if (st == STREAM_UNTIL_CLOSE || st == STREAM_END) {
                s->close_after = true;
                return stream_end(s);
        }
        if (st == STREAM_CLOSED || (st == STREAM_HEAD && pending == 0)) {
                s->state = STREAM_CLOSED;
                return HTTP1_EV_NEED_MORE;
        }
        return stream_refuse(s, 400,
                             st == STREAM_HEAD || st == STREAM_INTERIM
                                     ? "the connection closed inside a head"
                                     : "the connection closed inside a body");
}
