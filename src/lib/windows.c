/*
 * windows.c: the Windows timing APIs of <timingfs/windows.h> on the
 * native calls of libtimingfs. Each function takes the process's mount
 * (opened at the first call, kept for the process's life), turns its
 * HANDLE into a task's directory (handles.c) or the caller's own path
 * for a pseudo-handle, and turns -errno into the calling thread's last
 * error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handles.h"
#include "lib-internal.h"
#define TIMINGFS_NO_WINDOWS_NAMES
#include "timingfs/windows.h"

#define PSEUDO_PROCESS ((HANDLE)(intptr_t)-1)
#define PSEUDO_THREAD ((HANDLE)(intptr_t)-2)

static __thread DWORD last_error;
static struct tfs *_Atomic process_mount;
static pthread_mutex_t mount_lock = PTHREAD_MUTEX_INITIALIZER;

DWORD tfsGetLastError(void)
{
	return last_error;
}

void tfsSetLastError(DWORD code)
{
	last_error = code;
}

/* -errno as a Windows error, FALSE for the caller to return. */
static BOOL fail(int err)
{
	switch (err) {
	case -EACCES:
	case -EPERM:
		last_error = ERROR_ACCESS_DENIED;
		break;
	case -EBADF:
		last_error = ERROR_INVALID_HANDLE;
		break;
	case -ENOENT:
	case -ESRCH:
	case -EINVAL:
		last_error = ERROR_INVALID_PARAMETER;
		break;
	case -ENOBUFS:
		last_error = ERROR_INSUFFICIENT_BUFFER;
		break;
	case -EMFILE:
	case -ENFILE:
		last_error = ERROR_TOO_MANY_OPEN_FILES;
		break;
	case -ENOMEM:
		last_error = ERROR_NOT_ENOUGH_MEMORY;
		break;
	default:
		last_error = ERROR_GEN_FAILURE;
	}
	return FALSE;
}

/* The process's mount: opened once, at the first call that succeeds. */
static struct tfs *mount_get(void)
{
	struct tfs *t = process_mount;
	int ret;

	if (t)
		return t;
	pthread_mutex_lock(&mount_lock);
	t = process_mount;
	if (!t) {
		ret = tfs_open(NULL, &t);
		if (ret == 0)
			process_mount = t;
		else
			last_error = ret == -ENOENT ? ERROR_FILE_NOT_FOUND :
						      ERROR_GEN_FAILURE;
	}
	pthread_mutex_unlock(&mount_lock);
	return t;
}

/* The times (or, with @cycles, the cycles alone) of the task @h names. */
static int task_read(HANDLE h, enum handle_kind kind, struct tfs_times *times,
		     uint64_t *cycles)
{
	struct tfs *t = mount_get();
	int thread = kind == HANDLE_THREAD, fd, ret;

	if (!t)
		return -ENODEV;
	if (h == (thread ? PSEUDO_THREAD : PSEUDO_PROCESS)) {
		if (cycles)
			return thread ? tfs_thread_cycles(t, TFS_SELF, TFS_SELF,
							  cycles) :
					tfs_process_cycles(t, TFS_SELF, cycles);
		return thread ? tfs_thread_times(t, TFS_SELF, TFS_SELF, times) :
				tfs_process_times(t, TFS_SELF, times);
	}
	if (handle_get(h, kind, &fd) < 0)
		return -EBADF;
	ret = cycles ? tfs_task_cycles(t, fd, cycles) :
		       tfs_task_times(t, fd, times);
	handle_put(h);
	/* A task no longer kept: the handle names nothing now. */
	return ret == -ENOENT ? -EBADF : ret;
}

/* A failure of task_read() as the last error: the mount's own
 * failure was said by mount_get(). */
static BOOL task_fail(int ret)
{
	return ret == -ENODEV ? FALSE : fail(ret);
}

