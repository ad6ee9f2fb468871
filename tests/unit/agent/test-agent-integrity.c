/* SPDX-License-Identifier: Apache-2.0 */
/* agent/integrity.h: the MD5s storage states (ETag, Content-MD5, x-goog-hash, md5Hash), sizes;
 * and the sizes/md5Hash the listings keep (agent/s3-xml.h, agent/gcs-json.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "agent/gcs-json.h"
#include "agent/integrity.h"
#include "agent/s3-xml.h"

/* MD5("hello") */
static const char hello_hex[] = "5d41402abc4b2a76b9719d911017c592";
static const char hello_b64[] = "XUFAKrxLKna5cZ2REBfFkg==";

static bool etag(const char *s, char *hex)
{
        uint8_t m[MD5_SIZE];

        if (!md5_from_etag(s, strlen(s), m))
                return false;
        md5_to_hex(m, hex);
        return true;
}

Test(integrity, etag)
{
        char hex[MD5_HEX_SIZE];

        cr_assert(etag("\"5d41402abc4b2a76b9719d911017c592\"", hex));
        cr_assert_str_eq(hex, hello_hex);
        cr_assert(etag(" 5D41402ABC4B2A76B9719D911017C592\r\n", hex), "unquoted, upper case");
        cr_assert_str_eq(hex, hello_hex);
        /* multipart: the MD5 of the parts' MD5s, not of the body */
        cr_assert_not(etag("\"5d41402abc4b2a76b9719d911017c592-3\"", hex));
        cr_assert_not(etag("W/\"5d41402abc4b2a76b9719d911017c592\"", hex));
        cr_assert_not(etag("\"5d41402abc4b2a76b9719d911017c59\"", hex));
        cr_assert_not(etag("\"5d41402abc4b2a76b9719d911017c5zz\"", hex));
        cr_assert_not(etag("", hex));
}

Test(integrity, base64_and_goog_hash)
{
        uint8_t m[MD5_SIZE];
        char hex[MD5_HEX_SIZE];
        const char *goog = "crc32c=n03x6A==, md5=XUFAKrxLKna5cZ2REBfFkg==";

        cr_assert(md5_from_base64(hello_b64, strlen(hello_b64), m));
        md5_to_hex(m, hex);
        cr_assert_str_eq(hex, hello_hex);
        cr_assert(md5_from_base64(" XUFAKrxLKna5cZ2REBfFkg\r\n", 25, m), "no padding, blanks");
        cr_assert_not(md5_from_base64("XUFAKrxLKna5cZ2REBfF", 20, m), "too short");
        cr_assert_not(md5_from_base64("XUFAKrxLKna5cZ2REBfFkg==AA", 26, m), "too long");
        cr_assert_not(md5_from_base64("XUFAKrxLKna5cZ2REBfF*g==", 24, m), "not base64");
        cr_assert_not(md5_from_base64("XUFAKrxLKna5cZ2REBfFkh==", 24, m), "stray low bits");
        memset(m, 0, sizeof(m));
        cr_assert(md5_from_goog_hash(goog, strlen(goog), m));
        md5_to_hex(m, hex);
        cr_assert_str_eq(hex, hello_hex);
        cr_assert_not(md5_from_goog_hash("crc32c=n03x6A==", 15, m), "no md5 part");
}

Test(integrity, sizes)
{
        uint64_t v = 0;
        char buf[SIZE_STRING_MAX];

        cr_assert_eq(size_parse("64Gi", &v), 0);
        cr_assert_eq(v, 64ULL << 30);
        cr_assert_eq(size_parse("500M", &v), 0);
        cr_assert_eq(v, 500000000ULL);
        cr_assert_eq(size_parse("1234", &v), 0);
        cr_assert_eq(v, 1234);
        cr_assert_eq(size_parse("16Ei", &v), -EINVAL);
        cr_assert_eq(size_parse("-1", &v), -EINVAL);
        cr_assert_eq(size_parse("1.5Gi", &v), -EINVAL);
        cr_assert_eq(size_parse("", &v), -EINVAL);
        cr_assert_eq(size_parse("99999999999Pi", &v), -ERANGE);
        cr_assert_eq(size_parse("99999999999999999999", &v), -ERANGE);
        cr_assert_str_eq(size_to_string(812, buf), "812 B");
        cr_assert_str_eq(size_to_string(160ULL << 20, buf), "160.0 MiB");
        cr_assert_str_eq(size_to_string(3ULL << 29, buf), "1.5 GiB");
}

Test(integrity, listing_sizes)
{
        const char *xml = "<ListBucketResult><Contents><Key>m/a</Key><Size>42</Size></Contents>"
                          "<Contents><Key>m/b</Key></Contents>"
                          "<Contents><Key>m/c</Key><Size>4x</Size></Contents></ListBucketResult>";
        const char *json = "{\"items\":[{\"name\":\"m/a\",\"size\":\"167772160\","
                           "\"md5Hash\":\"XUFAKrxLKna5cZ2REBfFkg==\"},{\"name\":\"m/b\"}]}";
        struct s3_list l = { 0 };

        cr_assert_eq(s3_list_parse(xml, strlen(xml), &l), 0);
        cr_assert_eq(l.n_keys, 3);
        cr_assert_eq(l.sizes[0], 42);
        cr_assert_eq(l.sizes[1], S3_SIZE_UNKNOWN);
        cr_assert_eq(l.sizes[2], S3_SIZE_UNKNOWN);
        cr_assert_null(l.md5s[0]);
        s3_list_release(&l);
        cr_assert_eq(gcs_list_parse(json, strlen(json), &l), 0);
        cr_assert_eq(l.n_keys, 2);
        cr_assert_eq(l.sizes[0], 167772160ULL);
        cr_assert_str_eq(l.md5s[0], hello_b64);
        cr_assert_eq(l.sizes[1], S3_SIZE_UNKNOWN);
        cr_assert_null(l.md5s[1]);
        s3_list_release(&l);
}
