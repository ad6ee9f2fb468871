/* SPDX-License-Identifier: Apache-2.0 */
#include "serving/quantity.h"

#include <stdio.h>
#include <string.h>

/*
 * Internally a magnitude is a little-endian array of base-10^9 limbs. Intermediate results get
 * more room (BIG_LIMBS) than a stored quantity so that parsing can multiply by 2^60 * 10^9 before
 * dividing by the fraction's power of ten.
 */
#define BASE      1000000000U
#define BIG_LIMBS 48

struct big {
        uint32_t d[BIG_LIMBS];
        unsigned n; /* used limbs, no leading zero limb; zero is n == 0 */
};

static void big_normalize(struct big *b)
{
        while (b->n > 0 && b->d[b->n - 1] == 0)
                b->n--;
}

static int big_mul_small(struct big *b, uint32_t m)
{
        uint64_t carry = 0;

        for (unsigned i = 0; i < b->n; i++) {
                uint64_t t = (uint64_t)b->d[i] * m + carry;
                b->d[i] = (uint32_t)(t % BASE);
                carry = t / BASE;
        }
        while (carry != 0) {
                if (b->n >= BIG_LIMBS)
                        return -ERANGE;
                b->d[b->n++] = (uint32_t)(carry % BASE);
                carry /= BASE;
        }
        big_normalize(b);
        return 0;
}

static int big_add_small(struct big *b, uint32_t a)
{
        uint64_t carry = a;

        for (unsigned i = 0; i < b->n && carry != 0; i++) {
                uint64_t t = (uint64_t)b->d[i] + carry;
                b->d[i] = (uint32_t)(t % BASE);
                carry = t / BASE;
        }
        if (carry != 0) {
                if (b->n >= BIG_LIMBS)
                        return -ERANGE;
                b->d[b->n++] = (uint32_t)carry;
        }
        return 0;
}

/* b /= d; returns the remainder. d must be non-zero and <= BASE. */
static uint32_t big_div_small(struct big *b, uint32_t d)
{
        uint64_t rem = 0;

        for (unsigned i = b->n; i > 0; i--) {
                uint64_t cur = rem * BASE + b->d[i - 1];
                b->d[i - 1] = (uint32_t)(cur / d);
                rem = cur % d;
        }
        big_normalize(b);
        return (uint32_t)rem;
}

static uint32_t big_mod_small(const struct big *b, uint32_t d)
{
        uint64_t rem = 0;

        for (unsigned i = b->n; i > 0; i--)
                rem = (rem * BASE + b->d[i - 1]) % d;
        return (uint32_t)rem;
}

static int big_mul_pow10(struct big *b, unsigned k)
{
        static const uint32_t pow10[] = { 1,      10,      100,      1000,      10000,
                                          100000, 1000000, 10000000, 100000000, 1000000000 };
        int r;

        while (k > 0) {
                unsigned step = MIN(k, 9U);
                r = big_mul_small(b, pow10[step]);
                if (r < 0)
                        return r;
                k -= step;
        }
        return 0;
}

static int big_cmp(const struct big *a, const struct big *b)
{
        if (a->n != b->n)
                return a->n < b->n ? -1 : 1;
        for (unsigned i = a->n; i > 0; i--)
                if (a->d[i - 1] != b->d[i - 1])
                        return a->d[i - 1] < b->d[i - 1] ? -1 : 1;
        return 0;
}

static int big_add(struct big *a, const struct big *b)
{
        uint64_t carry = 0;
        unsigned n = MAX(a->n, b->n);

        for (unsigned i = 0; i < n; i++) {
                uint64_t t = carry + (i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0);
                a->d[i] = (uint32_t)(t % BASE);
                carry = t / BASE;
        }
        a->n = n;
        if (carry != 0) {
                if (a->n >= BIG_LIMBS)
                        return -ERANGE;
                a->d[a->n++] = (uint32_t)carry;
        }
        return 0;
}

