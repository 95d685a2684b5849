// SPDX-License-Identifier: GPL-2.0
/* File identity as the image records it: size and CRC-32C of the content. */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include "fmt.h"

#define CHUNK (64 * 1024)

int mm_hash_file(struct file *file, u64 *size, u32 *crc, u64 *mtime_ns)
{
	struct inode *inode = file_inode(file);
	loff_t pos = 0, end = i_size_read(inode);
	u32 state = MM_CRC_INIT;
	void *buf = kmalloc(CHUNK, GFP_KERNEL);
	ssize_t n = 0;

	if (!buf)
		return -ENOMEM;
	while (pos < end) {
		n = kernel_read(file, buf, min_t(loff_t, CHUNK, end - pos), &pos);
		if (n <= 0)
			break;
		state = mm_crc32c_update(state, buf, n);
		cond_resched();
	}
	kfree(buf);
	if (pos != end)
		return n < 0 ? n : -EIO;
	*size = end;
	*crc = mm_crc32c_final(state);
	*mtime_ns = timespec64_to_ns(&inode->i_mtime);
	return 0;
}
