/* SPDX-License-Identifier: Apache-2.0 */
/*
 * http/tls-conn.c and http/tls-source.c: a server session over a socketpair against a GnuTLS
 * client thread (handshake, data both ways, close_notify), a client that does not speak TLS, a
 * rotated certificate served to the next session; and TLS on the connection engine through
 * http_server_start(): a request over TLS from PEM, a plain
 * HTTP client cut, a handshake that stalls cut at its deadline, and stalled handshakes shed past
 * the connection limit while a new client is served. Certificates are made here with GnuTLS
 * (ECDSA P-256, self-signed).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "fake-clock.h"
#include "loopback.h"
#include "http/server.h"
#include "http/tls-conn.h"
#include "http/tls-source.h"
#include "util/macro.h"

#define WAIT_MAX_MS 20000 /* upper bound for "happens eventually" */
/* The engine's clock moves by this much per 100 ms of waiting for a deadline cut: however late
 * the server accepts or reads (load, valgrind), the deadline passes after the state it applies
 * to began, and never during a step the test does not wait on. */
#define DEADLINE_STEP (500 * USEC_PER_MSEC)

struct pem {
        char cert[8192];
        char key[8192];
};

/* A self-signed certificate with the given serial, as PEM. */
static void make_pem(unsigned serial, struct pem *ret)
{
        gnutls_x509_privkey_t key;
        gnutls_x509_crt_t crt;
        unsigned char ser[4] = { (unsigned char)(serial >> 24), (unsigned char)(serial >> 16),
                                 (unsigned char)(serial >> 8), (unsigned char)serial };
        size_t len;
        time_t now = time(NULL);

        cr_assert_eq(gnutls_x509_privkey_init(&key), 0);
        cr_assert_eq(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                                  GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1),
                                                  0),
                     0);
        cr_assert_eq(gnutls_x509_crt_init(&crt), 0);
        cr_assert_eq(gnutls_x509_crt_set_version(crt, 3), 0);
        cr_assert_eq(gnutls_x509_crt_set_serial(crt, ser, sizeof(ser)), 0);
        cr_assert_eq(gnutls_x509_crt_set_activation_time(crt, now - 60), 0);
        cr_assert_eq(gnutls_x509_crt_set_expiration_time(crt, now + 3600), 0);
        cr_assert_eq(gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, "127.0.0.1",
                                                   9),
                     0);
        cr_assert_eq(gnutls_x509_crt_set_key(crt, key), 0);
        cr_assert_eq(gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0), 0);
        len = sizeof(ret->cert) - 1;
        cr_assert_eq(gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, ret->cert, &len), 0);
        ret->cert[len] = '\0';
        len = sizeof(ret->key) - 1;
        cr_assert_eq(gnutls_x509_privkey_export(key, GNUTLS_X509_FMT_PEM, ret->key, &len), 0);
        ret->key[len] = '\0';
        gnutls_x509_crt_deinit(crt);
        gnutls_x509_privkey_deinit(key);
}

/* Writes data to path through a new file and rename(2): a new inode, as a secret update. */
static void write_file(const char *path, const char *data)
{
        char tmp[256];
        FILE *f;

        (void)snprintf(tmp, sizeof(tmp), "%s.new", path);
        f = fopen(tmp, "w");
        cr_assert_not_null(f);
        cr_assert_eq(fputs(data, f) >= 0, true);
        cr_assert_eq(fclose(f), 0);
        cr_assert_eq(rename(tmp, path), 0);
}

/* ---- a GnuTLS client on its own thread ---- */

struct client {
        int fd;
        pthread_t thread;
        const char *send; /* sent after the handshake, then the reply is read until EOF */
        char got[4096];
        size_t got_len;
        unsigned serial;    /* of the server's certificate */
        int handshake;      /* gnutls result */
        atomic_bool shaken; /* the handshake is over (set before anything is sent) */
        atomic_bool done;   /* the thread is about to return */
};

