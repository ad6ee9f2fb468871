/* SPDX-License-Identifier: Apache-2.0 */
/* transfer/oci.h: image references, WWW-Authenticate challenges, token answers, registry error
 * bodies, manifests and indexes, and the ModelCar config and manifest. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transfer/oci.h"

#define D64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void ref_is(const char *s, const char *host, const char *repo, const char *tag,
                   const char *digest)
{
        struct oci_ref r;
        struct error_detail e = { 0 };

        cr_assert_eq(oci_ref_parse(s, &r, &e), 0, "%s: %s", s, e.message);
        cr_assert_str_eq(r.host, host, "%s", s);
        cr_assert_str_eq(r.repository, repo, "%s", s);
        if (tag)
                cr_assert_str_eq(r.tag, tag, "%s", s);
        else
                cr_assert_null(r.tag, "%s", s);
        if (digest)
                cr_assert_str_eq(r.digest, digest, "%s", s);
        else
                cr_assert_null(r.digest, "%s", s);
        oci_ref_release(&r);
}

Test(ref, forms)
{
        ref_is("quay.io/org/model:1.0.0", "quay.io", "org/model", "1.0.0", NULL);
        ref_is("oci://quay.io/org/model:v1", "quay.io", "org/model", "v1", NULL);
        ref_is("127.0.0.1:5000/m", "127.0.0.1:5000", "m", "latest", NULL);
        ref_is("localhost/a/b/c", "localhost", "a/b/c", "latest", NULL);
        ref_is("busybox", "docker.io", "library/busybox", "latest", NULL);
        ref_is("user/img:tag", "docker.io", "user/img", "tag", NULL);
        ref_is("public.ecr.aws/docker/library/busybox:latest", "public.ecr.aws",
               "docker/library/busybox", "latest", NULL);
        ref_is("r.io/a@sha256:" D64, "r.io", "a", NULL, "sha256:" D64);
        ref_is("r.io/a:t@sha256:" D64, "r.io", "a", "t", "sha256:" D64);
        ref_is("r.io/a__b.c-d/e--f", "r.io", "a__b.c-d/e--f", "latest", NULL);
}

Test(ref, refusals)
{
        static const char *const bad[] = {
                "",        "quay.io/",   "quay.io/Org/m",     "quay.io/a//b",
                "r.io/a:", "r.io/a:-x",  "r.io/a@sha256:abc", "r.io/_a",
                "r.io/a_", "r.io/a___b", "r.io/a:t/x",        "ho st.io/a",
        };
        struct oci_ref r;
        struct error_detail e = { 0 };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_assert_eq(oci_ref_parse(bad[i], &r, &e), -EINVAL, "%s", bad[i]);
                cr_assert(strstr(e.message, "is not an image reference"), "%s", e.message);
        }
}

Test(challenge, bearer_basic_and_refusals)
{
        struct oci_challenge c;
        struct error_detail e = { 0 };

        cr_assert_eq(oci_challenge_parse("Bearer realm=\"https://auth.io/token\",service=\"reg\","
                                         "scope=\"repository:a/b:pull,push\"",
                                         &c, &e),
                     0);
        cr_assert_eq(c.scheme, OCI_AUTH_BEARER);
        cr_assert_str_eq(c.realm, "https://auth.io/token");
        cr_assert_str_eq(c.service, "reg");
        cr_assert_str_eq(c.scope, "repository:a/b:pull,push");
        oci_challenge_release(&c);
        /* Basic listed first, then Bearer: Bearer wins; quoted escapes; token values */
        cr_assert_eq(oci_challenge_parse("Basic realm=\"x\", bearer Realm=\"http://a/t\\\"q\", "
                                         "service=svc",
                                         &c, &e),
                     0);
        cr_assert_eq(c.scheme, OCI_AUTH_BEARER);
        cr_assert_str_eq(c.realm, "http://a/t\"q");
        cr_assert_str_eq(c.service, "svc");
        cr_assert_null(c.scope);
        oci_challenge_release(&c);
        cr_assert_eq(oci_challenge_parse("Basic realm=\"Registry Realm\"", &c, &e), 0);
        cr_assert_eq(c.scheme, OCI_AUTH_BASIC);
        oci_challenge_release(&c);
        cr_assert_eq(oci_challenge_parse("Negotiate", &c, &e), -EINVAL);
        cr_assert(strstr(e.message, "other than Basic or Bearer"), "%s", e.message);
        cr_assert_eq(oci_challenge_parse("Bearer service=\"x\"", &c, &e), -EINVAL);
        cr_assert(strstr(e.message, "no http(s) realm"), "%s", e.message);
        cr_assert_eq(oci_challenge_parse("Bearer realm=\"file:///etc/passwd\"", &c, &e), -EINVAL);
        cr_assert_eq(oci_challenge_parse("Bearer realm=\"unterminated", &c, &e), -EINVAL);
        cr_assert_eq(oci_challenge_parse(NULL, &c, &e), -EINVAL);
}

