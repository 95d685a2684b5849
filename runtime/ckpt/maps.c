/* SPDX-License-Identifier: MIT */
/* /proc/self/maps -> VMA list and file table, minus excluded ranges.
 * Mappings the restorer cannot recreate are refused here, naming them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"

struct line {
	uint64_t start, end, pgoff, ino;
	char perms[5];
	const char *path; /* "" if none */
};

static const char *hex_field(const char *s, uint64_t *v, int *ok)
{
	const char *b = s;
	uint64_t x = 0;
	for (;; s++) {
		unsigned d = (unsigned char)*s;
		if (d - '0' < 10)
			x = x * 16 + (d - '0');
		else if ((d | 32) - 'a' < 6)
			x = x * 16 + ((d | 32) - 'a' + 10);
		else
			break;
	}
	*ok &= s > b && s - b <= 16;
	*v = x;
	return s;
}

/* "start-end perms offset dev inode   path", parsed by hand: sscanf was a
 * good part of the capture's fixed cost (one call per mapping). */
static int parse_line(char *s, struct line *l)
{
	int ok = 1;
	const char *p = hex_field(s, &l->start, &ok);
	ok &= *p++ == '-';
	p = hex_field(p, &l->end, &ok);
	ok &= *p++ == ' ';
	for (int i = 0; i < 4; i++) {
		ok &= p[i] != 0 && p[i] != ' ';
		l->perms[i] = p[i];
	}
	l->perms[4] = 0;
	if (!ok)
		return -1;
	p += 4;
	ok &= *p++ == ' ';
	p = hex_field(p, &l->pgoff, &ok);
	ok &= *p++ == ' ';
	while (*p && *p != ' ') /* dev, "fd:01" */
		p++;
	ok &= *p++ == ' ';
	const char *b = p;
	uint64_t ino = 0;
	for (; (unsigned)(*p - '0') < 10; p++)
		ino = ino * 10 + (uint64_t)(*p - '0');
	if (!ok || p == b || (*p && *p != ' '))
		return -1;
	while (*p == ' ')
		p++;
	l->ino = ino;
	l->path = p;
	return 0;
}

static int file_index(struct ckpt_ctx *c, const char *path, uint32_t flags)
{
	size_t len = strlen(path);
	for (uint32_t i = 0; i < c->n_files; i++)
		if (!strcmp(c->files[i].path, path)) {
			c->files[i].flags |= flags;
			return (int)i;
		}
	if (len >= CKPT_PATH_MAX)
		return ckpt_fail(c, CKPT_E_INVAL, "path too long: %.200s", path);
	if (c->n_files == c->cap_files)
		return ckpt_fail(c, CKPT_E_NOMEM, "too many mapped files");
	struct ckpt_file_ent *f = &c->files[c->n_files];
	memcpy(f->path, path, len + 1);
	f->path_len = (uint32_t)len;
	f->flags = flags;
	return (int)c->n_files++;
}

static uint32_t prot_of(const char *p)
{
	return (p[0] == 'r' ? CKPT_PROT_READ : 0) | (p[1] == 'w' ? CKPT_PROT_WRITE : 0) |
	       (p[2] == 'x' ? CKPT_PROT_EXEC : 0);
}

