/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's reverse proxy over real loopback sockets, against a scripted upstream (a raw socket
 * server in this test): header pass-through, hop-by-hop removal, framing errors, streaming,
 * keep-alive reuse, readiness probes, an unreachable model server.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/proxy.h"
#include "loopback.h"

static int up_fd = -1;
static uint16_t up_port;
static pthread_t up_thread;
static atomic_int up_accepts;
static int release_pipe[2];
static atomic_bool ready_flag;
static struct proxy *proxy;

static void send_str(int fd, const char *s)
{
        size_t n = strlen(s);
        while (n > 0) {
                ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
                if (w <= 0)
                        return;
                s += w;
                n -= (size_t)w;
        }
}

static void *upstream(void *u)
{
        (void)u;
        for (;;) {
                int c = accept(up_fd, NULL, NULL);
                char buf[65536], resp[70000];
                size_t n;

                if (c < 0)
                        return NULL;
                atomic_fetch_add(&up_accepts, 1);
                while ((n = loopback_read_request(c, buf, sizeof(buf))) > 0) {
                        if (strncmp(buf, "GET /stream ", 12) == 0) {
                                char x;
                                send_str(
                                        c,
                                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
                                (void)!read(release_pipe[0], &x, 1); /* the client saw "hello" */
                                send_str(c, "5\r\nworld\r\n0\r\n\r\n");
                        } else if (strncmp(buf, "GET /close ", 11) == 0) {
                                send_str(c, "HTTP/1.1 200 OK\r\n\r\nuntil-close");
                                break;
                        } else {
                                snprintf(resp, sizeof(resp),
                                         "HTTP/1.1 200 OK\r\nX-Up: yes\r\nKeep-Alive: timeout=5\r\n"
                                         "Content-Length: %zu\r\n\r\n%s",
                                         n, buf);
                                send_str(c, resp);
                        }
                }
                close(c);
        }
}

static bool is_ready(void *u)
{
        (void)u;
        return atomic_load(&ready_flag);
}

static void setup(void)
{
        cr_assert_eq(pipe(release_pipe), 0);
        up_fd = loopback_listen(&up_port);
        atomic_store(&up_accepts, 0);
        atomic_store(&ready_flag, true);
        pthread_create(&up_thread, NULL, upstream, NULL);
        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_host = "127.0.0.1",
                                                         .upstream_port = up_port,
                                                         .ready = is_ready },
                                 &proxy),
                     0);
}

static void teardown(void)
{
        proxy = proxy_stop(proxy);
        shutdown(up_fd, SHUT_RDWR);
        close(up_fd);
        pthread_join(up_thread, NULL);
        close(release_pipe[0]);
        close(release_pipe[1]);
}

