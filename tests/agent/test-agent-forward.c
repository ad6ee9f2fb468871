/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Forwarding under placement (issue 30; src/agent/forward.h), with two proxies in this process
 * standing in for two replicas' agents, each in front of its own scripted model server, and the
 * in-memory routing port (tests/fakes/fake-route-port.h): a forwarded answer byte for byte the
 * holder's, chunked bodies both ways, the hop header and the loop guard, the next holder when
 * the first does not answer, a pending model's 503 with Retry-After (and its forward once it
 * appears), the per-replica connection bound, the metrics, and no route port = no forwarding.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/proxy.h"
#include "fake-route-port.h"
#include "loopback.h"

/* A scripted model server (or, in the hop-header tests, a stand-in replica): every request is
 * recorded and answered with its own body; a target with "/stream" gets a chunked answer, one
 * with "/slow" waits for the test's release first. */
struct server {
        const char *name; /* answers carry "X-Served-By: <name>" */
        int fd;
        uint16_t port;
        pthread_t thread;
        atomic_int accepts, requests;
        pthread_mutex_t lock;
        char last[8192]; /* the last request as received */
        int release[2];  /* a byte on it lets a "/slow" request be answered */
};

struct replica {
        const char *pod;
        struct server model;
        struct fake_route_port route;
        struct proxy *proxy;
        const char *loaded[4]; /* the models Loaded here */
        char address[32];      /* its proxy, "127.0.0.1:<port>" */
};

static struct replica a = { .pod = "pod-a", .model = { .name = "A" } };
static struct replica b = { .pod = "pod-b", .model = { .name = "B" } };

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

/* The request's body as it came (after the head): echoed back. */
static void answer(struct server *s, int c, const char *req, size_t n)
{
        const char *body = strstr(req, "\r\n\r\n") + 4;
        char resp[9000];

        if (strstr(req, "/slow ")) {
                char x;
                (void)!read(s->release[0], &x, 1);
        }
        if (strstr(req, "/stream ")) {
                (void)snprintf(resp, sizeof(resp),
                               "HTTP/1.1 200 OK\r\nX-Served-By: %s\r\nTransfer-Encoding: chunked"
                               "\r\n\r\n4;e=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-T: v\r\n\r\n",
                               s->name);
        } else {
                (void)snprintf(resp, sizeof(resp),
                               "HTTP/1.1 200 OK\r\nX-Served-By: %s\r\nX-Resp: r\r\nContent-Type: "
                               "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                               s->name, (size_t)(req + n - body), body);
        }
        send_str(c, resp);
}

struct server_conn {
        struct server *s;
        int fd;
};

static void *server_conn(void *u)
{
        struct server_conn *sc = u;
        char buf[8192];
        size_t n;

        while ((n = loopback_read_request(sc->fd, buf, sizeof(buf))) > 0) {
                pthread_mutex_lock(&sc->s->lock);
                memcpy(sc->s->last, buf, n + 1);
                pthread_mutex_unlock(&sc->s->lock);
                atomic_fetch_add(&sc->s->requests, 1);
                answer(sc->s, sc->fd, buf, n);
        }
        close(sc->fd);
        free(sc);
        return NULL;
}

static void *server_accept(void *u)
{
        struct server *s = u;

        for (;;) {
                struct server_conn *sc = malloc(sizeof(*sc));
                pthread_t t;

                sc->s = s;
                sc->fd = accept(s->fd, NULL, NULL);
                if (sc->fd < 0) {
                        free(sc);
                        return NULL;
                }
                atomic_fetch_add(&s->accepts, 1);
                pthread_create(&t, NULL, server_conn, sc);
                pthread_detach(t);
        }
}

static void server_start(struct server *s)
{
        s->fd = loopback_listen(&s->port);
        atomic_store(&s->accepts, 0);
        atomic_store(&s->requests, 0);
        s->last[0] = '\0';
        pthread_mutex_init(&s->lock, NULL);
        cr_assert_eq(pipe(s->release), 0);
        pthread_create(&s->thread, NULL, server_accept, s);
}

static void server_stop(struct server *s)
{
        shutdown(s->fd, SHUT_RDWR);
        close(s->fd);
        pthread_join(s->thread, NULL);
        close(s->release[0]);
        close(s->release[1]);
}

static bool is_ready(void *u)
{
        (void)u;
        return true;
}

static bool model_loaded(void *u, const char *model)
{
        struct replica *r = u;

        for (size_t i = 0; i < ELEMENTSOF(r->loaded) && r->loaded[i]; i++)
                if (strcmp(r->loaded[i], model) == 0)
                        return true;
        return false;
}

static char *metrics(void *u)
{
        (void)u;
        return strdup("# the agent's own\n");
}

static void replica_start(struct replica *r)
{
        server_start(&r->model);
        fake_route_port_init(&r->route);
        memset(r->loaded, 0, sizeof(r->loaded));
        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_port = r->model.port,
                                                         .ready = is_ready,
                                                         .ready_userdata = r,
                                                         .metrics_path = "/metrics",
                                                         .metrics = metrics,
                                                         .route = &r->route.port,
                                                         .model_loaded = model_loaded,
                                                         .pod_name = r->pod,
                                                         .forward_wait_ms = 300,
                                                         .forward_max_per_peer = 1 },
                                 &r->proxy),
                     0);
        (void)snprintf(r->address, sizeof(r->address), "127.0.0.1:%u", proxy_port(r->proxy));
}

