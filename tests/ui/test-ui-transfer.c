/* SPDX-License-Identifier: Apache-2.0 */
/* Model transfer jobs (ui/transfer.h): the request and its checks, the objects as upstream's BFF
 * writes them, the Job as a ModelTransferJob and its status, events, a retry. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "json/json-util.h"
#include "ui/transfer.h"

static json_t *parse(const char *text)
{
        json_error_t e;
        json_t *v = json_loads(text, 0, &e);

        cr_assert(v, "%s: %s", e.text, text);
        return v;
}

#define S3_REQ                                                                         \
        "{\"name\":\"job-1\",\"jobDisplayName\":\"Job one\",\"namespace\":\"team-a\"," \
        "\"description\":\"d\",\"author\":\"alice\","                                  \
        "\"source\":{\"type\":\"s3\",\"bucket\":\" models \",\"key\":\"iris/\","       \
        "\"region\":\"eu-1\",\"endpoint\":\"http://minio:9000\","                      \
        "\"awsAccessKeyId\":\"AKID\",\"awsSecretAccessKey\":\"SECRET\"},"              \
        "\"destination\":{\"type\":\"oci\",\"uri\":\"quay.io/org/iris:v1\","           \
        "\"username\":\"robot\",\"password\":\"pw\"},"                                 \
        "\"uploadIntent\":\"create_model\",\"registeredModelName\":\"iris\","          \
        "\"modelVersionName\":\"v1\",\"versionDescription\":\"first\","                \
        "\"sourceModelFormat\":\"onnx\",\"sourceModelFormatVersion\":\"1\","           \
        "\"modelCustomProperties\":{\"team\":{\"string_value\":\"a\"}},"               \
        "\"status\":\"COMPLETED\",\"id\":\"ignored\"}"

static void read_req(const char *text, struct ui_transfer_req *q)
{
        json_t *v = parse(text);
        struct error_detail err = { 0 };

        cr_assert_eq(ui_transfer_req_read(v, q, &err), 0, "%s", err.message);
        json_decref(v);
}

static void read_valid(const char *text, struct ui_transfer_req *q)
{
        struct error_detail err = { 0 };

        read_req(text, q);
        cr_assert_eq(ui_transfer_validate(q, false, &err), 0, "%s", err.message);
}

Test(transfer, read_trims_and_fills_the_registry)
{
        struct ui_transfer_req q = { 0 };

        read_valid(S3_REQ, &q);
        cr_assert_str_eq(q.bucket, "models");
        cr_assert_str_eq(q.dest_registry, "quay.io", "the registry is the URI's first segment");
        cr_assert_str_eq(q.aws_secret, "SECRET");
        cr_assert_null(q.rm_id);
        ui_transfer_req_done(&q);
}

static void expect_refused(const char *text, bool reuse, const char *field, const char *words)
{
        json_t *v = parse(text);
        struct ui_transfer_req q = { 0 };
        struct error_detail err = { 0 };
        int r = ui_transfer_req_read(v, &q, &err);

        if (r >= 0)
                r = ui_transfer_validate(&q, reuse, &err);
        cr_assert_eq(r, -EINVAL, "%s: accepted", text);
        cr_assert_str_eq(err.field, field, "%s: field %s, expected %s", text, err.field, field);
        cr_assert(strstr(err.message, words), "%s: \"%s\" lacks \"%s\"", text, err.message, words);
        ui_transfer_req_done(&q);
        json_decref(v);
}

#define BASE                                                                         \
        "\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","              \
        "\"uploadIntent\":\"update_artifact\",\"modelArtifactId\":\"7\","            \
        "\"destination\":{\"type\":\"oci\",\"uri\":\"r.io/a/b\",\"username\":\"u\"," \
        "\"password\":\"p\"}"

Test(transfer, each_refusal_names_its_field)
{
        expect_refused("{}", false, "name", "required");
        expect_refused("{\"name\":\"j\"}", false, "jobDisplayName", "required");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\"}", false, "namespace", "required");
        expect_refused("{\"name\":\"J_1\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\"}", false,
                       "name", "RFC 1123");
        expect_refused("{\"name\":\"a-very-long-name-that-is-longer-than-sixty-three-characters-"
                       "in-all\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\"}",
                       false, "name", "63");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"Team A\"}", false,
                       "namespace", "namespace name");
        expect_refused("{" BASE "}", false, "source.type", "required");
        expect_refused("{" BASE ",\"source\":{\"type\":\"gcs\"}}", false, "source.type", "\"gcs\"");
        expect_refused("{" BASE ",\"source\":{\"type\":\"s3\",\"key\":\"k\"}}", false,
                       "source.bucket", "bucket");
        expect_refused("{" BASE ",\"source\":{\"type\":\"s3\",\"bucket\":\"b\",\"key\":\"k\","
                       "\"awsAccessKeyId\":\"a\"}}",
                       false, "source.awsSecretAccessKey", "secret access key");
        expect_refused("{" BASE ",\"source\":{\"type\":\"uri\",\"uri\":\"  \"}}", false,
                       "source.uri", "URI");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","
                       "\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"destination\":{\"type\":\"s3\"}}",
                       false, "destination.type", "\"s3\"");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","
                       "\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"destination\":{\"type\":\"oci\",\"uri\":\"/a/b\"}}",
                       false, "destination.uri", "registry");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","
                       "\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"destination\":{\"type\":\"oci\",\"uri\":\"r.io/a\"}}",
                       false, "destination.username", "username");
        expect_refused("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","
                       "\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"destination\":{\"type\":\"oci\",\"uri\":\"r.io/a\"}}",
                       true, "uploadIntent", "required");
        expect_refused("{" BASE ",\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"uploadIntent\":\"delete\"}",
                       false, "uploadIntent", "\"delete\"");
        expect_refused("{" BASE ",\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"uploadIntent\":\"create_model\",\"modelVersionName\":\"v\"}",
                       false, "registeredModelName", "create_model");
        expect_refused("{" BASE ",\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"uploadIntent\":\"create_version\",\"modelVersionName\":\"v\"}",
                       false, "registeredModelId", "create_version");
        expect_refused("{" BASE ",\"source\":{\"type\":\"uri\",\"uri\":\"hf://x\"},"
                       "\"modelArtifactId\":null}",
                       false, "modelArtifactId", "update_artifact");
        /* types and sizes */
        expect_refused("{" BASE ",\"source\":{\"type\":\"s3\",\"bucket\":7}}", false,
                       "source.bucket", "bucket");
        expect_refused("{" BASE ",\"source\":\"s3\"}", false, "source", "object");
        expect_refused("{\"name\":\"j\",\"modelCustomProperties\":[1]}", false,
                       "modelCustomProperties", "modelCustomProperties");
}

