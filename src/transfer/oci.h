/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The pure half of the OCI distribution-spec client of `modelplane async-upload`
 * (docs/transfer.md): image references, the registries' answers (WWW-Authenticate challenges,
 * token answers, error bodies, manifests and indexes) and the ModelCar image's JSON (the config
 * with the model layer's diff_id appended, the manifest). No I/O: transfer/push.c sends.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "util/macro.h"

/* Limits on what a registry (or a user) hands in. */
#define OCI_REFERENCE_MAX    1024               /* an image reference */
#define OCI_REPOSITORY_MAX   255                /* distribution-spec's repository name */
#define OCI_TAG_MAX          128                /* [A-Za-z0-9_][A-Za-z0-9._-]{0,127} */
#define OCI_CHALLENGE_MAX    4096               /* one WWW-Authenticate header */
#define OCI_CHALLENGE_PARAMS 16                 /* auth-params in one challenge */
#define OCI_TOKEN_ANSWER_MAX ((size_t)64 << 10) /* a token endpoint's body */
#define OCI_TOKEN_MAX        ((size_t)16 << 10) /* the token itself */
#define OCI_MANIFEST_MAX     ((size_t)4 << 20)  /* distribution-spec's recommended 4 MiB */
#define OCI_CONFIG_MAX       ((size_t)4 << 20)
#define OCI_LAYERS_MAX       128
#define OCI_ERROR_BODY_MAX   ((size_t)64 << 10)

#define OCI_MT_MANIFEST      "application/vnd.oci.image.manifest.v1+json"
#define OCI_MT_INDEX         "application/vnd.oci.image.index.v1+json"
#define OCI_MT_CONFIG        "application/vnd.oci.image.config.v1+json"
#define OCI_MT_LAYER_GZIP    "application/vnd.oci.image.layer.v1.tar+gzip"
#define DOCKER_MT_MANIFEST   "application/vnd.docker.distribution.manifest.v2+json"
#define DOCKER_MT_LIST       "application/vnd.docker.distribution.manifest.list.v2+json"
#define DOCKER_MT_CONFIG     "application/vnd.docker.container.image.v1+json"
#define DOCKER_MT_LAYER_GZIP "application/vnd.docker.image.rootfs.diff.tar.gzip"

/* "sha256:" + 64 lowercase hex digits + NUL */
#define OCI_DIGEST_LEN 72

/* An image reference: [host[:port]/]repository[:tag][@digest]. Owned strings. */
struct oci_ref {
        char *host;       /* "quay.io", "127.0.0.1:5000"; docker.io for Docker Hub names */
        char *repository; /* "org/model"; "library/busybox" for a Docker Hub single name */
        char *tag;        /* "latest" when neither a tag nor a digest is given */
        char *digest;     /* "sha256:..." or NULL */
};
void oci_ref_release(struct oci_ref *r);

/*
 * Parses @s as docker and skopeo read references (an "oci://" or "docker://" prefix is dropped):
 * the first component is a host when it holds a '.' or a ':' or is "localhost"; otherwise the
 * image is on Docker Hub (host "docker.io", "library/" before a single component). Repository
 * components are lowercase [a-z0-9] separated by '.', '_', "__" or dashes. Returns 0 or
 * -EINVAL with the reason in @e, -ENOMEM.
 */
_warn_unused_result_ int oci_ref_parse(const char *s, struct oci_ref *ret, struct error_detail *e);

/* The registry API's host: "registry-1.docker.io" for docker.io, else the host. Borrowed. */
const char *oci_ref_api_host(const struct oci_ref *r);

/* True when @s is a sha256 digest: "sha256:" and 64 lowercase hex digits. */
bool oci_digest_valid(const char *s);

enum oci_auth_scheme {
        OCI_AUTH_NONE,
        OCI_AUTH_BASIC,
        OCI_AUTH_BEARER,
};

