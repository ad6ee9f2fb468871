/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json/json-util.h"
#include "util/base64.h"
#include "util/parse-util.h"

/* env_ is pasted to the prefix, so it cannot be parenthesized */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define OPT(flag_, env_, def_, help_)                                                \
        {                                                                            \
                .flag = flag_, .env = "MODEL_SYNC_" env_, .def = def_, .help = help_ \
        }
/* NOLINTEND(bugprone-macro-parentheses) */

const struct transfer_option transfer_options[TRANSFER_OPT__MAX] = {
        [TRANSFER_OPT_SOURCE_TYPE] = OPT("source-type", "SOURCE_TYPE", "s3", "s3, oci or uri"),
        [TRANSFER_OPT_SOURCE_URI] = OPT("source-uri", "SOURCE_URI", NULL,
                                        "the URI to download (uri)"),
        [TRANSFER_OPT_SOURCE_AWS_BUCKET] = OPT("source-aws-bucket", "SOURCE_AWS_BUCKET", NULL,
                                               "the bucket (s3)"),
        [TRANSFER_OPT_SOURCE_AWS_KEY] = OPT("source-aws-key", "SOURCE_AWS_KEY", NULL,
                                            "the key or prefix (s3)"),
        [TRANSFER_OPT_SOURCE_AWS_REGION] = OPT("source-aws-region", "SOURCE_AWS_REGION", NULL,
                                               "the region (s3)"),
        [TRANSFER_OPT_SOURCE_AWS_ACCESS_KEY_ID] = OPT("source-aws-access-key-id",
                                                      "SOURCE_AWS_ACCESS_KEY_ID", NULL,
                                                      "the access key id (s3)"),
        [TRANSFER_OPT_SOURCE_AWS_SECRET_ACCESS_KEY] = OPT("source-aws-secret-access-key",
                                                          "SOURCE_AWS_SECRET_ACCESS_KEY", NULL,
                                                          "the secret access key (s3)"),
        [TRANSFER_OPT_SOURCE_AWS_ENDPOINT] = OPT("source-aws-endpoint", "SOURCE_AWS_ENDPOINT", NULL,
                                                 "the endpoint URL (s3)"),
        [TRANSFER_OPT_SOURCE_OCI_URI] = OPT("source-oci-uri", "SOURCE_OCI_URI", NULL,
                                            "(oci sources are refused, as upstream)"),
        [TRANSFER_OPT_SOURCE_OCI_REGISTRY] = OPT("source-oci-registry", "SOURCE_OCI_REGISTRY", NULL,
                                                 "(oci)"),
        [TRANSFER_OPT_SOURCE_OCI_USERNAME] = OPT("source-oci-username", "SOURCE_OCI_USERNAME", NULL,
                                                 "(oci)"),
        [TRANSFER_OPT_SOURCE_OCI_PASSWORD] = OPT("source-oci-password", "SOURCE_OCI_PASSWORD", NULL,
                                                 "(oci)"),
        [TRANSFER_OPT_DESTINATION_TYPE] = OPT("destination-type", "DESTINATION_TYPE", "oci",
                                              "oci (s3 is refused, as upstream)"),
        [TRANSFER_OPT_DESTINATION_AWS_BUCKET] = OPT("destination-aws-bucket",
                                                    "DESTINATION_AWS_BUCKET", NULL, "(s3)"),
        [TRANSFER_OPT_DESTINATION_AWS_KEY] = OPT("destination-aws-key", "DESTINATION_AWS_KEY", NULL,
                                                 "(s3)"),
        [TRANSFER_OPT_DESTINATION_AWS_REGION] = OPT("destination-aws-region",
                                                    "DESTINATION_AWS_REGION", NULL, "(s3)"),
        [TRANSFER_OPT_DESTINATION_AWS_ACCESS_KEY_ID] = OPT("destination-aws-access-key-id",
                                                           "DESTINATION_AWS_ACCESS_KEY_ID", NULL,
                                                           "(s3)"),
        [TRANSFER_OPT_DESTINATION_AWS_SECRET_ACCESS_KEY] = OPT("destination-aws-secret-access-key",
                                                               "DESTINATION_AWS_SECRET_ACCESS_KEY",
                                                               NULL, "(s3)"),
        [TRANSFER_OPT_DESTINATION_AWS_ENDPOINT] = OPT("destination-aws-endpoint",
                                                      "DESTINATION_AWS_ENDPOINT", NULL, "(s3)"),
        [TRANSFER_OPT_DESTINATION_OCI_URI] = OPT("destination-oci-uri", "DESTINATION_OCI_URI", NULL,
                                                 "the image to push: registry/repository:tag"),
        [TRANSFER_OPT_DESTINATION_OCI_REGISTRY] =
                OPT("destination-oci-registry", "DESTINATION_OCI_REGISTRY", NULL,
                    "the credentials' key in the dockerconfigjson"),
        [TRANSFER_OPT_DESTINATION_OCI_USERNAME] = OPT("destination-oci-username",
                                                      "DESTINATION_OCI_USERNAME", NULL,
                                                      "the registry user"),
        [TRANSFER_OPT_DESTINATION_OCI_PASSWORD] = OPT("destination-oci-password",
                                                      "DESTINATION_OCI_PASSWORD", NULL,
                                                      "the registry password"),
        [TRANSFER_OPT_DESTINATION_OCI_BASE_IMAGE] =
                OPT("destination-oci-base-image", "DESTINATION_OCI_BASE_IMAGE",
                    TRANSFER_DEFAULT_BASE_IMAGE,
                    "the image the model layer goes on (\"\" or none: no base)"),
        [TRANSFER_OPT_DESTINATION_OCI_ENABLE_TLS_VERIFY] =
                OPT("destination-oci-enable-tls-verify", "DESTINATION_OCI_ENABLE_TLS_VERIFY",
                    "true", "verify the registry's certificate (false: also plain http)"),
        [TRANSFER_OPT_MODEL_UPLOAD_INTENT] = OPT("model-upload-intent", "MODEL_UPLOAD_INTENT",
                                                 "update_artifact",
                                                 "create_model, create_version or update_artifact"),
        [TRANSFER_OPT_MODEL_ID] = OPT("model-id", "MODEL_ID", NULL, "the RegisteredModel's id"),
        [TRANSFER_OPT_MODEL_VERSION_ID] = OPT("model-version-id", "MODEL_VERSION_ID", NULL,
                                              "the ModelVersion's id"),
        [TRANSFER_OPT_MODEL_ARTIFACT_ID] = OPT("model-artifact-id", "MODEL_ARTIFACT_ID", NULL,
                                               "the ModelArtifact's id"),
        [TRANSFER_OPT_STORAGE_PATH] = OPT("storage-path", "STORAGE_PATH", "/tmp/model-sync",
                                          "the download directory"),
        [TRANSFER_OPT_REGISTRY_SERVER_ADDRESS] = OPT("registry-server-address",
                                                     "REGISTRY_SERVER_ADDRESS", NULL,
                                                     "the Model Registry (https://host)"),
        [TRANSFER_OPT_REGISTRY_PORT] = OPT("registry-port", "REGISTRY_PORT", "443", "its port"),
        [TRANSFER_OPT_REGISTRY_IS_SECURE] = OPT("registry-is-secure", "REGISTRY_IS_SECURE", "True",
                                                "https (a token is then required)"),
        [TRANSFER_OPT_REGISTRY_AUTHOR] = OPT("registry-author", "REGISTRY_AUTHOR", NULL,
                                             "the versions' author"),
        [TRANSFER_OPT_REGISTRY_USER_TOKEN] = OPT("registry-user-token", "REGISTRY_USER_TOKEN", NULL,
                                                 "the bearer token"),
        [TRANSFER_OPT_REGISTRY_USER_TOKEN_ENVVAR] = OPT("registry-user-token-envvar",
                                                        "REGISTRY_USER_TOKEN_ENVVAR", NULL,
                                                        "a variable naming the token's file"),
        [TRANSFER_OPT_REGISTRY_CUSTOM_CA] = OPT("registry-custom-ca", "REGISTRY_CUSTOM_CA", NULL,
                                                "a PEM CA bundle file"),
        [TRANSFER_OPT_REGISTRY_CUSTOM_CA_ENVVAR] = OPT("registry-custom-ca-envvar",
                                                       "REGISTRY_CUSTOM_CA_ENVVAR", NULL,
                                                       "a variable naming it"),
        [TRANSFER_OPT_REGISTRY_LOG_LEVEL] = OPT("registry-log-level", "REGISTRY_LOG_LEVEL", NULL,
                                                "(accepted, unused)"),
        [TRANSFER_OPT_SIGN] = OPT("sign", "SIGN", NULL,
                                  "sigstore signing (not supported: true is refused)"),
        [TRANSFER_OPT_SIGNING_IDENTITY_TOKEN_PATH] = OPT("signing-identity-token-path",
                                                         "SIGNING_IDENTITY_TOKEN_PATH", NULL,
                                                         "(accepted, unused)"),
        [TRANSFER_OPT_METADATA_CONFIGMAP_PATH] =
                OPT("metadata-configmap-path", "METADATA_CONFIGMAP_PATH", NULL,
                    "the mounted metadata ConfigMap (default /etc/model-metadata when it exists)"),
        [TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH] = OPT("source-s3-credentials-path",
                                                        "SOURCE_S3_CREDENTIALS_PATH", NULL,
                                                        "a folder of AWS_* files"),
        [TRANSFER_OPT_DESTINATION_S3_CREDENTIALS_PATH] = OPT("destination-s3-credentials-path",
                                                             "DESTINATION_S3_CREDENTIALS_PATH",
                                                             NULL, "(s3)"),
        [TRANSFER_OPT_SOURCE_OCI_CREDENTIALS_PATH] = OPT("source-oci-credentials-path",
                                                         "SOURCE_OCI_CREDENTIALS_PATH", NULL,
                                                         "(oci)"),
        [TRANSFER_OPT_DESTINATION_OCI_CREDENTIALS_PATH] = OPT("destination-oci-credentials-path",
                                                              "DESTINATION_OCI_CREDENTIALS_PATH",
                                                              NULL, "a .dockerconfigjson file"),
        [TRANSFER_OPT_SOURCE_URI_CREDENTIALS_PATH] = OPT("source-uri-credentials-path",
                                                         "SOURCE_URI_CREDENTIALS_PATH", NULL,
                                                         "a folder with a URI file"),
};

