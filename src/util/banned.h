/* SPDX-License-Identifier: Apache-2.0 */
#pragma once

/*
 * Functions that are unsafe, not thread-safe, or easy to misuse are compile errors (git's banned.h).
 * Use snprintf into a checked length or struct buf, safe_ato*(), gmtime_r(), strerror_r() or %m.
 */

#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) BANNED(strncat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) BANNED(vsprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef strtok_r
#define strtok_r(x, y, z) BANNED(strtok_r)
#undef gets
#define gets(x) BANNED(gets)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef atol
#define atol(x) BANNED(atol)
#undef atoll
#define atoll(x) BANNED(atoll)
#undef gmtime
#define gmtime(t) BANNED(gmtime)
#undef localtime
#define localtime(t) BANNED(localtime)
#undef ctime
#define ctime(t) BANNED(ctime)
#undef asctime
#define asctime(t) BANNED(asctime)
#undef strerror
#define strerror(e) BANNED(strerror)
#undef mktemp
#define mktemp(x) BANNED(mktemp)
#undef tmpnam
#define tmpnam(x) BANNED(tmpnam)
