/* --keep-fenced: a fenced replica leaves its core dump behind.
 *
 * A fence must stop the replica at once, so the daemon still kills it with
 * one signal; with --keep-fenced that signal is one whose default action
 * dumps core (and which the process neither catches, blocks nor ignores),
 * after RLIMIT_CORE is lifted. When the process is reaped its core is moved
 * out of the job directory, which msgrun deletes at the end, to the keep
 * directory as <group>.<rep>.<pid>.core, and a "kept" event names it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

/* Core-dumping signals, the likeliest to be left at their default first. */
static const int dump_signals[] = { SIGABRT, SIGQUIT, SIGSYS, SIGTRAP, SIGXCPU, SIGXFSZ,
				    SIGILL, SIGFPE, SIGBUS, SIGSEGV };

static uint64_t status_mask(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t fl = strlen(field);
	uint64_t mask = ~0ull; /* unreadable: take every signal as taken */
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return mask;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, fl) && line[fl] == ':') {
			mask = strtoull(line + fl + 1, NULL, 16);
			break;
		}
	fclose(f);
	return mask;
}

/* A signal that will dump the process's core, or 0 if it takes them all. */
static int dump_signal(pid_t pid)
{
	uint64_t taken = status_mask(pid, "SigCgt") | status_mask(pid, "SigBlk") |
			 status_mask(pid, "SigIgn");

	for (size_t i = 0; i < sizeof(dump_signals) / sizeof(dump_signals[0]); i++)
		if (!(taken & (1ull << (dump_signals[i] - 1))))
			return dump_signals[i];
	return 0;
}

static void kept_event(struct lp *lp, const char *path, const char *why)
{
	char ev[PATH_MAX + 256];

	if (path)
		snprintf(ev, sizeof(ev), "{\"event\":\"kept\",\"group\":%u,\"rep\":%u,\"pid\":%d,"
			 "\"core\":\"%s\"}", lp->g, lp->rep, (int)lp->pid, path);
	else
		snprintf(ev, sizeof(ev), "{\"event\":\"kept\",\"group\":%u,\"rep\":%u,\"pid\":%d,"
			 "\"core\":null,\"why\":\"%s\"}", lp->g, lp->rep, (int)lp->pid, why);
	job_event(lp->job, ev);
}

void keep_fence(struct lp *lp)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char link[64];
	ssize_t n;
	int sig;

	lp->fenced = true;
	/* the core's kill also ends a moved replica's source: nothing to keep */
	if (!lp->job->spec.keepdir || !lp->job->spec.keepdir[0] || lp->migrating) {
		kill(lp->pid, SIGKILL);
		return;
	}
	/* the core goes to the process's working directory at the time */
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)lp->pid);
	n = readlink(link, lp->keep_cwd, sizeof(lp->keep_cwd) - 1);
	lp->keep_cwd[n > 0 ? n : 0] = 0;
	sig = dump_signal(lp->pid);
	if (!sig || prlimit(lp->pid, RLIMIT_CORE, &unlimited, NULL)) {
		kill(lp->pid, SIGKILL);
		kept_event(lp, NULL, sig ? "cannot lift its core size limit"
				    : "it catches, blocks or ignores every core-dumping signal");
		return;
	}
	lp->keep_pending = true;
	kill(lp->pid, sig);
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	struct stat st;
	off_t off = 0;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0 || fstat(in, &st)) {
		close(in);
		if (out >= 0)
			close(out);
		return -1;
	}
	while (off < st.st_size)
		if (sendfile(out, in, &off, (size_t)(st.st_size - off)) <= 0)
			break;
	close(in);
	close(out);
	if (off < st.st_size)
		return -1;
	return unlink(from);
}

/* core_pattern "core" or "core.%p"-style names, relative to the cwd. */
static int find_core(const struct lp *lp, char *out, size_t len)
{
	if ((size_t)snprintf(out, len, "%s/core.%d", lp->keep_cwd, (int)lp->pid) >= len)
		return -1;
	if (!access(out, F_OK))
		return 0;
	if ((size_t)snprintf(out, len, "%s/core", lp->keep_cwd) >= len)
		return -1;
	return access(out, F_OK);
}

void keep_collect(struct lp *lp)
{
	const char *dir = lp->job->spec.keepdir;
	char from[PATH_MAX], to[PATH_MAX];

	if (!lp->keep_pending)
		return;
	lp->keep_pending = false;
	if (!WIFSIGNALED(lp->status) || !WCOREDUMP(lp->status)) {
		kept_event(lp, NULL, "the kernel wrote no core (see core_pattern and the "
				     "process's dumpable flag)");
		return;
	}
	if (find_core(lp, from, sizeof(from))) {
		kept_event(lp, NULL, "no core file in its working directory "
				     "(core_pattern is not 'core' or 'core.%p')");
		return;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		log_warn("--keep-fenced: cannot create %s: %s", dir, strerror(errno));
		kept_event(lp, NULL, "cannot create the keep directory");
		return;
	}
	/* the pid tells incarnations apart: a replica may be fenced again */
	if ((size_t)snprintf(to, sizeof(to), "%s/%u.%u.%d.core", dir, lp->g, lp->rep,
			     (int)lp->pid) >= sizeof(to)) {
		kept_event(lp, NULL, "keep directory path too long");
		return;
	}
	if (rename(from, to) && (errno != EXDEV || copy_file(from, to))) {
		log_warn("--keep-fenced: cannot move %s to %s: %s", from, to, strerror(errno));
		kept_event(lp, NULL, "cannot move the core to the keep directory");
		return;
	}
	kept_event(lp, to, NULL);
}
