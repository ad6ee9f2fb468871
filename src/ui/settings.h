/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The console's settings routes for administrators (docs/ui.md, "Settings"), upstream's
 * /api/v1/settings/... shapes: the model registries as ModelRegistryKind objects, the
 * RoleBindings that let a user or a group use a registry (as upstream's frontend makes them: to
 * the Role `registry-user-<registry>`, labelled `app.kubernetes.io/name: <registry>` and
 * `app.kubernetes.io/component: model-registry`), and groups. Every call is made as the user, so
 * Kubernetes RBAC decides who is an administrator. Pure: the objects sent and the views returned.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

#define UI_ROLE_BINDING_SELECTOR     "app.kubernetes.io/component=model-registry"
#define UI_ROLE_BINDING_SUBJECTS_MAX 32U
#define UI_SUBJECT_NAME_MAX          256U

/*
 * Upstream's ModelRegistryKind for a registry's Service (borrowed): metadata (name, namespace,
 * creationTimestamp, labels, annotations), spec.rest.port (its http-api or https-api port) and
 * an empty status (modelplane runs no registry operator whose conditions it could show).
 * Returns: new reference; NULL on OOM.
 */
json_t *ui_registry_kind(const json_t *service);

/*
 * The RoleBinding to create in namespace ns from upstream's RoleBinding body (data, borrowed):
 * the registry is the `app.kubernetes.io/name` label, else the name in roleRef
 * `registry-user-<registry>`; roleRef must be (or is set to) the Role `registry-user-<registry>`;
 * subjects are 1 to 32 Users or Groups (apiGroup rbac.authorization.k8s.io) with names of 1 to 256
 * printable bytes; metadata.name is kept (else generateName `<registry>-permissions-`); the labels
 * upstream filters on are set. Returns 0 with *ret a new reference, -EINVAL with the reason in
 * msg, -ENOMEM.
 */
_warn_unused_result_ int ui_role_binding_request(const json_t *data, const char *ns, json_t **ret,
                                                 char *msg, size_t len);

/*
 * The RoleBinding current (borrowed, a registry's, as read) with upstream's PATCH body data
 * (borrowed) applied, to be written back with PUT: its subjects replaced, checked as
 * ui_role_binding_request() checks them; a roleRef in data must be current's (Kubernetes keeps
 * it immutable); a metadata.resourceVersion in data replaces the read one as the write's
 * precondition (the caller's optimistic concurrency). Nothing else changes. Returns 0 with *ret a
 * new reference, -EINVAL with the reason in msg, -ENOMEM.
 */
_warn_unused_result_ int ui_role_binding_update(const json_t *current, const json_t *data,
                                                json_t **ret, char *msg, size_t len);

/* Whether a RoleBinding (borrowed) is one of a registry's (the component label). */
bool ui_role_binding_is_registry(const json_t *rb);

/* The RoleBinding as upstream shows it (apiVersion, kind, metadata's name, namespace, uid,
 * creationTimestamp, labels; subjects; roleRef). Returns: new reference; NULL on OOM. */
json_t *ui_role_binding_view(const json_t *rb);

/* An OpenShift Group (user.openshift.io/v1) as upstream's Group: apiVersion, kind, metadata's
 * name, uid, creationTimestamp, labels, annotations; users ([] when absent). New reference. */
json_t *ui_group_view(const json_t *group);
