/* Launching the local replicas per the determinism contract (DESIGN §5):
 * the same environment in every replica, ASLR off, the replica's identity
 * out of band (it comes over the socket on fd 3, not in anything the
 * program reads), its own working directory; and reaping them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

static struct sig_reader {
	struct op op;
	int fd;
	struct signalfd_siginfo si;
} sigs;

static void pipe_submit(struct pipe_reader *p);
static void spare_drop(struct job *j, bool alive);
static void spare_reaped(struct job *j, pid_t pid);

static void pipe_done(struct op *op, int res)
{
	struct pipe_reader *p = (struct pipe_reader *)op;
	struct lp *lp = p->lp;
	struct job *j = lp->job;

	if (res > 0) {
		struct frame f = { .h.type = F_OUTPUT };

		f.u.output = (struct f_output){ .group = lp->g, .rep = (uint16_t)lp->rep,
						.stream = p->stream, .off = p->off,
						.len = (uint32_t)res, .bytes = p->buf };
		if (j->control)
			conn_send(j->control, &f, NULL, 0, 0);
		p->off += (uint64_t)res;
		pipe_submit(p);
		return;
	}
	if (res < 0 && res != -EPIPE && res != -EBADF)
		log_warn("output of %u.%u: %s", lp->g, lp->rep, strerror(-res));
	close(p->fd);
	p->fd = -1;
	lp->open_pipes--;
	job_proc_done(lp);
}

static void pipe_submit(struct pipe_reader *p)
{
	struct io_uring_sqe *sqe = loop_sqe(g_loop, &p->op);

	if (!sqe) {
		pipe_done(&p->op, -EBUSY);
		return;
	}
	io_uring_prep_read(sqe, p->fd, p->buf, sizeof(p->buf), (uint64_t)-1);
}

static void reap(void)
{
	struct job *j;
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (j = g_msgd.jobs; j; j = j->next) {
			spare_reaped(j, pid);
			for (uint32_t g = 0; g < j->cfg.n; g++) {
				for (struct lp *lp = j->lps[g]; lp; lp = lp->prev)
					if (lp->pid == pid && !lp->reaped) {
						lp->reaped = true;
						lp->status = status;
						keep_collect(lp);
						job_proc_done(lp);
					}
			}
		}
	}
}

static void sig_submit(void);

static void sig_done(struct op *op, int res)
{
	(void)op;
	if (res == (int)sizeof(sigs.si)) {
		if (sigs.si.ssi_signo == SIGCHLD) {
			reap();
		} else if (sigs.si.ssi_signo == SIGUSR1) {
			/* diagnostics: what every local replica waits for, as events */
			for (struct job *j = g_msgd.jobs; j; j = j->next) {
				if (j->ending)
					continue;
				job_clock(j);
				core_dump_waits(j->core);
				job_run_actions(j);
			}
		} else {
			log_info("signal %u: ending every job", sigs.si.ssi_signo);
			while (g_msgd.jobs && !g_msgd.jobs->ending)
				job_end(g_msgd.jobs, "daemon terminated");
			g_loop->stop = true;
			return;
		}
	}
	sig_submit();
}

static void sig_submit(void)
{
	struct io_uring_sqe *sqe = loop_sqe(g_loop, &sigs.op);

	if (sqe)
		io_uring_prep_read(sqe, sigs.fd, &sigs.si, sizeof(sigs.si), (uint64_t)-1);
}

int spawn_signals_start(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -1;
	sigs.fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sigs.fd < 0)
		return -1;
	sigs.op.cb = sig_done;
	sig_submit();
	return 0;
}

/* In the child: put fd `from` at `to` (dup2 clears close-on-exec). */
static void place_fd(int from, int to)
{
	if (from == to) {
		fcntl(to, F_SETFD, 0);
		return;
	}
	if (dup2(from, to) < 0)
		_exit(126);
}

/* What a child becomes: the program, msg-restore reading an image, or a
 * spare msg-restore that waits for one (wait_fd). */
struct exec_spec {
	int img_fd;           /* -1: exec the job's program */
	int wait_fd;          /* >= 0: a spare restorer; its image comes on this socket */
};

static void restorer_path(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 16);
	char *slash;

	if (n <= 0)
		n = 0;
	out[n] = 0;
	slash = strrchr(out, '/');
	snprintf(slash ? slash + 1 : out, 16, "msg-restore");
}

#define IMG_FD 1000 /* out of the way of the image's own descriptors */
#define WAIT_FD 1001 /* a spare's socket from msgd */

