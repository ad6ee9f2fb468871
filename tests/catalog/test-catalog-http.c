#include <criterion/criterion.h>
Test(http, placeholder) { cr_assert(1); }
