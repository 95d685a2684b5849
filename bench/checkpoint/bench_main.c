/* SPDX-License-Identifier: MIT */
/*
 * ckpt_bench: capture and restore time against memcpy and a raw socket
 * transfer of the same bytes, measured in the same run.
 *   ckpt_bench [BIN_DIR]     env: SIZES="1 9 51 114 512" REPS=3
 * Columns (medians, ms): memcpy; raw TCP over lo into a fresh buffer;
 * capture alone (to /dev/null); restore alone (msg-restore from a file in
 * the page cache, exec to resume); stream = capture -> TCP -> msg-restore
 * -> resumed, end to end; src stop = how long the source is stopped.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *bindir = ".";
static int reps = 3;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double median_ms(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2] / 1e6;
}

static uint64_t bench_memcpy(size_t n)
{
	char *a = malloc(n), *b = malloc(n);
	memset(a, 1, n);
	memset(b, 2, n);
	uint64_t t0 = now_ns();
	memcpy(b, a, n);
	uint64_t t = now_ns() - t0;
	if (b[n / 2] != 1)
		t = 0;
	free(a);
	free(b);
	return t;
}

/* The congestion control msgd gives its connections by default (msgd
 * --tcp-congestion, runtime/daemon/tcpcc.c): the first of cubic, reno the
 * kernel takes, on both ends (accepted sockets do not inherit it). */
static void msgd_cc(int fd)
{
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5))
		setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4);
}

/* A connected loopback TCP pair, with msgd's congestion control. */
static void tcp_pair(int *client, int *server)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	bind(l, (struct sockaddr *)&a, sizeof(a));
	listen(l, 1);
	getsockname(l, (struct sockaddr *)&a, &len);
	*client = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*client, (struct sockaddr *)&a, sizeof(a)) != 0)
		exit(1);
	*server = accept(l, NULL, NULL);
	close(l);
	msgd_cc(*client);
	msgd_cc(*server);
}

/* Sender (this process) -> receiver (a child reading into fresh memory). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time (sender + receiver) of the last raw transfer / capture+restore;
 * g_rst_start: the restorer's CPU until it was ready for the image. */
static uint64_t g_raw_cpu, g_cap_cpu, g_rst_cpu, g_rst_start, g_cap_init;

static uint64_t bench_raw_tcp(size_t n)
{
	int c, s, p[2];
	uint64_t t_end = 0, rx_cpu = 0;
	char *buf = malloc(n);
	memset(buf, 3, n);
	tcp_pair(&c, &s);
	if (pipe(p))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		close(c);
		char *in = malloc(n);
		size_t got = 0;
		ssize_t r;
		uint64_t c0 = cpu_ns();
		while (got < n && (r = read(s, in + got, n - got)) > 0)
			got += (size_t)r;
		uint64_t t_last = now_ns();
		/* its close, as the restore's CPU has the restorer's close of
		 * the image socket (a loopback TCP close: 10-60 us here) */
		close(s);
		uint64_t t[2] = { t_last, cpu_ns() - c0 };
		if (write(p[1], t, sizeof(t)) != sizeof(t))
			_exit(1);
		_exit(0);
	}
	close(s);
	uint64_t t0 = now_ns(), c0 = cpu_ns();
	for (size_t off = 0; off < n;) {
		ssize_t r = write(c, buf + off, n - off);
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	uint64_t tx_cpu = cpu_ns() - c0, t[2];
	if (read(p[0], t, sizeof(t)) == sizeof(t))
		t_end = t[0], rx_cpu = t[1];
	else
		t_end = t0;
	g_raw_cpu = tx_cpu + rx_cpu;
	if (getenv("RAW_V")) /* the split: sender's write loop, receiver's read loop */
		fprintf(stderr, "raw_tcp CPU us: send %llu receive %llu\n", (unsigned long long)tx_cpu / 1000,
			(unsigned long long)rx_cpu / 1000);
	close(c);
	close(p[0]);
	close(p[1]);
	waitpid(pid, NULL, 0);
	free(buf);
	return t_end - t0;
}

/* Runs argv with `fd` as fd 3 (if >= 0) and `fd4` as fd 4 (if >= 0);
 * returns a pipe with its stdout. */
