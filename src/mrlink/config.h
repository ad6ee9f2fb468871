/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Configuration of the InferenceService <-> model registry controller (spec A.2.1), read from
 * the same environment variables upstream's cmd/controller/main.go reads, with the same names
 * and meanings, plus modelplane's own (MODELPLANE_MRLINK_*, see docs/mrlink.md).
 *
 * Pure apart from reading the environment through a getenv-like callback (tests pass their
 * own); no logging.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"
#include "util/time-util.h"

/* INFERENCE_SERVICE_CONTROLLER must equal this (exactly) to enable the controller. */
#define MRLINK_ENABLE_VALUE "managed"
/* Default of MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT: how long a deleted InferenceService keeps its
 * finalizer while the registry does not answer. */
#define MRLINK_UNDEPLOY_TIMEOUT_DEFAULT (10 * USEC_PER_MINUTE)
/* The pod's service-account token (the bearer token of registry calls), re-read on change. */
#define MRLINK_SA_TOKEN_FILE "/var/run/secrets/kubernetes.io/serviceaccount/token"

struct mrlink_config {
        /* the nine required variables (A.2.1); owned */
        char *namespace_label;      /* NAMESPACE_LABEL */
        char *name_label;           /* NAME_LABEL */
        char *url_annotation;       /* URL_ANNOTATION */
        char *isid_label;           /* INFERENCE_SERVICE_ID_LABEL */
        char *mvid_label;           /* MODEL_VERSION_ID_LABEL */
        char *rmid_label;           /* REGISTERED_MODEL_ID_LABEL */
        char *finalizer;            /* FINALIZER */
        char *service_annotation;   /* SERVICE_ANNOTATION */
        char *registries_namespace; /* REGISTRIES_NAMESPACE */
        /* SKIP_TLS_VERIFY, Go strconv.ParseBool; anything else is false. Only the registry
         * client is affected. */
        bool skip_tls_verify;
        /* The trust store of the registry client, as Go's crypto/x509 on Linux extends the
         * system pool (upstream's controller is Go; libcurl does not read these): SSL_CERT_FILE
         * replaces the default CA bundle (CURLOPT_CAINFO), SSL_CERT_DIR the default certificate
         * directories (CURLOPT_CAPATH; ':'-separated, hashed as `openssl rehash` does). Empty =
         * unset = libcurl's defaults. Owned. */
        char *ca_file; /* SSL_CERT_FILE */
        char *ca_path; /* SSL_CERT_DIR */
        /* MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT (duration, parse_duration_usec) */
        usec_t undeploy_timeout;
        /* MODELPLANE_MRLINK_TEST_URL_REWRITE: "from=to[,from=to...]", exact base URLs. A test
         * hook: a resolved registry URL equal to a "from" is replaced by its "to". NULL = none. */
        char *url_rewrite;
        /* MODELPLANE_MRLINK_TOKEN_FILE; NULL = the caller's default (owned) */
        char *token_file;
};

typedef const char *(*mrlink_getenv_fn)(const char *name);

/* Whether INFERENCE_SERVICE_CONTROLLER is exactly "managed". */
bool mrlink_enabled(mrlink_getenv_fn getenv_fn);

/* Go strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False; -EINVAL otherwise. */
_warn_unused_result_ int mrlink_parse_go_bool(const char *s, bool *ret);

/*
 * Reads the configuration. A missing or empty required variable is -EINVAL with its name in err;
 * a bad MODELPLANE_MRLINK_UNDEPLOY_TIMEOUT too. Returns: *ret owned (mrlink_config_free()).
 */
_warn_unused_result_ int mrlink_config_from_env(mrlink_getenv_fn getenv_fn,
                                                struct mrlink_config **ret, char *err,
                                                size_t errlen);
struct mrlink_config *mrlink_config_free(struct mrlink_config *c);
DEFINE_CLEANUP_FUNC(struct mrlink_config *, mrlink_config_free)

/* getenv() as a mrlink_getenv_fn. */
const char *mrlink_getenv(const char *name);
