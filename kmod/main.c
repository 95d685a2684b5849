// SPDX-License-Identifier: GPL-2.0
/*
 * msgmig: /dev/msgmig, kernel-assisted save/restore of a process image
 * for the msg runtime (DESIGN.md section 7). This file holds the device,
 * its ioctl dispatch and the read() side that streams a saved image.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/mm.h>
#include "msgmig.h"
#include "fmt.h"

static int msgmig_open(struct inode *inode, struct file *file)
{
	struct msgmig_session *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return -ENOMEM;
	mutex_init(&s->lock);
	file->private_data = s;
	return 0;
}

static int msgmig_release(struct inode *inode, struct file *file)
{
	struct msgmig_session *s = file->private_data;

	msgmig_stream_end(s);	/* an unfinished stream lets its target go on */
	mm_buf_free(&s->image);
	kfree(s);
	return 0;
}

static ssize_t msgmig_read(struct file *file, char __user *buf, size_t len,
			   loff_t *ppos)
{
	struct msgmig_session *s = file->private_data;
	ssize_t ret;

	mutex_lock(&s->lock);
	if (s->stream)
		ret = msgmig_stream_read(s, buf, len, ppos);
	else
		ret = simple_read_from_buffer(buf, len, ppos, s->image.data,
					      s->image.len);
	mutex_unlock(&s->lock);
	return ret;
}

/*
 * Copy an argument struct in, checking that userspace passed exactly the
 * size this version knows (the first u32 of every argument struct).
 */
static int get_arg(void *karg, size_t ksize, unsigned long uarg)
{
	u32 size;

	if (get_user(size, (u32 __user *)uarg))
		return -EFAULT;
	if (size != ksize)
		return -EINVAL;
	if (copy_from_user(karg, (void __user *)uarg, ksize))
		return -EFAULT;
	return 0;
}

static long do_version(unsigned long uarg)
{
	struct msgmig_version v = {
		.uapi = MSGMIG_UAPI_VERSION,
		.image_version = MSGMIG_IMAGE_VERSION,
		.features = MSGMIG_FEAT_SAVE | MSGMIG_FEAT_RESTORE |
			    MSGMIG_FEAT_STREAM | MSGMIG_FEAT_ZSTD,
	};

	return copy_to_user((void __user *)uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static bool excludes_ok(const struct msgmig_save *a)
{
	u32 i;

	if (a->n_exclude_fds > MSGMIG_MAX_EXCLUDE_FDS ||
	    a->n_exclude_ranges > MSGMIG_MAX_EXCLUDE_RANGES)
		return false;
	for (i = 0; i < a->n_exclude_ranges; i++) {
		const struct msgmig_range *r = &a->exclude_ranges[i];

		if (!PAGE_ALIGNED(r->start) || !PAGE_ALIGNED(r->end) ||
		    r->start >= r->end)
			return false;
	}
	return true;
}

/* Copy a result struct back, including reason/detail on failure. */
static long put_result(unsigned long uarg, void *karg, size_t ksize, long ret)
{
	if (copy_to_user((void __user *)uarg, karg, ksize))
		return ret ? ret : -EFAULT;
	return ret;
}

static long do_save(struct file *file, unsigned long uarg)
{
	struct msgmig_session *s = file->private_data;
	struct msgmig_save a;
	struct mm_err e = {};
	long ret = get_arg(&a, sizeof(a), uarg);

	if (ret)
		return ret;
	if ((a.flags & ~MSGMIG_SAVE_FLAGS) || a.reserved || a.pid <= 0 ||
	    a.runtime_len > CKPT_MAX_META_LEN || !excludes_ok(&a))
		return -EINVAL;
	mutex_lock(&s->lock);
	ret = msgmig_save(s, &a, &e);
	if (!ret)
		file->f_pos = 0;	/* read() streams the new image */
	mutex_unlock(&s->lock);
	a.reason = e.reason;
	memcpy(a.detail, e.detail, sizeof(a.detail));
	return put_result(uarg, &a, sizeof(a), ret);
}

static long do_restore(unsigned long uarg)
{
	struct msgmig_restore a;
	struct mm_err e = {};
	long ret = get_arg(&a, sizeof(a), uarg);

	if (ret)
		return ret;
	if ((a.flags & ~MSGMIG_RESTORE_FLAGS) || a.reserved || a.image_fd < 0)
		return -EINVAL;
	ret = msgmig_restore(&a, &e);
	if (ret >= 0 || ret == -ENOTRECOVERABLE)
		return ret;	/* the caller's memory is gone: nothing to copy */
	a.reason = e.reason;
	memcpy(a.detail, e.detail, sizeof(a.detail));
	return put_result(uarg, &a, sizeof(a), ret);
}

static long do_image_info(unsigned long uarg)
{
	struct msgmig_image_info *a;
	struct mm_err e = {};
	long ret;

	a = kmalloc(sizeof(*a), GFP_KERNEL);	/* too big for the stack */
	if (!a)
		return -ENOMEM;
	ret = get_arg(a, sizeof(*a), uarg);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (a->flags || a->reserved || a->image_fd < 0)
		goto out;
	ret = msgmig_image_info(a, &e);
	a->reason = e.reason;
	if (ret)
		memcpy(a->detail, e.detail, sizeof(a->detail));
	ret = put_result(uarg, a, sizeof(*a), ret);
out:
	kfree(a);
	return ret;
}

static long msgmig_ioctl(struct file *file, unsigned int cmd,
			 unsigned long uarg)
{
	switch (cmd) {
	case MSGMIG_IOC_VERSION:
		return do_version(uarg);
	case MSGMIG_IOC_SAVE:
		return do_save(file, uarg);
	case MSGMIG_IOC_RESTORE:
		return do_restore(uarg);
	case MSGMIG_IOC_IMAGE_INFO:
		return do_image_info(uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations msgmig_fops = {
	.owner = THIS_MODULE,
	.open = msgmig_open,
	.release = msgmig_release,
	.read = msgmig_read,
	.llseek = default_llseek,
	.unlocked_ioctl = msgmig_ioctl,
};

/* 0666: access is checked per target (ptrace rules), not on the node. */
static struct miscdevice msgmig_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "msgmig",
	.fops = &msgmig_fops,
	.mode = 0666,
};

static int __init msgmig_init(void)
{
	int err = mm_crc_selftest();

	if (err) {
		pr_err("msgmig: CRC-32C self-test failed\n");
		return err;
	}
	err = misc_register(&msgmig_dev);
	if (!err)
		pr_info("msgmig: uapi %d, image format %d\n",
			MSGMIG_UAPI_VERSION, MSGMIG_IMAGE_VERSION);
	return err;
}

static void __exit msgmig_exit(void)
{
	misc_deregister(&msgmig_dev);
}

module_init(msgmig_init);
module_exit(msgmig_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("msg: kernel-assisted process save/restore");
