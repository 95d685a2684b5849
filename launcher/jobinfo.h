/* <jobdir>/job.info: what msgctl needs to reach a running job (its id, shape
 * and the daemons' addresses). Written by msgrun, mode 0600. */
#ifndef MSG_LAUNCHER_JOBINFO_H
#define MSG_LAUNCHER_JOBINFO_H

#include <stddef.h>
#include <stdint.h>

struct jobinfo {
	uint64_t job;
	uint32_t n, r, m;
	char **hosts;   /* [m] "ip:port" */
	char *key_file; /* the site key, when msgrun made it (virtual hosts) */
};

int jobinfo_write(const char *dir, const struct jobinfo *ji);
int jobinfo_read(const char *dir, struct jobinfo *ji, char *why, size_t whylen);
/* The job directory to use: want, else $MSG_JOB_DIR, else the only job under
 * $TMPDIR (or /tmp) with a job.info. */
int jobinfo_find(const char *want, char *out, size_t len, char *why, size_t whylen);
void jobinfo_free(struct jobinfo *ji);

#endif
