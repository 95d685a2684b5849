/* The adaptive wait decision shared by both waits of libmsg: the futex of
 * the same-host rings (fast.c) and the socket to msgd (io.c). A waiter
 * spins up to MSG_SPIN_US (50 µs) only while the host's runnable tasks do
 * not outnumber its cores: on these virtual machines a wake-up that crosses
 * CPUs costs about 35 µs (docs/datapath.md), a spin while another core is
 * idle costs nothing, and an oversubscribed job must never spin. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/lib.h"

/* How often nr_running is read: every 20 ms, and again after 1 ms when a
 * sample disagrees with the current state. A single sample is a snapshot: a
 * kernel worker, msgd or another task that happens to run at that instant
 * makes it read cores + 1 for a moment. One such sample used to stop the
 * spin for 20 ms, and a ping-pong whose messages take under a microsecond
 * each paid a futex wake-up (25-35 us, docs/datapath.md) on every message
 * for those 20 ms, up to doubling a run's mean latency (§9). So the state
 * (crowded or not) changes only when two samples 1 ms apart both say so:
 * a persistently oversubscribed host still never spins (DESIGN: bounded
 * spin only while runnable tasks <= cores), and a momentary lull on a
 * crowded host does not turn the spin on for 20 ms either.  A crowded host
 * is looked at again sooner, after 1 ms, then 2, 4, ... up to 20 while it
 * stays crowded: two samples that caught msgd and a kernel worker at once
 * kept a cross-host ping-pong off its spin for 21 ms, a sixth of a run:
 * most of its gap to Open MPI (medians 4.28 µs before, 3.74 after, 10 runs
 * interleaved; bench/pingpong/README.md).  A host that stays crowded
 * settles back at one sample per 20 ms. */
#define LOAD_REFRESH_NS 20000000ull
#define LOAD_RECHECK_NS 1000000ull

/* Runtime-only state: not part of the protocol state, harmless in an image. */
static struct {
	bool configured;
	uint64_t spin_ns;      /* configured bound */
	long ncpu;
	uint64_t load_at;      /* when nr_running was read */
	bool crowded;          /* more runnable tasks than cores (two samples agreed) */
	bool suspect;          /* the last sample said the opposite, once */
	uint64_t crowded_ns;   /* while crowded: the next look, after this long */
	bool always;           /* MSG_TEST_SPIN_ALWAYS */
} wait_cfg;

uint64_t lib_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* nr_running of /proc/loadavg ("0.50 0.40 0.30 3/200 1234"), -1 if unknown */
static long runnable(void)
{
	char buf[128];
	long r = -1;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	char *p;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strchr(buf, '/');
	if (p) {
		while (p > buf && p[-1] != ' ')
			p--;
		r = strtol(p, NULL, 10);
	}
	return r;
}

static void configure(void)
{
	const char *env = getenv("MSG_SPIN_US");

	wait_cfg.spin_ns = (env && *env ? strtoull(env, NULL, 10) : 50) * 1000;
	/* tests: spin whatever the load, so that a loaded CI host still runs
	 * the spinning waits' code (direct_recv.c's spin_look) */
	wait_cfg.always = getenv("MSG_TEST_SPIN_ALWAYS") != NULL;
	wait_cfg.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (wait_cfg.ncpu < 1)
		wait_cfg.ncpu = 1;
	wait_cfg.configured = true;
}

uint64_t lib_spin_ns(void)
{
	uint64_t t;

	if (!wait_cfg.configured)
		configure();
	if (!wait_cfg.spin_ns || wait_cfg.always)
		return wait_cfg.spin_ns;
	t = lib_now_ns();
	if (t - wait_cfg.load_at > (wait_cfg.suspect ? LOAD_RECHECK_NS
				    : wait_cfg.crowded ? wait_cfg.crowded_ns : LOAD_REFRESH_NS)) {
		long r = runnable();
		bool over = r < 0 || r > wait_cfg.ncpu, first = !wait_cfg.load_at;

		wait_cfg.load_at = t;
		if (first || (over != wait_cfg.crowded && wait_cfg.suspect)) {
			/* the first sample decides alone, later ones two by two */
			wait_cfg.crowded = over, wait_cfg.suspect = false;
			wait_cfg.crowded_ns = LOAD_RECHECK_NS;
		} else if (over != wait_cfg.crowded) {
			wait_cfg.suspect = true;
		} else {
			wait_cfg.suspect = false;
			if (over && (wait_cfg.crowded_ns *= 2) > LOAD_REFRESH_NS)
				wait_cfg.crowded_ns = LOAD_REFRESH_NS; /* 1, 2, 4, 8, 16, 20 ms */
		}
	}
	return wait_cfg.crowded ? 0 : wait_cfg.spin_ns;
}
