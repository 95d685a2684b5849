/* SPDX-License-Identifier: MIT */
/* A restored process can be captured again (a regenerated replica later
 * becomes the source of another copy): t_chain capture IMAGE1 IMAGE2. */
#include "subject.h"

int main(int argc, char **argv)
{
	size_t n = 8u << 20;
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i / 4096 + 1);
	subj_checkpoint(argc, argv);
	for (size_t i = 0; i < n; i += 4096)
		p[i] ^= 0x55;
	if (argc > 3)
		argv[2] = argv[3];
	subj_checkpoint(argc, argv);
	uint64_t h = subj_hash(0, p, n);
	char *q = malloc(1 << 20);
	memset(q, 3, 1 << 20);
	printf("chain %016llx %016llx\n", (unsigned long long)h, (unsigned long long)subj_hash(0, q, 1 << 20));
	return 0;
}
