/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Tuning of glibc's allocator for long-running processes: fewer arenas, and giving freed heap
 * back to the kernel after a large transient allocation (an initial LIST, a relist).
 *
 * Both are no-ops when another allocator owns malloc (ASan, TSan, MSan): glibc's malloc_trim()
 * and mallopt() would then walk arenas glibc never initialised, and two threads doing so at once
 * crash in mtrim() or trip glibc's arena assertions.
 */

#include <stdbool.h>

/* True when glibc's allocator is the one behind malloc() in this build. */
bool memory_glibc_allocator(void);

/* Returns free heap memory to the kernel (malloc_trim(0)); safe from any thread. */
void memory_trim(void);

/* Caps the number of malloc arenas (M_ARENA_MAX); call before starting threads. */
void memory_limit_arenas(int n);
