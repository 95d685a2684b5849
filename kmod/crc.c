// SPDX-License-Identifier: GPL-2.0
/* CRC-32C of the image format, and the error reporting helper. */
#include <linux/crc32.h>
#include <linux/kernel.h>
#include <linux/errno.h>
#include "fmt.h"

u32 mm_crc32c_update(u32 state, const void *p, size_t n)
{
	/* __crc32c_le takes an unsigned int length: feed big buffers in parts. */
	while (n) {
		unsigned int chunk = min_t(size_t, n, 1U << 30);

		state = __crc32c_le(state, p, chunk);
		p += chunk;
		n -= chunk;
	}
	return state;
}

u32 mm_crc32c(const void *p, size_t n)
{
	return mm_crc32c_final(mm_crc32c_update(MM_CRC_INIT, p, n));
}

/* The check value the format document gives; refuse to load if wrong. */
int mm_crc_selftest(void)
{
	return mm_crc32c("123456789", 9) == 0xE3069283 ? 0 : -EINVAL;
}

int mm_fail(struct mm_err *e, int err, int reason, const char *fmt, ...)
{
	va_list ap;

	if (e->reason)		/* keep the first, innermost reason */
		return err;
	e->reason = reason;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
	return err;
}
