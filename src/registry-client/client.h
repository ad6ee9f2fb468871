/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * A small blocking client for the Model Registry REST API (v1alpha3), over libcurl: one generic
 * call plus the typed calls the InferenceService controller makes (spec A.7). Sends
 * Accept/Content-Type JSON and, when a token is set, "Authorization: Bearer <token>".
 *
 * Errors: negative errno, with the HTTP status (.status, 0 for a transport error) and the server's
 * message (.message: the error body's "message", or the transport's text) in a struct
 * error_detail (util/error-detail.h):
 * -ENOENT (404), -EEXIST (409), -EINVAL (400/422), -EBADMSG (2xx body not JSON), -EIO (other
 * statuses), -ECONNREFUSED/-ETIMEDOUT/-EHOSTUNREACH (transport), -EIO (TLS: the message then
 * starts with "TLS certificate verification failed: " when the server's certificate was not
 * trusted, followed by libcurl's detail). Not thread-safe per client
 * object; use one client per thread.
 */

#include <jansson.h>
#include <stdbool.h>

#include "util/error-detail.h"
#include "util/macro.h"

struct mr_client;

/*
 * The transport (a port: tests and fuzzers answer calls without a server). round_trip() sends
 * @method @url with @payload (NULL: no body) and stores the HTTP status in *@ret_status and the
 * body in @reply (a struct buf, util/buf.h, with its own limit). Returns 0, or a negative errno
 * for a transport failure with its text in @reterr (a reply of any status is 0).
 */
struct buf;
struct mr_transport_ops {
        int (*round_trip)(void *userdata, const char *method, const char *url, const char *payload,
                          long *ret_status, struct buf *reply, struct error_detail *reterr);
};

struct mr_transport {
        const struct mr_transport_ops *ops;
        void *userdata;
};

struct mr_client_config {
        const char *base_url;      /* "http://host:8080", no trailing path; copied */
        const char *api_path;      /* NULL = "/api/model_registry/v1alpha3"; another API of the same
                               * shape (the catalog's "/api/model_catalog/v1alpha1"); copied */
        const char *token;         /* bearer token or NULL; copied */
        long timeout_ms;           /* per request; 0 = 30 s */
        const char *ca_file;       /* PEM bundle for https (CURLOPT_CAINFO), or NULL for libcurl's
                               * default bundle; copied */
        const char *ca_path;       /* directory of hashed CA certificates (CURLOPT_CAPATH; with
                               * OpenSSL a ':'-separated list), or NULL for libcurl's default;
                               * copied */
        bool insecure_skip_verify; /* https without certificate/host verification (this client only) */
        const struct mr_transport *transport; /* borrowed; NULL: libcurl */
};

_warn_unused_result_ int mr_client_new(const struct mr_client_config *cfg, struct mr_client **ret);
struct mr_client *mr_client_free(struct mr_client *c);
DEFINE_CLEANUP_FUNC(struct mr_client *, mr_client_free)

/*
 * method path_and_query (relative to the API base, e.g. "/registered_models?pageSize=1") with an
 * optional JSON body (borrowed). On 2xx stores the decoded body (new reference) in *ret when ret
 * is set and returns the status (> 0).
 */
_warn_unused_result_ int mr_client_call(struct mr_client *c, const char *method,
                                        const char *path_and_query, json_t *body, json_t **ret,
                                        struct error_detail *reterr);

/* As mr_client_call() with a body of content_type (body_len bytes; NULL: none), e.g. the
 * catalog's multipart/form-data /sources/preview. */
_warn_unused_result_ int mr_client_call_raw(struct mr_client *c, const char *method,
                                            const char *path_and_query, const char *content_type,
                                            const char *body, size_t body_len, json_t **ret,
                                            struct error_detail *reterr);

/* GET /registered_model?name= */
_warn_unused_result_ int mr_find_registered_model(struct mr_client *c, const char *name,
                                                  json_t **ret, struct error_detail *reterr);
/* GET /model_version?name=&parentResourceId= */
_warn_unused_result_ int mr_find_model_version(struct mr_client *c, const char *name,
                                               const char *registered_model_id, json_t **ret,
                                               struct error_detail *reterr);
/*
 * GET PREFIX/ID/SUFFIX?QUERY (ID escaped; query as given, already encoded), e.g. the versions of
 * a registered model: ("/registered_models", id, "/versions", "orderBy=CREATE_TIME").
 */
_warn_unused_result_ int mr_get_under(struct mr_client *c, const char *prefix, const char *id,
                                      const char *suffix, const char *query, json_t **ret,
                                      struct error_detail *reterr);

/* GET /serving_environment?name= */
_warn_unused_result_ int mr_find_serving_environment(struct mr_client *c, const char *name,
                                                     json_t **ret, struct error_detail *reterr);
/* POST /serving_environments {"name":…} */
_warn_unused_result_ int mr_create_serving_environment(struct mr_client *c, const char *name,
                                                       json_t **ret, struct error_detail *reterr);
/* GET /inference_services/{id} */
_warn_unused_result_ int mr_get_inference_service(struct mr_client *c, const char *id, json_t **ret,
                                                  struct error_detail *reterr);
/* GET /inference_service?name=&parentResourceId= */
_warn_unused_result_ int mr_find_inference_service(struct mr_client *c, const char *name,
                                                   const char *serving_environment_id, json_t **ret,
                                                   struct error_detail *reterr);

struct mr_inference_service_create {
        const char *name;
        const char *registered_model_id;
        const char *serving_environment_id;
        const char *model_version_id;    /* NULL: omitted */
        const char *runtime;             /* NULL: omitted */
        const char *desired_state;       /* NULL: "DEPLOYED" */
        const char *url;                 /* NULL: no "url" custom property */
        const json_t *custom_properties; /* borrowed, NULL: none; more customProperties (a
                                          * MetadataValue each) beside "url" */
};

/* POST /inference_services */
_warn_unused_result_ int mr_create_inference_service(struct mr_client *c,
                                                     const struct mr_inference_service_create *in,
                                                     json_t **ret, struct error_detail *reterr);
/* PATCH /inference_services/{id} with an InferenceServiceUpdate object (borrowed). */
_warn_unused_result_ int mr_update_inference_service(struct mr_client *c, const char *id,
                                                     json_t *update, json_t **ret,
                                                     struct error_detail *reterr);
