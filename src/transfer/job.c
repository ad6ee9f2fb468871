/* SPDX-License-Identifier: Apache-2.0 */
#include "transfer/job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "agent/fetch.h"
#include "json/json-util.h"
#include "registry-client/client.h"
#include "transfer/layer.h"
#include "transfer/oci.h"
#include "transfer/push.h"
#include "util/buf.h"
#include "util/file-util.h"
#include "util/log.h"

/* Prefixes @e's message with @step: "pushing the image: <reason>". Returns r. */
static int step_error(struct error_detail *e, int r, const char *step)
{
        char msg[sizeof(e->message) + 128];

        if (!e)
                return r;
        if (!e->message[0])
                (void)snprintf(e->message, sizeof(e->message), "%s", errno_to_string(r));
        (void)snprintf(msg, sizeof(msg), "%.100s: %s", step, e->message);
        msg[sizeof(e->message) - 1] = '\0'; /* cut to the field's size */
        memcpy(e->message, msg, sizeof(e->message));
        if (!e->error)
                e->error = r;
        return r;
}

static const char *str_or_empty(const char *s)
{
        return s ? s : "";
}

/* ---- the Model Registry ---- */

static int registry_open(const struct transfer_job_inputs *in, struct mr_client **ret,
                         char **ret_url, struct error_detail *e)
{
        const struct transfer_config *c = in->config;
        AUTOFREE char *url = NULL;
        struct mr_client_config mc = { 0 };
        int r;

        r = transfer_registry_url(c, &url, e);
        if (r < 0)
                return r;
        if (c->registry_secure && !in->registry_token)
                return error_detail_set_field(
                        e, ERROR_INVALID, -EINVAL, "MODEL_SYNC_REGISTRY_USER_TOKEN",
                        "user token must be provided for secure connection "
                        "(MODEL_SYNC_REGISTRY_USER_TOKEN, the file "
                        "MODEL_SYNC_REGISTRY_USER_TOKEN_ENVVAR names, "
                        "KF_PIPELINES_SA_TOKEN_PATH or the service account's)");
        mc.base_url = url;
        mc.token = in->registry_token;
        mc.ca_file = in->registry_ca_file;
        r = mr_client_new(&mc, ret);
        if (r < 0)
                return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        log_info("async-upload: the Model Registry is %s", url);
        *ret_url = TAKE_PTR(url);
        return 0;
}

static int registry_check(struct mr_client *mr, const char *url, struct error_detail *e)
{
        json_auto_t *page = NULL;
        char step[256];
        int r = mr_client_call(mr, "GET", "/registered_models?pageSize=1", NULL, &page, e);

        (void)snprintf(step, sizeof(step), "cannot use the Model Registry at %s", url);
        return r < 0 ? step_error(e, r, step) : 0;
}

static int get_by_id(struct mr_client *mr, const char *prefix, const char *id, json_t **ret,
                     struct error_detail *e)
{
        return mr_get_under(mr, prefix, id, NULL, NULL, ret, e);
}

/* PATCH /model_artifacts/{id} with @update (borrowed). */
static int artifact_patch(struct mr_client *mr, const char *id, json_t *update,
                          struct error_detail *e)
{
        AUTOFREE char *path = NULL;
        char *esc = curl_easy_escape(NULL, id, 0);
        json_auto_t *reply = NULL;
        int r;

        if (!esc || asprintf(&path, "/model_artifacts/%s", esc) < 0) {
                curl_free(esc);
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        }
        curl_free(esc);
        r = mr_client_call(mr, "PATCH", path, update, &reply, e);
        return r < 0 ? r : 0;
}

static int precheck_update(struct mr_client *mr, const struct transfer_config *c,
                           struct error_detail *e)
{
        json_auto_t *art = NULL, *upd = NULL;
        int r = get_by_id(mr, "/model_artifacts", c->artifact_id, &art, e);

