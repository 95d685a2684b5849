/*
 * msgmig-restore IMAGE | - | --fd N: become the process saved in IMAGE (or
 * streamed on stdin or fd N, e.g. a socket from the source host), through
 * /dev/msgmig. The module does the restore; this stub only does what the
 * 6.1 kernel exports no module interface for: chdir, umask, and moving
 * [vvar]/[vdso] where the image expects them (arch_prctl). fd 0-2 are
 * passed on to the restored process (CKPT_FD_STDIO).
 */
#include <asm/prctl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "mmtool.h"

#define PROG "msgmig-restore"

struct span {
	unsigned long start, end;
};

/* The current [vvar]..[vdso] span, from /proc/self/maps. */
static int special_span(struct span *s)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	s->start = s->end = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;

		if (!strstr(line, "[vvar") && !strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (!s->start || a < s->start)
			s->start = a;
		if (b > s->end)
			s->end = b;
	}
	fclose(f);
	return 0;
}

/*
 * Move our vDSO where the image had it. After this glibc must not use the
 * vDSO (nothing below does: only raw syscalls and the RESTORE ioctl).
 */
static int place_vdso(unsigned long want)
{
	struct span cur;

	if (special_span(&cur) < 0)
		return -1;
	if (!want || cur.start == want)
		return 0;
	if (cur.start && syscall(SYS_munmap, cur.start, cur.end - cur.start))
		return -1;
	return syscall(SYS_arch_prctl, ARCH_MAP_VDSO_64, want) < 0 ? -1 : 0;
}

/*
 * The module reads the image twice (IMAGE_INFO, then RESTORE), so a stream
 * on stdin is first copied into a memfd, which RESTORE then reads.
 */
static int stream_to_memfd(int in)
{
	char buf[1 << 16];
	int fd = memfd_create("msgmig-image", MFD_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, n - off);

			if (w < 0)
				return -1;
			off += w;
		}
	if (n < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	if (in == 0) {	/* stdin was the image, not the process's */
		n = open("/dev/null", O_RDONLY);
		if (n > 0) {
			dup2(n, 0);
			close(n);
		}
	} else {
		close(in);	/* --fd: the runtime's socket, not the image's */
	}
	return fd;
}

/* IMAGE, "-" (stdin) or "--fd N" (e.g. a socket from the source host). */
static int open_image(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--fd"))
		return stream_to_memfd(atoi(argv[2]));
	if (argc != 2)
		return -2;
	if (!strcmp(argv[1], "-"))
		return stream_to_memfd(0);
	return open(argv[1], O_RDONLY | O_CLOEXEC);
}

int main(int argc, char **argv)
{
	static struct msgmig_image_info info = { .size = sizeof(info) };
	struct msgmig_restore r = { .size = sizeof(r) };
	int dev, img;

	img = open_image(argc, argv);
	if (img == -2) {
		fprintf(stderr, "usage: " PROG " IMAGE | - | --fd N\n");
		return 2;
	}
	dev = mm_open_dev(PROG);
	if (img < 0) {
		fprintf(stderr, PROG ": %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	info.image_fd = img;
	if (ioctl(dev, MSGMIG_IOC_IMAGE_INFO, &info) < 0) {
		mm_report(PROG, argv[1], errno, info.reason, info.detail);
		return info.reason ? -info.reason : 1;
	}
	if (info.cwd[0] && chdir(info.cwd) < 0) {
		fprintf(stderr, PROG ": CKPT_E_FILE: cwd %s: %s\n", info.cwd,
			strerror(errno));
		return 29;
	}
	umask(info.umask);
	if (place_vdso(info.special_start) < 0) {
		fprintf(stderr, PROG ": CKPT_E_VDSO: cannot move vDSO to %#llx: %s\n",
			(unsigned long long)info.special_start, strerror(errno));
		return 27;
	}
	r.image_fd = img;
	ioctl(dev, MSGMIG_IOC_RESTORE, &r);
	/* Only reached on failure; the address space is intact. */
	mm_report(PROG, argv[1], errno, r.reason, r.detail);
	return r.reason ? -r.reason : 1;
}
