/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "serving/quantity.h"

static void expect_string(const char *in, const char *out)
{
        struct quantity q;
        char buf[QUANTITY_STRING_MAX];
        int r;

        r = quantity_parse(in, &q);
        cr_assert_eq(r, 0, "parse \"%s\" failed: %d", in, r);
        r = quantity_to_string(&q, buf, sizeof(buf));
        cr_assert_gt(r, 0, "to_string of \"%s\" failed", in);
        cr_assert_str_eq(buf, out, "\"%s\" should print as \"%s\", got \"%s\"", in, out, buf);
}

static void expect_equal(const char *a, const char *b)
{
        struct quantity x, y;

        cr_assert_eq(quantity_parse(a, &x), 0, "parse %s", a);
        cr_assert_eq(quantity_parse(b, &y), 0, "parse %s", b);
        cr_assert_eq(quantity_cmp(&x, &y), 0, "%s should equal %s", a, b);
}

static void expect_less(const char *a, const char *b)
{
        struct quantity x, y;

        cr_assert_eq(quantity_parse(a, &x), 0, "parse %s", a);
        cr_assert_eq(quantity_parse(b, &y), 0, "parse %s", b);
        cr_assert_lt(quantity_cmp(&x, &y), 0, "%s should be less than %s", a, b);
        cr_assert_gt(quantity_cmp(&y, &x), 0, "%s should be greater than %s", b, a);
}

/* §5.5 worked examples, row by row. */
Test(quantity, worked_examples)
{
        expect_string("1G", "1G");
        expect_string("1000M", "1G");
        expect_string("1.5G", "1500M");
        expect_string("1Gi", "1Gi");
        expect_string("100Mi", "100Mi");
        expect_string("128Mi", "128Mi");
        expect_string("1024Mi", "1Gi");
        expect_string("2048Mi", "2Gi");
        expect_string("1.5Gi", "1536Mi");
        expect_string("0.5Gi", "512Mi");
        expect_string("0.1Gi", "107374182400m");
        expect_string("0.5Ki", "512");
        expect_string("1073741824", "1073741824");
        expect_string("1e3", "1e3");
        expect_string("1.5e3", "1500");
        expect_string("500m", "500m");
        expect_string(".5", "500m");
        expect_string("0", "0");
        expect_string("0Mi", "0");
        expect_string("8Ei", "9223372036854775807");
        expect_string("+1G", "+1G");
}

Test(quantity, worked_example_values)
{
        expect_equal("1000M", "1000000000");
        expect_equal("1.5G", "1500000000");
        expect_equal("1Gi", "1073741824");
        expect_equal("128Mi", "134217728");
        expect_equal("1.5Gi", "1610612736");
        expect_equal("0.5Gi", "536870912");
        expect_equal("0.1Gi", "107374182.4");
        expect_equal("8Ei", "9223372036854775807");
        expect_equal("1e3", "1k");
        expect_equal(".5", "500m");
}

/* §5.4: non-canonical spellings that Kubernetes keeps verbatim. */
Test(quantity, cached_text_survives)
{
        expect_string("01G", "01G");
        expect_string("1.G", "1.G");
        expect_string("1E3", "1E3");
        expect_string("1e+3", "1e+3");
        expect_string("-1G", "-1G");
        expect_string("100m", "100m");
        expect_string("7Ki", "7Ki");
}

Test(quantity, canonical_forms)
{
        expect_string("1000", "1k");
        expect_string("0.000", "0");
        expect_string("-0", "0");
        expect_string("1e1", "10");
        expect_string("1.0", "1");
        expect_string("10E", "10E");
        expect_string("1000E", "1"); /* v0.34.5 prints no suffix beyond 10^18 */
        expect_string("1000e18", "1e21");
        expect_string("0.1n", "1n"); /* rounded up to the next nano */
        expect_string("-0.1n", "-1n");
        expect_string("1.5Ki", "1536");
        expect_string("2Ki", "2Ki");
        expect_string("8Ki", "8Ki");
        expect_string("1536Ki", "1536Ki");
        expect_string("16Ki", "16Ki");
        expect_string("-8Ei", "-9223372036854775807");
        expect_string("1e-3", "1e-3");
        expect_string("1e-4", "100e-6");
        expect_string("12345678901234567890", "12345678901234567890");
        expect_string("1e100", "10e99");
}