        if (r == -ENOENT)
                return error_detail_set_field(e, ERROR_NOT_FOUND, r, "MODEL_SYNC_MODEL_ARTIFACT_ID",
                                              "Artifact %s not found", c->artifact_id);
        if (r < 0)
                return step_error(e, r, "reading the artifact");
        upd = json_pack("{s:s, s:s}", "artifactType", "model-artifact", "state", "PENDING");
        if (!upd)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = artifact_patch(mr, c->artifact_id, upd, e);
        if (r < 0)
                return step_error(e, r, "setting the artifact PENDING");
        log_info("async-upload: artifact %s set PENDING", c->artifact_id);
        return 0;
}

static int precheck_create_model(struct mr_client *mr, const struct transfer_metadata *m,
                                 struct error_detail *e)
{
        json_auto_t *rm = NULL;
        int r = mr_find_registered_model(mr, m->model_name, &rm, e);

        if (r >= 0)
                return error_detail_set_field(e, ERROR_CONFLICT, -EEXIST, "RegisteredModel.name",
                                              "Cannot create model: RegisteredModel with name "
                                              "'%s' already exists. Use 'create_version' intent "
                                              "to add a new version to this existing model.",
                                              m->model_name);
        if (r != -ENOENT)
                return step_error(e, r, "looking the model up");
        if (e)
                *e = (struct error_detail){ 0 };
        return 0;
}

static int precheck_create_version(struct mr_client *mr, const struct transfer_config *c,
                                   const struct transfer_metadata *m, struct error_detail *e)
{
        json_auto_t *rm = NULL, *mv = NULL;
        int r = get_by_id(mr, "/registered_models", c->model_id, &rm, e);

        if (r == -ENOENT)
                return error_detail_set_field(e, ERROR_NOT_FOUND, r, "MODEL_SYNC_MODEL_ID",
                                              "Cannot create version: RegisteredModel with ID "
                                              "'%s' not found. Use 'create_model' intent to "
                                              "create a new model first.",
                                              c->model_id);
        if (r < 0)
                return step_error(e, r, "reading the model");
        r = mr_find_model_version(mr, m->version_name, c->model_id, &mv, e);
        if (r >= 0)
                return error_detail_set_field(
                        e, ERROR_CONFLICT, -EEXIST, "ModelVersion.name",
                        "Cannot create version: ModelVersion with name '%s' already exists under "
                        "RegisteredModel '%s' (ID: %s). Use 'update_artifact' intent to update "
                        "an existing version's artifact.",
                        m->version_name, str_or_empty(json_get_string_path(rm, "name", NULL)),
                        c->model_id);
        if (r != -ENOENT)
                return step_error(e, r, "Failed to check if ModelVersion exists");
        if (e)
                *e = (struct error_detail){ 0 };
        return 0;
}

static int precheck(struct mr_client *mr, const struct transfer_job_inputs *in,
                    struct error_detail *e)
{
        switch (in->config->intent) {
        case TRANSFER_INTENT_UPDATE_ARTIFACT:
                return precheck_update(mr, in->config, e);
        case TRANSFER_INTENT_CREATE_MODEL:
                return precheck_create_model(mr, in->metadata, e);
        case TRANSFER_INTENT_CREATE_VERSION:
                return precheck_create_version(mr, in->config, in->metadata, e);
        }
        return 0;
}

/* ---- the download ---- */

static bool uri_supported(const char *uri)
{
        static const char *const schemes[] = { "http://", "https://", "hf://", "s3://", "gs://" };

        for (size_t i = 0; i < ELEMENTSOF(schemes); i++)
                if (strneq(uri, schemes[i], strlen(schemes[i])))
                        return true;
        return false;
}

