/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/spread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void spread_state_init(struct spread_state *s, bool have_pod)
{
        *s = (struct spread_state){ .have_pod = have_pod };
}

void spread_state_release(struct spread_state *s)
{
        free(s->shared);
        free(s->own);
        *s = (struct spread_state){ 0 };
}

static void raise_generation(struct spread_state *s, uint64_t generation)
{
        s->generation = MAX(s->generation, generation);
}

int spread_set_shared(struct spread_state *s, const char *models_json, bool spread,
                      uint64_t generation)
{
        char *copy = strdup(models_json ? models_json : "");

        if (!copy)
                return -ENOMEM;
        free(s->shared);
        s->shared = copy;
        s->spread = spread;
        raise_generation(s, generation);
        return 0;
}

int spread_set_own(struct spread_state *s, const char *models_json, uint64_t generation)
{
        char *copy = NULL;

        if (models_json) {
                copy = strdup(models_json);
                if (!copy)
                        return -ENOMEM;
        }
        free(s->own);
        s->own = copy;
        s->own_known = true;
        raise_generation(s, generation);
        return 0;
}

bool spread_on(const struct spread_state *s)
{
        return s->shared && s->spread && s->have_pod;
}

const char *spread_view(const struct spread_state *s, uint64_t *ret_generation)
{
        const char *v = s->shared;

        if (v && spread_on(s))
                v = !s->own_known ? NULL : s->own ? s->own : "[]";
        if (ret_generation)
                *ret_generation = s->generation;
        return v;
}
