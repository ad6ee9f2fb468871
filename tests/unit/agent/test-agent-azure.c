/* SPDX-License-Identifier: Apache-2.0 */
/* agent/azure.h: Shared Key strings to sign and signatures, connection strings, blob URLs, and
 * the List Blobs page (agent/s3-xml.h). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "agent/azure.h"
#include "agent/s3-xml.h"

#define AZURITE_KEY \
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

Test(azure, string_to_sign_sorts_and_decodes_the_query)
{
        char *sts = NULL, *sig = NULL;

        /* parameters as sent (any order, escaped); signed sorted, lowercased, decoded */
        cr_assert_eq(azure_string_to_sign("devstoreaccount1",
                                          "http://127.0.0.1:10000/devstoreaccount1/models?"
                                          "restype=container&prefix=iris%2Fv1%2F&comp=list&"
                                          "Marker=2%21a%20b",
                                          "Mon, 07 Dec 2026 04:00:00 GMT", "2021-08-06", &sts),
                     0);
        cr_assert_str_eq(sts, "GET\n\n\n\n\n\n\n\n\n\n\n\n"
                              "x-ms-date:Mon, 07 Dec 2026 04:00:00 GMT\nx-ms-version:2021-08-06\n"
                              "/devstoreaccount1/devstoreaccount1/models\ncomp:list\n"
                              "marker:2!a b\nprefix:iris/v1/\nrestype:container");
        /* the HMAC checked against Python's hmac/hashlib of the same string */
        cr_assert_eq(azure_shared_key_signature(AZURITE_KEY, sts, &sig), 0);
        cr_assert_str_eq(sig, "6cfqCecy/QvMebjVPqLM8SYE/cOXWoTYr6U5Ii/wLwE=");
        free(sts);
        free(sig);

        cr_assert_eq(azure_string_to_sign("acct", "https://acct.blob.core.windows.net/c/a%20b.bin",
                                          "D", "V", &sts),
                     0);
        cr_assert_str_eq(sts, "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:D\nx-ms-version:V\n"
                              "/acct/c/a%20b.bin");
        free(sts);
        cr_assert_eq(azure_string_to_sign("a", "https://h", "D", "V", &sts), -EINVAL);
        cr_assert_eq(azure_string_to_sign("a", "https://h/c?p=%zz", "D", "V", &sts), -EINVAL);
        cr_assert_eq(azure_string_to_sign("a", "https://h/c?p=%00", "D", "V", &sts), -EINVAL);
        cr_assert_eq(azure_shared_key_signature("not base64!", "x", &sig), -EINVAL);
}

Test(azure, string_to_sign_of_an_upload)
{
        const struct azure_upload up = { .method = "PUT",
                                         .content_length = 17,
                                         .content_type = "text/csv",
                                         .blob_type = "BlockBlob" };
        const struct azure_upload empty = { .method = "PUT" };
        char *sts = NULL, *sig = NULL;

        /* Put Blob: the verb, Content-Length, Content-Type and x-ms-blob-type are signed */
        cr_assert_eq(azure_string_to_sign_upload(
                             "devstoreaccount1",
                             "http://127.0.0.1:10000/devstoreaccount1/logs/ns/a%20b-request.csv",
                             "Mon, 07 Dec 2026 04:00:00 GMT", "2021-08-06", &up, &sts),
                     0);
        cr_assert_str_eq(sts, "PUT\n\n\n17\n\ntext/csv\n\n\n\n\n\n\n"
                              "x-ms-blob-type:BlockBlob\n"
                              "x-ms-date:Mon, 07 Dec 2026 04:00:00 GMT\nx-ms-version:2021-08-06\n"
                              "/devstoreaccount1/devstoreaccount1/logs/ns/a%20b-request.csv");
        /* the HMAC checked against Python's hmac/hashlib of the same string */
        cr_assert_eq(azure_shared_key_signature(AZURITE_KEY, sts, &sig), 0);
        cr_assert_str_eq(sig, "MDH56qElG6h0gb2ctC5+SZMapVEWrKEYBDQVXMVaadY=");
        free(sts);
        free(sig);
        /* an empty body: Content-Length is the empty string (versions since 2015-02-21) */
        cr_assert_eq(azure_string_to_sign_upload("a", "https://h/c/b", "D", "V", &empty, &sts), 0);
        cr_assert_str_eq(sts, "PUT\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:D\nx-ms-version:V\n/a/c/b");
        free(sts);
        cr_assert_eq(azure_string_to_sign_upload("a", "https://h", "D", "V", &up, &sts), -EINVAL);
}