/* The source as a storage URI of the agent's fetch code. */
static int source_uri(const struct transfer_config *c, char **ret, struct error_detail *e)
{
        const char *key;

        switch (c->source_type) {
        case TRANSFER_SOURCE_S3:
                key = c->source_s3.key;
                while (*key == '/')
                        key++;
                if (asprintf(ret, "s3://%s/%s", c->source_s3.bucket, key) < 0)
                        return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
                return 0;
        case TRANSFER_SOURCE_URI:
                if (!uri_supported(c->source_uri))
                        return error_detail_set_field(e, ERROR_INVALID, -EPROTONOSUPPORT,
                                                      "MODEL_SYNC_SOURCE_URI",
                                                      "Unsupported URI format: %s (http://, "
                                                      "https://, hf://, s3://, gs://)",
                                                      c->source_uri);
                *ret = strdup(c->source_uri);
                return *ret ? 0 : error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        case TRANSFER_SOURCE_OCI:
                break;
        }
        return error_detail_set_field(e, ERROR_INVALID, -EPROTONOSUPPORT, "MODEL_SYNC_SOURCE_TYPE",
                                      "OCI source is not supported yet");
}

/* An empty directory at @path (made, or emptied). */
static int empty_dir(const char *path, struct error_detail *e)
{
        int r;

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return error_detail_set(e, ERROR_INTERNAL, -errno, "cannot create %s: %s", path,
                                        errno_to_string(-errno));
        r = fetch_empty_dir(path);
        return r < 0 ? error_detail_set(e, ERROR_INTERNAL, r, "cannot empty %s: %s", path,
                                        errno_to_string(r))
                     : 0;
}

static int download(const struct transfer_config *c, const char *dir, struct error_detail *e)
{
        struct fetch_config fc;
        AUTOFREE char *uri = NULL;
        char err[1024] = "";
        int r;

        r = source_uri(c, &uri, e);
        if (r < 0)
                return r;
        r = fetch_config_from_env(&fc);
        if (r < 0)
                return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        if (c->source_type == TRANSFER_SOURCE_S3)
                r = fetch_config_set_s3(&fc, c->source_s3.endpoint, c->source_s3.region,
                                        c->source_s3.access_key_id, c->source_s3.secret_access_key);
        if (r >= 0) {
                log_info("async-upload: downloading %s into %s", uri, dir);
                r = fetch_model(&fc, uri, dir, err, sizeof(err));
        }
        fetch_config_release(&fc);
        if (r < 0)
                return error_detail_set(e, ERROR_UNAVAILABLE, r, "downloading %s: %s", uri,
                                        err[0] ? err : errno_to_string(r));
        return 0;
}

/* ---- the image ---- */

struct image {
        struct oci_manifest base; /* layers and config of the base (n_layers 0: none) */
        bool has_base;
        char *base_config; /* the base's config JSON, or NULL */
        size_t base_config_len;
};

static void image_release(struct image *im)
{
        free(im->base_config);
        *im = (struct image){ 0 };
}

static bool base_is_none(const char *b)
{
        return !b || !*b || streq(b, "none") || streq(b, "scratch");
}

/* A temporary file under @dir (unlinked at once). */
static int temp_file(const char *dir, struct error_detail *e)
{
        int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

        if (fd < 0)
                return error_detail_set(e, ERROR_INTERNAL, -errno,
                                        "cannot make a temporary file in %s: %s", dir,
                                        errno_to_string(-errno));
        return fd;
}

/* The credentials for registry @key in the dockerconfigjson; none when absent (unless @need). */
static int docker_auth(const struct transfer_job_inputs *in, const char *key, bool need,
                       struct transfer_docker_auth *ret, struct error_detail *e)
{
        bool plain = false;
        int r;

        *ret = (struct transfer_docker_auth){ 0 };
        if (!in->dockerconfig)
                return 0;
        r = transfer_dockerconfig_parse(in->dockerconfig, in->dockerconfig_len, key, ret, &plain,
                                        e);
        if (r == -ENOENT && !need) {
                if (e)
                        *e = (struct error_detail){ 0 };
                return 0;
        }
        if (r < 0)
                return step_error(e, r, "MODEL_SYNC_DESTINATION_OCI_CREDENTIALS_PATH");
        if (plain)
                log_warn("async-upload: plain text credentials in the .dockerconfigjson auth "
                         "field: this format is deprecated, use base64 of user:password");
        return 0;
}

