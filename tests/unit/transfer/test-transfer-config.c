/* SPDX-License-Identifier: Apache-2.0 */
/* transfer/config.h and transfer/metadata.h: `modelplane async-upload`'s configuration as
 * upstream's transfer job reads it (precedence, choices, booleans, required options per type
 * and intent, the credential files, the dockerconfigjson) and the metadata ConfigMap. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transfer/config.h"
#include "transfer/metadata.h"

/* An environment as NAME=VALUE pairs, NULL-terminated. */
static const char *fake_getenv(void *userdata, const char *name)
{
        const char *const *env = userdata;

        for (; env && *env; env++) {
                size_t n = strlen(name);

                if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
                        return *env + n + 1;
        }
        return NULL;
}

static const char *const good_env[] = {
        "MODEL_SYNC_SOURCE_TYPE=uri",
        "MODEL_SYNC_SOURCE_URI=https://example.com/m.tar.gz",
        "MODEL_SYNC_DESTINATION_OCI_URI=quay.io/org/m:v1",
        "MODEL_SYNC_DESTINATION_OCI_REGISTRY=quay.io",
        "MODEL_SYNC_REGISTRY_SERVER_ADDRESS=https://mr.example",
        "MODEL_SYNC_MODEL_ARTIFACT_ID=7",
        NULL,
};

/* Reads @env (+ @args) and validates; the error in *e. */
static int read_env(const char *const *env, const char *const *args, struct transfer_config *c,
                    struct transfer_values *v, struct error_detail *e)
{
        int r;

        transfer_values_resolve(v, args, fake_getenv, (void *)env);
        r = transfer_config_read(v, c, e);
        if (r < 0)
                return r;
        r = transfer_config_validate(c, v, e);
        if (r < 0)
                transfer_config_release(c);
        return r;
}

Test(config, upstream_defaults)
{
        struct transfer_values v;
        struct transfer_config c;
        struct error_detail e = { 0 };

        cr_assert_eq(read_env(good_env, NULL, &c, &v, &e), 0, "%s", e.message);
        cr_assert_eq(c.source_type, TRANSFER_SOURCE_URI);
        cr_assert_eq(c.dest_type, TRANSFER_DEST_OCI);
        cr_assert_eq(c.intent, TRANSFER_INTENT_UPDATE_ARTIFACT);
        cr_assert_str_eq(c.storage_path, "/tmp/model-sync");
        cr_assert_str_eq(c.dest_oci.base_image, "public.ecr.aws/docker/library/busybox:latest");
        cr_assert(c.dest_oci.tls_verify);
        cr_assert(c.registry_secure);
        cr_assert_eq(c.registry_port, 443);
        cr_assert_eq(c.sign, -1);
        cr_assert_null(c.metadata_path);
        transfer_config_release(&c);
}

Test(config, flags_win_over_the_environment)
{
        const char *args[TRANSFER_OPT__MAX] = { 0 };
        struct transfer_values v;
        struct transfer_config c;
        struct error_detail e = { 0 };
        char name[64];

        args[TRANSFER_OPT_DESTINATION_OCI_URI] = "reg.local:5000/a/b:c";
        args[TRANSFER_OPT_REGISTRY_IS_SECURE] = "f";
        cr_assert_eq(read_env(good_env, args, &c, &v, &e), 0, "%s", e.message);
        cr_assert_str_eq(c.dest_oci.uri, "reg.local:5000/a/b:c");
        cr_assert_not(c.registry_secure);
        cr_assert_str_eq(transfer_values_name(&v, TRANSFER_OPT_DESTINATION_OCI_URI, name,
                                              sizeof(name)),
                         "--destination-oci-uri");
        cr_assert_str_eq(transfer_values_name(&v, TRANSFER_OPT_SOURCE_URI, name, sizeof(name)),
                         "MODEL_SYNC_SOURCE_URI");
        transfer_config_release(&c);
}

