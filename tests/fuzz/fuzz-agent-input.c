/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's parsers of outside input. The first byte picks one: 0 an S3 ListObjectsV2 page
 * (twice, as two pages), 1 an S3 Error document, 2 a storageUri and archive entry paths (the rest
 * split at the first NUL into entry and link target), 3 SERVING_READINESS_PROBE, 4 models.json,
 * 5 the MD5s storage states (ETag, base64 Content-MD5/md5Hash, x-goog-hash) and a size flag,
 * 6 a GCS objects list page, 7 an Azure List Blobs page (twice, as two pages) and the text as an
 * Azure connection string and as a URL to sign, 8 a Hugging Face model info document, 9 a
 * service-account key file, an OAuth token answer and error.
 * Invariants: a path judged safe has no ".." segment and is not absolute; a link judged safe has
 * a safe entry.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/azure.h"
#include "agent/gcs-json.h"
#include "agent/hf-json.h"
#include "agent/integrity.h"
#include "agent/oauth.h"
#include "agent/plan.h"
#include "agent/readiness.h"
#include "agent/s3-xml.h"
#include "agent/uri.h"
#include "serving/modelconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool has_dotdot(const char *p)
{
        for (const char *s = p; (s = strstr(s, "..")); s++)
                if ((s == p || s[-1] == '/') && (s[2] == 0 || s[2] == '/'))
                        return true;
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *text, err[512];

        if (size < 1)
                return 0;
        text = malloc(size);
        if (!text)
                return 0;
        memcpy(text, data + 1, size - 1);
        text[size - 1] = 0;
        switch (data[0] % 10) {
        case 0: {
                struct s3_list l = { 0 };
                if (s3_list_parse(text, size - 1, &l) == 0)
                        (void)s3_list_parse(text, size - 1, &l);
                for (size_t i = 0; i < l.n_keys; i++)
                        if (!l.keys[i])
                                __builtin_trap();
                s3_list_release(&l);
                break;
        }
        case 1:
                (void)s3_error_parse(text, size - 1, err, sizeof(err));
                break;
        case 2: {
                struct storage_uri u;
                const char *target = text + strlen(text) + 1;
                char *name;
                if (storage_uri_parse(text, &u, err, sizeof(err)) == 0)
                        storage_uri_release(&u);
                (void)archive_kind_from_url(text);
                name = url_file_name(text);
                if (name && !model_name_is_safe(name))
                        __builtin_trap();
                free(name);
                if (relative_path_is_safe(text) && (text[0] == '/' || has_dotdot(text)))
                        __builtin_trap();
                if (target < text + size - 1 && link_target_is_safe(text, target) &&
                    (!relative_path_is_safe(text) || target[0] == '/'))
                        __builtin_trap();
                break;
        }
        case 3: {
                struct readiness_probe p;
                if (readiness_probe_parse(text, 8080, &p, err, sizeof(err)) == 0)
                        readiness_probe_release(&p);
                break;
        }
        case 4: {
                struct model_entries e;
                model_entries_init(&e);
                if (modelconfig_parse(text, &e, err, sizeof(err)) == 0) {
                        struct plan_result r;
                        struct plan_input in = { .desired = &e };
                        if (agent_plan(&in, &r) == 0) {
                                if (r.n_actions != e.n)
                                        __builtin_trap(); /* every new model gets a download */
                                plan_result_release(&r);
                        }
                }
                model_entries_release(&e);
                /* the agent's reading: entries refused alone, every kept name safe */
                struct model_refusals refused = { 0 };
                if (agent_desired_parse(text, NULL, &e, &refused, err, sizeof(err)) == 0) {
                        for (size_t i = 0; i < e.n; i++)
                                if (agent_model_name_problem(e.items[i].name,
                                                             strlen(e.items[i].name)))
                                        __builtin_trap();
                        model_entries_release(&e);
                        model_refusals_release(&refused);
                }
                break;
        }
        case 5: {
                uint8_t m[MD5_SIZE], n[MD5_SIZE];
                char hex[MD5_HEX_SIZE];
                uint64_t v;
                /* an ETag that parses prints back as the same 32 hex digits */
                if (md5_from_etag(text, size - 1, m)) {
                        md5_to_hex(m, hex);
                        if (!md5_from_etag(hex, strlen(hex), n) || memcmp(m, n, MD5_SIZE) != 0)
                                __builtin_trap();
                }
                (void)md5_from_base64(text, size - 1, m);
                (void)md5_from_goog_hash(text, size - 1, m);
                if (size_parse(text, &v) == 0) {
                        char buf[SIZE_STRING_MAX];
                        (void)size_to_string(v, buf);
                }
                break;
        }
        case 6: {
                struct s3_list l = { 0 };
                if (gcs_list_parse(text, size - 1, &l) == 0)
                        for (size_t i = 0; i < l.n_keys; i++)
                                if (!l.keys[i])
                                        __builtin_trap();
                s3_list_release(&l);
                break;
        }
        case 7: {
                struct s3_list l = { 0 };
                struct azure_conn c;
                char *sts = NULL;
                if (azure_list_parse(text, size - 1, &l) == 0)
                        (void)azure_list_parse(text, size - 1, &l);
                for (size_t i = 0; i < l.n_keys; i++)
                        if (!l.keys[i])
                                __builtin_trap();
                s3_list_release(&l);
                if (azure_connection_string_parse(text, &c) == 0)
                        azure_conn_release(&c);
                if (azure_string_to_sign("acct", text, "D", "V", &sts) == 0 && !sts)
                        __builtin_trap();
                free(sts);
                break;
        }
        case 8: {
                struct s3_list l = { 0 };
                char *sha = NULL;
                /* a commit id that parses is hex: it goes into URL paths */
                if (hf_model_info_parse(text, size - 1, &l, &sha) == 0 && sha &&
                    strspn(sha, "0123456789abcdef") != strlen(sha))
                        __builtin_trap();
                free(sha);
                s3_list_release(&l);
                (void)hf_error_parse(text, size - 1, err, sizeof(err));
                break;
        }
        case 9: {
                struct sa_key k;
                char *tok = NULL, *in = NULL;
                uint64_t exp;
                if (sa_key_parse(text, size - 1, &k, err, sizeof(err)) == 0) {
                        if (jwt_signing_input(&k, GCS_READ_SCOPE, 0, &in) == 0 &&
                            strpbrk(in, "+/="))
                                __builtin_trap(); /* base64url, no padding */
                        free(in);
                        sa_key_release(&k);
                }
                /* a token that parses is one header-safe line */
                if (oauth_token_parse(text, size - 1, &tok, &exp) == 0 && strpbrk(tok, "\r\n "))
                        __builtin_trap();
                free(tok);
                (void)oauth_error_parse(text, size - 1, err, sizeof(err));
                break;
        }
        }
        free(text);
        return 0;
}
