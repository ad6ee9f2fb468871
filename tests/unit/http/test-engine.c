/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http/engine.c over real loopback sockets, through http_server_start(): a normal request,
 * keep-alive, pipelining, a smuggling attempt, the malformed heads (a JSON error body each), an
 * idle flood while
 * a good client is served, the header deadline and the 413 body; the 503s at the total and the
 * per-address limits, and a client that goes away in the middle of a large answer.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loopback.h"
#include "http/server.h"
#include "util/macro.h"

static atomic_int served;

#define BIG_LEN ((size_t)16 * 1024 * 1024) /* over the loopback socket buffers of both ends */
static char big[BIG_LEN + 1];

static int handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        const struct sockaddr *peer = http_req_client_address(req);
        const char *q = http_req_query(req, "q");
        const char *x = http_req_header(req, "X-Test");
        char text[256];

        (void)userdata;
        atomic_fetch_add(&served, 1);
        if (strcmp(req->path, "/big") == 0) {
                if (!big[0])
                        memset(big, 'b', BIG_LEN);
                http_resp_set_text(resp, 200, "text/plain", big);
                return 0;
        }
        (void)snprintf(text, sizeof(text), "%s %s q=%s x=%s body=%zu peer=%d", req->method,
                       req->path, q ? q : "-", x ? x : "-", req->body.len,
                       peer ? peer->sa_family : -1);
        http_resp_set_text(resp, 200, "text/plain", text);
        return 0;
}

static struct http_server *start_limited(unsigned max_connections, unsigned header_timeout,
                                         unsigned max_per_ip)
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct http_server *s = NULL;

        cfg.handler = handler;
        cfg.error_style = HTTP_ERROR_REASON;
        cfg.body_max = 1024;
        cfg.threads = 2;
        cfg.max_connections = max_connections;
        cfg.header_timeout = header_timeout;
        cfg.max_per_ip = max_per_ip;
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        return s;
}

static struct http_server *start_own(unsigned max_connections, unsigned header_timeout)
{
        return start_limited(max_connections, header_timeout, 256);
}

static int dial(struct http_server *s)
{
        return loopback_dial(http_server_port(s));
}

/* A connection to s from the loopback address source (127.0.0.2 and so on: all of 127/8 is
 * local on Linux). */
static int dial_from(struct http_server *s, const char *source)
{
        struct sockaddr_in from = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        cr_assert_geq(fd, 0);
        cr_assert_eq(inet_pton(AF_INET, source, &from.sin_addr), 1);
        cr_assert_eq(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0, "bind %s: %m", source);
        to.sin_port = htons(http_server_port(s));
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        cr_assert_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0, "connect: %m");
        return fd;
}

struct reply {
        char raw[8192];
        size_t len;      /* bytes of raw */
        size_t used;     /* bytes of raw that earlier responses took */
        char body[4096]; /* the last response's body, NUL-terminated */
};

/* The next complete response in r (reading as needed): its status, *ret_body its body. */
static unsigned next_response(int fd, struct reply *r, const char **ret_body)
{
        for (;;) {
                char *start = r->raw + r->used, *end = strstr(start, "\r\n\r\n");
                const char *cl = end ? strcasestr(start, "\r\nContent-Length: ") : NULL;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (end && cl && cl < end) {
                        size_t body_len = strtoul(cl + 18, NULL, 10);
                        size_t total = (size_t)(end + 4 - start) + body_len;

                        if (r->used + total <= r->len) {
                                unsigned status = (unsigned)strtoul(start + 9, NULL, 10);

                                if (body_len >= sizeof(r->body))
                                        body_len = sizeof(r->body) - 1;
                                memcpy(r->body, end + 4, body_len);
                                r->body[body_len] = '\0';
                                *ret_body = r->body;
                                r->used += total;
                                return status;
                        }
                }
                if (poll(&p, 1, 10000) != 1)
                        return 0;
                k = recv(fd, r->raw + r->len, sizeof(r->raw) - 1 - r->len, 0);
                if (k <= 0)
                        return 0;
                r->len += (size_t)k;
                r->raw[r->len] = '\0';
        }
}

