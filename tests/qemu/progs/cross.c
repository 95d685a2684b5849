/*
 * mmt-cross: the kernel and user-level engines share one image format.
 * An image saved by msgmig.ko restores with msg-restore (the user-level
 * restorer), and an image written by libmsgckpt (mmt-utarget calls
 * ckpt_capture at its safe point) restores with msgmig-restore; each run
 * must print what an undisturbed run prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"

#define DATA "/tmp/mmt-data"
#define OUT_MAX 4096
#define TMO 30000

static int start(struct mmt_child *c, char **argv)
{
	if (mmt_spawn(c, argv))
		return -1;
	return mmt_read_byte(c->from, TMO) == 'R' ? 0 : -1;
}

static int finish(struct mmt_child *c, char *out, const char *what)
{
	ssize_t n;
	int st;

	memset(out, 0, OUT_MAX);
	if (write(c->to, "G", 1) != 1)
		return -1;
	n = mmt_read_all(c->from, out, OUT_MAX - 1, TMO);
	st = mmt_wait(c->pid, TMO);
	close(c->to);
	close(c->from);
	CHECK(n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: output %zd bytes, wait status %#x", what, n, st);
	return n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void reference(char *exe, char *ref)
{
	char *argv[] = { exe, DATA, NULL };
	struct mmt_child c;

	CHECK(start(&c, argv) == 0, "%s did not start", exe);
	finish(&c, ref, "reference");
}

static void restore_with(char *restorer, const char *img, const char *ref,
			 const char *what)
{
	char *argv[] = { restorer, (char *)img, NULL }, out[OUT_MAX];
	struct mmt_child c;

	CHECK(mmt_spawn(&c, argv) == 0, "spawn %s", restorer);
	if (finish(&c, out, what))
		return;
	CHECK(!strcmp(out, ref), "%s differs:\n--- got\n%s--- want\n%s", what, out, ref);
	if (!strcmp(out, ref))
		mmt_note("%s: identical to the undisturbed run", what);
}

/* msgmig.ko saves, msg-restore restores. */
static void t_kmod_to_user(void)
{
	char ref[OUT_MAX], *argv[] = { "/bin/mmt-target", DATA, NULL };
	struct mmt_child c;
	struct msgmig_save a;
	int err;

	reference("/bin/mmt-target", ref);
	CHECK(start(&c, argv) == 0, "target did not start");
	err = mmt_save(c.pid, MSGMIG_SAVE_KILL, "/tmp/x-kmod", &a);
	CHECK(err == 0, "SAVE: %s (%d %s)", strerror(-err), a.reason, a.detail);
	mmt_wait(c.pid, TMO);
	close(c.to);
	close(c.from);
	restore_with("/bin/msg-restore", "/tmp/x-kmod", ref, "kmod image -> msg-restore");
	restore_with("/bin/msgmig-restore", "/tmp/x-kmod", ref, "kmod image -> msgmig-restore");
}

/* libmsgckpt captures, msgmig.ko restores. */
static void t_user_to_kmod(void)
{
	char ref[OUT_MAX], *argv[] = { "/bin/mmt-utarget", DATA, "/tmp/x-user", NULL };
	struct mmt_child c;
	int st;

	reference("/bin/mmt-utarget", ref);
	CHECK(start(&c, argv) == 0, "utarget did not start");
	st = mmt_wait(c.pid, TMO);	/* exits 0 once captured */
	close(c.to);
	close(c.from);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "capture: status %#x", st);
	restore_with("/bin/msgmig-restore", "/tmp/x-user", ref, "user image -> msgmig-restore");
	restore_with("/bin/msg-restore", "/tmp/x-user", ref, "user image -> msg-restore");
}

int main(void)
{
	mmt_prog = "mmt-cross";
	if (mmt_make_data(DATA))
		return 1;
	if (access("/bin/msg-restore", X_OK) || access("/bin/mmt-utarget", X_OK)) {
		printf("%s: msg-restore or mmt-utarget missing from the initramfs\n", mmt_prog);
		return 1;
	}
	t_kmod_to_user();
	t_user_to_kmod();
	return mmt_done();
}