/* a -= b; requires a >= b. */
static void big_sub(struct big *a, const struct big *b)
{
        int64_t borrow = 0;

        for (unsigned i = 0; i < a->n; i++) {
                int64_t t = (int64_t)a->d[i] - borrow - (i < b->n ? (int64_t)b->d[i] : 0);
                borrow = t < 0;
                if (t < 0)
                        t += BASE;
                a->d[i] = (uint32_t)t;
        }
        big_normalize(a);
}

static int big_from_digits(struct big *b, const char *s, size_t len)
{
        int r;

        *b = (struct big){ .n = 0 };
        for (size_t i = 0; i < len; i++) {
                r = big_mul_small(b, 10);
                if (r < 0)
                        return r;
                r = big_add_small(b, (uint32_t)(s[i] - '0'));
                if (r < 0)
                        return r;
                big_normalize(b);
        }
        return 0;
}

/* Decimal text of b into buf (at least 9 * BIG_LIMBS + 1 bytes). Returns the length. */
static size_t big_to_dec(const struct big *b, char *buf, size_t len)
{
        size_t off;
        int k;

        if (b->n == 0) {
                k = snprintf(buf, len, "0");
                return k > 0 ? (size_t)k : 0;
        }
        k = snprintf(buf, len, "%u", b->d[b->n - 1]);
        off = k > 0 ? (size_t)k : 0;
        for (unsigned i = b->n - 1; i > 0 && off < len; i--) {
                k = snprintf(buf + off, len - off, "%09u", b->d[i - 1]);
                off += k > 0 ? (size_t)k : 0;
        }
        return MIN(off, len - 1);
}

static void big_from_quantity(struct big *b, const struct quantity *q)
{
        *b = (struct big){ .n = q->n };
        memcpy(b->d, q->mag, q->n * sizeof(q->mag[0]));
}

static int big_to_quantity(const struct big *b, struct quantity *q)
{
        if (b->n > QUANTITY_LIMBS)
                return -ERANGE;
        memset(q->mag, 0, sizeof(q->mag));
        memcpy(q->mag, b->d, b->n * sizeof(b->d[0]));
        q->n = b->n;
        if (q->n == 0)
                q->negative = false;
        return 0;
}

/* (2^63 - 1) * 10^9: the cap for BinarySI values, in nano units. */
static void big_max_binary(struct big *b)
{
        /* 9223372036854775807000000000 in base 10^9 limbs */
        *b = (struct big){ .d = { 0, 854775807, 223372036, 9 }, .n = 4 };
}

void quantity_init_zero(struct quantity *q, enum quantity_format format)
{
        *q = (struct quantity){ .n = 0, .negative = false, .format = format };
}

bool quantity_is_zero(const struct quantity *q)
{
        return q->n == 0;
}

int quantity_sign(const struct quantity *q)
{
        if (q->n == 0)
                return 0;
        return q->negative ? -1 : 1;
}

int quantity_to_u64_ceil(const struct quantity *q, uint64_t *ret)
{
        uint64_t v = 0;

        if (q->negative && q->n > 0)
                return -ERANGE;
        /* limb 0 holds the nano units, the others the whole part in base 10^9 */
        for (unsigned i = q->n; i-- > 1;) {
                if (v > (UINT64_MAX - q->mag[i]) / BASE)
                        return -ERANGE;
                v = v * BASE + q->mag[i];
        }
        if (q->n > 0 && q->mag[0] != 0) {
                if (v == UINT64_MAX)
                        return -ERANGE;
                v++;
        }
        *ret = v;
        return 0;
}

struct suffix_entry {
        const char *suffix;
        int exponent;
        enum quantity_format format;
};

