/*
 * api-check: every function of <timingfs.h> and <timingfs/windows.h>
 * held against the files of the mount they read, as cat reads them.
 *
 *   api-check MNT
 *
 * Run in the host's view and in a PID namespace (t/t2400). A counter
 * the library gives lies between a read of its file before and one
 * after; a creation time is the file's exactly; either way in Windows
 * units, whatever the mount's `units` (info says which). The Windows
 * layer finds the mount by $TIMINGFS_MOUNT, which this sets to MNT.
 */
#include <pthread.h>
#include <signal.h>

#include "lib-api.h"
#include "tap.h"
#include "timingfs/windows.h"

static struct tfs *tfs;

/* @got of a counter lies between @lo and @hi. */
static void check_between(uint64_t got, uint64_t lo, uint64_t hi,
			  const char *what)
{
	check(lo <= got && got <= hi, "%s: %llu in [%llu, %llu]", what,
	      (unsigned long long)got, (unsigned long long)lo,
	      (unsigned long long)hi);
}

/* @got against the task's times file before (@a) and after (@b). */
static void check_times(const struct tfs_times *got, const struct tfs_times *a,
			const struct tfs_times *b, const char *who)
{
	char what[128];

	snprintf(what, sizeof(what), "%s cycles", who);
	check_between(got->cycles, a->cycles, b->cycles, what);
	snprintf(what, sizeof(what), "%s kernel time", who);
	check_between(got->kernel_100ns, a->kernel_100ns, b->kernel_100ns,
		      what);
	snprintf(what, sizeof(what), "%s user time", who);
	check_between(got->user_100ns, a->user_100ns, b->user_100ns, what);
	check_u64(got->creation_filetime, a->creation_filetime,
		  "%s creation time is the file's", who);
	check_u64(got->exit_filetime, 0, "%s exit time 0 while it runs", who);
}

static void test_open(const char *mnt)
{
	struct tfs *t = NULL;

	check_int(tfs_open(mnt, &tfs), 0, "tfs_open of the mount");
	check_int(tfs_units_unix(tfs), api_unix, "tfs_units_unix is info's");
	check_int(tfs_open("/nonexistent-timingfs", &t), -ENOENT,
		  "tfs_open of no such path: -ENOENT");
	check_int(tfs_open("/", &t), -EPROTO,
		  "tfs_open of a directory that is no mount: -EPROTO");
	setenv("TIMINGFS_MOUNT", mnt, 1);
	if (check_int(tfs_open(NULL, &t), 0, "tfs_open(NULL): $TIMINGFS_MOUNT"))
		tfs_close(t);
	tfs_close(NULL);
}

/* A task by number, by pseudo-number and by a held directory. */
static void test_task(const char *dir, pid_t pid, pid_t tid, int thread)
{
	struct tfs_times a, b, got;
	char who[96];
	uint64_t c;
	int fd = -1;

	snprintf(who, sizeof(who), "%s by number", dir);
	api_times(dir, &a);
	check_int(thread ? tfs_thread_times(tfs, pid, tid, &got) :
			   tfs_process_times(tfs, pid, &got),
		  0, "%s: times", who);
	api_times(dir, &b);
	check_times(&got, &a, &b, who);

	check_int(thread ? tfs_thread_cycles(tfs, pid, tid, &c) :
			   tfs_process_cycles(tfs, pid, &c),
		  0, "%s: cycles", who);
	api_times(dir, &a);
	check_between(c, b.cycles, a.cycles, who);

	snprintf(who, sizeof(who), "%s by its directory", dir);
	check_int(thread ? tfs_thread_open(tfs, pid, tid, &fd) :
			   tfs_process_open(tfs, pid, &fd),
		  0, "%s: open", who);
	api_times(dir, &a);
	check_int(tfs_task_times(tfs, fd, &got), 0, "%s: times", who);
	api_times(dir, &b);
	check_times(&got, &a, &b, who);
	check_int(tfs_task_cycles(tfs, fd, &c), 0, "%s: cycles", who);
	api_times(dir, &a);
	check_between(c, b.cycles, a.cycles, who);
	close(fd);
}

