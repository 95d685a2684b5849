#define _XOPEN_SOURCE 700
#include "jobdir.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int jobdir_create(const char *want, uint64_t job, char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if (want)
		snprintf(out, len, "%s", want);
	else
		snprintf(out, len, "%s/msg-%016llx", tmp && *tmp ? tmp : "/tmp",
			 (unsigned long long)job);
	if (mkdir(out, 0700) && errno != EEXIST)
		return -1;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

void jobdir_remove(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
