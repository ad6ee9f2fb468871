/* SPDX-License-Identifier: Apache-2.0 */
#include "json/yaml-doc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/buf.h"
#include "util/parse-util.h"
#include "util/time-util.h"

/* An open collection: its node and, for a mapping, the key that waits for its value (0: none). */
struct open_node {
        int node;
        int key;
};

struct anchor {
        char *name; /* owned */
        int node;
        yaml_mark_t mark;
};

/* A block of scalar text; the newest block is the head of the list. */
struct yaml_text {
        struct yaml_text *next; /* owned; the blocks filled before */
        size_t used, cap;       /* of data */
        char data[];
};

/* Usual block size: a 9 MB catalog file has about 4 MB of scalar text. */
#define TEXT_BLOCK_SIZE ((size_t)256 * 1024)

/* A NUL-terminated copy of the len bytes s in *t (a new block when the head has no room), or
 * NULL when out of memory. */
static char *text_copy(struct yaml_text **t, const void *s, size_t len)
{
        struct yaml_text *b = *t;
        char *p;

        if (!b || b->cap - b->used <= len) {
                size_t cap = MAX(len + 1, TEXT_BLOCK_SIZE - sizeof(struct yaml_text));

                b = malloc(sizeof(struct yaml_text) + cap);
                if (!b)
                        return NULL;
                *b = (struct yaml_text){ .next = *t, .cap = cap };
                *t = b;
        }
        p = b->data + b->used;
        memcpy(p, s, len);
        p[len] = '\0';
        b->used += len + 1;
        return p;
}

/* Frees what doc and text hold (doc zeroed, *text NULL): yaml_document_delete() without the
 * scalars' values, which are in text. */
static void compose_release(yaml_document_t *doc, struct yaml_text **text)
{
        /* the composer sets no version or tag directives */
        for (yaml_node_t *n = doc->nodes.start; n && n < doc->nodes.top; n++) {
                free(n->tag);
                if (n->type == YAML_SEQUENCE_NODE)
                        free(n->data.sequence.items.start);
                else if (n->type == YAML_MAPPING_NODE)
                        free(n->data.mapping.pairs.start);
        }
        free(doc->nodes.start);
        memset(doc, 0, sizeof(*doc));
        while (*text) {
                struct yaml_text *next = (*text)->next;

                free(*text);
                *text = next;
        }
}

struct composer {
        yaml_parser_t parser;
        yaml_document_t *doc;
        struct yaml_text **text;
        const char *file;
        struct error_detail *err;
        struct open_node *open; /* owned; depth_max entries */
        unsigned depth, depth_max;
        struct anchor *anchors; /* owned */
        size_t n_anchors, cap_anchors;
        usec_t deadline, cpu_usec_max;
        unsigned documents; /* DOCUMENT-START events seen */
        bool done;          /* STREAM-END reached */
};

/*
 * The parse budget is the parsing thread's CPU time, not wall time: on a loaded node (the
 * benchmark's 2 cores at load average 30) a good 9 MB file took over 10 s of wall time for about
 * 1 s of CPU and was refused.
 */
static usec_t thread_cpu_usec(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return now_monotonic();
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / 1000;
}

/*
 * Grows an array of *cap elements of size bytes to twice as many (16 at first); NULL when out of
 * memory (start is kept). Not inlined: gcc's -Wuse-after-free then loses track of which pointer
 * was reallocated and flags the reads of the updated stack fields in the callers.
 */
static __attribute__((noinline)) void *grow(void *start, size_t *cap, size_t size)
{
        size_t c = *cap ? *cap * 2 : 16;
        void *p = reallocarray(start, c, size);

        if (p)
                *cap = c;
        return p;
}