Test(transfer, a_field_longer_than_its_limit_is_refused)
{
        size_t n = UI_TRANSFER_FIELD_MAX + 1;
        char *big = malloc(n + 1);
        json_t *v;
        struct ui_transfer_req q = { 0 };
        struct error_detail err = { 0 };

        cr_assert(big);
        memset(big, 'a', n);
        big[n] = '\0';
        v = json_pack("{s:{s:s}}", "destination", "uri", big);
        cr_assert_eq(ui_transfer_req_read(v, &q, &err), -EINVAL);
        cr_assert_str_eq(err.field, "destination.uri");
        cr_assert(strstr(err.message, "longer than 4096"), "%s", err.message);
        ui_transfer_req_done(&q);
        json_decref(v);
        free(big);
}

static const char *data_of(const json_t *obj, const char *key)
{
        return json_string_value(json_object_get(json_object_get(obj, "data"), key));
}

Test(transfer, configmap_as_upstream_writes_it)
{
        struct ui_transfer_req q = { 0 };
        json_t *cm;

        read_valid(S3_REQ, &q);
        cm = ui_transfer_configmap(&q, "id-1");
        cr_assert(cm);
        cr_assert_str_eq(json_get_string_path(cm, "metadata", "generateName", NULL),
                         "job-1-metadata-configmap-");
        cr_assert_str_eq(json_get_string_path(cm, "metadata", "namespace", NULL), "team-a");
        cr_assert_str_eq(json_get_string_path(cm, "metadata", "labels", UI_TRANSFER_LABEL_ID, NULL),
                         "id-1");
        cr_assert_str_eq(data_of(cm, "ModelVersion.name"), "v1");
        cr_assert_str_eq(data_of(cm, "ModelArtifact.name"), "v1");
        cr_assert_str_eq(data_of(cm, "ModelVersion.author"), "alice");
        cr_assert_str_eq(data_of(cm, "ModelVersion.description"), "first");
        cr_assert_str_eq(data_of(cm, "ModelArtifact.model_format_name"), "onnx");
        cr_assert_str_eq(data_of(cm, "RegisteredModel.name"), "iris");
        cr_assert_str_eq(data_of(cm, "RegisteredModel.owner"), "alice");
        cr_assert_str_eq(data_of(cm, "RegisteredModel.customProperties"),
                         "{\"team\":{\"string_value\":\"a\"}}");
        cr_assert_null(data_of(cm, "ModelVersion.customProperties"));
        cr_assert_str_eq(data_of(cm, "ModelArtifact.model_source_kind"), "transfer_job");
        cr_assert_str_eq(data_of(cm, "ModelArtifact.model_source_group"), "team-a");
        cr_assert_str_eq(data_of(cm, "ModelArtifact.model_source_name"), "job-1");
        cr_assert_null(strstr(json_dumps_compact(cm), "SECRET"), "no credential in it");
        json_decref(cm);
        ui_transfer_req_done(&q);
}

