/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/* Random (version 4, RFC 9562) UUIDs from getrandom(2). */

#include "util/macro.h"

#define UUID_STRING_LEN 37 /* 36 characters and the NUL */

/*
 * Writes a lowercase UUID v4 ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx") into buf. Retries
 * getrandom() on EINTR and short reads; otherwise returns its negative errno (buf untouched).
 */
_warn_unused_result_ int uuid_random(char buf[static UUID_STRING_LEN]);