/* Appends v to a libyaml stack s ({start, end, top}); 0 or -ENOMEM. */
#define STACK_PUSH(s, v)                                                                      \
        __extension__({                                                                       \
                int r_ = 0;                                                                   \
                if ((s)->top == (s)->end) {                                                   \
                        size_t used_ = (size_t)((s)->top - (s)->start);                       \
                        size_t cap_ = (size_t)((s)->end - (s)->start);                        \
                        typeof((s)->start) p_ = grow((s)->start, &cap_, sizeof(*(s)->start)); \
                        if (p_) {                                                             \
                                (s)->start = p_;                                              \
                                (s)->top = p_ + used_;                                        \
                                (s)->end = p_ + cap_;                                         \
                        } else                                                                \
                                r_ = -ENOMEM;                                                 \
                }                                                                             \
                if (r_ == 0)                                                                  \
                        *(s)->top++ = (v);                                                    \
                r_;                                                                           \
        })

/* The new node's 1-based index, or -ENOMEM. */
static int push_node(yaml_document_t *doc, const yaml_node_t *n)
{
        size_t used = (size_t)(doc->nodes.top - doc->nodes.start);

        if (used >= INT32_MAX - 1 || STACK_PUSH(&doc->nodes, *n) < 0)
                return -ENOMEM;
        return (int)used + 1;
}

/* libyaml's composer error texts, so that a bad file reads as it did with yaml_parser_load(). */
/* A syntax error: its line, and its column too (the kubeconfig reader names it). */
static int syntax_error(struct composer *c, const yaml_mark_t *m, const char *problem,
                        const char *context)
{
        (void)error_detail_set_at(c->err, -EINVAL, c->file, (unsigned)m->line + 1,
                                  "invalid YAML: %s%s%s", problem, context ? " " : "",
                                  context ? context : "");
        if (c->err)
                c->err->column = (unsigned)m->column + 1;
        return -EINVAL;
}

static int compose_error(struct composer *c, const yaml_mark_t *m, const char *problem)
{
        return syntax_error(c, m, problem, NULL);
}

/* With many anchors every lookup is a scan: keep the CPU bound then too. */
static int check_deadline(struct composer *c, const yaml_mark_t *m)
{
        if (thread_cpu_usec() <= c->deadline)
                return 0;
        error_detail_set_at(c->err, -E2BIG, c->file, (unsigned)m->line + 1,
                            "parsing took longer than %u s",
                            (unsigned)(c->cpu_usec_max / USEC_PER_SEC));
        return -E2BIG;
}

static int find_anchor(struct composer *c, const char *name)
{
        for (size_t i = 0; i < c->n_anchors; i++)
                if (strcmp(c->anchors[i].name, name) == 0)
                        return (int)i;
        return -1;
}

/* Takes ownership of *name (reset to NULL). */
static int register_anchor(struct composer *c, yaml_char_t **name, int node, const yaml_mark_t *m)
{
        int i;

        if (!*name)
                return 0;
        if (c->n_anchors >= 1024 && check_deadline(c, m) < 0)
                return -E2BIG;
        i = find_anchor(c, (const char *)*name);
        if (i >= 0)
                return compose_error(c, m,
                                     "second occurrence found duplicate anchor; first occurrence");
        if (c->n_anchors == c->cap_anchors) {
                struct anchor *p = grow(c->anchors, &c->cap_anchors, sizeof(*c->anchors));

                if (!p)
                        return -ENOMEM;
                c->anchors = p;
        }
        c->anchors[c->n_anchors++] = (struct anchor){ .name = (char *)*name,
                                                      .node = node,
                                                      .mark = *m };
        *name = NULL;
        return 0;
}

/* Hangs node under the innermost open collection (nothing to do for the root). */
static int append_child(struct composer *c, int node)
{
        struct open_node *o;
        yaml_node_t *p;
        int r;

        if (c->depth == 0)
                return 0;
        o = &c->open[c->depth - 1];
        p = c->doc->nodes.start + o->node - 1;
        if (p->type == YAML_SEQUENCE_NODE)
                return STACK_PUSH(&p->data.sequence.items, node);
        if (o->key == 0) {
                o->key = node;
                return 0;
        }
        r = STACK_PUSH(&p->data.mapping.pairs,
                       ((yaml_node_pair_t){ .key = o->key, .value = node }));
        o->key = 0;
        return r;
}

/* Scalar and collection start events: a new node, owning the event's tag (a scalar's value is
 * copied into c->text; the event frees its own, so libyaml's next one reuses that memory). */
