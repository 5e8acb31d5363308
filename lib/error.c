// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll error messages: one thread-local string per thread, set by the call that failed.
 * The library never prints; programs show kcoll_last_error() themselves.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "libkcoll_internal.h"

static __thread char kcoll_errmsg[KCOLL_ERRMSG_MAX];

const char *kcoll_last_error(void)
{
	return kcoll_errmsg;
}

void kcoll_clear_error(void)
{
	kcoll_errmsg[0] = '\0';
}

static void kcoll_vset_error(const char *fmt, va_list ap)
{
	int n = vsnprintf(kcoll_errmsg, sizeof(kcoll_errmsg), fmt, ap);

	/* Say so when the message was cut, rather than end it mid-word without a hint. */
	if (n >= (int)sizeof(kcoll_errmsg))
		memcpy(kcoll_errmsg + sizeof(kcoll_errmsg) - 4, "...", 4);
}

void kcoll_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kcoll_vset_error(fmt, ap);
	va_end(ap);
}

int kcoll_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kcoll_vset_error(fmt, ap);
	va_end(ap);
	return kcoll_err(err);
}