Test(azure, connection_strings)
{
        struct azure_conn c;

        cr_assert_eq(azure_connection_string_parse(
                             "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
                             "AccountKey=" AZURITE_KEY ";BlobEndpoint=http://127.0.0.1:10000/"
                             "devstoreaccount1/;",
                             &c),
                     0);
        cr_assert_str_eq(c.account, "devstoreaccount1");
        cr_assert_str_eq(c.key, AZURITE_KEY); /* '=' inside a value kept */
        cr_assert_str_eq(c.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
        azure_conn_release(&c);

        cr_assert_eq(azure_connection_string_parse("AccountName=acct;AccountKey=a2V5;"
                                                   "EndpointSuffix=core.windows.net",
                                                   &c),
                     0);
        cr_assert_str_eq(c.endpoint, "https://acct.blob.core.windows.net");
        azure_conn_release(&c);

        cr_assert_eq(azure_connection_string_parse("UseDevelopmentStorage=true", &c), 0);
        cr_assert_str_eq(c.account, "devstoreaccount1");
        cr_assert_str_eq(c.key, AZURITE_KEY);
        cr_assert_str_eq(c.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
        azure_conn_release(&c);

        cr_assert_eq(azure_connection_string_parse("garbage", &c), -EINVAL);
        cr_assert_eq(azure_connection_string_parse("=x", &c), -EINVAL);
        cr_assert_eq(azure_connection_string_parse("", &c), 0);
        cr_assert_null(c.account);
        azure_conn_release(&c);
}

Test(azure, blob_urls)
{
        char *e, *a, *c, *p;

        cr_assert(azure_blob_url_split("https://Acct.blob.core.windows.net/models/iris/v1/", &e, &a,
                                       &c, &p));
        cr_assert_str_eq(e, "https://acct.blob.core.windows.net");
        cr_assert_str_eq(a, "acct");
        cr_assert_str_eq(c, "models");
        cr_assert_str_eq(p, "iris/v1");
        free(e);
        free(a);
        free(c);
        free(p);
        cr_assert(
                azure_blob_url_split("https://acct.blob.core.windows.net/models", &e, &a, &c, &p));
        cr_assert_str_eq(p, "");
        free(e);
        free(a);
        free(c);
        free(p);
        /* the DNS zone endpoints */
        cr_assert(azure_blob_url_split("https://acct.z12.blob.storage.azure.net/models/x", &e, &a,
                                       &c, &p));
        cr_assert_str_eq(e, "https://acct.z12.blob.storage.azure.net");
        cr_assert_str_eq(a, "acct");
        cr_assert_str_eq(p, "x");
        free(e);
        free(a);
        free(c);
        free(p);
        static const char *const no[] = {
                "http://acct.blob.core.windows.net/models/x",  /* KServe's form is https */
                "https://blob.core.windows.net/models/x",      /* no account */
                "https://a.b.blob.core.windows.net/models/x",  /* two labels */
                "https://acct.blob.core.windows.net/",         /* no container */
                "https://acct.blob.core.windows.net/c/x?sv=1", /* a SAS query */
                "https://acct.blob.core.windows.net.evil.com/c/x",
                "https://example.com/acct.blob.core.windows.net/c",
                "https://acct.z123.blob.storage.azure.net/c/x",
                "https://acct.blob.storage.azure.net/c/x",
                "https://acct.zz.blob.storage.azure.net/c/x",
                "https://user@acct.blob.core.windows.net/c/x",
        };
        for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
                cr_assert(!azure_blob_url_split(no[i], &e, &a, &c, &p), "%s", no[i]);
                cr_assert_null(a);
        }
}

Test(azure, list_blobs_pages)
{
        struct s3_list l = { 0 };
        const char *page1 =
                "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults "
                "ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\" ContainerName=\"m\">"
                "<Prefix>iris/</Prefix><MaxResults>2</MaxResults><Blobs>"
                "<Blob><Name>iris/model.joblib</Name><Properties><Content-Length>1234"
                "</Content-Length><Content-MD5>1B2M2Y8AsgTpgAmY7PhCfg==</Content-MD5>"
                "<BlobType>BlockBlob</BlobType></Properties></Blob>"
                "<Blob><Name>iris/a &amp; b/settings.json</Name><Properties><Content-Length>7"
                "</Content-Length><Content-MD5 /></Properties></Blob>"
                "</Blobs><NextMarker>2!84!MDAwMDE5IWlyaXMvc2V0dGluZ3MuanNvbg--</NextMarker>"
                "</EnumerationResults>";
        const char *page2 = "<EnumerationResults><Blobs><Blob><Name>iris/z</Name></Blob></Blobs>"
                            "<NextMarker /></EnumerationResults>";

        cr_assert_eq(azure_list_parse(page1, strlen(page1), &l), 0);
        cr_assert_eq(l.n_keys, 2);
        cr_assert_str_eq(l.keys[0], "iris/model.joblib");
        cr_assert_eq(l.sizes[0], 1234);
        cr_assert_str_eq(l.md5s[0], "1B2M2Y8AsgTpgAmY7PhCfg==");
        cr_assert_str_eq(l.keys[1], "iris/a & b/settings.json");
        cr_assert_null(l.md5s[1]);
        cr_assert(l.truncated);
        cr_assert_str_eq(l.next_token, "2!84!MDAwMDE5IWlyaXMvc2V0dGluZ3MuanNvbg--");
        cr_assert_eq(azure_list_parse(page2, strlen(page2), &l), 0);
        cr_assert_eq(l.n_keys, 3);
        cr_assert_eq(l.sizes[2], S3_SIZE_UNKNOWN);
        cr_assert(!l.truncated);
        cr_assert_null(l.next_token);
        s3_list_release(&l);

        static const char *const bad[] = {
                "",
                "<ListBucketResult/>",
                "<EnumerationResults><Blobs><Blob><Properties/></Blob></Blobs>",
                "<EnumerationResults><Blobs><Blob><Name>a&bogus;</Name></Blob></Blobs>",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_lt(azure_list_parse(bad[i], strlen(bad[i]), &l), 0, "%s", bad[i]);
                s3_list_release(&l);
        }
        /* an empty container: no Blobs at all */
        cr_assert_eq(azure_list_parse("<EnumerationResults><Blobs /><NextMarker/>"
                                      "</EnumerationResults>",
                                      64, &l),
                     0);
        cr_assert_eq(l.n_keys, 0);
        s3_list_release(&l);
}