const char *const transfer_s3_file_names[TRANSFER_S3_FILE__MAX] = {
        [TRANSFER_S3_FILE_ACCESS_KEY_ID] = "AWS_ACCESS_KEY_ID",
        [TRANSFER_S3_FILE_SECRET_ACCESS_KEY] = "AWS_SECRET_ACCESS_KEY",
        [TRANSFER_S3_FILE_REGION] = "AWS_REGION",
        [TRANSFER_S3_FILE_REGION_FALLBACK] = "AWS_DEFAULT_REGION",
        [TRANSFER_S3_FILE_ENDPOINT] = "AWS_ENDPOINT_URL",
        [TRANSFER_S3_FILE_ENDPOINT_FALLBACK] = "AWS_S3_ENDPOINT",
        [TRANSFER_S3_FILE_BUCKET] = "AWS_BUCKET",
        [TRANSFER_S3_FILE_BUCKET_FALLBACK] = "AWS_S3_BUCKET",
};

void transfer_values_resolve(struct transfer_values *v, const char *const args[TRANSFER_OPT__MAX],
                             transfer_getenv_fn *getenv_fn, void *userdata)
{
        for (size_t i = 0; i < TRANSFER_OPT__MAX; i++) {
                const char *env = getenv_fn ? getenv_fn(userdata, transfer_options[i].env) : NULL;

                if (args && args[i]) {
                        v->v[i] = args[i];
                        v->origin[i] = TRANSFER_FROM_ARG;
                } else if (env) {
                        v->v[i] = env;
                        v->origin[i] = TRANSFER_FROM_ENV;
                } else {
                        v->v[i] = transfer_options[i].def;
                        v->origin[i] = TRANSFER_FROM_DEFAULT;
                }
        }
}

