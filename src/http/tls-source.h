/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The certificate source of a TLS server: one certificate chain and key (a "pair") served to new
 * handshakes, from PEM given at start (static) or from two files re-read when they change (inode,
 * size, mtime or ctime: a Kubernetes secret volume's ..data swap counts). A half-written or
 * mismatched pair is ignored and the previous one kept. Each pair has its own session-ticket
 * key, so a ticket issued before a rotation is refused after it. Pairs are reference counted: a
 * connection holds the pair its handshake picked until it closes. Thread-safe.
 */

#include <stdint.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "util/macro.h"

/* TLS below 1.2 is refused (SSL 3.0 is gone from gnutls anyway; listed for older builds). */
#define TLS_PRIORITIES "NORMAL:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1"

struct tls_source;
struct tls_pair;

/* From files (paths copied); the pair is loaded now and failure fails the call. */
_warn_unused_result_ int tls_source_new(const char *cert_path, const char *key_path,
                                        struct tls_source **ret);
/* From PEM (borrowed for the call); never changes. */
_warn_unused_result_ int tls_source_new_pem(const char *cert_pem, const char *key_pem,
                                            struct tls_source **ret);
struct tls_source *tls_source_free(struct tls_source *src);
DEFINE_CLEANUP_FUNC(struct tls_source *, tls_source_free)

/* A new connection's session: picks up a rotation of the files, enables session tickets under
 * the current pair's key. */
void tls_source_begin(struct tls_source *src, gnutls_session_t ts);
/* The certificate callback's part: a reference on the current pair into *slot (releasing the
 * one there), its chain and key (borrowed while *slot holds the pair). */
_warn_unused_result_ int tls_source_pick(struct tls_source *src, struct tls_pair **slot,
                                         gnutls_pcert_st **certs, unsigned *n,
                                         gnutls_privkey_t *key);
/* Drops a reference taken by tls_source_pick(). NULL pair ok. */
void tls_source_release(struct tls_source *src, struct tls_pair *pair);
/* Pairs loaded so far from files (1 after start, +1 per rotation); 0 for a PEM source. */
uint64_t tls_source_generation(struct tls_source *src);