static const struct suffix_entry suffixes[] = {
        { "n", -9, QUANTITY_DECIMAL_SI }, { "u", -6, QUANTITY_DECIMAL_SI },
        { "m", -3, QUANTITY_DECIMAL_SI }, { "", 0, QUANTITY_DECIMAL_SI },
        { "k", 3, QUANTITY_DECIMAL_SI },  { "M", 6, QUANTITY_DECIMAL_SI },
        { "G", 9, QUANTITY_DECIMAL_SI },  { "T", 12, QUANTITY_DECIMAL_SI },
        { "P", 15, QUANTITY_DECIMAL_SI }, { "E", 18, QUANTITY_DECIMAL_SI },
        { "Ki", 10, QUANTITY_BINARY_SI }, { "Mi", 20, QUANTITY_BINARY_SI },
        { "Gi", 30, QUANTITY_BINARY_SI }, { "Ti", 40, QUANTITY_BINARY_SI },
        { "Pi", 50, QUANTITY_BINARY_SI }, { "Ei", 60, QUANTITY_BINARY_SI },
};

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Interprets a suffix as apimachinery's suffixHandler does. */
static int interpret_suffix(const char *s, size_t len, int *ret_exponent,
                            enum quantity_format *ret_format)
{
        int64_t e = 0;
        size_t i = 1;
        bool neg = false;

        for (size_t k = 0; k < ELEMENTSOF(suffixes); k++)
                if (strlen(suffixes[k].suffix) == len && strneq(suffixes[k].suffix, s, len)) {
                        *ret_exponent = suffixes[k].exponent;
                        *ret_format = suffixes[k].format;
                        return 0;
                }

        if (len < 2 || (s[0] != 'e' && s[0] != 'E'))
                return -EINVAL;
        /* strconv.ParseInt(suffix[1:], 10, 64) */
        if (s[i] == '+' || s[i] == '-') {
                neg = s[i] == '-';
                i++;
        }
        if (i >= len)
                return -EINVAL;
        for (; i < len; i++) {
                if (!is_digit(s[i]))
                        return -EINVAL;
                e = e * 10 + (s[i] - '0');
                if (e > QUANTITY_EXPONENT_MAX)
                        return -ERANGE;
        }
        *ret_exponent = (int)(neg ? -e : e);
        *ret_format = QUANTITY_DECIMAL_EXPONENT;
        return 0;
}

struct parts {
        bool positive;
        const char *num; /* digits without leading zeros; "0" when none */
        size_t num_len;
        const char *denom; /* fraction digits, may be empty */
        size_t denom_len;
        const char *suffix;
        size_t suffix_len;
};

/* The scanner of apimachinery's parseQuantityString(), rule for rule. */
static int split_quantity(const char *s, size_t end, struct parts *p)
{
        size_t pos = 0, i;

        *p = (struct parts){
                .positive = true, .num = "0", .num_len = 1, .denom = "", .suffix = ""
        };

        if (pos < end && (s[0] == '-' || s[0] == '+')) {
                p->positive = s[0] != '-';
                pos++;
        }
        while (pos < end && s[pos] == '0')
                pos++;
        if (pos >= end)
                return 0; /* all zeros */

        for (i = pos; i < end && is_digit(s[i]); i++)
                ;
        if (i > pos) {
                p->num = s + pos;
                p->num_len = i - pos;
        }
        pos = i;
        if (pos >= end)
                return 0;

        if (s[pos] == '.') {
                pos++;
                for (i = pos; i < end && is_digit(s[i]); i++)
                        ;
                p->denom = s + pos;
                p->denom_len = i - pos;
                pos = i;
                if (pos >= end)
                        return 0;
        }

        p->suffix = s + pos;
        for (i = pos; i < end && strchr("eEinumkKMGTP", s[i]); i++)
                ;
        if (i >= end) {
                p->suffix_len = end - pos;
                return 0;
        }
        if (s[i] == '-' || s[i] == '+')
                i++;
        for (; i < end; i++)
                if (!is_digit(s[i]))
                        return -EINVAL;
        p->suffix_len = end - pos;
        return 0;
}

