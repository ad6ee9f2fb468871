/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "helpers.h"

Test(chaos, placeholder)
{
        cr_skip_test("not written yet");
}
