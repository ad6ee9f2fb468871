/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proxy-rtt: what the agent's reverse proxy (src/agent/proxy.c) adds to a request, in-process on
 * loopback. A minimal keep-alive model server answers every POST with as many bytes as it got;
 * one client sends REQUESTS sequential POSTs of BODY bytes on one keep-alive connection, first
 * straight to the model server, then through the proxy, then (placement, issue 30) through a
 * second proxy that does not hold the model and forwards to the first ("hop"). Prints each path's
 * round-trip p50 and p99 and the process's CPU time per request (client, proxies and server
 * together: the differences are the proxy's and the hop's), then the CPU time of streaming
 * 64 MiB through the proxy each way.
 *
 *   proxy-rtt [REQUESTS [BODY]]        (default 20000 requests of 1024 bytes)
 *
 * Nothing is asserted; a failed exchange aborts.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "agent/proxy.h"
#include "agent/route-port.h"

#define BIG ((size_t)64 << 20)

/* A socket and the bytes read from it that are not used yet. */
struct rd {
        int fd;
        size_t s, e;
        char b[65536];
};

static void die(const char *what)
{
        perror(what);
        abort();
}

static void send_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

                if (w <= 0)
                        die("send");
                p += w;
                n -= (size_t)w;
        }
}

/* Fills r; false at EOF. */
static bool rd_fill(struct rd *r)
{
        ssize_t n;

        if (r->s == r->e)
                r->s = r->e = 0;
        if (r->e == sizeof(r->b)) {
                memmove(r->b, r->b + r->s, r->e - r->s);
                r->e -= r->s;
                r->s = 0;
        }
        n = recv(r->fd, r->b + r->e, sizeof(r->b) - r->e, 0);
        if (n < 0)
                die("recv");
        r->e += (size_t)n;
        return n > 0;
}

/* Reads a head; stores its first line's second word (the target or the status) and its
 * Content-Length. False at EOF before a head. */
static bool read_head(struct rd *r, char *word, size_t word_max, size_t *ret_len)
{
        for (;;) {
                char *end = memmem(r->b + r->s, r->e - r->s, "\r\n\r\n", 4);

                if (end) {
                        char *head = r->b + r->s, *cl, *sp;

                        *end = '\0';
                        sp = strchr(head, ' ');
                        (void)snprintf(word, word_max, "%.*s", (int)strcspn(sp + 1, " \r"), sp + 1);
                        cl = strcasestr(head, "\r\nContent-Length:");
                        *ret_len = cl ? strtoul(cl + 17, NULL, 10) : 0;
                        r->s = (size_t)(end + 4 - r->b);
                        return true;
                }
                if (!rd_fill(r))
                        return false;
        }
}

static void skip_body(struct rd *r, size_t n)
{
        while (n > 0) {
                size_t k;

                if (r->s == r->e && !rd_fill(r))
                        die("body cut short");
                k = r->e - r->s < n ? r->e - r->s : n;
                r->s += k;
                n -= k;
        }
}

static const char zeros[65536];

static void send_body(int fd, size_t n)
{
        while (n > 0) {
                size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

                send_all(fd, zeros, k);
                n -= k;
        }
}

static void send_message(int fd, const char *first, size_t len)
{
        char h[256];
        int n = snprintf(h, sizeof(h),
                         "%s\r\nHost: bench\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\n\r\n",
                         first, len);

        send_all(fd, h, (size_t)n);
        send_body(fd, len);
}

/* The model server: each connection answers POST /big with 64 MiB, others with what it got. */
static void *server_conn(void *u)
{
        struct rd *r = u;
        char target[256];
        size_t len;

        while (read_head(r, target, sizeof(target), &len)) {
                skip_body(r, len);
                send_message(r->fd, "HTTP/1.1 200 OK", strcmp(target, "/big") == 0 ? BIG : len);
        }
        close(r->fd);
        free(r);
        return NULL;
}

static void *server(void *u)
{
        int lfd = *(int *)u;

        for (;;) {
                struct rd *r = calloc(1, sizeof(*r));
                int one = 1;
                pthread_t t;

                if (!r)
                        die("calloc");
                r->fd = accept(lfd, NULL, NULL);
                if (r->fd < 0) {
                        free(r);
                        return NULL;
                }
                setsockopt(r->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                if (pthread_create(&t, NULL, server_conn, r) != 0)
                        die("pthread_create");
                pthread_detach(t);
        }
}

static int listen_any(uint16_t *ret_port)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
            getsockname(fd, (struct sockaddr *)&a, &len) < 0)
                die("listen");
        *ret_port = ntohs(a.sin_port);
        return fd;
}