static bool ends_with_000(const char *num, size_t num_len, const char *denom, size_t denom_len)
{
        char tail[3];
        size_t total = num_len + denom_len;

        if (total < 3)
                return false;
        for (size_t k = 0; k < 3; k++) {
                size_t idx = total - 3 + k;
                tail[k] = (char)(idx < num_len ? num[idx] : denom[idx - num_len]);
        }
        return tail[0] == '0' && tail[1] == '0' && tail[2] == '0';
}

/* Whether ParseQuantity's int64 fast path would keep the input text as the String() form. */
static bool parse_keeps_text(const struct parts *p, int exponent, enum quantity_format format)
{
        size_t digits = p->num_len + p->denom_len;

        if (format == QUANTITY_BINARY_SI) {
                int64_t value = 0;
                int precision;

                if (p->denom_len != 0)
                        return false;
                precision = 15 - (int)p->num_len - exponent * 3 / 10 - 1;
                if (precision < 0)
                        return false;
                for (size_t k = 0; k < p->num_len; k++)
                        value = value * 10 + (p->num[k] - '0');
                if (value != 0 && value > (INT64_MAX >> exponent))
                        return false; /* the int64 product would overflow: slow path */
                return (value & 0x07) != 0;
        }

        if (digits > 18)
                return false;
        int scale = exponent - (int)p->denom_len;
        if (scale < -9)
                return false;
        if (scale % 3 != 0)
                return false;
        if (ends_with_000(p->num, p->num_len, p->denom, p->denom_len))
                return false;
        /* shifted[0] != '0': num is "0" only when the integer part was all zeros */
        return !(p->num_len == 1 && p->num[0] == '0');
}

/* |value| * 10^9 of a binary-SI quantity (num.denom * 2^exponent * 10^9) rounded up and capped;
 * *format becomes DecimalSI for 0 < |value| < 1, as ParseQuantity shows those. */
static int scaled_binary(const struct parts *p, int exponent, struct big *b,
                         enum quantity_format *format)
{
        bool inexact = false;
        struct big cap;
        int r;

        r = big_from_digits(b, p->num, p->num_len);
        if (r < 0)
                return r;
        for (size_t k = 0; k < p->denom_len; k++) {
                r = big_mul_small(b, 10);
                if (r < 0)
                        return r;
                r = big_add_small(b, (uint32_t)(p->denom[k] - '0'));
                if (r < 0)
                        return r;
        }
        for (int k = 0; k < exponent / 10; k++) {
                r = big_mul_small(b, 1024);
                if (r < 0)
                        return r;
        }
        r = big_mul_pow10(b, 9);
        if (r < 0)
                return r;
        for (size_t k = 0; k < p->denom_len; k++)
                if (big_div_small(b, 10) != 0)
                        inexact = true;
        if (inexact) {
                r = big_add_small(b, 1);
                if (r < 0)
                        return r;
        }
        big_max_binary(&cap);
        if (big_cmp(b, &cap) > 0)
                *b = cap;
        /* 0 < |v| < 1 is shown as DecimalSI */
        if (b->n > 0 && (b->n == 1 && b->d[0] < BASE))
                *format = QUANTITY_DECIMAL_SI;
        return 0;
}

/* |value| * 10^9 of a decimal quantity (digits * 10^(exponent + 9 - #denom)) rounded up. */
static int scaled_decimal(const struct parts *p, int exponent, struct big *b)
{
        char digits[2 * QUANTITY_INPUT_MAX + 1];
        size_t n = 0, keep;
        long shift = (long)exponent + 9 - (long)p->denom_len;
        bool inexact = false;
        int r;

        memcpy(digits, p->num, p->num_len);
        n = p->num_len;
        memcpy(digits + n, p->denom, p->denom_len);
        n += p->denom_len;
        keep = n;
        if (shift < 0) {
                size_t drop = (size_t)-shift;
                keep = drop >= n ? 0 : n - drop;
                for (size_t k = keep; k < n; k++)
                        if (digits[k] != '0')
                                inexact = true;
        }
        r = big_from_digits(b, digits, keep);
        if (r < 0)
                return r;
        if (shift > 0) {
                r = big_mul_pow10(b, (unsigned)shift);
                if (r < 0)
                        return r;
        }
        if (inexact) {
                r = big_add_small(b, 1);
                if (r < 0)
                        return r;
        }
        return 0;
}

