/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Which model registries the console offers (docs/ui.md, "Several registries"), discovered as
 * upstream's BFF discovers them: the Services of a namespace labelled `component=model-registry`
 * with a port named `http-api` (or `https-api`) and a cluster IP; the Service's annotations
 * `displayName` and `description` name it, and `<prefix>/external-address-rest` gives its
 * address from outside the cluster (upstream's federated mode). The registry's name in the
 * routes (/model_registry/{name}/...) is the Service's name, and `get` on that Service is what
 * lets a user use it. Pure: reading a Service object, the entry of the registry list, and the
 * Service names a SelfSubjectRulesReview lets a user get.
 */

#include <jansson.h>
#include <stdbool.h>

#include "ui/access.h"
#include "util/macro.h"

#define UI_REGISTRY_LABEL_SELECTOR "component=model-registry"
#define UI_REGISTRY_API_PATH       "/api/model_registry/v1alpha3"
#define UI_REGISTRY_URL_MAX        300U
#define UI_REGISTRIES_MAX          100U /* registries listed (and Services read) per namespace */

/* One registry. The strings are read-only outside this module. */
struct ui_registry {
        char name[UI_K8S_NAME_MAX + 1];    /* the {mr} of the routes */
        struct ui_service_ref svc;         /* whose `get` grants it; its link labels name it */
        char url[UI_REGISTRY_URL_MAX + 1]; /* base URL for the registry client, no API path */
        bool https;
        const char *display_name; /* borrowed from the Service (or the config); may be NULL */
        const char *description;  /* likewise */
};

/*
 * The registry a Service object (borrowed) is. external: use its `.../external-address-rest`
 * annotation as the address when it has one (upstream's federated mode), else
 * `http(s)://CLUSTER-IP:PORT`. Returns 0; -ENOENT when it is not labelled as a model registry;
 * -EINVAL when it lacks what a registry needs (a port named http-api or https-api, a cluster IP,
 * a name and namespace), with the reason in msg.
 */
_warn_unused_result_ int ui_registry_from_service(const json_t *service, bool external,
                                                  struct ui_registry *ret, char *msg, size_t len);

/*
 * The entry of GET /model_registry, upstream's ModelRegistryModel: {name, displayName,
 * description, serverAddress (the URL with the registry API's path), isHttps, isAvailable}.
 * Returns: new reference; NULL on OOM.
 */
json_t *ui_registry_entry(const struct ui_registry *reg, bool available);

/* Whether a Service's Endpoints object (borrowed) has a ready address in some subset, as
 * upstream decides a registry is available. */
bool ui_endpoints_ready(const json_t *endpoints);

/*
 * Appends to names (an array) the Service names that a SelfSubjectRulesReview answer (borrowed)
 * lets the user `get` by name: rules on `services` (or `*`) in the core group (or `*`) with the
 * verb `get` (or `*`) that list resourceNames, as upstream reads them. At most max names, without
 * repeats. Returns 0 or -ENOMEM.
 */
_warn_unused_result_ int ui_rules_service_names(const json_t *review, size_t max, json_t *names);

/* The SelfSubjectRulesReview body for namespace ns. Returns: new reference; NULL on OOM. */
json_t *ui_rules_review_body(const char *ns);
