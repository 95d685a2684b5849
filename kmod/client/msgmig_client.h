/*
 * msgmig_client: the kernel-assisted engine from the caller's side (msgd,
 * tools): is the device there, and save a process into a stream (a file or
 * the socket to the target host). Restoring is `msgmig-restore` on the
 * target host (`--fd N` for an image arriving on a socket).
 */
#ifndef MSGMIG_CLIENT_H
#define MSGMIG_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "msgmig.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if /dev/msgmig is present and speaks this uapi version, else 0. */
int msgmig_available(void);
/* The same, saying why not: 0, or -errno with @why naming /dev/msgmig and
 * what is wrong (absent, not accessible, another uapi version). */
int msgmig_probe(char *why, size_t whylen);

struct msgmig_client_opts {
	unsigned int flags;		/* MSGMIG_SAVE_KILL, MSGMIG_SAVE_LEAVE_STOPPED */
	const int *exclude_fds;		/* the runtime's own descriptors */
	int n_exclude_fds;		/* <= MSGMIG_MAX_EXCLUDE_FDS */
	const struct msgmig_range *exclude_ranges; /* its shared mappings */
	int n_exclude_ranges;		/* <= MSGMIG_MAX_EXCLUDE_RANGES */
	uint64_t runtime_addr, runtime_len; /* RUNTIME section, 0 = none */
};

struct msgmig_client_error {
	int reason;			/* CKPT_E_* or 0 */
	char detail[128];
	unsigned long long written;	/* image bytes written to out_fd: 0 when
					 * SAVE refused before the stream began */
};

/*
 * Save @pid and write its image to @out_fd, streamed (MSGMIG_SAVE_STREAM):
 * with MSGMIG_SAVE_KILL the target dies only after the whole image was
 * written; on any failure it goes on running. Returns 0, or -errno with
 * @err filled (reason and what was refused). @o may be NULL.
 */
int msgmig_save_to_fd(pid_t pid, const struct msgmig_client_opts *o,
		      int out_fd, struct msgmig_client_error *err);

#ifdef __cplusplus
}
#endif

#endif