/* A thread of this process that waits, for a thread other than ours. */
static int ready_pipe[2], go_pipe[2];
static pid_t parked_tid;

static void *park(void *arg)
{
	char c;

	(void)arg;
	parked_tid = api_gettid();
	api_burn(5);
	if (write(ready_pipe[1], "r", 1) != 1)
		return NULL;
	if (read(go_pipe[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static void test_tasks(void)
{
	char dir[96];
	pid_t pid = getpid(), tid = api_gettid();

	snprintf(dir, sizeof(dir), "proc/%d", (int)pid);
	test_task(dir, TFS_SELF, 0, 0);
	test_task(dir, pid, 0, 0);
	snprintf(dir, sizeof(dir), "proc/%d/threads/%d", (int)pid, (int)tid);
	test_task(dir, TFS_SELF, TFS_SELF, 1);
	test_task(dir, pid, tid, 1);
	snprintf(dir, sizeof(dir), "proc/%d/threads/%d", (int)pid,
		 (int)parked_tid);
	test_task(dir, pid, parked_tid, 1);
	test_task(dir, TFS_SELF, parked_tid, 1);
	check_int(tfs_process_times(tfs, -1, &(struct tfs_times){ 0 }), -EINVAL,
		  "a negative pid: -EINVAL");
}

/* Each group's size and idle cycles, against groups/N's files. */
static void test_group(unsigned int g)
{
	char rel[64], a[4096], b[4096], key[32];
	uint64_t cycles[1024];
	unsigned int n, size, i;
	int ok = 1;

	check_int(tfs_group_size(tfs, g, &size), 0, "group %u: size", g);
	snprintf(rel, sizeof(rel), "groups/%u/idle_cycles", g);
	api_cat(rel, a, sizeof(a));
	n = 1024;
	check_int(tfs_group_idle_cycles(tfs, g, cycles, &n), 0,
		  "group %u: idle cycles", g);
	api_cat(rel, b, sizeof(b));
	check_int(n, size, "group %u: a value per processor", g);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "cpu%u", i);
		ok &= api_key(a, key) <= cycles[i] &&
		      cycles[i] <= api_key(b, key);
	}
	check(ok, "group %u: each processor's idle cycles between reads", g);
	n = size - 1;
	check_int(tfs_group_idle_cycles(tfs, g, cycles, &n), -ENOBUFS,
		  "group %u: room for one less: -ENOBUFS", g);
	check_int(n, size, "group %u: ... and the count needed", g);
	n = 0;
	check_int(tfs_group_idle_cycles(tfs, g, NULL, &n), -ENOBUFS,
		  "group %u: no buffer: -ENOBUFS", g);
}

static void test_groups(void)
{
	char rel[64], link[32];
	unsigned int n = 0, g, cur = 99999;
	ssize_t len;

	check_int(tfs_group_count(tfs, &n), 0, "tfs_group_count");
	for (g = 0;; g++) {
		snprintf(rel, sizeof(rel), "%s/groups/%u", api_mnt, g);
		if (access(rel, F_OK) < 0)
			break;
	}
	check_int(n, g, "tfs_group_count: the directories of groups/");
	for (g = 0; g < n; g++)
		test_group(g);
	check_int(tfs_group_size(tfs, n, &g), -EINVAL,
		  "a group out of range: -EINVAL");
	check_int(tfs_group_idle_cycles(tfs, n, NULL, &g), -EINVAL,
		  "idle cycles of a group out of range: -EINVAL");
	check_int(tfs_current_group(tfs, &cur), 0, "tfs_current_group");
	snprintf(rel, sizeof(rel), "%s/groups/current", api_mnt);
	len = readlink(rel, link, sizeof(link) - 1);
	link[len > 0 ? len : 0] = '\0';
	/* The thread may move between the two: each a group there is. */
	check(cur < n && (unsigned int)atoi(link) < n && len > 0,
	      "tfs_current_group: %u, groups/current -> %s", cur, link);
}

/* A FILETIME as one number. */
static uint64_t ft(const FILETIME *f)
{
	return (uint64_t)f->dwHighDateTime << 32 | f->dwLowDateTime;
}

/* GetProcessTimes or GetThreadTimes of @h against @dir's times. */
static void check_win_times(HANDLE h, int thread, const char *dir,
			    const char *who)
{
	FILETIME c, e, k, u;
	struct tfs_times a, b, got;
	BOOL ok;

	api_times(dir, &a);
	ok = thread ? GetThreadTimes(h, &c, &e, &k, &u) :
		      GetProcessTimes(h, &c, &e, &k, &u);
	api_times(dir, &b);
	check(ok, "%s: Get%sTimes", who, thread ? "Thread" : "Process");
	got.creation_filetime = ft(&c);
	got.exit_filetime = ft(&e);
	got.kernel_100ns = ft(&k);
	got.user_100ns = ft(&u);
	got.cycles = a.cycles;
	check_times(&got, &a, &b, who);
}

/* Query*CycleTime of @h against @dir's cycles. */
static void check_win_cycles(HANDLE h, int thread, const char *dir,
			     const char *who)
{
	struct tfs_times a, b;
	ULONG64 c = 0;
	BOOL ok;

	api_times(dir, &a);
	ok = thread ? QueryThreadCycleTime(h, &c) :
		      QueryProcessCycleTime(h, &c);
	api_times(dir, &b);
	check(ok, "%s: Query%sCycleTime", who, thread ? "Thread" : "Process");
	check_between(c, a.cycles, b.cycles, who);
}

/* A call that must fail with @err: FALSE (or NULL) and GetLastError. */
static void check_fails(BOOL ok, DWORD err, const char *what)
{
	DWORD got = GetLastError();

	check(!ok && got == err, "%s: FALSE, error %u (got %s, %u)", what,
	      (unsigned int)err, ok ? "TRUE" : "FALSE", (unsigned int)got);
}

static void test_win_handles(pid_t other_tid)
{
	char pdir[64], tdir[96], odir[96];
	HANDLE p, t;
	ULONG64 c;

	snprintf(pdir, sizeof(pdir), "proc/%d", (int)getpid());
	snprintf(tdir, sizeof(tdir), "%s/threads/%d", pdir, (int)api_gettid());
	snprintf(odir, sizeof(odir), "%s/threads/%d", pdir, (int)other_tid);
	check_win_times(GetCurrentProcess(), 0, pdir, "GetCurrentProcess()");
	check_win_cycles(GetCurrentProcess(), 0, pdir, "GetCurrentProcess()");
	check_win_times(GetCurrentThread(), 1, tdir, "GetCurrentThread()");
	check_win_cycles(GetCurrentThread(), 1, tdir, "GetCurrentThread()");
	p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, getpid());
	check(p != NULL, "OpenProcess of this process");
	check_win_times(p, 0, pdir, "OpenProcess()");
	check_win_cycles(p, 0, pdir, "OpenProcess()");
	t = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, other_tid);
	check(t != NULL, "OpenThread of another thread of this process");
	check_win_times(t, 1, odir, "OpenThread()");
	check_win_cycles(t, 1, odir, "OpenThread()");
	check_fails(QueryThreadCycleTime(p, &c), ERROR_INVALID_HANDLE,
		    "QueryThreadCycleTime of a process handle");
	check_fails(QueryProcessCycleTime(t, &c), ERROR_INVALID_HANDLE,
		    "QueryProcessCycleTime of a thread handle");
	check_fails(QueryThreadCycleTime(GetCurrentProcess(), &c),
		    ERROR_INVALID_HANDLE,
		    "QueryThreadCycleTime of GetCurrentProcess()");
	check(CloseHandle(p) && CloseHandle(t), "CloseHandle of both");
	check_fails(QueryProcessCycleTime(p, &c), ERROR_INVALID_HANDLE,
		    "a closed process handle");
	check_fails(QueryThreadCycleTime(t, &c), ERROR_INVALID_HANDLE,
		    "a closed thread handle");
	check_fails(CloseHandle(p), ERROR_INVALID_HANDLE,
		    "CloseHandle of a closed handle");
	check(CloseHandle(GetCurrentThread()),
	      "CloseHandle of a pseudo-handle: TRUE");
}