static void replica_stop(struct replica *r)
{
        r->proxy = proxy_stop(r->proxy);
        server_stop(&r->model);
        fake_route_port_release(&r->route);
}

static void setup(void)
{
        replica_start(&a);
        replica_start(&b);
}

static void teardown(void)
{
        replica_stop(&a);
        replica_stop(&b);
}

/* Reads one response: its head and Content-Length body, or up to @end. */
static char *read_response(int fd, const char *end)
{
        char *buf = calloc(1, 65536);
        size_t n = 0;

        for (;;) {
                ssize_t k = recv(fd, buf + n, 65535 - n, 0);
                const char *h, *cl;

                if (k <= 0)
                        break;
                n += (size_t)k;
                h = strstr(buf, "\r\n\r\n");
                if (!h)
                        continue;
                if (end && strstr(h, end))
                        break;
                cl = strcasestr(buf, "\r\nContent-Length:");
                if (!end && cl && cl < h && n >= (size_t)(h + 4 - buf) + strtoul(cl + 17, NULL, 10))
                        break;
        }
        return buf;
}

static int dial(const struct replica *r)
{
        int fd = loopback_dial(proxy_port(r->proxy));
        struct timeval tv = { .tv_sec = 20 };

        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        return fd;
}

static char *roundtrip_until(const struct replica *r, const char *req, const char *end)
{
        int fd = dial(r);
        char *resp;

        send_str(fd, req);
        resp = read_response(fd, end);
        close(fd);
        return resp;
}

static char *roundtrip(const struct replica *r, const char *req)
{
        return roundtrip_until(r, req, NULL);
}

