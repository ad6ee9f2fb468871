/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The request logger's records, pure: the CloudEvent (HTTP binary mode) that KServe's agent
 * sends for an inference request or response, and the same record as a blob-store line (json,
 * csv), with KServe's field names. No I/O; the logger (logger.c) sends and writes them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define CE_TYPE_REQUEST  "org.kubeflow.serving.inference.request"
#define CE_TYPE_RESPONSE "org.kubeflow.serving.inference.response"

/* One logged message. Every string is borrowed; NULL or "" means absent. */
struct ce_event {
        const char *id;
        const char *type; /* CE_TYPE_* */
        const char *source;
        uint64_t time_usec;     /* when the request arrived / the response was complete */
        uint64_t recorded_usec; /* when the event is sent */
        const char *content_type;
        const char *inference_service, *namespace_, *component, *endpoint;
        /* metadata: KServe's map[string][]string as JSON ({} when none) */
        const char *metadata_json;
        /* annotations: JSON object, NULL when there are none */
        const char *annotations_json;
        const char *log_url, *cert_name;
        bool tls_skip_verify;
        const void *body;
        size_t body_len;
};

/*
 * The HTTP header lines ("Name: value") of @ev in CloudEvents HTTP binary mode (spec 1.0,
 * http-protocol-binding 3.1.3): ce-specversion, ce-id, ce-source, ce-type, ce-time and KServe's
 * extensions (inferenceservicename, namespace, component, endpoint, metadata, annotations,
 * recordedtime), then Content-Type. Values go as KServe's agent sends them (ce_header_encode()).
 * *ret is a NULL-terminated owned vector (ce_strv_free).
 * Returns 0, -EINVAL (no id, type or source; a line break in the content type) or -ENOMEM.
 */
_warn_unused_result_ int ce_http_headers(const struct ce_event *ev, char ***ret);

/* RFC 3339 UTC with microseconds: "2026-12-07T04:20:00.123456Z". @buf is at least 32 bytes. */
void ce_format_time(uint64_t usec, char buf[static 32]);

/*
 * A header value as KServe's agent sends it: CloudEvents' Go SDK, which KServe uses, does not
 * percent-encode values (the binding's 3.1.3.2; sdk-go issue 1331), and the Go, Java and Python
 * SDKs that read KServe's events do not decode them, so values go as they are ("Ce-Metadata:
 * {"X-User":["a"]}"). Only control characters (0x00-0x1F, 0x7F), which would break the header
 * (Go's client refuses to send them at all), are percent-encoded. Owned, NULL on OOM.
 */
char *ce_header_encode(const char *s);

/* The blob-store record as KServe's JSON marshaller writes one LogRequest (bytes base64).
 * Owned, NULL on OOM or bad metadata/annotations JSON. */
char *ce_record_json(const struct ce_event *ev);

/* The CSV header line and one record line (RFC 4180 quoting, "\n"-terminated), KServe's
 * columns: url bytes contentType reqType id sourceUri inferenceService namespace component
 * endpoint metadata annotations certName tlsSkipVerify. Owned, NULL on OOM. */
const char *ce_record_csv_header(void);
char *ce_record_csv(const struct ce_event *ev);

/*
 * A batch of @n (at least 1) records as KServe's embedded marshallers write one blob
 * (pkg/logger marshaller_json.go, marshaller_csv.go): json: a single record is the object of
 * ce_record_json(), several are a JSON array of them; csv: the header line, then a line per
 * record. Owned, NULL on OOM.
 */
char *ce_records_text(const struct ce_event *evs, size_t n, bool csv);

/*
 * The body KServe's agent POSTs to a log marshaller (--log-marshaller-url, marshaller_http.go):
 * the batch as a JSON array of Go's LogRequest. That is ce_record_json()'s object but for url and
 * sourceUri, which are Go url.URL structures ({"Scheme":"http","Opaque":"","User":null,
 * "Host":"...","Path":"/",...}, as encoding/json writes them), so that a marshaller that decodes
 * into KServe's type, as KServe's own does, reads it. Owned, NULL on OOM.
 */
char *ce_marshal_request(const struct ce_event *evs, size_t n);

/*
 * The metadata of a request (KServe's --metadata-headers): the values of the request headers
 * named in @allow (case-insensitive), as a JSON object of arrays keyed by the header's canonical
 * Go spelling ("x-user-id" -> "X-User-Id"). @names/@values are the request's @n headers.
 * Owned JSON text ("{}" when none), NULL on OOM.
 */
char *ce_metadata_json(const char *const *allow, size_t n_allow, const char *const *names,
                       const char *const *values, size_t n);

/* The annotations JSON object of KServe's --metadata-annotations "k=v" items (ones without '='
 * are skipped). Owned; NULL for none or OOM. */
char *ce_annotations_json(const char *const *items, size_t n);

void ce_strv_free(char **v);
DEFINE_CLEANUP_FUNC(char **, ce_strv_free)

/* Where blob-store records go (--log-url), as KServe's agent reads it: s3://BUCKET[/PREFIX],
 * gs://BUCKET[/PREFIX], abfs://CONTAINER@ACCOUNT[.HOST...][/PREFIX] (the bucket is the user
 * part), or modelplane's file:///DIR. */
enum ce_store {
        CE_STORE_FILE,
        CE_STORE_S3,
        CE_STORE_GCS,
        CE_STORE_AZURE,
        CE_STORE__MAX,
        CE_STORE__INVALID = -22,
};

struct ce_store_url {
        enum ce_store store;
        char *bucket;  /* owned; the bucket or container; NULL for file */
        char *account; /* owned; Azure's account (the host's first label), else NULL */
        char *prefix;  /* owned; the key prefix without leading or trailing '/' (may be ""), or
                        * file's absolute DIR */
};

/* Returns 0, -EPROTONOSUPPORT (not one of the four schemes: an http(s) sink), -EINVAL (no
 * bucket, no CONTAINER@ACCOUNT, a bucket or account with other characters than letters, digits,
 * '.', '-', '_', a prefix with a ".." segment, a query or fragment) or -ENOMEM. */
_warn_unused_result_ int ce_store_url_parse(const char *url, struct ce_store_url *ret);
void ce_store_url_release(struct ce_store_url *u);

/*
 * KServe's object key of a record: the non-empty ones of @parts (the URL's prefix, namespace,
 * inference service, component, --log-store-path) joined by '/', then "/<id>-request.<ext>" or
 * "-response.<ext>" (no leading '/' when every part is empty). Returns 0 with an owned key,
 * -EINVAL when @id is no file name (empty, ".", "..", '/' in it), -ENOMEM.
 */
_warn_unused_result_ int ce_record_key(const char *const parts[static 5], const char *id,
                                       bool response, const char *ext, char **ret);
