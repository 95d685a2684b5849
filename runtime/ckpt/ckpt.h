/* SPDX-License-Identifier: MIT */
/*
 * msgckpt: transparent user-level checkpoint of the calling process.
 * Image format and resume contract: docs/image-format.md.
 */
#ifndef MSG_CKPT_H
#define MSG_CKPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CKPT_CAPTURED 0
#define CKPT_RESTORED 1

enum ckpt_err {
	CKPT_E_IO = -1,
	CKPT_E_NOMEM = -2,
	CKPT_E_THREADS = -3,
	CKPT_E_SOCKET = -4,
	CKPT_E_PIPE = -5,
	CKPT_E_IO_URING = -6,
	CKPT_E_FDKIND = -7,
	CKPT_E_SHARED = -8,
	CKPT_E_RESERVED = -9,
	CKPT_E_PROC = -10,
	CKPT_E_INVAL = -11,
	CKPT_E_LOCK = -12,
	CKPT_E_SYSV = -13,
	CKPT_E_SECCOMP = -14,
	CKPT_E_MLOCK = -15,
	CKPT_E_MAGIC = -20,
	CKPT_E_VERSION = -21,
	CKPT_E_TRUNCATED = -22,
	CKPT_E_CHECKSUM = -23,
	CKPT_E_FORMAT = -24,
	CKPT_E_EXE = -25,
	CKPT_E_LIB = -26,
	CKPT_E_VDSO = -27,
	CKPT_E_CPU = -28,
	CKPT_E_FILE = -29,
	CKPT_E_MAP = -30,
	CKPT_E_COMPRESS = -31,
	CKPT_E_KERNEL = -32,
};

struct ckpt_opts {
	int exclude_fds[16]; /* runtime descriptors: left out, re-created by the runtime */
	int n_exclude_fds;
	struct {
		uintptr_t start, end;
	} exclude_ranges[8]; /* runtime shared memory: left out of the image */
	int n_exclude_ranges;
	const void *runtime_state; /* copied into the RUNTIME section */
	size_t runtime_state_len;
	int compress; /* non-zero: zstd-compress page data */
	int prepare;  /* pre-copy begin only: the prepared stop (prepare.c): no
		       * tracking, the stop's buffer made ready while the process
		       * runs on, the stop copies everything */
};

struct ckpt_error {
	int code;
	char what[256]; /* names the resource or cause */
};

/* Writes an image of the calling process to out_fd (pipe/socket/file, streamed).
 * Returns CKPT_CAPTURED (0) in the original process, CKPT_RESTORED (1) when the
 * process resumes from the image after a restore, or a negative CKPT_E* code
 * with err filled. */
int ckpt_capture(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err);

/* Optional, once per process before its first capture (libmsg: at msgInit):
 * a dry collection of the metadata (nothing is written, refusals are only
 * reported) so that the capture does not pay first-time costs: the CPU
 * probe, the host's identity cache, the engine's code and libc's lazy
 * bindings.  Returns the error the capture would give now, or 0. */
int ckpt_prewarm(const struct ckpt_opts *o);

/* After CKPT_RESTORED: the runtime_state bytes that were captured (points into
 * restored memory). NULL (len 0) if none. */
const void *ckpt_runtime_state(size_t *len);

/* Live snapshot for regeneration: a clone of the caller (exit signal 0, so the
 * application never sees SIGCHLD) writes the image while the caller keeps
 * running. Returns CKPT_CAPTURED once the writer is started (the image is
 * complete when ckpt_snapshot_wait() returns 0), CKPT_RESTORED in the restored
 * copy, or a negative code. */
int ckpt_snapshot_live(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err);

/* Waits for the writer of the last live snapshot; 0 if it wrote a complete
 * image, else a negative code (err filled). */
int ckpt_snapshot_wait(struct ckpt_error *err);

/* Pre-copy live snapshot (the regeneration design): begin write-protects
 * the anonymous memory (userfaultfd, async) and starts the stream; step sends
 * pages while the process would block anyway (at most max_bytes), then
 * prepares the stop's buffer a bounded piece at a time; returns the bytes of
 * that work still to do, 0 once only new writes remain;
 * finish is the short stop: the last dirty pages and the state.  The stream
 * (to out_fd) is one image in the pre-copy form of docs/image-format.md.
 * finish returns CKPT_CAPTURED, CKPT_RESTORED in the restored copy, or < 0.
 * abort gives up (the stream is then incomplete). */
/* 1 if this kernel has what pre-copy needs (userfaultfd write-protect in
 * async mode, PAGEMAP_SCAN); else the fork engine is the one to use.
 * MSG_CKPT_NO_UFFD_WP=1 (tests) makes it say 0. */
int ckpt_precopy_available(void);
int ckpt_precopy_begin(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err);
long ckpt_precopy_step(size_t max_bytes, struct ckpt_error *err);
int ckpt_precopy_finish(const struct ckpt_opts *o, struct ckpt_error *err);
void ckpt_precopy_abort(void);
/* finish copies the stop's sections into memory and a helper sharing the
 * address space writes them to out_fd while the process runs on; this waits
 * for it: 0 once the whole image is written, else < 0 (err filled). */
int ckpt_precopy_wait(struct ckpt_error *err);
/* After finish: waits for the helper, drops the write-protection tracking
 * (costs ~1 ms per 10 MiB tracked) and the buffers; call it where the
 * process would block anyway. */
void ckpt_precopy_release(void);

/* The background snapshot (MSG_CKPT_BGSNAP=1; off by default, see
 * bench/migration/README.md, session 9; MSG_CKPT_STOP_COPY=1 forces the
 * stop that copies the written pages):
 * at the stop the pages not yet sent are write-protected again and a
 * helper saves them while the process runs on; a write to one of them
 * waits until the helper has saved it.  What that cost the process, for
 * the last pre-copy (after ckpt_precopy_wait): 1 if it was a background
 * snapshot, else 0. */
struct ckpt_bg_stats {
	uint64_t faults_pre, faults_post; /* write faults resolved before / after the cut */
	uint64_t post_service_ns;         /* after the cut: each fault read -> its page writable again */
	uint64_t post_wait_bound_ns;      /* the same plus the time since the helper last looked: an upper bound of the process's wait */
	uint64_t saved_bytes, fault_bytes; /* saved after the cut: all, by faults */
	uint64_t arm_ns, copy_ns;          /* the helper's re-protect at the cut; the cut -> all saved, protection dropped */
};
int ckpt_precopy_stats(struct ckpt_bg_stats *s);
/* 1 if the pre-copy under way is a prepared stop (a step then only says
 * how much of the stop's buffer is still to be made ready). */
int ckpt_precopy_prepared(void);
/* A prepared stop may begin with out_fd -1: its stream, before finish. */
void ckpt_precopy_stream(int out_fd);
/* 1 if the pre-copy under way (after begin) is a background snapshot. */
int ckpt_precopy_background(void);

const char *ckpt_strerror(int code);
/* "CKPT_E_CHECKSUM" etc.: the name msg-restore prints. */
const char *ckpt_err_name(int code);

#ifdef __cplusplus
}
#endif

#endif /* MSG_CKPT_H */