/* A connection to port on loopback, with a 20 s receive timeout. */
static int dial_port(uint16_t port)
{
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                 .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct timeval tv = { .tv_sec = 20 };

        cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

/* A connection to the proxy under test. */
static int dial(void)
{
        return dial_port(proxy_port(proxy));
}

/* Reads one response (head + Content-Length body, or until @until appears, or EOF). */
static char *read_response(int fd, const char *until)
{
        char *buf = calloc(1, 131072);
        size_t n = 0;

        for (;;) {
                ssize_t k = recv(fd, buf + n, 131071 - n, 0);
                if (k <= 0)
                        break;
                n += (size_t)k;
                char *end = strstr(buf, "\r\n\r\n");
                if (until && strstr(buf, until))
                        break;
                if (!until && end) {
                        const char *cl = strcasestr(buf, "\r\nContent-Length:");
                        if (cl && cl < end &&
                            n >= (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10))
                                break;
                }
        }
        return buf;
}

static char *roundtrip(const char *req)
{
        int fd = dial();
        char *r;

        send_str(fd, req);
        r = read_response(fd, NULL);
        close(fd);
        return r;
}

TestSuite(proxy, .init = setup, .fini = teardown);

Test(proxy, headers_pass_through_hop_by_hop_dropped)
{
        char *r = roundtrip(
                "POST /v2/models/m/infer?x=1 HTTP/1.1\r\nHost: model.example\r\n"
                "X-Custom: keep me\r\nConnection: X-Hop\r\nX-Hop: drop me\r\n"
                "Keep-Alive: timeout=1\r\nTE: trailers\r\nContent-Length: 4\r\n\r\nbody");

        cr_assert(strstr(r, "HTTP/1.1 200 OK\r\n"), "%s", r);
        cr_assert(strstr(r, "X-Up: yes"), "response headers passed: %s", r);
        cr_assert_null(strstr(r, "Keep-Alive: timeout=5"), "response hop-by-hop kept: %s", r);
        cr_assert(strstr(r, "POST /v2/models/m/infer?x=1 HTTP/1.1\r\n"), "%s", r);
        cr_assert(strstr(r, "Host: model.example\r\n"), "%s", r);
        cr_assert(strstr(r, "X-Custom: keep me\r\n"), "%s", r);
        cr_assert(strstr(r, "X-Forwarded-For: 127.0.0.1\r\n"), "%s", r);
        cr_assert(strstr(r, "\r\n\r\nbody"), "%s", r);
        cr_assert_null(strstr(r, "X-Hop"), "a header named by Connection was forwarded: %s", r);
        cr_assert_null(strstr(r, "TE: trailers"), "%s", r);
        cr_assert_null(strstr(r, "Keep-Alive: timeout=1"), "%s", r);
        free(r);
}

Test(proxy, chunked_request_streams_through)
{
        char *r = roundtrip("POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n");

        cr_assert(strstr(r, "Transfer-Encoding: chunked"), "%s", r);
        cr_assert(strstr(r, "3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n"), "%s", r);
        free(r);
}

Test(proxy, response_streams_before_it_ends)
{
        int fd = dial();
        char *r;

        send_str(fd, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
        r = read_response(fd, "hello\r\n");
        cr_assert(strstr(r, "hello"), "first chunk not forwarded before the upstream finished: %s",
                  r);
        free(r);
        cr_assert_eq(write(release_pipe[1], "x", 1), 1);
        r = read_response(fd, "0\r\n\r\n");
        cr_assert(strstr(r, "world\r\n0\r\n\r\n"), "%s", r);
        free(r);
        close(fd);
}

static void *stop_thread(void *u)
{
        (void)u;
        proxy = proxy_stop(proxy);
        return NULL;
}

/* The stop, as Go's http.Server.Shutdown: an idle keep-alive connection is closed at once, an
 * exchange in flight (a placement hand-over's forward, a long inference) ends with its whole
 * response, then its connection closes. */
Test(proxy, stop_lets_an_exchange_in_flight_finish_and_closes_idle_ones)
{
        int busy = dial(), idle = dial();
        pthread_t t;
        char *r, x;

        send_str(busy, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
        r = read_response(busy, "hello\r\n");
        cr_assert(strstr(r, "hello"), "%s", r);
        free(r);
        /* answered by the proxy itself (the one-thread upstream is busy with /stream) */
        send_str(idle, "GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: kube-probe/1.35\r\n\r\n");
        r = read_response(idle, NULL);
        cr_assert(strncmp(r, "HTTP/1.1 200", 12) == 0, "%s", r);
        free(r);
        cr_assert_eq(pthread_create(&t, NULL, stop_thread, NULL), 0);
        cr_assert_eq(recv(idle, &x, 1, 0), 0, "the idle connection was not closed at the stop");
        cr_assert_eq(write(release_pipe[1], "x", 1), 1);
        r = read_response(busy, "0\r\n\r\n");
        cr_assert(strstr(r, "world\r\n0\r\n\r\n"), "the exchange in flight was cut: %s", r);
        free(r);
        cr_assert_eq(recv(busy, &x, 1, 0), 0, "closed after its exchange");
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_assert_null(proxy);
        close(busy);
        close(idle);
}

static void *stop_given(void *u)
{
        return proxy_stop(u);
}

/* The stop's grace period ends: an exchange still in flight is cut (the client sees the
 * connection end without the rest of the response) and the stop returns. */
Test(proxy, stop_cuts_an_exchange_still_in_flight_when_the_grace_ends)
{
        struct proxy *p2 = NULL;
        pthread_t t;
        char *r, x;
        int fd;

        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_host = "127.0.0.1",
                                                         .upstream_port = up_port,
                                                         .ready = is_ready,
                                                         .stop_grace_ms = 200 },
                                 &p2),
                     0);
        fd = dial_port(proxy_port(p2));
        send_str(fd, "GET /stream HTTP/1.1\r\nHost: h\r\n\r\n");
        r = read_response(fd, "hello\r\n");
        cr_assert(strstr(r, "hello"), "%s", r);
        free(r);
        cr_assert_eq(pthread_create(&t, NULL, stop_given, p2), 0);
        /* the upstream holds "world" back: the grace (200 ms) ends first */
        cr_assert_eq(recv(fd, &x, 1, 0), 0, "the exchange was not cut when the grace ended");
        cr_assert_eq(pthread_join(t, NULL), 0, "the stop did not return");
        cr_assert_eq(write(release_pipe[1], "x", 1), 1); /* the upstream goes on (teardown) */
        close(fd);
}

