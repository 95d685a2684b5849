/*
 * mmt-damage: RESTORE and IMAGE_INFO refuse a damaged, truncated or
 * foreign image, or one this machine cannot run, with a clean error and
 * the reason code, leaving the caller alive and untouched (every check
 * happens before the point of no return).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"

#define TMO 20000
#define IMG "/tmp/dmg-good"
#define BAD "/tmp/dmg-bad"

/* Save a fresh mmt-target (run from @exe) into IMG, then kill it. */
static int make_image(const char *exe)
{
	char *argv[] = { (char *)exe, "/tmp/mmt-data", NULL };
	struct mmt_child c;
	struct msgmig_save a;
	int err;

	if (mmt_spawn(&c, argv) || mmt_read_byte(c.from, TMO) != 'R')
		return -1;
	err = mmt_save(c.pid, MSGMIG_SAVE_KILL, IMG, &a);
	mmt_wait(c.pid, TMO);
	close(c.to);
	close(c.from);
	return err;
}

/*
 * RESTORE @path in a child; the child exits 200 + errno-ish code it saw:
 * returns the reason (negative), or 1 if the restore "succeeded" (the
 * child ran the image), or 2 if the child died.
 */
static int try_restore(const char *path, int *err)
{
	struct msgmig_restore r = { .size = sizeof(r) };
	int fd, st, pfd[2];
	pid_t p;

	if (pipe(pfd))
		return 2;
	p = fork();
	if (p == 0) {
		int dev = mmt_dev(), res[2];

		fd = open(path, O_RDONLY);
		r.image_fd = fd;
		res[0] = ioctl(dev, MSGMIG_IOC_RESTORE, &r) < 0 ? errno : 0;
		res[1] = r.reason;
		if (write(pfd[1], res, sizeof(res)) != sizeof(res))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	st = mmt_wait(p, TMO);
	{
		int res[2] = { 0, 0 };
		ssize_t n = read(pfd[0], res, sizeof(res));

		close(pfd[0]);
		if (st < 0 || !WIFEXITED(st) || n != sizeof(res))
			return 2;
		*err = res[0];
		return res[1];
	}
}

static int info_reason(const char *path)
{
	static struct msgmig_image_info i;
	int dev = mmt_dev(), fd = open(path, O_RDONLY), ret;

	memset(&i, 0, sizeof(i));
	i.size = sizeof(i);
	i.image_fd = fd;
	ret = ioctl(dev, MSGMIG_IOC_IMAGE_INFO, &i) < 0 ? i.reason : 0;
	close(fd);
	close(dev);
	return ret;
}

static void expect(const char *what, const char *path, int reason)
{
	int err = 0, got = try_restore(path, &err);

	CHECK(got == reason, "%s: RESTORE gave reason %d (errno %s), want %d",
	      what, got, strerror(err), reason);
	if (got == reason)
		mmt_note("%s: refused, %s, reason %d, caller alive", what,
			 strerror(err), got);
	got = info_reason(path);
	CHECK(reason == -27 || got == reason, "%s: IMAGE_INFO gave reason %d", what, got);
}

static void damaged(const char *img, size_t len, size_t off, const char *what,
		    int reason)
{
	char *copy = malloc(len);

	memcpy(copy, img, len);
	copy[off] ^= 0x5a;
	mmt_write_file(BAD, copy, len);
	free(copy);
	expect(what, BAD, reason);
}

static void t_damage(void)
{
	char *img;
	size_t len;

	CHECK(make_image("/bin/mmt-target") == 0, "cannot make an image");
	if (mmt_read_file(IMG, &img, &len) || len < 4096)
		return;
	damaged(img, len, 1, "magic", -20);
	damaged(img, len, 8, "version", -21);
	damaged(img, len, 40, "file header", -23);
	damaged(img, len, 64 + 4, "section header", -23);
	damaged(img, len, 64 + 40 + 100, "IDENT payload", -23);
	damaged(img, len, len / 2, "page data", -23);
	damaged(img, len, len - 10, "END", -23);
	mmt_write_file(BAD, img, len / 2);
	expect("truncated to half", BAD, -22);
	mmt_write_file(BAD, img, len - 1);
	expect("last byte missing", BAD, -22);
	mmt_write_file(BAD, img, 10);
	expect("10 bytes", BAD, -22);
	mmt_write_file(BAD, "", 0);
	expect("empty", BAD, -22);
	expect("not an image", "/tmp/mmt-data", -20);
	free(img);
}

/* Images this machine cannot run: vDSO not moved, executable changed. */
static void t_mismatch(void)
{
	char *exe;
	size_t len;
	int err = 0, got;

	got = try_restore(IMG, &err);	/* without msgmig-restore's vDSO move */
	CHECK(got == -27 || got == 1, "vDSO elsewhere: reason %d", got);
	if (got == -27)
		mmt_note("vDSO not moved: refused, reason -27, caller alive");
	if (mmt_read_file("/bin/mmt-target", &exe, &len))
		return;
	mmt_write_file("/tmp/mmt-target2", exe, len);
	chmod("/tmp/mmt-target2", 0755);
	CHECK(make_image("/tmp/mmt-target2") == 0, "image of the copy");
	exe[len - 1] ^= 1;	/* same size, other content */
	mmt_write_file("/tmp/mmt-target2", exe, len);
	free(exe);
	{
		char *argv[] = { "/bin/msgmig-restore", IMG, NULL };
		struct mmt_child c;
		int st;

		mmt_spawn(&c, argv);
		st = mmt_wait(c.pid, TMO);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 25,
		      "changed executable: msgmig-restore status %#x, want exit 25", st);
		close(c.to);
		close(c.from);
	}
}

/* A vfork child shares its parent's address space: RESTORE must refuse. */
static void t_vfork(void)
{
	struct msgmig_restore r = { .size = sizeof(r) };
	volatile int err = 0, reason = 0;
	int dev = mmt_dev(), st;
	pid_t p;

	r.image_fd = open(IMG, O_RDONLY);
	p = vfork();
	if (p == 0) {
		if (ioctl(dev, MSGMIG_IOC_RESTORE, &r) < 0) {
			err = errno;
			reason = r.reason;
		}
		_exit(0);
	}
	waitpid(p, &st, 0);
	CHECK(err == EBUSY && reason == -11, "vfork child: errno %d reason %d", err, reason);
	if (err == EBUSY)
		mmt_note("vfork child: refused (%s), parent intact", r.detail);
	close(r.image_fd);
	close(dev);
}

int main(void)
{
	mmt_prog = "mmt-damage";
	if (mmt_make_data("/tmp/mmt-data"))
		return 1;
	t_damage();
	t_mismatch();
	t_vfork();
	return mmt_done();
}
