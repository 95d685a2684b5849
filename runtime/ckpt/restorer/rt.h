/* SPDX-License-Identifier: MIT */
/* The restorer's tiny runtime: string helpers, messages, exit. */
#ifndef MSG_RESTORER_RT_H
#define MSG_RESTORER_RT_H

#include <stddef.h>
#include <stdint.h>

#include "../image_reader.h"

void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int r_streq(const char *a, const char *b);

void r_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints "msg-restore: NAME: what" and exits with -code. */
__attribute__((noreturn)) void r_die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
__attribute__((noreturn)) void r_exit(int status);

/* Reads a whole file (e.g. /proc/self/maps) into buf; returns length or < 0. */
long r_read_file(const char *path, char *buf, size_t cap);

/* One /proc/self/maps line. */
struct r_map {
	uint64_t start, end;
	int prot; /* PROT_* from the perms column */
	uint64_t pgoff; /* file offset */
	char name[64];
};
/* Calls fn for every mapping; stops on non-zero. */
int r_each_map(char *buf, size_t cap, int (*fn)(const struct r_map *, void *), void *arg);
/* The same over maps text already read (r_each_map's buffer). */
int r_each_map_in(const char *buf, int (*fn)(const struct r_map *, void *), void *arg);
/* r_maps holds the current maps (read last by the vDSO check, nothing
 * mapped or unmapped since): the teardown need not read them again. */
extern int r_maps_current;

#endif