Test(transfer, secrets_as_upstream_writes_them)
{
        struct ui_transfer_req q = { 0 };
        json_t *src, *dst;

        read_valid(S3_REQ, &q);
        src = ui_transfer_source_secret(&q, "id-1");
        cr_assert_str_eq(json_get_string_path(src, "type", NULL), "Opaque");
        cr_assert_str_eq(json_get_string_path(src, "metadata", "generateName", NULL),
                         "job-1-source-creds-");
        cr_assert_str_eq(json_get_string_path(src, "stringData", "AWS_ACCESS_KEY_ID", NULL),
                         "AKID");
        cr_assert_str_eq(json_get_string_path(src, "stringData", "AWS_SECRET_ACCESS_KEY", NULL),
                         "SECRET");
        cr_assert_str_eq(json_get_string_path(src, "stringData", "AWS_S3_ENDPOINT", NULL),
                         "http://minio:9000");
        cr_assert_str_eq(json_get_string_path(src, "stringData", "AWS_S3_BUCKET", NULL), "models");
        cr_assert_str_eq(json_get_string_path(src, "stringData", "AWS_DEFAULT_REGION", NULL),
                         "eu-1");
        dst = ui_transfer_dest_secret(&q, "id-1");
        cr_assert_str_eq(json_get_string_path(dst, "type", NULL), "kubernetes.io/dockerconfigjson");
        cr_assert_str_eq(json_get_string_path(dst, "metadata", "generateName", NULL),
                         "job-1-dest-creds-");
        /* base64("robot:pw") */
        cr_assert_str_eq(json_get_string_path(dst, "stringData", ".dockerconfigjson", NULL),
                         "{\"auths\":{\"quay.io\":{\"auth\":\"cm9ib3Q6cHc=\"}}}");
        json_decref(src);
        json_decref(dst);
        ui_transfer_req_done(&q);
}

static const struct ui_transfer_target TARGET = { .registry_name = "modelplane",
                                                  .registry_url = "http://10.0.0.7:8080",
                                                  .image = "modelplane:latest" };
static const struct ui_transfer_names NAMES = { .configmap = "job-1-metadata-configmap-abc",
                                                .source_secret = "job-1-source-creds-abc",
                                                .dest_secret = "job-1-dest-creds-abc" };