static int add_node(struct composer *c, yaml_event_t *ev)
{
        yaml_node_t n = { .start_mark = ev->start_mark, .end_mark = ev->end_mark };
        yaml_char_t **anchor, **tag;
        int idx, r;

        if (ev->type == YAML_SCALAR_EVENT) {
                n.type = YAML_SCALAR_NODE;
                n.data.scalar.value = (yaml_char_t *)text_copy(c->text, ev->data.scalar.value,
                                                               ev->data.scalar.length);
                if (!n.data.scalar.value)
                        return -ENOMEM;
                n.data.scalar.length = ev->data.scalar.length;
                n.data.scalar.style = ev->data.scalar.style;
                anchor = &ev->data.scalar.anchor;
                tag = &ev->data.scalar.tag;
        } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
                n.type = YAML_SEQUENCE_NODE;
                n.data.sequence.style = ev->data.sequence_start.style;
                anchor = &ev->data.sequence_start.anchor;
                tag = &ev->data.sequence_start.tag;
        } else {
                n.type = YAML_MAPPING_NODE;
                n.data.mapping.style = ev->data.mapping_start.style;
                anchor = &ev->data.mapping_start.anchor;
                tag = &ev->data.mapping_start.tag;
        }
        if (*tag && strcmp((const char *)*tag, "!") != 0)
                n.tag = *tag;
        else
                free(*tag);
        *tag = NULL;
        idx = push_node(c->doc, &n);
        if (idx < 0) {
                free(n.tag);
                return idx;
        }
        r = register_anchor(c, anchor, idx, &ev->start_mark);
        if (r < 0)
                return r;
        r = append_child(c, idx);
        if (r < 0 || n.type == YAML_SCALAR_NODE)
                return r;
        if (c->depth >= c->depth_max) {
                error_detail_set_at(c->err, -E2BIG, c->file, (unsigned)ev->start_mark.line + 1,
                                    "nesting deeper than %u levels", c->depth_max);
                return -E2BIG;
        }
        c->open[c->depth++] = (struct open_node){ .node = idx };
        return 0;
}

static int add_alias(struct composer *c, const yaml_event_t *ev)
{
        int i;

        if (c->n_anchors >= 1024 && check_deadline(c, &ev->start_mark) < 0)
                return -E2BIG;
        i = find_anchor(c, (const char *)ev->data.alias.anchor);
        if (i < 0)
                return compose_error(c, &ev->start_mark, "found undefined alias");
        return append_child(c, c->anchors[i].node);
}

static int on_event(struct composer *c, yaml_event_t *ev)
{
        switch (ev->type) {
        case YAML_STREAM_END_EVENT:
                c->done = true;
                return 0;
        case YAML_DOCUMENT_START_EVENT:
                if (c->documents++ == 0) {
                        c->doc->start_mark = ev->start_mark;
                        return 0;
                }
                /* one input, one document */
                error_detail_set_at(c->err, -EINVAL, c->file, (unsigned)ev->start_mark.line + 1,
                                    "more than one YAML document in file");
                return -EINVAL;
        case YAML_DOCUMENT_END_EVENT:
                c->doc->end_mark = ev->end_mark;
                return 0;
        case YAML_ALIAS_EVENT:
                return add_alias(c, ev);
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
                return add_node(c, ev);
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
                if (c->depth > 0)
                        c->doc->nodes.start[c->open[--c->depth].node - 1].end_mark = ev->end_mark;
                return 0;
        default:
                return 0;
        }
}

static int parse_error(struct composer *c)
{
        const yaml_parser_t *p = &c->parser;
        yaml_mark_t m = p->problem ? p->problem_mark : p->context_mark;

        (void)syntax_error(c, &m, p->problem ? p->problem : "parse error", p->context);
        return p->error == YAML_MEMORY_ERROR ? -ENOMEM : -EINVAL;
}

static int compose_events(struct composer *c)
{
        for (size_t n = 0; !c->done; n++) {
                yaml_event_t ev;
                int r;

                if (!yaml_parser_parse(&c->parser, &ev))
                        return parse_error(c);
                r = on_event(c, &ev);
                if (r >= 0 && (n & 4095) == 4095)
                        r = check_deadline(c, &ev.start_mark);
                yaml_event_delete(&ev);
                if (r < 0)
                        return r;
        }
        return 0;
}

