/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Helpers for tests against a real kube-apiserver (scripts/testenv). Every helper asserts (with
 * Criterion) instead of returning errors: a failure here is a failed test.
 */

#include <jansson.h>
#include <stddef.h>

#include "kube/client.h"

/* Loads $MODELPLANE_KUBECONFIG and returns an admin client; skips the test when it is unset.
 * Returns: owned client. If ret_cfg is set, stores the loaded config (owned). */
struct kube_client *it_client(struct kube_config **ret_cfg);

/* A client for the same server and CA that authenticates with token. Returns: owned. */
struct kube_client *it_client_with_token(const struct kube_config *admin, const char *token);

/* Creates namespace "<prefix>-<pid>-<counter>" and writes its name into buf (size len). */
void it_namespace_create(struct kube_client *c, const char *prefix, char *buf, size_t len);
/* Deletes the namespace (the testenv's kube-controller-manager empties it); errors ignored. */
void it_namespace_delete(struct kube_client *c, const char *ns);

/* Creates the CRD (borrowed JSON object) unless it exists, then waits until it is Established
 * and its plural is served in discovery for every served version (up to 60 s). */
void it_crd_install(struct kube_client *c, const json_t *crd);

/* Creates ServiceAccount ns/name (if missing) and returns a fresh token for it (TokenRequest
 * API). Returns: owned string. */
char *it_serviceaccount_token(struct kube_client *c, const char *ns, const char *name);