static void refused(const char *const *extra, const char *const *args, int want, const char *field,
                    const char *words)
{
        const char *env[32];
        struct transfer_values v;
        struct transfer_config c;
        struct error_detail e = { 0 };
        size_t n = 0;

        for (const char *const *p = extra; p && *p; p++)
                env[n++] = *p;
        for (const char *const *p = good_env; *p; p++)
                env[n++] = *p;
        env[n] = NULL;
        cr_assert_eq(read_env(env, args, &c, &v, &e), want, "%s", e.message);
        cr_assert_str_eq(e.field, field, "%s", e.message);
        cr_assert(strstr(e.message, words), "%s", e.message);
}

Test(config, refusals_name_the_option)
{
        const char *args[TRANSFER_OPT__MAX] = { 0 };

        refused((const char *const[]){ "MODEL_SYNC_SOURCE_TYPE=ftp", NULL }, NULL, -EINVAL,
                "MODEL_SYNC_SOURCE_TYPE", "invalid choice 'ftp' (choose from 's3', 'oci', 'uri')");
        refused((const char *const[]){ "MODEL_SYNC_MODEL_UPLOAD_INTENT=delete", NULL }, NULL,
                -EINVAL, "MODEL_SYNC_MODEL_UPLOAD_INTENT", "invalid choice 'delete'");
        refused((const char *const[]){ "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY=maybe", NULL },
                NULL, -EINVAL, "MODEL_SYNC_DESTINATION_OCI_ENABLE_TLS_VERIFY",
                "invalid boolean value 'maybe'");
        refused((const char *const[]){ "MODEL_SYNC_REGISTRY_PORT=70000", NULL }, NULL, -EINVAL,
                "MODEL_SYNC_REGISTRY_PORT", "invalid port '70000'");
        refused((const char *const[]){ "MODEL_SYNC_SOURCE_URI=", NULL }, NULL, -EINVAL,
                "MODEL_SYNC_SOURCE_URI", "URI must be set");
        refused((const char *const[]){ "MODEL_SYNC_MODEL_ARTIFACT_ID=", NULL }, NULL, -EINVAL,
                "MODEL_SYNC_MODEL_ARTIFACT_ID", "update_artifact intent");
        refused((const char *const[]){ "MODEL_SYNC_MODEL_UPLOAD_INTENT=create_version", NULL },
                NULL, -EINVAL, "MODEL_SYNC_MODEL_ID", "create_version intent");
        refused((const char *const[]){ "MODEL_SYNC_DESTINATION_OCI_USERNAME=u", NULL }, NULL,
                -EINVAL, "MODEL_SYNC_DESTINATION_OCI_PASSWORD", "set together");
        refused((const char *const[]){ "MODEL_SYNC_SOURCE_TYPE=s3", "MODEL_SYNC_SOURCE_AWS_KEY=k",
                                       "MODEL_SYNC_SOURCE_AWS_ACCESS_KEY_ID=a",
                                       "MODEL_SYNC_SOURCE_AWS_SECRET_ACCESS_KEY=s", NULL },
                NULL, -EINVAL, "MODEL_SYNC_SOURCE_AWS_BUCKET", "bucket, and key must be set");
        args[TRANSFER_OPT_SOURCE_TYPE] = "oci2";
        refused(NULL, args, -EINVAL, "--source-type", "--source-type: invalid choice 'oci2'");
}

Test(config, s3_credential_files_replace_the_options)
{
        const char *files[TRANSFER_S3_FILE__MAX] = { 0 };
        struct transfer_s3 s = { 0 };

        s.bucket = strdup("from-env");
        s.key = strdup("prefix");
        files[TRANSFER_S3_FILE_ACCESS_KEY_ID] = "AKID\n";
        files[TRANSFER_S3_FILE_SECRET_ACCESS_KEY] = "secret";
        files[TRANSFER_S3_FILE_REGION_FALLBACK] = "eu-west-1";
        files[TRANSFER_S3_FILE_ENDPOINT_FALLBACK] = "http://minio:9000";
        files[TRANSFER_S3_FILE_BUCKET] = "b1";
        files[TRANSFER_S3_FILE_BUCKET_FALLBACK] = "b2";
        cr_assert_eq(transfer_s3_apply_files(&s, files), 0);
        cr_assert_str_eq(s.access_key_id, "AKID");
        cr_assert_str_eq(s.region, "eu-west-1");
        cr_assert_str_eq(s.endpoint, "http://minio:9000");
        cr_assert_str_eq(s.bucket, "b1"); /* AWS_BUCKET before AWS_S3_BUCKET, over the option */
        cr_assert_str_eq(s.key, "prefix");
        free(s.bucket);
        free(s.key);
        free(s.region);
        free(s.access_key_id);
        free(s.secret_access_key);
        free(s.endpoint);
}