/*
 * Parses data into *doc (zeroed first; an empty stream has no root node) and *text (owned: the
 * text doc's scalars point into; NULL when there is none). On error both are released.
 */
static int compose(const char *file, const char *data, size_t len, const struct yaml_limits *limits,
                   yaml_document_t *doc, struct yaml_text **text, struct error_detail *err)
{
        struct composer c = {
                .doc = doc,
                .text = text,
                .file = file,
                .err = err,
                .depth_max = limits->depth_max,
                .cpu_usec_max = limits->cpu_usec_max,
                .deadline = thread_cpu_usec() + limits->cpu_usec_max,
        };
        int r;

        memset(doc, 0, sizeof(*doc));
        *text = NULL;
        c.open = calloc(MAX(c.depth_max, 1U), sizeof(*c.open));
        if (!c.open)
                return -ENOMEM;
        if (!yaml_parser_initialize(&c.parser)) {
                free(c.open);
                return -ENOMEM;
        }
        yaml_parser_set_input_string(&c.parser, (const unsigned char *)data, len);
        r = compose_events(&c);
        yaml_parser_delete(&c.parser);
        for (size_t i = 0; i < c.n_anchors; i++)
                free(c.anchors[i].name);
        free(c.anchors);
        free(c.open);
        if (r < 0)
                compose_release(doc, text);
        return r;
}

int ydoc_load(struct ydoc *d, const char *file, const char *data, size_t len,
              const struct yaml_limits *limits, struct error_detail *err)
{
        size_t n;
        int r;

        *d = (struct ydoc){ .file = file, .depth_max = limits->depth_max };
        if (len > limits->size_max)
                return error_detail_set_at(err, -EFBIG, file, 0, "file too large (limit %zu bytes)",
                                           limits->size_max);
        if (memchr(data, '\0', len))
                return error_detail_set_at(err, -EINVAL, file, 0, "file contains NUL bytes");
        r = compose(file, data, len, limits, &d->doc, &d->text, err);
        if (r < 0)
                return r;
        d->loaded = true;
        n = (size_t)(d->doc.nodes.top - d->doc.nodes.start);
        d->budget = MIN(n * 4 + 1024, limits->nodes_max);
        return 0;
}

void ydoc_release(struct ydoc *d)
{
        if (d->loaded)
                compose_release(&d->doc, &d->text);
        d->loaded = false;
}

yaml_node_t *ydoc_root(struct ydoc *d)
{
        return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

yaml_node_t *ydoc_node(struct ydoc *d, int index)
{
        return yaml_document_get_node(&d->doc, index);
}

unsigned ynode_line(const yaml_node_t *n)
{
        return n ? (unsigned)n->start_mark.line + 1 : 0;
}

const char *ynode_scalar(const yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        return (const char *)n->data.scalar.value;
}

static bool ynode_is_plain(const yaml_node_t *n)
{
        return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

bool ynode_is_null(const yaml_node_t *n)
{
        const char *s = ynode_scalar(n);

        if (!s || !ynode_is_plain(n))
                return false;
        return s[0] == '\0' || streq(s, "~") || streq(s, "null") || streq(s, "Null") ||
               streq(s, "NULL");
}

yaml_node_t *ydoc_map_get(struct ydoc *d, yaml_node_t *map, const char *key)
{
        if (!map || map->type != YAML_MAPPING_NODE)
                return NULL;
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
             p++) {
                const char *k = ynode_scalar(ydoc_node(d, p->key));
                yaml_node_t *v = ydoc_node(d, p->value);

                if (!k || !streq(k, key))
                        continue;
                return v && ynode_is_null(v) ? NULL : v;
        }
        return NULL;
}

int ydoc_root_mapping(struct ydoc *d, const char *what, yaml_node_t **ret, struct error_detail *err)
{
        yaml_node_t *root = ydoc_root(d);

        *ret = NULL;
        if (root && root->type != YAML_MAPPING_NODE)
                return error_detail_set_at(err, -EINVAL, d->file, ynode_line(root),
                                           "%s must be a mapping", what);
        *ret = root;
        return 0;
}

int ydoc_visit(struct ydoc *d, const yaml_node_t *n, struct error_detail *err)
{
        if (++d->visited > d->budget) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(n),
                                    "too many YAML nodes (aliases expand past %zu)", d->budget);
                return -E2BIG;
        }
        return 0;
}

