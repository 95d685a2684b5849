/* mmt-basic: the device exists, answers VERSION, streams nothing unsaved. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"

/* msgmig-save on a static busybox sleep: exit 0 and an image on disk. */
static void t_tool(void)
{
	char *argv[] = { "/bin/sleep", "100", NULL };
	char *save[] = { "/bin/msgmig-save", "-k", NULL, "/tmp/sleep.img", NULL };
	char pid[16], *img = NULL;
	struct mmt_child c, t;
	size_t len = 0;
	int st;

	CHECK(mmt_spawn(&c, argv) == 0, "spawn sleep");
	usleep(200000);
	snprintf(pid, sizeof(pid), "%d", c.pid);
	save[2] = pid;
	CHECK(mmt_spawn(&t, save) == 0, "spawn msgmig-save");
	st = mmt_wait(t.pid, 20000);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "msgmig-save status %#x", st);
	CHECK(WIFSIGNALED(mmt_wait(c.pid, 20000)), "-k did not kill the target");
	CHECK(mmt_read_file("/tmp/sleep.img", &img, &len) == 0 && len > 64 &&
	      !memcmp(img, "MSGCKPT", 8), "no image written (%zu bytes)", len);
	free(img);
}

int main(void)
{
	struct msgmig_version v;
	char b[16];
	int dev;

	mmt_prog = "mmt-basic";
	dev = mmt_dev();
	memset(&v, 0xff, sizeof(v));
	CHECK(ioctl(dev, MSGMIG_IOC_VERSION, &v) == 0, "VERSION: %s", strerror(errno));
	CHECK(v.uapi == MSGMIG_UAPI_VERSION, "uapi %u", v.uapi);
	CHECK(v.image_version == 1, "image version %u", v.image_version);
	CHECK(v.features & MSGMIG_FEAT_SAVE, "features %llx", (unsigned long long)v.features);
	CHECK(read(dev, b, sizeof(b)) == 0, "read before SAVE must give EOF");
	close(dev);
	t_tool();
	return mmt_done();
}
