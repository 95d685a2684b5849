/* SPDX-License-Identifier: MIT */
/* Live snapshot: t_live live IMAGE — the source takes a snapshot and keeps
 * computing (rewriting its memory); the restored copy continues from the
 * snapshot point and must reach the same result.  No SIGCHLD may reach
 * the application from the snapshot writer. */
#include <signal.h>

#include "subject.h"

static volatile int sigchld;

static void on_chld(int s)
{
	(void)s;
	sigchld++;
}

int main(int argc, char **argv)
{
	size_t n = 32u << 20;
	signal(SIGCHLD, on_chld);
	unsigned char *p = malloc(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i >> 7);
	int live = argc > 2 && !strcmp(argv[1], "live");
	if (live) {
		struct ckpt_error e;
		int fd = subj_open_out(argv[2]);
		fflush(NULL);
		int r = ckpt_snapshot_live(fd, NULL, &e);
		if (r < 0) {
			fprintf(stderr, "SNAPSHOT-FAILED %s %s\n", ckpt_err_name(r), e.what);
			return 2;
		}
		if (r == CKPT_RESTORED) {
			fprintf(stderr, "RESTORED %d\n", (int)getpid());
			live = 0;
		} else {
			close(fd);
		}
	}
	for (size_t i = 0; i < n; i += 512) /* the source rewrites what is being saved */
		p[i] ^= 0xa5;
	uint64_t h = subj_hash(0, p, n);
	if (live) {
		struct ckpt_error e;
		int r = ckpt_snapshot_wait(&e);
		fprintf(stderr, "SNAPSHOT-DONE %d %s %s\n", (int)getpid(), ckpt_err_name(r), r ? e.what : "");
	}
	printf("live %016llx sigchld=%d\n", (unsigned long long)h, sigchld);
	return 0;
}
