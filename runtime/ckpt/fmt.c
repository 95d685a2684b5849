/* SPDX-License-Identifier: MIT */
#include "fmt.h"

#include <stdint.h>

struct out {
	char *buf;
	size_t cap, len;
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->cap)
		o->buf[o->len] = c;
	o->len++;
}

static void put_u(struct out *o, unsigned long long v, unsigned base)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		put(o, tmp[--n]);
}

int ckpt_vfmt(char *buf, size_t cap, const char *f, va_list ap)
{
	struct out o = { buf, cap, 0 };
	for (; *f; f++) {
		if (*f != '%') {
			put(&o, *f);
			continue;
		}
		f++;
		int lng = 0;
		while (*f == 'l' || *f == 'z') {
			lng++;
			f++;
		}
		switch (*f) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			for (s = s ? s : "(null)"; *s; s++)
				put(&o, *s);
			break;
		}
		case 'c':
			put(&o, (char)va_arg(ap, int));
			break;
		case 'd': {
			long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
			if (v < 0) {
				put(&o, '-');
				put_u(&o, 0ull - (unsigned long long)v, 10);
			} else {
				put_u(&o, (unsigned long long)v, 10);
			}
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v = lng ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
			put_u(&o, v, *f == 'u' ? 10 : 16);
			break;
		}
		case 'p':
			put(&o, '0');
			put(&o, 'x');
			put_u(&o, (uintptr_t)va_arg(ap, void *), 16);
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			if (!*f)
				f--;
			break;
		}
	}
	if (cap)
		buf[o.len < cap ? o.len : cap - 1] = 0;
	return (int)o.len;
}

int ckpt_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = ckpt_vfmt(buf, cap, fmt, ap);
	va_end(ap);
	return n;
}
