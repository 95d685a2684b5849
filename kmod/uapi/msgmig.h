/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * msgmig: kernel-assisted save/restore of a process image.
 *
 * User-space interface of /dev/msgmig. Every argument struct starts with
 * its own size so that later versions can grow it; the module rejects a
 * size it does not know and any flag or reserved field it does not
 * understand (EINVAL), so old callers never get silently wrong behaviour.
 *
 * The image bytes are those of docs/image-format.md (the same format as
 * the user-level engine); see docs/kmod.md for what the kernel path
 * supports.
 */
#ifndef MSGMIG_UAPI_H
#define MSGMIG_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MSGMIG_UAPI_VERSION	1
#define MSGMIG_DEVICE		"/dev/msgmig"
#define MSGMIG_IOC_MAGIC	0xB7

struct msgmig_version {
	__u32 uapi;		/* out: MSGMIG_UAPI_VERSION */
	__u32 image_version;	/* out: image format version produced/accepted */
	__u64 features;		/* out: MSGMIG_FEAT_* */
};

#define MSGMIG_FEAT_SAVE	(1ULL << 0)
#define MSGMIG_FEAT_RESTORE	(1ULL << 1)
#define MSGMIG_FEAT_STREAM	(1ULL << 2)	/* MSGMIG_SAVE_STREAM */
#define MSGMIG_FEAT_ZSTD	(1ULL << 3)	/* RESTORE reads zstd PAGES */

#define MSGMIG_MAX_EXCLUDE_FDS	  16
#define MSGMIG_MAX_EXCLUDE_RANGES 8

struct msgmig_range {
	__u64 start, end;	/* page aligned, end exclusive */
};

/* SAVE flags */
#define MSGMIG_SAVE_LEAVE_STOPPED (1U << 0) /* do not SIGCONT after save */
#define MSGMIG_SAVE_KILL	  (1U << 1) /* SIGKILL the target once saved */
/*
 * Produce the pages as read() asks for them (a few MiB of kernel memory
 * instead of the whole image); the target stays stopped until the stream
 * has been read to its end, and is let go (or killed) only then. Closing
 * the file early, or a new SAVE, lets it continue. image_size and nr_pages
 * are then 0; seeking back is refused (ESPIPE).
 */
#define MSGMIG_SAVE_STREAM	  (1U << 2)
#define MSGMIG_SAVE_FLAGS	  (MSGMIG_SAVE_LEAVE_STOPPED | MSGMIG_SAVE_KILL | \
				   MSGMIG_SAVE_STREAM)

/*
 * SAVE: stop @pid, capture it, and keep the image in this open file; read()
 * then streams it from offset 0 (lseek works). A new SAVE replaces it.
 * The runtime (libmsg) state is opaque to the module: the caller names
 * where it lies in the target (runtime_addr/len) and the module copies it
 * into the RUNTIME section, as ckpt_capture() does with runtime_state.
 */
struct msgmig_save {
	__u32 size;		/* in: sizeof(struct msgmig_save) */
	__u32 flags;		/* in: MSGMIG_SAVE_* */
	__s32 pid;		/* in: target, in the caller's pid namespace */
	__u32 reserved;		/* in: 0 */
	__u64 runtime_addr;	/* in: target bytes for the RUNTIME section */
	__u64 runtime_len;	/* in: their length; 0 = no RUNTIME section */
	/*
	 * in: the runtime's own descriptors and mappings (its link to msgd,
	 * its shared-memory rings): left out of the image and re-created by
	 * the runtime on the target, as ckpt_opts does for the user engine.
	 */
	__u32 n_exclude_fds;
	__u32 n_exclude_ranges;
	__s32 exclude_fds[MSGMIG_MAX_EXCLUDE_FDS];
	struct msgmig_range exclude_ranges[MSGMIG_MAX_EXCLUDE_RANGES];
	__u64 image_size;	/* out: bytes of image available to read() */
	__u64 nr_pages;		/* out: pages copied */
	__s32 reason;		/* out on failure: CKPT_E_* code, or 0 */
	__u32 reserved2;	/* out: 0 */
	char detail[128];	/* out on failure: what was refused, NUL-ended */
};

/* RESTORE flags: none yet. */
#define MSGMIG_RESTORE_FLAGS	0U

/*
 * RESTORE: replace the caller's address space with the image read from
 * @image_fd (from its current offset to the end) and return to user space
 * at the saved point. On success the ioctl does not return to the caller;
 * on failure it returns -1 with errno, and the caller is untouched unless
 * errno is ENOTRECOVERABLE (the caller has then been sent SIGKILL).
 *
 * The image's [vvar]/[vdso] must already be where the image expects them
 * (arch_prctl(ARCH_MAP_VDSO_64) from user space; see IMAGE_INFO), since
 * the 6.1 kernel does not export map_vdso() to modules.
 */
struct msgmig_restore {
	__u32 size;		/* in: sizeof(struct msgmig_restore) */
	__u32 flags;		/* in: MSGMIG_RESTORE_* */
	__s32 image_fd;		/* in */
	__u32 reserved;		/* in: 0 */
	__s32 reason;		/* out on failure: CKPT_E_* code, or 0 */
	__u32 reserved2;	/* out: 0 */
	char detail[128];	/* out on failure: what was refused, NUL-ended */
};

/*
 * IMAGE_INFO: validate the image read from @image_fd (from its current
 * offset; the offset is left where it was) and report what a stub must do
 * in user space before RESTORE, because 6.1 exports no way to do it from a
 * module: move [vvar]/[vdso] (arch_prctl(ARCH_MAP_VDSO_64, special_start))
 * and chdir(cwd).
 */
struct msgmig_image_info {
	__u32 size;		/* in: sizeof(struct msgmig_image_info) */
	__u32 flags;		/* in: 0 */
	__s32 image_fd;		/* in */
	__u32 reserved;		/* in: 0 */
	__s32 reason;		/* out on failure: CKPT_E_* code, or 0 */
	__u32 umask;		/* out: umask to set before RESTORE */
	__u64 special_start;	/* out: [vvar] start, 0 if none */
	__u64 special_end;	/* out: end of [vdso] */
	__u64 vdso_start;	/* out: [vdso] start, 0 if none */
	__u64 image_size;	/* out */
	char detail[128];	/* out on failure: what was refused, NUL-ended */
	char cwd[512];		/* out: directory to chdir() to before RESTORE */
};

#define MSGMIG_IOC_VERSION	_IOR(MSGMIG_IOC_MAGIC, 0, struct msgmig_version)
#define MSGMIG_IOC_SAVE		_IOWR(MSGMIG_IOC_MAGIC, 1, struct msgmig_save)
#define MSGMIG_IOC_RESTORE	_IOW(MSGMIG_IOC_MAGIC, 2, struct msgmig_restore)
#define MSGMIG_IOC_IMAGE_INFO	_IOWR(MSGMIG_IOC_MAGIC, 3, struct msgmig_image_info)

#endif /* MSGMIG_UAPI_H */
