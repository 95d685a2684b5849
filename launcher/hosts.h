/* Where a job runs: virtual hosts (one msgd each on this machine, the
 * embedded default) or the hosts of an Open MPI style host file whose
 * daemons already run. */
#ifndef MSG_LAUNCHER_HOSTS_H
#define MSG_LAUNCHER_HOSTS_H

#include <stdint.h>
#include <sys/types.h>

struct hosts {
	uint32_t m;
	char **addr;      /* "ip:port" */
	uint32_t *slots;
	pid_t *pids;      /* virtual daemons we started, else 0 */
};

/* Starts m daemons listening on 127.0.0.1 (free ports), keyed by key_file,
 * with msgd --ckpt-engine=engine and --tcp-congestion tcp_cc unless NULL.
 * msgd is looked for beside this program. */
int hosts_start_virtual(struct hosts *h, uint32_t m, const char *key_file, int verbose,
			const char *engine, const char *tcp_cc, char *why, size_t whylen);
/* Parses "name[:port] [slots=K]" lines ('#' comments). */
int hosts_parse_file(struct hosts *h, const char *path, char *why, size_t whylen);
/* Waits (bounded) for virtual daemons to exit; kills stragglers. */
void hosts_stop_virtual(struct hosts *h, int grace_ms);
void hosts_free(struct hosts *h);

#endif
