/* Shared helpers of the msgmig user-space tools. */
#ifndef MMTOOL_H
#define MMTOOL_H

#include "msgmig.h"

/* Name of a CKPT_E_* reason code ("CKPT_E_CHECKSUM"), or "?" */
const char *mm_reason_name(int reason);
/* Open /dev/msgmig or exit(1) with a message naming the problem. */
int mm_open_dev(const char *prog);
/* Print "prog: what: strerror (REASON: detail)" to stderr. */
void mm_report(const char *prog, const char *what, int err, int reason,
	       const char *detail);

#endif
