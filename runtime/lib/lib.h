/* libmsg's state: one per process. No threads: every call blocks on the
 * socket to the local msgd (fd 3, made by msgd at launch). The per-channel
 * send counters live here, in the process's own memory, so a checkpoint of
 * the process carries them. */
#ifndef MSG_LIB_H
#define MSG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

struct msg_lib {
	bool init, finalized;
	int fd;
	uint32_t n, id, r, rep, flags;
	uint64_t *next_seq;   /* [n]: last sequence number sent to each rank */
	int passed_fd;        /* a descriptor msgd passed (image socket), or -1 */
	uint64_t restores;    /* how often this process was restored from an image */
	bool snapshot_pending; /* a live copy's writer still to reap */
};

extern struct msg_lib msg_lib;

/* io.c: whole-frame blocking I/O on the daemon socket */
int lib_write_frame(const struct frame *f, const void *payload, uint64_t len);
int lib_read_frame(struct frame *f);
int lib_read_payload(void *buf, uint64_t len);
/* ckpt.c: msgd asked for a capture at this safe point (inside msgrecv).
 * Returns MSG_OK when the caller should re-send its receive (restored
 * here as a new process) or 1 when it should just keep waiting. */
int lib_capture(uint8_t mode);
/* msgd restored us from an image msgmig.ko took from outside (docs/kmod.md):
 * say hello again; MSG_OK when the caller should re-send its receive. */
int lib_resumed(void);
void lib_reap_snapshot(void);

/* Injected stall: the process stays alive and makes no progress. */
void lib_stall(void) __attribute__((noreturn));

#endif
