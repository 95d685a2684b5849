/* SPDX-License-Identifier: MIT */
/* The whole image in stream order: header, metadata, runtime, pages, END. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"

static int write_thread(struct ckpt_ctx *c)
{
	size_t n = sizeof(c->th) + c->th.xsave_len;
	unsigned char *buf = ckpt_alloc(&c->a, n);
	if (!buf)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	memcpy(buf, &c->th, sizeof(c->th));
	memcpy(buf + sizeof(c->th), c->xsave, c->th.xsave_len);
	return ckpt_write_sect(c, CKPT_S_THREAD, buf, n);
}

/* MM .. RUNTIME: the state at the stop (also the final part of pre-copy). */
int ckpt_write_meta_final(struct ckpt_ctx *c)
{
	int r = ckpt_write_sect(c, CKPT_S_MM, &c->mm, sizeof(c->mm));
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_VMAS, c->vmas, sizeof(*c->vmas) * c->n_vmas);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_FILES, c->fds, sizeof(*c->fds) * c->n_fds);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_SIGNALS, &c->sig, sizeof(c->sig));
	if (!r)
		r = write_thread(c);
	if (!r && c->o && c->o->runtime_state && c->o->runtime_state_len)
		r = ckpt_write_sect(c, CKPT_S_RUNTIME, c->o->runtime_state, c->o->runtime_state_len);
	return r;
}

static int write_meta(struct ckpt_ctx *c)
{
	int r = ckpt_write_hdr(c);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_IDENT, c->files, sizeof(*c->files) * c->n_files);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_CPU, &c->cpu, sizeof(c->cpu));
	if (!r)
		r = ckpt_write_meta_final(c);
	return r;
}

int ckpt_write_image(struct ckpt_ctx *c)
{
	if (c->o && c->o->runtime_state_len > CKPT_MAX_META_LEN)
		return ckpt_fail(c, CKPT_E_INVAL, "runtime state of %zu bytes exceeds %u", c->o->runtime_state_len,
				 CKPT_MAX_META_LEN);
	/* /proc/self/mem only if some memory cannot be read in place
	 * (page_src): one open less in most captures */
	c->pagemap_fd = k_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	c->own_fds[0] = c->pagemap_fd;
	int r = c->pagemap_fd < 0 ? ckpt_fail(c, CKPT_E_PROC, "cannot open pagemap") : 0;
	if (!r && c->o && c->o->compress)
		r = ckpt_zstd_init(c);
	ckpt_trace("write: open pagemap/mem");
	if (!r)
		r = write_meta(c);
	ckpt_trace("write: metadata");
	if (!r)
		r = ckpt_write_memory(c);
	/* (END flushes: pages gathered by reference, c->refs, are sent before
	 * the trace changes its static state) */
	if (!r)
		r = ckpt_write_end(c);
	ckpt_trace("write: pages + end");
	ckpt_close_proc_fds(c);
	return r;
}

int ckpt_open_proc_fds(struct ckpt_ctx *c)
{
	if (c->pagemap_fd < 0)
		c->pagemap_fd = k_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (c->mem_fd < 0)
		c->mem_fd = k_open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	c->own_fds[0] = c->pagemap_fd;
	c->own_fds[1] = c->mem_fd;
	return (c->pagemap_fd < 0 || c->mem_fd < 0) ? ckpt_fail(c, CKPT_E_PROC, "cannot open pagemap/mem") : 0;
}

void ckpt_close_proc_fds(struct ckpt_ctx *c)
{
	if (c->pagemap_fd >= 0)
		k_close(c->pagemap_fd);
	if (c->mem_fd >= 0)
		k_close(c->mem_fd);
	c->pagemap_fd = c->mem_fd = -1;
}