Test(challenge, limits)
{
        char big[OCI_CHALLENGE_MAX + 16];
        struct oci_challenge c;
        struct error_detail e = { 0 };
        size_t n = 0;

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big, "Bearer realm=", 13);
        cr_assert_eq(oci_challenge_parse(big, &c, &e), -EINVAL);
        n = (size_t)snprintf(big, sizeof(big), "Bearer realm=\"https://a\"");
        for (int i = 0; i < 20; i++)
                n += (size_t)snprintf(big + n, sizeof(big) - n, ",p%d=v", i);
        cr_assert_eq(oci_challenge_parse(big, &c, &e), -EINVAL); /* more than 16 params */
}

Test(token, answers)
{
        struct error_detail e = { 0 };
        char *t = NULL;

        cr_assert_eq(oci_token_parse("{\"token\":\"abc\",\"expires_in\":300}",
                                     strlen("{\"token\":\"abc\",\"expires_in\":300}"), &t, &e),
                     0);
        cr_assert_str_eq(t, "abc");
        free(t);
        cr_assert_eq(oci_token_parse("{\"access_token\":\"xyz\"}",
                                     strlen("{\"access_token\":\"xyz\"}"), &t, &e),
                     0);
        cr_assert_str_eq(t, "xyz");
        free(t);
        cr_assert_eq(oci_token_parse("{\"token\":\"\"}", strlen("{\"token\":\"\"}"), &t, &e),
                     -EINVAL);
        cr_assert_eq(oci_token_parse("{\"token\":\"a\\r\\nX-Evil: 1\"}",
                                     strlen("{\"token\":\"a\\r\\nX-Evil: 1\"}"), &t, &e),
                     -EINVAL);
        cr_assert(strstr(e.message, "a header cannot"), "%s", e.message);
        cr_assert_eq(oci_token_parse("nope", strlen("nope"), &t, &e), -EINVAL);
}

Test(errors, messages)
{
        char buf[256];
        const char *b = "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"authentication "
                        "required\"},{\"code\":\"DENIED\"}]}";

        cr_assert_str_eq(oci_error_message(b, strlen(b), buf, sizeof(buf)),
                         "UNAUTHORIZED: authentication required; DENIED");
        cr_assert_str_eq(oci_error_message("plain\nsecond", 12, buf, sizeof(buf)), "plain");
        cr_assert_str_eq(oci_error_message("a\x01z", 3, buf, sizeof(buf)), "a?z");
        cr_assert_str_eq(oci_error_message("", 0, buf, sizeof(buf)), "");
        cr_assert_str_eq(oci_error_message(b, strlen(b), buf, 8), "UNAUTHO");
}

static const char *manifest_doc =
        "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
        "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
        "\"digest\":\"sha256:" D64 "\",\"size\":10},\"layers\":[{\"mediaType\":"
        "\"application/vnd.docker.image.rootfs.diff.tar.gzip\",\"digest\":\"sha256:" D64
        "\",\"size\":20}]}";

