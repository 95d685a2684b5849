// SPDX-License-Identifier: GPL-2.0
#include <linux/errno.h>
#include "msgmig.h"
#include "fmt.h"

long msgmig_restore(struct msgmig_restore *arg, struct mm_err *e)
{
	return -EOPNOTSUPP;
}

long msgmig_image_info(struct msgmig_image_info *arg, struct mm_err *e)
{
	return -EOPNOTSUPP;
}
