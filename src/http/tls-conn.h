/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A non-blocking GnuTLS server session over a socket, for the connection engine (engine.c):
 * every call does what the socket allows now and answers -EAGAIN when it must wait; the caller
 * waits for the direction tls_conn_wants_write() names (EPOLLOUT, else EPOLLIN) and calls again.
 * Nothing here blocks a thread or sleeps; the handshake deadline is the caller's.
 *
 * One tls_conn_server per server: the certificate credentials, whose certificate callback serves
 * the current pair of a tls_source (rotation: the files are compared when a connection starts),
 * and the priorities (TLS_PRIORITIES: TLS 1.2 and 1.3). Each session gets session tickets under
 * the key of the pair current at its start.
 *
 * Errors are negative errno: -EAGAIN (wait and call again), -EPROTO (not TLS, a TLS alert or a
 * protocol error, a renegotiation request), -ECONNRESET (the socket failed), -ENOMEM.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "http/engine.h"
#include "http/tls-source.h"
#include "util/macro.h"

struct tls_conn_server;
struct tls_conn;

/* src is borrowed and must outlive the server object and its sessions. */
_warn_unused_result_ int tls_conn_server_new(struct tls_source *src, struct tls_conn_server **ret);
struct tls_conn_server *tls_conn_server_free(struct tls_conn_server *srv);
DEFINE_CLEANUP_FUNC(struct tls_conn_server *, tls_conn_server_free)

/* A server session over fd (borrowed: never closed here; should be non-blocking). */
_warn_unused_result_ int tls_conn_new(struct tls_conn_server *srv, int fd, struct tls_conn **ret);
/* Frees the session and releases its certificate pair; sends nothing. NULL ok. */
struct tls_conn *tls_conn_free(struct tls_conn *t);
DEFINE_CLEANUP_FUNC(struct tls_conn *, tls_conn_free)

/* One step of the handshake: 0 once it is complete, -EAGAIN, or an error. */
_warn_unused_result_ int tls_conn_handshake(struct tls_conn *t);
/* Application data: bytes read (> 0), 0 at the end of the stream (close_notify, or the peer's
 * EOF without one), or a negative errno. */
_warn_unused_result_ ssize_t tls_conn_recv(struct tls_conn *t, void *buf, size_t len);
/* Bytes sent (> 0; may be fewer than len) or a negative errno; after -EAGAIN, call again with
 * the same bytes. */
_warn_unused_result_ ssize_t tls_conn_send(struct tls_conn *t, const void *buf, size_t len);
/* Whether the call that answered -EAGAIN waits for the socket to be writable (else readable). */
bool tls_conn_wants_write(struct tls_conn *t);
/* Decrypted bytes buffered in the session, readable without the socket. */
size_t tls_conn_pending(struct tls_conn *t);
/* Sends close_notify and ends the write side of the TLS stream: 0, -EAGAIN or an error. */
int tls_conn_bye(struct tls_conn *t);
/* Whether the handshake resumed a session (a ticket); false before it completes. */
bool tls_conn_resumed(struct tls_conn *t);

/* The engine's transport (struct http_engine_transport) over these sessions; its userdata is a
 * struct tls_conn_server. */
extern const struct http_engine_transport tls_conn_transport;
