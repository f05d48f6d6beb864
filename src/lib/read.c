/*
 * read.c: the read path of libtimingfs: a task's times and cycles, the
 * processor groups and their idle cycles. Each call opens one file below
 * the mount or below a task's directory, reads it whole into a buffer on
 * the stack and closes it: nothing is allocated, nothing is shared, so
 * every call is thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib-internal.h"

/* Unix epoch as FILETIME: 100-ns intervals from 1601 to 1970. */
#define FILETIME_UNIX_EPOCH 116444736000000000ull

int lib_read_at(int dirfd, const char *name, char *buf, size_t size)
{
	size_t len = 0, want;
	ssize_t n;
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A snapshot is taken at offset 0; later offsets continue it. A
	 * short read is its end: timingfs gives all it has to a read, so
	 * asking again at the end would only cost another request. */
	do {
		want = size - 1 - len;
		n = pread(fd, buf + len, want, (off_t)len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto out_close;
		}
		len += (size_t)n;
	} while (n > 0 && (size_t)n == want && len < size - 1);
	ret = len < size - 1 ? (int)len : -EOVERFLOW;
	buf[len] = '\0';
out_close:
	close(fd);
	return ret;
}

int lib_parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return -EIO;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -EIO;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

int lib_task_path(char *buf, size_t size, pid_t pid, pid_t tid, int thread,
		  const char *file)
{
	char p[24], t[24];
	int n;

	if (pid < 0 || tid < 0)
		return -EINVAL;
	if (pid == TFS_SELF)
		snprintf(p, sizeof(p), "self");
	else
		snprintf(p, sizeof(p), "%d", (int)pid);
	/* gettid() numbers the caller in its own PID namespace, which is
	 * the namespace the mount shows the caller. */
	if (tid == TFS_SELF)
		tid = (pid_t)syscall(SYS_gettid);
	snprintf(t, sizeof(t), "%d", (int)tid);
	if (thread)
		n = snprintf(buf, size, "proc/%s/threads/%s%s%s", p, t,
			     file ? "/" : "", file ? file : "");
	else
		n = snprintf(buf, size, "proc/%s%s%s", p, file ? "/" : "",
			     file ? file : "");
	return n > 0 && (size_t)n < size ? 0 : -EINVAL;
}

/* A duration in the mount's units, in 100-ns intervals. */
static uint64_t to_100ns(const struct tfs *tfs, uint64_t v)
{
	return tfs->unix_units ? v / 100 : v;
}

/* A timestamp in the mount's units, as FILETIME; 0 (not exited) stays. */
static uint64_t to_filetime(const struct tfs *tfs, uint64_t v)
{
	if (!tfs->unix_units || v == 0)
		return v;
	return v / 100 + FILETIME_UNIX_EPOCH;
}

int lib_times_parse(const struct tfs *tfs, const char *text,
		    struct tfs_times *out)
{
	static const char *const keys[] = { "cycles", "kernel_time",
					    "user_time", "creation_time",
					    "exit_time" };
	uint64_t v[5];
	const char *p = text;
	unsigned int seen = 0, i;

	while (*p) {
		for (i = 0; i < 5; i++) {
			size_t len = strlen(keys[i]);
			if (strncmp(p, keys[i], len) == 0 && p[len] == ' ')
				break;
		}
		if (i == 5)
			return -EIO;
		p += strlen(keys[i]) + 1;
		if (lib_parse_u64(&p, &v[i]) < 0 || *p != '\n')
			return -EIO;
		p++;
		seen |= 1u << i;
	}
	if (seen != 0x1f)
		return -EIO;
	out->cycles = v[0];
	out->kernel_100ns = to_100ns(tfs, v[1]);
	out->user_100ns = to_100ns(tfs, v[2]);
	out->creation_filetime = to_filetime(tfs, v[3]);
	out->exit_filetime = to_filetime(tfs, v[4]);
	return 0;
}

/* One value file (@name below @dirfd) as its integer. */
static int read_value(int dirfd, const char *name, uint64_t *v)
{
	char text[64];
	const char *p = text;
	int ret;

	ret = lib_read_at(dirfd, name, text, sizeof(text));
	if (ret < 0)
		return ret;
	if (lib_parse_u64(&p, v) < 0 || strcmp(p, "\n") != 0)
		return -EIO;
	return 0;
}

static int read_times(const struct tfs *tfs, int dirfd, const char *name,
		      struct tfs_times *out)
{
	char text[LIB_SMALL_FILE];
	int ret;

	ret = lib_read_at(dirfd, name, text, sizeof(text));
	if (ret < 0)
		return ret;
	return lib_times_parse(tfs, text, out);
}

int tfs_task_times(const struct tfs *tfs, int dirfd, struct tfs_times *out)
{
	return read_times(tfs, dirfd, "times", out);
}

int tfs_task_cycles(const struct tfs *tfs, int dirfd, uint64_t *cycles)
{
	(void)tfs;
	return read_value(dirfd, "cycles", cycles);
}

static int task_open(const struct tfs *tfs, pid_t pid, pid_t tid, int thread,
		     int *dirfd)
{
	char path[96];
	int fd, ret;

	ret = lib_task_path(path, sizeof(path), pid, tid, thread, NULL);
	if (ret < 0)
		return ret;
	fd = openat(tfs->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*dirfd = fd;
	return 0;
}

int tfs_process_open(const struct tfs *tfs, pid_t pid, int *dirfd)
{
	return task_open(tfs, pid, 0, 0, dirfd);
}

int tfs_thread_open(const struct tfs *tfs, pid_t pid, pid_t tid, int *dirfd)
{
	return task_open(tfs, pid, tid, 1, dirfd);
}

static int times_by_number(const struct tfs *tfs, pid_t pid, pid_t tid,
			   int thread, struct tfs_times *out)
{
	char path[96];
	int ret;

	ret = lib_task_path(path, sizeof(path), pid, tid, thread, "times");
	return ret < 0 ? ret : read_times(tfs, tfs->root_fd, path, out);
}

static int cycles_by_number(const struct tfs *tfs, pid_t pid, pid_t tid,
			    int thread, uint64_t *cycles)
{
	char path[96];
	int ret;

	ret = lib_task_path(path, sizeof(path), pid, tid, thread, "cycles");
	return ret < 0 ? ret : read_value(tfs->root_fd, path, cycles);
}

int tfs_process_times(const struct tfs *tfs, pid_t pid, struct tfs_times *out)
{
	return times_by_number(tfs, pid, 0, 0, out);
}

int tfs_thread_times(const struct tfs *tfs, pid_t pid, pid_t tid,
		     struct tfs_times *out)
{
	return times_by_number(tfs, pid, tid, 1, out);
}

int tfs_process_cycles(const struct tfs *tfs, pid_t pid, uint64_t *cycles)
{
	return cycles_by_number(tfs, pid, 0, 0, cycles);
}

int tfs_thread_cycles(const struct tfs *tfs, pid_t pid, pid_t tid,
		      uint64_t *cycles)
{
	return cycles_by_number(tfs, pid, tid, 1, cycles);
}