static BOOL cycle_time(HANDLE h, enum handle_kind kind, PULONG64 cycles)
{
	uint64_t v;
	int ret;

	if (!cycles)
		return fail(-EINVAL);
	ret = task_read(h, kind, NULL, &v);
	if (ret < 0)
		return task_fail(ret);
	*cycles = v;
	return TRUE;
}

BOOL tfsQueryThreadCycleTime(HANDLE ThreadHandle, PULONG64 CycleTime)
{
	return cycle_time(ThreadHandle, HANDLE_THREAD, CycleTime);
}

BOOL tfsQueryProcessCycleTime(HANDLE ProcessHandle, PULONG64 CycleTime)
{
	return cycle_time(ProcessHandle, HANDLE_PROCESS, CycleTime);
}

static void filetime_set(LPFILETIME ft, uint64_t v)
{
	ft->dwLowDateTime = (DWORD)v;
	ft->dwHighDateTime = (DWORD)(v >> 32);
}

static BOOL task_times(HANDLE h, enum handle_kind kind, LPFILETIME creation,
		       LPFILETIME exit_time, LPFILETIME kernel, LPFILETIME user)
{
	struct tfs_times t;
	int ret;

	if (!creation || !exit_time || !kernel || !user)
		return fail(-EINVAL);
	ret = task_read(h, kind, &t, NULL);
	if (ret < 0)
		return task_fail(ret);
	filetime_set(creation, t.creation_filetime);
	filetime_set(exit_time, t.exit_filetime);
	filetime_set(kernel, t.kernel_100ns);
	filetime_set(user, t.user_100ns);
	return TRUE;
}

BOOL tfsGetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime,
			LPFILETIME lpExitTime, LPFILETIME lpKernelTime,
			LPFILETIME lpUserTime)
{
	return task_times(hProcess, HANDLE_PROCESS, lpCreationTime, lpExitTime,
			  lpKernelTime, lpUserTime);
}

BOOL tfsGetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime,
		       LPFILETIME lpExitTime, LPFILETIME lpKernelTime,
		       LPFILETIME lpUserTime)
{
	return task_times(hThread, HANDLE_THREAD, lpCreationTime, lpExitTime,
			  lpKernelTime, lpUserTime);
}

BOOL tfsQueryIdleProcessorCycleTimeEx(USHORT Group, PULONG BufferLength,
				      PULONG64 ProcessorIdleCycleTime)
{
	uint64_t *out = (uint64_t *)ProcessorIdleCycleTime;
	struct tfs *t = mount_get();
	unsigned int n;
	int ret;

	if (!t)
		return FALSE;
	if (!BufferLength)
		return fail(-EINVAL);
	n = *BufferLength / sizeof(ULONG64);
	ret = tfs_group_idle_cycles(t, Group, out, &n);
	if (ret == 0 || ret == -ENOBUFS)
		*BufferLength = (ULONG)(n * sizeof(ULONG64));
	return ret < 0 ? fail(ret) : TRUE;
}

BOOL tfsQueryIdleProcessorCycleTime(PULONG BufferLength,
				    PULONG64 ProcessorIdleCycleTime)
{
	struct tfs *t = mount_get();
	unsigned int group;
	int ret;

	if (!t)
		return FALSE;
	ret = tfs_current_group(t, &group);
	if (ret < 0)
		return fail(ret);
	return tfsQueryIdleProcessorCycleTimeEx((USHORT)group, BufferLength,
						ProcessorIdleCycleTime);
}

WORD tfsGetActiveProcessorGroupCount(void)
{
	struct tfs *t = mount_get();
	unsigned int n;

	if (!t)
		return 0;
	tfs_group_count(t, &n);
	return (WORD)n;
}

HANDLE tfsGetCurrentProcess(void)
{
	return PSEUDO_PROCESS;
}

HANDLE tfsGetCurrentThread(void)
{
	return PSEUDO_THREAD;
}

/*
 * A task the mount does not show: hidden from the caller (it exists,
 * as kill(2) with no signal says in the caller's PID namespace, which
 * is the mount's view of it) or not there at all.
 */