static int client_for(const struct oci_ref *ref, const struct transfer_docker_auth *auth,
                      bool tls_verify, bool pull_only, struct oci_client **ret,
                      struct error_detail *e)
{
        struct oci_client_config cc = {
                .host = oci_ref_api_host(ref),
                .repository = ref->repository,
                .username = auth->username,
                .password = auth->password,
                .tls_verify = tls_verify,
                .pull_only = pull_only,
        };
        int r = oci_client_new(&cc, ret);

        if (r < 0)
                return error_detail_set(e, ERROR_INTERNAL, r, "out of memory");
        return oci_client_ping(*ret, e);
}

/* The sum of the layers' declared sizes (saturating). */
static uint64_t base_size(const struct oci_manifest *m)
{
        uint64_t sum = 0;

        for (size_t i = 0; i < m->n_layers; i++)
                sum = m->layers[i].size > UINT64_MAX - sum ? UINT64_MAX : sum + m->layers[i].size;
        return sum;
}

/* Reads the base image's manifest (an index resolved to linux/@arch) and config. */
static int base_read(struct oci_client *bc, const struct oci_ref *ref, const char *arch,
                     const char *tmpdir, struct image *im, struct error_detail *e)
{
        struct buf body = BUF_INIT(OCI_MANIFEST_MAX);
        char type[128], digest[OCI_DIGEST_LEN];
        int fd = -1, r;

        r = oci_manifest_get(bc, ref->digest ? ref->digest : ref->tag, &body, type, e);
        if (r >= 0)
                r = oci_manifest_parse(buf_str(&body), body.len, &im->base, e);
        if (r == -EMEDIUMTYPE) {
                r = oci_index_pick(buf_str(&body), body.len, "linux", arch, digest, e);
                buf_reset(&body);
                if (r >= 0)
                        r = oci_manifest_get(bc, digest, &body, type, e);
                if (r >= 0)
                        r = oci_manifest_parse(buf_str(&body), body.len, &im->base, e);
        }
        buf_release(&body);
        if (r >= 0 && base_size(&im->base) > FETCH_SIZE_MAX_DEFAULT)
                r = error_detail_set(e, ERROR_INVALID, -EFBIG,
                                     "the base image's layers are larger than %llu bytes",
                                     (unsigned long long)FETCH_SIZE_MAX_DEFAULT);
        if (r >= 0 && im->base.config.size > OCI_CONFIG_MAX)
                r = error_detail_set(e, ERROR_INVALID, -EFBIG,
                                     "the base image's config is larger than 4 MiB");
        if (r >= 0)
                r = fd = temp_file(tmpdir, e);
        if (r >= 0)
                r = oci_blob_fetch(bc, im->base.config.digest, im->base.config.size, fd, e);
        if (r >= 0 && lseek(fd, 0, SEEK_SET) < 0)
                r = error_detail_set(e, ERROR_INTERNAL, -errno, "cannot read the base config");
        if (r >= 0)
                r = read_fd_bounded(fd, OCI_CONFIG_MAX, 0, &im->base_config, &im->base_config_len,
                                    NULL);
        if (fd >= 0)
                close(fd);
        if (r < 0)
                return step_error(e, r, "reading the base image");
        im->has_base = true;
        return 0;
}

/* Copies one base layer into the destination: present, mounted (same registry) or uploaded. */
static int base_layer_copy(struct oci_client *dc, struct oci_client *bc, const struct oci_ref *dst,
                           const struct oci_ref *base, const struct oci_descriptor *d,
                           const char *tmpdir, struct error_detail *e)
{
        bool have = false;
        int fd, r;

        r = oci_blob_exists(dc, d->digest, &have, e);
        if (r < 0 || have)
                return r;
        if (streq(dst->host, base->host)) {
                r = oci_blob_mount(dc, d->digest, base->repository, &have, e);
                if (r < 0 || have)
                        return r;
        }
        fd = temp_file(tmpdir, e);
        if (fd < 0)
                return fd;
        log_info("async-upload: copying the base layer %s (%llu bytes)", d->digest,
                 (unsigned long long)d->size);
        r = oci_blob_fetch(bc, d->digest, d->size, fd, e);
        if (r >= 0)
                r = oci_blob_upload(dc, fd, d->size, d->digest, e);
        close(fd);
        return r;
}

