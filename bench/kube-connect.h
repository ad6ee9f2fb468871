/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The start of the small programs that drive a real API server (bench/kube-client-bench and
 * tests/integration/apiserver/informer-probe): a client from a kubeconfig file, with the error
 * on stderr. The caller has called curl_global_init().
 */
#include "kube/client.h"
#include "kube/config.h"

/*
 * Loads the kubeconfig at path into *ret_cfg and makes a client for it in *ret_client. On
 * failure prints "kubeconfig: <why>" or "kube client: error <errno>" to stderr, returns a
 * negative errno and sets nothing (what was made is freed).
 */
int kube_connect(const char *path, struct kube_config **ret_cfg, struct kube_client **ret_client);
