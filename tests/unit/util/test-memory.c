/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/memory.h"

/* Informer threads trim after each LIST while the manager trims on its tick: concurrent trims
 * with allocations in flight must be safe in every build (under ASan, glibc's malloc_trim()
 * walked uninitialised arenas and crashed in mtrim()). */
static void *churn(void *arg)
{
        (void)arg;
        for (int i = 0; i < 200; i++) {
                char *p = malloc(64 * 1024);

                cr_assert_not_null(p);
                memset(p, i, 64 * 1024);
                memory_trim();
                free(p);
        }
        return NULL;
}

Test(memory, concurrent_trims_with_allocations)
{
        pthread_t t[8];

        memory_limit_arenas(2);
        for (size_t i = 0; i < 8; i++)
                cr_assert_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
        for (size_t i = 0; i < 8; i++)
                cr_assert_eq(pthread_join(t[i], NULL), 0);
}

Test(memory, allocator_matches_build)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        cr_assert(!memory_glibc_allocator());
#else
        cr_assert(memory_glibc_allocator());
#endif
}