static int upload_if_missing(struct oci_client *dc, int fd, const struct oci_descriptor *d,
                             struct error_detail *e)
{
        bool have = false;
        int r = oci_blob_exists(dc, d->digest, &have, e);

        if (r < 0 || have)
                return r;
        return oci_blob_upload(dc, fd, d->size, d->digest, e);
}

/* The config blob and the manifest; *ret_layers the base's then the model's. */
static int push_config_manifest(struct oci_client *dc, const struct oci_ref *dst,
                                const struct image *im, const struct oci_descriptor *model,
                                const char *diff_id, const char *arch, struct error_detail *e)
{
        struct oci_descriptor cfg = { 0 }, *layers;
        AUTOFREE char *config = NULL, *manifest = NULL;
        char created[32];
        struct tm tm;
        time_t now = time(NULL);
        int fd, r;

        (void)strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
        config = oci_config_build(im->base_config, im->base_config_len, diff_id, "linux", arch,
                                  created, e);
        if (!config)
                return step_error(e, e && e->error ? e->error : -EINVAL,
                                  "building the image config");
        (void)snprintf(cfg.media_type, sizeof(cfg.media_type), "%s",
                       im->base.docker ? DOCKER_MT_CONFIG : OCI_MT_CONFIG);
        oci_sha256_digest(config, strlen(config), cfg.digest);
        cfg.size = strlen(config);
        fd = memfd_create("config", MFD_CLOEXEC);
        if (fd < 0 || write(fd, config, cfg.size) != (ssize_t)cfg.size) {
                if (fd >= 0)
                        close(fd);
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "cannot hold the config");
        }
        r = upload_if_missing(dc, fd, &cfg, e);
        close(fd);
        if (r < 0)
                return step_error(e, r, "pushing the image config");
        layers = calloc(im->base.n_layers + 1, sizeof(*layers));
        if (!layers)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        memcpy(layers, im->base.layers, im->base.n_layers * sizeof(*layers));
        layers[im->base.n_layers] = *model;
        manifest = oci_manifest_build(im->base.docker, &cfg, layers, im->base.n_layers + 1);
        free(layers);
        if (!manifest)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = oci_manifest_put(dc, dst->digest && !dst->tag ? dst->digest : dst->tag,
                             im->base.docker ? DOCKER_MT_MANIFEST : OCI_MT_MANIFEST, manifest,
                             strlen(manifest), e);
        return r < 0 ? step_error(e, r, "pushing the manifest") : 0;
}

/* The base image: read and its layers copied into the destination. */
static int base_copy(const struct transfer_job_inputs *in, struct oci_client *dc,
                     const struct oci_ref *dst, const struct transfer_docker_auth *dst_auth,
                     const char *tmpdir, struct image *im, struct error_detail *e)
{
        const struct transfer_oci *o = &in->config->dest_oci;
        struct oci_ref base = { 0 };
        struct transfer_docker_auth auth = { 0 };
        CLEANUP(oci_client_freep) struct oci_client *bc = NULL;
        int r;

        if (base_is_none(o->base_image))
                return 0;
        r = oci_ref_parse(o->base_image, &base, e);
        if (r < 0)
                return step_error(e, r, "MODEL_SYNC_DESTINATION_OCI_BASE_IMAGE");
        r = docker_auth(in, base.host, false, &auth, e);
        if (r >= 0 && !auth.username && streq(base.host, dst->host))
                r = client_for(&base, dst_auth, o->tls_verify, true, &bc, e);
        else if (r >= 0)
                r = client_for(&base, &auth, o->tls_verify, true, &bc, e);
        if (r >= 0) {
                log_info("async-upload: base image %s", o->base_image);
                r = base_read(bc, &base, in->platform_arch, tmpdir, im, e);
        }
        for (size_t i = 0; r >= 0 && i < im->base.n_layers; i++)
                r = base_layer_copy(dc, bc, dst, &base, &im->base.layers[i], tmpdir, e);
        transfer_docker_auth_release(&auth);
        oci_ref_release(&base);
        return r < 0 ? step_error(e, r, "the base image") : 0;
}

