/* msgrun's state of one job, shared by msgrun.c (start, wait, teardown)
 * and ends.c (how replica ends and host losses decide the job's end). */
#ifndef MSG_LAUNCHER_RUN_H
#define MSG_LAUNCHER_RUN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "client.h"
#include "events.h"
#include "hosts.h"
#include "inject.h"
#include "options.h"
#include "output.h"

struct run {
	struct opts o;
	uint64_t job;
	char dir[PATH_MAX];
	char keepdir[PATH_MAX]; /* --keep-fenced, absolute; "" none */
	uint8_t site[AUTH_KEY_LEN], key[AUTH_KEY_LEN];
	struct hosts hosts;
	struct client *cl;
	struct output *out;
	int *status;          /* [n*r] wait status, -1 while running */
	uint32_t groups_done;
	int exit_code;
	bool failed;
	double kill_at;       /* when a failed job was told to end */
	struct events *ev;
	struct inj *inj;
	size_t ninj;
	uint32_t *loc;        /* [n*r] the host of each replica, as events tell */
	double *lost_at;      /* [n] when a daemon said the rank lost every replica */
	uint32_t *lost_by;    /* [n] the daemon that said so */
	bool *isolated;       /* [m] the daemon said it is cut off from the majority */
	bool *gone;           /* [m] its processes counted as ended (lose_host) */
	uint8_t *lost_votes;  /* [m*m] [h*m + x]: daemon x declared host h lost */
	double *majority_at;  /* [n] when a majority of the rank's replicas had finished */
	bool *done;           /* [n] the rank counts as finished */
	char prog[PATH_MAX];  /* the program, resolved once for every host */
	char **env;
	uint32_t envc;
	double t0;
	char keyfile[PATH_MAX + 16];
};

/* msgrun.c */
double run_now(void);                     /* CLOCK_MONOTONIC, s */
void kill_job(struct run *R, int signo);  /* every daemon ends its processes */

/* ends.c */
void on_exit_frame(struct run *R, const struct f_proc_exit *e);
void check_laggards(struct run *R);
void host_lost_vote(struct run *R, uint32_t h, uint32_t x);
int lose_host(struct run *R, uint32_t h);
void confirm_lost(struct run *R);

#endif