static json_t *job_of(const char *req, const struct ui_transfer_target *t)
{
        struct ui_transfer_req q = { 0 };
        struct error_detail err = { 0 };
        json_t *job = NULL;

        read_valid(req, &q);
        cr_assert_eq(ui_transfer_job(&q, "id-1", &NAMES, t, &job, &err), 0, "%s", err.message);
        ui_transfer_req_done(&q);
        return job;
}

static void expect_env(const json_t *job, const char *const (*want)[2], size_t n)
{
        json_t *env = json_get_path(json_array_get(json_get_path(job, "spec", "template", "spec",
                                                                 "containers", NULL),
                                                   0),
                                    "env", NULL);

        cr_assert_eq(json_array_size(env), n, "%zu variables, expected %zu", json_array_size(env),
                     n);
        for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(env, i);

                cr_assert_str_eq(json_get_string_path(e, "name", NULL), want[i][0]);
                cr_assert_str_eq(json_get_string_path(e, "value", NULL), want[i][1], "%s",
                                 want[i][0]);
        }
}

Test(transfer, job_as_upstream_writes_it_s3)
{
        static const char *const want[][2] = {
                { "MODEL_SYNC_SOURCE_TYPE", "s3" },
                { "MODEL_SYNC_DESTINATION_TYPE", "oci" },
                { "MODEL_SYNC_DESTINATION_OCI_URI", "quay.io/org/iris:v1" },
                { "MODEL_SYNC_DESTINATION_OCI_REGISTRY", "quay.io" },
                { "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH",
                  "/opt/creds/destination/.dockerconfigjson" },
                { "MODEL_SYNC_REGISTRY_SERVER_ADDRESS", "http://10.0.0.7" },
                { "MODEL_SYNC_REGISTRY_PORT", "8080" },
                { "MODEL_SYNC_REGISTRY_IS_SECURE", "false" },
                { "MODEL_SYNC_METADATA_CONFIGMAP_PATH", "/etc/model-metadata" },
                { "MODEL_SYNC_MODEL_UPLOAD_INTENT", "create_model" },
                { "MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE", "quay.io/quay/busybox:latest" },
                { "MODEL_SYNC_SOURCE_AWS_KEY", "iris/" },
                { "MODEL_SYNC_SOURCE_S3_CREDENTIALS_PATH", "/opt/creds/source" },
        };
        json_t *job = job_of(S3_REQ, &TARGET);
        json_t *pod = json_get_path(job, "spec", "template", "spec", NULL);
        json_t *c = json_array_get(json_object_get(pod, "containers"), 0);
        char *text = json_dumps_compact(job);

        expect_env(job, want, sizeof(want) / sizeof(want[0]));
        cr_assert_str_eq(json_get_string_path(job, "apiVersion", NULL), "batch/v1");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "name", NULL), "job-1");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "labels", UI_TRANSFER_LABEL_TYPE,
                                              NULL),
                         "async-upload");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "labels", UI_TRANSFER_LABEL_REGISTRY,
                                              NULL),
                         "modelplane");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "annotations",
                                              UI_TRANSFER_ANN "source-secret", NULL),
                         "job-1-source-creds-abc");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "annotations",
                                              UI_TRANSFER_ANN "configmap-name", NULL),
                         "job-1-metadata-configmap-abc");
        cr_assert_eq(json_integer_value(json_get_path(job, "spec", "backoffLimit", NULL)), 3);
        cr_assert_str_eq(json_get_string_path(pod, "restartPolicy", NULL), "Never");
        cr_assert_str_eq(json_get_string_path(c, "image", NULL), "modelplane:latest");
        cr_assert_str_eq(json_get_string_path(c, "name", NULL), "async-upload");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(c, "command"), 0)),
                         "modelplane");
        cr_assert_str_eq(json_string_value(json_array_get(json_object_get(c, "command"), 1)),
                         "async-upload");
        cr_assert_eq(json_array_size(json_object_get(pod, "volumes")), 3);
        cr_assert_str_eq(json_get_string_path(json_array_get(json_object_get(pod, "volumes"), 2),
                                              "secret", "secretName", NULL),
                         "job-1-source-creds-abc");
        cr_assert_str_eq(json_get_string_path(json_array_get(json_object_get(c, "volumeMounts"), 2),
                                              "mountPath", NULL),
                         "/opt/creds/source");
        cr_assert_null(strstr(text, "SECRET"), "no credential in the Job");
        cr_assert_null(strstr(text, "AKID"), "no credential in the Job");
        free(text);
        json_decref(job);
}

