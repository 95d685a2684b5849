/* SPDX-License-Identifier: MIT */
/* Heap: many small mallocs and a few large (mmap-backed) ones survive. */
#include "subject.h"

#define NSMALL 5000
#define LARGE (24u << 20)

int main(int argc, char **argv)
{
	static unsigned char *small[NSMALL];
	unsigned char *large[3];
	for (int i = 0; i < NSMALL; i++) {
		size_t n = 16 + (size_t)(i * 37 % 500);
		small[i] = malloc(n);
		for (size_t k = 0; k < n; k++)
			small[i][k] = (unsigned char)(i + k);
	}
	for (int j = 0; j < 3; j++) {
		large[j] = malloc(LARGE);
		for (size_t k = 0; k < LARGE; k += 64)
			large[j][k] = (unsigned char)(k / 64 + j);
	}
	for (int i = 0; i < NSMALL; i += 2) /* holes in the arena */
		free(small[i]), small[i] = NULL;
	subj_checkpoint(argc, argv);
	uint64_t h = 0;
	for (int i = 1; i < NSMALL; i += 2)
		h = subj_hash(h, small[i], 16 + (size_t)(i * 37 % 500));
	for (int j = 0; j < 3; j++)
		h = subj_hash(h, large[j], LARGE);
	for (int i = 0; i < NSMALL; i += 2) { /* allocator still works */
		small[i] = malloc(100);
		memset(small[i], i & 0xff, 100);
		h = subj_hash(h, small[i], 100);
	}
	free(large[1]);
	large[1] = malloc(LARGE * 2);
	memset(large[1], 7, LARGE * 2);
	h = subj_hash(h, large[1] + LARGE, 4096);
	printf("heap %016llx\n", (unsigned long long)h);
	return 0;
}