static pid_t spawn2(char *const argv[], int fd, int fd4, int *out)
{
	int p[2];
	if (pipe(p))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		if (fd >= 0)
			dup2(fd, 3);
		if (fd4 >= 0)
			dup2(fd4, 4);
		for (int i = fd4 >= 0 ? 5 : fd >= 0 ? 4 : 3; i < 1024; i++)
			close(i);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

static pid_t spawn(char *const argv[], int fd, int *out)
{
	return spawn2(argv, fd, -1, out);
}

static void read_line(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	while (n < cap - 1 && (r = read(fd, buf + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = 0;
	close(fd);
}

static char subj[512], rest[512];

/* Capture to fd (as fd 3); returns the subject's "CAPTURED ns". */
static uint64_t run_capture(size_t mb, int fd)
{
	char m[16], out[256];
	snprintf(m, sizeof(m), "%zu", mb);
	char *argv[] = { subj, m, "3", NULL };
	int o;
	pid_t pid = spawn(argv, fd, &o);
	read_line(o, out, sizeof(out));
	waitpid(pid, NULL, 0);
	unsigned long long ns = 0, cpu = 0, init = 0;
	if (sscanf(out, "CAPTURED %llu %llu %llu", &ns, &cpu, &init) < 2)
		return 0;
	g_cap_cpu = cpu;
	g_cap_init = init; /* ckpt_prewarm at the subject's start */
	return ns;
}

static uint64_t bench_capture_null(size_t mb)
{
	int fd = open("/dev/null", O_WRONLY);
	uint64_t t = run_capture(mb, fd);
	close(fd);
	return t;
}

static uint64_t bench_restore_file(size_t mb)
{
	char path[] = "/tmp/ckpt-bench-XXXXXX", out[256];
	int fd = mkstemp(path);
	run_capture(mb, fd);
	close(fd);
	char *argv[] = { rest, path, NULL };
	int o;
	uint64_t t0 = now_ns();
	pid_t pid = spawn(argv, -1, &o);
	read_line(o, out, sizeof(out));
	waitpid(pid, NULL, 0);
	unlink(path);
	unsigned long long tot, at;
	int ok;
	if (sscanf(out, "RESTORED %llu %llu %d", &tot, &at, &ok) != 3 || !ok)
		return 0;
	return at - t0;
}

/* End to end over TCP; *stop gets the source's capture (stop) time.  The
 * restorer is started first and the capture begins once it reports that
 * it waits for the image (--ready-fd), as the raw transfer's receiver is
 * forked and connected before its clock starts.  Its CPU until then
 * (fork, exec, the host's side of the checks) is g_rst_start, left out
 * of g_rst_cpu as the receiver's start is left out of raw_tcp's CPU. */
static uint64_t bench_stream(size_t mb, uint64_t *stop)
{
	int c, s, o, rp2[2];
	char out[256], rd[64];
	tcp_pair(&c, &s);
	if (pipe(rp2))
		exit(1);
	/* RST_V=1: msg-restore -v, its phases on stderr */
	char *argv[] = { rest, "--ready-fd", "4", "--fd", "3", getenv("RST_V") ? "-v" : NULL, NULL };
	pid_t rp = spawn2(argv, s, rp2[1], &o);
	close(s);
	close(rp2[1]);
	read_line(rp2[0], rd, sizeof(rd)); /* closes rp2[0] */
	unsigned long long ready = 0;
	if (sscanf(rd, "READY %llu", &ready) != 1)
		return 0;
	*stop = run_capture(mb, c);
	close(c);
	read_line(o, out, sizeof(out));
	waitpid(rp, NULL, 0);
	unsigned long long tot, at, rcpu;
	int ok;
	if (sscanf(out, "RESTORED %llu %llu %d %llu", &tot, &at, &ok, &rcpu) != 4 || !ok || rcpu < ready)
		return 0;
	g_rst_cpu = rcpu - ready;
	g_rst_start = ready;
	return tot;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		bindir = argv[1];
	if (getenv("REPS"))
		reps = atoi(getenv("REPS")) > 0 ? atoi(getenv("REPS")) : 1;
	const char *sizes = getenv("SIZES") ? getenv("SIZES") : "1 9 51 114 512";
	snprintf(subj, sizeof(subj), "%s/ckpt_bench_subject", bindir);
	snprintf(rest, sizeof(rest), "%s/msg-restore", bindir);
	FILE *la = fopen("/proc/loadavg", "r");
	char load[64] = "?";
	if (la && !fgets(load, sizeof(load), la))
		load[0] = 0;
	if (la)
		fclose(la);
	printf("load average at start: %s", load);
	printf("medians of %d runs (%d for sizes <= 9 MB)\n", reps, 5 * reps > 64 ? 64 : 5 * reps);
	printf("wall ms:%71s| CPU ms (sender+receiver):\n", "");
	printf("%6s %8s %8s %9s %9s %9s %9s %7s %7s | %8s %8s %8s %7s %9s %8s %10s\n", "MB", "memcpy", "raw_tcp",
	       "capture", "restore", "stream", "src_stop", "str/raw", "str/cpy", "raw_tcp", "capture", "restore",
	       "ckpt/raw", "rst_start", "cap_init", "+start/raw");
	char *list = strdup(sizes);
	for (char *tok = strtok(list, " "); tok; tok = strtok(NULL, " ")) {
		size_t mb = (size_t)atoi(tok);
		uint64_t a[5][64], stop[64], cr[64], cc[64], cs[64], cx[64], ci[64];
		/* small sizes are cheap and the noisiest: 5x the repetitions */
		int n = mb <= 9 ? 5 * reps : reps;
		n = n > 64 ? 64 : n;
		for (int i = 0; i < n; i++) {
			a[0][i] = bench_memcpy(mb << 20);
			a[1][i] = bench_raw_tcp(mb << 20);
			a[2][i] = bench_capture_null(mb);
			a[3][i] = bench_restore_file(mb);
			a[4][i] = bench_stream(mb, &stop[i]);
			cr[i] = g_raw_cpu, cc[i] = g_cap_cpu, cs[i] = g_rst_cpu;
			cx[i] = g_rst_start;
			ci[i] = g_cap_init;
		}
		double m[5];
		for (int k = 0; k < 5; k++)
			m[k] = median_ms(a[k], n);
		double st = median_ms(stop, n), mr = median_ms(cr, n), mc = median_ms(cc, n), ms = median_ms(cs, n);
		double mx = median_ms(cx, n), mi = median_ms(ci, n);
		printf("%6zu %8.2f %8.2f %9.2f %9.2f %9.2f %9.2f %7.2f %7.2f | %8.2f %8.2f %8.2f %7.2f %9.2f %8.2f %10.2f\n",
		       mb, m[0], m[1], m[2], m[3], m[4], st, m[4] / m[1], m[4] / m[0], mr, mc, ms, (mc + ms) / mr, mx, mi,
		       (mc + ms + mx + mi) / mr);
		fflush(stdout);
		if (m[2] == 0 || m[3] == 0 || m[4] == 0)
			return 1; /* a run failed */
	}
	return 0;
}