Test(proxy, keep_alive_reuses_one_upstream_connection)
{
        int fd = dial();

        for (int i = 0; i < 3; i++) {
                send_str(fd, "GET /a HTTP/1.1\r\nHost: h\r\n\r\n");
                char *r = read_response(fd, NULL);
                cr_assert(strstr(r, "200 OK"), "request %d: %s", i, r);
                free(r);
        }
        close(fd);
        cr_assert_eq(atomic_load(&up_accepts), 1);
}

Test(proxy, response_until_close)
{
        char *r = roundtrip("GET /close HTTP/1.1\r\nHost: h\r\n\r\n");

        cr_assert(strstr(r, "Connection: close\r\n"), "%s", r);
        cr_assert(strstr(r, "\r\n\r\nuntil-close"), "%s", r);
        free(r);
}

Test(proxy, malformed_requests)
{
        static const struct {
                const char *req, *status;
        } cases[] = {
                { "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
                  "400" },
                { "GET / HTTP/1.1\r\nX: a\r\n folded\r\n\r\n", "400" },
                { "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", "400" },
                { "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", "400" },
                { "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "501" },
                { "GET / HTTP/2.0\r\n\r\n", "400" },
                { "GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", "400" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *r = roundtrip(cases[i].req);
                char want[32];
                snprintf(want, sizeof(want), "HTTP/1.1 %s ", cases[i].status);
                cr_assert(strncmp(r, want, strlen(want)) == 0, "case %zu: %s", i, r);
                free(r);
        }
        cr_assert_eq(atomic_load(&up_accepts), 0, "a malformed request reached the model server");
}

Test(proxy, head_too_large)
{
        char *big = malloc(70000), *r;
        int fd = dial();

        memset(big, 'a', 69999);
        big[69999] = 0;
        send_str(fd, "GET / HTTP/1.1\r\nX-Big: ");
        send_str(fd, big);
        r = read_response(fd, NULL);
        cr_assert(strncmp(r, "HTTP/1.1 431 ", 13) == 0, "%.80s", r);
        free(r);
        free(big);
        close(fd);
}

Test(proxy, readiness_probes)
{
        char *r = roundtrip("GET / HTTP/1.1\r\nK-Network-Probe: queue\r\n\r\n");

        cr_assert(strncmp(r, "HTTP/1.1 200 ", 13) == 0 && strstr(r, "\r\n\r\nqueue"), "%s", r);
        free(r);
        r = roundtrip("GET /healthz HTTP/1.1\r\nUser-Agent: kube-probe/1.30\r\n\r\n");
        cr_assert(strncmp(r, "HTTP/1.1 200 ", 13) == 0, "%s", r);
        free(r);
        r = roundtrip("GET / HTTP/1.1\r\nK-Network-Probe: activator\r\n\r\n");
        cr_assert(strncmp(r, "HTTP/1.1 400 ", 13) == 0, "%s", r);
        free(r);
        atomic_store(&ready_flag, false);
        r = roundtrip("GET / HTTP/1.1\r\nK-Network-Probe: queue\r\n\r\n");
        cr_assert(strncmp(r, "HTTP/1.1 503 ", 13) == 0, "%s", r);
        free(r);
        cr_assert_eq(atomic_load(&up_accepts), 0, "a probe was proxied");
}

Test(proxy, upstream_down_is_502)
{
        struct proxy *p2 = NULL;
        uint16_t dead;
        int fd = loopback_listen(&dead);
        char *r;

        close(fd); /* nothing listens there now */
        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_port = dead,
                                                         .ready = is_ready },
                                 &p2),
                     0);
        fd = dial_port(proxy_port(p2));
        send_str(fd, "GET / HTTP/1.1\r\nHost: h\r\n\r\n");
        r = read_response(fd, NULL);
        cr_assert(strncmp(r, "HTTP/1.1 502 ", 13) == 0, "%s", r);
        free(r);
        close(fd);
        proxy_stop(p2);
}