const char *transfer_values_name(const struct transfer_values *v, enum transfer_opt o, char *buf,
                                 size_t n)
{
        if (v && v->origin[o] == TRANSFER_FROM_ARG)
                (void)snprintf(buf, n, "--%s", transfer_options[o].flag);
        else
                (void)snprintf(buf, n, "%s", transfer_options[o].env);
        return buf;
}

const char *transfer_intent_to_string(enum transfer_intent i)
{
        switch (i) {
        case TRANSFER_INTENT_CREATE_MODEL:
                return "create_model";
        case TRANSFER_INTENT_CREATE_VERSION:
                return "create_version";
        case TRANSFER_INTENT_UPDATE_ARTIFACT:
                return "update_artifact";
        }
        return "?";
}

static void s3_release(struct transfer_s3 *s)
{
        free(s->bucket);
        free(s->key);
        free(s->region);
        free(s->access_key_id);
        if (s->secret_access_key)
                explicit_bzero(s->secret_access_key, strlen(s->secret_access_key));
        free(s->secret_access_key);
        free(s->endpoint);
        *s = (struct transfer_s3){ 0 };
}

static void oci_release(struct transfer_oci *o)
{
        free(o->uri);
        free(o->registry);
        free(o->username);
        if (o->password)
                explicit_bzero(o->password, strlen(o->password));
        free(o->password);
        free(o->base_image);
        *o = (struct transfer_oci){ 0 };
}

