/* SPDX-License-Identifier: MIT */
/* The runtime's side of the contract: its socket and shared ring are
 * excluded from the image and absent after the restore (the runtime
 * re-creates them), and its state bytes come back via ckpt_runtime_state(). */
#include <errno.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "subject.h"

int main(int argc, char **argv)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		return 1;
	char *ring = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	memset(ring, 7, 1 << 16);
	char cut[64];
	snprintf(cut, sizeof(cut), "channel 3 consumed up to seq %d", 42);
	if (argc > 2 && !strcmp(argv[1], "capture")) {
		struct ckpt_opts o;
		struct ckpt_error e;
		memset(&o, 0, sizeof(o));
		o.exclude_fds[0] = sv[0], o.exclude_fds[1] = sv[1], o.n_exclude_fds = 2;
		o.exclude_ranges[0].start = (uintptr_t)ring;
		o.exclude_ranges[0].end = (uintptr_t)ring + (1 << 16);
		o.n_exclude_ranges = 1;
		o.runtime_state = cut;
		o.runtime_state_len = strlen(cut) + 1;
		int fd = subj_open_out(argv[2]);
		fflush(NULL);
		int r = ckpt_capture(fd, &o, &e);
		if (r < 0) {
			fprintf(stderr, "CAPTURE-FAILED %s %s\n", ckpt_err_name(r), e.what);
			return 2;
		}
		if (r == CKPT_CAPTURED) {
			close(fd);
			fprintf(stderr, "CAPTURED %d\n", (int)getpid());
			for (int i = 0; i < 600; i++)
				usleep(100000);
			return 3;
		}
		fprintf(stderr, "RESTORED %d\n", (int)getpid());
		size_t n;
		const char *st = ckpt_runtime_state(&n);
		int fds_gone = fcntl(sv[0], F_GETFD) < 0 && fcntl(sv[1], F_GETFD) < 0;
		unsigned char vec;
		int ring_gone = mincore(ring, 4096, &vec) < 0 && errno == ENOMEM;
		if (!st || n != strlen(cut) + 1 || strcmp(st, cut) || !fds_gone || !ring_gone) {
			printf("runtime BAD state=%s fds_gone=%d ring_gone=%d\n", st ? st : "(null)", fds_gone, ring_gone);
			return 0;
		}
	}
	printf("runtime ok: %s\n", cut);
	return 0;
}