const char *ynode_kind(const yaml_node_t *n)
{
        switch (n->type) {
        case YAML_SCALAR_NODE:
                return "a scalar";
        case YAML_SEQUENCE_NODE:
                return "a list";
        case YAML_MAPPING_NODE:
                return "a mapping";
        default:
                return "nothing";
        }
}

int ydoc_string(struct ydoc *d, yaml_node_t *n, char **ret, struct error_detail *err)
{
        char *s;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n)) {
                *ret = NULL;
                return 0;
        }
        if (n->type != YAML_SCALAR_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "expected a string, got %s", ynode_kind(n));
                return -EINVAL;
        }
        s = strdup(ynode_scalar(n));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int yaml_parse_bool(const char *s, bool *ret)
{
        if (streq(s, "true") || streq(s, "True") || streq(s, "TRUE")) {
                *ret = true;
                return 0;
        }
        if (streq(s, "false") || streq(s, "False") || streq(s, "FALSE")) {
                *ret = false;
                return 0;
        }
        return -EINVAL;
}

int ydoc_bool(struct ydoc *d, yaml_node_t *n, bool *ret, struct error_detail *err)
{
        const char *s = ynode_scalar(n);
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (!s || yaml_parse_bool(s, ret) < 0) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "expected true or false, got %s%s%s", s ? "'" : "",
                                    s ? s : ynode_kind(n), s ? "'" : "");
                return -EINVAL;
        }
        return 0;
}

/* YAML 1.2 core schema resolution of a plain scalar. */
static json_t *plain_scalar_to_json(const char *s)
{
        bool b;
        int64_t i;
        char *end;
        double f;

        if (s[0] == '\0' || streq(s, "~") || streq(s, "null") || streq(s, "Null") ||
            streq(s, "NULL"))
                return json_null();
        if (yaml_parse_bool(s, &b) == 0)
                return json_boolean(b);
        if (safe_atoi64(s, &i) == 0)
                return json_integer(i);
        if (strpbrk(s, "0123456789") && strspn(s, "0123456789+-.eE") == strlen(s)) {
                errno = 0;
                f = strtod(s, &end);
                if (errno == 0 && *end == '\0' && isfinite(f))
                        return json_real(f);
        }
        return json_string(s);
}

static int to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t **ret,
                   struct error_detail *err);

static int sequence_to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t *v,
                            struct error_detail *err)
{
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
                json_t *item = NULL;
                int r = to_json(d, ydoc_node(d, *it), depth + 1, &item, err);

                if (r < 0)
                        return r;
                if (json_array_append_new(v, item) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int mapping_to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t *v,
                           struct error_detail *err)
{
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *key = ynode_scalar(k);
                json_t *item = NULL;
                int r;

                if (!key) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "mapping keys must be scalars");
                        return -EINVAL;
                }
                if (json_object_get(v, key)) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "duplicate key '%s'", key);
                        return -EINVAL;
                }
                r = to_json(d, ydoc_node(d, p->value), depth + 1, &item, err);
                if (r < 0)
                        return r;
                if (json_object_set_new(v, key, item) < 0) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "invalid key '%s'", key);
                        return -EINVAL;
                }
        }
        return 0;
}

