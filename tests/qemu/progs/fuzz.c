/*
 * mmt-fuzz: mutated images must never hurt the kernel. Each round damages
 * a good image where the CRCs do not help - a metadata payload or a
 * section header, with its CRC recomputed - and asks IMAGE_INFO; some of
 * the images it accepts are then RESTOREd in a throw-away child (which may
 * crash in user space: that is fine). Any Oops/WARNING fails the harness.
 * Deterministic (fixed seed), so a failure can be replayed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"
#include "image.h"

#define ROUNDS 150
#define RESTORES 10
#define IMG "/tmp/fz-good"
#define BAD "/tmp/fz-bad"

static unsigned long long rng = 0x9e3779b97f4a7c15ULL;

static unsigned int rnd(unsigned int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)(rng % n);
}

/* Offsets of every section header, for picking a victim. */
static int sections(const char *img, size_t len, size_t *offs, int max)
{
	size_t off = sizeof(struct ckpt_file_hdr);
	int n = 0;

	while (n < max && off + sizeof(struct ckpt_sect_hdr) <= len) {
		struct ckpt_sect_hdr h;

		memcpy(&h, img + off, sizeof(h));
		offs[n++] = off;
		off += sizeof(h) + h.stored_len + 4;
	}
	return n;
}

static void mutate(char *img, size_t len, const size_t *offs, int n)
{
	size_t off = offs[rnd(n > 8 ? 8 : n)];	/* mostly metadata */
	struct ckpt_sect_hdr h;
	unsigned int crc;

	memcpy(&h, img + off, sizeof(h));
	if (rnd(4) == 0) {	/* a header field, CRC fixed up */
		unsigned char *p = (unsigned char *)&h + rnd(36);

		*p ^= 1u << rnd(8);
		if (rnd(2))
			*p = rnd(2) ? 0xff : 0;
		h.hdr_crc = mmt_crc32c(&h, 36);
		memcpy(img + off, &h, sizeof(h));
		return;
	}
	if (!h.stored_len || off + sizeof(h) + h.stored_len + 4 > len)
		return;
	for (int k = 1 + rnd(4); k; k--) {
		unsigned char *p = (unsigned char *)img + off + sizeof(h) + rnd(h.stored_len);

		*p = rnd(3) ? *p ^ (1u << rnd(8)) : (unsigned char)rnd(256);
	}
	crc = mmt_crc32c(img + off + sizeof(h), h.stored_len);
	memcpy(img + off + sizeof(h) + h.stored_len, &crc, 4);
}

static int image_info(int dev)
{
	static struct msgmig_image_info i;
	int fd = open(BAD, O_RDONLY), ret;

	memset(&i, 0, sizeof(i));
	i.size = sizeof(i);
	i.image_fd = fd;
	ret = ioctl(dev, MSGMIG_IOC_IMAGE_INFO, &i);
	close(fd);
	return ret;
}

static void restore_child(void)
{
	char *argv[] = { "/bin/msgmig-restore", BAD, NULL };
	struct mmt_child c;

	if (mmt_spawn(&c, argv))
		return;
	close(c.to);
	mmt_wait(c.pid, 1000);	/* a good restore sleeps on: killed */
	close(c.from);
}

/* A small image (static busybox sleep) keeps each round cheap under TCG. */
static int make_image(void)
{
	char *argv[] = { "/bin/sleep", "1000", NULL };
	struct mmt_child c;
	struct msgmig_save a;
	int err;

	if (mmt_spawn(&c, argv))
		return -1;
	usleep(200000);
	err = mmt_save(c.pid, MSGMIG_SAVE_KILL, IMG, &a);
	mmt_wait(c.pid, 20000);
	close(c.to);
	close(c.from);
	return err;
}

int main(void)
{
	size_t len, offs[4096];
	int dev, n, accepted = 0, restored = 0;
	char *good, *img;

	mmt_prog = "mmt-fuzz";
	if (make_image() ||
	    mmt_read_file(IMG, &good, &len)) {
		CHECK(0, "cannot make an image");
		return mmt_done();
	}
	n = sections(good, len, offs, 4096);
	img = malloc(len);
	dev = mmt_dev();
	for (int r = 0; r < ROUNDS; r++) {
		memcpy(img, good, len);
		mutate(img, len, offs, n);
		mmt_write_file(BAD, img, len);
		if (image_info(dev) == 0) {
			accepted++;
			if (restored < RESTORES) {
				restored++;
				restore_child();
			}
		}
	}
	mmt_note("%d mutated images: %d accepted by IMAGE_INFO, %d of those restored in a child",
		 ROUNDS, accepted, restored);
	free(img);
	free(good);
	close(dev);
	return mmt_done();
}