static void exec_restorer(bool spare)
{
	const char *argv[16];
	char path[4096];
	int n = 0;

	restorer_path(path, sizeof(path));
	argv[n++] = "msg-restore";
	if (getenv("MSG_MIG_TRACE") && *getenv("MSG_MIG_TRACE") != '0') {
		/* its phases into a file: on stderr they would share the
		 * offsets of the source's output (and be dropped as seen) */
		int lf = open("/tmp/msg-restore-trace.log", O_WRONLY | O_APPEND | O_CREAT, 0644);

		if (lf >= 0 && dup2(lf, 999) == 999) {
			argv[n++] = "-v";
			argv[n++] = "--log-fd";
			argv[n++] = "999";
		}
	}
	if (spare) {
		argv[n++] = "--wait-fd";
		argv[n++] = "1001";
	}
	argv[n++] = "--fd";
	argv[n++] = "1000";
	argv[n++] = "--keep-fd";
	argv[n++] = "3";
	argv[n] = NULL;
	execv(path, (char **)argv);
	dprintf(2, "msgd: cannot execute %s: %s\n", path, strerror(errno));
	_exit(127);
}

static void child_exec(struct job *j, const char *dir, int sock, int in, int out, int err,
		       const struct exec_spec *x)
{
	sigset_t none;
	int hi = 100, img = -1, wait = -1;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the daemon */
	setpriority(PRIO_PROCESS, 0, 0);  /* the daemon's raised priority is its own */
	setpgid(0, 0);
	/* move everything high first so the dup2s below cannot clobber */
	sock = fcntl(sock, F_DUPFD_CLOEXEC, hi);
	in = fcntl(in, F_DUPFD_CLOEXEC, hi);
	out = fcntl(out, F_DUPFD_CLOEXEC, hi);
	err = fcntl(err, F_DUPFD_CLOEXEC, hi);
	if (x->img_fd >= 0)
		img = fcntl(x->img_fd, F_DUPFD_CLOEXEC, WAIT_FD + 1);
	if (x->wait_fd >= 0)
		wait = fcntl(x->wait_fd, F_DUPFD_CLOEXEC, WAIT_FD + 1);
	place_fd(in, 0);
	place_fd(out, 1);
	place_fd(err, 2);
	place_fd(sock, MSG_APP_FD);
	if (img >= 0)
		place_fd(img, IMG_FD);
	if (wait >= 0)
		place_fd(wait, WAIT_FD);
	/* nothing else of ours or of whoever started us: every replica gets the
	 * same descriptor table, and the image none it cannot carry */
	close_range(MSG_APP_FD + 1, img >= 0 || wait >= 0 ? IMG_FD - 1 : ~0u, 0);
	if (img >= 0)
		close_range(IMG_FD + 1, ~0u, 0);
	if (wait >= 0)
		close_range(WAIT_FD + 1, ~0u, 0);
	if (chdir(dir)) {
		dprintf(2, "msgd: cannot enter %s: %s\n", dir, strerror(errno));
		_exit(127);
	}
	personality(ADDR_NO_RANDOMIZE);
	if (img >= 0 && (j->cfg.flags & JOB_F_TEST_FAIL_RESTORES)) {
		/* test: the whole image arrives (the source finishes its capture),
		 * then the restore fails */
		char sink[65536];

		while (read(IMG_FD, sink, sizeof(sink)) > 0)
			;
		_exit(1);
	}
	if (img >= 0 && getenv("MSG_TEST_RESTORE_DELAY_MS")) {
		/* test: a restorer slow to start reading, as on a loaded host */
		struct timespec d = { 0 };
		long ms = strtol(getenv("MSG_TEST_RESTORE_DELAY_MS"), NULL, 10);

		d.tv_sec = ms / 1000;
		d.tv_nsec = (ms % 1000) * 1000000L;
		nanosleep(&d, NULL);
	}
	if (img >= 0 || wait >= 0)
		exec_restorer(wait >= 0);
	execve(j->spec.argv[0], j->spec.argv, j->spec.envp);
	dprintf(2, "msgd: cannot execute %s: %s\n", j->spec.argv[0], strerror(errno));
	_exit(127);
}