static int modelcar_push(const struct transfer_job_inputs *in, const char *model_dir,
                         const char *tmpdir, struct error_detail *e)
{
        const struct transfer_oci *o = &in->config->dest_oci;
        struct oci_ref dst = { 0 };
        struct transfer_docker_auth auth = { 0 };
        CLEANUP(oci_client_freep) struct oci_client *dc = NULL;
        struct image im = { 0 };
        struct oci_descriptor model = { 0 };
        struct layer_limits lim = { .size_max = FETCH_SIZE_MAX_DEFAULT,
                                    .entries_max = FETCH_ENTRIES_MAX_DEFAULT };
        char diff_id[OCI_DIGEST_LEN];
        int fd = -1, r;

        r = oci_ref_parse(o->uri, &dst, e);
        if (r < 0)
                return step_error(e, r, "MODEL_SYNC_DESTINATION_OCI_URI");
        if (in->dockerconfig)
                r = docker_auth(in, o->registry, true, &auth, e);
        else if (o->username && ((auth.username = strdup(o->username)) == NULL ||
                                 (auth.password = strdup(o->password)) == NULL))
                r = error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        if (r >= 0)
                r = client_for(&dst, &auth, o->tls_verify, false, &dc, e);
        if (r >= 0)
                r = base_copy(in, dc, &dst, &auth, tmpdir, &im, e);
        if (r >= 0)
                r = fd = temp_file(tmpdir, e);
        if (r >= 0) {
                log_info("async-upload: packing %s as the ModelCar layer", model_dir);
                r = modelcar_layer_write(model_dir, fd, im.base.docker, &lim, &model, diff_id, e);
                if (r < 0)
                        r = step_error(e, r, "packing the model");
        }
        if (r >= 0) {
                log_info("async-upload: pushing the model layer %s (%llu bytes) to %s",
                         model.digest, (unsigned long long)model.size, o->uri);
                r = upload_if_missing(dc, fd, &model, e);
                if (r < 0)
                        r = step_error(e, r, "pushing the model layer");
        }
        if (r >= 0)
                r = push_config_manifest(dc, &dst, &im, &model, diff_id, in->platform_arch, e);
        if (fd >= 0)
                close(fd);
        image_release(&im);
        transfer_docker_auth_release(&auth);
        oci_ref_release(&dst);
        return r;
}

/* ---- the registration ---- */

static int set_opt(json_t *o, const char *key, const char *value)
{
        return value ? json_object_set_new(o, key, json_string(value)) : 0;
}

static int set_props(json_t *o, const json_t *props, const json_t *api_props)
{
        json_t *cp;

        if (!props && !api_props)
                return 0;
        cp = transfer_custom_properties(props, api_props);
        return cp ? json_object_set_new(o, "customProperties", cp) : -1;
}

static int create_model(struct mr_client *mr, const struct transfer_metadata *m, json_t **ret,
                        struct error_detail *e)
{
        json_auto_t *body = json_pack("{s:s}", "name", m->model_name);
        int r;

