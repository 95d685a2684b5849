/* SPDX-License-Identifier: MIT */
/* TLS: initialised and zero __thread variables, errno (TLS in libc). */
#include <errno.h>

#include "subject.h"

static __thread long t_init = 42;
static __thread char t_zero[3000];

int main(int argc, char **argv)
{
	t_init *= 3;
	for (int i = 0; i < 3000; i++)
		t_zero[i] = (char)(i * 7);
	errno = 77;
	subj_checkpoint(argc, argv);
	int e = errno;
	uint64_t h = subj_hash(0, t_zero, sizeof(t_zero));
	printf("tls %ld %016llx errno %d\n", t_init, (unsigned long long)h, e);
	return 0;
}
