/* Helpers shared by the msgmig test programs that run inside the VM. */
#ifndef MMT_H
#define MMT_H

#include <stddef.h>
#include <sys/types.h>
#include "msgmig.h"

extern int mmt_failures;
extern const char *mmt_prog;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			mmt_failures++;                                      \
			mmt_fail_at(__FILE__, __LINE__, #cond);              \
			mmt_note(__VA_ARGS__);                               \
		}                                                            \
	} while (0)

void mmt_fail_at(const char *file, int line, const char *cond);
void mmt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int mmt_done(void);	/* prints the summary, returns the exit status */

int mmt_dev(void);	/* open /dev/msgmig or exit */

/* A child with its stdin/stdout on pipes. */
struct mmt_child {
	pid_t pid;
	int to;		/* write end: the child's stdin */
	int from;	/* read end: the child's stdout */
};

int mmt_spawn(struct mmt_child *c, char *const argv[]);
int mmt_read_byte(int fd, int timeout_ms); /* the byte, or -1 */
ssize_t mmt_read_all(int fd, char *buf, size_t cap, int timeout_ms);
int mmt_wait(pid_t pid, int timeout_ms);  /* wait status, or -1 on timeout */

/* SAVE pid into path; returns 0 or -errno, filling *a. */
int mmt_save(pid_t pid, unsigned int flags, const char *path,
	     struct msgmig_save *a);
/* The same, asking for a RUNTIME section from the target's memory. */
int mmt_save_rt(pid_t pid, unsigned int flags, unsigned long long rt_addr,
		unsigned long long rt_len, const char *path, struct msgmig_save *a);

int mmt_read_file(const char *path, char **data, size_t *len);
/* CRC-32C as the image format defines it. */
unsigned int mmt_crc32c(const void *p, size_t n);
/* The deterministic data file mmt-target reads and maps. */
int mmt_make_data(const char *path);
int mmt_write_file(const char *path, const void *data, size_t len);

#endif
