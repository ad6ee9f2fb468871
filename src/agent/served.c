/* SPDX-License-Identifier: Apache-2.0 */
#include "agent/served.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/string-util.h"

void served_init(struct served *s)
{
        *s = (struct served){ 0 };
        (void)pthread_rwlock_init(&s->lock, NULL);
}

void served_release(struct served *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->names[i]);
        free(s->names);
        (void)pthread_rwlock_destroy(&s->lock);
        s->names = NULL;
        s->n = s->cap = 0;
}

/* Caller holds the lock. The position of @name, or where it would go (*ret_found false). */
static size_t find(const struct served *s, const char *name, bool *ret_found)
{
        return sorted_find(s->names, s->n, sizeof(*s->names), name, ret_found);
}

static int insert_at(struct served *s, size_t pos, const char *name)
{
        char *copy = strdup(name);

        if (!copy)
                return -ENOMEM;
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 16;
                char **v = reallocarray(s->names, cap, sizeof(*v));

                if (!v) {
                        free(copy);
                        return -ENOMEM;
                }
                s->names = v;
                s->cap = cap;
        }
        memmove(&s->names[pos + 1], &s->names[pos], (s->n - pos) * sizeof(*s->names));
        s->names[pos] = copy;
        s->n++;
        return 0;
}

int served_set(struct served *s, const char *name, bool serving)
{
        bool found;
        size_t pos;
        int r = 0;

        (void)pthread_rwlock_wrlock(&s->lock);
        pos = find(s, name, &found);
        if (serving && !found)
                r = insert_at(s, pos, name);
        else if (!serving && found) {
                free(s->names[pos]);
                memmove(&s->names[pos], &s->names[pos + 1], (s->n - pos - 1) * sizeof(*s->names));
                s->n--;
        }
        (void)pthread_rwlock_unlock(&s->lock);
        return r;
}

bool served_has(struct served *s, const char *name)
{
        bool found;

        (void)pthread_rwlock_rdlock(&s->lock);
        (void)find(s, name, &found);
        (void)pthread_rwlock_unlock(&s->lock);
        return found;
}

size_t served_count(struct served *s)
{
        size_t n;

        (void)pthread_rwlock_rdlock(&s->lock);
        n = s->n;
        (void)pthread_rwlock_unlock(&s->lock);
        return n;
}
