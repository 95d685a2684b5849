/* mmt-basic: the device exists, answers VERSION, streams nothing unsaved. */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "mmt.h"

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
	return mmt_done();
}
