/*
 * log: where the daemon's messages go (log.h).
 */
#include <stdbool.h>
#include <stdio.h>

#include "log.h"

static bool use_syslog;

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fputs("timingfs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

void log_to_syslog(void)
{
	openlog("timingfs", LOG_PID, LOG_DAEMON);
	use_syslog = true;
}

void log_fuse(int level, const char *fmt, va_list ap)
{
	if (use_syslog)
		vsyslog(level, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
}
