/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The configuration of `modelplane async-upload`: Kubeflow Model Registry's async-upload job
 * (kubeflow/hub jobs/async-upload) read as that job reads it, so that a Job written for its image
 * runs unchanged (docs/transfer.md). Pure: the shell hands in the command line's values, an
 * environment lookup and the contents of the credential files; nothing here reads a file.
 *
 * Precedence, per option: the command line (--source-type ...), then the environment
 * (MODEL_SYNC_SOURCE_TYPE ...), then the default. The credential files named by the
 * *_CREDENTIALS_PATH options are read after that and, as upstream's code does, their values
 * replace those of the options they carry (AWS_ACCESS_KEY_ID ..., the dockerconfigjson's auth).
 *
 * Errors are a struct error_detail whose field names the option as the user gave it: the
 * variable (MODEL_SYNC_SOURCE_TYPE) when it came from the environment or its default, the flag
 * (--source-type) when from the command line.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error-detail.h"
#include "util/macro.h"

enum transfer_opt {
        TRANSFER_OPT_SOURCE_TYPE,
        TRANSFER_OPT_SOURCE_URI,
        TRANSFER_OPT_SOURCE_AWS_BUCKET,
        TRANSFER_OPT_SOURCE_AWS_KEY,
        TRANSFER_OPT_SOURCE_AWS_REGION,
        TRANSFER_OPT_SOURCE_AWS_ACCESS_KEY_ID,
        TRANSFER_OPT_SOURCE_AWS_SECRET_ACCESS_KEY,
        TRANSFER_OPT_SOURCE_AWS_ENDPOINT,
        TRANSFER_OPT_SOURCE_OCI_URI,
        TRANSFER_OPT_SOURCE_OCI_REGISTRY,
        TRANSFER_OPT_SOURCE_OCI_USERNAME,
        TRANSFER_OPT_SOURCE_OCI_PASSWORD,
        TRANSFER_OPT_DESTINATION_TYPE,
        TRANSFER_OPT_DESTINATION_AWS_BUCKET,
        TRANSFER_OPT_DESTINATION_AWS_KEY,
        TRANSFER_OPT_DESTINATION_AWS_REGION,
        TRANSFER_OPT_DESTINATION_AWS_ACCESS_KEY_ID,
        TRANSFER_OPT_DESTINATION_AWS_SECRET_ACCESS_KEY,
        TRANSFER_OPT_DESTINATION_AWS_ENDPOINT,
        TRANSFER_OPT_DESTINATION_OCI_URI,
        TRANSFER_OPT_DESTINATION_OCI_REGISTRY,
        TRANSFER_OPT_DESTINATION_OCI_USERNAME,
        TRANSFER_OPT_DESTINATION_OCI_PASSWORD,
        TRANSFER_OPT_DESTINATION_OCI_BASE_IMAGE,
        TRANSFER_OPT_DESTINATION_OCI_ENABLE_TLS_VERIFY,
        TRANSFER_OPT_MODEL_UPLOAD_INTENT,
        TRANSFER_OPT_MODEL_ID,
        TRANSFER_OPT_MODEL_VERSION_ID,
        TRANSFER_OPT_MODEL_ARTIFACT_ID,
        TRANSFER_OPT_STORAGE_PATH,
        TRANSFER_OPT_REGISTRY_SERVER_ADDRESS,
        TRANSFER_OPT_REGISTRY_PORT,
        TRANSFER_OPT_REGISTRY_IS_SECURE,
        TRANSFER_OPT_REGISTRY_AUTHOR,
        TRANSFER_OPT_REGISTRY_USER_TOKEN,
        TRANSFER_OPT_REGISTRY_USER_TOKEN_ENVVAR,
        TRANSFER_OPT_REGISTRY_CUSTOM_CA,
        TRANSFER_OPT_REGISTRY_CUSTOM_CA_ENVVAR,
        TRANSFER_OPT_REGISTRY_LOG_LEVEL,
        TRANSFER_OPT_SIGN,
        TRANSFER_OPT_SIGNING_IDENTITY_TOKEN_PATH,
        TRANSFER_OPT_METADATA_CONFIGMAP_PATH,
        TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH,
        TRANSFER_OPT_DESTINATION_S3_CREDENTIALS_PATH,
        TRANSFER_OPT_SOURCE_OCI_CREDENTIALS_PATH,
        TRANSFER_OPT_DESTINATION_OCI_CREDENTIALS_PATH,
        TRANSFER_OPT_SOURCE_URI_CREDENTIALS_PATH,
        TRANSFER_OPT__MAX,
};

struct transfer_option {
        const char *flag; /* "source-type": --source-type */
        const char *env;  /* "MODEL_SYNC_SOURCE_TYPE" */
        const char *def;  /* the default, or NULL */
        const char *help; /* one line for --help */
};

/* The options in enum order: upstream's table (its README and its argument parser). */
extern const struct transfer_option transfer_options[TRANSFER_OPT__MAX];

/* Upstream's default base image and metadata directory (used when it exists). */
#define TRANSFER_DEFAULT_BASE_IMAGE    "public.ecr.aws/docker/library/busybox:latest"
#define TRANSFER_DEFAULT_METADATA_PATH "/etc/model-metadata"
/* Longest value accepted for any option. */
#define TRANSFER_VALUE_MAX 4096

enum transfer_origin {
        TRANSFER_FROM_DEFAULT,
        TRANSFER_FROM_ENV,
        TRANSFER_FROM_ARG,
        TRANSFER_FROM_FILE, /* a credential file */
};

/* Each option's value (borrowed: the command line's, the environment's or the table's) and
 * where it came from; NULL when unset. */
struct transfer_values {
        const char *v[TRANSFER_OPT__MAX];
        enum transfer_origin origin[TRANSFER_OPT__MAX];
};

/* An environment lookup (getenv's shape; a port, for the tests). */
typedef const char *transfer_getenv_fn(void *userdata, const char *name);

/* Fills @v: @args[i] (NULL: not given) over the environment over the defaults. */
void transfer_values_resolve(struct transfer_values *v, const char *const args[TRANSFER_OPT__MAX],
                             transfer_getenv_fn *getenv_fn, void *userdata);

/* The name of option @o as the user gave it: the flag ("--source-type") or the variable. */
const char *transfer_values_name(const struct transfer_values *v, enum transfer_opt o, char *buf,
                                 size_t n);

enum transfer_source_type {
        TRANSFER_SOURCE_S3,
        TRANSFER_SOURCE_OCI,
        TRANSFER_SOURCE_URI,
};

enum transfer_dest_type {
        TRANSFER_DEST_S3,
        TRANSFER_DEST_OCI,
};

enum transfer_intent {
        TRANSFER_INTENT_CREATE_MODEL,
        TRANSFER_INTENT_CREATE_VERSION,
        TRANSFER_INTENT_UPDATE_ARTIFACT,
};

const char *transfer_intent_to_string(enum transfer_intent i);

/* Every string is owned (NULL: unset). */
struct transfer_s3 {
        char *bucket, *key, *region, *access_key_id, *secret_access_key, *endpoint;
};

struct transfer_oci {
        char *uri, *registry, *username, *password, *base_image;
        bool tls_verify;
};

struct transfer_config {
        enum transfer_source_type source_type;
        struct transfer_s3 source_s3;
        char *source_uri;
        struct transfer_oci source_oci;
        enum transfer_dest_type dest_type;
        struct transfer_s3 dest_s3;
        struct transfer_oci dest_oci;
        enum transfer_intent intent;
        char *model_id, *version_id, *artifact_id;
        char *storage_path;
        char *registry_address; /* as given: "https://host", "http://host:8080", "host" */
        uint16_t registry_port;
        bool registry_secure;
        char *registry_author, *registry_token, *registry_token_envvar;
        char *registry_custom_ca, *registry_custom_ca_envvar;
        int sign;             /* -1 unset (auto-detect), 0, 1 */
        char *metadata_path;  /* NULL: none given */
        char *credentials[5]; /* the *_CREDENTIALS_PATH options, in enum order from
                                  * TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH */
};

void transfer_config_release(struct transfer_config *c);

/*
 * Reads the values into @c: the choices (source and destination types, intent), booleans
 * (upstream's spellings: yes/y/true/t/1, no/n/false/f/0, any case; MODEL_SYNC_REGISTRY_IS_SECURE
 * also on/off), the port, every string copied. Returns 0, -EINVAL (the field names the option),
 * -ENOMEM. @c is released on failure.
 */
_warn_unused_result_ int transfer_config_read(const struct transfer_values *v,
                                              struct transfer_config *c, struct error_detail *e);

/* The files of an S3 credentials folder, in the order upstream reads them (a name and, after
 * the slash, its fallback). */
enum transfer_s3_file {
        TRANSFER_S3_FILE_ACCESS_KEY_ID,
        TRANSFER_S3_FILE_SECRET_ACCESS_KEY,
        TRANSFER_S3_FILE_REGION,
        TRANSFER_S3_FILE_REGION_FALLBACK,
        TRANSFER_S3_FILE_ENDPOINT,
        TRANSFER_S3_FILE_ENDPOINT_FALLBACK,
        TRANSFER_S3_FILE_BUCKET,
        TRANSFER_S3_FILE_BUCKET_FALLBACK,
        TRANSFER_S3_FILE__MAX,
};
extern const char *const transfer_s3_file_names[TRANSFER_S3_FILE__MAX];
/* The largest credential file read. */
#define TRANSFER_CREDENTIAL_FILE_MAX ((size_t)64 << 10)

/*
 * Overlays the contents of an S3 credentials folder's files (@files[i]: NULL when absent;
 * trailing whitespace is dropped) on @s. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int transfer_s3_apply_files(struct transfer_s3 *s,
                                                 const char *const files[TRANSFER_S3_FILE__MAX]);

/*
 * Validates what each side needs once the files are applied, as upstream's models do: an S3
 * source needs the key pair, bucket and key; an OCI side its registry and uri (a username
 * without a password is refused); a uri source its URI; the registry its server address; each
 * intent its ids (create_version: the model id; update_artifact: the artifact id). The field
 * names the option. Returns 0 or -EINVAL.
 */
_warn_unused_result_ int transfer_config_validate(const struct transfer_config *c,
                                                  const struct transfer_values *v,
                                                  struct error_detail *e);

/* Docker credentials for one registry. Owned. */
struct transfer_docker_auth {
        char *username, *password, *email;
};
void transfer_docker_auth_release(struct transfer_docker_auth *a);

/* The largest dockerconfigjson read. */
#define TRANSFER_DOCKERCONFIG_MAX ((size_t)1 << 20)

/*
 * Reads @len bytes of a .dockerconfigjson (`{"auths": {"<registry>": {"auth": base64(user:pass),
 * "email": ...}}}`) and the entry of @registry, as upstream does: -EINVAL without "auths"
 * ("not a docker config file"), -ENOENT when @registry has no entry or no "auth"; the auth is
 * base64 of "user:password" or, deprecated, "user:password" in plain text (*@ret_plain set);
 * an auth that is neither leaves username and password NULL. -ENOMEM.
 */
_warn_unused_result_ int transfer_dockerconfig_parse(const char *data, size_t len,
                                                     const char *registry,
                                                     struct transfer_docker_auth *ret,
                                                     bool *ret_plain, struct error_detail *e);

/*
 * The Model Registry's REST base URL from MODEL_SYNC_REGISTRY_SERVER_ADDRESS and _PORT as
 * upstream's client builds it: the address as given when it has a port, else with ":port"; an
 * address without a scheme gets https:// or http:// from is_secure. Owned; -EINVAL for an empty
 * address or one with a path, -ENOMEM.
 */
_warn_unused_result_ int transfer_registry_url(const struct transfer_config *c, char **ret,
                                               struct error_detail *e);
