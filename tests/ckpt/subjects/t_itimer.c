/* SPDX-License-Identifier: MIT */
/* itimer: ITIMER_REAL with an interval keeps firing after a restore, with
 * the same interval; ITIMER_VIRTUAL's interval is kept too. */
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "subject.h"

static volatile int ticks;

static void on_alarm(int s)
{
	(void)s;
	ticks++;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	signal(SIGALRM, on_alarm);
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	struct itimerval iv = { { 7, 0 }, { 100, 0 } };
	setitimer(ITIMER_VIRTUAL, &iv, NULL);
	while (ticks < 3)
		pause();
	subj_checkpoint(argc, argv);
	/* bounded by time, not by iterations: every tick cuts a usleep short */
	int start = ticks;
	for (double end = now_s() + 10; ticks < start + 5 && now_s() < end;)
		usleep(10000);
	struct itimerval now, vnow;
	getitimer(ITIMER_REAL, &now);
	getitimer(ITIMER_VIRTUAL, &vnow);
	printf("itimer fired=%d interval=%ld.%06ld virtual_interval=%ld armed=%d\n", ticks >= start + 5,
	       (long)now.it_interval.tv_sec, (long)now.it_interval.tv_usec, (long)vnow.it_interval.tv_sec,
	       vnow.it_value.tv_sec > 0);
	return 0;
}
