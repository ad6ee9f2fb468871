/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The names of the models this replica serves (Loaded here, not refused), read on every proxied
 * request (placement's forwarder asks it before anything else) without the agent's lock, which
 * the planner holds while it plans every model. The agent keeps it in step with each model's
 * phase; a reader takes a read lock and a binary search, never waits for a plan.
 *
 * Thread-safe. A failed insertion (out of memory) leaves the name out: the model is then taken
 * as not served here, and placement asks its peers, which is safe.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct served {
        pthread_rwlock_t lock;
        char **names; /* sorted, owned */
        size_t n, cap;
};

void served_init(struct served *s);
void served_release(struct served *s);

/* Puts @name in or takes it out; 0, or -ENOMEM (then @name is left out). */
int served_set(struct served *s, const char *name, bool serving);

bool served_has(struct served *s, const char *name);
size_t served_count(struct served *s);