void transfer_config_release(struct transfer_config *c)
{
        s3_release(&c->source_s3);
        s3_release(&c->dest_s3);
        oci_release(&c->source_oci);
        oci_release(&c->dest_oci);
        free(c->source_uri);
        free(c->model_id);
        free(c->version_id);
        free(c->artifact_id);
        free(c->storage_path);
        free(c->registry_address);
        free(c->registry_author);
        if (c->registry_token)
                explicit_bzero(c->registry_token, strlen(c->registry_token));
        free(c->registry_token);
        free(c->registry_token_envvar);
        free(c->registry_custom_ca);
        free(c->registry_custom_ca_envvar);
        free(c->metadata_path);
        for (size_t i = 0; i < ELEMENTSOF(c->credentials); i++)
                free(c->credentials[i]);
        *c = (struct transfer_config){ 0 };
}

/* "NAME: REASON 'VALUE'" (no value when @value is NULL). */
static int opt_error(const struct transfer_values *v, enum transfer_opt o, struct error_detail *e,
                     const char *reason, const char *value)
{
        char name[128];

        transfer_values_name(v, o, name, sizeof(name));
        return error_detail_set_field(e, ERROR_INVALID, -EINVAL, name, "%s: %s%s%s%s", name, reason,
                                      value ? " '" : "", value ? value : "", value ? "'" : "");
}

/* One of @choices (NULL-terminated) by index. */
static int read_choice(const struct transfer_values *v, enum transfer_opt o,
                       const char *const *choices, const char *list, int *ret,
                       struct error_detail *e)
{
        const char *s = v->v[o];
        char name[128];

        for (int i = 0; s && choices[i]; i++)
                if (streq(s, choices[i])) {
                        *ret = i;
                        return 0;
                }
        transfer_values_name(v, o, name, sizeof(name));
        return error_detail_set_field(e, ERROR_INVALID, -EINVAL, name,
                                      "%s: invalid choice '%s' (choose from %s)", name, s ? s : "",
                                      list);
}

/* upstream's str2bool (and pydantic's bool for is_secure): parse_boolean's words, t and f. */
static int read_bool(const struct transfer_values *v, enum transfer_opt o, bool *ret,
                     struct error_detail *e)
{
        const char *s = v->v[o];

        if (s && (strcasecmp(s, "t") == 0 || strcasecmp(s, "f") == 0)) {
                *ret = strcasecmp(s, "t") == 0;
                return 0;
        }
        if (s && parse_boolean(s, ret) == 0)
                return 0;
        return opt_error(v, o, e, "invalid boolean value", s ? s : "");
}

static int dup_value(const struct transfer_values *v, enum transfer_opt o, char **ret,
                     struct error_detail *e)
{
        const char *s = v->v[o];

        if (!s)
                return 0;
        if (strlen(s) > TRANSFER_VALUE_MAX)
                return opt_error(v, o, e, "the value is longer than 4096 bytes", NULL);
        *ret = strdup(s);
        return *ret ? 0 : error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
}

struct str_field {
        enum transfer_opt opt;
        size_t offset;
};

#define SF(o, member)                                       \
        {                                                   \
                o, offsetof(struct transfer_config, member) \
        }

