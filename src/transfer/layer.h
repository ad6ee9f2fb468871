/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * The ModelCar layer (KServe's modelcar images: the model under /models): a gzip'd tar of a
 * directory's regular files and subdirectories, each under "models/", written with libarchive
 * (pax, reproducible: sorted names, mtime 0, owner 0:0, modes 0644 and 0755, 0755 for files
 * with an execute bit), hashed as it is written (the layer's digest) and read back through
 * libarchive's gzip filter for the uncompressed tar's digest (the config's diff_id).
 *
 * Limits: @size_max bytes of content, @entries_max entries, 64 levels of directories; symbolic
 * links and other special files are left out (with a warning), as the download never makes
 * them. Errors: -EFBIG (a limit, named in @e), -EIO and the errno of a failed read or write
 * (the file named), -ENOMEM.
 */

#include <stdint.h>

#include "transfer/oci.h"
#include "util/error-detail.h"
#include "util/macro.h"

struct layer_limits {
        uint64_t size_max;
        uint64_t entries_max;
};

/* Writes the layer of @dir into the file @out_fd (at its start); its descriptor (gzip layer
 * media type of @docker's flavour, digest, size) and the diff_id into the outputs. */
_warn_unused_result_ int modelcar_layer_write(const char *dir, int out_fd, bool docker,
                                              const struct layer_limits *lim,
                                              struct oci_descriptor *ret,
                                              char ret_diff_id[OCI_DIGEST_LEN],
                                              struct error_detail *e);
