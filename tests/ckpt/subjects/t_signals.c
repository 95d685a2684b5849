/* SPDX-License-Identifier: MIT */
/* Signals: SA_SIGINFO|SA_ONSTACK handler on a sigaltstack, SIGUSR2 blocked
 * (stays pending), SIGTERM ignored, SA_RESETHAND on SIGHUP. */
#include <signal.h>

#include "subject.h"

static char altstack[64 * 1024];
static volatile int on_alt, got_usr1, got_hup;

static void h_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char here;
	on_alt = &here >= altstack && &here < altstack + sizeof(altstack);
	got_usr1 = sig + (si->si_signo == sig);
}

static void h_hup(int sig)
{
	got_hup = sig;
}

int main(int argc, char **argv)
{
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	sigaltstack(&ss, NULL);
	struct sigaction sa = { 0 };
	sa.sa_sigaction = h_usr1;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGTERM, SIG_IGN);
	struct sigaction sh = { 0 };
	sh.sa_handler = h_hup;
	sh.sa_flags = SA_RESETHAND;
	sigaction(SIGHUP, &sh, NULL);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, NULL);
	subj_checkpoint(argc, argv);
	raise(SIGUSR1);
	raise(SIGTERM); /* ignored: we survive */
	raise(SIGUSR2); /* blocked: pending */
	raise(SIGHUP);
	sigset_t pend, cur;
	sigpending(&pend);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	struct sigaction now;
	sigaction(SIGHUP, NULL, &now);
	stack_t cs;
	sigaltstack(NULL, &cs);
	printf("signals usr1=%d onalt=%d hup=%d reset=%d usr2pending=%d usr2blocked=%d alt=%d\n", got_usr1, on_alt,
	       got_hup, now.sa_handler == SIG_DFL, sigismember(&pend, SIGUSR2), sigismember(&cur, SIGUSR2),
	       cs.ss_sp == altstack && cs.ss_size == sizeof(altstack));
	return 0;
}
