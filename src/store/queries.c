/* SPDX-License-Identifier: Apache-2.0 */
#include "store/queries.h"

#include <stddef.h>

const char q_seq_next[] = "UPDATE seq SET next_id = next_id + 1 WHERE grp = ? RETURNING next_id";
/* PostgreSQL (migration 0004): one sequence per group, no row lock held until COMMIT. */
const char q_seq_next_pg[] = "SELECT nextval(('entity_id_' || ?)::regclass)";
/* Uniqueness looked up before an id is taken from a sequence (a failed insert leaves a gap). */
const char q_entity_name_taken[] = "SELECT 1 FROM entity WHERE type = ? AND scope = ? AND name = ?";
const char q_entity_external_id_taken[] = "SELECT 1 FROM entity WHERE grp = ? AND external_id = ?";
const char q_wipe_seq_pg[] =
        "SELECT setval('entity_id_0', 1, false), setval('entity_id_1', 1, false),"
        " setval('entity_id_2', 1, false)";
const char q_entity_insert[] =
        "INSERT INTO entity (grp, id, type, parent_id, scope, name, external_id, create_ms, update_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
const char q_entity_update[] =
        "UPDATE entity SET parent_id = ?, scope = ?, name = ?, external_id = ?,"
        " update_ms = ? WHERE grp = ? AND id = ?";
/*
 * The entity and its properties (a LEFT JOIN: one row of NULL properties when it has none).
 * Binds (grp, id) twice: the property scan is keyed by the parameters, not by the joined row,
 * so PostgreSQL's plan has no join filter. Neither group nor id is returned (the caller has
 * them), and the rows come unordered (properties are looked up by name, and JSON keys are
 * sorted when encoded): every column and a sort node is executor set-up per statement, which
 * is most of what a point get costs PostgreSQL (callgrind: 160k → 121k instructions).
 */
const char q_entity_get[] =
        "SELECT e.type, e.parent_id, e.scope, e.name, e.external_id, e.create_ms, e.update_ms,"
        " p.custom, p.name, p.vtype, p.string_value, p.int_value, p.double_value, p.bool_value"
        " FROM entity e LEFT JOIN property p ON p.grp = ? AND p.entity_id = ?"
        " WHERE e.grp = ? AND e.id = ?";
/*
 * PostgreSQL only (SQLite has no row locks; its BEGIN IMMEDIATE locks the database): the row
 * alone, its properties by q_prop_get after the lock is held. Not joined: a FOR UPDATE that
 * waited for another writer re-reads the locked row but returns the joined rows of its own,
 * older snapshot, which would lose that writer's properties.
 */
const char q_entity_get_for_update[] =
        "SELECT e.grp, e.id, e.type, e.parent_id, e.scope, e.name, e.external_id,"
        " e.create_ms, e.update_ms FROM entity e WHERE e.grp = ? AND e.id = ? FOR UPDATE";
const char q_prop_delete[] = "DELETE FROM property WHERE grp = ? AND entity_id = ?";
const char q_prop_insert[] =
        "INSERT INTO property (grp, entity_id, custom, name, vtype, string_value, int_value,"
        " double_value, bool_value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
const char q_prop_get[] = "SELECT custom, name, vtype, string_value, int_value, double_value,"
                          " bool_value FROM property WHERE grp = ? AND entity_id = ?"
                          " ORDER BY custom, name";
const char q_prop_batch_select[] =
        "SELECT custom, name, vtype, string_value, int_value, double_value, bool_value, entity_id"
        " FROM property WHERE grp = ? AND entity_id IN (";
const char q_wipe_property[] = "DELETE FROM property";
const char q_wipe_entity[] = "DELETE FROM entity";
const char q_wipe_seq[] = "UPDATE seq SET next_id = 0";

const char q_list_select[] = "SELECT e.grp, e.id, e.type, e.parent_id, e.scope, e.name,"
                             " e.external_id, e.create_ms, e.update_ms FROM entity e"
                             " WHERE e.grp = ? AND e.type IN (";
const char q_list_type_first[] = "?";
const char q_list_type_more[] = ", ?";
const char q_list_types_end[] = ")";
const char q_list_parent[] = " AND e.parent_id = ?";
const char q_list_name[] = " AND e.name = ?";
const char q_list_external_id[] = " AND e.external_id = ?";
const char q_and[] = " AND ";
const char q_or[] = " OR ";
const char q_open[] = "(";
const char q_close[] = ")";
const char q_false[] = "1 = 0";
const char q_limit[] = " LIMIT ?";
const char q_prop_exists_open[] = "EXISTS (SELECT 1 FROM property p WHERE p.grp = e.grp AND"
                                  " p.entity_id = e.id AND p.custom = ? AND p.name = ? AND ";
const char q_in_open[] = " IN (";
const char q_param[] = "?";
const char q_param_more[] = ", ?";

const char *const q_columns[] = {
        "e.id", "e.name", "e.external_id", "e.create_ms", "e.update_ms",
};
const char *const q_prop_columns[] = {
        "p.string_value",
        "p.int_value",
        "p.double_value",
        "p.bool_value",
};
const char *const q_ops[] = {
        " = ?", " <> ?", " < ?", " <= ?", " > ?", " >= ?", NULL, NULL, NULL,
};
const char q_like[] = " LIKE ? ESCAPE '\\'";
const char q_ilike_pg[] = " ILIKE ? ESCAPE '\\'";
/* SQLite: mp_lower() is registered by store/sqlite.c (Unicode, as PostgreSQL's lower()). */
const char q_lower_open[] = "mp_lower(";
const char q_lower_close[] = ")";
const char q_like_lower_param[] = " LIKE mp_lower(?) ESCAPE '\\'";

const char *const q_order_asc[] = {
        " ORDER BY e.id ASC",
        " ORDER BY e.create_ms ASC, e.id ASC",
        " ORDER BY e.update_ms ASC, e.id ASC",
};
const char *const q_order_desc[] = {
        " ORDER BY e.id DESC",
        " ORDER BY e.create_ms DESC, e.id DESC",
        " ORDER BY e.update_ms DESC, e.id DESC",
};
/* For selective lookups (exact name/external id): a sort expression, so that SQLite's planner
 * picks the selective index instead of walking the id index. */
const char *const q_order_asc_sort[] = {
        " ORDER BY +e.id ASC",
        " ORDER BY +e.create_ms ASC, e.id ASC",
        " ORDER BY +e.update_ms ASC, e.id ASC",
};
const char *const q_order_desc_sort[] = {
        " ORDER BY +e.id DESC",
        " ORDER BY +e.create_ms DESC, e.id DESC",
        " ORDER BY +e.update_ms DESC, e.id DESC",
};
/* Keyset cursors written so that the (type, col, id) indexes serve them as a range scan: ID order
 * binds the cursor id; time orders bind (value, id) as a row value. */
const char *const q_cursor_asc[] = {
        " AND e.id > ?",
        " AND (e.create_ms, e.id) > (?, ?)",
        " AND (e.update_ms, e.id) > (?, ?)",
};
const char *const q_cursor_desc[] = {
        " AND e.id < ?",
        " AND (e.create_ms, e.id) < (?, ?)",
        " AND (e.update_ms, e.id) < (?, ?)",
};
