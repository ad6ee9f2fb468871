/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Azure Blob Storage, the pure part: connection strings, the Shared Key signature of a request
 * (HMAC-SHA256 of the string to sign, gnutls; no I/O) and the List Blobs page
 * (agent/s3-xml.h: azure_list_parse()).
 *
 * A Shared Key request carries x-ms-date and x-ms-version and
 * "Authorization: SharedKey <account>:<base64 HMAC-SHA256(key, string to sign)>"; for a GET
 * without body or conditional headers the string to sign is "GET" and eleven empty lines (the
 * standard headers), then the x-ms-* headers ("name:value\n", sorted), then the canonicalized
 * resource: "/<account><URL path as sent>" and, per query parameter sorted by name,
 * "\n<name>:<value>" (names lowercased, values decoded).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macro.h"

#define AZURE_API_VERSION "2021-08-06"

/* The fields of an AZURE_STORAGE_CONNECTION_STRING the agent uses ("K=V;K=V", values may hold
 * '='): AccountName, AccountKey, BlobEndpoint, or DefaultEndpointsProtocol + EndpointSuffix
 * (then the endpoint is <proto>://<account>.blob.<suffix>). UseDevelopmentStorage=true is
 * Azurite's well-known account on http://127.0.0.1:10000/devstoreaccount1. */
struct azure_conn {
        char *account;  /* owned, may be NULL */
        char *key;      /* owned, base64, may be NULL */
        char *endpoint; /* owned, may be NULL; no trailing '/' */
};

void azure_conn_release(struct azure_conn *c);
/* Returns 0, -EINVAL (not "K=V" pairs), -ENOMEM. */
_warn_unused_result_ int azure_connection_string_parse(const char *s, struct azure_conn *ret);

/*
 * The string to sign of a GET of @url (scheme://host[:port]/path?query, percent-encoded as sent)
 * for @account with the headers x-ms-date: @date and x-ms-version: @version. Returns 0 with an
 * owned string, -EINVAL (no path, a bad %-escape), -ENOMEM.
 */
_warn_unused_result_ int azure_string_to_sign(const char *account, const char *url,
                                              const char *date, const char *version, char **ret);

/* A request with a body, as the string to sign sees it (Put Blob: the request logger's
 * uploads). Strings borrowed. */
struct azure_upload {
        const char *method;       /* "PUT" */
        uint64_t content_length;  /* 0: the empty string, as versions since 2015-02-21 want */
        const char *content_type; /* may be NULL */
        const char *blob_type;    /* x-ms-blob-type ("BlockBlob"), may be NULL */
};

/* azure_string_to_sign() of an upload @up: its verb, Content-Length, Content-Type and
 * x-ms-blob-type header signed too. Same returns. */
_warn_unused_result_ int azure_string_to_sign_upload(const char *account, const char *url,
                                                     const char *date, const char *version,
                                                     const struct azure_upload *up, char **ret);

/* base64(HMAC-SHA256(base64-decoded @key, @text)). Returns 0, -EINVAL (@key not base64),
 * -ENOMEM, -EIO (no HMAC). */
_warn_unused_result_ int azure_shared_key_signature(const char *key, const char *text, char **ret);

/*
 * The endpoint ("https://<host>"), account, container and prefix of KServe's Azure Blob URIs:
 * https://<account>.blob.core.windows.net/<container>/<prefix> and the DNS zone form
 * https://<account>.z<NN>.blob.storage.azure.net/<container>/<prefix>. Returns true with owned
 * strings (prefix without leading or trailing '/', may be ""), false when @url is not one (or
 * on OOM: then *ret_account is NULL too). A query (a SAS token) is not one.
 */
bool azure_blob_url_split(const char *url, char **ret_endpoint, char **ret_account,
                          char **ret_container, char **ret_prefix);
