/* SPDX-License-Identifier: MIT */
/* Files: one being read (offset carries over), one opened O_APPEND and
 * written before and after; a cloexec one; a directory fd. */
#include <sys/stat.h>

#include "subject.h"

int main(int argc, char **argv)
{
	FILE *in = fopen("input.dat", "w");
	for (int i = 0; i < 20000; i++)
		fprintf(in, "line %d\n", i);
	fclose(in);
	unlink("append.log");
	int rfd = open("input.dat", O_RDONLY);
	int afd = open("append.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	char buf[5000];
	ssize_t n = read(rfd, buf, sizeof(buf));
	dprintf(afd, "before %zd\n", n);
	subj_checkpoint(argc, argv);
	uint64_t h = 0;
	while ((n = read(rfd, buf, sizeof(buf))) > 0)
		h = subj_hash(h, buf, (size_t)n);
	dprintf(afd, "after %016llx\n", (unsigned long long)h);
	struct stat st;
	fstatat(dfd, "append.log", &st, 0);
	int cloexec = fcntl(afd, F_GETFD) & FD_CLOEXEC;
	int app = (fcntl(afd, F_GETFL) & O_APPEND) != 0;
	close(afd);
	FILE *f = fopen("append.log", "r");
	char line[200];
	printf("files %016llx size=%lld cloexec=%d append=%d\n", (unsigned long long)h, (long long)st.st_size,
	       cloexec != 0, app);
	while (fgets(line, sizeof(line), f))
		fputs(line, stdout);
	return 0;
}