Test(manifest, parse_and_index)
{
        struct oci_manifest m;
        struct error_detail e = { 0 };
        char digest[OCI_DIGEST_LEN];
        const char *index = "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"sha256:" D64
                            "\",\"platform\":{\"os\":\"linux\",\"architecture\":\"arm64\"}}]}";

        cr_assert_eq(oci_manifest_parse(manifest_doc, strlen(manifest_doc), &m, &e), 0, "%s",
                     e.message);
        cr_assert(m.docker);
        cr_assert_eq(m.n_layers, 1);
        cr_assert_eq(m.layers[0].size, 20);
        cr_assert_eq(oci_manifest_parse(index, strlen(index), &m, &e), -EMEDIUMTYPE);
        cr_assert_eq(oci_index_pick(index, strlen(index), "linux", "arm64", digest, &e), 0);
        cr_assert_str_eq(digest, "sha256:" D64);
        cr_assert_eq(oci_index_pick(index, strlen(index), "linux", "amd64", digest, &e), -ENOENT);
        cr_assert(strstr(e.message, "it has: linux/arm64"), "%s", e.message);
        cr_assert_eq(oci_manifest_parse("{\"schemaVersion\":1}", 19, &m, &e), -EINVAL);
}

Test(manifest, modelcar_config_and_manifest)
{
        struct error_detail e = { 0 };
        struct oci_descriptor cfg = { .size = 5 }, layers[2] = { { .size = 7 }, { .size = 9 } };
        const char *base_cfg = "{\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\",\"diff_ids\":"
                               "[\"sha256:aa\"]},\"config\":{\"Cmd\":[\"sh\"]}}";
        json_t *doc;
        char *s;

        s = oci_config_build(NULL, 0, "sha256:" D64, "linux", "amd64", "2026-12-07T00:00:00Z", &e);
        cr_assert_not_null(s, "%s", e.message);
        doc = json_loads(s, 0, NULL);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "architecture")), "amd64");
        cr_assert_eq(json_array_size(json_object_get(json_object_get(doc, "rootfs"), "diff_ids")),
                     1);
        cr_assert_eq(json_array_size(json_object_get(doc, "history")), 1);
        json_decref(doc);
        free(s);
        s = oci_config_build(base_cfg, strlen(base_cfg), "sha256:" D64, "linux", "amd64", NULL, &e);
        cr_assert_not_null(s, "%s", e.message);
        doc = json_loads(s, 0, NULL);
        cr_assert_eq(json_array_size(json_object_get(json_object_get(doc, "rootfs"), "diff_ids")),
                     2);
        cr_assert_not_null(json_object_get(json_object_get(doc, "config"), "Cmd"));
        json_decref(doc);
        free(s);
        cr_assert_null(oci_config_build("{\"os\":\"linux\"}", 14, "sha256:" D64, "linux", "amd64",
                                        NULL, &e));
        cr_assert(strstr(e.message, "no rootfs"), "%s", e.message);
        (void)snprintf(cfg.media_type, sizeof(cfg.media_type), "%s", OCI_MT_CONFIG);
        (void)snprintf(cfg.digest, sizeof(cfg.digest), "%s", "sha256:" D64);
        for (int i = 0; i < 2; i++) {
                (void)snprintf(layers[i].media_type, sizeof(layers[i].media_type), "%s",
                               OCI_MT_LAYER_GZIP);
                (void)snprintf(layers[i].digest, sizeof(layers[i].digest), "%s", "sha256:" D64);
        }
        s = oci_manifest_build(false, &cfg, layers, 2);
        doc = json_loads(s, 0, NULL);
        cr_assert_str_eq(json_string_value(json_object_get(doc, "mediaType")), OCI_MT_MANIFEST);
        cr_assert_eq(json_integer_value(json_object_get(doc, "schemaVersion")), 2);
        cr_assert_eq(json_integer_value(
                             json_object_get(json_array_get(json_object_get(doc, "layers"), 1),
                                             "size")),
                     9);
        json_decref(doc);
        free(s);
}