Test(transfer, job_uri_source_and_https_registry)
{
        static const char *const want[][2] = {
                { "MODEL_SYNC_SOURCE_TYPE", "uri" },
                { "MODEL_SYNC_DESTINATION_TYPE", "oci" },
                { "MODEL_SYNC_DESTINATION_OCI_URI", "r.io/a/b" },
                { "MODEL_SYNC_DESTINATION_OCI_REGISTRY", "r.io" },
                { "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH",
                  "/opt/creds/destination/.dockerconfigjson" },
                { "MODEL_SYNC_REGISTRY_SERVER_ADDRESS", "https://mr.example" },
                { "MODEL_SYNC_REGISTRY_PORT", "443" },
                { "MODEL_SYNC_REGISTRY_IS_SECURE", "true" },
                { "MODEL_SYNC_METADATA_CONFIGMAP_PATH", "/etc/model-metadata" },
                { "MODEL_SYNC_MODEL_UPLOAD_INTENT", "create_version" },
                { "MODEL_SYNC_MODEL_ID", "5" },
                { "MODEL_SYNC_SOURCE_URI", "hf://org/m" },
        };
        struct ui_transfer_target t = TARGET;
        json_t *job;

        t.registry_url = "https://mr.example/api/model_registry/v1alpha3";
        job = job_of("{\"name\":\"j\",\"jobDisplayName\":\"J\",\"namespace\":\"ns\","
                     "\"source\":{\"type\":\"uri\",\"uri\":\"hf://org/m\"},"
                     "\"destination\":{\"type\":\"oci\",\"uri\":\"r.io/a/b\",\"username\":\"u\","
                     "\"password\":\"p\"},\"uploadIntent\":\"create_version\","
                     "\"registeredModelId\":\"5\",\"modelVersionName\":\"v2\"}",
                     &t);
        expect_env(job, want, sizeof(want) / sizeof(want[0]));
        cr_assert_eq(json_array_size(
                             json_get_path(job, "spec", "template", "spec", "volumes", NULL)),
                     2, "no source credentials for a uri source");
        cr_assert_str_eq(json_get_string_path(job, "metadata", "annotations",
                                              UI_TRANSFER_ANN "source-uri", NULL),
                         "hf://org/m");
        json_decref(job);
}

