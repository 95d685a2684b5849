/* msgrun's command line: what a job is asked to be. */
#ifndef MSG_LAUNCHER_OPTIONS_H
#define MSG_LAUNCHER_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct opts {
	uint32_t n, r, vhosts;
	const char *hostfile, *key_file, *job_dir;
	uint8_t mode;
	bool output_all, keep_dir, stats;
	uint32_t flags;
	double timeout;
	int verbose;
	const char *events_path, *inject;
	uint64_t inject_seed;
	bool report;
	uint32_t hb_period_ms, hb_timeout_ms, stall_min_ms;
	const char *ckpt_engine; /* virtual hosts' msgd --ckpt-engine, or NULL */
	const char *tcp_cc;      /* virtual hosts' msgd --tcp-congestion, or NULL */
	const char *keep_fenced; /* --keep-fenced directory, or NULL */
	char **argv;
	int argc;
};

void usage(FILE *f);
/* "msgrun: <message>" on stderr; returns the usage exit status (2). */
int die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fills o; 0, or the exit status for a bad command line. Exits on --help. */
int parse_args(int argc, char **argv, struct opts *o);

#endif
