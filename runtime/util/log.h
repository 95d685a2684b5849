/* Logging for daemons and tools: one line per event, prefixed with the
 * program name; bounded by the caller (no unbounded message loops). */
#ifndef MSG_UTIL_LOG_H
#define MSG_UTIL_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *prog, int verbosity);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
