/* SPDX-License-Identifier: GPL-2.0 */
/* Writing an image stream (file header, framed sections, END) to a buffer. */
#ifndef MSGMIG_WRITER_H
#define MSGMIG_WRITER_H

#include "msgmig.h"
#include "fmt.h"

struct mm_writer {
	struct mm_buf *b;
	u32 seq;		/* next section's sequence number */
	u64 n_pages;		/* pages in all PAGES sections */
	u64 base;		/* stream bytes already drained from the buffer */
};

int mmw_file_hdr(struct mm_writer *w, u32 flags, u64 src_pid);
/* A whole section from one payload. */
int mmw_section(struct mm_writer *w, u32 type, const void *p, size_t n);
/* A section built in place: open, append with mm_buf_*, close. */
long mmw_open(struct mm_writer *w, u32 type);	/* header offset or -errno */
int mmw_close(struct mm_writer *w, size_t hoff);
int mmw_end(struct mm_writer *w);

#endif
