/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/forward.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"

/* The latency histogram's upper bounds, in microseconds: Prometheus' default buckets (5 ms to
 * 10 s) and three below them, since a hop between two pods of a node takes well under 5 ms. */
static const usec_t bucket_le[] = { 500,    1000,   2500,   5000,    10000,   25000,   50000,
                                    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000 };
#define N_BUCKETS ELEMENTSOF(bucket_le)

enum failure {
        FAIL_CONNECT,     /* a holder's connection failed (the next one is tried) */
        FAIL_EXCHANGE,    /* after connecting (502) */
        FAIL_UNAVAILABLE, /* no holder within the wait (503) */
        FAIL_LOOP,        /* forwarded already (503) */
        N_FAILURES,
};
static const char *const failure_names[N_FAILURES] = { "connect", "exchange", "unavailable",
                                                       "loop" };

struct forward_peer {
        char *address; /* owned */
        unsigned open; /* taken or idle */
        struct forward_conn **idle;
        size_t n_idle;
};

struct forwarder {
        struct forwarder_config c;
        pthread_mutex_t lock;
        pthread_cond_t cond; /* a connection given back, or the stop */
        bool stopping;
        struct forward_peer **peers;
        size_t n_peers;
        /* counters (atomic) */
        uint64_t forwards, failures[N_FAILURES];
        uint64_t buckets[N_BUCKETS + 1], sum_usec;
};

int forwarder_new(const struct forwarder_config *cfg, struct forwarder **ret)
{
        struct forwarder *f;
        pthread_condattr_t ca;

        if (!cfg->route.ops || !cfg->route.ops->lookup || !cfg->local)
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->c = *cfg;
        f->c.wait = cfg->wait ? cfg->wait : 10 * USEC_PER_SEC;
        f->c.poll = cfg->poll ? cfg->poll : 50 * USEC_PER_MSEC;
        f->c.connect_timeout = cfg->connect_timeout ? cfg->connect_timeout : 2 * USEC_PER_SEC;
        f->c.idle_timeout = cfg->idle_timeout ? cfg->idle_timeout : 30 * USEC_PER_SEC;
        f->c.max_per_peer = cfg->max_per_peer ? cfg->max_per_peer : 256;
        f->c.idle_per_peer = cfg->idle_per_peer ? cfg->idle_per_peer : 16;
        f->c.io_timeout_sec = cfg->io_timeout_sec ? cfg->io_timeout_sec : 600;
        pthread_mutex_init(&f->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&f->cond, &ca);
        pthread_condattr_destroy(&ca);
        *ret = f;
        return 0;
}

static void conn_close(struct forward_conn *fc)
{
        close(fc->conn.fd);
        http_conn_release(&fc->conn);
        free(fc);
}

struct forwarder *forwarder_free(struct forwarder *f)
{
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_peers; i++) {
                for (size_t k = 0; k < f->peers[i]->n_idle; k++)
                        conn_close(f->peers[i]->idle[k]);
                free(f->peers[i]->idle);
                free(f->peers[i]->address);
                free(f->peers[i]);
        }
        free(f->peers);
        pthread_mutex_destroy(&f->lock);
        pthread_cond_destroy(&f->cond);
        free(f);
        return NULL;
}

void forwarder_stop(struct forwarder *f)
{
        pthread_mutex_lock(&f->lock);
        f->stopping = true;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
}

static void count_failure(struct forwarder *f, enum failure k)
{
        __atomic_add_fetch(&f->failures[k], 1, __ATOMIC_RELAXED);
}

/* ---- connecting ---- */

/* "host:port" or "[v6]:port" into its parts. */
static int split_address(const char *address, char *host, size_t host_size, char port[8])
{
        const char *colon = strrchr(address, ':'), *h = address;
        size_t hl;

        if (!colon || strlen(colon + 1) == 0 || strlen(colon + 1) > 5 ||
            strspn(colon + 1, "0123456789") != strlen(colon + 1))
                return -EINVAL;
        hl = (size_t)(colon - address);
        if (hl >= 2 && address[0] == '[' && colon[-1] == ']') {
                h++;
                hl -= 2;
        }
        if (hl == 0 || hl >= host_size)
                return -EINVAL;
        memcpy(host, h, hl);
        host[hl] = '\0';
        memcpy(port, colon + 1, strlen(colon + 1) + 1);
        return 0;
}

/* A non-blocking connect() within @timeout, the socket made blocking again after. */
static int connect_within(int fd, const struct addrinfo *ai, usec_t timeout)
{
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int err = 0, r;
        socklen_t el = sizeof(err);

        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
                if (errno != EINPROGRESS)
                        return negative_errno();
                do
                        r = poll(&pfd, 1, (int)(timeout / USEC_PER_MSEC));
                while (r < 0 && errno == EINTR);
                if (r == 0)
                        return -ETIMEDOUT;
                if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
                        return negative_errno();
                if (err != 0)
                        return -err;
        }
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
                return negative_errno();
        return 0;
}

