/* msgd's side of the same-host data path (docs/datapath.md). For a job
 * with JOB_F_SHM (msgrun sets it unless --no-shm), not replicated (r = 1),
 * with at least two of its processes here (or all of them), msgd makes one
 * shared segment (a memfd: no name, so nothing outlives the job's
 * processes) and passes it with L_WELCOME to the processes placed here, the
 * segment's members (marked in it: other ranks' rings are never used).
 * The processes then exchange messages through its rings without msgd.
 * msgd keeps the segment mapped to call a process back to its own path:
 * before a capture (the core waits for the process's next receive) and for
 * an injected stall it sets the process's detach request and rings its
 * bell; the process then moves what its rings hold into its own memory and
 * talks to msgd from then on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"
#include "wire/shm.h"

static uint32_t local_ranks(struct job *j)
{
	uint32_t g, k = 0;

	for (g = 0; g < j->cfg.n; g++)
		k += core_is_local(j->core, g, NULL);
	return k;
}

static bool eligible(struct job *j)
{
	uint32_t k;

	if (!(j->cfg.flags & JOB_F_SHM) || j->cfg.r != 1)
		return false;
	k = local_ranks(j);
	return k >= 2 || k == j->cfg.n;
}

static int create(struct job *j)
{
	const char *test_ring = getenv("MSG_TEST_SHM_RING_BYTES"); /* tests: small rings */
	uint64_t ring = test_ring ? strtoull(test_ring, NULL, 10) & ~(uint64_t)(SHM_ALIGN - 1) :
				    shm_ring_bytes_for(j->cfg.n);
	size_t len = shm_size(j->cfg.n, ring < 2 * SHM_ALIGN ? (ring = 2 * SHM_ALIGN) : ring);
	int fd = memfd_create("msg-shm", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len)) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -1;
	}
	shm_init(p, j->cfg.n, ring, len);
	for (uint32_t g = 0; g < j->cfg.n; g++)
		shm_proc(p, g)->member = core_is_local(j->core, g, NULL);
	j->shm = p;
	j->shm_len = len;
	j->shm_fd = fd;
	log_info("job %llx: same-host rings for %u processes of %u (%llu KiB each)",
		 (unsigned long long)j->id, local_ranks(j), j->cfg.n,
		 (unsigned long long)(ring >> 10));
	return 0;
}

int shmseg_fd_for(struct job *j, struct lp *lp)
{
	int fd;

	if (lp->restored || j->shm_state < 0)
		return -1; /* a restored process has left the rings for good */
	if (!j->shm_state) {
		j->shm_state = eligible(j) ? 1 : -1;
		if (j->shm_state > 0 && create(j)) {
			log_warn("job %llx: no same-host rings (%s): messages go through msgd",
				 (unsigned long long)j->id, strerror(errno));
			j->shm_state = -1;
		}
		if (j->shm_state < 0)
			return -1;
	}
	if (lp->g >= j->cfg.n || !shm_proc(j->shm, lp->g)->member)
		return -1; /* placed elsewhere at first: its rings stay unused */
	fd = dup(j->shm_fd);
	if (fd >= 0)
		lp->shm = true;
	return fd;
}

void shmseg_poke(struct job *j, uint32_t g)
{
	struct shm_proc *p;

	if (!j->shm || g >= j->cfg.n || getenv("MSG_TEST_SHM_NO_POKE")) /* negative control */
		return;
	p = shm_proc(j->shm, g);
	__atomic_store_n(&p->detach_req, 1, __ATOMIC_SEQ_CST);
	shm_wake(p);
}

void shmseg_check(struct job *j)
{
	uint32_t g;

	if (!j->shm)
		return;
	for (g = 0; g < j->cfg.n; g++) {
		struct lp *lp = j->lps[g];

		if (lp && lp->shm && !lp->shm_poked && core_capture_waiting(j->core, g)) {
			lp->shm_poked = true;
			shmseg_poke(j, g);
		}
	}
}

void shmseg_free(struct job *j)
{
	if (!j->shm)
		return;
	munmap(j->shm, j->shm_len);
	close(j->shm_fd);
	j->shm = NULL;
}