static BOOL open_fail(int ret, DWORD id)
{
	if (ret == -ENOENT && (kill((pid_t)id, 0) == 0 || errno == EPERM))
		ret = -EACCES;
	fail(ret);
	return FALSE;
}

static HANDLE handle_of(int fd, enum handle_kind kind)
{
	HANDLE h;

	if (handle_new(fd, kind, &h) < 0) {
		close(fd);
		fail(-EMFILE);
		return NULL;
	}
	return h;
}

HANDLE tfsOpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle,
		      DWORD dwProcessId)
{
	struct tfs *t = mount_get();
	int fd, ret;

	(void)dwDesiredAccess;
	(void)bInheritHandle;
	if (!t)
		return NULL;
	if (dwProcessId == 0 || dwProcessId > INT32_MAX) {
		fail(-EINVAL);
		return NULL;
	}
	ret = tfs_process_open(t, (pid_t)dwProcessId, &fd);
	if (ret < 0) {
		open_fail(ret, dwProcessId);
		return NULL;
	}
	return handle_of(fd, HANDLE_PROCESS);
}

/* The process of thread @tid as the caller's /proc says, or 0. */
static pid_t tgid_of_proc(pid_t tid)
{
	char path[48], text[2048], *p;
	int len;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	len = lib_read_at(AT_FDCWD, path, text, sizeof(text));
	if (len < 0)
		return 0;
	p = strstr(text, "\nTgid:");
	return p ? (pid_t)atoi(p + 6) : 0;
}

/* The process of thread @tid as the mount's proc/table says, or 0: read
 * a block at a time, a line that spans two blocks carried over. */
static pid_t tgid_of_table(const struct tfs *t, pid_t tid)
{
	char buf[4096];
	size_t have = 0;
	ssize_t n;
	off_t off = 0;
	pid_t found = 0;
	int fd;

	fd = openat(t->root_fd, "proc/table", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (!found &&
	       (n = pread(fd, buf + have, sizeof(buf) - have - 1, off)) > 0) {
		char *line = buf, *nl;
		long p, d;

		off += n;
		have += (size_t)n;
		buf[have] = '\0';
		while (!found && (nl = strchr(line, '\n'))) {
			if (sscanf(line, "%ld %ld", &p, &d) == 2 && d == tid)
				found = (pid_t)p;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			break;
	}
	close(fd);
	return found;
}

HANDLE tfsOpenThread(DWORD dwDesiredAccess, BOOL bInheritHandle,
		     DWORD dwThreadId)
{
	struct tfs *t = mount_get();
	pid_t tid = (pid_t)dwThreadId, pid;
	int fd, ret = -ENOENT;

	(void)dwDesiredAccess;
	(void)bInheritHandle;
	if (!t)
		return NULL;
	if (dwThreadId == 0 || dwThreadId > INT32_MAX) {
		fail(-EINVAL);
		return NULL;
	}
	/* The mount names a thread by its process: the caller's procfs
	 * says which, and the mount's own table where that procfs is of
	 * another namespace. The open checks it: a thread named below a
	 * process that is not its own is not found. */
	pid = tgid_of_proc(tid);
	if (pid > 0)
		ret = tfs_thread_open(t, pid, tid, &fd);
	if (ret == -ENOENT) {
		pid = tgid_of_table(t, tid);
		if (pid > 0)
			ret = tfs_thread_open(t, pid, tid, &fd);
	}
	if (ret < 0) {
		open_fail(ret, dwThreadId);
		return NULL;
	}
	return handle_of(fd, HANDLE_THREAD);
}

BOOL tfsCloseHandle(HANDLE hObject)
{
	if (hObject == PSEUDO_PROCESS || hObject == PSEUDO_THREAD)
		return TRUE;
	if (handle_close(hObject) < 0)
		return fail(-EBADF);
	return TRUE;
}