/* Handles never made: NULL, small numbers, a descriptor's number, a
 * closed handle's slot with its generation changed. */
static void test_win_forged(void)
{
	HANDLE p = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, getpid());
	uintptr_t v = (uintptr_t)p;
	HANDLE forged[] = { NULL,
			    (HANDLE)4,
			    (HANDLE)(uintptr_t)3,
			    (HANDLE)(uintptr_t)0x12345678,
			    (HANDLE)(v + ((uintptr_t)1 << 16)),
			    (HANDLE)(v + 4),
			    (HANDLE)(intptr_t)-3 };
	ULONG64 c;
	unsigned int i;
	int bad = 0;

	for (i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		SetLastError(0);
		if (QueryProcessCycleTime(forged[i], &c) ||
		    GetLastError() != ERROR_INVALID_HANDLE) {
			printf("# forged %p answered\n", forged[i]);
			bad++;
		}
	}
	check(p && !bad, "forged handles: ERROR_INVALID_HANDLE");
	CloseHandle(p);
}

/* A number no task has, in the caller's namespace. */
static DWORD free_number(void)
{
	DWORD n;

	for (n = 4000000; n > 1000; n -= 997)
		if (kill((pid_t)n, 0) < 0 && errno == ESRCH)
			return n;
	return 0;
}

