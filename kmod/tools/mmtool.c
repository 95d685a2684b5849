/* Shared helpers of the msgmig user-space tools. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mmtool.h"

static const struct {
	int code;
	const char *name;
} reasons[] = {
	{ -1, "CKPT_E_IO" }, { -2, "CKPT_E_NOMEM" }, { -3, "CKPT_E_THREADS" },
	{ -4, "CKPT_E_SOCKET" }, { -5, "CKPT_E_PIPE" }, { -6, "CKPT_E_IO_URING" },
	{ -7, "CKPT_E_FDKIND" }, { -8, "CKPT_E_SHARED" }, { -9, "CKPT_E_RESERVED" },
	{ -10, "CKPT_E_PROC" }, { -11, "CKPT_E_INVAL" }, { -20, "CKPT_E_MAGIC" },
	{ -21, "CKPT_E_VERSION" }, { -22, "CKPT_E_TRUNCATED" },
	{ -23, "CKPT_E_CHECKSUM" }, { -24, "CKPT_E_FORMAT" }, { -25, "CKPT_E_EXE" },
	{ -26, "CKPT_E_LIB" }, { -27, "CKPT_E_VDSO" }, { -28, "CKPT_E_CPU" },
	{ -29, "CKPT_E_FILE" }, { -30, "CKPT_E_MAP" }, { -31, "CKPT_E_COMPRESS" },
	{ -32, "CKPT_E_KERNEL" },
};

const char *mm_reason_name(int reason)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].code == reason)
			return reasons[i].name;
	return "?";
}

int mm_open_dev(const char *prog)
{
	int fd = open(MSGMIG_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s (is msgmig.ko loaded?)\n", prog,
			MSGMIG_DEVICE, strerror(errno));
		exit(1);
	}
	return fd;
}

void mm_report(const char *prog, const char *what, int err, int reason,
	       const char *detail)
{
	if (reason)
		fprintf(stderr, "%s: %s: %s (%s: %s)\n", prog, what,
			strerror(err), mm_reason_name(reason), detail);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
}
