/* SPDX-License-Identifier: MIT */
/* Process-level leftovers of a restore: the restorer's range is gone, rseq
 * is registered at glibc's area again, cwd/umask/personality, /proc/self/exe
 * names the program, cmdline comes from the image's stack. */
#include <errno.h>
#include <stddef.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "subject.h"

extern const ptrdiff_t __rseq_offset;
extern const unsigned int __rseq_size;

static int restorer_gone(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int gone = 1;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s = strtoul(line, NULL, 16);
		if (s >= 0x10000000000ul && s < 0x10040000000ul)
			gone = 0;
	}
	if (f)
		fclose(f);
	return gone;
}

static int rseq_registered(void)
{
	if (!__rseq_size)
		return -1;
	char *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	long r = syscall(SYS_rseq, tp + __rseq_offset, 32, 0, 0x53053053);
	return r < 0 && errno == EBUSY; /* same registration already active */
}

static int same_exe(const char *argv0)
{
	char a[4096], b[4096];
	ssize_t n = readlink("/proc/self/exe", a, sizeof(a) - 1);
	if (n < 0 || !realpath(argv0, b))
		return 0;
	a[n] = 0;
	return !strcmp(a, b);
}

static void cmdline(char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n = f ? fread(out, 1, cap - 1, f) : 0;
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			out[i] = ' ';
	out[n] = 0;
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	char cwd[4096], cl[4096];
	umask(027);
	personality(ADDR_NO_RANDOMIZE);
	if (chdir("/usr/lib") != 0)
		return 1;
	subj_checkpoint(argc, argv);
	mode_t um = umask(0);
	cmdline(cl, sizeof(cl));
	printf("proc restorer_gone=%d rseq=%d cwd=%s umask=%03o pers=%x\n", restorer_gone(), rseq_registered(),
	       getcwd(cwd, sizeof(cwd)), (unsigned)um, (unsigned)personality(0xffffffff));
	printf("proc exe=%d cmdline=%s\n", same_exe(argv[0]) || argv[0][0] != '/', strstr(cl, "t_proc") ? "ok" : cl);
	return 0;
}
