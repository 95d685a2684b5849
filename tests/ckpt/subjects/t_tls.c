/* SPDX-License-Identifier: MIT */
/* TLS: initialised and zero __thread variables, errno (TLS in libc).
 * A 1 MiB malloc'd buffer usually lands right below the TLS block (one
 * VMA): its pages are written, and the image stream flushed, before the
 * TLS pages; the capture's own failing calls (sendmsg on a file: ENOTSOCK)
 * must not reach the errno the image carries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "subject.h"

static __thread long t_init = 42;
static __thread char t_zero[3000];

int main(int argc, char **argv)
{
	t_init *= 3;
	for (int i = 0; i < 3000; i++)
		t_zero[i] = (char)(i * 7);
	size_t big_n = 1u << 20;
	unsigned char *big = malloc(big_n);
	for (size_t i = 0; i < big_n; i++)
		big[i] = (unsigned char)(i * 13 + 1);
	errno = 77;
	subj_checkpoint(argc, argv);
	int e = errno;
	uint64_t h = subj_hash(subj_hash(0, t_zero, sizeof(t_zero)), big, big_n);
	printf("tls %ld %016llx errno %d\n", t_init, (unsigned long long)h, e);
	return 0;
}
