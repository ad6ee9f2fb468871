/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * For tests of the hook itself (test-alloc-fault-json.c): from now on, fail the Nth counted
 * allocation of this process (0: none), counting from 0 again, as MODELPLANE_ALLOC_FAIL_AT=N
 * does from the start. Single-threaded callers only.
 */
void alloc_fault_set(unsigned long n);
