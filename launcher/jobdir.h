/* The job directory: replicas' working directories (<dir>/<rank>.<replica>)
 * and, for virtual hosts, the job's site key. */
#ifndef MSG_LAUNCHER_JOBDIR_H
#define MSG_LAUNCHER_JOBDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Creates `want` (if given, it must not exist yet or be empty) or a fresh
 * $TMPDIR/msg-<job> with mode 0700; the path goes to out. */
int jobdir_create(const char *want, uint64_t job, char *out, size_t len);
void jobdir_remove(const char *dir);
/* --keep-fenced DIR made absolute into out; with local (virtual hosts) its
 * parent must be writable now. 0, or 2 after saying why on stderr. */
int keepdir_resolve(const char *want, bool local, char *out, size_t len);

#endif
