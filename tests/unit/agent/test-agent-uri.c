/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cloudevent.h"
#include "agent/mr-uri.h"
#include "agent/s3-xml.h"
#include "agent/uri.h"

static struct storage_uri parse_ok(const char *s)
{
        struct storage_uri u;
        char err[256] = "";

        cr_assert_eq(storage_uri_parse(s, &u, err, sizeof(err)), 0, "%s: %s", s, err);
        return u;
}

static void parse_bad(const char *s, const char *needle)
{
        struct storage_uri u;
        char err[256] = "";

        cr_assert_eq(storage_uri_parse(s, &u, err, sizeof(err)), -EINVAL, "%s accepted",
                     s ? s : "(null)");
        cr_assert(strstr(err, needle), "'%s' does not name '%s'", err, needle);
}

Test(uri, s3)
{
        struct storage_uri u = parse_ok("s3://bucket/a/b/");

        cr_assert_eq(u.kind, STORAGE_S3);
        cr_assert_str_eq(u.bucket, "bucket");
        cr_assert_str_eq(u.key, "a/b");
        storage_uri_release(&u);
        u = parse_ok("s3://bucket");
        cr_assert_str_eq(u.key, "");
        storage_uri_release(&u);
        u = parse_ok("s3://bucket//x");
        cr_assert_str_eq(u.key, "x");
        storage_uri_release(&u);
}

Test(uri, others)
{
        struct storage_uri u = parse_ok("gs://b/k");

        cr_assert_eq(u.kind, STORAGE_GCS);
        storage_uri_release(&u);
        u = parse_ok("https://example.com/m.tar.gz?x=1");
        cr_assert_eq(u.kind, STORAGE_HTTP);
        cr_assert_str_eq(u.url, "https://example.com/m.tar.gz?x=1");
        storage_uri_release(&u);
        u = parse_ok("pvc://claim/models/iris");
        cr_assert_eq(u.kind, STORAGE_LOCAL);
        cr_assert_str_eq(u.bucket, "claim");
        cr_assert_str_eq(u.key, "models/iris");
        storage_uri_release(&u);
        u = parse_ok("/mnt/data/m");
        cr_assert_str_eq(u.path, "/mnt/data/m");
        storage_uri_release(&u);
        u = parse_ok("file:///mnt/data/m");
        cr_assert_str_eq(u.path, "/mnt/data/m");
        storage_uri_release(&u);
}

Test(uri, errors_name_the_fault)
{
        parse_bad(NULL, "empty");
        parse_bad("", "empty");
        parse_bad("s3:///key", "no bucket");
        parse_bad("ftp://host/x", "unsupported scheme 'ftp'");
        parse_bad("models/iris", "not a URI");
        parse_bad("http:///x", "no host");
        parse_bad("pvc://claim/../../etc", "leaves the volume");
        parse_bad("file://relative", "absolute");
        parse_bad("s3://b/k\nx", "line break");
}

Test(uri, archive_kind)
{
        cr_assert_eq(archive_kind_from_url("http://h/a.tar.gz"), ARCHIVE_TAR_GZ);
        cr_assert_eq(archive_kind_from_url("http://h/a.TGZ?sig=1#f"), ARCHIVE_TAR_GZ);
        cr_assert_eq(archive_kind_from_url("https://h/p/a.tar"), ARCHIVE_TAR_GZ); /* as KServe */
        cr_assert_eq(archive_kind_from_url("https://h/p/a.zip"), ARCHIVE_ZIP);
        cr_assert_eq(archive_kind_from_url("https://h/p/a.zip.json"), ARCHIVE_NONE);
        cr_assert_eq(archive_kind_from_url("https://h/model.joblib"), ARCHIVE_NONE);
        cr_assert_eq(archive_kind_from_url("https://h.tar.gz/"), ARCHIVE_NONE);
}

Test(uri, url_file_name)
{
        char *n = url_file_name("http://h/dir/model.joblib?x=y");
        cr_assert_str_eq(n, "model.joblib");
        free(n);
        n = url_file_name("http://h/");
        cr_assert_str_eq(n, "model");
        free(n);
        n = url_file_name("http://h/a/..");
        cr_assert_str_eq(n, "model");
        free(n);
        n = url_file_name("http://h/a/%2e%2e");
        cr_assert_str_eq(n, "model");
        free(n);
}

