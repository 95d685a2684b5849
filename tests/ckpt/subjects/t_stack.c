/* SPDX-License-Identifier: MIT */
/* Deep stack: the checkpoint happens 5000 frames down; the restored copy
 * unwinds all of them, then grows the stack again past its old depth. */
#include "subject.h"

static int g_argc;
static char **g_argv;

static uint64_t dive(int depth, uint64_t acc)
{
	volatile char pad[64];
	for (int i = 0; i < 64; i++)
		pad[i] = (char)(depth + i);
	if (depth == 0) {
		subj_checkpoint(g_argc, g_argv);
		return acc;
	}
	uint64_t r = dive(depth - 1, acc * 31 + (uint64_t)depth);
	return r ^ (uint64_t)pad[depth % 64];
}

static uint64_t deeper(int depth)
{
	volatile char pad[256];
	pad[0] = (char)depth;
	return depth ? deeper(depth - 1) + (uint64_t)pad[0] : 0;
}

int main(int argc, char **argv)
{
	g_argc = argc, g_argv = argv;
	uint64_t r = dive(5000, 1);
	uint64_t d = deeper(12000);
	printf("stack %016llx %llu\n", (unsigned long long)r, (unsigned long long)d);
	return 0;
}
