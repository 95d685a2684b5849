/*
 * mmt-swap: SAVE copies swapped-out pages too. mmt-target pushes its heap,
 * anonymous mapping, .bss and stack out to swap (zram, set up by init.sh)
 * with MADV_PAGEOUT before its safe point; the image restored must still
 * print exactly what an undisturbed run prints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"

#define DATA "/tmp/mmt-data"
#define OUT_MAX 4096
#define TMO 30000

static long vm_swap_kb(pid_t pid)
{
	char path[64], *s = NULL, *p;
	size_t len;
	long kb = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (mmt_read_file(path, &s, &len) == 0 && (p = strstr(s, "VmSwap:")))
		kb = strtol(p + 7, NULL, 10);
	free(s);
	return kb;
}

/* A restored process is past its 'R': only a fresh target sends it. */
static int run(char **argv, char *out, int pageout, const char *img,
	       int fresh)
{
	struct mmt_child c;
	struct msgmig_save a;
	ssize_t n;
	int st;

	if (pageout)
		setenv("MMT_PAGEOUT", "1", 1);
	if (mmt_spawn(&c, argv) || (fresh && mmt_read_byte(c.from, TMO) != 'R'))
		return -1;
	unsetenv("MMT_PAGEOUT");
	if (img) {
		long kb = vm_swap_kb(c.pid);
		int err;

		CHECK(kb > 256, "only %ld kB of the target are in swap", kb);
		err = mmt_save(c.pid, MSGMIG_SAVE_KILL, img, &a);
		CHECK(err == 0, "SAVE: %s (%s)", strerror(-err), a.detail);
		mmt_note("%ld kB in swap; saved %llu pages", kb,
			 (unsigned long long)a.nr_pages);
		mmt_wait(c.pid, TMO);
		close(c.to);
		close(c.from);
		return 0;
	}
	memset(out, 0, OUT_MAX);
	if (write(c.to, "G", 1) != 1)
		return -1;
	n = mmt_read_all(c.from, out, OUT_MAX - 1, TMO);
	st = mmt_wait(c.pid, TMO);
	close(c.to);
	close(c.from);
	return n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(void)
{
	char *target[] = { "/bin/mmt-target", DATA, NULL };
	char *restore[] = { "/bin/msgmig-restore", "/tmp/img-swap", NULL };
	static char ref[OUT_MAX], out[OUT_MAX];

	mmt_prog = "mmt-swap";
	if (mmt_make_data(DATA))
		return 1;
	CHECK(run(target, ref, 0, NULL, 1) == 0, "reference run");
	CHECK(run(target, NULL, 1, "/tmp/img-swap", 1) == 0, "swapped-out target");
	CHECK(run(restore, out, 0, NULL, 0) == 0, "restored run");
	CHECK(!strcmp(out, ref), "restored run differs:\n--- got\n%s--- want\n%s", out, ref);
	if (!strcmp(out, ref))
		mmt_note("restored from swapped-out pages: identical to the undisturbed run");
	return mmt_done();
}