Test(config, registry_url)
{
        char addr0[] = "https://mr.example", addr1[] = "http://10.0.0.1:8080/",
             addr2[] = "mr.ns.svc", addr3[] = "https://mr.example/api",
             addr4[] = "ftp://mr.example";
        struct transfer_config c = { .registry_port = 443, .registry_secure = true };
        struct error_detail e = { 0 };
        char *url = NULL;

        c.registry_address = addr0;
        cr_assert_eq(transfer_registry_url(&c, &url, &e), 0);
        cr_assert_str_eq(url, "https://mr.example:443");
        free(url);
        c.registry_address = addr1;
        cr_assert_eq(transfer_registry_url(&c, &url, &e), 0);
        cr_assert_str_eq(url, "http://10.0.0.1:8080");
        free(url);
        c.registry_address = addr2;
        c.registry_secure = false;
        c.registry_port = 8080;
        cr_assert_eq(transfer_registry_url(&c, &url, &e), 0);
        cr_assert_str_eq(url, "http://mr.ns.svc:8080");
        free(url);
        c.registry_address = addr3;
        cr_assert_eq(transfer_registry_url(&c, &url, &e), -EINVAL);
        c.registry_address = addr4;
        cr_assert_eq(transfer_registry_url(&c, &url, &e), -EINVAL);
        cr_assert_str_eq(e.field, "MODEL_SYNC_REGISTRY_SERVER_ADDRESS");
}

static const char *b64_robot = "cm9ib3Q6czNjcjp0"; /* robot:s3cr:t */

Test(dockerconfig, auth_base64_plain_and_missing)
{
        struct transfer_docker_auth a;
        struct error_detail e = { 0 };
        char doc[512];
        bool plain;

        (void)snprintf(doc, sizeof(doc),
                       "{\"auths\":{\"quay.io\":{\"auth\":\"%s\",\"email\":\"r@x\"},"
                       "\"plain.io\":{\"auth\":\"u:p:q\"},\"odd.io\":{\"auth\":\"nocolon\"},"
                       "\"none.io\":{}}}",
                       b64_robot);
        cr_assert_eq(transfer_dockerconfig_parse(doc, strlen(doc), "quay.io", &a, &plain, &e), 0);
        cr_assert_str_eq(a.username, "robot");
        cr_assert_str_eq(a.password, "s3cr:t");
        cr_assert_str_eq(a.email, "r@x");
        cr_assert_not(plain);
        transfer_docker_auth_release(&a);
        cr_assert_eq(transfer_dockerconfig_parse(doc, strlen(doc), "plain.io", &a, &plain, &e), 0);
        cr_assert_str_eq(a.username, "u");
        cr_assert_str_eq(a.password, "p:q");
        cr_assert(plain);
        transfer_docker_auth_release(&a);
        cr_assert_eq(transfer_dockerconfig_parse(doc, strlen(doc), "odd.io", &a, &plain, &e), 0);
        cr_assert_null(a.username);
        transfer_docker_auth_release(&a);
        cr_assert_eq(transfer_dockerconfig_parse(doc, strlen(doc), "gone.io", &a, &plain, &e),
                     -ENOENT);
        cr_assert(strstr(e.message, "no credentials for registry 'gone.io'"), "%s", e.message);
        cr_assert_eq(transfer_dockerconfig_parse(doc, strlen(doc), "none.io", &a, &plain, &e),
                     -ENOENT);
        cr_assert_eq(transfer_dockerconfig_parse("{\"x\":1}", 7, "quay.io", &a, &plain, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "Invalid docker config file"), "%s", e.message);
        cr_assert_eq(transfer_dockerconfig_parse("{", 1, "quay.io", &a, &plain, &e), -EINVAL);
}