Test(transfer, registry_address_forms)
{
        static const struct {
                const char *url, *origin, *port;
                int r;
        } cases[] = {
                { "http://[fd00::1]:9000/x", "http://[fd00::1]", "9000", 0 },
                { "HTTP://Host", "http://Host", "80", 0 },
                { "127.0.0.1:8080", NULL, NULL, -EINVAL },
                { "http://:8080", NULL, NULL, -EINVAL },
                { "http://h:/", NULL, NULL, -EINVAL },
                { "http://[fd00::1", NULL, NULL, -EINVAL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct ui_transfer_req q = { 0 };
                struct ui_transfer_target t = TARGET;
                struct error_detail err = { 0 };
                json_t *job = NULL;
                char *text;

                t.registry_url = cases[i].url;
                read_valid(S3_REQ, &q);
                cr_assert_eq(ui_transfer_job(&q, "id", &NAMES, &t, &job, &err), cases[i].r, "%s",
                             cases[i].url);
                ui_transfer_req_done(&q);
                if (cases[i].r < 0) {
                        cr_assert(strstr(err.message, cases[i].url), "%s", err.message);
                        continue;
                }
                text = json_dumps_compact(job);
                cr_assert(strstr(text, cases[i].origin), "%s: %s", cases[i].url, text);
                free(text);
                json_decref(job);
        }
}

Test(transfer, registry_check)
{
        struct error_detail err = { 0 };

        cr_assert_eq(ui_transfer_registry_check("http://model-registry-service:8080", &err), 0);
        cr_assert_eq(ui_transfer_registry_check("", &err), -EINVAL);
        cr_assert(strstr(err.message, "not an http(s) URL"), "%s", err.message);
        cr_assert_eq(ui_transfer_registry_check("https://h:99999999/", &err), -EINVAL);
        cr_assert(strstr(err.message, "bad port"), "%s", err.message);
}

static enum ui_transfer_status status(const char *job_json, const char **msg)
{
        json_t *job = parse(job_json);
        enum ui_transfer_status s = ui_transfer_status_of(job, msg);

        if (msg && *msg)
                *msg = strdup(*msg); /* job goes */
        json_decref(job);
        return s;
}

Test(transfer, status_from_the_job)
{
        const char *msg = NULL;

        cr_assert_eq(status("{}", NULL), UI_TRANSFER_PENDING);
        cr_assert_eq(status("{\"status\":{\"active\":1}}", NULL), UI_TRANSFER_RUNNING);
        cr_assert_eq(status("{\"status\":{\"active\":1,\"failed\":1}}", NULL), UI_TRANSFER_RUNNING,
                     "a retrying Job still runs");
        cr_assert_eq(status("{\"status\":{\"failed\":2}}", NULL), UI_TRANSFER_FAILED);
        cr_assert_eq(status("{\"status\":{\"succeeded\":1}}", NULL), UI_TRANSFER_COMPLETED);
        cr_assert_eq(status("{\"status\":{\"conditions\":[{\"type\":\"Complete\","
                            "\"status\":\"True\"}]}}",
                            NULL),
                     UI_TRANSFER_COMPLETED);
        cr_assert_eq(status("{\"spec\":{\"suspend\":true}}", NULL), UI_TRANSFER_CANCELLED);
        cr_assert_eq(status("{\"status\":{\"active\":1,\"conditions\":[{\"type\":\"Failed\","
                            "\"status\":\"True\",\"message\":\"BackoffLimitExceeded\"}]}}",
                            &msg),
                     UI_TRANSFER_FAILED);
        cr_assert_str_eq(msg, "BackoffLimitExceeded");
        cr_assert_eq(status("{\"status\":{\"conditions\":[{\"type\":\"Failed\","
                            "\"status\":\"False\"}]}}",
                            NULL),
                     UI_TRANSFER_PENDING);
        cr_assert_str_eq(ui_transfer_status_name(UI_TRANSFER_CANCELLED), "CANCELLED");
}

Test(transfer, view_of_a_created_job)
{
        json_t *job = job_of(S3_REQ, &TARGET);
        json_t *v;
        char *text;

        cr_assert_eq(json_object_update(json_object_get(job, "metadata"),
                                        json_pack("{s:s,s:s}", "creationTimestamp",
                                                  "2026-12-07T10:00:00Z", "uid", "u-1")),
                     0);
        cr_assert_eq(json_object_set_new(job, "status",
                                         json_pack("{s:s,s:i}", "completionTime",
                                                   "2026-12-07T10:00:05Z", "succeeded", 1)),
                     0);
        v = ui_transfer_view(job);
        cr_assert(v);
        cr_assert_str_eq(json_get_string_path(v, "id", NULL), "id-1");
        cr_assert_str_eq(json_get_string_path(v, "name", NULL), "job-1");
        cr_assert_str_eq(json_get_string_path(v, "jobDisplayName", NULL), "Job one");
        cr_assert_str_eq(json_get_string_path(v, "namespace", NULL), "team-a");
        cr_assert_str_eq(json_get_string_path(v, "status", NULL), "COMPLETED");
        cr_assert_str_eq(json_get_string_path(v, "uploadIntent", NULL), "create_model");
        cr_assert_str_eq(json_get_string_path(v, "registeredModelName", NULL), "iris");
        cr_assert_str_eq(json_get_string_path(v, "modelVersionName", NULL), "v1");
        cr_assert_str_eq(json_get_string_path(v, "modelArtifactName", NULL), "v1");
        cr_assert_str_eq(json_get_string_path(v, "source", "type", NULL), "s3");
        cr_assert_str_eq(json_get_string_path(v, "source", "bucket", NULL), "models");
        cr_assert_str_eq(json_get_string_path(v, "destination", "registry", NULL), "quay.io");
        cr_assert_str_eq(json_get_string_path(v, "sourceSecretName", NULL),
                         "job-1-source-creds-abc");
        cr_assert_str_eq(json_get_string_path(v, "createTimeSinceEpoch", NULL), "1796637600000");
        cr_assert_str_eq(json_get_string_path(v, "lastUpdateTimeSinceEpoch", NULL),
                         "1796637605000");
        cr_assert_null(json_object_get(v, "registeredModelId"), "empty fields are left out");
        cr_assert_null(json_object_get(v, "errorMessage"));
        text = json_dumps_compact(v);
        cr_assert_null(strstr(text, "SECRET"));
        cr_assert_null(strstr(text, "robot"));
        free(text);
        json_decref(v);
        json_decref(job);
}

Test(transfer, job_of_registry)
{
        json_t *job = job_of(S3_REQ, &TARGET);

        cr_assert(ui_transfer_job_of(job, "modelplane"));
        cr_assert_not(ui_transfer_job_of(job, "other"));
        cr_assert_str_eq(ui_transfer_names_of(job).dest_secret, "job-1-dest-creds-abc");
        cr_assert_not(ui_transfer_job_of(parse("{\"metadata\":{\"labels\":{}}}"), "modelplane"));
        json_decref(job);
}

Test(transfer, pod_failures_in_upstream_words)
{
        char msg[256];
        json_t *pull = parse(
                "{\"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":"
                "{\"reason\":\"ImagePullBackOff\",\"message\":\"no such image\"}}}]}}");
        json_t *exit1 = parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":"
                              "{\"exitCode\":2,\"reason\":\"Error\"}}}]}}");
        json_t *fine = parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":"
                             "{\"reason\":\"ContainerCreating\"}}}]}}");

        cr_assert_eq(ui_transfer_pod_error(pull, msg, sizeof(msg)), 1);
        cr_assert_str_eq(msg, "ImagePullBackOff: no such image");
        cr_assert_eq(ui_transfer_pod_error(exit1, msg, sizeof(msg)), 1);
        cr_assert_str_eq(msg, "Container exited with code 2: Error");
        cr_assert_eq(ui_transfer_pod_error(fine, msg, sizeof(msg)), 0);
        json_decref(pull);
        json_decref(exit1);
        json_decref(fine);
}

