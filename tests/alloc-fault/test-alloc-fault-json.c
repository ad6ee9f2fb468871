/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hook's handling of jansson's loaders (alloc-fault.c, top comment): a loader is one
 * allocation point that fails the whole parse with jansson's out-of-memory error, and a parse
 * never fails halfway. Without that, jansson 2.14 drops a byte of a token when its lexer's
 * buffer cannot grow: "0123456789abcd" (the closing quote is the 16th saved byte) crashes
 * json_loads, and a longer string comes back with a character missing.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "alloc-fault.h"

static const char *const values[] = {
        "0123456789abcd",       /* the closing quote grows the buffer */
        "0123456789abcdefghij", /* a middle byte grows it */
        "https://modelregistry.example.com/api/v1/registered_models/12345678901234567890",
        "esc\\\"aped\\u00e9\\ud83d\\ude00 and more text",
};

/* v is {"k": raw decoded}: the same text parsed with no allocation failing (raw is JSON text). */
static void check_value(json_t *v, const char *raw)
{
        char text[256];
        json_t *want;

        (void)snprintf(text, sizeof(text), "{\"k\":\"%s\"}", raw);
        want = json_loads(text, 0, NULL);
        cr_assert_not_null(want);
        cr_assert(json_equal(v, want), "the parse of %s came back changed", text);
        json_decref(want);
}

Test(json, loader_is_one_allocation_point)
{
        json_error_t e;
        json_t *v;

        alloc_fault_set(1);
        v = json_loads("{\"k\":\"v\"}", 0, &e);
        alloc_fault_set(0);
        cr_assert_null(v);
        cr_assert_eq(json_error_code(&e), json_error_out_of_memory);
        cr_assert_str_eq(e.text, "out of memory");
        cr_assert_str_eq(e.source, "<string>");

        alloc_fault_set(1);
        v = json_loadb("[1]", 3, 0, &e);
        alloc_fault_set(0);
        cr_assert_null(v);
        cr_assert_eq(json_error_code(&e), json_error_out_of_memory);
        cr_assert_str_eq(e.source, "<buffer>");
}

Test(json, no_parse_fails_halfway)
{
        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                char text[256];

                (void)snprintf(text, sizeof(text), "{\"k\":\"%s\"}", values[i]);
                for (unsigned long n = 2; n <= 64; n++) {
                        json_t *v;

                        alloc_fault_set(n);
                        v = json_loads(text, 0, NULL);
                        alloc_fault_set(0);
                        cr_assert_not_null(v, "N = %lu failed a parse of %s halfway", n, text);
                        check_value(v, values[i]);
                        json_decref(v);

                        alloc_fault_set(n);
                        v = json_loadb(text, strlen(text), 0, NULL);
                        alloc_fault_set(0);
                        cr_assert_not_null(v, "N = %lu failed a parse of %s halfway", n, text);
                        check_value(v, values[i]);
                        json_decref(v);
                }
        }
}

Test(json, load_file)
{
        char path[] = "/tmp/alloc-fault-json-XXXXXX";
        int fd = mkstemp(path);
        const char *text = "{\"k\":\"0123456789abcd\"}";
        json_error_t e;
        json_t *v;

        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        cr_assert_eq(close(fd), 0);
        alloc_fault_set(1);
        v = json_load_file(path, 0, &e);
        alloc_fault_set(2);
        json_t *w = json_load_file(path, 0, NULL);
        alloc_fault_set(0);
        (void)unlink(path);
        cr_assert_null(v);
        cr_assert_eq(json_error_code(&e), json_error_out_of_memory);
        cr_assert_str_eq(e.source, path);
        cr_assert_not_null(w);
        check_value(w, "0123456789abcd");
        json_decref(w);
}
