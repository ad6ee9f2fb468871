/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The port between the runtime and the reconcilers (house style 5.8): the API-server operations a
 * reconciler uses, as a table of functions plus userdata. The libcurl client (client.h,
 * kube_client_api()) is one implementation; tests/fakes/fake-kube-api.h, an in-memory store with
 * resourceVersion preconditions and programmable failures, is another.
 *
 * Every operation returns 0 or a negative errno from the one table in status.h (-ENOENT 404,
 * -EEXIST 409 AlreadyExists, -ESTALE 409 Conflict, -EAGAIN 429/503, -ETIMEDOUT, -EIO 5xx ...),
 * and fills *reterr (may be NULL) with the API server's Status on failure. Objects are jansson
 * values: every obj/patch argument is borrowed, every ret_obj (may be NULL when the answer is not
 * needed) is a new reference the caller owns. ns NULL means cluster-scoped (all namespaces for
 * list).
 *
 * Threads: a struct kube_api is used by one thread at a time unless its implementation says
 * otherwise (the libcurl one: one per worker, which the runner, controller.h, arranges).
 */

#include <jansson.h>
#include <stdbool.h>

#include "kube/status.h"
#include "util/macro.h"

/* A resource: group ("" for the core group), version and plural resource name. */
struct gvr {
        const char *group;
        const char *version;
        const char *resource;
};

struct kube_list_options {
        const char *label_selector;         /* borrowed, may be NULL */
        const char *field_selector;         /* borrowed, may be NULL */
        unsigned limit;                     /* 0 = no paging */
        const char *continue_token;         /* borrowed, may be NULL */
        const char *resource_version;       /* borrowed, may be NULL */
        const char *resource_version_match; /* borrowed, may be NULL */
};

enum kube_patch_type {
        KUBE_PATCH_MERGE,     /* application/merge-patch+json */
        KUBE_PATCH_JSON,      /* application/json-patch+json */
        KUBE_PATCH_APPLY,     /* application/apply-patch+yaml (server-side apply, JSON body) */
        KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in types only) */
};

struct kube_write_options {
        const char *subresource;   /* borrowed; "status" or NULL */
        const char *field_manager; /* borrowed; required for KUBE_PATCH_APPLY */
        bool force;                /* server-side apply force */
        bool dry_run;              /* dryRun=All */
};

struct kube_delete_options {
        const char *propagation_policy; /* "Foreground", "Background", "Orphan" or NULL */
        const char *precondition_uid;   /* borrowed, may be NULL */
        const char *precondition_rv;    /* borrowed, may be NULL */
};

struct kube_api_ops {
        int (*get)(void *userdata, const struct gvr *r, const char *ns, const char *name,
                   json_t **ret_obj, struct kube_status *reterr);
        /* *ret_list is a List object ({"items": [...], "metadata": {...}}). */
        int (*list)(void *userdata, const struct gvr *r, const char *ns,
                    const struct kube_list_options *opts, json_t **ret_list,
                    struct kube_status *reterr);
        int (*create)(void *userdata, const struct gvr *r, const char *ns, const json_t *obj,
                      const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr);
        /* PUT; obj's metadata.resourceVersion is the precondition (-ESTALE when stale). */
        int (*update)(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const json_t *obj, const struct kube_write_options *opts, json_t **ret_obj,
                      struct kube_status *reterr);
        /* A metadata.resourceVersion in a merge patch is a precondition (-ESTALE when stale). */
        int (*patch)(void *userdata, const struct gvr *r, const char *ns, const char *name,
                     enum kube_patch_type type, const json_t *patch,
                     const struct kube_write_options *opts, json_t **ret_obj,
                     struct kube_status *reterr);
        int (*remove)(void *userdata, const struct gvr *r, const char *ns, const char *name,
                      const struct kube_delete_options *opts, json_t **ret_obj,
                      struct kube_status *reterr);
};

struct kube_api {
        const struct kube_api_ops *ops; /* borrowed, static */
        void *userdata;                 /* borrowed; the implementation's state */
};

static inline int kube_api_get(const struct kube_api *a, const struct gvr *r, const char *ns,
                               const char *name, json_t **ret_obj, struct kube_status *reterr)
{
        return a->ops->get(a->userdata, r, ns, name, ret_obj, reterr);
}

static inline int kube_api_list(const struct kube_api *a, const struct gvr *r, const char *ns,
                                const struct kube_list_options *opts, json_t **ret_list,
                                struct kube_status *reterr)
{
        return a->ops->list(a->userdata, r, ns, opts, ret_list, reterr);
}

static inline int kube_api_create(const struct kube_api *a, const struct gvr *r, const char *ns,
                                  const json_t *obj, const struct kube_write_options *opts,
                                  json_t **ret_obj, struct kube_status *reterr)
{
        return a->ops->create(a->userdata, r, ns, obj, opts, ret_obj, reterr);
}

static inline int kube_api_update(const struct kube_api *a, const struct gvr *r, const char *ns,
                                  const char *name, const json_t *obj,
                                  const struct kube_write_options *opts, json_t **ret_obj,
                                  struct kube_status *reterr)
{
        return a->ops->update(a->userdata, r, ns, name, obj, opts, ret_obj, reterr);
}

static inline int kube_api_patch(const struct kube_api *a, const struct gvr *r, const char *ns,
                                 const char *name, enum kube_patch_type type, const json_t *patch,
                                 const struct kube_write_options *opts, json_t **ret_obj,
                                 struct kube_status *reterr)
{
        return a->ops->patch(a->userdata, r, ns, name, type, patch, opts, ret_obj, reterr);
}

static inline int kube_api_delete(const struct kube_api *a, const struct gvr *r, const char *ns,
                                  const char *name, const struct kube_delete_options *opts,
                                  json_t **ret_obj, struct kube_status *reterr)
{
        return a->ops->remove(a->userdata, r, ns, name, opts, ret_obj, reterr);
}
