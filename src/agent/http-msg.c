/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/http-msg.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "util/string-util.h"

#define LINE_MAX_ 8192U

static ssize_t rd_fill(struct http_msg_rd *r)
{
        ssize_t n;

        if (r->s == r->e)
                r->s = r->e = 0;
        if (r->e == sizeof(r->b)) {
                memmove(r->b, r->b + r->s, r->e - r->s);
                r->e -= r->s;
                r->s = 0;
        }
        do
                n = recv(r->fd, r->b + r->e, sizeof(r->b) - r->e, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return negative_errno();
        r->e += (size_t)n;
        return n;
}

/* More bytes inside a message: the peer closing the connection here is -EBADMSG. */
static int rd_more(struct http_msg_rd *r)
{
        ssize_t n = rd_fill(r);

        if (n == 0)
                return -EBADMSG;
        return n < 0 ? (int)n : 0;
}

int http_msg_write_all(int fd, const void *data, size_t len)
{
        const char *p = data;

        if (fd < 0)
                return 0; /* reading a body without passing it on */

        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Skips the empty lines a client may send before a request (RFC 9112 2.2). Returns 0 with a byte
 * buffered, -ENODATA on a clean EOF, other errno. */
static int skip_empty_lines(struct http_msg_rd *r)
{
        for (;;) {
                while (r->s < r->e && (r->b[r->s] == '\r' || r->b[r->s] == '\n'))
                        r->s++;
                if (r->s < r->e)
                        return 0;
                ssize_t n = rd_fill(r);
                if (n <= 0)
                        return n == 0 ? -ENODATA : (int)n;
        }
}

/* Whether @head, which just got a '\n', ends with the empty line. */
static bool head_complete(const struct buf *head)
{
        const char *t = buf_str(head) + head->len;

        if (head->len < 2)
                return false;
        return (head->len >= 4 && memcmp(t - 4, "\r\n\r\n", 4) == 0) ||
               memcmp(t - 2, "\n\n", 2) == 0;
}

/* Reads a head (through CRLFCRLF) into @head. Returns 0, -ENODATA (clean EOF before any byte),
 * -EMSGSIZE, -EBADMSG (EOF inside), other errno. */
int http_msg_read_head(struct http_msg_rd *r, struct buf *head)
{
        int k;

        k = skip_empty_lines(r);
        if (k < 0)
                return k;
        for (;;) {
                while (r->s < r->e) {
                        char c = r->b[r->s++];
                        if (buf_putc(head, c) < 0)
                                return -EMSGSIZE;
                        if (c == '\n' && head_complete(head))
                                return 0;
                }
                k = rd_more(r);
                if (k < 0)
                        return k;
        }
}

/* Reads one line (through LF) into @line (NUL-terminated, CRLF kept). */
static int read_line(struct http_msg_rd *r, char *line, size_t max, size_t *ret_len)
{
        size_t n = 0;

        for (;;) {
                while (r->s < r->e) {
                        char c = r->b[r->s++];
                        if (n + 1 >= max)
                                return -EMSGSIZE;
                        line[n++] = c;
                        if (c == '\n') {
                                line[n] = 0;
                                *ret_len = n;
                                return 0;
                        }
                }
                int k = rd_more(r);
                if (k < 0)
                        return k;
        }
}

/* Keeps a copy of payload bytes when the reader has a tee. */
static void tee_add(struct http_msg_rd *r, const char *p, size_t len)
{
        if (r->tee && !r->tee_over && buf_append(r->tee, p, len) < 0)
                r->tee_over = true;
}

static int copy_n(struct http_msg_rd *r, int out, uint64_t n)
{
        while (n > 0) {
                if (r->s == r->e) {
                        int k = rd_more(r);
                        if (k < 0)
                                return k;
                }
                size_t chunk = MIN((uint64_t)(r->e - r->s), n);
                int w = http_msg_write_all(out, r->b + r->s, chunk);
                if (w < 0)
                        return w;
                tee_add(r, r->b + r->s, chunk);
                r->s += chunk;
                n -= chunk;
        }
        return 0;
}

static int copy_until_eof(struct http_msg_rd *r, int out)
{
        for (;;) {
                if (r->s < r->e) {
                        int w = http_msg_write_all(out, r->b + r->s, r->e - r->s);
                        if (w < 0)
                                return w;
                        tee_add(r, r->b + r->s, r->e - r->s);
                        r->s = r->e;
                }
                ssize_t k = rd_fill(r);
                if (k == 0)
                        return 0;
                if (k < 0)
                        return (int)k;
        }
}

/* The size of a chunk-size line (extensions ignored): at most 15 hex digits. */
static int chunk_size_parse(const char *line, uint64_t *ret)
{
        uint64_t size = 0;
        size_t digits = 0;

        for (const char *c = line; *c && !strchr(";\r\n \t", *c); c++, digits++) {
                int v = unhexchar(*c);
                if (v < 0 || digits >= 15)
                        return -EBADMSG;
                size = size * 16 + (uint64_t)v;
        }
        if (digits == 0)
                return -EBADMSG;
        *ret = size;
        return 0;
}

static bool is_empty_line(const char *line)
{
        return streq(line, "\r\n") || streq(line, "\n");
}

/* Reads one line, checks it with @valid (when given) and only then passes it on. */
static int check_and_copy_line(struct http_msg_rd *r, int out, char *line, size_t max,
                               int (*valid)(const char *line, uint64_t *ret), uint64_t *ret)
{
        size_t len = 0;
        int k;

        k = read_line(r, line, max, &len);
        if (k >= 0 && valid)
                k = valid(line, ret);
        if (k < 0)
                return k;
        return http_msg_write_all(out, line, len);
}

static int empty_line_check(const char *line, uint64_t *ret)
{
        (void)ret;
        return is_empty_line(line) ? 0 : -EBADMSG;
}

/* Passes one chunk (size line, data, CRLF) on; *ret_last is set for the last (size 0) chunk. */
static int copy_chunk(struct http_msg_rd *r, int out, bool *ret_last)
{
        char line[LINE_MAX_];
        uint64_t size = 0;
        int k;

        k = check_and_copy_line(r, out, line, sizeof(line), chunk_size_parse, &size);
        if (k < 0)
                return k;
        *ret_last = size == 0;
        if (size == 0)
                return 0;
        k = copy_n(r, out, size);
        if (k < 0)
                return k;
        return check_and_copy_line(r, out, line, sizeof(line), empty_line_check, NULL);
}

/* Passes a chunked body on unchanged, checking its framing. */
static int copy_chunked(struct http_msg_rd *r, int out)
{
        char line[LINE_MAX_];
        bool last = false;
        int k;

        while (!last) {
                k = copy_chunk(r, out, &last);
                if (k < 0)
                        return k;
        }
        /* trailers, through the empty line */
        do {
                k = check_and_copy_line(r, out, line, sizeof(line), NULL, NULL);
                if (k < 0)
                        return k;
        } while (!is_empty_line(line));
        return 0;
}

/* The start line: three words (request: method target version; response: version code
 * reason, the reason possibly empty). */
static int parse_start_line(char *line, struct http_msg_head *hd)
{
        char *p;

        hd->start[0] = line;
        p = strchr(line, ' ');
        if (!p)
                return -EBADMSG;
        *p++ = 0;
        hd->start[1] = p;
        p = strchr(p, ' ');
        if (p) {
                *p++ = 0;
                hd->start[2] = p;
        } else {
                hd->start[2] = (char *)"";
        }
        return 0;
}

static bool is_token(const char *s, const char *end)
{
        for (const char *c = s; c < end; c++)
                if (*c <= ' ' || *c >= 127 || strchr("\"(),/:;<=>?@[\\]{}", *c))
                        return false;
        return true;
}

/* One "name: value" line; the value without surrounding blanks. No obs-fold. */
static int parse_header_line(char *line, struct http_msg_head *hd)
{
        char *p;

        if (line[0] == ' ' || line[0] == '\t')
                return -EBADMSG; /* obs-fold */
        p = strchr(line, ':');
        if (!p || p == line || hd->n >= ELEMENTSOF(hd->h) || !is_token(line, p))
                return -EBADMSG;
        *p++ = 0;
        while (*p == ' ' || *p == '\t')
                p++;
        for (size_t e = strlen(p); e > 0 && (p[e - 1] == ' ' || p[e - 1] == '\t'); e--)
                p[e - 1] = 0;
        hd->h[hd->n++] = (struct http_msg_header){ line, p };
        return 0;
}

/* Splits a head in place. Returns 0 or -EBADMSG. */
int http_msg_parse_head(char *text, struct http_msg_head *hd)
{
        char *line, *next;
        bool first = true;
        int r;

        *hd = (struct http_msg_head){ 0 };
        for (line = text; line && *line; line = next) {
                size_t l;

                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                l = strlen(line);
                if (l > 0 && line[l - 1] == '\r')
                        line[--l] = 0;
                if (l == 0)
                        break;
                r = first ? parse_start_line(line, hd) : parse_header_line(line, hd);
                if (r < 0)
                        return r;
                first = false;
        }
        return first ? -EBADMSG : 0;
}

const char *http_msg_head_get(const struct http_msg_head *hd, const char *name)
{
        for (size_t i = 0; i < hd->n; i++)
                if (strcasecmp(hd->h[i].name, name) == 0)
                        return hd->h[i].value;
        return NULL;
}

bool http_msg_token_in_list(const char *list, const char *token)
{
        size_t tl = strlen(token);

        for (const char *p = list; p && *p;) {
                p += strspn(p, " \t,");
                size_t n = strcspn(p, ",");
                size_t e = n;
                while (e > 0 && (p[e - 1] == ' ' || p[e - 1] == '\t'))
                        e--;
                if (e == tl && strncasecmp(p, token, tl) == 0)
                        return true;
                p += n;
        }
        return false;
}

/* A Content-Length value: 1 to 18 decimal digits. */
static int content_length_parse(const char *cl, uint64_t *ret)
{
        uint64_t v = 0;

        if (!*cl || strlen(cl) > 18)
                return -EBADMSG;
        for (const char *c = cl; *c; c++) {
                if (*c < '0' || *c > '9')
                        return -EBADMSG;
                v = v * 10 + (uint64_t)(*c - '0');
        }
        *ret = v;
        return 0;
}

/* Framing of a message; -EBADMSG for a bad Content-Length or CL+TE, -ENOTSUP unknown coding. */
int http_msg_framing_of(const struct http_msg_head *hd, enum http_msg_framing *ret,
                        uint64_t *ret_len)
{
        const char *te = NULL, *cl = NULL;

        for (size_t i = 0; i < hd->n; i++) {
                if (strcasecmp(hd->h[i].name, "Transfer-Encoding") == 0) {
                        if (te)
                                return -ENOTSUP;
                        te = hd->h[i].value;
                } else if (strcasecmp(hd->h[i].name, "Content-Length") == 0) {
                        if (cl && !streq(cl, hd->h[i].value))
                                return -EBADMSG;
                        cl = hd->h[i].value;
                }
        }
        if (te && cl)
                return -EBADMSG;
        if (te) {
                if (strcasecmp(te, "chunked") != 0)
                        return -ENOTSUP;
                *ret = HTTP_MSG_FRAME_CHUNKED;
                return 0;
        }
        if (cl) {
                if (content_length_parse(cl, ret_len) < 0)
                        return -EBADMSG;
                *ret = HTTP_MSG_FRAME_LENGTH;
                return 0;
        }
        *ret = HTTP_MSG_FRAME_NONE;
        return 0;
}

/* Passes one body on as its framing says. */
int http_msg_copy_body(struct http_msg_rd *r, int out, enum http_msg_framing f, uint64_t len)
{
        switch (f) {
        case HTTP_MSG_FRAME_LENGTH:
                return copy_n(r, out, len);
        case HTTP_MSG_FRAME_CHUNKED:
                return copy_chunked(r, out);
        case HTTP_MSG_FRAME_EOF:
                return copy_until_eof(r, out);
        case HTTP_MSG_FRAME_NONE:
        default:
                return 0;
        }
}
