/* The job directory: replicas' working directories (<dir>/<rank>.<replica>)
 * and, for virtual hosts, the job's site key. */
#ifndef MSG_LAUNCHER_JOBDIR_H
#define MSG_LAUNCHER_JOBDIR_H

#include <stddef.h>
#include <stdint.h>

/* Creates `want` (if given, it must not exist yet or be empty) or a fresh
 * $TMPDIR/msg-<job> with mode 0700; the path goes to out. */
int jobdir_create(const char *want, uint64_t job, char *out, size_t len);
void jobdir_remove(const char *dir);

#endif