Test(quantity, formats)
{
        struct quantity q;

        cr_assert_eq(quantity_parse("1Ki", &q), 0);
        cr_assert_eq(q.format, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("0.5Ki", &q), 0);
        cr_assert_eq(q.format, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("0.0001Ki", &q), 0);
        cr_assert_eq(q.format, QUANTITY_DECIMAL_SI, "0 < v < 1 binary becomes DecimalSI");
        cr_assert_eq(quantity_parse("1e3", &q), 0);
        cr_assert_eq(q.format, QUANTITY_DECIMAL_EXPONENT);
        cr_assert_eq(quantity_parse("1k", &q), 0);
        cr_assert_eq(q.format, QUANTITY_DECIMAL_SI);
        cr_assert_str_eq(quantity_format_to_string(QUANTITY_BINARY_SI), "BinarySI");
}

Test(quantity, grammar_rejects)
{
        static const char *const bad[] = { "",     "K",     "1K",  "1g",   "1mi",  "1KB",
                                           "1e",   "1e1.5", "1 ",  " 1",   "1..0", "abc",
                                           "1Gi5", "--1",   "1e+", "1Ee3", "0x10", "1i" };
        struct quantity q;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert_lt(quantity_parse(bad[i], &q), 0, "\"%s\" must be rejected", bad[i]);
}

Test(quantity, grammar_accepts_odd_but_valid)
{
        expect_string("+.5", "500m");
        expect_string("0010", "0010");
        expect_string("0010.5", "10500m");
        expect_string("1.", "1.");
        expect_string("5e-1", "500e-3");
        expect_string("1E", "1E");
        expect_string("1n", "1n");
        expect_string("3u", "3u");
}

