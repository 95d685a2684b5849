/* Helpers for the small msg test programs run by tests/integration: a check
 * that names the failing call and its status, and the process's peak RSS. */
#ifndef MSG_TESTS_TPROG_H
#define MSG_TESTS_TPROG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

#define CHECK(expr)                                                                      \
	do {                                                                             \
		int _st = (expr);                                                        \
		if (_st != MSG_OK) {                                                     \
			fprintf(stderr, "%s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #expr, \
				_st, msgstrerror(_st));                                  \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

#define EXPECT(cond, ...)                                                                \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                    \
			fputc('\n', stderr);                                             \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

/* Peak resident set (VmHWM) of this process in KiB, -1 if unknown. */
static inline long tprog_vmhwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/* Deterministic message contents: byte i of message (src, dst, k). */
static inline unsigned char tprog_byte(int src, int dst, int k, size_t i)
{
	return (unsigned char)(src * 131 + dst * 31 + k * 7 + i * 13 + (i >> 8));
}

static inline void tprog_fill(unsigned char *p, size_t n, int src, int dst, int k)
{
	for (size_t i = 0; i < n; i++)
		p[i] = tprog_byte(src, dst, k, i);
}

/* Index of the first wrong byte, or -1. */
static inline long tprog_verify(const unsigned char *p, size_t n, int src, int dst, int k)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != tprog_byte(src, dst, k, i))
			return (long)i;
	return -1;
}

#endif