static void *client_main(void *p)
{
        struct client *c = p;
        gnutls_certificate_credentials_t cred;
        gnutls_session_t s;
        const gnutls_datum_t *peer;
        int r;

        (void)gnutls_certificate_allocate_credentials(&cred);
        (void)gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL);
        (void)gnutls_set_default_priority(s);
        (void)gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
        gnutls_transport_set_int(s, c->fd);
        gnutls_handshake_set_timeout(s, WAIT_MAX_MS);
        do
                r = gnutls_handshake(s);
        while (r < 0 && !gnutls_error_is_fatal(r));
        c->handshake = r;
        atomic_store(&c->shaken, true);
        peer = r == 0 ? gnutls_certificate_get_peers(s, NULL) : NULL;
        if (peer) {
                gnutls_x509_crt_t crt;
                unsigned char ser[16];
                size_t n = sizeof(ser);

                (void)gnutls_x509_crt_init(&crt);
                if (gnutls_x509_crt_import(crt, peer, GNUTLS_X509_FMT_DER) == 0 &&
                    gnutls_x509_crt_get_serial(crt, ser, &n) == 0)
                        for (size_t i = 0; i < n; i++)
                                c->serial = (c->serial << 8) | ser[i];
                gnutls_x509_crt_deinit(crt);
        }
        if (r == 0 && c->send)
                (void)gnutls_record_send(s, c->send, strlen(c->send));
        while (r == 0 && c->got_len < sizeof(c->got) - 1) {
                ssize_t n = gnutls_record_recv(s, c->got + c->got_len,
                                               sizeof(c->got) - 1 - c->got_len);

                if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
                        continue;
                if (n <= 0)
                        break;
                c->got_len += (size_t)n;
        }
        c->got[c->got_len] = '\0';
        gnutls_deinit(s);
        gnutls_certificate_free_credentials(cred);
        atomic_store(&c->done, true);
        return NULL;
}

static void client_start(struct client *c, int fd, const char *send)
{
        *c = (struct client){ .fd = fd, .send = send };
        cr_assert_eq(pthread_create(&c->thread, NULL, client_main, c), 0);
}

static void client_join(struct client *c)
{
        cr_assert_eq(pthread_join(c->thread, NULL), 0);
}

/* ---- the session over a socketpair, driven here as the engine drives it ---- */

static void wait_for(int fd, struct tls_conn *t)
{
        struct pollfd p = { .fd = fd, .events = tls_conn_wants_write(t) ? POLLOUT : POLLIN };

        cr_assert_eq(poll(&p, 1, WAIT_MAX_MS), 1, "the peer never became ready");
}

/* Runs the handshake to its end; returns its result. */
static int handshake(int fd, struct tls_conn *t)
{
        int r;

        while ((r = tls_conn_handshake(t)) == -EAGAIN)
                wait_for(fd, t);
        return r;
}