static void test_win_open_errors(void)
{
	DWORD n = free_number();

	check_fails(OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, 0) != NULL,
		    ERROR_INVALID_PARAMETER, "OpenProcess(0)");
	check_fails(OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, n) != NULL,
		    ERROR_INVALID_PARAMETER, "OpenProcess of no task");
	check_fails(OpenThread(THREAD_QUERY_INFORMATION, FALSE, n) != NULL,
		    ERROR_INVALID_PARAMETER, "OpenThread of no task");
}

/* QueryIdleProcessorCycleTime(Ex): the buffer's sizes, the values. */
static void test_win_idle(unsigned int groups)
{
	ULONG64 buf[1024];
	char rel[64], a[4096], b[4096], key[32];
	unsigned int size = 0, g = 0, i;
	ULONG len;
	int ok = 1;

	tfs_current_group(tfs, &g);
	tfs_group_size(tfs, g, &size);
	len = 0;
	check_fails(QueryIdleProcessorCycleTime(&len, NULL),
		    ERROR_INSUFFICIENT_BUFFER, "idle: a NULL buffer");
	check_int(len, size * 8, "idle: NULL buffer: BufferLength needed");
	len = size * 8 - 4;
	buf[0] = 12345;
	check_fails(QueryIdleProcessorCycleTime(&len, buf),
		    ERROR_INSUFFICIENT_BUFFER, "idle: a short buffer");
	check(len == size * 8 && buf[0] == 12345,
	      "idle: short buffer: BufferLength needed, buffer untouched");
	len = size * 8;
	snprintf(rel, sizeof(rel), "groups/%u/idle_cycles", g);
	api_cat(rel, a, sizeof(a));
	check(QueryIdleProcessorCycleTime(&len, buf), "idle: an exact buffer");
	api_cat(rel, b, sizeof(b));
	check_int(len, size * 8, "idle: exact buffer: BufferLength written");
	for (i = 0; i < size; i++) {
		snprintf(key, sizeof(key), "cpu%u", i);
		ok &= api_key(a, key) <= buf[i] && buf[i] <= api_key(b, key);
	}
	check(ok, "idle: each processor's between reads of its group's file");
	len = sizeof(buf);
	check(QueryIdleProcessorCycleTimeEx(0, &len, buf) && len > 0,
	      "idle Ex: group 0, a larger buffer: the bytes written");
	check_fails(QueryIdleProcessorCycleTimeEx((USHORT)groups, &len, buf),
		    ERROR_INVALID_PARAMETER, "idle Ex: a group out of range");
	check_fails(QueryIdleProcessorCycleTimeEx(0, NULL, buf),
		    ERROR_INVALID_PARAMETER, "idle Ex: no BufferLength");
}