static int to_json(struct ydoc *d, yaml_node_t *n, unsigned depth, json_t **ret,
                   struct error_detail *err)
{
        json_auto_t *v = NULL;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (depth > d->depth_max) {
                error_detail_set_at(err, -E2BIG, d->file, ynode_line(n), "value nested too deeply");
                return -E2BIG;
        }
        switch (n->type) {
        case YAML_SCALAR_NODE:
                v = ynode_is_plain(n) ? plain_scalar_to_json(ynode_scalar(n))
                                      : json_string(ynode_scalar(n));
                if (!v) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                            "string is not UTF-8");
                        return -EINVAL;
                }
                break;
        case YAML_SEQUENCE_NODE:
        case YAML_MAPPING_NODE:
                v = n->type == YAML_SEQUENCE_NODE ? json_array() : json_object();
                if (!v)
                        return -ENOMEM;
                r = n->type == YAML_SEQUENCE_NODE ? sequence_to_json(d, n, depth, v, err)
                                                  : mapping_to_json(d, n, depth, v, err);
                if (r < 0)
                        return r;
                break;
        default:
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n), "unexpected YAML node");
                return -EINVAL;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int ydoc_to_json(struct ydoc *d, yaml_node_t *n, json_t **ret, struct error_detail *err)
{
        return to_json(d, n, 0, ret, err);
}

int ydoc_dispatch(struct ydoc *d, yaml_node_t *n, const struct yfield *table, void *base,
                  struct error_detail *err)
{
        size_t n_fields = 0;
        uint64_t seen_small = 0;
        int r;

        r = ydoc_visit(d, n, err);
        if (r < 0)
                return r;
        if (ynode_is_null(n))
                return 0;
        if (n->type != YAML_MAPPING_NODE) {
                error_detail_set_at(err, -EINVAL, d->file, ynode_line(n),
                                    "expected a mapping, got %s", ynode_kind(n));
                return -EINVAL;
        }
        while (table[n_fields].key)
                n_fields++;
        if (n_fields > 64)
                return -EINVAL; /* programming error: tables are small */

        for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = ydoc_node(d, p->key);
                const char *key = ynode_scalar(k);
                size_t i;

                if (!key) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "mapping keys must be scalars");
                        return -EINVAL;
                }
                for (i = 0; i < n_fields; i++)
                        if (streq(table[i].key, key))
                                break;
                if (i == n_fields) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "unknown key '%s'", key);
                        return -EINVAL;
                }
                if (seen_small & (UINT64_C(1) << i)) {
                        error_detail_set_at(err, -EINVAL, d->file, ynode_line(k),
                                            "duplicate key '%s'", key);
                        return -EINVAL;
                }
                seen_small |= UINT64_C(1) << i;
                if (!table[i].fn)
                        continue; /* accepted and ignored */
                r = table[i].fn(d, ydoc_node(d, p->value), (char *)base + table[i].offset, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int ydoc_field_string(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        char **p = ret;
        char *s = NULL;
        int r;

        r = ydoc_string(d, n, &s, err);
        if (r < 0)
                return r;
        free(*p);
        *p = s;
        return 0;
}

int ydoc_field_json(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        json_t **p = ret;
        json_t *v = NULL;
        int r;

        r = ydoc_to_json(d, n, &v, err);
        if (r < 0)
                return r;
        json_decref(*p);
        *p = v;
        return 0;
}

int ydoc_field_tristate(struct ydoc *d, yaml_node_t *n, void *ret, struct error_detail *err)
{
        int *p = ret;
        bool b;
        int r;

        r = ydoc_bool(d, n, &b, err);
        if (r < 0)
                return r;
        *p = b;
        return 0;
}

/* ---- the writer ---- */

static int emit_write(void *data, unsigned char *buffer, size_t size)
{
        return buf_append(data, buffer, size) == 0; /* libyaml: 1 on success */
}

/* Whether a plain scalar s would be read back as something else than the string s, by our reader
 * (YAML 1.2 core schema) or by a YAML 1.1 one (yes/no/on/off/y/n in any case). */
static bool plain_is_ambiguous(const char *s)
{
        static const char *const yaml11[] = { "y", "n", "yes", "no", "on", "off" };
        json_t *v = plain_scalar_to_json(s);
        bool amb = !json_is_string(v);

        json_decref(v);
        for (size_t i = 0; !amb && i < ELEMENTSOF(yaml11); i++)
                amb = strcasecmp(s, yaml11[i]) == 0;
        return amb;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, yaml_scalar_style_t style)
{
        yaml_event_t ev;

        if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)strlen(text),
                                          1, 1, style))
                return -ENOMEM;
        return yaml_emitter_emit(e, &ev) ? 0 : -EINVAL;
}