static const struct str_field str_fields[] = {
        SF(TRANSFER_OPT_SOURCE_URI, source_uri),
        SF(TRANSFER_OPT_SOURCE_AWS_BUCKET, source_s3.bucket),
        SF(TRANSFER_OPT_SOURCE_AWS_KEY, source_s3.key),
        SF(TRANSFER_OPT_SOURCE_AWS_REGION, source_s3.region),
        SF(TRANSFER_OPT_SOURCE_AWS_ACCESS_KEY_ID, source_s3.access_key_id),
        SF(TRANSFER_OPT_SOURCE_AWS_SECRET_ACCESS_KEY, source_s3.secret_access_key),
        SF(TRANSFER_OPT_SOURCE_AWS_ENDPOINT, source_s3.endpoint),
        SF(TRANSFER_OPT_SOURCE_OCI_URI, source_oci.uri),
        SF(TRANSFER_OPT_SOURCE_OCI_REGISTRY, source_oci.registry),
        SF(TRANSFER_OPT_SOURCE_OCI_USERNAME, source_oci.username),
        SF(TRANSFER_OPT_SOURCE_OCI_PASSWORD, source_oci.password),
        SF(TRANSFER_OPT_DESTINATION_AWS_BUCKET, dest_s3.bucket),
        SF(TRANSFER_OPT_DESTINATION_AWS_KEY, dest_s3.key),
        SF(TRANSFER_OPT_DESTINATION_AWS_REGION, dest_s3.region),
        SF(TRANSFER_OPT_DESTINATION_AWS_ACCESS_KEY_ID, dest_s3.access_key_id),
        SF(TRANSFER_OPT_DESTINATION_AWS_SECRET_ACCESS_KEY, dest_s3.secret_access_key),
        SF(TRANSFER_OPT_DESTINATION_AWS_ENDPOINT, dest_s3.endpoint),
        SF(TRANSFER_OPT_DESTINATION_OCI_URI, dest_oci.uri),
        SF(TRANSFER_OPT_DESTINATION_OCI_REGISTRY, dest_oci.registry),
        SF(TRANSFER_OPT_DESTINATION_OCI_USERNAME, dest_oci.username),
        SF(TRANSFER_OPT_DESTINATION_OCI_PASSWORD, dest_oci.password),
        SF(TRANSFER_OPT_DESTINATION_OCI_BASE_IMAGE, dest_oci.base_image),
        SF(TRANSFER_OPT_MODEL_ID, model_id),
        SF(TRANSFER_OPT_MODEL_VERSION_ID, version_id),
        SF(TRANSFER_OPT_MODEL_ARTIFACT_ID, artifact_id),
        SF(TRANSFER_OPT_STORAGE_PATH, storage_path),
        SF(TRANSFER_OPT_REGISTRY_SERVER_ADDRESS, registry_address),
        SF(TRANSFER_OPT_REGISTRY_AUTHOR, registry_author),
        SF(TRANSFER_OPT_REGISTRY_USER_TOKEN, registry_token),
        SF(TRANSFER_OPT_REGISTRY_USER_TOKEN_ENVVAR, registry_token_envvar),
        SF(TRANSFER_OPT_REGISTRY_CUSTOM_CA, registry_custom_ca),
        SF(TRANSFER_OPT_REGISTRY_CUSTOM_CA_ENVVAR, registry_custom_ca_envvar),
        SF(TRANSFER_OPT_METADATA_CONFIGMAP_PATH, metadata_path),
        SF(TRANSFER_OPT_SOURCE_S3_CREDENTIALS_PATH, credentials[0]),
        SF(TRANSFER_OPT_DESTINATION_S3_CREDENTIALS_PATH, credentials[1]),
        SF(TRANSFER_OPT_SOURCE_OCI_CREDENTIALS_PATH, credentials[2]),
        SF(TRANSFER_OPT_DESTINATION_OCI_CREDENTIALS_PATH, credentials[3]),
        SF(TRANSFER_OPT_SOURCE_URI_CREDENTIALS_PATH, credentials[4]),
};

static int read_choices(const struct transfer_values *v, struct transfer_config *c,
                        struct error_detail *e)
{
        static const char *const sources[] = { "s3", "oci", "uri", NULL };
        static const char *const dests[] = { "s3", "oci", NULL };
        static const char *const intents[] = { "create_model", "create_version", "update_artifact",
                                               NULL };
        int i = 0, r;

        r = read_choice(v, TRANSFER_OPT_SOURCE_TYPE, sources, "'s3', 'oci', 'uri'", &i, e);
        if (r < 0)
                return r;
        c->source_type = (enum transfer_source_type)i;
        r = read_choice(v, TRANSFER_OPT_DESTINATION_TYPE, dests, "'s3', 'oci'", &i, e);
        if (r < 0)
                return r;
        c->dest_type = (enum transfer_dest_type)i;
        r = read_choice(v, TRANSFER_OPT_MODEL_UPLOAD_INTENT, intents,
                        "'create_model', 'create_version', 'update_artifact'", &i, e);
        if (r < 0)
                return r;
        c->intent = (enum transfer_intent)i;
        return 0;
}

