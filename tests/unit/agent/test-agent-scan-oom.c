/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's model directory listing when its array cannot grow (issue 29 item 8: the scan
 * dereferenced NULL when reallocarray() failed and leaked the old array). reallocarray is wrapped
 * (-Wl,--wrap=reallocarray) to fail only that array, so this program has its own wrap and is not
 * linked with the allocation-fault hook (which wraps reallocarray too, for every caller).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "agent-world.h"
#include "agent/agent.h"
#include "agent/plan.h"

void *__real_reallocarray(void *p, size_t n,
                          size_t size); /* NOLINT(bugprone-reserved-identifier) */
void *__wrap_reallocarray(void *p, size_t n,
                          size_t size); /* NOLINT(bugprone-reserved-identifier) */
/* reallocarray of arrays of the listing's entries (struct disk_model) beyond 2 entries fails */
static atomic_bool fail_listing_arrays;
static atomic_uint failed; /* how many it failed */

void *__wrap_reallocarray(void *p, size_t n, size_t size) /* NOLINT(bugprone-reserved-identifier) */
{
        if (atomic_load(&fail_listing_arrays) && size == sizeof(struct disk_model) && n > 2) {
                atomic_fetch_add(&failed, 1);
                errno = ENOMEM;
                return NULL;
        }
        return __real_reallocarray(p, n, size);
}

static struct agent_world w;

static void setup(void)
{
        agent_world_setup(&w);
}

static void teardown(void)
{
        agent_world_teardown(&w);
}

TestSuite(agent_scan_oom, .init = setup, .fini = teardown);

/* The listing (agent/disk.c) when its array cannot grow: -ENOMEM for that pass, nothing freed twice nor
 * dereferenced through NULL, and the next pass converges. */
Test(agent_scan_oom, a_scan_out_of_memory_fails_the_pass_only)
{
        unsigned long p;

        agent_world_on_disk(&w, "a", "s3://b/a");
        agent_world_on_disk(&w, "b", "s3://b/b");
        agent_world_on_disk(&w, "c", "s3://b/c");
        agent_world_start(&w, 2);
        atomic_store(&fail_listing_arrays, true);
        agent_world_want(&w, "[" AGENT_ENTRY("a", "s3://b/a") "," AGENT_ENTRY(
                                     "b", "s3://b/b") "," AGENT_ENTRY("c", "s3://b/c") "]");
        p = agent_passes(w.a);
        for (int i = 0; i < 5000 && agent_passes(w.a) < p + 1; i++)
                agent_world_sleep_ms(1);
        cr_assert_geq(agent_passes(w.a), p + 1);
        atomic_store(&fail_listing_arrays, false);
        cr_assert_gt(atomic_load(&failed), 0, "the listing's array never grew past 2");
        fake_clock_advance(&w.clk, 2 * USEC_PER_SEC);
        agent_kick(w.a);
        agent_world_wait_state(&w, "a", "Loaded");
        agent_world_wait_state(&w, "b", "Loaded");
        agent_world_wait_state(&w, "c", "Loaded");
        cr_assert_eq(fake_fetch_count(&w.f, NULL), 0, "what was on disk was not fetched again");
}