static void pair_of_sockets(int sv[2])
{
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        cr_assert_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

/* One session on a fresh socketpair: handshake, "ping" in, "pong" out, close_notify. */
static unsigned serve_ping(struct tls_conn_server *srv)
{
        struct client c;
        struct tls_conn *t = NULL;
        char buf[16];
        size_t got = 0;
        ssize_t n;
        int sv[2];

        pair_of_sockets(sv);
        cr_assert_eq(tls_conn_new(srv, sv[0], &t), 0);
        client_start(&c, sv[1], "ping");
        cr_assert_eq(handshake(sv[0], t), 0);
        cr_assert_eq(tls_conn_resumed(t), false);
        while (got < 4) {
                n = tls_conn_recv(t, buf + got, sizeof(buf) - got);
                if (n == -EAGAIN) {
                        wait_for(sv[0], t);
                        continue;
                }
                cr_assert_gt(n, 0, "recv: %zd", n);
                got += (size_t)n;
        }
        cr_assert_eq(memcmp(buf, "ping", 4), 0);
        while ((n = tls_conn_send(t, "pong", 4)) == -EAGAIN)
                wait_for(sv[0], t);
        cr_assert_eq(n, 4);
        while (tls_conn_bye(t) == -EAGAIN)
                wait_for(sv[0], t);
        client_join(&c);
        cr_assert_eq(c.handshake, 0);
        cr_assert_str_eq(c.got, "pong");
        (void)tls_conn_free(t);
        (void)close(sv[0]);
        (void)close(sv[1]);
        return c.serial;
}

Test(tls_conn, handshake_data_and_close_notify)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;
        struct pem pem;

        make_pem(7, &pem);
        cr_assert_eq(tls_source_new_pem(pem.cert, pem.key, &src), 0);
        cr_assert_eq(tls_source_generation(src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        cr_assert_eq(serve_ping(srv), 7);
}

/* A peer that is gone: sending is an error, never SIGPIPE (this process does not ignore it, as a
 * library's caller need not; CI once saw the whole test killed by it under valgrind). */
Test(tls_conn, a_send_to_a_peer_that_is_gone_is_an_error_not_sigpipe)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;
        struct tls_conn *t = NULL;
        struct client c;
        struct pem pem;
        char big[16384] = { 0 };
        ssize_t n = 0;
        int sv[2];

        cr_assert_eq(signal(SIGPIPE, SIG_DFL), SIG_DFL);
        make_pem(9, &pem);
        cr_assert_eq(tls_source_new_pem(pem.cert, pem.key, &src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        pair_of_sockets(sv);
        cr_assert_eq(tls_conn_new(srv, sv[0], &t), 0);
        client_start(&c, sv[1], NULL);
        cr_assert_eq(handshake(sv[0], t), 0);
        (void)shutdown(sv[1], SHUT_RDWR);
        client_join(&c);
        (void)close(sv[1]);
        for (int i = 0; i < 64 && n >= 0; i++)
                n = tls_conn_send(t, big, sizeof(big));
        cr_assert_lt(n, 0, "sending to a closed peer kept succeeding");
        (void)tls_conn_free(t);
        (void)close(sv[0]);
}

Test(tls_conn, a_client_that_does_not_speak_tls_is_refused)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;
        CLEANUP(tls_conn_freep) struct tls_conn *t = NULL;
        static const char get[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        struct pem pem;
        int sv[2], r;

        make_pem(1, &pem);
        cr_assert_eq(tls_source_new_pem(pem.cert, pem.key, &src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        pair_of_sockets(sv);
        cr_assert_eq(tls_conn_new(srv, sv[0], &t), 0);
        cr_assert_eq(tls_conn_handshake(t), -EAGAIN, "nothing sent yet");
        cr_assert_eq(write(sv[1], get, sizeof(get) - 1), (ssize_t)sizeof(get) - 1);
        r = handshake(sv[0], t);
        cr_assert(r < 0 && r != -EAGAIN, "handshake of plain HTTP: %d", r);
        (void)close(sv[0]);
        (void)close(sv[1]);
}

Test(tls_conn, the_peer_gone_mid_handshake_is_an_error)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;
        CLEANUP(tls_conn_freep) struct tls_conn *t = NULL;
        struct pem pem;
        int sv[2];

        make_pem(1, &pem);
        cr_assert_eq(tls_source_new_pem(pem.cert, pem.key, &src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        pair_of_sockets(sv);
        cr_assert_eq(tls_conn_new(srv, sv[0], &t), 0);
        (void)close(sv[1]);
        cr_assert_eq(handshake(sv[0], t), -ECONNRESET);
        (void)close(sv[0]);
}

Test(tls_conn, a_rotated_certificate_is_served_to_the_next_session)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;
        char dir[] = "/tmp/test-tls-conn-XXXXXX", cert[128], key[128];
        struct pem a, b;

        cr_assert_not_null(mkdtemp(dir));
        (void)snprintf(cert, sizeof(cert), "%s/tls.crt", dir);
        (void)snprintf(key, sizeof(key), "%s/tls.key", dir);
        make_pem(0xa, &a);
        make_pem(0xb, &b);
        write_file(cert, a.cert);
        write_file(key, a.key);
        cr_assert_eq(tls_source_new(cert, key, &src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        cr_assert_eq(serve_ping(srv), 0xa);
        write_file(cert, b.cert);
        cr_assert_eq(serve_ping(srv), 0xa, "half a pair (new cert, old key) is ignored");
        write_file(key, b.key);
        cr_assert_eq(serve_ping(srv), 0xb);
        cr_assert_eq(tls_source_generation(src), 2);
        (void)unlink(cert);
        (void)unlink(key);
        (void)rmdir(dir);
}

Test(tls_conn, bad_arguments)
{
        CLEANUP(tls_source_freep) struct tls_source *src = NULL;
        struct tls_conn_server *srv = NULL;
        struct tls_conn *t = NULL;
        struct pem a, b;

        make_pem(1, &a);
        make_pem(2, &b);
        cr_assert_eq(tls_source_new_pem("not a certificate", a.key, &src), -EINVAL);
        cr_assert_eq(tls_source_new_pem(a.cert, b.key, &src), -EINVAL, "mismatched pair");
        cr_assert_eq(tls_source_new("/nonexistent/tls.crt", "/nonexistent/tls.key", &src), -ENOENT);
        cr_assert_eq(tls_conn_server_new(NULL, &srv), -EINVAL);
        cr_assert_eq(tls_source_new_pem(a.cert, a.key, &src), 0);
        cr_assert_eq(tls_conn_server_new(src, &srv), 0);
        cr_assert_eq(tls_conn_new(srv, -1, &t), -EINVAL);
        (void)tls_conn_server_free(srv);
}

/* ---- TLS on the engine, through http_server_start() ---- */

static struct pem server_pem;
/* The engine's deadlines run on this clock: time moves only when a test advances it, so a
 * handshake slowed by load (valgrind, a busy CI machine) is never cut, and a cut never waits. */
static struct fake_clock deadlines;

static int handler(void *userdata, struct http_req *req, struct http_resp *resp)
{
        (void)userdata;
        http_resp_set_text(resp, 200, "text/plain", req->path);
        return 0;
}

static struct http_server *start_tls_idle(unsigned max_connections, unsigned handshake_timeout,
                                          unsigned connection_timeout)
{
        struct http_server_config cfg = { HTTP_SERVER_CONFIG_DEFAULTS };
        struct http_server *s = NULL;

        make_pem(42, &server_pem);
        fake_clock_init(&deadlines, 1000 * USEC_PER_SEC);
        cfg.clock = &deadlines.clock;
        cfg.handler = handler;
        cfg.threads = 2;
        cfg.max_connections = max_connections;
        cfg.tls_handshake_timeout = handshake_timeout;
        cfg.connection_timeout = connection_timeout;
        cfg.tls_cert_pem = server_pem.cert;
        cfg.tls_key_pem = server_pem.key;
        cr_assert_eq(http_server_start(&cfg, &s), 0);
        return s;
}

static struct http_server *start_tls(unsigned max_connections, unsigned handshake_timeout)
{
        return start_tls_idle(max_connections, handshake_timeout, 30);
}

/* A request over TLS on a new connection; returns the response (static). */
/* client_join(), the engine's clock advancing while the client waits to be cut. */
static void client_join_advancing(struct client *c)
{
        for (int waited = 0; waited < WAIT_MAX_MS && !atomic_load(&c->done); waited += 100) {
                fake_clock_advance(&deadlines, DEADLINE_STEP);
                (void)usleep(100 * 1000);
        }
        client_join(c);
}

static const char *tls_get(struct http_server *s, const char *path)
{
        static struct client c;
        static char req[256];

        (void)snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                       path);
        client_start(&c, loopback_dial(http_server_port(s)), req);
        client_join(&c);
        (void)close(c.fd);
        cr_assert_eq(c.handshake, 0, "handshake: %s", gnutls_strerror(c.handshake));
        cr_assert_eq(c.serial, 42);
        return c.got;
}

/* True when the server closes fd within WAIT_MAX_MS (what it sends is read and dropped); with
 * @advance, the engine's clock advances while it waits (a deadline cut), else it stays. */
static bool closed_by_server(int fd, bool advance, size_t *ret_bytes)
{
        char b[512];

        *ret_bytes = 0;
        for (int waited = 0; waited < WAIT_MAX_MS; waited += 100) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (advance)
                        fake_clock_advance(&deadlines, DEADLINE_STEP);
                if (poll(&p, 1, 100) == 0)
                        continue;
                n = recv(fd, b, sizeof(b), 0);
                if (n <= 0)
                        return true;
                *ret_bytes += (size_t)n;
        }
        return false;
}

Test(tls_engine, request_over_tls_and_plain_http_cut)
{
        CLEANUP(http_server_freep) struct http_server *s = start_tls(64, 3);
        const char *got = tls_get(s, "/hello");
        int fd;
        size_t bytes;

        cr_assert(strncmp(got, "HTTP/1.1 200 ", 13) == 0, "got: %s", got);
        cr_assert_not_null(strstr(got, "\r\n\r\n/hello"), "got: %s", got);
        cr_assert_eq(http_server_tls_generation(s), 0, "a PEM server never rotates");
        fd = loopback_dial(http_server_port(s));
        loopback_send_all(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        cr_assert(closed_by_server(fd, false, &bytes), "a plain-HTTP client was not cut");
        cr_assert_lt(bytes, 64, "the plain client got an HTTP answer: %zu bytes", bytes);
        (void)close(fd);
}

Test(tls_engine, stalled_handshake_is_cut_at_its_deadline)
{
        CLEANUP(http_server_freep) struct http_server *s = start_tls(64, 1);
        /* a TLS record header announcing a 512-byte ClientHello, and 4 bytes of it */
        static const char partial[] = "\x16\x03\x01\x02\x00\x01\x00\x01";
        int fd = loopback_dial(http_server_port(s));
        size_t bytes;

        cr_assert_eq(send(fd, partial, sizeof(partial) - 1, MSG_NOSIGNAL),
                     (ssize_t)sizeof(partial) - 1);
        cr_assert(closed_by_server(fd, true, &bytes), "a stalled handshake was not cut");
        cr_assert_eq(bytes, 0);
        cr_assert_eq(http_server_deadline_cuts(s), 1);
        (void)close(fd);
        cr_assert(strncmp(tls_get(s, "/after"), "HTTP/1.1 200 ", 13) == 0);
}

Test(tls_engine, stalled_handshakes_are_shed_past_the_limit)
{
        enum { LIMIT = 16, STALLED = 48 };
        CLEANUP(http_server_freep) struct http_server *s = start_tls(LIMIT, 30);
        int fds[STALLED];

        for (int i = 0; i < STALLED; i++)
                fds[i] = loopback_dial(http_server_port(s)); /* connect, send nothing */
        cr_assert(strncmp(tls_get(s, "/through"), "HTTP/1.1 200 ", 13) == 0);
        /* Two loops accept: one may admit the request's connection while the other still holds
         * a stalled one between accept4() and admit(), and the request may be done and closed
         * before that one is counted. So the count is awaited, and the request's own room is not
         * counted on: every stalled connection past the limit is shed. */
        for (int i = 0; i < WAIT_MAX_MS && http_server_shed_count(s) < STALLED - LIMIT; i++)
                (void)usleep(1000);
        cr_assert_geq(http_server_shed_count(s), STALLED - LIMIT);
        for (int i = 0; i < STALLED; i++)
                (void)close(fds[i]);
}

Test(tls_engine, a_session_idle_after_its_handshake_holds_no_input_buffer)
{
        CLEANUP(http_server_freep) struct http_server *s = start_tls_idle(64, 3, 2);
        struct client c;

        client_start(&c, loopback_dial(http_server_port(s)), NULL); /* handshake, then silence */
        for (int i = 0; i < WAIT_MAX_MS && !atomic_load(&c.shaken); i++)
                (void)usleep(1000);
        cr_assert(atomic_load(&c.shaken));
        (void)usleep(200 * 1000); /* the server has read the client's Finished */
        cr_assert_eq(http_server_input_buffers(s), 0);
        client_join_advancing(&c); /* cut by the 2 s inactivity deadline */
        (void)close(c.fd);
        cr_assert_eq(c.handshake, 0);
        cr_assert_eq(http_server_deadline_cuts(s), 1);
}

Test(tls_engine, a_body_that_stalls_is_cut_by_the_inactivity_deadline)
{
        CLEANUP(http_server_freep) struct http_server *s = start_tls_idle(64, 3, 1);
        struct client c;

        /* the head, then 5 of the 100 body bytes, then nothing: no answer, cut after 1 s idle
         * (before the 60 s request deadline) */
        client_start(&c, loopback_dial(http_server_port(s)),
                     "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabcde");
        client_join_advancing(&c); /* 1 s idle, far from the 60 s request deadline */
        (void)close(c.fd);
        cr_assert_eq(c.handshake, 0);
        cr_assert_eq(c.got_len, 0, "got: %s", c.got);
        cr_assert_eq(http_server_deadline_cuts(s), 1);
}
