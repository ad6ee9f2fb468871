/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * TrainedModel fixtures shared by the webhook-rules unit test and the AdmissionReview codec test
 * (trainedmodel.md §9.6): the object they build and the two error texts KServe answers with.
 */
#include <jansson.h>

/* The webhook's answer to an invalid metadata.name n (a string literal). */
#define TM_NAME_ERR(n)                                                                            \
        "the Trained Model \"" n "\" is invalid: a Trained Model name must consist of "           \
        "alphanumeric characters, '_', or '-'. (e.g. \"my-Name\" or \"abc_123\", regex used for " \
        "validation is '^[a-zA-Z0-9_-]+$')"

/* The webhook's answer to an invalid spec.model.storageUri u of TrainedModel n (literals). */
#define TM_URI_ERR(n, u)                                                                            \
        "the Trained Model \"" n "\" storageUri field is invalid. The storage uri must start "      \
        "with one of the prefixes: s3://, gs://, https://, http://. (the storage uri given is \"" u \
        "\")"

/*
 * A serving.kserve.io/v1alpha1 TrainedModel in namespace "default" (new reference; the test
 * fails if it cannot be built). memory is a JSON value (string or integer) and is stolen.
 */
json_t *tm_fixture(const char *name, const char *isvc, const char *uri, const char *framework,
                   json_t *memory);

/* The §9.6 base object: name bar, InferenceService Parent, gs://kfserving/sklearn/iris, sklearn,
 * 100Mi (new reference). */
json_t *tm_fixture_base(void);
