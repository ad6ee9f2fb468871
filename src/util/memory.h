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

/*
 * Drops this process's mappings of file pages that only start-up touched (dynamic linking of
 * the shared libraries, their constructors, OpenSSL's initialisation): every read-only,
 * file-backed mapping without private (copied-on-write) pages is madvise(MADV_DONTNEED)ed. The
 * pages stay in the page cache; whatever the process uses later faults back in (a minor fault),
 * so RSS then shows the working set instead of everything start-up ever read. Only while the
 * process has one thread (checked: a mapping cannot change under it); returns the KiB released,
 * 0 when skipped or nothing was released.
 */
unsigned long memory_release_startup_pages(void);
