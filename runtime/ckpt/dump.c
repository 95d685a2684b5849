/* SPDX-License-Identifier: MIT */
/* msg-ckpt-dump [IMAGE]: prints an image's sections, VMAs and page counts
 * (reads stdin if no file).  A debugging aid for engines and daemons. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ckpt.h"
#include "image_reader.h"

static long rd_fd(void *ctx, void *buf, size_t n)
{
	return read((int)(intptr_t)ctx, buf, n);
}

static void vmas(const char *what, const struct ckpt_vma *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		printf("%s %012llx-%012llx prot %u flags %#x file %d\n", what, (unsigned long long)v[i].start,
		       (unsigned long long)v[i].end, v[i].prot, v[i].flags, v[i].file_idx);
}

static int pages(struct ckpt_rd *rd, const struct ckpt_meta *m, uint64_t *n, void *buf)
{
	while (rd->cur.type == CKPT_S_PAGES || rd->cur.type == CKPT_S_PRE_PAGES) {
		struct ckpt_pages ph;
		const struct ckpt_vma *v;
		if (ckpt_rd_pages(rd, m, &ph, &v) || ckpt_rd_data(rd, buf, rd->left) || ckpt_rd_finish(rd))
			return rd->code;
		n[rd->cur.type == CKPT_S_PRE_PAGES] += ph.npages;
		if (ckpt_rd_sect(rd) < 0)
			return rd->code;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int fd = argc > 1 ? open(argv[1], O_RDONLY) : 0;
	size_t cap = 64u << 20;
	void *meta = malloc(cap), *buf = malloc(16u << 20);
	struct ckpt_rd rd;
	struct ckpt_meta m;
	uint64_t n[2] = { 0, 0 };
	ckpt_rd_init(&rd, rd_fd, (void *)(intptr_t)fd);
	int r = ckpt_read_meta(&rd, &m, meta, cap);
	if (!r && m.precopy) {
		vmas("pre-vma", m.pre_vmas, m.n_pre_vmas);
		r = pages(&rd, &m, n, buf);
		if (!r)
			r = ckpt_read_final_meta(&rd, &m, meta, cap);
	}
	if (!r) {
		for (uint32_t i = 0; i < m.n_files; i++)
			printf("file %s size %llu crc %08x\n", m.files[i].path, (unsigned long long)m.files[i].size,
			       m.files[i].crc32c);
		vmas("vma", m.vmas, m.n_vmas);
		for (uint32_t i = 0; i < m.n_fds; i++)
			printf("fd %d kind %u flags %#x offset %llu %s\n", m.fds[i].fd, m.fds[i].kind,
			       m.fds[i].open_flags, (unsigned long long)m.fds[i].offset, m.fds[i].path);
		printf("rip %#llx rsp %#llx fs %#llx rseq %#llx runtime %llu bytes\n",
		       (unsigned long long)m.th->regs.rip, (unsigned long long)m.th->regs.rsp,
		       (unsigned long long)m.th->regs.fs_base, (unsigned long long)m.th->rseq_addr,
		       (unsigned long long)m.runtime_len);
		r = pages(&rd, &m, n, buf);
	}
	if (!r)
		r = ckpt_rd_end(&rd);
	printf("pages %llu, pre-copy pages %llu, %llu bytes: %s %s\n", (unsigned long long)n[0],
	       (unsigned long long)n[1], (unsigned long long)rd.off, ckpt_err_name(r), r ? rd.what : "");
	return r ? -r : 0;
}
