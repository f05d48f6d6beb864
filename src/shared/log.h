/*
 * log: where the daemon's messages go: standard error until it forks
 * into the background, syslog (LOG_DAEMON) from then on.
 */
#ifndef TIMINGFS_LOG_H
#define TIMINGFS_LOG_H

#include <stdarg.h>
#include <syslog.h>

/* log_msg - one message of @level (LOG_ERR, ...), without a newline. */
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* log_to_syslog - from now on, to syslog as "timingfs[PID]". */
void log_to_syslog(void);

/* log_fuse - libfuse's messages, where ours go (fuse_set_log_func). */
void log_fuse(int level, const char *fmt, va_list ap);

#endif
