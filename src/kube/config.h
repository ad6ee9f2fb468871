/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Where to find the API server and how to authenticate, resolved as client-go and
 * controller-runtime do:
 *   1. --kubeconfig (kube_config_options.kubeconfig_path)
 *   2. $KUBECONFIG (first file of a ':'-separated list that exists)
 *   3. in-cluster: KUBERNETES_SERVICE_HOST/PORT, /var/run/secrets/kubernetes.io/serviceaccount/
 *      {token,ca.crt,namespace}; the token file is re-read when it changes (rotation)
 *   4. $HOME/.kube/config
 * A kubeconfig's current-context (or kube_config_options.context) selects cluster and user.
 * CA, client certificate/key and bearer token may be inline (*-data) or files; token-file too.
 * insecure-skip-tls-verify is honoured but off by default.
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/error-detail.h"
#include "util/macro.h"

struct kube_config_options {
        const char *kubeconfig_path; /* borrowed; NULL = resolve as above */
        const char *context;         /* borrowed; NULL = current-context */
        const char *
                in_cluster_root; /* borrowed; test hook, default "/var/run/secrets/kubernetes.io/serviceaccount" */
};

struct kube_config {
        char *server;          /* owned; "https://host:port" without trailing slash */
        char *ca_pem;          /* owned; PEM of the cluster CA, NULL = system trust store */
        char *client_cert_pem; /* owned; may be NULL */
        char *client_key_pem;  /* owned; may be NULL */
        char *token;           /* owned; static bearer token, may be NULL */
        char *token_file;      /* owned; re-read on change (in-cluster, token-file) */
        char *namespace;       /* owned; context namespace or in-cluster namespace, "default" */
        char *source;          /* owned; where the config came from, for messages */
        bool insecure_skip_tls_verify;
};

/*
 * Loads the configuration. On failure returns a negative errno and fills reterr (may be NULL):
 * its message names the file, the line and the field that was wrong ("FILE:LINE: field
 * clusters[x].cluster.server: missing"); YAML syntax errors read "FILE:LINE: invalid YAML: …".
 */
_warn_unused_result_ int kube_config_load(const struct kube_config_options *opts,
                                          struct kube_config **ret, struct error_detail *reterr);
struct kube_config *kube_config_free(struct kube_config *c);
DEFINE_CLEANUP_FUNC(struct kube_config *, kube_config_free)

/*
 * Parses kubeconfig YAML already in memory (len bytes; file names it in messages and anchors
 * relative paths). With allow_files false every file reference (certificate-authority,
 * client-certificate, client-key, tokenFile) is an error (-EPERM): for fuzzing. Layer-internal.
 */
_warn_unused_result_ int kube__config_parse(const char *file, const char *data, size_t len,
                                            const char *context_override, bool allow_files,
                                            struct kube_config **ret, struct error_detail *reterr);
