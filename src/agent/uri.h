/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Storage URIs of a TrainedModel's storageUri, and the path rules of the model directory. Pure.
 *
 *   s3://bucket/prefix         a folder of objects (every key under prefix/), or one object
 *   gs://bucket/prefix         GCS: objects under prefix/ (or the one object), JSON API
 *   http(s)://host/path        one file; .tar/.tar.gz/.tgz/.zip are extracted
 *   https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX
 *                              Azure Blob Storage: blobs under PREFIX/ (or the one blob)
 *   hf://ORG/REPO[:REVISION]   a Hugging Face Hub model repository at REVISION (default main)
 *   pvc://claim/path           <pvc root>/path of a mounted volume (KServe mounts claims there)
 *   /abs/path, file:///abs     a local directory or file
 *   model-registry://MODEL[/VERSION], model-registry://HOST:PORT/MODEL[/VERSION]
 *                              a registered model version: resolved through the Model Registry
 *                              to its model artifact's URI, then fetched (agent/mr-resolve.h)
 */

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

enum storage_kind {
        STORAGE_S3,
        STORAGE_GCS,
        STORAGE_HTTP,
        STORAGE_LOCAL,
        STORAGE_MODEL_REGISTRY, /* url: the model-registry:// URI, checked by mr_uri_parse() */
        STORAGE_AZURE,          /* url: https://<host>, account, bucket: container, key: prefix */
        STORAGE_HF,             /* bucket: ORG/REPO, key: the revision */
};

enum archive_kind {
        ARCHIVE_NONE,
        ARCHIVE_TAR_GZ, /* .tar.gz, .tgz, .tar: a tar, any compression libarchive reads */
        ARCHIVE_ZIP,
};

struct storage_uri {
        enum storage_kind kind;
        char *bucket;  /* owned; S3/GCS bucket, PVC claim */
        char *key;     /* owned; S3/GCS object prefix without leading '/' (may be ""); PVC path */
        char *url;     /* owned; HTTP(S) URL as given */
        char *path;    /* owned; local path (absolute) */
        char *account; /* owned; Azure storage account */
};

void storage_uri_release(struct storage_uri *u);

/* Returns 0, -EINVAL with the reason in @reterr (naming the URI's fault), -ENOMEM. */
_warn_unused_result_ int storage_uri_parse(const char *uri, struct storage_uri *ret, char *reterr,
                                           size_t len_err);

/* The archive type of an HTTP download, from the URL path (query and fragment ignored). */
enum archive_kind archive_kind_from_url(const char *url);

/*
 * The last path segment of an URL (no query/fragment), as a safe file name; "model" when empty
 * or unsafe. Returns an owned string or NULL on OOM.
 */
char *url_file_name(const char *url);

/*
 * Whether @path (an archive entry or object key relative to the model directory) stays inside
 * it: not empty, not absolute, no ".." segment, no NUL. "./a" and "a//b" are fine.
 */
bool relative_path_is_safe(const char *path);

/*
 * Whether a symbolic link at @entry (a safe relative path) pointing to @target stays inside the
 * model directory, resolved lexically (absolute targets never do).
 */
bool link_target_is_safe(const char *entry, const char *target);

/*
 * KServe's per-host HTTP headers: its credential builder turns a secret with "https-host" and
 * "headers" into the environment variable "<host>-headers" (a JSON object of header names to
 * values), and its agent and storage initializer send those headers with every http(s) download
 * from that host. url_headers_env_name() is the variable's name for @url: its host as written,
 * without user info, port or IPv6 brackets. Returns an owned string; NULL when @url has no
 * host or on OOM (*@ret_oom tells which).
 */
char *url_headers_env_name(const char *url, bool *ret_oom);
/*
 * The header lines of such a value: "Name: value" for each member, in order, as a NULL-terminated
 * owned vector (ce_strv_free(), agent/cloudevent.h). Returns 0, -ENOMEM, or -EINVAL with the
 * reason in @reterr: not a JSON object, a value that is not a string, a name that is not an HTTP
 * token (RFC 9110 5.6.2), a value holding a control character (CR, LF, NUL ...).
 */
_warn_unused_result_ int url_headers_parse(const char *json, char ***ret, char *reterr,
                                           size_t len_err);

/* Whether @name may be a model directory name (one path segment, no leading '.', ≤ 253). */
bool model_name_is_safe(const char *name);
