/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/source.h"

#include <stdlib.h>
#include <string.h>

#include "util/parse-util.h"

void source_state_release(struct source_state *s)
{
        for (size_t i = 0; i < ELEMENTSOF(s->views); i++) {
                free(s->views[i].models_json);
                s->views[i] = (struct source_view){ 0 };
        }
}

static const struct source_view *effective_view(const struct source_state *s)
{
        switch (s->api) {
        case SOURCE_API_ANSWERED:
                return &s->views[AGENT_SOURCE_API];
        case SOURCE_API_STARTING:
                return NULL;
        case SOURCE_API_OFF:
        case SOURCE_API_FAILING:
        default:
                return &s->views[AGENT_SOURCE_FILE];
        }
}

const char *source_effective(const struct source_state *s)
{
        const struct source_view *v = effective_view(s);

        return v ? v->models_json : NULL;
}

const char *source_effective_name(const struct source_state *s)
{
        const struct source_view *v = effective_view(s);

        if (!v || !v->models_json)
                return "none";
        return v == &s->views[AGENT_SOURCE_API] ? "API" : "file";
}

static bool same_bytes(const char *a, const char *b)
{
        return a == b || (a && b && streq(a, b));
}

enum source_verdict source_offer(struct source_state *s, enum agent_source source,
                                 char *models_json, uint64_t generation, bool *ret_changed)
{
        struct source_view *v = &s->views[source];
        const char *before = source_effective(s);
        char *old = NULL;
        enum source_verdict verdict;
        bool changed;

        if (v->models_json && generation != 0 && v->generation != 0 && generation < v->generation) {
                verdict = SOURCE_OLDER;
                free(models_json);
        } else if (same_bytes(v->models_json, models_json)) {
                verdict = SOURCE_SAME;
                v->generation = generation;
                free(models_json);
        } else {
                verdict = SOURCE_TAKEN;
                old = v->models_json; /* kept until compared with what is effective now */
                v->models_json = models_json;
                v->generation = generation;
        }
        if (source == AGENT_SOURCE_API && verdict != SOURCE_OLDER)
                s->api = SOURCE_API_ANSWERED;
        /* @before points at @old when the replaced view was the effective one */
        changed = !same_bytes(before, source_effective(s));
        free(old);
        if (ret_changed)
                *ret_changed = changed;
        return verdict;
}

bool source_set_api(struct source_state *s, enum source_api api)
{
        const char *before = source_effective(s);

        if (s->api == SOURCE_API_ANSWERED || api == SOURCE_API_ANSWERED)
                return false;
        s->api = api;
        return !same_bytes(before, source_effective(s));
}

uint64_t source_generation_from_rv(const char *rv)
{
        uint64_t g;

        if (!rv || rv[0] < '0' || rv[0] > '9' || safe_atou64(rv, &g) < 0)
                return 0;
        return g;
}