static int make_dir(struct job *j, uint32_t g, uint32_t rep, char *dir, size_t len)
{
	snprintf(dir, len, "%s/%u.%u", j->spec.jobdir, g, rep);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		log_err("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Wide socket buffers both ways on a process's connection: a send of a
 * few hundred KiB goes into the socket in one writev, and a delivery in one
 * sendmsg, instead of the writer sleeping until the reader drained the
 * default 208 KiB; every such sleep is one more wake-up, which costs
 * milliseconds on an oversubscribed, loaded host (DESIGN §2). Memory is only
 * charged while bytes are queued. Root may exceed net.core.wmem_max. */
#define LOCAL_SOCKBUF (2 << 20) /* the kernel doubles it: 4 MiB */

static void widen_socket(int fd)
{
	int sz = LOCAL_SOCKBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
}

/* A started child: our ends of its link to us and of its stdio pipes. */
struct kid {
	pid_t pid;
	int sock, pin_w, pout_r, perr_r;
};

static void close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
}

static int fork_kid(struct job *j, const char *dir, const struct exec_spec *x, struct kid *k)
{
	int sv[2] = { -1, -1 }, pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 };
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		goto fail;
	widen_socket(sv[0]);
	widen_socket(sv[1]);
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC))
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0)
		child_exec(j, dir, sv[1], pin[0], pout[1], perr[1], x);
	close(sv[1]);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	*k = (struct kid){ .pid = pid, .sock = sv[0], .pin_w = pin[1], .pout_r = pout[0],
			   .perr_r = perr[0] };
	return 0;
fail:
	close_pair(sv);
	close_pair(pin);
	close_pair(pout);
	close_pair(perr);
	return -1;
}

/* The child becomes replica rep of group g here. */
static struct lp *adopt(struct job *j, uint32_t g, uint32_t rep, const struct kid *k)
{
	struct lp *lp = calloc(1, sizeof(*lp));
	char name[48];

	snprintf(name, sizeof(name), "process %u.%u", g, rep);
	if (lp)
		lp->conn = conn_new(k->sock, CONN_LOCAL, &local_ops, name);
	if (!lp || !lp->conn) {
		log_err("cannot take on process %u.%u: out of memory", g, rep);
		kill(k->pid, SIGKILL);
		free(lp);
		return NULL;
	}
	lp->job = j;
	lp->g = g;
	lp->rep = rep;
	lp->pid = k->pid;
	lp->stdin_fd = g == 0 ? k->pin_w : (close(k->pin_w), -1);
	if (lp->stdin_fd >= 0)
		fcntl(lp->stdin_fd, F_SETFL, O_NONBLOCK);
	lp->conn->owner = lp;
	lp->conn->authed = true;
	lp->out = (struct pipe_reader){ .op.cb = pipe_done, .lp = lp, .fd = k->pout_r, .stream = OUT_STDOUT };
	lp->err = (struct pipe_reader){ .op.cb = pipe_done, .lp = lp, .fd = k->perr_r, .stream = OUT_STDERR };
	lp->open_pipes = 2;
	j->lps[g] = lp;
	log_debug("started %u.%u as pid %d", g, rep, (int)k->pid);
	return lp;
}

static struct lp *spawn_common(struct job *j, uint32_t g, uint32_t rep, const struct exec_spec *x)
{
	char dir[4096];
	struct kid k;

	if (make_dir(j, g, rep, dir, sizeof(dir)) || fork_kid(j, dir, x, &k)) {
		log_err("cannot start process %u.%u: %s", g, rep, strerror(errno));
		return NULL;
	}
	return adopt(j, g, rep, &k);
}

/* --- the spare restorer ---------------------------------------------------
 * A restore on this host waited for msgd's fork, the exec of msg-restore
 * and its start (r_prestart) before the first byte of the image was read:
 * 1-4 ms of every move's duration, more on a loaded host. Each job keeps
 * one msg-restore started ahead (--wait-fd), which a restore takes: the
 * image's socket goes to it. A new one is started at a tick with no restore
 * under way here (never during one: its start would compete for the CPU).
 * Off unless MSG_SPARE_RESTORER=1 (msgd's environment): a 9 MB move was no
 * faster on a quiet host, and 51 MB ones were slower with it (spares
 * started at the job's launch were preempted hundreds of times in their
 * restore, not understood: bench/migration/README.md, session 9).
 * MSG_NO_SPARE_RESTORER=1: none, whatever the other says. */
struct spare {
	struct kid k;
	int ctl;              /* our end of its --wait-fd socket */
};

static bool env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v && *v != '0';
}

static bool spare_wanted(const struct job *j)
{
	/* (the restore test hooks live in the fork path) */
	return !j->killed && !j->ending && env_set("MSG_SPARE_RESTORER") &&
	       !env_set("MSG_NO_SPARE_RESTORER") &&
	       !(j->cfg.flags & JOB_F_TEST_FAIL_RESTORES) && !getenv("MSG_TEST_RESTORE_DELAY_MS");
}

