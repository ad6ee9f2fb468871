/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The TrainedModel validating admission webhook server: HTTPS (TLS 1.2+) on top of http/server,
 * serving POST /validate-serving-kserve-io-v1alpha1-trainedmodel and its alias
 * /validate-trainedmodel with webhook/admission's AdmissionReview exchange. The certificate pair
 * is read from <cert_dir>/tls.crt and <cert_dir>/tls.key (controller-runtime's layout) and
 * re-read when the files change, for new handshakes only (cert-manager rotation, secret volume
 * ..data swaps); open connections keep their session.
 *
 * Used by `modelplane webhook` (alone) and `modelplane controller --enable-webhook`.
 */

#include <stdint.h>

#include "webhook/admission.h"
#include "util/macro.h"

struct webhook_server;

#define WEBHOOK_PATH         "/validate-serving-kserve-io-v1alpha1-trainedmodel"
#define WEBHOOK_PATH_ALIAS   "/validate-trainedmodel"
#define WEBHOOK_DEFAULT_PORT 9443
/* controller-runtime's default --webhook-cert-dir. */
#define WEBHOOK_DEFAULT_CERT_DIR "/tmp/k8s-webhook-server/serving-certs"

struct webhook_server_config {
        const char *address;   /* borrowed; listen address, "0.0.0.0" in a cluster */
        uint16_t port;         /* 0 picks a free port (tests) */
        const char *cert_dir;  /* borrowed; directory with the two files below */
        const char *cert_name; /* borrowed; default "tls.crt" */
        const char *key_name;  /* borrowed; default "tls.key" */
        /*
         * Seconds of inactivity before a connection is closed; this is what ends a client that
         * sends half a request and stalls. The API server's own webhook timeout is 10 s by default.
         */
        unsigned connection_timeout;
        unsigned max_connections;
        /* The rules; NULL means tm_validate_admission() (serving/webhook-rules.h). */
        admission_validate_fn *validate;
};

#define WEBHOOK_SERVER_CONFIG_DEFAULTS                                                            \
        .address = "0.0.0.0", .port = WEBHOOK_DEFAULT_PORT, .cert_dir = WEBHOOK_DEFAULT_CERT_DIR, \
        .cert_name = "tls.crt", .key_name = "tls.key", .connection_timeout = 10,                  \
        .max_connections = 4096, .validate = NULL

/*
 * Loads the certificate pair and starts listening (threads of its own; returns at once).
 * Returns 0, -ENOENT/-EACCES/-EINVAL when the pair cannot be loaded (the key must match the
 * certificate), -EADDRINUSE when the port cannot be bound, -ENOMEM.
 */
_warn_unused_result_ int webhook_server_start(const struct webhook_server_config *cfg,
                                              struct webhook_server **ret);
/* Stops accepting, finishes in-flight reviews, frees. Accepts NULL; returns NULL. */
struct webhook_server *webhook_server_free(struct webhook_server *s);
DEFINE_CLEANUP_FUNC(struct webhook_server *, webhook_server_free)

uint16_t webhook_server_port(const struct webhook_server *s);
/* Certificate pairs loaded so far: 1 after start, +1 per rotation noticed by a handshake. */
uint64_t webhook_server_cert_generation(struct webhook_server *s);