/* ---- the logger's tap and the batcher's hook ---- */

static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;
static char tapped[4][256], tapped_id[4][128];
static bool tapped_resp[4];
static atomic_int n_tapped;

static void tap(void *u, const struct proxy_tap_msg *m)
{
        int i;

        (void)u;
        pthread_mutex_lock(&tap_lock);
        i = atomic_load(&n_tapped);
        if (i < 4) {
                snprintf(tapped[i], sizeof(tapped[i]), "%.*s", (int)m->body_len, m->body);
                snprintf(tapped_id[i], sizeof(tapped_id[i]), "%s", m->id);
                tapped_resp[i] = m->response;
                atomic_store(&n_tapped, i + 1);
        }
        pthread_mutex_unlock(&tap_lock);
}

static int batch(void *u, const char *path, const char *body, size_t len, unsigned *ret_code,
                 char **ret_body)
{
        (void)u;
        if (strcmp(path, "/batched") != 0)
                return -EMEDIUMTYPE;
        *ret_code = 200;
        return asprintf(ret_body, "{\"got\":\"%.*s\"}", (int)len, body) < 0 ? -ENOMEM : 0;
}

/* The response is tapped after its last byte went to the client: wait for it. */
static int wait_tapped(int n)
{
        for (int i = 0; i < 2000 && atomic_load(&n_tapped) < n; i++)
                usleep(1000);
        return atomic_load(&n_tapped);
}

static void setup_hooks(void)
{
        cr_assert_eq(pipe(release_pipe), 0);
        up_fd = loopback_listen(&up_port);
        atomic_store(&up_accepts, 0);
        atomic_store(&n_tapped, 0);
        atomic_store(&ready_flag, true);
        pthread_create(&up_thread, NULL, upstream, NULL);
        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_host = "127.0.0.1",
                                                         .upstream_port = up_port,
                                                         .ready = is_ready,
                                                         .tap = tap,
                                                         .batch = batch },
                                 &proxy),
                     0);
}

TestSuite(proxy_hooks, .init = setup_hooks, .fini = teardown);

Test(proxy_hooks, tap_sees_payloads_without_chunk_framing_and_one_id)
{
        char *r = roundtrip("PUT /x HTTP/1.1\r\nHost: h\r\nX-Request-Id: rid-1\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");

        cr_assert(strstr(r, "HTTP/1.1 200 OK"), "%s", r);
        cr_assert_eq(wait_tapped(2), 2);
        cr_assert(!tapped_resp[0] && tapped_resp[1]);
        cr_assert_str_eq(tapped[0], "abcde");
        /* the upstream echoes the request it got: the response body starts with its head */
        cr_assert(strncmp(tapped[1], "PUT /x HTTP/1.1\r\n", 17) == 0, "%s", tapped[1]);
        cr_assert_str_eq(tapped_id[0], "rid-1");
        cr_assert_str_eq(tapped_id[1], "rid-1");
        free(r);
        r = roundtrip("GET /y HTTP/1.1\r\nHost: h\r\nCe-Id: ce-9\r\nX-Request-Id: no\r\n\r\n");
        cr_assert_eq(wait_tapped(4), 4);
        cr_assert_str_eq(tapped_id[2], "ce-9");
        free(r);
}

Test(proxy_hooks, batch_answers_or_passes_through_with_one_100_continue)
{
        char *r = roundtrip("POST /batched HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc");

        cr_assert(strstr(r, "HTTP/1.1 200 OK"), "%s", r);
        cr_assert(strstr(r, "\r\n\r\n{\"got\":\"abc\"}"), "%s", r);
        cr_assert_eq(atomic_load(&up_accepts), 0, "a batched answer went upstream");
        cr_assert_eq(wait_tapped(2), 2, "the batched exchange is tapped too");
        cr_assert_str_eq(tapped[1], "{\"got\":\"abc\"}");
        free(r);

        /* not batched: read whole, then passed on with a Content-Length, 100 sent once */
        int fd = dial();
        send_str(fd, "POST /other HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n4\r\nwxyz\r\n0\r\n\r\n");
        r = read_response(fd, "wxyz");
        close(fd);
        cr_assert(strncmp(r, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK", 40) == 0, "%s", r);
        cr_assert_null(strstr(r + 10, "100 Continue"), "%s", r);
        cr_assert(strstr(r, "Content-Length: 4\r\n"), "%s", r);
        free(r);
}
