/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Model downloads (libcurl): s3:// (SigV4 by libcurl's CURLOPT_AWS_SIGV4, ListObjectsV2 prefix
 * listing), gs:// (the GCS JSON API: objects list with prefix, alt=media downloads; anonymous or
 * a bearer token), http(s):// (with .tar.gz/.tgz/.zip extraction), pvc:// and local paths
 * (copied).
 *
 * Every transfer has a connect timeout, a stall timeout (less than 1 byte/s for stall_timeout
 * seconds aborts), a total size limit, and retries of transport errors, 5xx and 429 with
 * exponential backoff and jitter. 403/404 and other 4xx fail at once (the caller's reconciler
 * retries later, with its own backoff). Thread-safe: each call uses its own curl handle.
 *
 * Nothing incomplete is reported as done: every write, fsync and close is checked; the free
 * space of the target's file system is checked before a transfer whose size is known (the
 * listing's sizes, Content-Length) and every 16 MiB as bytes arrive; archives are extracted as
 * they arrive (a socket pair to a libarchive thread, never saved whole) under size and entry
 * limits; the body's MD5 is compared with the one storage states (a single-part S3 object's
 * ETag, Content-MD5, GCS md5Hash or x-goog-hash) when it states one.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "agent/mr-resolve.h"
#include "util/macro.h"
#include "util/time-util.h"

#define FETCH_SIZE_MAX_DEFAULT    (64ULL << 30)
#define FETCH_ENTRIES_MAX_DEFAULT 100000ULL

/* An OAuth access token (a GCS service account's, an Azure service principal's) until it
 * expires (monotonic), shared by the download threads. */
struct token_cache {
        pthread_mutex_t lock;
        char *token;
        usec_t expires;
};

struct fetch_config {
        long connect_timeout_sec; /* default 10 */
        long stall_timeout_sec;   /* default 30 */
        uint64_t size_max;        /* per model, default 64 GiB: bytes received, archive content */
        uint64_t entries_max;     /* per archive, default 100,000 */
        unsigned attempts;        /* per transfer, default 4 */
        usec_t retry_base;        /* default 500 ms, doubled per attempt, capped at 30 s */
        char *pvc_root;           /* owned; default /mnt/pvc */
        /* S3 */
        char *s3_endpoint;    /* owned; scheme://host[:port], no trailing '/' */
        char *s3_region;      /* owned */
        bool s3_virtual_host; /* bucket.host/key instead of host/bucket/key */
        bool s3_verify;
        bool s3_etag_md5;    /* a single-part object's ETag is its MD5: checked (default) */
        char *ca_bundle;     /* owned; may be NULL */
        char *access_key;    /* owned; NULL = anonymous */
        char *secret_key;    /* owned */
        char *session_token; /* owned; may be NULL */
        /* GCS */
        char *gcs_endpoint;                  /* owned; scheme://host[:port], no trailing '/' */
        char *gcs_token;                     /* owned; OAuth2 access token, NULL = anonymous */
        char *gcs_credentials;               /* owned; a service-account key file, NULL = none */
        struct token_cache *gcs_cache;       /* owned; its access token */
        struct token_cache *gcs_write_cache; /* owned; its read-write token (uploads) */
        /* Azure Blob Storage */
        char *azure_account;  /* owned; the account key and endpoint belong to; NULL: any */
        char *azure_key;      /* owned; base64 Shared Key, NULL = anonymous */
        char *azure_endpoint; /* owned; BlobEndpoint (Azurite), NULL = <account>.blob.core... */
        char *azure_client_id, *azure_client_secret, *azure_tenant_id; /* owned; a service
                                                                          principal, or NULL */
        char *azure_authority; /* owned; AZURE_AUTHORITY_HOST, default login.microsoftonline.com */
        struct token_cache *azure_cache; /* owned; the service principal's token */
        /* Hugging Face Hub */
        char *hf_endpoint; /* owned; HF_ENDPOINT, default https://huggingface.co */
        char *hf_token;    /* owned; HF_TOKEN (or HUGGING_FACE_HUB_TOKEN), NULL = anonymous */
        /* model-registry:// (agent/mr-resolve.h) */
        struct mr_resolve_config registry;
        /* Per call, set by fetch_model_cancellable() on its own shallow copy (borrowed): once
         * true, a transfer in progress stops (-ECANCELED) and none is started or retried. */
        const atomic_bool *cancel;
        bool quiet_retries; /* a retry is logged at debug, not as a warning (the request logger
                             * counts its failures instead) */
};

