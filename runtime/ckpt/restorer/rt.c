/* SPDX-License-Identifier: MIT */
#include "rt.h"

#include <stdarg.h>

#include "../ckpt.h"
#include "../fmt.h"
#include "sys.h"

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	__asm__ volatile("rep movsb" : "+D"(dp), "+S"(sp), "+c"(n) : : "memory");
	return d;
}

void *memset(void *d, int c, size_t n)
{
	unsigned char *dp = d;
	__asm__ volatile("rep stosb" : "+D"(dp), "+c"(n) : "a"(c) : "memory");
	return d;
}

void *memmove(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	if (dp <= sp || dp >= sp + n)
		return memcpy(d, s, n);
	while (n--)
		dp[n] = sp[n];
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int r_streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

int r_log_fd = 2;

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n = (size_t)ckpt_fmt(buf, sizeof(buf), "%s", prefix);
	if (n < sizeof(buf))
		n += (size_t)ckpt_vfmt(buf + n, sizeof(buf) - n, fmt, ap);
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	sys3(__NR_write, r_log_fd, buf, n);
}

void r_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("msg-restore: ", fmt, ap);
	va_end(ap);
}

void r_exit(int status)
{
	for (;;)
		sys1(__NR_exit_group, status);
}

void r_die(int code, const char *fmt, ...)
{
	char pre[64];
	va_list ap;
	ckpt_fmt(pre, sizeof(pre), "msg-restore: %s: ", ckpt_err_name(code));
	va_start(ap, fmt);
	vmsg(pre, fmt, ap);
	va_end(ap);
	r_exit(code < 0 ? -code : 1);
}

long r_read_file(const char *path, char *buf, size_t cap)
{
	long fd = sys4(__NR_openat, R_AT_FDCWD, path, R_O_RDONLY | R_O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	size_t n = 0;
	for (;;) {
		long r = sys3(__NR_read, fd, buf + n, cap - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n >= cap - 1)
			break;
	}
	sys1(__NR_close, fd);
	buf[n] = 0;
	return (long)n;
}

static uint64_t hex(const char **p)
{
	uint64_t v = 0;
	for (;; (*p)++) {
		char c = **p;
		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			return v;
	}
}

/* Line: start-end perms off dev inode      name */
static void parse(const char *s, struct r_map *m)
{
	m->start = hex(&s);
	s++;
	m->end = hex(&s);
	s++;
	m->prot = (s[0] == 'r' ? 1 : 0) | (s[1] == 'w' ? 2 : 0) | (s[2] == 'x' ? 4 : 0);
	while (*s && *s != ' ')
		s++;
	while (*s == ' ')
		s++;
	m->pgoff = hex(&s);
	for (int field = 0; field < 2 && *s; field++) { /* dev, inode */
		while (*s == ' ')
			s++;
		while (*s && *s != ' ')
			s++;
	}
	while (*s == ' ')
		s++;
	size_t i = 0;
	while (*s && *s != '\n' && i < sizeof(m->name) - 1)
		m->name[i++] = *s++;
	m->name[i] = 0;
}

int r_each_map(char *buf, size_t cap, int (*fn)(const struct r_map *, void *), void *arg)
{
	long n = r_read_file("/proc/self/maps", buf, cap);
	if (n < 0)
		return (int)n;
	return r_each_map_in(buf, fn, arg);
}

int r_each_map_in(const char *buf, int (*fn)(const struct r_map *, void *), void *arg)
{
	for (const char *s = buf; *s;) {
		struct r_map m;
		parse(s, &m);
		int r = fn(&m, arg);
		if (r)
			return r;
		while (*s && *s != '\n')
			s++;
		if (*s)
			s++;
	}
	return 0;
}