static int read_scalars(const struct transfer_values *v, struct transfer_config *c,
                        struct error_detail *e)
{
        bool b;
        int r;

        r = read_bool(v, TRANSFER_OPT_DESTINATION_OCI_ENABLE_TLS_VERIFY, &c->dest_oci.tls_verify,
                      e);
        if (r < 0)
                return r;
        c->source_oci.tls_verify = true;
        r = read_bool(v, TRANSFER_OPT_REGISTRY_IS_SECURE, &c->registry_secure, e);
        if (r < 0)
                return r;
        c->sign = -1;
        if (v->v[TRANSFER_OPT_SIGN]) {
                r = read_bool(v, TRANSFER_OPT_SIGN, &b, e);
                if (r < 0)
                        return r;
                c->sign = b;
        }
        if (!v->v[TRANSFER_OPT_REGISTRY_PORT] ||
            safe_atou16(v->v[TRANSFER_OPT_REGISTRY_PORT], &c->registry_port) < 0 ||
            c->registry_port == 0)
                return opt_error(v, TRANSFER_OPT_REGISTRY_PORT, e, "invalid port",
                                 v->v[TRANSFER_OPT_REGISTRY_PORT] ? v->v[TRANSFER_OPT_REGISTRY_PORT]
                                                                  : "");
        return 0;
}

int transfer_config_read(const struct transfer_values *v, struct transfer_config *c,
                         struct error_detail *e)
{
        int r;

        *c = (struct transfer_config){ 0 };
        r = read_choices(v, c, e);
        if (r >= 0)
                r = read_scalars(v, c, e);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(str_fields); i++)
                r = dup_value(v, str_fields[i].opt, (char **)((char *)c + str_fields[i].offset), e);
        if (r < 0)
                transfer_config_release(c);
        return r;
}

/* A file's value: trailing whitespace (a newline an editor left) dropped. */
static int set_from_file(char **field, const char *value)
{
        size_t n;
        char *s;

        if (!value)
                return 0;
        n = strlen(value);
        while (n > 0 && (value[n - 1] == '\n' || value[n - 1] == '\r' || value[n - 1] == ' ' ||
                         value[n - 1] == '\t'))
                n--;
        s = strndup(value, n);
        if (!s)
                return -ENOMEM;
        free(*field);
        *field = s;
        return 0;
}

int transfer_s3_apply_files(struct transfer_s3 *s, const char *const files[TRANSFER_S3_FILE__MAX])
{
        const char *region = files[TRANSFER_S3_FILE_REGION]
                                     ? files[TRANSFER_S3_FILE_REGION]
                                     : files[TRANSFER_S3_FILE_REGION_FALLBACK];
        const char *endpoint = files[TRANSFER_S3_FILE_ENDPOINT]
                                       ? files[TRANSFER_S3_FILE_ENDPOINT]
                                       : files[TRANSFER_S3_FILE_ENDPOINT_FALLBACK];
        const char *bucket = files[TRANSFER_S3_FILE_BUCKET]
                                     ? files[TRANSFER_S3_FILE_BUCKET]
                                     : files[TRANSFER_S3_FILE_BUCKET_FALLBACK];

        if (set_from_file(&s->access_key_id, files[TRANSFER_S3_FILE_ACCESS_KEY_ID]) < 0 ||
            set_from_file(&s->secret_access_key, files[TRANSFER_S3_FILE_SECRET_ACCESS_KEY]) < 0 ||
            set_from_file(&s->region, region) < 0 || set_from_file(&s->endpoint, endpoint) < 0 ||
            set_from_file(&s->bucket, bucket) < 0)
                return -ENOMEM;
        return 0;
}

static bool empty(const char *s)
{
        return !s || !*s;
}

static int missing(const struct transfer_values *v, enum transfer_opt o, struct error_detail *e,
                   const char *what)
{
        char name[128];

        transfer_values_name(v, o, name, sizeof(name));
        return error_detail_set_field(e, ERROR_INVALID, -EINVAL, name, "%s is required: %s", name,
                                      what);
}

static int validate_s3(const struct transfer_s3 *s, const struct transfer_values *v,
                       enum transfer_opt first, struct error_detail *e)
{
        /* first is the side's _AWS_BUCKET; the enum keeps bucket, key, region, access key id,
         * secret access key in that order for both sides */
        const char *what = "S3 credentials (access_key_id, secret_access_key), bucket, and key "
                           "must be set (directly or in the credentials folder)";

