/*
 * msgmig-save PID [OUT]: capture process PID through /dev/msgmig and write
 * the image (docs/image-format.md) to OUT or stdout. Options: -k kill the
 * target once saved (migration), -s leave it stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "mmtool.h"

static int copy_out(int dev, int out)
{
	char buf[1 << 16];
	ssize_t n;

	while ((n = read(dev, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, n - off);

			if (w < 0)
				return -1;
			off += w;
		}
	}
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct msgmig_save a = { .size = sizeof(a) };
	int opt, dev, out = 1;

	while ((opt = getopt(argc, argv, "ks")) != -1) {
		if (opt == 'k')
			a.flags |= MSGMIG_SAVE_KILL;
		else if (opt == 's')
			a.flags |= MSGMIG_SAVE_LEAVE_STOPPED;
		else
			goto usage;
	}
	if (optind >= argc || argc - optind > 2)
		goto usage;
	a.pid = atoi(argv[optind]);
	dev = mm_open_dev("msgmig-save");
	if (ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0) {
		mm_report("msgmig-save", argv[optind], errno, a.reason, a.detail);
		return a.reason ? -a.reason : 1;
	}
	if (argc - optind == 2) {
		out = open(argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (out < 0) {
			perror(argv[optind + 1]);
			return 1;
		}
	}
	if (copy_out(dev, out) < 0 || (out != 1 && close(out) < 0)) {
		perror("msgmig-save: writing image");
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: msgmig-save [-k|-s] PID [OUT]\n");
	return 2;
}
