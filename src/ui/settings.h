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

#include "ui/access.h"
#include "util/macro.h"

struct error_detail;

#define UI_ROLE_BINDING_SELECTOR     "app.kubernetes.io/component=model-registry"
#define UI_ROLE_BINDING_SUBJECTS_MAX 32U
#define UI_SUBJECT_NAME_MAX          256U

/* ---- registries made by the console (docs/ui.md, "Registries made by the console") ---- */

#define UI_REGISTRY_ROLE_PREFIX "registry-user-"
#define UI_REGISTRY_MANAGED_BY  "modelplane-ui" /* app.kubernetes.io/managed-by of its objects */
#define UI_REGISTRY_PVC_SUFFIX  "-data"         /* SQLite's PersistentVolumeClaim: <name>-data */
#define UI_REGISTRY_PVC_SIZE    "1Gi"           /* as deploy/overlays/registry-sqlite */
#define UI_REGISTRY_PORT        8080U
#define UI_REGISTRY_TEXT_MAX    1024U /* displayName, description: bytes */
#define UI_DB_HOST_MAX          253U  /* a DNS name or an address */
#define UI_DB_IDENT_MAX         63U   /* PostgreSQL's identifier length: database, username */
#define UI_SECRET_KEY_MAX       253U  /* a Secret's key */
#define UI_K8S_SUBDOMAIN_MAX    253U  /* a Secret's name: an RFC 1123 subdomain */
#define UI_CERTIFICATES_MAX     500U  /* ConfigMaps (and Secrets) read for certificates */

/* The database of a registry: PostgreSQL, or none (the embedded SQLite). The strings are
 * read-only outside this module. */
struct ui_registry_db {
        bool postgres;                          /* false: SQLite on its claim <name>-data */
        char host[UI_DB_HOST_MAX + 1];          /* [A-Za-z0-9.-:] */
        unsigned port;                          /* 1-65535, 5432 when not given */
        char database[UI_DB_IDENT_MAX + 1];     /* [A-Za-z0-9_.-] */
        char username[UI_DB_IDENT_MAX + 1];     /* likewise */
        char secret[UI_K8S_SUBDOMAIN_MAX + 1];  /* passwordSecret.name; "" = no password */
        char secret_key[UI_SECRET_KEY_MAX + 1]; /* passwordSecret.key */
        char ssl_mode[16];                      /* "" or libpq's sslmode */
};

/* A create or PATCH request: upstream's ModelRegistrySettingsPayload ({"modelRegistry": kind})
 * or the ModelRegistryKind itself. Borrowed strings point into the body. */
struct ui_registry_req {
        char name[UI_K8S_NAME_MAX + 1]; /* metadata.name: a DNS-1035 label (a Service's name) */
        const char *display_name;       /* annotations.displayName; NULL: not given */
        const char *description;        /* annotations.description; NULL: not given */
        bool has_db;                    /* PATCH: the body sets the database (spec.postgres) */
        struct ui_registry_db db;
};

/*
 * Reads and checks a request's body data (borrowed) for a registry in namespace ns. create: the
 * name is required (a DNS-1035 label of at most 63 bytes: a Service's name); else (PATCH) it is
 * optional and must equal name_or_null when given. metadata.namespace, when given, must be ns.
 * The annotations displayName and description (else OpenShift's openshift.io/display-name and
 * openshift.io/description): strings of at most UI_REGISTRY_TEXT_MAX bytes without control
 * characters (a description may hold newlines and tabs). spec.postgres: host
 * (required), port (1-65535, default 5432), database and username (required), passwordSecret
 * {name, key} (optional; key defaults to "database-password"), sslMode (libpq's); no spec.postgres
 * on create, or `spec.postgres: null` on PATCH, is the embedded SQLite. spec.mysql and
 * databasePassword are refused (422): modelplane's registry speaks PostgreSQL, and keeps no
 * password itself. Returns 0; -EINVAL (ERROR_INVALID, 400) or -EDOM (ERROR_UNPROCESSABLE, 422)
 * with the field named in err.
 */
_warn_unused_result_ int ui_registry_req_read(const json_t *data, const char *ns, bool create,
                                              const char *name_or_null, struct ui_registry_req *ret,
                                              struct error_detail *err);

/* The names of a registry's objects: Deployment and Service <name>, Role registry-user-<name>,
 * PersistentVolumeClaim <name>-data (SQLite). role must hold UI_K8S_NAME_MAX +
 * sizeof(UI_REGISTRY_ROLE_PREFIX) bytes, pvc UI_K8S_NAME_MAX + sizeof(UI_REGISTRY_PVC_SUFFIX). */
void ui_registry_role_name(const char *name, char *role, size_t len);
void ui_registry_pvc_name(const char *name, char *pvc, size_t len);

/*
 * The objects the model-registry operator would write, for req in namespace ns, running image
 * (borrowed): the Deployment (one replica of `modelplane registry` on port http-api 8080; the
 * database flag built from req.db, the password in PGPASSWORD from the named Secret; SQLite on
 * the PersistentVolumeClaim <name>-data under Recreate), the Service (labelled
 * component=model-registry, the annotations, port http-api), the Role registry-user-<name> (get
 * on that Service) and SQLite's PersistentVolumeClaim (1Gi, ReadWriteOnce, the cluster's default
 * storage class, as deploy/overlays/registry-sqlite). Each labelled app=<name>,
 * component=model-registry, app.kubernetes.io/component=model-registry and
 * app.kubernetes.io/managed-by=modelplane-ui. Returns: new references; NULL on OOM.
 */
json_t *ui_registry_deployment(const struct ui_registry_req *req, const char *ns,
                               const char *image);
json_t *ui_registry_service(const struct ui_registry_req *req, const char *ns);
json_t *ui_registry_role(const char *name, const char *ns);
json_t *ui_registry_pvc(const char *name, const char *ns);

/*
 * Sets spec.postgres of kind (a ModelRegistryKind of ui_registry_kind()) from the Deployment
 * (borrowed) the console made for it: the database its --database flag names (host, port,
 * database, username, sslMode) and the Secret its PGPASSWORD comes from (passwordSecret); never
 * a password. Nothing for SQLite or a Deployment of another shape. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int ui_registry_kind_set_database(json_t *kind, const json_t *deployment);

/* Whether a Service (borrowed) is a registry the console made (its managed-by label). */
bool ui_registry_made_here(const json_t *service);

/*
 * A PATCH applied. The Service's next object: current (borrowed) with the annotations req sets
 * ("" removes one). The Deployment's next object when req sets the database: current's
 * metadata (its resourceVersion the write's precondition) and image, the rest rebuilt for
 * req.db. Returns 0 with *ret a new reference, -ENOMEM.
 */
_warn_unused_result_ int
ui_registry_service_update(const json_t *current, const struct ui_registry_req *req, json_t **ret);
_warn_unused_result_ int ui_registry_deployment_update(const json_t *current,
                                                       const struct ui_registry_req *req,
                                                       const char *default_image, json_t **ret);

/*
 * Upstream's CertificateItem list for a ConfigMap or Secret list (borrowed): the items with at
 * least one key whose value is a PEM certificate (ConfigMaps: data; Secrets: data, base64, of
 * type Opaque or kubernetes.io/tls), each as {name, keys: [those keys]}. Never a value. Returns:
 * new reference; NULL on OOM.
 */
json_t *ui_certificate_items(const json_t *list, bool secrets);

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
