/* SPDX-License-Identifier: MIT */
/* A tiny vsnprintf for freestanding code (the restorer has no libc):
 * %s %c %d %u %x %ld %lu %lx %llu %llx %zu %p %%. Always NUL-terminates. */
#ifndef MSG_CKPT_FMT_H
#define MSG_CKPT_FMT_H

#include <stdarg.h>
#include <stddef.h>

int ckpt_vfmt(char *buf, size_t cap, const char *fmt, va_list ap);
int ckpt_fmt(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
