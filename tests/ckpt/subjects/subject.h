/* SPDX-License-Identifier: MIT */
/*
 * Shared by the checkpoint test subjects (one small program per kind of
 * state, zdtm style).  Usage: SUBJECT straight|capture IMAGE
 *   straight: run start to end without a checkpoint;
 *   capture:  checkpoint at the marked point into IMAGE (a path, or fd:N),
 *             print "CAPTURED <pid>" on stderr and wait to be killed; the
 *             restored copy prints "RESTORED <pid>" and runs to the end.
 * Results go to stdout only after the checkpoint, so a straight run and a
 * restored run must print exactly the same bytes.
 */
#ifndef MSG_CKPT_SUBJECT_H
#define MSG_CKPT_SUBJECT_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"

static inline int subj_open_out(const char *image)
{
	if (!strncmp(image, "fd:", 3))
		return atoi(image + 3);
	return open(image, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* The checkpoint point.  Returns in the straight run and in the restored copy. */
static inline void subj_checkpoint(int argc, char **argv)
{
	if (argc < 3 || strcmp(argv[1], "capture"))
		return;
	struct ckpt_opts o;
	struct ckpt_error e;
	memset(&o, 0, sizeof(o));
	const char *z = getenv("CKPT_TEST_COMPRESS");
	o.compress = z && *z;
	int fd = subj_open_out(argv[2]);
	if (getenv("CKPT_TEST_PREWARM")) {
		/* a dry collection first (libmsg's, at msgInit), with state it
		 * refuses (a pipe) open meanwhile: the capture after it must be
		 * as good as one without, and the process state untouched */
		int p[2];
		if (pipe(p) == 0) {
			if (ckpt_prewarm(&o) != CKPT_E_PIPE) {
				fprintf(stderr, "CAPTURE-FAILED prewarm did not report the pipe\n");
				exit(2);
			}
			close(p[0]);
			close(p[1]);
		}
	}
	pid_t before = getpid();
	fflush(NULL);
	int r = ckpt_capture(fd, &o, &e);
	if (r == CKPT_RESTORED) {
		fprintf(stderr, "RESTORED %d\n", (int)getpid());
		return;
	}
	if (r < 0) {
		fprintf(stderr, "CAPTURE-FAILED %s %s\n", ckpt_err_name(r), e.what);
		exit(2);
	}
	close(fd);
	fprintf(stderr, "CAPTURED %d\n", (int)before);
	for (int i = 0; i < 600; i++) /* the driver kills us; never linger */
		usleep(100000);
	exit(3);
}

/* FNV-1a over bytes: results are printed as digests. */
static inline uint64_t subj_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (!h)
		h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

#endif