static void spare_drop(struct job *j, bool alive)
{
	struct spare *sp = j->spare;

	if (!sp)
		return;
	j->spare = NULL;
	if (alive)
		kill(sp->k.pid, SIGKILL);
	close(sp->ctl);
	close(sp->k.sock);
	close(sp->k.pin_w);
	close(sp->k.pout_r);
	close(sp->k.perr_r);
	free(sp);
}

static void spare_reaped(struct job *j, pid_t pid)
{
	if (j->spare && j->spare->k.pid == pid)
		spare_drop(j, false); /* never kill a pid that may be reused */
}

void spawn_spare_tick(struct job *j)
{
	struct exec_spec x = { .img_fd = -1 };
	struct spare *sp;
	int w[2];

	if (j->spare || !j->launched || !spare_wanted(j))
		return;
	for (uint32_t g = 0; g < j->cfg.n; g++)
		if (j->lps[g] && j->lps[g]->restored && !j->lps[g]->connected && !j->lps[g]->reaped)
			return; /* a restore under way */
	sp = calloc(1, sizeof(*sp));
	if (!sp || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w)) {
		free(sp);
		return;
	}
	x.wait_fd = w[1];
	if (fork_kid(j, j->spec.jobdir, &x, &sp->k)) {
		log_warn("cannot start a spare msg-restore: %s", strerror(errno));
		close_pair(w);
		free(sp);
		return;
	}
	close(w[1]);
	sp->ctl = w[0];
	j->spare = sp;
}

/* The spare becomes replica rep of g, restoring the image on img_fd;
 * NULL: there was none (or it is gone), the caller forks one. */
static struct lp *spare_take(struct job *j, uint32_t g, uint32_t rep, int img_fd)
{
	struct spare *sp = j->spare;
	char dir[4096], byte = 0;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = { &byte, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm;
	struct lp *lp;

	if (!sp || !spare_wanted(j) || make_dir(j, g, rep, dir, sizeof(dir)))
		return NULL;
	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &img_fd, sizeof(int));
	if (sendmsg(sp->ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
		log_warn("spare msg-restore (pid %d) did not take the image: %s", (int)sp->k.pid,
			 strerror(errno));
		spare_drop(j, true);
		return NULL;
	}
	close(sp->ctl);
	j->spare = NULL;
	lp = adopt(j, g, rep, &sp->k);
	if (lp)
		lp->spare = true;
	free(sp);
	return lp;
}

static void start_io(struct lp *lp)
{
	conn_start(lp->conn);
	pipe_submit(&lp->out);
	pipe_submit(&lp->err);
}

int spawn_proc(struct job *j, uint32_t g, uint32_t rep)
{
	struct exec_spec x = { .img_fd = -1, .wait_fd = -1 };
	struct lp *lp = spawn_common(j, g, rep, &x);

	if (!lp)
		return -1;
	core_local_start(j->core, g);
	start_io(lp);
	return 0;
}

/* A replica restored from an image arriving on img_fd: its output goes on
 * from the offsets its source had reached, so each byte is shown once. */
int spawn_restore(struct job *j, const struct f_image_hello *h, int img_fd)
{
	struct exec_spec x = { .img_fd = img_fd, .wait_fd = -1 };
	struct lp *lp;

	struct lp *old = j->lps[h->group];

	if (j->killed || j->ending)
		return -1; /* the job is being torn down */
	if (old && !old->reaped) {
		/* a replica the coordinator already counts dead, whose news has
		 * not reached us: the new incarnation supersedes it (dead is final) */
		old->superseded = true;
		old->fenced = true;
		kill(old->pid, SIGKILL);
	}
	lp = spare_take(j, h->group, h->rep, img_fd);
	if (!lp)
		lp = spawn_common(j, h->group, h->rep, &x);
	if (lp)
		lp->prev = old && !old->reported ? old : NULL;

	if (!lp)
		return -1;
	lp->restored = true;
	lp->out.off = h->out_off;
	lp->err.off = h->err_off;
	start_io(lp);
	return 0;
}

void spawn_kill_all(struct job *j, int signo)
{
	spare_drop(j, true);
	for (uint32_t g = 0; g < j->cfg.n; g++) {
		struct lp *lp = j->lps[g];

		if (lp && !lp->reaped && lp->pid > 0)
			kill(lp->pid, signo);
	}
}
