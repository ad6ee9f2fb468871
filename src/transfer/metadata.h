/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The registry metadata of `modelplane async-upload`'s create_model and create_version intents:
 * the keys of a mounted ConfigMap ("RegisteredModel.name", "ModelArtifact.model_format_name"
 * ...) as upstream's job reads them, and the REST API's customProperties for them. Pure.
 */

#include <jansson.h>
#include <stdbool.h>

#include "transfer/config.h"
#include "util/error-detail.h"
#include "util/macro.h"

/* The metadata a ConfigMap gives to create_model and create_version (each string owned; the
 * custom properties a JSON object, a new reference). */
struct transfer_metadata {
        bool has_model, has_version, has_artifact;
        char *model_name, *model_id, *model_description, *model_owner;
        json_t *model_props, *model_api_props;
        char *version_name, *version_description, *version_author;
        json_t *version_props, *version_api_props;
        char *artifact_name, *format_name, *format_version, *storage_key, *storage_path,
                *service_account_name, *source_kind, *source_class, *source_group, *source_id,
                *source_name;
        json_t *artifact_props, *artifact_api_props;
};
void transfer_metadata_release(struct transfer_metadata *m);

/* At most this many keys and bytes per value in the metadata ConfigMap. */
#define TRANSFER_METADATA_KEYS_MAX  256
#define TRANSFER_METADATA_VALUE_MAX ((size_t)256 << 10)

/*
 * Adds one ConfigMap key ("RegisteredModel.name", "ModelVersion.custom_properties" ...) with its
 * value (surrounding whitespace dropped, as upstream strips it). Keys of other objects are
 * ignored, and so are unknown fields of the three (as upstream's models ignore them: *@ret_skipped
 * is set, for a warning), and a custom_properties value that is not JSON (upstream skips it with
 * a warning: *@ret_skipped). A custom_properties value that is JSON but not an object, or holds
 * a value other than a string, number or boolean, is -EINVAL; more than
 * TRANSFER_METADATA_VALUE_MAX bytes too. Returns 0, -EINVAL with the key in the field, -ENOMEM.
 *
 * Our addition: "<Object>.customProperties" (the key upstream's console writes and upstream's
 * job ignores) is read too, a JSON object of the REST API's MetadataValue objects (a string
 * "metadataType") or of plain strings, numbers and booleans; anything else is -EINVAL.
 */
_warn_unused_result_ int transfer_metadata_add(struct transfer_metadata *m, const char *key,
                                               const char *value, bool *ret_skipped,
                                               struct error_detail *e);

/*
 * The metadata an intent needs, with upstream's messages: create_model needs all three objects
 * and RegisteredModel.name; create_version ModelVersion (with a name) and ModelArtifact;
 * RegisteredModel takes a name or an id, never both. @present: a metadata directory was read.
 */
_warn_unused_result_ int transfer_metadata_validate(const struct transfer_metadata *m, bool present,
                                                    enum transfer_intent intent,
                                                    struct error_detail *e);

/* The customProperties of the REST API (MetadataValue objects): @api_props (already in that
 * form; NULL: none) with @props (a flat JSON object; NULL: none) mapped as the Python client
 * maps them over it: strings, int as a string int_value, double, bool. A new object, or NULL on
 * OOM. */
json_t *transfer_custom_properties(const json_t *props, const json_t *api_props);