        if (!body || set_opt(body, "description", m->model_description) < 0 ||
            set_opt(body, "owner", m->model_owner) < 0 ||
            set_props(body, m->model_props, m->model_api_props) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = mr_client_call(mr, "POST", "/registered_models", body, ret, e);
        return r < 0 ? step_error(e, r, "creating the RegisteredModel") : 0;
}

static int create_version(struct mr_client *mr, const struct transfer_job_inputs *in,
                          const char *model_id, json_t **ret, struct error_detail *e)
{
        const struct transfer_metadata *m = in->metadata;
        const char *author = m->version_author ? m->version_author : in->config->registry_author;
        json_auto_t *body = json_pack("{s:s, s:s}", "name",
                                      m->version_name ? m->version_name : "1.0.0",
                                      "registeredModelId", model_id);
        int r;

        if (!body || set_opt(body, "author", author) < 0 ||
            set_opt(body, "description", m->version_description) < 0 ||
            set_props(body, m->version_props, m->version_api_props) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = mr_client_call(mr, "POST", "/model_versions", body, ret, e);
        return r < 0 ? step_error(e, r, "creating the ModelVersion") : 0;
}

static int create_artifact(struct mr_client *mr, const struct transfer_metadata *m,
                           const char *version_id, const char *model_name, const char *uri,
                           json_t **ret, struct error_detail *e)
{
        json_auto_t *body = json_pack("{s:s, s:s, s:s}", "artifactType", "model-artifact", "name",
                                      m->artifact_name ? m->artifact_name : model_name, "uri", uri);
        json_auto_t *upd = NULL;
        AUTOFREE char *path = NULL;
        const char *id;
        int r;

        if (!body || set_opt(body, "modelFormatName", m->format_name) < 0 ||
            set_opt(body, "modelFormatVersion", m->format_version) < 0 ||
            set_opt(body, "storageKey", m->storage_key) < 0 ||
            set_opt(body, "storagePath", m->storage_path) < 0 ||
            set_opt(body, "serviceAccountName", m->service_account_name) < 0 ||
            set_opt(body, "modelSourceKind", m->source_kind) < 0 ||
            set_opt(body, "modelSourceClass", m->source_class) < 0 ||
            set_opt(body, "modelSourceGroup", m->source_group) < 0 ||
            set_opt(body, "modelSourceId", m->source_id) < 0 ||
            set_opt(body, "modelSourceName", m->source_name) < 0 ||
            set_props(body, m->artifact_props, m->artifact_api_props) < 0 ||
            asprintf(&path, "/model_versions/%s/artifacts", version_id) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = mr_client_call(mr, "POST", path, body, ret, e);
        if (r < 0)
                return step_error(e, r, "creating the ModelArtifact");
        id = json_get_string_path(*ret, "id", NULL);
        upd = json_pack("{s:s, s:s}", "artifactType", "model-artifact", "state", "LIVE");
        if (!id || !upd)
                return error_detail_set(e, ERROR_INTERNAL, -EBADMSG,
                                        "the ModelArtifact created has no id");
        r = artifact_patch(mr, id, upd, e);
        return r < 0 ? step_error(e, r, "setting the ModelArtifact LIVE") : 0;
}

/* Adds {"<kind>": {"id": id}} to the result when id is set. */
static int result_add(json_t *res, const char *kind, const char *id)
{
        return id ? json_object_set_new(res, kind, json_pack("{s:s}", "id", id)) : 0;
}

static int register_new(struct mr_client *mr, const struct transfer_job_inputs *in, const char *uri,
                        json_t *res, struct error_detail *e)
{
        const struct transfer_config *c = in->config;
        json_auto_t *rm = NULL, *mv = NULL, *ma = NULL;
        const char *model_id, *version_id;
        int r;

        if (c->intent == TRANSFER_INTENT_CREATE_MODEL)
                r = create_model(mr, in->metadata, &rm, e);
        else
                r = get_by_id(mr, "/registered_models", c->model_id, &rm, e);
        if (r < 0)
                return r;
        model_id = json_get_string_path(rm, "id", NULL);
        if (!model_id)
                return error_detail_set(e, ERROR_INTERNAL, -EBADMSG,
                                        "the RegisteredModel has no id");
        r = create_version(mr, in, model_id, &mv, e);
        if (r < 0)
                return r;
        version_id = json_get_string_path(mv, "id", NULL);
        if (!version_id)
                return error_detail_set(e, ERROR_INTERNAL, -EBADMSG, "the ModelVersion has no id");
        r = create_artifact(mr, in->metadata, version_id,
                            str_or_empty(json_get_string_path(rm, "name", NULL)), uri, &ma, e);
        if (r < 0)
                return r;
        if (result_add(res, "RegisteredModel", model_id) < 0 ||
            result_add(res, "ModelVersion", version_id) < 0 ||
            result_add(res, "ModelArtifact", json_get_string_path(ma, "id", NULL)) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
}

static int register_result(struct mr_client *mr, const struct transfer_job_inputs *in,
                           const char *uri, json_t *res, struct error_detail *e)
{
        const struct transfer_config *c = in->config;
        json_auto_t *upd = NULL;
        int r;

        if (c->intent != TRANSFER_INTENT_UPDATE_ARTIFACT)
                return register_new(mr, in, uri, res, e);
        upd = json_pack("{s:s, s:s, s:s}", "artifactType", "model-artifact", "state", "LIVE", "uri",
                        uri);
        if (!upd)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = artifact_patch(mr, c->artifact_id, upd, e);
        if (r < 0)
                return step_error(e, r, "updating the artifact");
        if (result_add(res, "RegisteredModel", c->model_id) < 0 ||
            result_add(res, "ModelVersion", c->version_id) < 0 ||
            result_add(res, "ModelArtifact", c->artifact_id) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        return 0;
}

/* "oci://" + the destination uri (an oci:// it already has kept once). */
static char *artifact_uri(const char *dest)
{
        char *s = NULL;

        if (strneq(dest, "oci://", 6))
                return strdup(dest);
        return asprintf(&s, "oci://%s", dest) < 0 ? NULL : s;
}

static int transfer_steps(struct mr_client *mr, const struct transfer_job_inputs *in, json_t *res,
                          struct error_detail *e)
{
        const struct transfer_config *c = in->config;
        AUTOFREE char *model_dir = NULL, *uri = NULL;
        int r;

        if (c->dest_type != TRANSFER_DEST_OCI)
                return error_detail_set_field(e, ERROR_INVALID, -EPROTONOSUPPORT,
                                              "MODEL_SYNC_DESTINATION_TYPE",
                                              "S3 upload destination is not supported");
        r = precheck(mr, in, e);
        if (r < 0)
                return r;
        if (mkdir(c->storage_path, 0755) < 0 && errno != EEXIST)
                return error_detail_set_field(e, ERROR_INTERNAL, -errno, "MODEL_SYNC_STORAGE_PATH",
                                              "cannot create %s: %s", c->storage_path,
                                              errno_to_string(-errno));
        if (asprintf(&model_dir, "%s/model", c->storage_path) < 0)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = empty_dir(model_dir, e);
        if (r >= 0)
                r = download(c, model_dir, e);
        if (r >= 0)
                r = modelcar_push(in, model_dir, c->storage_path, e);
        if (r < 0)
                return r;
        uri = artifact_uri(c->dest_oci.uri);
        if (!uri)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        log_info("async-upload: pushed %s", uri);
        return register_result(mr, in, uri, res, e);
}

int transfer_job_run(const struct transfer_job_inputs *in, json_t **ret_result,
                     struct error_detail *e)
{
        CLEANUP(mr_client_freep) struct mr_client *mr = NULL;
        AUTOFREE char *url = NULL;
        json_auto_t *res = NULL;
        int r;

        r = registry_open(in, &mr, &url, e);
        if (r >= 0)
                r = registry_check(mr, url, e);
        if (r < 0)
                return r;
        res = json_pack("{s:s}", "intent", transfer_intent_to_string(in->config->intent));
        if (!res)
                return error_detail_set(e, ERROR_INTERNAL, -ENOMEM, "out of memory");
        r = transfer_steps(mr, in, res, e);
        if (r < 0)
                return r;
        *ret_result = TAKE_PTR(res);
        return 0;
}