Test(metadata, keys_and_validation)
{
        struct transfer_metadata m = { 0 };
        struct error_detail e = { 0 };
        bool skipped;
        json_t *cp;

        cr_assert_eq(transfer_metadata_add(&m, "RegisteredModel.name", "  bert\n", &skipped, &e),
                     0);
        cr_assert_str_eq(m.model_name, "bert");
        cr_assert_eq(transfer_metadata_validate(&m, true, TRANSFER_INTENT_CREATE_MODEL, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "requires RegisteredModel, ModelVersion, and ModelArtifact"));
        cr_assert_eq(transfer_metadata_add(&m, "ModelVersion.custom_properties",
                                           "{\"a\": 1, \"b\": 0.5, \"c\": \"x\", \"d\": false}",
                                           &skipped, &e),
                     0);
        cr_assert_eq(transfer_metadata_add(&m, "ModelArtifact.model_format_name", "onnx", &skipped,
                                           &e),
                     0);
        cr_assert_eq(transfer_metadata_validate(&m, true, TRANSFER_INTENT_CREATE_MODEL, &e), 0);
        /* create_version needs a version name */
        cr_assert_eq(transfer_metadata_validate(&m, true, TRANSFER_INTENT_CREATE_VERSION, &e),
                     -EINVAL);
        cr_assert_str_eq(e.field, "ModelVersion.name");
        cr_assert_eq(transfer_metadata_validate(&m, false, TRANSFER_INTENT_CREATE_VERSION, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "requires ConfigMap metadata but none provided"));
        cp = transfer_custom_properties(m.version_props, NULL);
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cp, "a"), "int_value")),
                         "1");
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(cp, "a"), "metadataType")),
                         "MetadataIntValue");
        cr_assert(json_real_value(json_object_get(json_object_get(cp, "b"), "double_value")) ==
                  0.5);
        cr_assert(json_is_false(json_object_get(json_object_get(cp, "d"), "bool_value")));
        json_decref(cp);
        /* unknown fields and unparseable JSON are skipped, as upstream; nesting is refused */
        cr_assert_eq(transfer_metadata_add(&m, "ModelVersion.colour", "red", &skipped, &e), 0);
        cr_assert(skipped);
        cr_assert_eq(transfer_metadata_add(&m, "ModelArtifact.custom_properties", "{oops", &skipped,
                                           &e),
                     0);
        cr_assert(skipped);
        cr_assert_eq(transfer_metadata_add(&m, "ModelArtifact.custom_properties", "{\"x\":{}}",
                                           &skipped, &e),
                     -EINVAL);
        cr_assert_str_eq(e.field, "ModelArtifact.custom_properties");
        cr_assert(strstr(e.message, "the property \"x\" is not a string, number or boolean"), "%s",
                  e.message);
        cr_assert_eq(transfer_metadata_add(&m, "RegisteredModel.id", "3", &skipped, &e), 0);
        cr_assert_eq(transfer_metadata_validate(&m, true, TRANSFER_INTENT_CREATE_MODEL, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "Cannot provide both name and id"));
        /* the console's key (upstream's job ignores it): MetadataValues, plain values mapped,
         * the snake_case properties over them */
        cr_assert_eq(
                transfer_metadata_add(&m, "ModelVersion.customProperties",
                                      "{\"src\": {\"metadataType\": \"MetadataStringValue\", "
                                      "\"string_value\": \"console\"}, \"n\": 2, \"a\": \"x\"}",
                                      &skipped, &e),
                0, "%s", e.message);
        cp = transfer_custom_properties(m.version_props, m.version_api_props);
        cr_assert_str_eq(json_string_value(
                                 json_object_get(json_object_get(cp, "src"), "string_value")),
                         "console");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cp, "n"), "int_value")),
                         "2");
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cp, "a"), "int_value")),
                         "1"); /* custom_properties' a wins */
        json_decref(cp);
        cr_assert_eq(transfer_metadata_add(&m, "ModelVersion.customProperties", "{\"x\": [1]}",
                                           &skipped, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "neither a MetadataValue"), "%s", e.message);
        cr_assert_eq(transfer_metadata_add(&m, "Unrelated.key", "x", &skipped, &e), 0);
        cr_assert_not(skipped);
        transfer_metadata_release(&m);
}
