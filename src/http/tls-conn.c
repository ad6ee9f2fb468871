/* SPDX-License-Identifier: Apache-2.0 */
#include "http/tls-conn.h"

#include <errno.h>
#include <stdlib.h>

#include <gnutls/gnutls.h>

struct tls_conn_server {
        struct tls_source *src; /* borrowed */
        gnutls_certificate_credentials_t cred;
        gnutls_priority_t prio;
};

struct tls_conn {
        struct tls_conn_server *srv;
        gnutls_session_t session;
        struct tls_pair *pair; /* a reference: the pair the handshake picked */
};

/* A gnutls result as negative errno. */
static int map_error(int r)
{
        switch (r) {
        case GNUTLS_E_AGAIN:
        case GNUTLS_E_INTERRUPTED:
                return -EAGAIN;
        case GNUTLS_E_MEMORY_ERROR:
                return -ENOMEM;
        case GNUTLS_E_PUSH_ERROR:
        case GNUTLS_E_PULL_ERROR:
        case GNUTLS_E_PREMATURE_TERMINATION:
                return -ECONNRESET;
        default:
                return -EPROTO;
        }
}

/* gnutls asks for the certificate: the source's current pair, held until the session ends. */
static int retrieve_cert(gnutls_session_t session, const struct gnutls_cert_retr_st *info,
                         gnutls_pcert_st **certs, unsigned int *certs_length,
                         gnutls_ocsp_data_st **ocsp, unsigned int *ocsp_length,
                         gnutls_privkey_t *privkey, unsigned int *flags)
{
        struct tls_conn *t = gnutls_session_get_ptr(session);

        (void)info;
        if (!t || tls_source_pick(t->srv->src, &t->pair, certs, certs_length, privkey) < 0)
                return -1;
        *ocsp = NULL;
        *ocsp_length = 0;
        *flags = 0; /* the pair is shared: gnutls must not free it */
        return 0;
}

int tls_conn_server_new(struct tls_source *src, struct tls_conn_server **ret)
{
        CLEANUP(tls_conn_server_freep) struct tls_conn_server *srv = NULL;

        if (!src)
                return -EINVAL;
        srv = calloc(1, sizeof(*srv));
        if (!srv)
                return -ENOMEM;
        srv->src = src;
        if (gnutls_certificate_allocate_credentials(&srv->cred) < 0) {
                srv->cred = NULL;
                return -ENOMEM;
        }
        gnutls_certificate_set_retrieve_function3(srv->cred, retrieve_cert);
        if (gnutls_priority_init(&srv->prio, TLS_PRIORITIES, NULL) < 0) {
                srv->prio = NULL;
                return -EINVAL;
        }
        *ret = TAKE_PTR(srv);
        return 0;
}

struct tls_conn_server *tls_conn_server_free(struct tls_conn_server *srv)
{
        if (!srv)
                return NULL;
        if (srv->prio)
                gnutls_priority_deinit(srv->prio);
        if (srv->cred)
                gnutls_certificate_free_credentials(srv->cred);
        free(srv);
        return NULL;
}

int tls_conn_new(struct tls_conn_server *srv, int fd, struct tls_conn **ret)
{
        CLEANUP(tls_conn_freep) struct tls_conn *t = NULL;
        int r;

        if (!srv || fd < 0)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->srv = srv;
        /* GNUTLS_NO_SIGNAL: a peer that is gone is EPIPE, never SIGPIPE to the whole process */
        r = gnutls_init(&t->session, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_SIGNAL);
        if (r < 0) {
                t->session = NULL;
                return map_error(r);
        }
        gnutls_session_set_ptr(t->session, t);
        r = gnutls_priority_set(t->session, srv->prio);
        if (r >= 0)
                r = gnutls_credentials_set(t->session, GNUTLS_CRD_CERTIFICATE, srv->cred);
        if (r < 0)
                return map_error(r);
        gnutls_transport_set_int(t->session, fd);
        /* the caller keeps the deadline; gnutls's own (40 s by default) would only be later */
        gnutls_handshake_set_timeout(t->session, GNUTLS_INDEFINITE_TIMEOUT);
        tls_source_begin(srv->src, t->session);
        *ret = TAKE_PTR(t);
        return 0;
}

struct tls_conn *tls_conn_free(struct tls_conn *t)
{
        if (!t)
                return NULL;
        if (t->session)
                gnutls_deinit(t->session);
        tls_source_release(t->srv->src, t->pair);
        free(t);
        return NULL;
}

int tls_conn_handshake(struct tls_conn *t)
{
        int r = gnutls_handshake(t->session);

        return r < 0 ? map_error(r) : 0;
}

ssize_t tls_conn_recv(struct tls_conn *t, void *buf, size_t len)
{
        ssize_t n = gnutls_record_recv(t->session, buf, len);

        if (n >= 0)
                return n;
        if (n == GNUTLS_E_PREMATURE_TERMINATION)
                return 0; /* EOF without close_notify: most HTTP clients end so */
        /* GNUTLS_E_REHANDSHAKE (a client asks to renegotiate) is refused: -EPROTO */
        return map_error((int)n);
}

ssize_t tls_conn_send(struct tls_conn *t, const void *buf, size_t len)
{
        ssize_t n = gnutls_record_send(t->session, buf, len);

        return n >= 0 ? n : map_error((int)n);
}

bool tls_conn_wants_write(struct tls_conn *t)
{
        return gnutls_record_get_direction(t->session) == 1;
}

size_t tls_conn_pending(struct tls_conn *t)
{
        return gnutls_record_check_pending(t->session);
}

int tls_conn_bye(struct tls_conn *t)
{
        int r = gnutls_bye(t->session, GNUTLS_SHUT_WR);

        return r < 0 ? map_error(r) : 0;
}

bool tls_conn_resumed(struct tls_conn *t)
{
        return gnutls_session_is_resumed(t->session) != 0;
}

/* ---- the engine's transport ---- */

static void *tr_open(void *userdata, int fd)
{
        struct tls_conn *t = NULL;

        return tls_conn_new(userdata, fd, &t) < 0 ? NULL : t;
}

static int tr_handshake(void *t)
{
        return tls_conn_handshake(t);
}

static ssize_t tr_recv(void *t, void *buf, size_t len)
{
        return tls_conn_recv(t, buf, len);
}

static ssize_t tr_send(void *t, const void *buf, size_t len)
{
        return tls_conn_send(t, buf, len);
}

static bool tr_wants_write(void *t)
{
        return tls_conn_wants_write(t);
}

static size_t tr_pending(void *t)
{
        return tls_conn_pending(t);
}

static void tr_bye(void *t)
{
        (void)tls_conn_bye(t); /* best effort: the socket's write side is shut right after */
}

static void tr_close(void *t)
{
        (void)tls_conn_free(t);
}

const struct http_engine_transport tls_conn_transport = {
        .open = tr_open,
        .handshake = tr_handshake,
        .recv = tr_recv,
        .send = tr_send,
        .wants_write = tr_wants_write,
        .pending = tr_pending,
        .bye = tr_bye,
        .close = tr_close,
};
