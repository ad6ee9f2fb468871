/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Every DML statement and SQL fragment the store uses: fixed text with '?' placeholders, shared
 * by both dialects (the PostgreSQL backend rewrites '?' to $n). Dynamic statements (lists with
 * filters) are assembled only from these fragments; values are always bound.
 */

extern const char q_seq_next[];
extern const char q_seq_next_pg[];
extern const char q_wipe_seq_pg[];
extern const char q_entity_name_taken[];
extern const char q_entity_external_id_taken[];
extern const char q_entity_insert[];
extern const char q_entity_update[];
extern const char q_entity_get[];
extern const char q_entity_get_for_update[];
extern const char q_prop_delete[];
extern const char q_prop_insert[];
extern const char q_prop_get[];
extern const char q_prop_batch_select[]; /* … WHERE grp = ? AND entity_id IN ( */
extern const char q_wipe_property[];
extern const char q_wipe_entity[];
extern const char q_wipe_seq[];

/* List fragments. */
extern const char q_list_select[]; /* SELECT … FROM entity e WHERE e.grp = ? AND e.type IN ( */
extern const char q_list_type_first[]; /* ? */
extern const char q_list_type_more[];  /* , ? */
extern const char q_list_types_end[];  /* ) */
extern const char q_list_parent[];
extern const char q_list_name[];
extern const char q_list_external_id[];
extern const char q_and[];
extern const char q_or[];
extern const char q_open[];
extern const char q_close[];
extern const char q_false[];
extern const char q_limit[];
extern const char q_prop_exists_open
        []; /* EXISTS (SELECT 1 FROM property p WHERE … custom = ? AND p.name = ? AND */
extern const char q_in_open[];    /* IN ( */
extern const char q_param[];      /* ? */
extern const char q_param_more[]; /* , ? */

/* Indexed by enum store_column. */
extern const char *const q_columns[];
/* Indexed by enum store_vcol (not INT_OR_DOUBLE). */
extern const char *const q_prop_columns[];
/* Indexed by enum store_op; LIKE/ILIKE/IN handled separately. */
extern const char *const q_ops[];
extern const char q_like[];
extern const char q_ilike_pg[];
extern const char q_lower_open[];
extern const char q_lower_close[];
extern const char q_like_lower_param[];

/* ORDER BY / cursor fragments indexed by enum store_order (cursor: ID binds the id; the time
 * orders bind value, id). */
extern const char *const q_order_asc[];
extern const char *const q_order_desc[];
extern const char *const q_order_asc_sort[];
extern const char *const q_order_desc_sort[];
extern const char *const q_cursor_asc[];
extern const char *const q_cursor_desc[];
