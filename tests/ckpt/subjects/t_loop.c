/* SPDX-License-Identifier: MIT */
/* A plain compute loop over MB megabytes (default 8): used for restores over
 * a pipe, in another network namespace, and for damaged images. */
#include "subject.h"

int main(int argc, char **argv)
{
	size_t mb = argc > 3 ? (size_t)atoi(argv[3]) : 8;
	size_t n = mb << 20;
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 2654435761u >> 13);
	subj_checkpoint(argc, argv);
	uint64_t h = 0;
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < n; i += 4096)
			p[i] ^= (unsigned char)round;
		h = subj_hash(h, p, n);
	}
	printf("loop %zu %016llx\n", mb, (unsigned long long)h);
	return 0;
}
