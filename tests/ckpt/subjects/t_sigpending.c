/* SPDX-License-Identifier: MIT */
/* Pending signals: SIGUSR1 raised while blocked, and the SIGALRM of an
 * interval ITIMER_REAL that fired while blocked, are both still pending
 * after a restore and are delivered when unblocked; the timer, which the
 * kernel re-arms only when its SIGALRM is dequeued, keeps firing after. */
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "subject.h"

static volatile int usr1, alrm;

static void on_usr1(int s)
{
	(void)s;
	usr1++;
}

static void on_alarm(int s)
{
	(void)s;
	alrm++;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int pending(int sig)
{
	sigset_t p;
	sigpending(&p);
	return sigismember(&p, sig);
}

int main(int argc, char **argv)
{
	signal(SIGUSR1, on_usr1);
	signal(SIGALRM, on_alarm);
	sigset_t both, old;
	sigemptyset(&both);
	sigaddset(&both, SIGUSR1);
	sigaddset(&both, SIGALRM);
	sigprocmask(SIG_BLOCK, &both, &old);
	raise(SIGUSR1);
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec ms = { 0, 1000000 };
	for (double end = now_s() + 10; !pending(SIGALRM) && now_s() < end;)
		nanosleep(&ms, NULL);
	subj_checkpoint(argc, argv);
	int p_usr1 = pending(SIGUSR1), p_alrm = pending(SIGALRM);
	sigprocmask(SIG_SETMASK, &old, NULL);
	int handled = usr1, first = alrm;
	for (double end = now_s() + 10; alrm < first + 3 && now_s() < end;)
		nanosleep(&ms, NULL);
	struct itimerval cur;
	getitimer(ITIMER_REAL, &cur);
	/* alrm may already count a second expiry when read: >= 1, not == 1 */
	printf("pending usr1=%d alrm=%d handled usr1=%d alrm=%d timer_refired=%d interval=%ld.%06ld\n", p_usr1,
	       p_alrm, handled, first >= 1, alrm >= first + 3, (long)cur.it_interval.tv_sec,
	       (long)cur.it_interval.tv_usec);
	return 0;
}
