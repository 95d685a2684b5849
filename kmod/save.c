// SPDX-License-Identifier: GPL-2.0
#include <linux/errno.h>
#include "msgmig.h"
#include "fmt.h"

long msgmig_save(struct msgmig_session *s, struct msgmig_save *arg,
		 struct mm_err *e)
{
	return -EOPNOTSUPP;
}
