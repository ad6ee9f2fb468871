/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * models.json: the per-InferenceService list of models read by KServe's model agent, stored under
 * data["models.json"] of ConfigMap "modelconfig-<isvc>-0" (spec trainedmodel.md §6). Pure.
 *
 * Serialisation is byte-compatible with Go's encoding/json as KServe writes it (§6.2): a compact
 * array of {"modelName","modelSpec":{"storageUri","framework","memory"}} in that key order, all
 * three spec fields always present, strings escaped as Go does (", \, \b \f \n \r \t, other
 * control characters as \u00xx, HTML-sensitive <, >, & as \u003c \u003e \u0026, and U+2028/U+2029
 * as \u2028/\u2029). modelplane sorts entries by modelName (§10 W1), so equal sets give equal bytes.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "serving/isvc.h"
#include "util/macro.h"

#define MODELCONFIG_KEY "models.json"
/* The API server's limit on the summed data values of a ConfigMap (kubernetes#19781). */
#define MODELCONFIG_DATA_MAX ((size_t)1048576)
/* Serialisation cap: generous, so an oversized result can still be measured. */
#define MODELCONFIG_SERIALIZE_MAX ((size_t)64 * 1024 * 1024)
/* Longest ConfigMap name we build ("modelconfig-" + 253 + "-0"). */
#define MODELCONFIG_NAME_MAX 272

struct model_entry {
        char *name;        /* owned; modelName */
        char *storage_uri; /* owned; modelSpec.storageUri */
        char *framework;   /* owned; modelSpec.framework */
        char *memory;      /* owned; modelSpec.memory, canonical Quantity form (§10 W15) */
};

struct model_entries {
        struct model_entry *items; /* owned array */
        size_t n;
};

void model_entries_init(struct model_entries *e);
void model_entries_release(struct model_entries *e);

/* Inserts or replaces (by name) an entry; strings are copied. -ENOMEM. */
_warn_unused_result_ int model_entries_upsert(struct model_entries *e, const char *name,
                                              const char *storage_uri, const char *framework,
                                              const char *memory);
/* Appends without looking for an existing entry of that name (the caller knows it is new). */
_warn_unused_result_ int model_entries_append(struct model_entries *e, const char *name,
                                              const char *storage_uri, const char *framework,
                                              const char *memory);
/* Removes the entry called @name; returns 1 if one was removed, 0 if absent. */
int model_entries_remove(struct model_entries *e, const char *name);
/* Returns: borrowed; NULL when absent. */
const struct model_entry *model_entries_get(const struct model_entries *e, const char *name);
/* Binary search; @e must be sorted by name (as modelconfig_parse() returns it). Borrowed. */
const struct model_entry *model_entries_find_sorted(const struct model_entries *e,
                                                    const char *name);
/* Sorts by name, byte-wise. */
void model_entries_sort(struct model_entries *e);

bool model_entry_equal(const struct model_entry *a, const struct model_entry *b);

/*
 * Parses a models.json value as KServe's agent/controller does: NULL or "" is the empty list;
 * otherwise a JSON array of objects, field names matched case-insensitively, unknown fields
 * ignored, null fields empty, memory parsed as a quantity (and kept in canonical form), later
 * duplicates of a modelName win. The result is sorted by name. Returns 0, -EINVAL with a message in @reterr (size @len_err) on
 * bad input, -ENOMEM.
 */
_warn_unused_result_ int modelconfig_parse(const char *data, struct model_entries *ret,
                                           char *reterr, size_t len_err);

/*
 * One element of a decoded models.json array, appended to @out as modelconfig_parse() reads it
 * (a null element carries no model and appends nothing; a string field holding U+0000 is
 * refused). Returns 0, -EINVAL with a message in @reterr, -ENOMEM.
 */
_warn_unused_result_ int modelconfig_parse_entry(const json_t *e, struct model_entries *out,
                                                 char *reterr, size_t len_err);

/*
 * Serialises the entries (in name order; @e itself is not reordered) into an owned
 * NUL-terminated string. Returns 0, -E2BIG beyond MODELCONFIG_SERIALIZE_MAX, -ENOMEM.
 */
_warn_unused_result_ int modelconfig_serialize(const struct model_entries *e, char **ret,
                                               size_t *ret_len);

/* Bytes one entry takes in the serialised array (without the separating comma). */
size_t modelconfig_entry_size(const struct model_entry *entry);

/*
 * §10 W4: decides which entries fit in @budget bytes of models.json. @order lists entry indexes
 * in priority order (first = kept first); ret_fits[i] (indexed like @e) is set to whether entry i
 * fits. Greedy and deterministic: an entry that does not fit does not stop smaller later ones.
 * Returns the size of the array that holds exactly the fitting entries.
 */
size_t modelconfig_fit(const struct model_entries *e, const size_t *order, size_t n_order,
                       size_t budget, bool *ret_fits);

/*
 * KServe's Process() (§9.3): parse @before, upsert @upserts, remove @deletes, serialise.
 * Returns 0 and an owned string, or the errors of modelconfig_parse()/modelconfig_serialize().
 */
_warn_unused_result_ int modelconfig_process(const char *before,
                                             const struct model_entries *upserts,
                                             const char *const *deletes, size_t n_deletes,
                                             char **ret_after, char *reterr, size_t len_err);

/* "modelconfig-<isvc>-0" into buf. Returns 0 or -ENAMETOOLONG. */
_warn_unused_result_ int modelconfig_name(const char *isvc, char *buf, size_t len);

/*
 * The ConfigMap for @isvc when it is missing (§6.1, §10 W3): name modelconfig-<isvc>-0 in the
 * InferenceService's namespace, the InferenceService's labels (if any), a controller
 * ownerReference to it (when its uid is known), data {"models.json": @models_json}.
 * Returns: new reference; NULL on OOM.
 */
json_t *modelconfig_configmap_new(const struct isvc_info *isvc, const char *models_json);