int quantity_parse(const char *s, struct quantity *ret)
{
        struct quantity q = { 0 };
        struct parts p;
        struct big b;
        enum quantity_format format;
        int exponent, r;
        size_t len;

        if (!s)
                return -EINVAL;
        len = strnlen(s, QUANTITY_INPUT_MAX + 1);
        if (len == 0)
                return -EINVAL;
        if (len > QUANTITY_INPUT_MAX)
                return -ERANGE;
        if (streq(s, "0")) {
                quantity_init_zero(&q, QUANTITY_DECIMAL_SI);
                q.cached[0] = '0';
                *ret = q;
                return 0;
        }

        r = split_quantity(s, len, &p);
        if (r < 0)
                return r;
        r = interpret_suffix(p.suffix, p.suffix_len, &exponent, &format);
        if (r < 0)
                return r;

        if (format == QUANTITY_BINARY_SI)
                r = scaled_binary(&p, exponent, &b, &format);
        else
                r = scaled_decimal(&p, exponent, &b);
        if (r < 0)
                return r;

        q.format = format;
        q.negative = !p.positive;
        r = big_to_quantity(&b, &q);
        if (r < 0)
                return r;
        if (parse_keeps_text(&p, exponent, format) && len < sizeof(q.cached))
                memcpy(q.cached, s, len + 1);
        *ret = q;
        return 0;
}

int quantity_from_json(const json_t *v, struct quantity *ret)
{
        char text[QUANTITY_INPUT_MAX + 1] = ""; /* what snprintf() writes, for the analyzer too */
        const char *s;
        size_t len;
        int k;

        if (!v || json_is_null(v)) {
                quantity_init_zero(ret, QUANTITY_DECIMAL_SI);
                return 0;
        }
        if (json_is_integer(v)) {
                k = snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
                if (k < 0 || (size_t)k >= sizeof(text))
                        return -EINVAL;
                return quantity_parse(text, ret);
        }
        if (json_is_real(v)) {
                k = snprintf(text, sizeof(text), "%.17g", json_real_value(v));
                if (k < 0 || (size_t)k >= sizeof(text))
                        return -EINVAL;
                return quantity_parse(text, ret);
        }
        if (!json_is_string(v))
                return -EINVAL;

        s = json_string_value(v);
        len = json_string_length(v);
        if (strlen(s) != len)
                return -EINVAL; /* embedded NUL */
        while (len > 0 && strchr(" \t\n\r\v\f", s[0])) {
                s++;
                len--;
        }
        while (len > 0 && strchr(" \t\n\r\v\f", s[len - 1]))
                len--;
        if (len > QUANTITY_INPUT_MAX)
                return -ERANGE;
        memcpy(text, s, len);
        text[len] = '\0';
        return quantity_parse(text, ret);
}

int quantity_add(struct quantity *acc, const struct quantity *y)
{
        struct quantity out = *acc;
        struct big a, b;
        int r;

        out.cached[0] = '\0';
        if (quantity_is_zero(acc))
                out.format = y->format;

        big_from_quantity(&a, acc);
        big_from_quantity(&b, y);
        if (acc->negative == y->negative || quantity_is_zero(y) || quantity_is_zero(acc)) {
                out.negative = quantity_is_zero(acc) ? y->negative : acc->negative;
                r = big_add(&a, &b);
                if (r < 0)
                        return r;
        } else if (big_cmp(&a, &b) >= 0) {
                big_sub(&a, &b);
        } else {
                big_sub(&b, &a);
                a = b;
                out.negative = y->negative;
        }
        r = big_to_quantity(&a, &out);
        if (r < 0)
                return r;
        *acc = out;
        return 0;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
        struct big x, y;
        int sa = quantity_sign(a), sb = quantity_sign(b);

        if (sa != sb)
                return sa < sb ? -1 : 1;
        big_from_quantity(&x, a);
        big_from_quantity(&y, b);
        return sa >= 0 ? big_cmp(&x, &y) : big_cmp(&y, &x);
}