/* Waits (up to 10 s) for the server to close the connection. */
static bool closed_by_server(int fd)
{
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char c[256];
                ssize_t k;

                if (poll(&p, 1, 10000) != 1)
                        return false;
                k = recv(fd, c, sizeof(c), 0);
                if (k <= 0)
                        return true;
        }
}

Test(http_engine, a_request_is_served_with_its_query_header_and_peer)
{
        struct http_server *s = start_own(4096, 5);
        struct reply r = { 0 };
        const char *body;
        int fd = dial(s);

        loopback_send_all(fd, "POST /a%20b?q=x+y%21 HTTP/1.1\r\nHost: t\r\nX-Test: yes\r\n"
                              "Content-Length: 3\r\n\r\nabc");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_str_eq(body, "POST /a%20b q=x y! x=yes body=3 peer=2");
        close(fd);
        http_server_free(s);
}

Test(http_engine, keep_alive_and_pipelined_requests_are_answered_in_order)
{
        struct http_server *s = start_own(4096, 5);
        struct reply r = { 0 };
        const char *body;
        int fd = dial(s);

        loopback_send_all(fd, "GET /one HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_str_eq(body, "GET /one q=- x=- body=0 peer=2");
        /* three requests in one write, a chunked one in the middle */
        loopback_send_all(fd,
                          "GET /two HTTP/1.1\r\nHost: t\r\n\r\n"
                          "POST /three HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "2\r\nab\r\n0\r\n\r\n"
                          "HEAD /four HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_str_eq(body, "GET /two q=- x=- body=0 peer=2");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_str_eq(body, "POST /three q=- x=- body=2 peer=2");
        /* HEAD: the length of the body, no body; then the server closes */
        while (r.len < sizeof(r.raw) - 1) {
                ssize_t k = recv(fd, r.raw + r.len, sizeof(r.raw) - 1 - r.len, 0);

                if (k <= 0)
                        break;
                r.len += (size_t)k;
                r.raw[r.len] = '\0';
        }
        cr_assert(strneq(r.raw + r.used, "HTTP/1.1 200 OK\r\n", 17), "%s", r.raw + r.used);
        cr_assert(strstr(r.raw + r.used, "Connection: close\r\n"));
        cr_assert(strstr(r.raw + r.used, "\r\n\r\n")[4] == '\0');
        close(fd);
        http_server_free(s);
}

Test(http_engine, a_smuggled_request_is_refused_with_json_and_never_served)
{
        struct http_server *s = start_own(4096, 5);
        struct reply r = { 0 };
        const char *body;
        int fd = dial(s), before = atomic_load(&served);

        loopback_send_all(
                fd, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n"
                    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 400);
        cr_assert(strstr(body, "\"code\":\"Bad Request\""), "%s", body);
        cr_assert(strstr(r.raw, "Connection: close"));
        cr_assert(closed_by_server(fd));
        cr_assert_eq(atomic_load(&served), before);
        close(fd);
        http_server_free(s);
}

/* RFC 9112 §3.2: an HTTP/1.1 request without Host is 400 (JSON, never served); HTTP/1.0 may
 * omit it. */
Test(http_engine, an_http_1_1_request_without_host_is_refused_and_http_1_0_is_served)
{
        struct http_server *s = start_own(4096, 5);
        struct reply r = { 0 }, r10 = { 0 };
        const char *body;
        int fd = dial(s), fd10 = dial(s), before = atomic_load(&served);

        loopback_send_all(fd, "GET /nohost HTTP/1.1\r\nX-Test: yes\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 400, "%s", r.raw);
        cr_assert(strstr(body, "{\"code\":\"Bad Request\",\"message\":\"") == body, "%s", body);
        cr_assert(strstr(body, "without a Host field"), "%s", body);
        cr_assert(closed_by_server(fd));
        cr_assert_eq(atomic_load(&served), before, "a Host-less HTTP/1.1 request was served");
        loopback_send_all(fd10, "GET /old HTTP/1.0\r\n\r\n");
        cr_assert_eq(next_response(fd10, &r10, &body), 200, "%s", r10.raw);
        cr_assert_str_eq(body, "GET /old q=- x=- body=0 peer=2");
        close(fd);
        close(fd10);
        http_server_free(s);
}

/* Malformed heads: each refusal has the JSON error body. */
Test(http_engine, malformed_heads_get_the_json_error_body)
{
        static const struct {
                const char *req;
                unsigned status;
        } cases[] = {
                { "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 5, 6\r\n\r\n", 400 },
                { "GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505 },
                { "GET / HTTP/1.1\r\nHost: t\r\nno colon here\r\n\r\n", 400 },
                { "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400 },
                { "GET /?a HTTP/1.1\r\nX-Big: ", 431 },
        };
        struct http_server *s = start_own(4096, 5);

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct reply r = { 0 };
                const char *body;
                int fd = dial(s);

                loopback_send_all(fd, cases[i].req);
                if (cases[i].status == 431) {
                        char pad[1024];

                        memset(pad, 'a', sizeof(pad) - 1);
                        pad[sizeof(pad) - 1] = '\0';
                        for (int k = 0; k < 70; k++)
                                (void)send(fd, pad, strlen(pad), MSG_NOSIGNAL);
                }
                cr_assert_eq(next_response(fd, &r, &body), cases[i].status, "case %zu", i);
                cr_assert(strneq(body, "{\"code\":\"", 9), "case %zu: %s", i, body);
                cr_assert(strstr(body, "\"message\":\""), "case %zu: %s", i, body);
                close(fd);
        }
        http_server_free(s);
}

Test(http_engine, bodies_over_the_limit_get_413_json)
{
        struct http_server *s = start_own(4096, 5);
        char chunked[4096];
        static struct reply r, r2;
        const char *body;
        int fd = dial(s), fd2 = dial(s);
        size_t n;

        loopback_send_all(fd, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 999999\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 413);
        cr_assert(strstr(body, "\"code\":\"Request Entity Too Large\""), "%s", body);
        /* a chunked body: answered once it ended */
        n = (size_t)snprintf(chunked, sizeof(chunked),
                             "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "800\r\n");
        memset(chunked + n, 'x', 2048);
        (void)snprintf(chunked + n + 2048, sizeof(chunked) - n - 2048, "\r\n0\r\n\r\n");
        loopback_send_all(fd2, chunked);
        cr_assert_eq(next_response(fd2, &r2, &body), 413);
        cr_assert(closed_by_server(fd2));
        close(fd);
        close(fd2);
        http_server_free(s);
}

Test(http_engine, an_idle_flood_is_shed_and_a_new_client_is_served)
{
        enum { CAP = 32, FLOOD = 200 };
        struct http_server *s = start_own(CAP, 30);
        int idle[FLOOD], fd;
        struct reply r = { 0 };
        const char *body;

        for (int i = 0; i < FLOOD; i++) {
                idle[i] = dial(s);
                if (i % 2)
                        loopback_send_all(idle[i], "GET / HTTP/1.1\r\nHost: "); /* half a head */
        }
        fd = dial(s);
        loopback_send_all(fd, "GET /good HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_str_eq(body, "GET /good q=- x=- body=0 peer=2");
        cr_assert_geq(http_server_shed_count(s), FLOOD - CAP);
        close(fd);
        for (int i = 0; i < FLOOD; i++)
                close(idle[i]);
        http_server_free(s);
}

Test(http_engine, idle_sockets_that_never_send_hold_no_input_buffer)
{
        enum { IDLE = 200, TALK = 10 };
        struct http_server *s = start_own(4096, 30);
        int idle[IDLE], fd;
        struct reply r = { 0 };
        const char *body;

        for (int i = 0; i < IDLE; i++)
                idle[i] = dial(s);
        fd = dial(s); /* accepted after the idle ones (one listen queue, in order) */
        loopback_send_all(fd, "GET /good HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 200);
        cr_assert_eq(http_server_input_buffers(s), 1, "buffers: %zu", http_server_input_buffers(s));
        for (int i = 0; i < TALK; i++) {
                struct reply ri = { 0 };

                loopback_send_all(idle[i], "GET /late HTTP/1.1\r\nHost: t\r\n\r\n");
                cr_assert_eq(next_response(idle[i], &ri, &body), 200);
        }
        cr_assert_eq(http_server_input_buffers(s), 1 + TALK);
        close(fd);
        for (int i = 0; i < IDLE; i++)
                close(idle[i]);
        for (int i = 0; i < 10000 && http_server_input_buffers(s) > 0; i++)
                (void)usleep(1000); /* the loops see the hang-ups */
        cr_assert_eq(http_server_input_buffers(s), 0);
        http_server_free(s);
}

Test(http_engine, a_head_that_does_not_arrive_in_time_is_cut)
{
        struct http_server *s = start_own(4096, 1);
        int fd = dial(s), other;
        struct reply r = { 0 };
        const char *body;

        loopback_send_all(fd, "GET / HTTP/1.1\r\nHost: t\r\n");
        other = dial(s);
        loopback_send_all(other, "GET / HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(other, &r, &body), 200);
        cr_assert(closed_by_server(fd), "a head that never ended was not cut off");
        cr_assert_geq(http_server_deadline_cuts(s), 1);
        close(fd);
        close(other);
        http_server_free(s);
}

/* Connections from a --trusted-proxy range are not counted against the per-address limit (a proxy
 * carries many users); other addresses still are. */
Test(http_engine, trusted_proxies_are_exempt_from_the_per_address_limit)
{
        enum { PER_IP = 2, FROM_PROXY = 6 };
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct cidr *trusted = NULL;
        size_t n_trusted = 0;
        struct http_server *s = NULL;
        struct reply r = { 0 };
        const char *body;
        int proxy[FROM_PROXY], other[PER_IP], fd;

        cr_assert_eq(cidr_list_parse("10.0.0.0/8, 127.0.0.2", &trusted, &n_trusted), 0);
        cfg.handler = handler;
        cfg.error_style = HTTP_ERROR_REASON;
        cfg.threads = 2;
        cfg.max_per_ip = PER_IP;
        cfg.trusted_proxies = trusted;
        cfg.n_trusted_proxies = n_trusted;
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        free(trusted); /* copied by the server */
        for (int i = 0; i < FROM_PROXY; i++) {
                struct reply ri = { 0 };

                proxy[i] = dial_from(s, "127.0.0.2");
                loopback_send_all(proxy[i], "GET /proxied HTTP/1.1\r\nHost: t\r\n\r\n");
                cr_assert_eq(next_response(proxy[i], &ri, &body), 200, "proxy connection %d: %s", i,
                             ri.raw);
        }
        for (int i = 0; i < PER_IP; i++) {
                struct reply ri = { 0 };

                other[i] = dial_from(s, "127.0.0.3");
                loopback_send_all(other[i], "GET /direct HTTP/1.1\r\nHost: t\r\n\r\n");
                cr_assert_eq(next_response(other[i], &ri, &body), 200);
        }
        fd = dial_from(s, "127.0.0.3");
        loopback_send_all(fd, "GET /over HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 429, "%s", r.raw);
        close(fd);
        for (int i = 0; i < FROM_PROXY; i++)
                close(proxy[i]);
        for (int i = 0; i < PER_IP; i++)
                close(other[i]);
        http_server_free(s);
}

/* Reads until the server's 100 Continue (proof that it has the head and counts the request). */
static void await_continue(int fd)
{
        char got[256];

        cr_assert_gt(loopback_read_until(fd, got, sizeof(got), "\r\n\r\n", 10000), 0,
                     "no 100 Continue: %s", got);
        cr_assert(strneq(got, "HTTP/1.1 100 Continue\r\n\r\n", 25), "%s", got);
}

/* A new connection gets a 200 for GET /good within attempts tries (a close by the server, or a
 * 503, is retried after 50 ms): the server has room again. */
static bool served_within(struct http_server *s, int attempts)
{
        for (int i = 0; i < attempts; i++) {
                struct reply r = { 0 };
                const char *body;
                int fd = dial(s);
                unsigned status;

                loopback_send_all(fd, "GET /good HTTP/1.1\r\nHost: t\r\n\r\n");
                status = next_response(fd, &r, &body);
                close(fd);
                if (status == 200)
                        return true;
                (void)poll(NULL, 0, 50);
        }
        return false;
}

Test(http_engine, at_the_cap_with_every_request_in_progress_a_new_client_gets_503_json)
{
        enum { CAP = 4 };
        struct http_server *s = start_own(CAP, 30);
        struct reply r = { 0 };
        const char *body;
        int busy[CAP], fd;

        for (int i = 0; i < CAP; i++) {
                busy[i] = dial(s);
                loopback_send_all(busy[i], "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n"
                                           "Expect: 100-continue\r\n\r\nab");
                await_continue(busy[i]);
        }
        fd = dial(s);
        loopback_send_all(fd, "GET /late HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 503);
        cr_assert(strstr(body, "\"code\":\"Service Unavailable\""), "%s", body);
        cr_assert(strstr(body, "request in progress"), "%s", body);
        cr_assert(closed_by_server(fd));
        cr_assert_eq(http_server_shed_count(s), 0, "a connection with a request was shed");
        /* the requests in progress were not touched: each one completes */
        for (int i = 0; i < CAP; i++) {
                struct reply rb = { 0 };

                loopback_send_all(busy[i], "cd");
                cr_assert_eq(next_response(busy[i], &rb, &body), 200, "request %d", i);
                cr_assert_str_eq(body, "POST /slow q=- x=- body=4 peer=2");
                close(busy[i]);
        }
        close(fd);
        http_server_free(s);
}

Test(http_engine, a_client_that_leaves_in_the_middle_of_a_large_answer_is_freed)
{
        /* a cap of 1: the next client is served only once the server freed the first one (until
         * then its answer is in progress and a new connection gets 503) */
        struct http_server *s = start_own(1, 30);
        char part[64 * 1024];
        size_t got = 0;
        int fd = dial(s);

        loopback_send_all(fd, "GET /big HTTP/1.1\r\nHost: t\r\n\r\n");
        while (got < sizeof(part)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                cr_assert_eq(poll(&p, 1, 10000), 1);
                k = recv(fd, part, sizeof(part) - got, 0);
                cr_assert_gt(k, 0);
                got += (size_t)k;
        }
        close(fd); /* with unread bytes: a reset */
        cr_assert(served_within(s, 200), "the abandoned connection was not freed");
        http_server_free(s);
}

/* Past the per-address limit: 429 Too Many Requests with Retry-After (the server is not
 * unavailable, this address is over its share), JSON, and the connection closed. */
Test(http_engine, past_the_per_address_limit_the_answer_is_429_with_retry_after)
{
        enum { PER_IP = 3 };
        static const char prefix[] = "{\"code\":\"Too Many Requests\",\"message\":\"";
        struct http_server *s = start_limited(4096, 30, PER_IP);
        struct reply r = { 0 };
        const char *body;
        int fds[PER_IP], fd;

        for (int i = 0; i < PER_IP; i++) {
                struct reply ri = { 0 };

                fds[i] = dial(s); /* each one served once: accepted and counted */
                loopback_send_all(fds[i], "GET /one HTTP/1.1\r\nHost: t\r\n\r\n");
                cr_assert_eq(next_response(fds[i], &ri, &body), 200);
        }
        fd = dial(s);
        loopback_send_all(fd, "GET /over HTTP/1.1\r\nHost: t\r\n\r\n");
        cr_assert_eq(next_response(fd, &r, &body), 429, "%s", r.raw);
        cr_assert(strneq(body, prefix, strlen(prefix)), "%s", body);
        cr_assert(strstr(body, "client address"), "%s", body);
        cr_assert(strstr(r.raw, "\r\nRetry-After: 1\r\n"), "%s", r.raw);
        cr_assert(strstr(r.raw, "Content-Type: application/json\r\n"), "%s", r.raw);
        cr_assert(strstr(r.raw, "Connection: close\r\n"), "%s", r.raw);
        close(fd);
        /* a connection that ends gives its place back */
        close(fds[0]);
        cr_assert(served_within(s, 200));
        for (int i = 1; i < PER_IP; i++)
                close(fds[i]);
        http_server_free(s);
}

Test(http_engine, a_shed_connection_gives_its_per_address_place_back)
{
        /* a cap of 2 under a per-address limit of 4: each new connection past 2 sheds one from
         * the same address, which must leave that address's count, or the 5th would be refused */
        enum { CAP = 2, LIMIT = 4, FLOOD = 40 };
        struct http_server *s = start_limited(CAP, 30, LIMIT);
        int idle[FLOOD];

        for (int i = 0; i < FLOOD; i++)
                idle[i] = dial(s);
        cr_assert(served_within(s, 1));
        cr_assert_geq(http_server_shed_count(s), FLOOD - CAP);
        for (int i = 0; i < FLOOD; i++)
                close(idle[i]);
        http_server_free(s);
}
