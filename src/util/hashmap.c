/* SPDX-License-Identifier: Apache-2.0 */
#include "util/hashmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define HASHMAP_MIN_CAPACITY 8U

struct slot {
        char *key; /* owned; NULL: empty, or a tombstone when removed */
        void *value;
        uint64_t hash;
        bool removed; /* a tombstone: probes go on past it, inserts may take it */
};

struct hashmap {
        struct slot *slots; /* owned; capacity entries, a power of two */
        size_t capacity;
        size_t size;       /* live entries */
        size_t tombstones; /* removed entries still in the probe chains */
        uint64_t k0, k1;   /* the SipHash key */
        hashmap_free_fn free_value;
};

static bool slot_live(const struct slot *s)
{
        return s->key != NULL;
}

static uint64_t rotl(uint64_t x, unsigned b)
{
        return (x << b) | (x >> (64U - b));
}

static void sip_round(uint64_t v[4])
{
        v[0] += v[1];
        v[1] = rotl(v[1], 13) ^ v[0];
        v[0] = rotl(v[0], 32);
        v[2] += v[3];
        v[3] = rotl(v[3], 16) ^ v[2];
        v[0] += v[3];
        v[3] = rotl(v[3], 21) ^ v[0];
        v[2] += v[1];
        v[1] = rotl(v[1], 17) ^ v[2];
        v[2] = rotl(v[2], 32);
}

static uint64_t read_le64(const unsigned char *p, size_t n)
{
        uint64_t w = 0;

        for (size_t i = 0; i < n; i++)
                w |= (uint64_t)p[i] << (8U * i);
        return w;
}

/* SipHash-1-3 of @s under the map's key (one compression round, three finalization rounds). */
static uint64_t hash_key(const struct hashmap *m, const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        size_t len = strlen(s), whole = len & ~(size_t)7;
        uint64_t v[4] = { m->k0 ^ 0x736f6d6570736575ULL, m->k1 ^ 0x646f72616e646f6dULL,
                          m->k0 ^ 0x6c7967656e657261ULL, m->k1 ^ 0x7465646279746573ULL };
        uint64_t w;

        for (size_t i = 0; i < whole; i += 8) {
                w = read_le64(p + i, 8);
                v[3] ^= w;
                sip_round(v);
                v[0] ^= w;
        }
        w = read_le64(p + whole, len - whole) | ((uint64_t)len << 56);
        v[3] ^= w;
        sip_round(v);
        v[0] ^= w;
        v[2] ^= 0xff;
        for (int i = 0; i < 3; i++)
                sip_round(v);
        return v[0] ^ v[1] ^ v[2] ^ v[3];
}

struct hashmap *hashmap_new(hashmap_free_fn free_value)
{
        struct hashmap *m = calloc(1, sizeof(*m));
        uint64_t key[2];

        if (!m)
                return NULL;
        /* a map made before the pool is ready still works, only with a guessable key */
        if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
                key[0] = (uint64_t)(uintptr_t)m;
                key[1] = (uint64_t)(uintptr_t)key;
        }
        m->k0 = key[0];
        m->k1 = key[1];
        m->free_value = free_value;
        return m;
}

static void free_value(const struct hashmap *m, void *value)
{
        if (m->free_value && value)
                m->free_value(value);
}

struct hashmap *hashmap_free(struct hashmap *m)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->capacity; i++)
                if (slot_live(&m->slots[i])) {
                        free(m->slots[i].key);
                        free_value(m, m->slots[i].value);
                }
        free(m->slots);
        free(m);
        return NULL;
}

/* The slot of @key, or NULL. */
static struct slot *find(const struct hashmap *m, const char *key, uint64_t h)
{
        size_t mask = m->capacity - 1;

        for (size_t i = h & mask, n = 0; n < m->capacity; i = (i + 1) & mask, n++) {
                struct slot *s = &m->slots[i];

                if (!s->key && !s->removed)
                        return NULL;
                if (slot_live(s) && s->hash == h && strcmp(s->key, key) == 0)
                        return s;
        }
        return NULL;
}

/* Moves every live entry into a table of @capacity (tombstones dropped). */
static int rehash(struct hashmap *m, size_t capacity)
{
        struct slot *slots = calloc(capacity, sizeof(*slots));
        size_t mask = capacity - 1;

        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; i < m->capacity; i++) {
                const struct slot *s = &m->slots[i];
                size_t j;

                if (!slot_live(s))
                        continue;
                for (j = s->hash & mask; slots[j].key; j = (j + 1) & mask)
                        ;
                slots[j] = *s;
        }
        free(m->slots);
        m->slots = slots;
        m->capacity = capacity;
        m->tombstones = 0;
        return 0;
}

/* Room for one more entry at a load of at most 3/4, counting tombstones. */
static int reserve_one(struct hashmap *m)
{
        size_t capacity = HASHMAP_MIN_CAPACITY;

        if ((m->size + m->tombstones + 1) * 4 <= m->capacity * 3)
                return 0;
        while (capacity < SIZE_MAX / 8 && (m->size + 1) * 2 > capacity)
                capacity *= 2;
        return rehash(m, capacity);
}

int hashmap_put(struct hashmap *m, const char *key, void *value)
{
        struct slot *s;
        uint64_t h;
        size_t mask, i;
        char *copy;

        if (!m || !key || !value) {
                if (m)
                        free_value(m, value);
                return -EINVAL;
        }
        h = hash_key(m, key);
        s = m->capacity ? find(m, key, h) : NULL;
        if (s) {
                if (s->value != value)
                        free_value(m, s->value);
                s->value = value;
                return 0;
        }
        copy = strdup(key);
        if (!copy || reserve_one(m) < 0) {
                free(copy);
                free_value(m, value);
                return -ENOMEM;
        }
        mask = m->capacity - 1;
        for (i = h & mask; slot_live(&m->slots[i]); i = (i + 1) & mask)
                ;
        if (m->slots[i].removed)
                m->tombstones--;
        m->slots[i] = (struct slot){ .key = copy, .value = value, .hash = h };
        m->size++;
        return 0;
}

void *hashmap_get(const struct hashmap *m, const char *key)
{
        const struct slot *s;

        if (!m || !key || m->size == 0)
                return NULL;
        s = find(m, key, hash_key(m, key));
        return s ? s->value : NULL;
}

void *hashmap_steal(struct hashmap *m, const char *key)
{
        struct slot *s;
        void *value;

        if (!m || !key || m->size == 0)
                return NULL;
        s = find(m, key, hash_key(m, key));
        if (!s)
                return NULL;
        value = s->value;
        free(s->key);
        *s = (struct slot){ .removed = true };
        m->size--;
        m->tombstones++;
        return value;
}

bool hashmap_remove(struct hashmap *m, const char *key)
{
        void *value = hashmap_steal(m, key);

        if (!value)
                return false;
        free_value(m, value);
        return true;
}

size_t hashmap_size(const struct hashmap *m)
{
        return m ? m->size : 0;
}

bool hashmap_next(const struct hashmap *m, struct hashmap_iter *it, const char **ret_key,
                  void **ret_value)
{
        for (; m && it->next < m->capacity; it->next++) {
                const struct slot *s = &m->slots[it->next];

                if (!slot_live(s))
                        continue;
                if (ret_key)
                        *ret_key = s->key;
                if (ret_value)
                        *ret_value = s->value;
                it->next++;
                return true;
        }
        return false;
}
