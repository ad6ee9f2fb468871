/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The torture runner's own test (tests/alloc-fault/check-runner.sh runs run-torture.sh on this
 * binary): each test makes two allocations, and the second failing takes a different path.
 * overflow_on_oom reads past the first on that path (an ASan report the runner must find, in a
 * child process whose stderr Criterion does not pass on), leak_on_oom leaks the first and passes
 * (a leak on a passing run), clean frees both. The suite's .init allocates too, so N = 1 fails a
 * fixture assertion (Criterion aborts; the runner must not call that a crash).
 */
#include <criterion/criterion.h>
#include <stdlib.h>

static void *fixture;
static void *volatile sink; /* keeps the compiler from dropping the allocations */
static volatile char byte;

static void setup(void)
{
        fixture = malloc(8);
        cr_assert_not_null(fixture);
}

static void teardown(void)
{
        free(fixture);
}

TestSuite(self, .init = setup, .fini = teardown);

Test(self, clean)
{
        char *a = malloc(16), *b = malloc(16);

        sink = a;
        sink = b;
        free(a);
        free(b);
}

Test(self, overflow_on_oom)
{
        char *a = calloc(1, 16), *b = malloc(16);
        volatile size_t n = 32;

        sink = a;
        sink = b;
        if (a && !b)
                byte = a[n]; /* reads past the 16 bytes */
        free(a);
        free(b);
}

Test(self, leak_on_oom)
{
        char *a = malloc(16), *b = malloc(16);

        sink = a;
        sink = b;
        if (!b)
                return;
        free(a);
        free(b);
}
