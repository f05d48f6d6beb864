/*
 * lib-api.h: what the tests of libtimingfs (t/api-*.c) share: a mount's
 * files read as cat reads them, in the Windows API's units whatever the
 * mount's, to hold the library's answers against.
 */
#ifndef TIMINGFS_T_LIB_API_H
#define TIMINGFS_T_LIB_API_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "timingfs.h"

#define API_FILETIME_EPOCH 116444736000000000ull

static const char *api_mnt;
static int api_unix; /* the mount's units are unix */

/* api_cat - the file MNT/@rel into @buf (NUL-terminated): length, or -1. */
static inline int api_cat(const char *rel, char *buf, size_t size)
{
	char path[4096];
	size_t len = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", api_mnt, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

/* api_key - the value of @key in "key value" lines, or UINT64_MAX. */
static inline uint64_t api_key(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p = text;

	for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, len) == 0 && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 10);
	return UINT64_MAX;
}

/* api_units - the mount's units, from its info: sets api_unix. */
static inline int api_units(void)
{
	char info[8192];

	if (api_cat("info", info, sizeof(info)) < 0)
		return -1;
	api_unix = strstr(info, "\nunits unix\n") != NULL;
	return 0;
}

static inline uint64_t api_dur(uint64_t v)
{
	return api_unix ? v / 100 : v;
}

static inline uint64_t api_stamp(uint64_t v)
{
	return api_unix && v ? v / 100 + API_FILETIME_EPOCH : v;
}

/* api_times - a task's times file (DIR/times) in Windows units: 0 or -1. */
static inline int api_times(const char *dir, struct tfs_times *t)
{
	char rel[256], text[1024];

	snprintf(rel, sizeof(rel), "%s/times", dir);
	if (api_cat(rel, text, sizeof(text)) < 0)
		return -1;
	t->cycles = api_key(text, "cycles");
	t->kernel_100ns = api_dur(api_key(text, "kernel_time"));
	t->user_100ns = api_dur(api_key(text, "user_time"));
	t->creation_filetime = api_stamp(api_key(text, "creation_time"));
	t->exit_filetime = api_stamp(api_key(text, "exit_time"));
	return 0;
}

/* api_now_filetime - the wall clock as FILETIME. */
static inline uint64_t api_now_filetime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 10000000u + (uint64_t)ts.tv_nsec / 100 +
	       API_FILETIME_EPOCH;
}

static inline pid_t api_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Burn @ms of the calling thread's CPU time, in user mode. */
static inline void api_burn(int ms)
{
	struct timespec ts;
	uint64_t until, now;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	until = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec +
		(uint64_t)ms * 1000000u;
	do {
		for (volatile int i = 0; i < 100000; i++)
			;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	} while (now < until);
}

#endif
