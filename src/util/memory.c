/* SPDX-License-Identifier: Apache-2.0 */
#include <malloc.h>

#include "util/memory.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FOREIGN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
        __has_feature(memory_sanitizer)
#define FOREIGN_ALLOCATOR 1
#endif
#endif

bool memory_glibc_allocator(void)
{
#ifdef FOREIGN_ALLOCATOR
        return false;
#else
        return true;
#endif
}

void memory_trim(void)
{
        if (memory_glibc_allocator())
                (void)malloc_trim(0);
}

void memory_limit_arenas(int n)
{
        if (memory_glibc_allocator() && n > 0)
                (void)mallopt(M_ARENA_MAX, n);
}
