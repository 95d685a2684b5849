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
#include "msgmig_client.h"

int main(int argc, char **argv)
{
	struct msgmig_client_opts o = { 0 };
	struct msgmig_client_error err;
	int opt, out = 1, ret;

	while ((opt = getopt(argc, argv, "ks")) != -1) {
		if (opt == 'k')
			o.flags |= MSGMIG_SAVE_KILL;
		else if (opt == 's')
			o.flags |= MSGMIG_SAVE_LEAVE_STOPPED;
		else
			goto usage;
	}
	if (optind >= argc || argc - optind > 2)
		goto usage;
	if (!msgmig_available()) {
		fprintf(stderr, "msgmig-save: %s missing or of another version (is msgmig.ko loaded?)\n",
			MSGMIG_DEVICE);
		return 1;
	}
	if (argc - optind == 2) {
		out = open(argv[optind + 1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (out < 0) {
			perror(argv[optind + 1]);
			return 1;
		}
	}
	ret = msgmig_save_to_fd(atoi(argv[optind]), &o, out, &err);
	if (ret < 0) {
		mm_report("msgmig-save", argv[optind], -ret, err.reason, err.detail);
		return err.reason ? -err.reason : 1;
	}
	if (out != 1 && close(out) < 0) {
		perror("msgmig-save: writing image");
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: msgmig-save [-k|-s] PID [OUT]\n");
	return 2;
}
