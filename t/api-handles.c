/*
 * api-handles: what a HANDLE of libtimingfs pins, and what it may not
 * reach.
 *
 *   api-handles MNT reuse UID    (root) in a PID namespace of its own, a
 *       thread and a process, each held by a handle, exit; their numbers
 *       are given to a process of UID that burns more CPU (ns_last_pid).
 *       The handles give the exited task's final values and its exit time
 *       (between the moment it was told to end and its reaping), never
 *       the new task's, which a fresh OpenProcess of the number gives.
 *   api-handles MNT denied PID TID    (a user that may not see PID, of
 *       which TID is a thread): OpenProcess and OpenThread fail with
 *       ERROR_ACCESS_DENIED, a number no task has ERROR_INVALID_PARAMETER.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <grp.h>

#include "lib-api.h"
#include "tap.h"
#include "timingfs/windows.h"

/* A task of a trial: how it is made, told to end and reaped. */
struct victim {
	int thread;
	pid_t nr; /* its number in this namespace */
	int ready[2], go[2];
	pthread_t th;
};

static void *victim_thread(void *arg)
{
	struct victim *v = arg;
	char c;

	v->nr = api_gettid();
	api_burn(10);
	if (write(v->ready[1], "r", 1) != 1 || read(v->go[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

static int victim_start(struct victim *v)
{
	char c;

	if (pipe(v->ready) < 0 || pipe(v->go) < 0)
		return -1;
	if (v->thread) {
		if (pthread_create(&v->th, NULL, victim_thread, v) != 0)
			return -1;
	} else {
		v->nr = fork();
		if (v->nr < 0)
			return -1;
		if (v->nr == 0) {
			api_burn(10);
			if (write(v->ready[1], "r", 1) != 1 ||
			    read(v->go[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
	}
	return read(v->ready[0], &c, 1) == 1 ? 0 : -1;
}

static void victim_end(struct victim *v)
{
	if (write(v->go[1], "x", 1) != 1)
		return;
	if (v->thread)
		pthread_join(v->th, NULL);
	else
		waitpid(v->nr, NULL, 0);
}

static uint64_t ft(const FILETIME *f)
{
	return (uint64_t)f->dwHighDateTime << 32 | f->dwLowDateTime;
}

/* The five values through handle @h: 0, or -1 with the error said. */
static int handle_times(HANDLE h, int thread, struct tfs_times *t)
{
	FILETIME c, e, k, u;
	ULONG64 cycles;
	BOOL ok;

	ok = thread ? GetThreadTimes(h, &c, &e, &k, &u) &&
			      QueryThreadCycleTime(h, &cycles) :
		      GetProcessTimes(h, &c, &e, &k, &u) &&
			      QueryProcessCycleTime(h, &cycles);
	if (!ok) {
		printf("# through the handle: error %u\n",
		       (unsigned int)GetLastError());
		return -1;
	}
	t->cycles = cycles;
	t->kernel_100ns = ft(&k);
	t->user_100ns = ft(&u);
	t->creation_filetime = ft(&c);
	t->exit_filetime = ft(&e);
	return 0;
}

/* A process of @uid that takes the number @nr (ns_last_pid), burns
 * 100 ms and waits for a signal: its pid, or -1. */
static pid_t take_number(pid_t nr, uid_t uid, int *ready)
{
	pid_t p = -1;
	int tries, fd;
	char c;

	for (tries = 0; tries < 2000 && p != nr; tries++) {
		if (p > 0) {
			kill(p, SIGKILL);
			waitpid(p, NULL, 0);
			usleep(1000);
		}
		fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		if (fd < 0 || dprintf(fd, "%d", (int)nr - 1) < 0)
			return -1;
		close(fd);
		p = fork();
		if (p == 0) {
			if (setgroups(0, NULL) < 0 ||
			    setresgid(uid, uid, uid) ||
			    setresuid(uid, uid, uid))
				_exit(1);
			api_burn(100);
			if (write(ready[1], "r", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
	}
	if (p != nr || read(ready[0], &c, 1) != 1)
		return -1;
	return p;
}

/* Up to 10 s for the handle to give an exit time (the daemon files the
 * kernel's exit record a moment after the task ends). */
static int wait_exited(HANDLE h, int thread, struct tfs_times *t)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (handle_times(h, thread, t) < 0)
			return -1;
		if (t->exit_filetime)
			return 0;
		usleep(10000);
	}
	printf("# waited 10 s for an exit time\n");
	return -1;
}

static void check_same(const struct tfs_times *got,
		       const struct tfs_times *want, const char *who)
{
	check(got->cycles == want->cycles &&
		      got->kernel_100ns == want->kernel_100ns &&
		      got->user_100ns == want->user_100ns &&
		      got->creation_filetime == want->creation_filetime &&
		      got->exit_filetime == want->exit_filetime,
	      "%s: the exited task's final values (cycles %llu, got %llu)", who,
	      (unsigned long long)want->cycles,
	      (unsigned long long)got->cycles);
}

/* The new task's values, by a fresh OpenProcess of the number. */
static void check_new(pid_t nr, const struct tfs_times *old, const char *who)
{
	HANDLE h = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, (DWORD)nr);
	struct tfs_times t;

	check(h && handle_times(h, 0, &t) == 0 && t.exit_filetime == 0 &&
		      t.creation_filetime != old->creation_filetime &&
		      t.cycles > old->cycles,
	      "%s: a fresh OpenProcess gives the new task", who);
	CloseHandle(h);
}

static void trial(int thread, uid_t uid)
{
	const char *who = thread ? "thread" : "process";
	struct victim v = { .thread = thread };
	struct tfs_times alive, final, again;
	uint64_t told, reaped;
	int ready[2];
	HANDLE h;
	pid_t n;

	if (!check(victim_start(&v) == 0, "%s: started", who))
		return;
	h = thread ? OpenThread(THREAD_QUERY_INFORMATION, FALSE, (DWORD)v.nr) :
		     OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, (DWORD)v.nr);
	check(h != NULL, "%s %d: a handle", who, (int)v.nr);
	check(handle_times(h, thread, &alive) == 0 && !alive.exit_filetime,
	      "%s: alive, no exit time", who);
	told = api_now_filetime();
	victim_end(&v);
	reaped = api_now_filetime();
	check(wait_exited(h, thread, &final) == 0, "%s: exited", who);
	check(told <= final.exit_filetime && final.exit_filetime <= reaped,
	      "%s: exit time %llu between told %llu and reaped %llu", who,
	      (unsigned long long) final.exit_filetime,
	      (unsigned long long)told, (unsigned long long)reaped);
	check(final.creation_filetime == alive.creation_filetime &&
		      final.cycles >= alive.cycles,
	      "%s: the same task, its final counters", who);
	if (pipe(ready) < 0)
		return;
	n = take_number(v.nr, uid, ready);
	if (!check(n == v.nr, "%s: number %d taken by a task of uid %u", who,
		   (int)v.nr, (unsigned int)uid))
		return;
	check(handle_times(h, thread, &again) == 0, "%s: the handle answers",
	      who);
	check_same(&again, &final, who);
	check_new(n, &final, who);
	check(CloseHandle(h), "%s: closed", who);
	kill(n, SIGKILL);
	waitpid(n, NULL, 0);
}

static int reuse(uid_t uid)
{
	int status;
	pid_t p;

	if (unshare(CLONE_NEWPID) < 0)
		return tap_skip_all("cannot make a PID namespace");
	fflush(stdout);
	p = fork();
	if (p < 0)
		return 1;
	if (p == 0) {
		/* The namespace's init: its tasks are ours alone. */
		trial(1, uid);
		trial(0, uid);
		exit(tap_done());
	}
	if (waitpid(p, &status, 0) < 0 || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

static int denied(pid_t pid, pid_t tid)
{
	struct tfs *t;
	HANDLE own;
	DWORD err;
	int fd = -1, ret;

	if (!check_int(tfs_open(api_mnt, &t), 0, "tfs_open"))
		return tap_done();
	ret = tfs_process_open(t, pid, &fd);
	check(ret == -ENOENT || ret == -EACCES,
	      "tfs_process_open of a hidden process: -ENOENT or -EACCES (%d)",
	      ret);
	check(tfs_process_times(t, pid, &(struct tfs_times){ 0 }) < 0,
	      "tfs_process_times of a hidden process: an error");
	SetLastError(0);
	own = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, (DWORD)pid);
	err = GetLastError();
	check(!own && err == ERROR_ACCESS_DENIED,
	      "OpenProcess of a hidden process: ERROR_ACCESS_DENIED (%u)",
	      (unsigned int)err);
	SetLastError(0);
	own = OpenThread(THREAD_QUERY_INFORMATION, FALSE, (DWORD)tid);
	err = GetLastError();
	check(!own && err == ERROR_ACCESS_DENIED,
	      "OpenThread of a hidden thread: ERROR_ACCESS_DENIED (%u)",
	      (unsigned int)err);
	own = OpenProcess(PROCESS_QUERY_INFORMATION, FALSE, getpid());
	check(own != NULL, "OpenProcess of the caller's own process");
	CloseHandle(own);
	tfs_close(t);
	return tap_done();
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: api-handles MNT reuse UID | "
				"MNT denied PID TID\n");
		return 2;
	}
	api_mnt = argv[1];
	setenv("TIMINGFS_MOUNT", api_mnt, 1);
	if (api_units() < 0)
		return tap_skip_all("no mount to read");
	if (strcmp(argv[2], "reuse") == 0 && argc == 4)
		return reuse((uid_t)atol(argv[3]));
	if (strcmp(argv[2], "denied") == 0 && argc == 5)
		return denied((pid_t)atol(argv[3]), (pid_t)atol(argv[4]));
	return 2;
}