        if (empty(s->bucket))
                return missing(v, first, e, what);
        if (empty(s->key))
                return missing(v, first + 1, e, what);
        if (empty(s->access_key_id))
                return missing(v, first + 3, e, what);
        if (empty(s->secret_access_key))
                return missing(v, first + 4, e, what);
        return 0;
}

static int validate_dest(const struct transfer_config *c, const struct transfer_values *v,
                         struct error_detail *e)
{
        if (c->dest_type == TRANSFER_DEST_S3)
                return validate_s3(&c->dest_s3, v, TRANSFER_OPT_DESTINATION_AWS_BUCKET, e);
        if (empty(c->dest_oci.uri))
                return missing(v, TRANSFER_OPT_DESTINATION_OCI_URI, e,
                               "OCI registry and URI must be set");
        if (empty(c->dest_oci.registry))
                return missing(v, TRANSFER_OPT_DESTINATION_OCI_REGISTRY, e,
                               "OCI registry and URI must be set");
        if (!c->dest_oci.username != !c->dest_oci.password)
                return missing(v,
                               c->dest_oci.username ? TRANSFER_OPT_DESTINATION_OCI_PASSWORD
                                                    : TRANSFER_OPT_DESTINATION_OCI_USERNAME,
                               e, "Both OCI username and password must be set together");
        return 0;
}

static int validate_source(const struct transfer_config *c, const struct transfer_values *v,
                           struct error_detail *e)
{
        switch (c->source_type) {
        case TRANSFER_SOURCE_S3:
                return validate_s3(&c->source_s3, v, TRANSFER_OPT_SOURCE_AWS_BUCKET, e);
        case TRANSFER_SOURCE_URI:
                if (empty(c->source_uri))
                        return missing(v, TRANSFER_OPT_SOURCE_URI, e,
                                       "URI must be set for URI type sources");
                return 0;
        case TRANSFER_SOURCE_OCI:
                if (empty(c->source_oci.uri))
                        return missing(v, TRANSFER_OPT_SOURCE_OCI_URI, e,
                                       "OCI registry and URI must be set");
                if (empty(c->source_oci.registry))
                        return missing(v, TRANSFER_OPT_SOURCE_OCI_REGISTRY, e,
                                       "OCI registry and URI must be set");
                return 0;
        }
        return 0;
}

int transfer_config_validate(const struct transfer_config *c, const struct transfer_values *v,
                             struct error_detail *e)
{
        int r;

        r = validate_source(c, v, e);
        if (r < 0)
                return r;
        r = validate_dest(c, v, e);
        if (r < 0)
                return r;
        if (empty(c->registry_address))
                return missing(v, TRANSFER_OPT_REGISTRY_SERVER_ADDRESS, e,
                               "the Model Registry's address");
        if (c->intent == TRANSFER_INTENT_CREATE_VERSION && empty(c->model_id))
                return missing(v, TRANSFER_OPT_MODEL_ID, e,
                               "the create_version intent names the RegisteredModel");
        if (c->intent == TRANSFER_INTENT_UPDATE_ARTIFACT && empty(c->artifact_id))
                return missing(v, TRANSFER_OPT_MODEL_ARTIFACT_ID, e,
                               "the update_artifact intent names the ModelArtifact");
        if (empty(c->storage_path))
                return missing(v, TRANSFER_OPT_STORAGE_PATH, e, "a download directory");
        return 0;
}

void transfer_docker_auth_release(struct transfer_docker_auth *a)
{
        free(a->username);
        if (a->password)
                explicit_bzero(a->password, strlen(a->password));
        free(a->password);
        free(a->email);
        *a = (struct transfer_docker_auth){ 0 };
}

/* "user:password" split at the first colon; -EINVAL without one. */
static int split_user_pass(const char *s, size_t len, struct transfer_docker_auth *ret)
{
        const char *colon = memchr(s, ':', len);

        if (!colon || memchr(s, '\0', len))
                return -EINVAL;
        ret->username = strndup(s, (size_t)(colon - s));
        ret->password = strndup(colon + 1, len - (size_t)(colon - s) - 1);
        if (!ret->username || !ret->password)
                return -ENOMEM;
        return 0;
}

int transfer_dockerconfig_parse(const char *data, size_t len, const char *registry,
                                struct transfer_docker_auth *ret, bool *ret_plain,
                                struct error_detail *e)
{
        json_auto_t *doc = NULL;
        const char *auth, *email;
        json_t *entry;
        char *decoded = NULL;
        size_t dlen = 0;
        int r;

