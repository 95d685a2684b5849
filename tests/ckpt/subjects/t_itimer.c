/* SPDX-License-Identifier: MIT */
/* itimer: ITIMER_REAL with an interval keeps firing after a restore, with
 * the same interval; ITIMER_VIRTUAL's interval is kept too. */
#include <signal.h>
#include <sys/time.h>

#include "subject.h"

static volatile int ticks;

static void on_alarm(int s)
{
	(void)s;
	ticks++;
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
	int start = ticks;
	for (int i = 0; i < 500 && ticks < start + 5; i++)
		usleep(10000);
	struct itimerval now, vnow;
	getitimer(ITIMER_REAL, &now);
	getitimer(ITIMER_VIRTUAL, &vnow);
	printf("itimer fired=%d interval=%ld.%06ld virtual_interval=%ld armed=%d\n", ticks >= start + 5,
	       (long)now.it_interval.tv_sec, (long)now.it_interval.tv_usec, (long)vnow.it_interval.tv_sec,
	       vnow.it_value.tv_sec > 0);
	return 0;
}