/*
 * Fills @c from the environment (KServe's names and AWS's):
 *   AWS_ENDPOINT_URL or S3_ENDPOINT (host[:port] or URL), S3_USE_HTTPS (default 1),
 *   AWS_REGION or AWS_DEFAULT_REGION (default us-east-1), S3_USER_VIRTUAL_BUCKET or
 *   S3_USE_VIRTUAL_BUCKET (default false), S3_VERIFY_SSL (default 1), AWS_CA_BUNDLE,
 *   MODELPLANE_S3_ETAG_MD5 (default 1; 0 for S3-compatible stores whose ETags are not MD5s),
 *   AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), or the same names as files
 *   in $AWS_CREDENTIALS_DIR (a mounted secret); AWS_ANONYMOUS_CREDENTIAL=true (or KServe's
 *   awsAnonymousCredential=true) forces anonymous; "<host>-headers" (KServe's https-host secrets,
 *   a JSON object, uri.h) adds headers to the http(s) downloads from that host;
 *   STORAGE_EMULATOR_HOST (host:port -> http://host:port, or a URL; default
 *   https://storage.googleapis.com), GOOGLE_OAUTH_ACCESS_TOKEN (bearer token for gs://), else
 *   GOOGLE_APPLICATION_CREDENTIALS (a service-account key file: read when a gs:// download
 *   needs a token, its JWT exchanged at its token_uri, the token cached until shortly before
 *   it expires);
 *   AZURE_STORAGE_CONNECTION_STRING (AccountName, AccountKey, BlobEndpoint or
 *   DefaultEndpointsProtocol + EndpointSuffix, UseDevelopmentStorage), AZURE_STORAGE_ACCOUNT,
 *   AZURE_STORAGE_ACCESS_KEY or AZURE_STORAGE_KEY (Shared Key), else a service principal
 *   (AZURE_CLIENT_ID, AZURE_CLIENT_SECRET, AZURE_TENANT_ID; AZURE_AUTHORITY_HOST, default
 *   https://login.microsoftonline.com: a client-credentials token for https://storage.azure.com),
 *   else anonymous;
 *   HF_ENDPOINT (default https://huggingface.co) and HF_TOKEN (or HUGGING_FACE_HUB_TOKEN) for hf://;
 *   MODELPLANE_STALL_TIMEOUT and MODELPLANE_FETCH_ATTEMPTS (storage-initializer has no flags;
 *   the agent's --stall-timeout overrides);
 *   MODEL_REGISTRY_BASE_URL, MODEL_REGISTRY_SCHEME, ALLOWED_ARTIFACT_URI_PREFIXES and
 *   MODEL_REGISTRY_TOKEN for model-registry:// (mr_resolve_config_from_env()).
 * Returns 0, -ENOMEM.
 */
_warn_unused_result_ int fetch_config_from_env(struct fetch_config *c);
void fetch_config_release(struct fetch_config *c);

/*
 * Replaces @c's S3 settings with a caller's (`modelplane async-upload`'s MODEL_SYNC_SOURCE_AWS_*):
 * @endpoint as AWS_ENDPOINT_URL is read (host[:port] gets https://; NULL or "": AWS's endpoint
 * for the region), @region when set, the key pair (NULL: anonymous), no session token.
 * Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int fetch_config_set_s3(struct fetch_config *c, const char *endpoint,
                                             const char *region, const char *access_key,
                                             const char *secret_key);

/* A uniform random number in [0, 1) for backoff jitter (getrandom; the clock as a fallback). */
double fetch_jitter01(void);

/*
 * Downloads @uri into the existing, empty directory @dir. On failure returns a negative errno
 * (-EACCES 403, -ENOENT 404 or nothing under the prefix, -EPERM unsafe entry, -EFBIG size or
 * entry limit, -ENOSPC the volume is full (the message names the space needed and available),
 * -EBADMSG an MD5 mismatch (the message names the object and both sums) or a corrupt archive,
 * -ETIMEDOUT, -EIO, -EPROTONOSUPPORT, -EINVAL) and a message in @reterr naming the object and the
 * server's answer; @dir may then hold partial content (the caller removes it).
 */
_warn_unused_result_ int fetch_model(const struct fetch_config *c, const char *uri, const char *dir,
                                     char *reterr, size_t len_err);
/* Removes everything inside @dir, which stays (a retried stream starts over; a failed download's
 * leftovers go). Returns 0 or a negative errno. */
_warn_unused_result_ int fetch_empty_dir(const char *dir);

/* fetch_model() that stops within about a second of *@cancel turning true: -ECANCELED (the
 * caller removes what @dir holds). @cancel may be NULL. */
_warn_unused_result_ int fetch_model_cancellable(const struct fetch_config *c, const char *uri,
                                                 const char *dir, const atomic_bool *cancel,
                                                 char *reterr, size_t len_err);

/* Connection reuse, per thread. After fetch_thread_keep(), the calling thread's transfers use one
 * libcurl handle, so their connections (HTTP keep-alive), DNS answers and TLS sessions carry over
 * from one transfer to the next (one model's objects, one model after another), as Go's HTTP
 * client does for KServe's agent; fetch_thread_release() closes them, and the thread's transfers
 * use a new handle each again. A thread that keeps must release before it ends. Not shared
 * between threads: libcurl does not support a connection cache used by concurrent threads. */
void fetch_thread_keep(void);
void fetch_thread_release(void);

/* Where fetch_put_object() writes: an S3 or GCS bucket, or an Azure account's container. */
enum fetch_store {
        FETCH_STORE_S3,
        FETCH_STORE_GCS,
        FETCH_STORE_AZURE,
};

struct fetch_object {
        enum fetch_store store;
        const char *bucket;  /* borrowed; the bucket, or the Azure container */
        const char *account; /* borrowed; the Azure account, else NULL */
        const char *key;     /* borrowed; the object's name ('/' kept) */
};

/*
 * Uploads @len bytes of @body as the object @o, with @content_type, and the credentials and
 * endpoints the downloads use (fetch_config_from_env()): S3 PutObject (libcurl's SigV4 with the
 * body's SHA-256), the GCS JSON API's media upload (POST .../upload/storage/v1/b/<bucket>/o?
 * uploadType=media&name=<key>, the bearer of GOOGLE_OAUTH_ACCESS_TOKEN or a service-account
 * key's read-write token, else anonymous), Azure Put Blob (a BlockBlob, Shared Key or the
 * service principal's token). The same timeouts and @c->attempts as downloads; *@c->cancel
 * stops it. Returns 0, -EACCES (401, 403, a token refused), -ENOENT (404: no such bucket),
 * -ETIMEDOUT, -ECANCELED, -EIO, -ENOMEM, with the reason in @reterr.
 */
_warn_unused_result_ int fetch_put_object(const struct fetch_config *c,
                                          const struct fetch_object *o, const void *body,
                                          size_t len, const char *content_type, char *reterr,
                                          size_t len_err);
