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
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"
#include "image.h"

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

/* PAGES sections of the image at @path that are zstd-compressed. */
static int zstd_sections(const char *path)
{
	char *img;
	size_t len, off = sizeof(struct ckpt_file_hdr);
	int n = 0;

	if (mmt_read_file(path, &img, &len))
		return -1;
	while (off + sizeof(struct ckpt_sect_hdr) <= len) {
		struct ckpt_sect_hdr h;

		memcpy(&h, img + off, sizeof(h));
		if (h.type == CKPT_S_PAGES && (h.flags & CKPT_SF_ZSTD))
			n++;
		off += sizeof(h) + h.stored_len + 4;
	}
	free(img);
	return n;
}

/* libmsgckpt captures (zstd-compressed pages if @z), msgmig.ko restores. */
static void t_user_to_kmod(int z)
{
	char ref[OUT_MAX], *argv[] = { "/bin/mmt-utarget", DATA, "/tmp/x-user",
				       z ? "z" : NULL, NULL };
	struct mmt_child c;
	int st;

	reference("/bin/mmt-utarget", ref);
	CHECK(start(&c, argv) == 0, "utarget did not start");
	st = mmt_wait(c.pid, TMO);	/* exits 0 once captured */
	close(c.to);
	close(c.from);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "capture: status %#x", st);
	if (z) {
		int n = zstd_sections("/tmp/x-user");

		CHECK(n > 0, "no compressed PAGES section in the image (%d)", n);
		mmt_note("compressed user image: %d zstd PAGES section(s)", n);
	}
	restore_with("/bin/msgmig-restore", "/tmp/x-user", ref,
		     z ? "zstd user image -> msgmig-restore" : "user image -> msgmig-restore");
	restore_with("/bin/msg-restore", "/tmp/x-user", ref,
		     z ? "zstd user image -> msg-restore" : "user image -> msg-restore");
}

/*
 * A zstd frame that is corrupt but carries a matching CRC (a writer bug,
 * not line noise) is refused before the point of no return.
 */
static void t_bad_frame(void)
{
	struct msgmig_restore r = { .size = sizeof(r) };
	size_t len, off = sizeof(struct ckpt_file_hdr);
	char *img;
	int fd, dev, ret;

	if (mmt_read_file("/tmp/x-user", &img, &len))
		return;
	while (off + sizeof(struct ckpt_sect_hdr) <= len) {
		struct ckpt_sect_hdr h;

		memcpy(&h, img + off, sizeof(h));
		if (h.type == CKPT_S_PAGES && (h.flags & CKPT_SF_ZSTD)) {
			char *pl = img + off + sizeof(h);
			unsigned int crc;

			pl[sizeof(struct ckpt_pages) + 6] ^= 0xff;	/* frame header */
			crc = mmt_crc32c(pl, h.stored_len);
			memcpy(pl + h.stored_len, &crc, 4);
			break;
		}
		off += sizeof(h) + h.stored_len + 4;
	}
	mmt_write_file("/tmp/x-badframe", img, len);
	free(img);
	dev = mmt_dev();
	fd = open("/tmp/x-badframe", O_RDONLY);
	r.image_fd = fd;
	ret = ioctl(dev, MSGMIG_IOC_RESTORE, &r);
	CHECK(ret < 0 && r.reason == -31, "corrupt zstd frame: ret %d reason %d (%s)",
	      ret, r.reason, r.detail);
	mmt_note("corrupt zstd frame with a good CRC: refused (%s), caller alive", r.detail);
	close(fd);
	close(dev);
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
	t_user_to_kmod(0);
	t_user_to_kmod(1);
	t_bad_frame();
	return mmt_done();
}