static int dial(const struct forwarder *f, const char *address, int *ret_fd)
{
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        struct timeval tv = { .tv_sec = f->c.io_timeout_sec };
        char host[256], port[8];
        int r, fd = -1, one = 1;

        r = split_address(address, host, sizeof(host), port);
        if (r < 0)
                return r;
        if (getaddrinfo(host, port, &hints, &res) != 0)
                return -EHOSTUNREACH;
        r = -ECONNREFUSED;
        for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
                fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0)
                        continue;
                r = connect_within(fd, ai, f->c.connect_timeout);
                if (r < 0) {
                        close(fd);
                        fd = -1;
                }
        }
        freeaddrinfo(res);
        if (fd < 0)
                return r;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        *ret_fd = fd;
        return 0;
}

/* ---- the pool (under lock unless said) ---- */

static struct forward_peer *peer_get(struct forwarder *f, const char *address)
{
        struct forward_peer **np, *p;

        for (size_t i = 0; i < f->n_peers; i++)
                if (strcmp(f->peers[i]->address, address) == 0)
                        return f->peers[i];
        np = realloc(f->peers, (f->n_peers + 1) * sizeof(struct forward_peer *));
        if (!np)
                return NULL;
        f->peers = np;
        p = calloc(1, sizeof(*p));
        if (!p || !(p->idle = calloc(f->c.idle_per_peer, sizeof(struct forward_conn *))) ||
            !(p->address = strdup(address))) {
                if (p)
                        free(p->idle);
                free(p);
                return NULL;
        }
        f->peers[f->n_peers++] = p;
        return p;
}

/* A kept connection the peer closed meanwhile (or that has bytes nobody asked for) is readable. */
static bool idle_usable(const struct forwarder *f, const struct forward_conn *fc, usec_t now)
{
        struct pollfd pfd = { .fd = fc->conn.fd, .events = POLLIN };

        return now - fc->idle_since < f->c.idle_timeout && poll(&pfd, 1, 0) == 0;
}

/* Waits for a signal until @deadline. Returns false once it has passed or on stop. */
static bool wait_until(struct forwarder *f, usec_t deadline)
{
        struct timespec ts = usec_to_timespec(deadline);

        if (f->stopping || now_monotonic() >= deadline)
                return false;
        (void)pthread_cond_timedwait(&f->cond, &f->lock, &ts);
        return !f->stopping;
}

/* An idle connection of @p that is still good, the others closed. */
static struct forward_conn *take_idle(struct forwarder *f, struct forward_peer *p)
{
        usec_t now = now_monotonic();

        while (p->n_idle > 0) {
                struct forward_conn *fc = p->idle[--p->n_idle];

                if (idle_usable(f, fc, now))
                        return fc;
                conn_close(fc);
                p->open--;
        }
        return NULL;
}

/* A connection to @address: an idle one, else a new one once fewer than max_per_peer are open
 * (waiting for one to come back until @deadline). */
static int pool_get(struct forwarder *f, const char *address, usec_t deadline,
                    struct forward_conn **ret)
{
        struct forward_conn *fc;
        struct forward_peer *p;
        int r, fd = -1;

        pthread_mutex_lock(&f->lock);
        p = peer_get(f, address);
        fc = p ? take_idle(f, p) : NULL;
        while (p && !fc && p->open >= f->c.max_per_peer && wait_until(f, deadline))
                fc = take_idle(f, p);
        if (!p || (!fc && p->open >= f->c.max_per_peer)) {
                pthread_mutex_unlock(&f->lock);
                return p ? -EBUSY : -ENOMEM;
        }
        if (!fc)
                p->open++; /* the slot of the connection being made */
        pthread_mutex_unlock(&f->lock);
        if (fc) {
                *ret = fc;
                return 0;
        }
        fc = calloc(1, sizeof(*fc));
        r = fc ? dial(f, address, &fd) : -ENOMEM;
        if (r < 0) {
                free(fc);
                pthread_mutex_lock(&f->lock);
                p->open--;
                pthread_cond_broadcast(&f->cond);
                pthread_mutex_unlock(&f->lock);
                return r;
        }
        http_conn_init(&fc->conn, fd, true, &f->c.limits);
        fc->peer = p;
        fc->address = p->address;
        *ret = fc;
        return 0;
}

static void pool_put(struct forwarder *f, struct forward_conn *fc, bool reusable)
{
        struct forward_peer *p = fc->peer;

        pthread_mutex_lock(&f->lock);
        if (reusable && !f->stopping && p->n_idle < f->c.idle_per_peer) {
                fc->idle_since = now_monotonic();
                p->idle[p->n_idle++] = fc;
                fc = NULL;
        } else
                p->open--;
        pthread_cond_broadcast(&f->cond);
        pthread_mutex_unlock(&f->lock);
        if (fc)
                conn_close(fc);
}

/* ---- routing ---- */