        *ret = (struct transfer_docker_auth){ 0 };
        *ret_plain = false;
        if (len > TRANSFER_DOCKERCONFIG_MAX)
                return error_detail_set(e, ERROR_INVALID, -EINVAL,
                                        "the docker config file is larger than 1 MiB");
        r = json_parse_bounded(data, len, &doc, e);
        if (r < 0)
                return r;
        if (!json_is_object(json_object_get(doc, "auths")))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL, "auths",
                                              "Invalid docker config file: no \"auths\" object");
        entry = registry ? json_object_get(json_object_get(doc, "auths"), registry) : NULL;
        if (!json_is_object(entry))
                return error_detail_set_field(e, ERROR_INVALID, -ENOENT, "auths",
                                              "no credentials for registry '%s' in the docker "
                                              "config file",
                                              registry ? registry : "");
        if (!json_is_string(json_object_get(entry, "auth")) ||
            json_string_has_nul(json_object_get(entry, "auth")))
                return error_detail_set_field(e, ERROR_INVALID, -ENOENT, "auth",
                                              "the docker config file's entry for '%s' has no "
                                              "\"auth\" string",
                                              registry);
        auth = json_string_value(json_object_get(entry, "auth"));
        email = json_get_string_path(entry, "email", NULL);
        if (email) {
                ret->email = strdup(email);
                if (!ret->email)
                        return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        if (!*auth)
                return 0;
        r = base64_decode(auth, &decoded, &dlen);
        if (r == -ENOMEM)
                return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        if (r >= 0)
                r = split_user_pass(decoded, dlen, ret);
        if (decoded)
                explicit_bzero(decoded, dlen);
        free(decoded);
        if (r == -EINVAL) {
                /* upstream's deprecated fallback: the auth in plain text */
                r = split_user_pass(auth, strlen(auth), ret);
                if (r >= 0)
                        *ret_plain = true;
                else if (r == -EINVAL)
                        r = 0; /* neither: no credentials, as upstream */
        }
        if (r < 0) {
                transfer_docker_auth_release(ret);
                return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        }
        return 0;
}

/* The port of "scheme://host[:port]" or "host[:port]" ([v6] too): true when one is given. */
static bool address_has_port(const char *hostpart)
{
        const char *close = hostpart[0] == '[' ? strchr(hostpart, ']') : NULL;
        const char *colon = strrchr(close ? close : hostpart, ':');

        return colon && colon[1];
}

int transfer_registry_url(const struct transfer_config *c, char **ret, struct error_detail *e)
{
        const char *a = c->registry_address, *scheme = c->registry_secure ? "https" : "http";
        const char *host = a, *sep;
        size_t hostlen;
        char *url = NULL;
        int n;

        if (empty(a))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                              "MODEL_SYNC_REGISTRY_SERVER_ADDRESS",
                                              "the registry server address is empty");
        sep = strstr(a, "://");
        if (sep) {
                scheme = NULL;
                host = sep + 3;
        }
        hostlen = strcspn(host, "/?#");
        if (hostlen == 0 || (host[hostlen] && !(host[hostlen] == '/' && !host[hostlen + 1])))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                              "MODEL_SYNC_REGISTRY_SERVER_ADDRESS",
                                              "'%s' is not a server address (scheme://host[:port])",
                                              a);
        if (sep && !strneq(a, "http://", 7) && !strneq(a, "https://", 8))
                return error_detail_set_field(e, ERROR_INVALID, -EINVAL,
                                              "MODEL_SYNC_REGISTRY_SERVER_ADDRESS",
                                              "'%s': the scheme is neither http nor https", a);
        char hostonly[TRANSFER_VALUE_MAX + 1];
        int upto = (int)((size_t)(host - a) + hostlen); /* a up to the end of its host[:port] */

        (void)snprintf(hostonly, sizeof(hostonly), "%.*s", (int)hostlen, host);
        if (address_has_port(hostonly))
                n = asprintf(&url, "%s%s%.*s", scheme ? scheme : "", scheme ? "://" : "", upto, a);
        else
                n = asprintf(&url, "%s%s%.*s:%u", scheme ? scheme : "", scheme ? "://" : "", upto,
                             a, (unsigned)c->registry_port);
        if (n < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        *ret = url;
        return 0;
}