static int emit_value(yaml_emitter_t *e, const json_t *v, unsigned depth, unsigned depth_max);

static int emit_string(yaml_emitter_t *e, const json_t *v)
{
        const char *s = json_string_value(v);

        if (strlen(s) != json_string_length(v))
                return -EINVAL; /* a NUL inside: no YAML scalar holds it here */
        return emit_scalar(e, s,
                           strchr(s, '\n')         ? YAML_LITERAL_SCALAR_STYLE
                           : plain_is_ambiguous(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                   : YAML_ANY_SCALAR_STYLE);
}

static int emit_mapping(yaml_emitter_t *e, const json_t *v, unsigned depth, unsigned depth_max)
{
        yaml_event_t ev;
        const char *key;
        json_t *item;
        int r;

        if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
            !yaml_emitter_emit(e, &ev))
                return -ENOMEM;
        json_object_foreach((json_t *)v, key, item) {
                r = emit_scalar(e, key,
                                plain_is_ambiguous(key) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                        : YAML_ANY_SCALAR_STYLE);
                if (r >= 0)
                        r = emit_value(e, item, depth + 1, depth_max);
                if (r < 0)
                        return r;
        }
        yaml_mapping_end_event_initialize(&ev);
        return yaml_emitter_emit(e, &ev) ? 0 : -ENOMEM;
}

static int emit_sequence(yaml_emitter_t *e, const json_t *v, unsigned depth, unsigned depth_max)
{
        yaml_event_t ev;
        json_t *item;
        size_t i;
        int r;

        if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
            !yaml_emitter_emit(e, &ev))
                return -ENOMEM;
        json_array_foreach(v, i, item) {
                r = emit_value(e, item, depth + 1, depth_max);
                if (r < 0)
                        return r;
        }
        yaml_sequence_end_event_initialize(&ev);
        return yaml_emitter_emit(e, &ev) ? 0 : -ENOMEM;
}

static int emit_value(yaml_emitter_t *e, const json_t *v, unsigned depth, unsigned depth_max)
{
        if (json_is_string(v))
                return emit_string(e, v);
        if (json_is_number(v) || json_is_boolean(v) || json_is_null(v)) {
                AUTOFREE char *text = json_dumps(v, JSON_ENCODE_ANY);

                if (!text)
                        return -ENOMEM;
                return emit_scalar(e, text, YAML_PLAIN_SCALAR_STYLE);
        }
        if (!json_is_object(v) && !json_is_array(v))
                return -EINVAL;
        if (depth >= depth_max)
                return -E2BIG;
        return json_is_object(v) ? emit_mapping(e, v, depth, depth_max)
                                 : emit_sequence(e, v, depth, depth_max);
}

int ydoc_dump_json(const json_t *v, unsigned depth_max, char **ret, size_t *ret_len)
{
        CLEANUP(buf_releasep) struct buf out = { 0 };
        yaml_emitter_t e;
        yaml_event_t ev;
        int r = -ENOMEM;

        if (!v || !ret)
                return -EINVAL;
        buf_init(&out, SIZE_MAX);
        if (!yaml_emitter_initialize(&e))
                return -ENOMEM;
        yaml_emitter_set_output(&e, emit_write, &out);
        yaml_emitter_set_unicode(&e, 1);
        yaml_emitter_set_width(&e, -1); /* no folding of long scalars */
        yaml_emitter_set_indent(&e, 2);
        if (!yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) ||
            !yaml_emitter_emit(&e, &ev))
                goto out;
        if (!yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) ||
            !yaml_emitter_emit(&e, &ev))
                goto out;
        r = emit_value(&e, v, 0, depth_max);
        if (r < 0)
                goto out;
        r = -ENOMEM;
        yaml_document_end_event_initialize(&ev, 1);
        if (!yaml_emitter_emit(&e, &ev))
                goto out;
        yaml_stream_end_event_initialize(&ev);
        if (!yaml_emitter_emit(&e, &ev) || !yaml_emitter_flush(&e))
                goto out;
        *ret = buf_take(&out, ret_len);
        r = *ret ? 0 : -ENOMEM;
out:
        yaml_emitter_delete(&e);
        return r;
}