/* The last error is the calling thread's own. */
static void *set_error(void *arg)
{
	SetLastError(ERROR_ACCESS_DENIED);
	*(DWORD *)arg = GetLastError();
	return NULL;
}

static void test_win_last_error(void)
{
	pthread_t th;
	DWORD other = 0;

	SetLastError(ERROR_INVALID_PARAMETER);
	pthread_create(&th, NULL, set_error, &other);
	pthread_join(th, NULL);
	check(other == ERROR_ACCESS_DENIED &&
		      GetLastError() == ERROR_INVALID_PARAMETER,
	      "GetLastError is the calling thread's");
}

/* Threads that open, read and close handles at once, and one handle
 * shared by all: every call answers, and a handle closed by one thread
 * is refused to every other. */
#define RACERS 4
#define RACE_CALLS 200

static HANDLE shared_handle;

static void *race(void *arg)
{
	long bad = 0;
	ULONG64 c;
	HANDLE h;
	int i;

	(void)arg;
	for (i = 0; i < RACE_CALLS; i++) {
		h = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, getpid());
		bad += !h || !QueryProcessCycleTime(h, &c) || !CloseHandle(h);
		bad += !QueryProcessCycleTime(shared_handle, &c);
		bad += !QueryThreadCycleTime(GetCurrentThread(), &c);
	}
	return (void *)bad;
}

static void test_win_threads(void)
{
	pthread_t th[RACERS];
	void *bad;
	long sum = 0;
	ULONG64 c;
	int i;

	shared_handle = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, getpid());
	for (i = 0; i < RACERS; i++)
		pthread_create(&th[i], NULL, race, NULL);
	for (i = 0; i < RACERS; i++) {
		pthread_join(th[i], &bad);
		sum += (long)bad;
	}
	check(sum == 0, "%d threads, %d calls each at once: %ld failed", RACERS,
	      RACE_CALLS * 4, sum);
	CloseHandle(shared_handle);
	check_fails(QueryProcessCycleTime(shared_handle, &c),
		    ERROR_INVALID_HANDLE, "the shared handle, closed");
}

static void test_windows(pid_t other_tid)
{
	unsigned int n = 0;

	tfs_group_count(tfs, &n);
	check_int(GetActiveProcessorGroupCount(), n,
		  "GetActiveProcessorGroupCount");
	test_win_handles(other_tid);
	test_win_forged();
	test_win_open_errors();
	test_win_idle(n);
	test_win_last_error();
	test_win_threads();
}

int main(int argc, char **argv)
{
	pthread_t th;
	char c;

	if (argc != 2) {
		fprintf(stderr, "usage: api-check MNT\n");
		return 2;
	}
	api_mnt = argv[1];
	if (api_units() < 0)
		return tap_skip_all("no mount to read");
	if (pipe(ready_pipe) < 0 || pipe(go_pipe) < 0 ||
	    pthread_create(&th, NULL, park, NULL) != 0 ||
	    read(ready_pipe[0], &c, 1) != 1)
		return 1;
	test_open(api_mnt);
	test_tasks();
	test_groups();
	test_windows(parked_tid);
	tfs_close(tfs);
	if (write(go_pipe[1], "x", 1) == 1)
		pthread_join(th, NULL);
	return tap_done();
}