Test(transfer, view_with_its_pods)
{
        json_t *v = parse("{\"name\":\"j\",\"status\":\"RUNNING\"}");
        json_t *pods = parse("[{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":"
                             "{\"exitCode\":0,\"message\":\"{\\\"RegisteredModel\\\":{\\\"id\\\":"
                             "\\\"4\\\"},\\\"ModelArtifact\\\":{\\\"id\\\":\\\"9\\\"}}\"}}}]}},"
                             "{\"status\":{\"containerStatuses\":[{\"state\":{\"waiting\":"
                             "{\"reason\":\"ErrImagePull\"}}}]}}]");
        json_t *done = parse("{\"name\":\"j\",\"status\":\"COMPLETED\",\"errorMessage\":\"x\"}");

        cr_assert_eq(ui_transfer_view_pods(v, pods), 0);
        cr_assert_str_eq(json_get_string_path(v, "status", NULL), "FAILED");
        cr_assert_str_eq(json_get_string_path(v, "errorMessage", NULL),
                         "ErrImagePull: ErrImagePull");
        cr_assert_str_eq(json_get_string_path(v, "registeredModelId", NULL), "4");
        cr_assert_str_eq(json_get_string_path(v, "modelArtifactId", NULL), "9");
        cr_assert_null(json_object_get(v, "modelVersionId"));
        cr_assert_eq(ui_transfer_view_pods(done, pods), 0);
        cr_assert_str_eq(json_get_string_path(done, "status", NULL), "COMPLETED",
                         "a pod's failure does not undo the Job's end");
        cr_assert_str_eq(json_get_string_path(done, "errorMessage", NULL), "x");
        cr_assert_eq(ui_transfer_view_pods(done, NULL), 0);
        json_decref(v);
        json_decref(done);
        json_decref(pods);
}