static const char *decimal_suffix(int e)
{
        static const char *const names[] = { "n", "u", "m", "", "k", "M", "G", "T", "P", "E" };

        if (e < -9 || e > 18 || e % 3 != 0)
                return ""; /* v0.34.5 prints no suffix beyond E (§5.3) */
        return names[(e + 9) / 3];
}

static int emit(char *buf, size_t len, bool negative, const char *digits, const char *suffix)
{
        int k = snprintf(buf, len, "%s%s%s", negative ? "-" : "", digits, suffix);

        if (k < 0 || (size_t)k >= len)
                return -ENOBUFS;
        return k;
}

int quantity_to_string(const struct quantity *q, char *buf, size_t len)
{
        if (!buf || len == 0)
                return -ENOBUFS;
        if (q->cached[0] != '\0')
                return emit(buf, len, false, q->cached, "");
        return quantity_to_canonical_string(q, buf, len);
}

int quantity_to_canonical_string(const struct quantity *q, char *buf, size_t len)
{
        char digits[9 * BIG_LIMBS + 1], expbuf[16];
        enum quantity_format format = q->format;
        struct big m;
        int e;

        if (!buf || len == 0)
                return -ENOBUFS;
        if (quantity_is_zero(q))
                return emit(buf, len, false, "0", "");

        big_from_quantity(&m, q);
        if (format == QUANTITY_BINARY_SI) {
                struct big lim = { .d = { 0, 1024 }, .n = 2 }; /* 1024 * 10^9 */

                if (big_cmp(&m, &lim) < 0 || big_mod_small(&m, BASE) != 0)
                        format = QUANTITY_DECIMAL_SI;
        }

        if (format == QUANTITY_BINARY_SI) {
                static const char *const names[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
                int times = 0;

                (void)big_div_small(&m, BASE);
                for (;;) {
                        struct big k1024 = { .d = { 1024 }, .n = 1 };
                        if (big_cmp(&m, &k1024) < 0 || big_mod_small(&m, 1024) != 0)
                                break;
                        (void)big_div_small(&m, 1024);
                        times++;
                }
                (void)big_to_dec(&m, digits, sizeof(digits));
                return emit(buf, len, q->negative, digits,
                            times < (int)ELEMENTSOF(names) ? names[times] : "");
        }

        e = -9;
        while (m.n > 0 && big_mod_small(&m, 10) == 0) {
                (void)big_div_small(&m, 10);
                e++;
        }
        while (e % 3 != 0) {
                if (big_mul_small(&m, 10) < 0)
                        return -ERANGE;
                e--;
        }
        (void)big_to_dec(&m, digits, sizeof(digits));
        if (format == QUANTITY_DECIMAL_EXPONENT) {
                if (e == 0)
                        expbuf[0] = '\0';
                else
                        (void)snprintf(expbuf, sizeof(expbuf), "e%d", e);
                return emit(buf, len, q->negative, digits, expbuf);
        }
        return emit(buf, len, q->negative, digits, decimal_suffix(e));
}

const char *quantity_format_to_string(enum quantity_format f)
{
        static const char *const names[QUANTITY_FORMAT__MAX] = {
                [QUANTITY_DECIMAL_EXPONENT] = "DecimalExponent",
                [QUANTITY_BINARY_SI] = "BinarySI",
                [QUANTITY_DECIMAL_SI] = "DecimalSI",
        };

        if (f < 0 || f >= QUANTITY_FORMAT__MAX)
                return NULL;
        return names[f];
}