static int dial(uint16_t port)
{
        struct sockaddr_in a = { .sin_family = AF_INET,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                                 .sin_port = htons(port) };
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

        if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
                die("connect");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return fd;
}

static double mono_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double cpu_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* One POST and its whole answer on r's connection. */
static void exchange(struct rd *r, const char *target, size_t len)
{
        char first[256], status[16];
        size_t rlen;

        (void)snprintf(first, sizeof(first), "POST %s HTTP/1.1", target);
        send_message(r->fd, first, len);
        if (!read_head(r, status, sizeof(status), &rlen) || strcmp(status, "200") != 0)
                die("exchange");
        skip_body(r, rlen);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* n sequential exchanges through port; prints p50, p99 and CPU per request. */
static void run(const char *name, uint16_t port, long n, size_t body)
{
        struct rd *r = calloc(1, sizeof(*r));
        double *lat = calloc((size_t)n, sizeof(double)), c0;

        if (!r || !lat)
                die("calloc");
        r->fd = dial(port);
        for (int i = 0; i < 100; i++) /* warm-up: connections, caches */
                exchange(r, "/v2/models/m/infer", body);
        c0 = cpu_us();
        for (long i = 0; i < n; i++) {
                double t0 = mono_us();

                exchange(r, "/v2/models/m/infer", body);
                lat[i] = mono_us() - t0;
        }
        c0 = cpu_us() - c0;
        qsort(lat, (size_t)n, sizeof(double), cmp_double);
        printf("%-8s p50_us=%.1f p99_us=%.1f cpu_us_per_request=%.1f\n", name, lat[n / 2],
               lat[n * 99 / 100], c0 / (double)n);
        close(r->fd);
        free(lat);
        free(r);
}

/* CPU time of 64 MiB up (request body) and down (response body) through port. */
static void run_big(const char *name, uint16_t port)
{
        struct rd *r = calloc(1, sizeof(*r));
        double c0, up, down;

        if (!r)
                die("calloc");
        r->fd = dial(port);
        c0 = cpu_us();
        exchange(r, "/up", BIG);
        up = cpu_us() - c0;
        c0 = cpu_us();
        exchange(r, "/big", 0);
        down = cpu_us() - c0;
        printf("%-8s cpu_ms_64MiB_up=%.1f cpu_ms_64MiB_down=%.1f\n", name, up / 1e3, down / 1e3);
        close(r->fd);
        free(r);
}

static bool always_ready(void *u)
{
        (void)u;
        return true;
}

/* Placement's local state of the forwarding replica (ready_userdata NULL): nothing Loaded. The
 * holder runs without a route port, so it serves every request itself. */
static bool loaded_here(void *u, const char *model)
{
        (void)model;
        return u != NULL;
}

static char holder_address[32];

/* The routing port: every model is on the holder. */
static int lookup(void *u, const char *model, char ***ret, size_t *ret_n, bool *ret_pending)
{
        char **v = calloc(2, sizeof(char *));

        (void)u;
        (void)model;
        if (!v || !(v[0] = strdup(holder_address))) {
                free(v);
                return -1;
        }
        *ret = v;
        *ret_n = 1;
        *ret_pending = false;
        return 0;
}

static const struct agent_route_ops route_ops = { .lookup = lookup };
static const struct agent_route_port route = { .ops = &route_ops };

int main(int argc, char **argv)
{
        long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
        size_t body = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
        struct proxy *p = NULL, *fwd = NULL;
        uint16_t up_port;
        int lfd = listen_any(&up_port);
        pthread_t t;

        if (n < 100)
                return 2;
        if (pthread_create(&t, NULL, server, &lfd) != 0)
                die("pthread_create");
        if (proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                .upstream_host = "127.0.0.1",
                                                .upstream_port = up_port,
                                                .ready = always_ready },
                        &p) < 0)
                die("proxy_start");
        (void)snprintf(holder_address, sizeof(holder_address), "127.0.0.1:%u", proxy_port(p));
        /* the forwarding replica: its own model server would be up_port too, never asked */
        if (proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                .upstream_port = up_port,
                                                .ready = always_ready,
                                                .route = &route,
                                                .model_loaded = loaded_here,
                                                .pod_name = "bench" },
                        &fwd) < 0)
                die("proxy_start");
        printf("requests=%ld body_bytes=%zu\n", n, body);
        run("direct", up_port, n, body);
        run("proxy", proxy_port(p), n, body);
        run("hop", proxy_port(fwd), n, body);
        run_big("direct", up_port);
        run_big("proxy", proxy_port(p));
        proxy_stop(fwd);
        proxy_stop(p);
        shutdown(lfd, SHUT_RDWR);
        close(lfd);
        pthread_join(t, NULL);
        return 0;
}
