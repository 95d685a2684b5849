/* msgd's claim on the CPU.
 *
 * Detection must keep working when the applications saturate the cores: a
 * daemon whose tick comes late stops sending heartbeats, and its peers take
 * its host for lost. A real-time class for the whole daemon does that, but
 * every message of an r = 3 job wakes the daemon, and a real-time wake-up
 * costs more than a fair one here (Dirichlet n = 16, r = 3: ~5 % more CPU,
 * docs/datapath.md §10). So by default (MSG_PRIO=watch) the daemon's loop
 * runs at nice -10 and a watchdog thread, real-time itself and asleep
 * almost always, moves the loop to SCHED_RR when its tick is late (the
 * load starves it); the loop steps down again after BOOST_HOLD_NS of ticks
 * on time. MSG_PRIO=rt: the loop is real-time all along (as before);
 * MSG_PRIO=nice: nice -10 only. Without permission for real time: nice. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

#define RT_PRIO 10
#define WATCH_NS (10 * 1000 * 1000ull)     /* the watchdog looks this often */
#define LATE_NS (45 * 1000 * 1000ull)      /* a tick is due every 20 ms */
#define BOOST_HOLD_NS (1000 * 1000 * 1000ull)

static struct {
	pid_t loop_tid;
	_Atomic uint64_t beat;      /* the loop's last tick */
	_Atomic int boosted;        /* the watchdog moved the loop to SCHED_RR */
	uint64_t boosted_at;        /* (the loop's) */
	_Atomic unsigned boosts;
} prio;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int set_rt(pid_t tid)
{
	struct sched_param sp = { .sched_priority = RT_PRIO };

	return sched_setscheduler(tid, SCHED_RR | SCHED_RESET_ON_FORK, &sp);
}

static void set_fair(void)
{
	struct sched_param sp = { .sched_priority = 0 };

	sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &sp);
	if (setpriority(PRIO_PROCESS, 0, -10))
		log_debug("cannot raise priority: %s", strerror(errno));
}

static void *watchdog(void *arg)
{
	struct timespec t = { 0, WATCH_NS };

	(void)arg;
	for (;;) {
		nanosleep(&t, NULL);
		if (atomic_load(&prio.boosted) || now_ns() - atomic_load(&prio.beat) < LATE_NS)
			continue;
		if (!set_rt(prio.loop_tid)) {
			atomic_store(&prio.boosted, 1);
			atomic_fetch_add(&prio.boosts, 1);
		}
	}
	return NULL;
}

static int start_watchdog(void)
{
	struct sched_param sp = { .sched_priority = RT_PRIO };
	pthread_attr_t a;
	pthread_t th;
	sigset_t all, old;
	int r;

	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, SCHED_RR);
	pthread_attr_setschedparam(&a, &sp);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	sigfillset(&all); /* signals stay the loop's (signalfd) */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&th, &a, watchdog, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	return r;
}

void priority_start(void)
{
	const char *m = getenv("MSG_PRIO");

	prio.loop_tid = gettid();
	atomic_store(&prio.beat, now_ns());
	if (getenv("MSG_NO_RT") || (m && !strcmp(m, "nice"))) {
		set_fair();
		return;
	}
	if (m && !strcmp(m, "rt")) {
		if (set_rt(0))
			set_fair();
		return;
	}
	if (m && *m && strcmp(m, "watch"))
		log_warn("MSG_PRIO=%s is not watch, rt or nice: watch", m);
	set_fair();
	int r = start_watchdog(); /* (pthread_create's error, not errno) */
	if (r)
		log_info("no real-time watchdog (%s): msgd runs at nice -10 only", strerror(r));
}

/* The loop's tick: it ran. A boost ends once the ticks have been on time
 * for BOOST_HOLD_NS (the watchdog boosts again if they are not). */
void priority_tick(void)
{
	uint64_t now = now_ns(), last = atomic_load(&prio.beat);

	atomic_store(&prio.beat, now);
	if (!atomic_load(&prio.boosted))
		return;
	if (!prio.boosted_at)
		log_info("real time from the watchdog (%u): the tick came %llu ms after the last",
			 priority_boosts(), (unsigned long long)((now - last) / 1000000));
	if (!prio.boosted_at || now - last >= LATE_NS) {
		prio.boosted_at = now;
		return;
	}
	if (now - prio.boosted_at >= BOOST_HOLD_NS) {
		set_fair();
		prio.boosted_at = 0;
		atomic_store(&prio.boosted, 0);
	}
}

unsigned priority_boosts(void)
{
	return atomic_load(&prio.boosts);
}