/* The challenge a client answers. Owned strings (NULL: absent). */
struct oci_challenge {
        enum oci_auth_scheme scheme;
        char *realm, *service, *scope;
};
void oci_challenge_release(struct oci_challenge *c);

/*
 * Parses a WWW-Authenticate header's value (RFC 9110 challenges: a scheme, then auth-params
 * name=token or name="quoted \"string\"", comma-separated; several challenges in one value) and
 * keeps the one to answer: Bearer (its realm, service, scope) before Basic. Unknown schemes are
 * skipped. Returns 0, -EINVAL (malformed, over OCI_CHALLENGE_MAX or OCI_CHALLENGE_PARAMS, no
 * Basic or Bearer, a Bearer without an http(s) realm), -ENOMEM.
 */
_warn_unused_result_ int oci_challenge_parse(const char *value, struct oci_challenge *ret,
                                             struct error_detail *e);

/* A token endpoint's answer: {"token": ...} or {"access_token": ...}. Owned; -EINVAL with the
 * reason (not JSON, no token, over the limits), -ENOMEM. */
_warn_unused_result_ int oci_token_parse(const char *body, size_t len, char **ret,
                                         struct error_detail *e);

/*
 * A registry's error body ({"errors": [{"code": "UNAUTHORIZED", "message": "..."}]}) as one line
 * into @buf: "UNAUTHORIZED: authentication required; DENIED: ..." (at most 4 errors), or the
 * body's first line when it is not that shape, or "" when empty. Control characters become '?'.
 * Returns @buf.
 */
const char *oci_error_message(const char *body, size_t len, char *buf, size_t n);

/* One layer or config: media type, digest, size. */
struct oci_descriptor {
        char media_type[128];
        char digest[OCI_DIGEST_LEN];
        uint64_t size;
};

/* A base image's manifest as the ModelCar needs it. */
struct oci_manifest {
        bool docker; /* Docker schema 2 (the new manifest keeps that flavour) */
        struct oci_descriptor config;
        struct oci_descriptor layers[OCI_LAYERS_MAX];
        size_t n_layers;
};

/*
 * Reads an image manifest (OCI or Docker schema 2): -EINVAL with the field for another
 * schemaVersion or media type, a descriptor without a valid sha256 digest or size, more than
 * OCI_LAYERS_MAX layers; -EMEDIUMTYPE when the document is an index or manifest list (use
 * oci_index_pick()).
 */
_warn_unused_result_ int oci_manifest_parse(const char *body, size_t len, struct oci_manifest *ret,
                                            struct error_detail *e);

/* Picks the manifest of @os/@arch from an index or Docker manifest list into @ret_digest.
 * -ENOENT when none matches (the message lists what is there), -EINVAL when malformed. */
_warn_unused_result_ int oci_index_pick(const char *body, size_t len, const char *os,
                                        const char *arch, char ret_digest[OCI_DIGEST_LEN],
                                        struct error_detail *e);

/*
 * The ModelCar image's config: @base_config (the base image's config JSON, or NULL for an empty
 * image of @os/@arch) with @diff_id appended to rootfs.diff_ids and a history entry saying what
 * added the layer; "created" set to @created (RFC 3339) when given. A new string (compact JSON)
 * or NULL with the reason in @e.
 */
char *oci_config_build(const char *base_config, size_t len, const char *diff_id, const char *os,
                       const char *arch, const char *created, struct error_detail *e);

/* The image manifest of @config and @layers (the base's, then the model's), in the flavour of
 * @docker (Docker schema 2) or OCI. A new string (compact JSON), or NULL on OOM. */
char *oci_manifest_build(bool docker, const struct oci_descriptor *config,
                         const struct oci_descriptor *layers, size_t n_layers);

/* The Accept header's value for a manifest GET: the four manifest and index types. */
#define OCI_MANIFEST_ACCEPT \
        OCI_MT_MANIFEST ", " OCI_MT_INDEX ", " DOCKER_MT_MANIFEST ", " DOCKER_MT_LIST
