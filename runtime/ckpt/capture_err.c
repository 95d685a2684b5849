/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>

#include "capture_int.h"

int ckpt_fail(struct ckpt_ctx *c, int code, const char *fmt, ...)
{
	if (c->err && c->err->code == 0) { /* the first cause is the one to report */
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->err->what, sizeof(c->err->what), fmt, ap);
		va_end(ap);
		c->err->code = code;
	}
	return code;
}