/* Classifies one (clipped) piece; returns 0 and fills v, or a refusal. */
static int classify(struct ckpt_ctx *c, const struct line *l, struct ckpt_vma *v)
{
	const char *p = l->path;
	int shared = l->perms[3] == 's';
	v->prot = prot_of(l->perms);
	v->file_idx = -1;
	if (!strcmp(p, "[vdso]"))
		v->flags = CKPT_VMA_VDSO;
	else if (!strcmp(p, "[vvar]") || !strcmp(p, "[vvar_vclock]"))
		v->flags = CKPT_VMA_VVAR;
	else if (!strcmp(p, "[vsyscall]"))
		v->flags = CKPT_VMA_VSYSCALL;
	else if (!strncmp(p, "/SYSV", 5) && shared)
		return ckpt_fail(c, CKPT_E_SYSV, "SysV shared memory segment (key 0x%.8s, shmid %llu) attached at %#llx-%#llx",
				 p + 5, (unsigned long long)l->ino, (unsigned long long)v->start, (unsigned long long)v->end);
	else if (strstr(p, "io_uring"))
		return ckpt_fail(c, CKPT_E_IO_URING, "io_uring ring mapped at %#llx", (unsigned long long)v->start);
	else if (shared && (v->prot & CKPT_PROT_WRITE))
		return ckpt_fail(c, CKPT_E_SHARED, "writable shared mapping %#llx-%#llx %s", (unsigned long long)v->start,
				 (unsigned long long)v->end, *p ? p : "(anonymous)");
	else if (p[0] == '/' && l->ino && !strstr(p, " (deleted)")) {
		int idx = file_index(c, p, CKPT_FE_MAPPED);
		if (idx < 0)
			return idx;
		v->flags = CKPT_VMA_FILE | (shared ? CKPT_VMA_SHARED : 0);
		v->file_idx = idx;
		v->pgoff = l->pgoff + (v->start - l->start);
	} else if (!shared && strstr(p, " (deleted)"))
		return ckpt_fail(c, CKPT_E_LIB, "mapped file was deleted: %s", p);
	else if (shared || l->ino)
		return ckpt_fail(c, CKPT_E_SHARED, "mapping %#llx-%#llx %s cannot be recreated",
				 (unsigned long long)v->start, (unsigned long long)v->end, *p ? p : "(shared anonymous)");
	else
		v->flags = CKPT_VMA_ANON | (!strcmp(p, "[heap]") ? CKPT_VMA_HEAP : 0) |
			   (!strcmp(p, "[stack]") ? CKPT_VMA_STACK | CKPT_VMA_GROWSDOWN : 0);
	if (v->start < CKPT_RESTORER_BASE + CKPT_RESTORER_SPAN && v->end > CKPT_RESTORER_BASE)
		return ckpt_fail(c, CKPT_E_RESERVED, "mapping %#llx-%#llx %s overlaps the restorer's range",
				 (unsigned long long)v->start, (unsigned long long)v->end, p);
	return 0;
}

static int add_piece(struct ckpt_ctx *c, const struct line *l, uint64_t s, uint64_t e)
{
	if (c->n_vmas == c->cap_vmas)
		return ckpt_fail(c, CKPT_E_NOMEM, "too many mappings");
	struct ckpt_vma *v = &c->vmas[c->n_vmas];
	memset(v, 0, sizeof(*v));
	v->start = s;
	v->end = e;
	int r = classify(c, l, v);
	if (r)
		return r;
	c->n_vmas++;
	return 0;
}

/* Adds [s,e) minus the excluded ranges starting from index k. */
static int add_clipped(struct ckpt_ctx *c, const struct line *l, uint64_t s, uint64_t e, int k)
{
	for (; k < c->n_ex; k++) {
		uint64_t xs = c->ex_start[k], xe = c->ex_end[k];
		if (xe <= s || xs >= e)
			continue;
		int r = 0;
		if (xs > s)
			r = add_clipped(c, l, s, xs, k + 1);
		if (!r && xe < e)
			r = add_clipped(c, l, xe, e, k + 1);
		return r;
	}
	return add_piece(c, l, s, e);
}

static int add_exe(struct ckpt_ctx *c)
{
	char exe[CKPT_PATH_MAX];
	ssize_t n = k_readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(exe) - 1)
		return ckpt_fail(c, CKPT_E_PROC, "readlink /proc/self/exe failed");
	exe[n] = 0;
	int r = file_index(c, exe, CKPT_FE_EXE);
	return r < 0 ? r : 0;
}

int ckpt_collect_vmas(struct ckpt_ctx *c)
{
	size_t len, lines = 0;
	char *text = ckpt_read_proc(c, "/proc/self/maps", &len);
	if (!text)
		return CKPT_E_PROC;
	/* The tables sized by the maps text: each line is at most one file
	 * (and the exe) and one VMA, plus one more piece per exclusion that
	 * splits it.  Allocated whole (2.8 MiB), their few written pages made
	 * the kept arena (arena.c) 3 MiB longer. */
	for (const char *s = text; (s = strchr(s, '\n')); s++)
		lines++;
	c->cap_files = lines + 1 < CKPT_MAX_FILES ? (uint32_t)lines + 1 : CKPT_MAX_FILES;
	c->cap_vmas = lines + c->n_ex + 1 < 16384 ? (uint32_t)(lines + c->n_ex + 1) : 16384;
	c->files = ckpt_alloc(&c->a, sizeof(*c->files) * c->cap_files);
	c->vmas = ckpt_alloc(&c->a, sizeof(*c->vmas) * c->cap_vmas);
	if (!c->files || !c->vmas)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	int r = add_exe(c);
	if (r)
		return r;
	for (char *s = text, *nl; *s; s = nl + 1) {
		nl = strchr(s, '\n');
		if (!nl)
			break;
		*nl = 0;
		struct line l;
		if (parse_line(s, &l))
			return ckpt_fail(c, CKPT_E_PROC, "unparsable maps line: %.100s", s);
		r = add_clipped(c, &l, l.start, l.end, 0);
		if (r)
			return r;
	}
	return 0;
}