Test(transfer, event_view)
{
        json_t *a = parse("{\"type\":\"Warning\",\"reason\":\"BackOff\",\"message\":\"m\","
                          "\"firstTimestamp\":\"2026-12-01T10:00:00Z\","
                          "\"lastTimestamp\":\"2026-12-01T11:00:00Z\"}");
        json_t *b = parse("{\"type\":\"Normal\",\"eventTime\":\"2026-12-01T12:00:00.123456Z\"}");
        json_t *va = ui_transfer_event_view(a), *vb = ui_transfer_event_view(b);

        cr_assert_str_eq(json_get_string_path(va, "timestamp", NULL), "2026-12-01T11:00:00Z");
        cr_assert_str_eq(json_get_string_path(va, "reason", NULL), "BackOff");
        cr_assert_str_eq(json_get_string_path(vb, "timestamp", NULL), "2026-12-01T12:00:00Z");
        cr_assert_str_eq(json_get_string_path(vb, "message", NULL), "");
        json_decref(a);
        json_decref(b);
        json_decref(va);
        json_decref(vb);
}

Test(transfer, retry_takes_what_it_lacks_from_the_failed_job)
{
        json_t *job = job_of(S3_REQ, &TARGET);
        json_t *cm = parse("{\"ModelVersion.description\":\"first\","
                           "\"ModelArtifact.model_format_name\":\"onnx\","
                           "\"ModelVersion.customProperties\":\"{\\\"k\\\":{}}\"}");
        json_t *secret = parse("{\"AWS_ACCESS_KEY_ID\":\"QUtJRA==\","
                               "\"AWS_SECRET_ACCESS_KEY\":\"U0VDUkVU\"}");
        struct ui_transfer_req q = { 0 };
        struct error_detail err = { 0 };

        read_req("{\"name\":\"job-2\",\"namespace\":\"team-a\"}", &q);
        cr_assert_eq(ui_transfer_retry_fill(&q, "job-1", job, cm, &err), -EINVAL,
                     "a job that has not failed");
        cr_assert(strstr(err.message, "has not failed"), "%s", err.message);
        cr_assert_eq(json_object_set_new(job, "status", json_pack("{s:i}", "failed", 4)), 0);
        cr_assert_eq(ui_transfer_retry_fill(&q, "job-1", job, cm, &err), 0, "%s", err.message);
        cr_assert_str_eq(q.source_type, "s3");
        cr_assert_str_eq(q.bucket, "models");
        cr_assert_str_eq(q.display_name, "Job one");
        cr_assert_str_eq(q.rm_name, "iris");
        cr_assert_str_eq(q.format, "onnx");
        cr_assert(json_is_object(q.version_props));
        cr_assert_eq(ui_transfer_retry_source_creds(&q, secret), 0);
        cr_assert_str_eq(q.aws_key_id, "AKID");
        cr_assert_str_eq(q.aws_secret, "SECRET");
        cr_assert_eq(ui_transfer_validate(&q, true, &err), 0, "%s", err.message);
        ui_transfer_req_done(&q);

        read_req("{\"name\":\"job-1\",\"namespace\":\"team-a\"}", &q);
        cr_assert_eq(ui_transfer_retry_fill(&q, "job-1", job, NULL, &err), -EINVAL);
        cr_assert_str_eq(err.field, "name");
        ui_transfer_req_done(&q);
        read_req("{\"namespace\":\"team-a\"}", &q);
        cr_assert_eq(ui_transfer_retry_fill(&q, "job-1", job, NULL, &err), -EINVAL);
        cr_assert_str_eq(err.field, "name");
        ui_transfer_req_done(&q);
        json_decref(job);
        json_decref(cm);
        json_decref(secret);
}
