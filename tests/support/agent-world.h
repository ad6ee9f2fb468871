/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The agent's shell (src/agent/agent.c) on its in-memory ports, for the fast tests of the shell
 * and of what it reports (tests/unit/agent): a model directory under /tmp, the fake fetch and
 * repository (tests/fakes/fake-agent-ports.h), a fake clock, and the helpers those tests share.
 * One world per test process (Criterion forks each test). The waits poll the agent and are
 * bounded (5 s): a broken agent fails the test instead of hanging it.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "fake-agent-ports.h"
#include "fake-clock.h"

struct agent_world {
        char dir[64];
        struct fake_fetch f;
        struct fake_repo r;
        struct fake_clock clk; /* the agent's clock (backoff), starts at 1000 s */
        struct agent *a;
        uint64_t generation; /* of the last view handed over */
};

/* A models.json entry (string literals). */
#define AGENT_ENTRY(name, uri)                                             \
        "{\"modelName\":\"" name "\",\"modelSpec\":{\"storageUri\":\"" uri \
        "\",\"framework\":\"sklearn\",\"memory\":\"1Gi\"}}"

void agent_world_setup(struct agent_world *w);
/* Releases what blocks, frees the agent and the fakes, removes the directory. */
void agent_world_teardown(struct agent_world *w);
/* agent_new() (retries after 1 s, a 5 s stop timeout) and agent_start(); asserts. */
void agent_world_start(struct agent_world *w, unsigned workers);
/* Hands over @models_json as the mounted file's next view (each newer than the last). */
void agent_world_want(struct agent_world *w, const char *models_json);
/* A complete copy of @name from @uri on disk, as a download leaves it. */
void agent_world_on_disk(struct agent_world *w, const char *name, const char *uri);
bool agent_world_dir_exists(struct agent_world *w, const char *name);
/* The status entry of @name (C string), or NULL. Returns: new reference. */
json_t *agent_world_entry(struct agent_world *w, const char *name);
/* @name's state now ("absent" when not reported) into @buf. */
const char *agent_world_state(struct agent_world *w, const char *name, char *buf, size_t len);
/* Waits (5 s at most) until @name's state is @state; asserts. */
void agent_world_wait_state(struct agent_world *w, const char *name, const char *state);
/* Waits (5 s at most) until agent_passes() exceeds @passes; asserts. */
void agent_world_wait_pass(struct agent_world *w, unsigned long passes);
void agent_world_sleep_ms(long ms);