Test(path, relative_safety)
{
        cr_assert(relative_path_is_safe("a"));
        cr_assert(relative_path_is_safe("./a/b"));
        cr_assert(relative_path_is_safe("a//b/"));
        cr_assert(relative_path_is_safe("a/..b/c.."));
        cr_assert_not(relative_path_is_safe(""));
        cr_assert_not(relative_path_is_safe("/etc/passwd"));
        cr_assert_not(relative_path_is_safe(".."));
        cr_assert_not(relative_path_is_safe("../x"));
        cr_assert_not(relative_path_is_safe("a/../../x"));
        cr_assert_not(relative_path_is_safe("a/.."));
        cr_assert_not(relative_path_is_safe(NULL));
}

Test(path, link_targets)
{
        cr_assert(link_target_is_safe("a/link", "b"));
        cr_assert(link_target_is_safe("a/link", "../b"));
        cr_assert(link_target_is_safe("a/b/link", "../../c"));
        cr_assert(link_target_is_safe("link", "./x/./y"));
        cr_assert_not(link_target_is_safe("link", "../x"));
        cr_assert_not(link_target_is_safe("a/link", "../../x"));
        cr_assert_not(link_target_is_safe("a/link", "/etc/passwd"));
        cr_assert_not(link_target_is_safe("a/link", "b/../../../x"));
        cr_assert_not(link_target_is_safe("a/link", ""));
        cr_assert_not(link_target_is_safe("../link", "x"));
}

