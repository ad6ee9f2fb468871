/* SPDX-License-Identifier: Apache-2.0 */
#include "store/entity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/queries.h"
#include "util/buf.h"

#define LIST_PARAMS_MAX 4096
#define COND_DEPTH_MAX  64

void store_prop_done(struct store_prop *p)
{
        free(p->name);
        free(p->s);
        *p = (struct store_prop){ 0 };
}

void store_entity_done(struct store_entity *e)
{
        free(e->type);
        free(e->scope);
        free(e->name);
        free(e->external_id);
        for (size_t i = 0; i < e->n_props; i++)
                store_prop_done(&e->props[i]);
        free(e->props);
        *e = (struct store_entity){ 0 };
}

void store_entities_free(struct store_entity *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                store_entity_done(&v[i]);
        free(v);
}

const struct store_prop *store_entity_prop(const struct store_entity *e, const char *name,
                                           bool custom)
{
        for (size_t i = 0; i < e->n_props; i++)
                if (e->props[i].custom == custom && streq(e->props[i].name, name))
                        return &e->props[i];
        return NULL;
}

int store_entity_append_prop(struct store_entity *e, struct store_prop *p)
{
        if (e->n_props >= e->props_cap) {
                size_t cap = MAX(e->n_props * 2, (size_t)8);
                struct store_prop *v = reallocarray(e->props, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                e->props = v;
                e->props_cap = cap;
        }
        e->props[e->n_props++] = *p;
        *p = (struct store_prop){ 0 };
        return 0;
}

int store_entity_put_prop(struct store_entity *e, struct store_prop *p)
{
        for (size_t i = 0; i < e->n_props; i++)
                if (e->props[i].custom == p->custom && streq(e->props[i].name, p->name)) {
                        store_prop_done(&e->props[i]);
                        e->props[i] = *p;
                        *p = (struct store_prop){ 0 };
                        return 0;
                }
        return store_entity_append_prop(e, p);
}

static int put(struct store_entity *e, const char *name, bool custom, struct store_prop *p)
{
        int r;

        p->name = strdup(name);
        p->custom = custom;
        if (!p->name) {
                store_prop_done(p);
                return -ENOMEM;
        }
        r = store_entity_put_prop(e, p);
        if (r < 0)
                store_prop_done(p);
        return r;
}

int store_entity_set_string(struct store_entity *e, const char *name, bool custom,
                            enum store_ptype type, const char *s)
{
        struct store_prop p = { .type = type, .s = strdup(s ? s : "") };

        if (!p.s)
                return -ENOMEM;
        return put(e, name, custom, &p);
}

int store_entity_set_int(struct store_entity *e, const char *name, bool custom, int64_t i)
{
        struct store_prop p = { .type = STORE_P_INT, .i = i };
        return put(e, name, custom, &p);
}

int store_entity_set_double(struct store_entity *e, const char *name, bool custom, double d)
{
        struct store_prop p = { .type = STORE_P_DOUBLE, .d = d };
        return put(e, name, custom, &p);
}

int store_entity_set_bool(struct store_entity *e, const char *name, bool custom, bool b)
{
        struct store_prop p = { .type = STORE_P_BOOL, .b = b };
        return put(e, name, custom, &p);
}

void store_entity_remove_props(struct store_entity *e, bool custom)
{
        size_t j = 0;

        for (size_t i = 0; i < e->n_props; i++) {
                if (e->props[i].custom == custom)
                        store_prop_done(&e->props[i]);
                else
                        e->props[j++] = e->props[i];
        }
        e->n_props = j;
}

static int insert_props(struct store *s, struct store_conn *c, const struct store_entity *e)
{
        for (size_t i = 0; i < e->n_props; i++) {
                const struct store_prop *p = &e->props[i];
                char vtype[2] = { (char)p->type, 0 };
                struct store_val v[9] = {
                        SV_INT(e->group), SV_INT(e->id),  SV_INT(p->custom ? 1 : 0),
                        SV_TEXT(p->name), SV_TEXT(vtype), SV_NULL,
                        SV_NULL,          SV_NULL,        SV_NULL,
                };
                int r;

                switch (p->type) {
                case STORE_P_STRING:
                case STORE_P_STRUCT:
                        v[5] = SV_TEXT(p->s ? p->s : "");
                        break;
                case STORE_P_INT:
                        v[6] = SV_INT(p->i);
                        break;
                case STORE_P_DOUBLE:
                        v[7] = SV_DOUBLE(p->d);
                        break;
                case STORE_P_BOOL:
                        v[8] = SV_INT(p->b ? 1 : 0);
                        break;
                }
                r = store_exec(s, c, q_prop_insert, v, ELEMENTSOF(v), NULL, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_id(void *userdata, const struct store_val *cols, size_t n)
{
        int64_t *id = userdata;

        if (n >= 1)
                *id = store_val_int(&cols[0]);
        return 0;
}

/*
 * PostgreSQL takes ids from sequences, which a rolled-back insert does not give back: a name or
 * external id already taken is answered before an id is drawn, so that a 409 leaves no gap (as
 * on SQLite, whose counter rolls back). Two racing inserts of one name may still leave one.
 */
static int check_unique(struct store *s, struct store_conn *c, const struct store_entity *e,
                        enum store_unique *ret_clash)
{
        struct store_val name[3] = { SV_TEXT(e->type), SV_TEXT(e->scope ? e->scope : ""),
                                     SV_TEXT(e->name ? e->name : "") };
        struct store_val ext[2] = { SV_INT(e->group), SV_TEXT(e->external_id) };
        int r;

        r = store_exec(s, c, q_entity_name_taken, name, ELEMENTSOF(name), NULL, NULL);
        if (r > 0) {
                *ret_clash = STORE_UNIQUE_NAME;
                return -EEXIST;
        }
        if (r == 0 && e->external_id) {
                r = store_exec(s, c, q_entity_external_id_taken, ext, ELEMENTSOF(ext), NULL, NULL);
                if (r > 0) {
                        *ret_clash = STORE_UNIQUE_EXTERNAL_ID;
                        return -EEXIST;
                }
        }
        return r;
}

/*
 * The uniqueness the database refused a write for: the index entity_external_id (its name on
 * PostgreSQL, its columns "entity.grp, entity.external_id" on SQLite), else entity_name.
 */
static int unique_violation(struct store *s, struct store_conn *c, enum store_unique *ret_clash)
{
        *ret_clash = strstr(store_conflict(s, c), "external_id") ? STORE_UNIQUE_EXTERNAL_ID
                                                                 : STORE_UNIQUE_NAME;
        return -EEXIST;
}

int store_entity_insert(struct store *s, struct store_conn *c, struct store_entity *e,
                        enum store_unique *ret_clash)
{
        struct store_val seq = SV_INT(e->group);
        enum store_unique clash;
        int64_t id = 0;
        int r;

        if (!ret_clash)
                ret_clash = &clash;
        if (store_dialect(s) == STORE_DIALECT_POSTGRES) {
                r = check_unique(s, c, e, ret_clash);
                if (r < 0)
                        return r;
        }

        r = store_exec(s, c,
                       store_dialect(s) == STORE_DIALECT_POSTGRES ? q_seq_next_pg : q_seq_next,
                       &seq, 1, read_id, &id);
        if (r < 0)
                return r;
        if (id <= 0)
                return -EIO;
        {
                struct store_val v[9] = {
                        SV_INT(e->group),
                        SV_INT(id),
                        SV_TEXT(e->type),
                        SV_INT(e->parent_id),
                        SV_TEXT(e->scope ? e->scope : ""),
                        SV_TEXT(e->name ? e->name : ""),
                        e->external_id ? SV_TEXT(e->external_id) : SV_NULL,
                        SV_INT(e->create_ms),
                        SV_INT(e->update_ms),
                };
                r = store_exec(s, c, q_entity_insert, v, ELEMENTSOF(v), NULL, NULL);
                if (r == -EEXIST)
                        return unique_violation(s, c, ret_clash);
                if (r < 0)
                        return r;
        }
        e->id = id;
        return insert_props(s, c, e);
}

int store_entity_update(struct store *s, struct store_conn *c, const struct store_entity *e,
                        enum store_unique *ret_clash)
{
        struct store_val v[7] = {
                SV_INT(e->parent_id),
                SV_TEXT(e->scope ? e->scope : ""),
                SV_TEXT(e->name ? e->name : ""),
                e->external_id ? SV_TEXT(e->external_id) : SV_NULL,
                SV_INT(e->update_ms),
                SV_INT(e->group),
                SV_INT(e->id),
        };
        struct store_val k[2] = { SV_INT(e->group), SV_INT(e->id) };
        int r;

        r = store_exec(s, c, q_entity_update, v, ELEMENTSOF(v), NULL, NULL);
        if (r == -EEXIST) {
                enum store_unique clash;

                return unique_violation(s, c, ret_clash ? ret_clash : &clash);
        }
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        r = store_exec(s, c, q_prop_delete, k, ELEMENTSOF(k), NULL, NULL);
        if (r < 0)
                return r;
        return insert_props(s, c, e);
}

/* ---- reading ---- */

struct collect {
        struct store_entity *v;
        size_t n, cap;
};

static char *dup_text(const struct store_val *v)
{
        const char *t = store_val_text(v);

        if (!t && v->type != STORE_NULL) {
                /* SQLite may hand back a number for a TEXT column only if the value was bound
                 * as one; we never do that. */
                return NULL;
        }
        return t ? strdup(t) : NULL;
}

static int collect_row(void *userdata, const struct store_val *cols, size_t n)
{
        struct collect *col = userdata;
        struct store_entity *e;

        if (n < 9)
                return -EIO;
        if (col->n == col->cap) {
                size_t cap = col->cap ? col->cap * 2 : 16;
                struct store_entity *v = reallocarray(col->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                col->v = v;
                col->cap = cap;
        }
        e = &col->v[col->n];
        *e = (struct store_entity){
                .group = (enum store_group)store_val_int(&cols[0]),
                .id = store_val_int(&cols[1]),
                .type = dup_text(&cols[2]),
                .parent_id = store_val_int(&cols[3]),
                .scope = dup_text(&cols[4]),
                .name = dup_text(&cols[5]),
                .external_id = cols[6].type == STORE_NULL ? NULL : dup_text(&cols[6]),
                .create_ms = store_val_int(&cols[7]),
                .update_ms = store_val_int(&cols[8]),
        };
        col->n++;
        if (!e->type || !e->scope || !e->name || (cols[6].type != STORE_NULL && !e->external_id))
                return -ENOMEM;
        return 0;
}

static int prop_row(void *userdata, const struct store_val *cols, size_t n)
{
        struct store_entity *e = userdata;
        struct store_prop p = { 0 };
        const char *vt, *name;
        int r;

        if (n < 7)
                return -EIO;
        name = store_val_text(&cols[1]);
        vt = store_val_text(&cols[2]);
        if (!name || !vt)
                return -EIO;
        p.type = (enum store_ptype)vt[0];
        p.custom = store_val_int(&cols[0]) != 0;
        switch (p.type) {
        case STORE_P_STRING:
        case STORE_P_STRUCT:
                p.s = strdup(store_val_text(&cols[3]) ? store_val_text(&cols[3]) : "");
                if (!p.s)
                        return -ENOMEM;
                break;
        case STORE_P_INT:
                p.i = store_val_int(&cols[4]);
                break;
        case STORE_P_DOUBLE:
                p.d = store_val_double(&cols[5]);
                break;
        case STORE_P_BOOL:
                p.b = store_val_int(&cols[6]) != 0;
                break;
        default:
                return -EIO;
        }
        p.name = strdup(name);
        if (!p.name) {
                store_prop_done(&p);
                return -ENOMEM;
        }
        /* (grp, entity_id, custom, name) is the primary key: every row is a new property */
        r = store_entity_append_prop(e, &p);
        if (r < 0)
                store_prop_done(&p);
        return r;
}

/* What a get collects: the entity its rows make, and the key it was asked for. */
struct get_collect {
        struct collect col;
        enum store_group group;
        int64_t id;
};

/*
 * A row of q_entity_get: the entity's columns but its group and id, then one property's (all
 * NULL when it has none: a LEFT JOIN). Every row is of the same entity, so the first one
 * makes it.
 */
static int get_row(void *userdata, const struct store_val *cols, size_t n)
{
        struct get_collect *g = userdata;
        int r;

        if (n < 14)
                return -EIO;
        if (g->col.n == 0) {
                struct store_val row[9] = { SV_INT(g->group), SV_INT(g->id) };

                memcpy(row + 2, cols, 7 * sizeof(*cols));
                r = collect_row(&g->col, row, ELEMENTSOF(row));
                if (r < 0)
                        return r;
        }
        if (cols[8].type == STORE_NULL)
                return 0;
        return prop_row(&g->col.v[0], cols + 7, 7);
}

/* Hands the one entity collected to ret when r is not an error; frees the collection. */
static int take_one(struct collect *col, int r, struct store_entity *ret)
{
        if (r < 0) {
                store_entities_free(col->v, col->n);
                return r;
        }
        *ret = col->v[0];
        free(col->v);
        return 0;
}

/* A get: the entity and its properties in one statement (one round trip, one implicit
 * transaction). */
int store_entity_get(struct store *s, struct store_conn *c, enum store_group group, int64_t id,
                     struct store_entity *ret)
{
        struct store_val k[4] = { SV_INT(group), SV_INT(id), SV_INT(group), SV_INT(id) };
        struct get_collect g = { .group = group, .id = id };
        int r;

        r = store_exec(s, c, q_entity_get, k, ELEMENTSOF(k), get_row, &g);
        if (r >= 0 && g.col.n == 0)
                r = -ENOENT;
        return take_one(&g.col, r, ret);
}

/* The row locked first, then its properties read by a statement of its own: see
 * q_entity_get_for_update. */
int store_entity_get_for_update(struct store *s, struct store_conn *c, enum store_group group,
                                int64_t id, struct store_entity *ret)
{
        struct store_val k[2] = { SV_INT(group), SV_INT(id) };
        struct collect col = { 0 };
        int r;

        if (store_dialect(s) != STORE_DIALECT_POSTGRES)
                return store_entity_get(s, c, group, id, ret);
        r = store_exec(s, c, q_entity_get_for_update, k, ELEMENTSOF(k), collect_row, &col);
        if (r >= 0 && col.n == 0)
                r = -ENOENT;
        if (r >= 0)
                r = store_exec(s, c, q_prop_get, k, ELEMENTSOF(k), prop_row, &col.v[0]);
        return take_one(&col, r, ret);
}

/* ---- list queries ---- */

struct sqlb {
        struct buf sql;
        struct store_val params[LIST_PARAMS_MAX];
        size_t n;
        enum store_dialect dialect;
};

static int sqlb_puts(struct sqlb *b, const char *frag)
{
        return buf_puts(&b->sql, frag);
}

static int sqlb_bind(struct sqlb *b, struct store_val v)
{
        if (b->n >= ELEMENTSOF(b->params))
                return -E2BIG;
        b->params[b->n++] = v;
        return 0;
}

static int sqlb_put_all(struct sqlb *b, const char *const *frags, size_t n)
{
        int r = 0;

        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sqlb_puts(b, frags[i]);
        return r;
}

/* The operator of c and its placeholders ("= ?", "IN (?, ?)", ...). */
static int put_operator(struct sqlb *b, const struct store_cond *c)
{
        int r;

        switch (c->op) {
        case STORE_OP_LIKE:
                return sqlb_puts(b, q_like);
        case STORE_OP_ILIKE:
                return sqlb_puts(b, q_ilike_pg);
        case STORE_OP_IN:
                r = sqlb_puts(b, q_in_open);
                for (size_t i = 0; r >= 0 && i < c->n_vals; i++)
                        r = sqlb_puts(b, i == 0 ? q_param : q_param_more);
                return r < 0 ? r : sqlb_puts(b, q_close);
        default:
                return sqlb_puts(b, q_ops[c->op]);
        }
}

/* Binds the values of c: every one for IN, else the first. */
static int bind_values(struct sqlb *b, const struct store_cond *c)
{
        size_t n = c->op == STORE_OP_IN ? c->n_vals : 1;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sqlb_bind(b, c->vals[i]);
        return r;
}

static int compile_cmp_target(struct sqlb *b, const struct store_cond *c, enum store_vcol vcol)
{
        const char *target = c->is_column ? q_columns[c->column] : q_prop_columns[vcol];
        int r;

        if (c->op == STORE_OP_ILIKE && b->dialect == STORE_DIALECT_SQLITE) {
                const char *const frags[] = { q_lower_open, target, q_lower_close,
                                              q_like_lower_param };

                r = sqlb_put_all(b, frags, ELEMENTSOF(frags));
        } else {
                r = sqlb_puts(b, target);
                if (r >= 0)
                        r = put_operator(b, c);
        }
        return r < 0 ? r : bind_values(b, c);
}

static int compile_cond(struct sqlb *b, const struct store_cond *c, unsigned depth);

/* "(kid AND kid ...)" or "(kid OR kid ...)". */
static int compile_junction(struct sqlb *b, const struct store_cond *c, unsigned depth)
{
        int r = sqlb_puts(b, q_open);

        for (size_t i = 0; r >= 0 && i < c->n_kids; i++) {
                if (i > 0)
                        r = sqlb_puts(b, c->kind == STORE_COND_AND ? q_and : q_or);
                if (r >= 0)
                        r = compile_cond(b, c->kids[i], depth + 1);
        }
        return r < 0 ? r : sqlb_puts(b, q_close);
}

/* The comparison of a property's value column; an int-or-double compares both columns. */
static int compile_prop_value(struct sqlb *b, const struct store_cond *c)
{
        int r;

        if (c->vcol != STORE_VCOL_INT_OR_DOUBLE)
                return compile_cmp_target(b, c, c->vcol);
        r = sqlb_puts(b, q_open);
        if (r >= 0)
                r = compile_cmp_target(b, c, STORE_VCOL_INT);
        if (r >= 0)
                r = sqlb_puts(b, q_or);
        if (r >= 0)
                r = compile_cmp_target(b, c, STORE_VCOL_DOUBLE);
        return r < 0 ? r : sqlb_puts(b, q_close);
}

/* EXISTS (a property row of that name and kind whose value compares). */
static int compile_prop_cmp(struct sqlb *b, const struct store_cond *c)
{
        int r = sqlb_puts(b, q_prop_exists_open);

        if (r >= 0)
                r = sqlb_bind(b, SV_INT(c->custom ? 1 : 0));
        if (r >= 0)
                r = sqlb_bind(b, SV_TEXT(c->prop));
        if (r >= 0)
                r = compile_prop_value(b, c);
        return r < 0 ? r : sqlb_puts(b, q_close);
}

static int compile_cond(struct sqlb *b, const struct store_cond *c, unsigned depth)
{
        if (depth > COND_DEPTH_MAX)
                return -E2BIG;
        switch (c->kind) {
        case STORE_COND_FALSE:
                return sqlb_puts(b, q_false);
        case STORE_COND_AND:
        case STORE_COND_OR:
                return compile_junction(b, c, depth);
        case STORE_COND_CMP:
                break;
        }
        if (c->n_vals == 0)
                return sqlb_puts(b, q_false);
        return c->is_column ? compile_cmp_target(b, c, STORE_VCOL_STRING) : compile_prop_cmp(b, c);
}

#define PROP_BATCH 256

struct id_index {
        int64_t id;
        struct store_entity *e;
};

struct batch {
        struct id_index idx[PROP_BATCH];
        size_t n;
};

static int cmp_id(const void *a, const void *b)
{
        const struct id_index *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

static int batch_row(void *userdata, const struct store_val *cols, size_t n)
{
        struct batch *b = userdata;
        struct id_index key, *hit;

        if (n < 8)
                return -EIO;
        key.id = store_val_int(&cols[7]);
        hit = bsearch(&key, b->idx, b->n, sizeof(b->idx[0]), cmp_id);
        if (!hit)
                return 0;
        return prop_row(hit->e, cols, 7);
}

/* Loads the properties of n entities of one group with one query per PROP_BATCH entities. */
static int load_props_batched(struct store *s, struct store_conn *c, struct store_entity *v,
                              size_t n)
{
        struct batch *b;
        int r = 0;

        if (n == 0)
                return 0;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        for (size_t start = 0; start < n && r >= 0; start += PROP_BATCH) {
                struct buf sql = BUF_INIT((size_t)64 * 1024);
                struct store_val params[PROP_BATCH + 1];
                size_t k = MIN(PROP_BATCH, n - start);

                params[0] = SV_INT(v[start].group);
                b->n = k;
                r = buf_puts(&sql, q_prop_batch_select);
                for (size_t i = 0; i < k && r >= 0; i++) {
                        b->idx[i] = (struct id_index){ .id = v[start + i].id, .e = &v[start + i] };
                        params[i + 1] = SV_INT(v[start + i].id);
                        r = buf_puts(&sql, i == 0 ? q_param : q_param_more);
                }
                if (r >= 0)
                        r = buf_puts(&sql, q_close);
                qsort(b->idx, k, sizeof(b->idx[0]), cmp_id);
                if (r >= 0)
                        r = store_exec_adhoc(s, c, buf_str(&sql), params, k + 1, batch_row, b);
                buf_release(&sql);
        }
        free(b);
        return r < 0 ? r : 0;
}

/* Appends a fragment with one placeholder and binds its value. */
static int sqlb_put_bind(struct sqlb *b, const char *frag, struct store_val v)
{
        int r = sqlb_puts(b, frag);

        return r < 0 ? r : sqlb_bind(b, v);
}

/* SELECT … WHERE: the group, the types, the parent, exact name and external id, the filter. */
static int list_where(struct sqlb *b, const struct store_query *q)
{
        int r = sqlb_put_bind(b, q_list_select, SV_INT(q->group));

        for (size_t i = 0; r >= 0 && i < q->n_types; i++)
                r = sqlb_put_bind(b, i == 0 ? q_list_type_first : q_list_type_more,
                                  SV_TEXT(q->types[i]));
        if (r >= 0)
                r = sqlb_puts(b, q_list_types_end);
        if (r >= 0 && q->has_parent)
                r = sqlb_put_bind(b, q_list_parent, SV_INT(q->parent_id));
        if (r >= 0 && q->name_eq)
                r = sqlb_put_bind(b, q_list_name, SV_TEXT(q->name_eq));
        if (r >= 0 && q->external_id_eq)
                r = sqlb_put_bind(b, q_list_external_id, SV_TEXT(q->external_id_eq));
        if (r >= 0 && q->filter) {
                r = sqlb_puts(b, q_and);
                if (r >= 0)
                        r = compile_cond(b, q->filter, 0);
        }
        return r;
}

/* The keyset cursor, ORDER BY and LIMIT (one row more than asked: whether more follow). */
static int list_tail(struct sqlb *b, const struct store_query *q)
{
        bool selective = q->name_eq || q->external_id_eq;
        const char *const *order = selective ? (q->desc ? q_order_desc_sort : q_order_asc_sort)
                                             : (q->desc ? q_order_desc : q_order_asc);
        int r = 0;

        if (q->has_cursor) {
                r = sqlb_puts(b, q->desc ? q_cursor_desc[q->order] : q_cursor_asc[q->order]);
                if (r >= 0 && q->order != STORE_ORDER_ID)
                        r = sqlb_bind(b, SV_INT(q->cursor_value));
                if (r >= 0)
                        r = sqlb_bind(b, SV_INT(q->cursor_id));
        }
        if (r >= 0)
                r = sqlb_puts(b, order[q->order]);
        if (r >= 0 && q->limit > 0)
                r = sqlb_put_bind(b, q_limit, SV_INT(q->limit + 1));
        return r;
}

/* Runs the assembled list query, keeps q->limit rows and loads their properties. */
static int list_run(struct store *s, struct store_conn *c, const struct sqlb *b,
                    const struct store_query *q, struct collect *col, bool *ret_more)
{
        int r = store_exec_adhoc(s, c, buf_str(&b->sql), b->params, b->n, collect_row, col);

        if (r < 0)
                return r;
        *ret_more = false;
        if (q->limit > 0 && col->n > (size_t)q->limit) {
                *ret_more = true;
                while (col->n > (size_t)q->limit)
                        store_entity_done(&col->v[--col->n]);
        }
        return load_props_batched(s, c, col->v, col->n);
}

int store_entity_list(struct store *s, struct store_conn *c, const struct store_query *q,
                      struct store_entity **ret, size_t *ret_n, bool *ret_more)
{
        struct sqlb *b;
        struct collect col = { 0 };
        bool more = false;
        int r;

        if (q->n_types == 0 || q->order > STORE_ORDER_UPDATE)
                return -EINVAL;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->sql = BUF_INIT((size_t)256 * 1024);
        b->dialect = store_dialect(s);
        r = list_where(b, q);
        if (r >= 0)
                r = list_tail(b, q);
        if (r >= 0)
                r = list_run(s, c, b, q, &col, &more);
        if (r >= 0) {
                *ret = TAKE_PTR(col.v);
                *ret_n = col.n;
                col.n = 0;
                *ret_more = more;
                r = 0;
        }
        store_entities_free(col.v, col.n);
        buf_release(&b->sql);
        free(b);
        return r;
}

struct store_cond *store_cond_free(struct store_cond *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_kids; i++)
                store_cond_free(c->kids[i]);
        free(c->kids);
        free(c->prop);
        for (size_t i = 0; i < c->n_vals; i++)
                if (c->vals[i].type == STORE_TEXT)
                        free((char *)c->vals[i].s);
        free(c->vals);
        free(c);
        return NULL;
}

int store_wipe(struct store *s, struct store_conn *c)
{
        int r;

        r = store_begin(s, c);
        if (r < 0)
                return r;
        r = store_exec(s, c, q_wipe_property, NULL, 0, NULL, NULL);
        if (r >= 0)
                r = store_exec(s, c, q_wipe_entity, NULL, 0, NULL, NULL);
        if (r >= 0)
                r = store_exec(s, c, q_wipe_seq, NULL, 0, NULL, NULL);
        if (r >= 0 && store_dialect(s) == STORE_DIALECT_POSTGRES)
                r = store_exec(s, c, q_wipe_seq_pg, NULL, 0, NULL, NULL);
        if (r < 0) {
                store_rollback(s, c);
                return r;
        }
        return store_commit(s, c);
}