/* §5.5 comparisons and §9.5: memory sums are exact. */
Test(quantity, comparisons_and_sums)
{
        struct quantity a, b, sum, lim;
        char buf[QUANTITY_STRING_MAX];

        expect_less("1G", "1Gi");
        expect_less("-1", "0");
        expect_less("-2Gi", "-1Gi");
        expect_less("999m", "1");

        quantity_init_zero(&sum, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("512Mi", &a), 0);
        cr_assert_eq(quantity_add(&sum, &a), 0);
        cr_assert_eq(quantity_add(&sum, &a), 0);
        cr_assert_eq(quantity_parse("1Gi", &lim), 0);
        cr_assert_eq(quantity_cmp(&sum, &lim), 0, "512Mi + 512Mi == 1Gi");
        cr_assert_gt(quantity_to_string(&sum, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "1Gi");

        /* §9.5: three TMs of 1Gi sum to 3Gi, which exceeds 2Gi */
        quantity_init_zero(&sum, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("1Gi", &a), 0);
        for (int i = 0; i < 3; i++)
                cr_assert_eq(quantity_add(&sum, &a), 0);
        cr_assert_eq(quantity_parse("3Gi", &b), 0);
        cr_assert_eq(quantity_cmp(&sum, &b), 0);
        cr_assert_eq(quantity_parse("2Gi", &lim), 0);
        cr_assert_gt(quantity_cmp(&sum, &lim), 0);

        /* 50 x 100Mi = 5000Mi; 20 x 100Mi fits 2000Mi exactly, 21 does not */
        quantity_init_zero(&sum, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("100Mi", &a), 0);
        cr_assert_eq(quantity_parse("2000Mi", &lim), 0);
        for (int i = 0; i < 50; i++) {
                cr_assert_eq(quantity_add(&sum, &a), 0);
                if (i == 19)
                        cr_assert_eq(quantity_cmp(&sum, &lim), 0);
                if (i == 20)
                        cr_assert_gt(quantity_cmp(&sum, &lim), 0);
        }
        cr_assert_gt(quantity_to_string(&sum, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "5000Mi");

        /* mixed formats: the zero accumulator takes the first term's format */
        quantity_init_zero(&sum, QUANTITY_BINARY_SI);
        cr_assert_eq(quantity_parse("1G", &a), 0);
        cr_assert_eq(quantity_add(&sum, &a), 0);
        cr_assert_eq(quantity_parse("1Gi", &b), 0);
        cr_assert_eq(quantity_add(&sum, &b), 0);
        cr_assert_gt(quantity_to_string(&sum, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "2073741824");

        /* sums beyond int64 stay exact */
        cr_assert_eq(quantity_parse("8Ei", &a), 0);
        sum = a;
        cr_assert_eq(quantity_add(&sum, &a), 0);
        cr_assert_eq(quantity_parse("18446744073709551614", &b), 0);
        cr_assert_eq(quantity_cmp(&sum, &b), 0);
}

Test(quantity, signed_addition)
{
        struct quantity a, b;
        char buf[QUANTITY_STRING_MAX];

        cr_assert_eq(quantity_parse("1Gi", &a), 0);
        cr_assert_eq(quantity_parse("-1536Mi", &b), 0);
        cr_assert_eq(quantity_add(&a, &b), 0);
        cr_assert_eq(quantity_sign(&a), -1);
        cr_assert_gt(quantity_to_string(&a, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "-512Mi");
        cr_assert_eq(quantity_parse("512Mi", &b), 0);
        cr_assert_eq(quantity_add(&a, &b), 0);
        cr_assert(quantity_is_zero(&a));
        cr_assert_eq(quantity_sign(&a), 0);
}

Test(quantity, from_json)
{
        struct quantity q;
        char buf[QUANTITY_STRING_MAX];
        json_t *v;

        v = json_integer(1073741824);
        cr_assert_eq(quantity_from_json(v, &q), 0);
        json_decref(v);
        cr_assert_gt(quantity_to_string(&q, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "1073741824");

        v = json_string("  128Mi ");
        cr_assert_eq(quantity_from_json(v, &q), 0);
        json_decref(v);
        cr_assert_gt(quantity_to_string(&q, buf, sizeof(buf)), 0);
        cr_assert_str_eq(buf, "128Mi");

        v = json_null();
        cr_assert_eq(quantity_from_json(v, &q), 0);
        cr_assert(quantity_is_zero(&q));

        v = json_true();
        cr_assert_lt(quantity_from_json(v, &q), 0);
        v = json_string("");
        cr_assert_lt(quantity_from_json(v, &q), 0);
        json_decref(v);
}

Test(quantity, limits_are_errors_not_crashes)
{
        struct quantity q;
        char big[QUANTITY_INPUT_MAX + 2];

        cr_assert_eq(quantity_parse("1e1000", &q), -ERANGE);
        memset(big, '9', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        cr_assert_eq(quantity_parse(big, &q), -ERANGE);
        cr_assert_eq(quantity_parse("1e-1000", &q), -ERANGE);
}

Test(quantity, to_string_small_buffer)
{
        struct quantity q;
        char buf[3];

        cr_assert_eq(quantity_parse("100Mi", &q), 0);
        cr_assert_eq(quantity_to_string(&q, buf, sizeof(buf)), -ENOBUFS);
}

/* §10 W15: the canonical form ignores the kept input text. */
Test(quantity, canonical_ignores_cached_text)
{
        static const struct {
                const char *in, *string, *canonical;
        } cases[] = {
                { "+1G", "+1G", "1G" },  { "01G", "01G", "1G" },    { "1.G", "1.G", "1G" },
                { "1E3", "1E3", "1e3" }, { "1e+3", "1e+3", "1e3" }, { "100Mi", "100Mi", "100Mi" },
                { "0", "0", "0" },       { "-1G", "-1G", "-1G" },   { "0010", "0010", "10" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct quantity q;
                char a[QUANTITY_STRING_MAX], b[QUANTITY_STRING_MAX];

                cr_assert_eq(quantity_parse(cases[i].in, &q), 0);
                cr_assert_gt(quantity_to_string(&q, a, sizeof(a)), 0);
                cr_assert_gt(quantity_to_canonical_string(&q, b, sizeof(b)), 0);
                cr_assert_str_eq(a, cases[i].string);
                cr_assert_str_eq(b, cases[i].canonical, "%s", cases[i].in);
        }
}

Test(quantity, whole_units_rounded_up)
{
        static const struct {
                const char *in;
                uint64_t want;
        } cases[] = {
                { "0", 0 },
                { "1", 1 },
                { "1Gi", 1073741824 },
                { "1G", 1000000000 },
                { "100m", 1 },
                { "1500m", 2 },
                { "1.5Ki", 1536 },
                { "7Ei", 8070450532247928832ULL },
                { "1n", 1 },
                { "18446744073709551615", UINT64_MAX },
        };
        struct quantity q;
        uint64_t v;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cr_assert_eq(quantity_parse(cases[i].in, &q), 0, "%s", cases[i].in);
                cr_assert_eq(quantity_to_u64_ceil(&q, &v), 0, "%s", cases[i].in);
                cr_assert_eq(v, cases[i].want, "%s: %llu", cases[i].in, (unsigned long long)v);
        }
        cr_assert_eq(quantity_parse("18446744073709551616", &q), 0);
        cr_assert_eq(quantity_to_u64_ceil(&q, &v), -ERANGE);
        cr_assert_eq(quantity_parse("-1", &q), 0);
        cr_assert_eq(quantity_to_u64_ceil(&q, &v), -ERANGE);
}
