#define _XOPEN_SOURCE 700
#include "jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

/* 0 if dir is an empty directory; -1 with errno (ENOTEMPTY) otherwise. */
static int dir_is_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			ret = -1;
			break;
		}
	closedir(d);
	if (ret)
		errno = ENOTEMPTY;
	return ret;
}

int jobdir_create(const char *want, uint64_t job, char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if (want)
		snprintf(out, len, "%s", want);
	else
		snprintf(out, len, "%s/msg-%016llx", tmp && *tmp ? tmp : "/tmp",
			 (unsigned long long)job);
	if (mkdir(out, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	/* jobdir_remove deletes the whole tree: an existing directory is only
	 * taken if it is empty (jobdir.h), never someone's files */
	return dir_is_empty(out);
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

/* --keep-fenced DIR as an absolute path (the daemons do not share our cwd);
 * on this machine its parent must exist now, not when a fence comes. */
int keepdir_resolve(const char *want, bool local, char *out, size_t len)
{
	char cwd[PATH_MAX], parent[PATH_MAX], *slash;

	if (want[0] == '/')
		snprintf(out, len, "%s", want);
	else if (!getcwd(cwd, sizeof(cwd)) || snprintf(out, len, "%s/%s", cwd, want) >= (int)len)
		return die("--keep-fenced %s: cannot make the path absolute", want);
	snprintf(parent, sizeof(parent), "%s", out);
	slash = strrchr(parent, '/');
	if (slash)
		*(slash == parent ? slash + 1 : slash) = 0;
	if (local && access(parent, W_OK | X_OK))
		return die("--keep-fenced %s: cannot create it in %s: %s", want, parent,
			   strerror(errno));
	return 0;
}