/* The value of a metric line "name value" in @r's metrics. */
static unsigned long metric(const struct replica *r, const char *name)
{
        char *m = roundtrip(r, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n"), line[256];
        const char *p;
        unsigned long v;

        (void)snprintf(line, sizeof(line), "\n%s", name); /* not its HELP line */
        p = strstr(m, line);
        cr_assert_not_null(p, "%s not in %s", name, m);
        v = strtoul(p + strlen(line), NULL, 10);
        free(m);
        return v;
}

/* A counter counted once the answer's last byte went out: the client may see it first. Waits
 * (up to 5 s) for it to reach @want and returns its value. */
static unsigned long metric_reaches(const struct replica *r, const char *name, unsigned long want)
{
        unsigned long v = metric(r, name);

        for (int i = 0; i < 5000 && v < want; i++) {
                usleep(1000);
                v = metric(r, name);
        }
        return v;
}

static void holders(struct replica *r, const char *model, const char *first, const char *second)
{
        const char *v[] = { first, second };

        fake_route_set(&r->route, model, v, second ? 2 : first ? 1 : 0, false);
}

TestSuite(forward, .init = setup, .fini = teardown, .timeout = 60);

Test(forward, the_answer_is_the_holders_byte_for_byte)
{
        static const char req[] = "POST /v2/models/m/infer HTTP/1.1\r\nHost: h\r\nX-Custom: c\r\n"
                                  "Content-Type: application/json\r\nContent-Length: 13\r\n\r\n"
                                  "{\"inputs\":[]}";
        char *via_a, *direct;

        b.loaded[0] = "m";
        holders(&a, "m", b.address, NULL);
        via_a = roundtrip(&a, req);
        direct = roundtrip(&b, req);
        cr_assert(strstr(via_a, "HTTP/1.1 200 OK\r\n"), "%s", via_a);
        cr_assert(strstr(via_a, "X-Served-By: B\r\n"), "%s", via_a);
        cr_assert(strstr(via_a, "\r\n\r\n{\"inputs\":[]}"), "%s", via_a);
        cr_assert_str_eq(via_a, direct, "forwarded and direct answers differ");
        /* the holder's model server got the request as sent, the hop header not */
        cr_assert(strstr(b.model.last, "POST /v2/models/m/infer HTTP/1.1\r\n"), "%s", b.model.last);
        cr_assert(strstr(b.model.last, "X-Custom: c\r\n"), "%s", b.model.last);
        cr_assert(strstr(b.model.last, "X-Forwarded-For: 127.0.0.1\r\n"), "%s", b.model.last);
        cr_assert_null(strstr(b.model.last, "Modelplane-Forwarded-By"), "%s", b.model.last);
        cr_assert_eq(atomic_load(&a.model.requests), 0, "A's model server was asked");
        cr_assert_eq(metric_reaches(&a, "modelplane_agent_forwards_total ", 1), 1);
        free(via_a);
        free(direct);
}

Test(forward, chunked_bodies_both_ways)
{
        static const char req[] = "POST /v2/models/m/stream HTTP/1.1\r\nHost: h\r\n"
                                  "Transfer-Encoding: chunked\r\n\r\n"
                                  "3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n";
        char *via_a, *direct;

        b.loaded[0] = "m";
        holders(&a, "m", b.address, NULL);
        via_a = roundtrip_until(&a, req, "0\r\nX-T: v\r\n\r\n");
        cr_assert(strstr(b.model.last, "Transfer-Encoding: chunked\r\n"), "%s", b.model.last);
        cr_assert(strstr(b.model.last,
                         "\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n"),
                  "the request's chunks did not arrive as sent: %s", b.model.last);
        direct = roundtrip_until(&b, req, "0\r\nX-T: v\r\n\r\n");
        cr_assert(strstr(via_a, "Transfer-Encoding: chunked\r\n"), "%s", via_a);
        cr_assert(strstr(via_a, "\r\n\r\n4;e=1\r\nabcd\r\n3\r\nefg\r\n0\r\nX-T: v\r\n\r\n"), "%s",
                  via_a);
        cr_assert_str_eq(via_a, direct);
        free(via_a);
        free(direct);
}

/* The hop header names the forwarding pod; sequential forwards share one pooled connection. */
Test(forward, hop_header_and_one_pooled_connection)
{
        struct server r = { .name = "R" };
        char addr[32];

        server_start(&r);
        (void)snprintf(addr, sizeof(addr), "127.0.0.1:%u", r.port);
        holders(&a, "h", addr, NULL);
        for (int i = 0; i < 3; i++) {
                char *resp = roundtrip(&a, "GET /v2/models/h/ready HTTP/1.1\r\nHost: h\r\n\r\n");

                cr_assert(strstr(resp, "X-Served-By: R\r\n"), "%s", resp);
                free(resp);
        }
        cr_assert(strstr(r.last, "GET /v2/models/h/ready HTTP/1.1\r\n"), "%s", r.last);
        cr_assert(strstr(r.last, "Modelplane-Forwarded-By: pod-a\r\n"), "%s", r.last);
        cr_assert_eq(atomic_load(&r.requests), 3);
        cr_assert_eq(atomic_load(&r.accepts), 1, "the keep-alive pool was not used");
        server_stop(&r);
}

/* A request that was forwarded once is never forwarded again. */
Test(forward, loop_guard)
{
        char *resp;

        holders(&b, "n", a.address, NULL);
        resp = roundtrip(&b, "POST /v2/models/n/infer HTTP/1.1\r\nHost: h\r\n"
                             "Modelplane-Forwarded-By: pod-a\r\nContent-Length: 2\r\n\r\n{}");
        cr_assert(strncmp(resp, "HTTP/1.1 503 ", 13) == 0, "%s", resp);
        cr_assert(strstr(resp, "Retry-After: 1\r\n"), "%s", resp);
        cr_assert(strstr(resp, "\"error\":\"model n is not loaded on this replica"), "%s", resp);
        cr_assert(strstr(resp, "pod-a"), "%s", resp);
        cr_assert_eq(fake_route_lookups(&b.route, NULL), 0, "the routing table was asked");
        cr_assert_eq(atomic_load(&b.model.requests), 0);
        cr_assert_eq(atomic_load(&a.model.requests), 0);
        cr_assert_eq(metric(&b, "modelplane_agent_forward_failures_total{reason=\"loop\"} "), 1);
        free(resp);
        /* the same request for a model Loaded there is served */
        b.loaded[0] = "n";
        resp = roundtrip(&b, "POST /v2/models/n/infer HTTP/1.1\r\nHost: h\r\n"
                             "Modelplane-Forwarded-By: pod-a\r\nContent-Length: 2\r\n\r\n{}");
        cr_assert(strstr(resp, "X-Served-By: B\r\n"), "%s", resp);
        free(resp);
}

Test(forward, next_holder_when_the_first_does_not_answer)
{
        uint16_t dead;
        int fd = loopback_listen(&dead);
        char gone[32], *resp;

        close(fd); /* nothing listens there now */
        (void)snprintf(gone, sizeof(gone), "127.0.0.1:%u", dead);
        b.loaded[0] = "m2";
        holders(&a, "m2", gone, b.address);
        resp = roundtrip(&a, "POST /v1/models/m2:predict HTTP/1.1\r\nHost: h\r\n"
                             "Content-Length: 2\r\n\r\n{}");
        cr_assert(strstr(resp, "X-Served-By: B\r\n"), "%s", resp);
        cr_assert_eq(metric(&a, "modelplane_agent_forward_failures_total{reason=\"connect\"} "), 1);
        cr_assert_eq(metric_reaches(&a, "modelplane_agent_forwards_total ", 1), 1);
        free(resp);
}

Test(forward, pending_model_gets_503_with_retry_after)
{
        char *resp;

        fake_route_set(&a.route, "p", NULL, 0, true);
        resp = roundtrip(&a, "POST /v2/models/p/infer HTTP/1.1\r\nHost: h\r\n"
                             "Content-Length: 2\r\n\r\n{}");
        cr_assert(strncmp(resp, "HTTP/1.1 503 ", 13) == 0, "%s", resp);
        cr_assert(strstr(resp, "Retry-After: 1\r\n"), "%s", resp);
        cr_assert(strstr(resp, "Content-Type: application/json\r\n"), "%s", resp);
        cr_assert(strstr(resp, "\r\n\r\n{\"error\":\"model p is not loaded on any replica yet; "
                               "retry\"}"),
                  "%s", resp);
        cr_assert_geq(fake_route_lookups(&a.route, "p"), 2, "it did not wait and ask again");
        cr_assert_eq(atomic_load(&a.model.requests), 0);
        cr_assert_eq(metric(&a, "modelplane_agent_forward_failures_total{reason=\"unavailable\"} "),
                     1);
        free(resp);
}

Test(forward, pending_model_forwarded_once_it_is_loaded)
{
        const char *v[] = { b.address, NULL };
        char *resp;

        b.loaded[0] = "q";
        fake_route_set(&a.route, "q", NULL, 0, true);
        fake_route_set_later(&a.route, "q", 1, v, 1, false); /* Loaded on B from the 2nd lookup */
        resp = roundtrip(&a, "GET /v2/models/q/versions/1/ready HTTP/1.1\r\nHost: h\r\n\r\n");
        cr_assert(strstr(resp, "X-Served-By: B\r\n"), "%s", resp);
        cr_assert_eq(fake_route_lookups(&a.route, "q"), 2);
        free(resp);
}

/* Loaded here, or placed nowhere: this replica's model server answers, as without placement. */
Test(forward, local_or_unplaced_models_stay_here)
{
        char *resp;

        a.loaded[0] = "m";
        holders(&a, "m", b.address, NULL);
        resp = roundtrip(&a, "GET /v2/models/m/ready HTTP/1.1\r\nHost: h\r\n\r\n");
        cr_assert(strstr(resp, "X-Served-By: A\r\n"), "%s", resp);
        cr_assert_eq(fake_route_lookups(&a.route, "m"), 0);
        free(resp);
        resp = roundtrip(&a, "GET /v2/models/z/ready HTTP/1.1\r\nHost: h\r\n\r\n");
        cr_assert(strstr(resp, "X-Served-By: A\r\n"), "%s", resp);
        cr_assert_eq(fake_route_lookups(&a.route, "z"), 1);
        free(resp);
        resp = roundtrip(&a, "GET /v2/health/ready HTTP/1.1\r\nHost: h\r\n\r\n");
        cr_assert(strstr(resp, "X-Served-By: A\r\n"), "%s", resp);
        free(resp);
        cr_assert_eq(atomic_load(&b.model.requests), 0);
}

/* At most forward_max_per_peer (1 here) connections to a replica: a second request waits for the
 * first one's connection instead of opening another. */
Test(forward, connections_per_replica_are_bounded)
{
        struct server r = { .name = "R" };
        char addr[32], *first, *second;
        int f1, f2;

        server_start(&r);
        (void)snprintf(addr, sizeof(addr), "127.0.0.1:%u", r.port);
        holders(&a, "s", addr, NULL);
        f1 = dial(&a);
        send_str(f1, "GET /v2/models/s/slow HTTP/1.1\r\nHost: h\r\n\r\n");
        while (atomic_load(&r.requests) < 1)
                usleep(1000);
        f2 = dial(&a);
        send_str(f2, "GET /v2/models/s/ready HTTP/1.1\r\nHost: h\r\n\r\n");
        while (fake_route_lookups(&a.route, "s") < 2)
                usleep(1000);
        usleep(50000); /* the second request reaches the pool and waits there */
        cr_assert_eq(write(r.release[1], "x", 1), 1);
        first = read_response(f1, NULL);
        second = read_response(f2, NULL);
        cr_assert(strstr(first, "X-Served-By: R\r\n"), "%s", first);
        cr_assert(strstr(second, "X-Served-By: R\r\n"), "%s", second);
        cr_assert_eq(atomic_load(&r.accepts), 1, "a second connection was opened");
        free(first);
        free(second);
        close(f1);
        close(f2);
        server_stop(&r);
}

/* Without a route port nothing of the above happens: the hop header is an ordinary header. */
Test(forward, no_route_port_no_forwarding)
{
        struct server m = { .name = "M" };
        struct proxy *p = NULL;
        struct replica plain = { 0 };
        char *resp;

        server_start(&m);
        cr_assert_eq(proxy_start(&(struct proxy_config){ .address = "127.0.0.1",
                                                         .upstream_port = m.port,
                                                         .ready = is_ready },
                                 &p),
                     0);
        plain.proxy = p;
        resp = roundtrip(&plain, "POST /v2/models/m/infer HTTP/1.1\r\nHost: h\r\n"
                                 "Modelplane-Forwarded-By: pod-x\r\nContent-Length: 2\r\n\r\n{}");
        cr_assert(strstr(resp, "X-Served-By: M\r\n"), "%s", resp);
        cr_assert(strstr(m.last, "Modelplane-Forwarded-By: pod-x\r\n"), "%s", m.last);
        free(resp);
        resp = roundtrip(&plain, "GET /metrics HTTP/1.1\r\nHost: h\r\n\r\n");
        cr_assert_null(strstr(resp, "forward"), "%s", resp);
        free(resp);
        proxy_stop(p);
        server_stop(&m);
}
