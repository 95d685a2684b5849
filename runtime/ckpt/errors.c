/* SPDX-License-Identifier: MIT */
/* Error names and texts; freestanding so the restorer prints the same ones. */
#include "ckpt.h"
#include "image_reader.h"

struct err_ent {
	int code;
	const char *name, *text;
};

static const struct err_ent errs[] = {
	{ CKPT_CAPTURED, "CKPT_CAPTURED", "image captured" },
	{ CKPT_RESTORED, "CKPT_RESTORED", "process restored from an image" },
	{ CKPT_E_IO, "CKPT_E_IO", "image stream read/write failed" },
	{ CKPT_E_NOMEM, "CKPT_E_NOMEM", "out of memory" },
	{ CKPT_E_THREADS, "CKPT_E_THREADS", "process has more than one thread" },
	{ CKPT_E_SOCKET, "CKPT_E_SOCKET", "application socket open" },
	{ CKPT_E_PIPE, "CKPT_E_PIPE", "application pipe or FIFO open" },
	{ CKPT_E_IO_URING, "CKPT_E_IO_URING", "io_uring instance open" },
	{ CKPT_E_FDKIND, "CKPT_E_FDKIND", "descriptor kind cannot be carried" },
	{ CKPT_E_SHARED, "CKPT_E_SHARED", "writable shared mapping" },
	{ CKPT_E_RESERVED, "CKPT_E_RESERVED", "mapping in the restorer's reserved range" },
	{ CKPT_E_PROC, "CKPT_E_PROC", "cannot read /proc" },
	{ CKPT_E_INVAL, "CKPT_E_INVAL", "invalid argument" },
	{ CKPT_E_LOCK, "CKPT_E_LOCK", "file lock held" },
	{ CKPT_E_SYSV, "CKPT_E_SYSV", "SysV IPC state (shared memory, semaphore undo)" },
	{ CKPT_E_SECCOMP, "CKPT_E_SECCOMP", "seccomp filter installed" },
	{ CKPT_E_MLOCK, "CKPT_E_MLOCK", "mlockall(MCL_FUTURE) in effect" },
	{ CKPT_E_MAGIC, "CKPT_E_MAGIC", "not a msg checkpoint image" },
	{ CKPT_E_VERSION, "CKPT_E_VERSION", "unsupported image version" },
	{ CKPT_E_TRUNCATED, "CKPT_E_TRUNCATED", "image truncated" },
	{ CKPT_E_CHECKSUM, "CKPT_E_CHECKSUM", "image checksum mismatch" },
	{ CKPT_E_FORMAT, "CKPT_E_FORMAT", "malformed image" },
	{ CKPT_E_EXE, "CKPT_E_EXE", "executable differs or is missing" },
	{ CKPT_E_LIB, "CKPT_E_LIB", "mapped library or file differs or is missing" },
	{ CKPT_E_VDSO, "CKPT_E_VDSO", "vDSO differs" },
	{ CKPT_E_CPU, "CKPT_E_CPU", "CPU features or XSAVE layout incompatible" },
	{ CKPT_E_FILE, "CKPT_E_FILE", "open file cannot be reopened" },
	{ CKPT_E_MAP, "CKPT_E_MAP", "mapping cannot be recreated" },
	{ CKPT_E_COMPRESS, "CKPT_E_COMPRESS", "compressed data corrupt or unsupported" },
	{ CKPT_E_KERNEL, "CKPT_E_KERNEL", "kernel call failed during restore" },
};

static const struct err_ent *find(int code)
{
	for (unsigned i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
		if (errs[i].code == code)
			return &errs[i];
	return 0;
}

const char *ckpt_err_name(int code)
{
	const struct err_ent *e = find(code);
	return e ? e->name : "CKPT_E_UNKNOWN";
}

const char *ckpt_strerror(int code)
{
	const struct err_ent *e = find(code);
	return e ? e->text : "unknown checkpoint error";
}