/* The first holder that accepts a connection. Returns 0 with *ret, or how the last one failed. */
static int connect_first(struct forwarder *f, char **addresses, size_t n, usec_t deadline,
                         struct forward_conn **ret)
{
        int r = -ENOENT;

        for (size_t i = 0; i < n; i++) {
                r = pool_get(f, addresses[i], deadline, ret);
                if (r >= 0)
                        return 0;
                count_failure(f, FAIL_CONNECT);
        }
        return r;
}

/* Sleeps one poll interval (less near the deadline). Returns false once the wait is over. */
static bool wait_poll(struct forwarder *f, usec_t deadline)
{
        usec_t until = now_monotonic() + f->c.poll;
        bool stop;

        if (until > deadline)
                until = deadline;
        pthread_mutex_lock(&f->lock);
        while (!f->stopping && now_monotonic() < until)
                (void)wait_until(f, until); /* a connection given back wakes it early */
        stop = f->stopping;
        pthread_mutex_unlock(&f->lock);
        return !stop && now_monotonic() < deadline;
}

enum forward_route forwarder_route(struct forwarder *f, const char *model, bool hop,
                                   struct forward_conn **ret_conn)
{
        usec_t start = now_monotonic(), deadline = start + f->c.wait;

        if (f->c.local(f->c.local_userdata, model))
                return FORWARD_LOCAL;
        if (hop) {
                count_failure(f, FAIL_LOOP);
                return FORWARD_UNAVAILABLE;
        }
        for (;;) {
                char **addresses = NULL;
                size_t n = 0;
                bool pending = false;
                int r = f->c.route.ops->lookup(f->c.route.userdata, model, &addresses, &n,
                                               &pending);

                if (r < 0)
                        return FORWARD_LOCAL; /* no routing answer: the model server answers */
                r = connect_first(f, addresses, n, deadline, ret_conn);
                agent_route_addresses_free(addresses);
                if (r >= 0) {
                        (*ret_conn)->started = start;
                        return FORWARD_PEER;
                }
                if ((n == 0 && !pending) || f->c.local(f->c.local_userdata, model))
                        return FORWARD_LOCAL;
                if (!wait_poll(f, deadline)) {
                        count_failure(f, FAIL_UNAVAILABLE);
                        return FORWARD_UNAVAILABLE;
                }
        }
}

void forwarder_done(struct forwarder *f, struct forward_conn *c, enum forward_outcome outcome)
{
        usec_t took = now_monotonic() - c->started;
        size_t b = 0;

        if (outcome == FORWARD_FAILED)
                count_failure(f, FAIL_EXCHANGE);
        else {
                while (b < N_BUCKETS && took > bucket_le[b])
                        b++;
                __atomic_add_fetch(&f->forwards, 1, __ATOMIC_RELAXED);
                __atomic_add_fetch(&f->buckets[b], 1, __ATOMIC_RELAXED);
                __atomic_add_fetch(&f->sum_usec, took, __ATOMIC_RELAXED);
        }
        pool_put(f, c, outcome == FORWARD_ANSWERED && !http_conn_has_unread(&c->conn));
}

static uint64_t load(const uint64_t *v)
{
        return __atomic_load_n(v, __ATOMIC_RELAXED);
}

char *forwarder_metrics(struct forwarder *f)
{
        struct buf b = BUF_INIT((size_t)64 * 1024);
        uint64_t cum = 0;
        int r;

        r = buf_printf(&b,
                       "# HELP modelplane_agent_forwards_total requests for a model not loaded "
                       "here, answered by a replica that holds it\n"
                       "# TYPE modelplane_agent_forwards_total counter\n"
                       "modelplane_agent_forwards_total %llu\n"
                       "# TYPE modelplane_agent_forward_failures_total counter\n",
                       (unsigned long long)load(&f->forwards));
        for (size_t i = 0; i < N_FAILURES && r >= 0; i++)
                r = buf_printf(&b, "modelplane_agent_forward_failures_total{reason=\"%s\"} %llu\n",
                               failure_names[i], (unsigned long long)load(&f->failures[i]));
        if (r >= 0)
                r = buf_puts(&b, "# TYPE modelplane_agent_forward_seconds histogram\n");
        for (size_t i = 0; i <= N_BUCKETS && r >= 0; i++) {
                cum += load(&f->buckets[i]);
                if (i < N_BUCKETS)
                        r = buf_printf(&b,
                                       "modelplane_agent_forward_seconds_bucket{le=\"%g\"} %llu\n",
                                       (double)bucket_le[i] / 1e6, (unsigned long long)cum);
                else
                        r = buf_printf(&b,
                                       "modelplane_agent_forward_seconds_bucket{le=\"+Inf\"} %llu\n"
                                       "modelplane_agent_forward_seconds_sum %.6f\n"
                                       "modelplane_agent_forward_seconds_count %llu\n",
                                       (unsigned long long)cum, (double)load(&f->sum_usec) / 1e6,
                                       (unsigned long long)cum);
        }
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_take(&b, NULL);
}
