#include "util/log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char log_prog[32] = "msg";
static int log_verbosity = LOG_WARN;

void log_init(const char *prog, int verbosity)
{
	snprintf(log_prog, sizeof(log_prog), "%s", prog);
	log_verbosity = verbosity;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *names[] = { "error", "warning", "info", "debug" };
	char line[1024];
	va_list ap;
	int n;

	if ((int)lvl > log_verbosity)
		return;
	n = snprintf(line, sizeof(line), "%s[%d]: %s: ", log_prog, (int)getpid(), names[lvl]);
	va_start(ap, fmt);
	if (n > 0 && n < (int)sizeof(line))
		n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(line) - 1)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write: lines from several daemons do not interleave mid-line */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}