Test(path, model_names)
{
        char long_name[300];

        memset(long_name, 'a', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = 0;
        cr_assert(model_name_is_safe("iris-v1"));
        cr_assert_not(model_name_is_safe(""));
        cr_assert_not(model_name_is_safe(".mp-tmp-x"));
        cr_assert_not(model_name_is_safe(".."));
        cr_assert_not(model_name_is_safe("a/b"));
        cr_assert_not(model_name_is_safe(long_name));
}

static const char page1[] =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"
        "<Prefix>m/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>"
        "<NextContinuationToken>tok&amp;1==</NextContinuationToken>"
        "<Contents><Key>m/a&amp;b.txt</Key><Size>3</Size></Contents>"
        "<Contents><Key>m/caf&#233;/&#x4E2D;</Key><Size>4</Size></Contents></ListBucketResult>";

Test(s3xml, list_pages)
{
        struct s3_list l = { 0 };
        static const char page2[] = "<ListBucketResult><IsTruncated>false</IsTruncated>"
                                    "<Contents><Key>m/z</Key></Contents></ListBucketResult>";

        cr_assert_eq(s3_list_parse(page1, strlen(page1), &l), 0);
        cr_assert_eq(l.n_keys, 2);
        cr_assert_str_eq(l.keys[0], "m/a&b.txt");
        cr_assert_str_eq(l.keys[1], "m/caf\xc3\xa9/\xe4\xb8\xad");
        cr_assert(l.truncated);
        cr_assert_str_eq(l.next_token, "tok&1==");
        cr_assert_eq(s3_list_parse(page2, strlen(page2), &l), 0);
        cr_assert_eq(l.n_keys, 3);
        cr_assert_not(l.truncated);
        cr_assert_null(l.next_token);
        s3_list_release(&l);
}

Test(s3xml, list_malformed)
{
        struct s3_list l = { 0 };
        static const char *bad[] = {
                "<Error><Code>x</Code></Error>",
                "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
                "<ListBucketResult><Contents><Key>a&bogus;</Key></Contents></ListBucketResult>",
                "<ListBucketResult><Contents><Key>&#0;</Key></Contents></ListBucketResult>",
                "<ListBucketResult><Contents><Key>&#xD800;</Key></Contents></ListBucketResult>",
                "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(s3_list_parse(bad[i], strlen(bad[i]), &l), -EBADMSG, "%s", bad[i]);
                s3_list_release(&l);
        }
}

Test(s3xml, errors)
{
        char buf[128] = "untouched";
        static const char e[] = "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code>"
                                "<Message>Access &lt;Denied&gt;</Message></Error>";

        cr_assert(s3_error_parse(e, strlen(e), buf, sizeof(buf)));
        cr_assert_str_eq(buf, "AccessDenied: Access <Denied>");
        cr_assert_not(s3_error_parse("oops", 4, buf, sizeof(buf)));
}

/* model-registry:// (agent/mr-uri.h) */

static void mr_ok(const char *s, const char *host, const char *model, const char *version)
{
        struct mr_uri u;
        char err[512] = "";

        cr_assert_eq(mr_uri_parse(s, &u, err, sizeof(err)), 0, "%s: %s", s, err);
        if (host)
                cr_assert_str_eq(u.host, host, "%s", s);
        else
                cr_assert_null(u.host, "%s", s);
        cr_assert_str_eq(u.model, model, "%s", s);
        if (version)
                cr_assert_str_eq(u.version, version, "%s", s);
        else
                cr_assert_null(u.version, "%s", s);
        mr_uri_release(&u);
}

static void mr_bad(const char *s, const char *needle)
{
        struct mr_uri u;
        char err[512] = "";

        cr_assert_eq(mr_uri_parse(s, &u, err, sizeof(err)), -EINVAL, "%s", s);
        cr_assert(strstr(err, needle), "%s: %s", s, err);
}

Test(mr_uri, forms)
{
        mr_ok("model-registry://iris", NULL, "iris", NULL);
        mr_ok("model-registry://iris/v1", NULL, "iris", "v1");
        mr_ok("model-registry://a.b/v1", NULL, "a.b", "v1");
        mr_ok("model-registry://registry.kubeflow.svc:8080/iris", "registry.kubeflow.svc:8080",
              "iris", NULL);
        mr_ok("model-registry://registry:8080/iris/v1", "registry:8080", "iris", "v1");
        mr_ok("model-registry://registry/iris/v1", "registry", "iris", "v1");
        mr_ok("model-registry://fraud%20detector/2026%2F12", NULL, "fraud detector", "2026/12");
}

Test(mr_uri, refusals)
{
        char big[2100];

        mr_bad("s3://bucket/x", "not a model-registry:// URI");
        mr_bad("model-registry://", "an empty segment");
        mr_bad("model-registry:///v1", "an empty segment");
        mr_bad("model-registry://iris/", "an empty segment");
        mr_bad("model-registry://a//b", "an empty segment");
        mr_bad("model-registry://h:1/a/b/c", "more than three segments");
        mr_bad("model-registry://iris%0a", "control character");
        mr_bad("model-registry://iris%00", "control character");
        mr_bad("model-registry://iris%2", "bad %-escape");
        mr_bad("model-registry://iris%g0", "bad %-escape");
        memset(big, 'a', sizeof(big) - 1);
        memcpy(big, "model-registry://", 17);
        big[sizeof(big) - 1] = 0;
        mr_bad(big, "longer than 2048 bytes");
        cr_assert(mr_uri_is("model-registry://x"));
        cr_assert_not(mr_uri_is("Model-Registry://x"));
        cr_assert_not(mr_uri_is(NULL));
}

Test(mr_uri, storage_uri_accepts_and_checks_it)
{
        struct storage_uri u = parse_ok("model-registry://iris/v1");

        cr_assert_eq(u.kind, STORAGE_MODEL_REGISTRY);
        cr_assert_str_eq(u.url, "model-registry://iris/v1");
        storage_uri_release(&u);
        parse_bad("model-registry://iris//v1", "an empty segment");
}

Test(uri, azure_blob)
{
        struct storage_uri u = parse_ok("https://acct.blob.core.windows.net/models/iris/v1");

        cr_assert_eq(u.kind, STORAGE_AZURE);
        cr_assert_str_eq(u.account, "acct");
        cr_assert_str_eq(u.bucket, "models");
        cr_assert_str_eq(u.key, "iris/v1");
        storage_uri_release(&u);
        /* another https host, or Azure's without a container, is plain http */
        u = parse_ok("https://acct.blob.core.windows.net/");
        cr_assert_eq(u.kind, STORAGE_HTTP);
        storage_uri_release(&u);
        parse_bad("https://acct.blob.core.windows.net/models/../x", "blob prefix");
}

Test(uri, hf)
{
        struct storage_uri u = parse_ok("hf://ibm-granite/granite-3.0-2b-instruct");

        cr_assert_eq(u.kind, STORAGE_HF);
        cr_assert_str_eq(u.bucket, "ibm-granite/granite-3.0-2b-instruct");
        cr_assert_str_eq(u.key, "main");
        storage_uri_release(&u);
        u = parse_ok("hf://org/repo:0123abc");
        cr_assert_str_eq(u.key, "0123abc");
        storage_uri_release(&u);
        u = parse_ok("hf://org/repo:refs/pr/1");
        cr_assert_str_eq(u.key, "refs/pr/1");
        storage_uri_release(&u);
        static const char *const bad[] = { "hf://",          "hf://repo",      "hf://org/",
                                           "hf:///repo",     "hf://a/b/c",     "hf://org/re po",
                                           "hf://../repo",   "hf://org/a..b",  "hf://org/repo:",
                                           "hf://org/r:x y", "hf://org/r:a?b", "hf://o--x/r" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                parse_bad(bad[i], bad[i]);
}

/* KServe's per-host headers: "<host>-headers" (agent/uri.h) */

static void env_name_is(const char *url, const char *want)
{
        bool oom = true;
        char *name = url_headers_env_name(url, &oom);

        cr_assert_not(oom);
        if (want)
                cr_assert_str_eq(name, want, "%s", url);
        else
                cr_assert_null(name, "%s", url);
        free(name);
}

Test(uri, headers_env_name)
{
        env_name_is("https://models.example.com/iris/model.joblib", "models.example.com-headers");
        env_name_is("http://127.0.0.1:8000/m.bin", "127.0.0.1-headers");
        env_name_is("https://user:pw@Host.Example:443/x?y=1", "Host.Example-headers");
        env_name_is("http://[::1]:8080/m", "::1-headers");
        env_name_is("https://h?x", "h-headers");
        env_name_is("https:///path", NULL);
        env_name_is("no-scheme", NULL);
}

static void headers_are(const char *json, const char *const *want, size_t n)
{
        char **v = NULL, err[256] = "";

        cr_assert_eq(url_headers_parse(json, &v, err, sizeof(err)), 0, "%s: %s", json, err);
        for (size_t i = 0; i < n; i++)
                cr_assert_str_eq(v[i], want[i]);
        cr_assert_null(v[n]);
        ce_strv_free(v);
}

static void headers_bad(const char *json, const char *needle)
{
        char **v = NULL, err[256] = "";

        cr_assert_eq(url_headers_parse(json, &v, err, sizeof(err)), -EINVAL, "%s accepted", json);
        cr_assert(strstr(err, needle), "%s: '%s' does not say '%s'", json, err, needle);
        cr_assert_null(v);
}

Test(uri, headers_parse)
{
        static const char *const two[] = { "Authorization: Bearer abc", "X-Api-Key: k 1" };

        headers_are("{\"Authorization\":\"Bearer abc\",\"X-Api-Key\":\"k 1\"}", two, 2);
        headers_are("{}", two, 0);
        headers_bad("[\"a\"]", "not a JSON object");
        headers_bad("Authorization: x", "not a JSON object");
        headers_bad("{\"A\":1}", "not a string");
        headers_bad("{\"A B\":\"x\"}", "not a header name");
        headers_bad("{\"\":\"x\"}", "not a header name");
        headers_bad("{\"A\":\"x\\r\\nEvil: 1\"}", "control character");
        headers_bad("{\"A\":\"x\",\"A\":\"y\"}", "not a JSON object");
}

/* upstream's "?namespace=": the registry of that namespace; other parameters ignored */
Test(mr_uri, namespace_query)
{
        struct mr_uri u;
        char err[512] = "";

        cr_assert_eq(mr_uri_parse("model-registry://iris/v1?namespace=team-a", &u, err,
                                  sizeof(err)),
                     0, "%s", err);
        cr_assert_str_eq(u.model, "iris");
        cr_assert_str_eq(u.version, "v1");
        cr_assert_str_eq(u.ns, "team-a");
        cr_assert_null(u.host);
        mr_uri_release(&u);
        cr_assert_eq(mr_uri_parse("model-registry://iris?x=1&namespace=t_1&y", &u, err,
                                  sizeof(err)),
                     0, "%s", err);
        cr_assert_str_eq(u.model, "iris");
        cr_assert_null(u.version);
        cr_assert_str_eq(u.ns, "t_1");
        mr_uri_release(&u);
        mr_ok("model-registry://iris/v1?other=1", NULL, "iris", "v1");
        mr_ok("model-registry://a%3Fb", NULL, "a?b", NULL);
        mr_bad("model-registry://iris?namespace=a.b", "not a namespace name");
        mr_bad("model-registry://iris?namespace=a%2Fb", "not a namespace name");
        mr_ok("model-registry://iris?namespace=", NULL, "iris",
              NULL); /* empty: none, as upstream */
        mr_bad("model-registry://r:8080/iris/v1?namespace=team", "name one");
        mr_bad("model-registry://?namespace=team", "an empty segment");
}

Test(mr_uri, namespace_url)
{
        static const struct {
                const char *base, *want;
        } cases[] = {
                { "http://localhost:8080", "http://mr.team.svc.cluster.local:8080" },
                { "http://registry.kubeflow:9090/", "http://mr.team.svc.cluster.local:9090" },
                { "https://registry", "http://mr.team.svc.cluster.local:8080" },
                { "http://[::1]:8443", "http://mr.team.svc.cluster.local:8443" },
                { "http://[::1]", "http://mr.team.svc.cluster.local:8080" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *url = mr_uri_namespace_url("http", "mr", "team", "svc.cluster.local",
                                                 cases[i].base);

                cr_assert_str_eq(url, cases[i].want, "%s", cases[i].base);
                free(url);
        }
}
