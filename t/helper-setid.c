/*
 * helper-setid: a task's number given to another with clone3(set_tid)
 * as soon as the first is reaped, for the tests of identities.
 *
 *   helper-setid MNT process|thread DEPTH TRIALS
 *
 * In DEPTH PID namespaces of its own below the caller's (0: the
 * caller's), each trial makes a task A (a process, or a thread of the
 * helper) that burns no CPU to speak of, and holds every kind of name of
 * it under MNT: a kept descriptor of its cycles and user_time files, an
 * O_PATH descriptor of its user_time file, a descriptor of its
 * directory and a working directory there. A ends and is reaped; a task
 * B takes A's number at every level (clone3 set_tid) and burns 60 ms of
 * CPU. Then every name of A is asked again: a pread at 0 of each kept
 * descriptor, a reopen through /proc/self/fd, an openat on the
 * directory, an open from the working directory. Each must give A's
 * values (less than 30 ms of CPU: cycles by info's tsc_hz, user_time in
 * 100 ns units), or ENOENT.
 *
 * Prints "trial N ok GAP" (GAP: microseconds from A's reaping, or the
 * last try that found its number taken, to B's start) or "trial N BAD: ..." for each, then "passed P of T, gaps
 * under 1 ms G"; exits 0 when every trial passed. x86_64 only (a thread
 * of clone3 needs its own entry); elsewhere it prints "skip" and exits 77.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LEVELS_MAX 8
#define STACK_BYTES (256 * 1024)

static const char *mnt;
static double tsc_hz;

/* What a task of a trial is told and tells. */
struct task_arg {
	const char *name; /* "idA" or "idB" */
	int tell; /* it writes its NSpid line here, once named */
	int wait; /* it ends once this is readable */
	int burn_ms; /* CPU it burns first */
};

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Raw system calls only: a thread of ours shares the helper's TLS. */
static void task_body(const struct task_arg *a, int thread)
{
	char buf[4096], *p, *e;
	uint64_t until;
	long n, fd;

	syscall(SYS_prctl, PR_SET_NAME, a->name, 0, 0, 0);
	until = now_ns(CLOCK_THREAD_CPUTIME_ID) + a->burn_ms * 1000000ull;
	/* In user mode: the clock is read once in a while. */
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until)
		for (volatile int i = 0; i < 200000; i++)
			;
	fd = syscall(SYS_open,
		     thread ? "/proc/thread-self/status" : "/proc/self/status",
		     O_RDONLY);
	n = fd < 0 ? -1 : syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	syscall(SYS_close, fd);
	buf[n > 0 ? n : 0] = '\0';
	p = strstr(buf, "NSpid:");
	e = p ? strchr(p, '\n') : NULL;
	if (p && e)
		syscall(SYS_write, a->tell, p, e - p + 1);
	else
		syscall(SYS_write, a->tell, "NSpid:\n", 7);
	syscall(SYS_read, a->wait, buf, 1);
}

static int thread_main(void *arg)
{
	task_body(arg, 1);
	return 0;
}

#if defined(__x86_64__)
/* clone3 of a thread that runs @fn(@arg) on its own stack, then exits. */
static long clone3_thread(struct clone_args *ca, int (*fn)(void *), void *arg)
{
	register long r8 __asm__("r8") = (long)fn;
	register long r9 __asm__("r9") = (long)arg;
	long ret;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r9, %%rdi\n\t"
			 "call *%%r8\n\t"
			 "mov $60, %%eax\n\t"
			 "xor %%edi, %%edi\n\t"
			 "syscall\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "a"((long)SYS_clone3), "D"(ca), "S"(sizeof(*ca)),
			   "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#endif

/* The numbers of a task, innermost first, from its NSpid line. */
static int parse_nspid(const char *line, pid_t *nr)
{
	pid_t host_first[LEVELS_MAX];
	int n = 0, i;
	const char *p = line + 6;
	char *end;

	while (n < LEVELS_MAX) {
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		host_first[n++] = (pid_t)v;
		p = end;
	}
	for (i = 0; i < n; i++)
		nr[i] = host_first[n - 1 - i];
	return n;
}

static int read_line(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size) {
		n = read(fd, buf + len, 1);
		if (n <= 0)
			return -1;
		if (buf[len++] == '\n')
			break;
	}
	buf[len] = '\0';
	return 0;
}

static pid_t thread_stack_make(struct clone_args *ca, struct task_arg *a,
			       char *stack)
{
#if defined(__x86_64__)
	long ret;

	ca->flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
		    CLONE_THREAD | CLONE_SYSVSEM;
	ca->stack = (uint64_t)(uintptr_t)stack;
	ca->stack_size = STACK_BYTES;
	ret = clone3_thread(ca, thread_main, a);

	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return (pid_t)ret;
#else
	(void)ca;
	(void)a;
	(void)stack;
	errno = ENOSYS;
	return -1;
#endif
}

/* Make a task running task_body(@a): a thread or a process. */
static pid_t task_make(int thread, struct task_arg *a, const pid_t *set,
		       int nset, char *stack)
{
	struct clone_args ca;
	long ret;

	memset(&ca, 0, sizeof(ca));
	ca.set_tid = (uint64_t)(uintptr_t)set;
	ca.set_tid_size = (uint64_t)nset;
	if (thread)
		return thread_stack_make(&ca, a, stack);
	ca.exit_signal = SIGCHLD;
	ret = syscall(SYS_clone3, &ca, sizeof(ca));
	if (ret == 0) {
		task_body(a, 0);
		_exit(0);
	}
	return (pid_t)ret;
}

/* "idA", "idB" or an errno name of one read of @fd at 0 (or of a new
 * open, @fd -1, of @path relative to @dir). */
static void ask(int fd, int dir, const char *path, char *out, size_t size)
{
	char buf[256];
	ssize_t n;
	int own = fd < 0;

	if (own)
		fd = openat(dir, path, O_RDONLY);
	if (fd < 0) {
		snprintf(out, size, "%s", strerrorname_np(errno));
		return;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		snprintf(out, size, "%s", strerrorname_np(errno));
	else {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(out, size, "%.40s", buf);
	}
	if (own)
		close(fd);
}

/* Whether an answer of user_time (100 ns units) is A's or ENOENT. */
static int name_ok(const char *v)
{
	char *end;
	double t;

	if (!strcmp(v, "ENOENT"))
		return 1;
	t = strtod(v, &end);
	return end != v && *end == '\0' && t < 300000;
}

static int cycles_ok(const char *v)
{
	char *end;
	double c;

	if (!strcmp(v, "ENOENT"))
		return 1;
	c = strtod(v, &end);
	return end != v && *end == '\0' && c < 0.030 * tsc_hz;
}

static int trial(int thread, int nr_trial, double *gap_us)
{
	static char stack_a[STACK_BYTES] __attribute__((aligned(64)));
	static char stack_b[STACK_BYTES] __attribute__((aligned(64)));
	int tell[2], wait_a[2], wait_b[2];
	struct task_arg A = { "idA", 0, 0, 0 }, B = { "idB", 0, 0, 60 };
	char line[512], dir[512], path[600], fdpath[64], v[8][64];
	pid_t nr[LEVELS_MAX], a, b;
	int nnr, kc, kn, op, dfd, bad = 0, i;
	uint64_t t0, t1;

	if (pipe(tell) || pipe(wait_a) || pipe(wait_b))
		return -1;
	A.tell = B.tell = tell[1];
	A.wait = wait_a[0];
	B.wait = wait_b[0];
	a = task_make(thread, &A, NULL, 0, stack_a);
	if (a < 0 || read_line(tell[0], line, sizeof(line)) < 0)
		return -1;
	nnr = parse_nspid(line, nr);
	if (nnr < 1 || nr[0] != a)
		return -1;
	if (thread)
		snprintf(dir, sizeof(dir), "%s/proc/%d/threads/%d", mnt,
			 getpid(), a);
	else
		snprintf(dir, sizeof(dir), "%s/proc/%d", mnt, a);
	snprintf(path, sizeof(path), "%s/cycles", dir);
	kc = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/user_time", dir);
	kn = open(path, O_RDONLY);
	op = open(path, O_PATH);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (kc < 0 || kn < 0 || op < 0 || dfd < 0 || chdir(dir) < 0) {
		printf("trial %d BAD: names of A: %s\n", nr_trial,
		       strerror(errno));
		return 1;
	}
	ask(kn, -1, NULL, v[0], sizeof(v[0]));
	if (!name_ok(v[0]) || !strcmp(v[0], "ENOENT")) {
		printf("trial %d BAD: A reads %s before it ends\n", nr_trial,
		       v[0]);
		return 1;
	}
	/* A ends; B takes its number at every level as soon as it can. */
	t0 = now_ns(CLOCK_MONOTONIC);
	if (write(wait_a[1], "x", 1) != 1)
		return -1;
	if (!thread)
		waitpid(a, NULL, 0);
	t0 = thread ? t0 : now_ns(CLOCK_MONOTONIC);
	/* A thread is reaped as it ends: its number is free at the latest
	 * when the last try to take it failed. */
	for (;;) {
		b = task_make(thread, &B, nr, nnr, stack_b);
		if (b >= 0 || errno != EEXIST)
			break;
		t0 = now_ns(CLOCK_MONOTONIC);
	}
	t1 = now_ns(CLOCK_MONOTONIC);
	if (b != a) {
		printf("trial %d BAD: B not made with A's number: %s\n",
		       nr_trial, strerror(errno));
		return -1;
	}
	*gap_us = (double)(t1 - t0) / 1000.0;
	if (read_line(tell[0], line, sizeof(line)) < 0)
		return -1;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", op);
	ask(kn, -1, NULL, v[0], sizeof(v[0]));
	ask(kc, -1, NULL, v[1], sizeof(v[1]));
	ask(-1, AT_FDCWD, fdpath, v[2], sizeof(v[2]));
	ask(-1, dfd, "user_time", v[3], sizeof(v[3]));
	ask(-1, dfd, "cycles", v[4], sizeof(v[4]));
	ask(-1, AT_FDCWD, "user_time", v[5], sizeof(v[5]));
	ask(-1, AT_FDCWD, "cycles", v[6], sizeof(v[6]));
	for (i = 0; i < 7; i++)
		if (!((i == 1 || i == 4 || i == 6) ? cycles_ok(v[i]) :
						     name_ok(v[i])))
			bad = 1;
	if (bad)
		printf("trial %d BAD: pread user_time %s cycles %s; reopen %s; "
		       "openat user_time %s cycles %s; cwd user_time %s cycles %s\n",
		       nr_trial, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
	else
		printf("trial %d ok %.0f us: %s %s %s %s %s %s %s\n", nr_trial,
		       *gap_us, v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
	if (chdir("/") < 0)
		bad = 1;
	close(kc);
	close(kn);
	close(op);
	close(dfd);
	if (write(wait_b[1], "x", 1) != 1)
		return -1;
	if (!thread)
		waitpid(b, NULL, 0);
	else /* B gone before the next trial's stack is its */
		while (syscall(SYS_tgkill, getpid(), b, 0) == 0)
			usleep(100);
	close(tell[0]);
	close(tell[1]);
	close(wait_a[0]);
	close(wait_a[1]);
	close(wait_b[0]);
	close(wait_b[1]);
	fflush(stdout);
	return bad;
}

static double read_tsc_hz(void)
{
	char path[600], line[256];
	unsigned long long v;
	double hz = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/info", mnt);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "tsc_hz %llu", &v) == 1)
			hz = (double)v;
	fclose(f);
	return hz;
}

int main(int argc, char **argv)
{
	int thread, depth, trials, passed = 0, fast = 0, redone = 0, i, ret;
	int status;
	double gap;
	pid_t child;

	if (argc != 5) {
		fprintf(stderr, "usage: %s MNT process|thread DEPTH TRIALS\n",
			argv[0]);
		return 2;
	}
#if !defined(__x86_64__)
	printf("skip: x86_64 only\n");
	return 77;
#endif
	mnt = argv[1];
	thread = !strcmp(argv[2], "thread");
	depth = atoi(argv[3]);
	trials = atoi(argv[4]);
	tsc_hz = read_tsc_hz();
	if (tsc_hz <= 0) {
		fprintf(stderr, "no tsc_hz in %s/info\n", mnt);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < depth; i++) {
		if (unshare(CLONE_NEWPID) < 0) {
			perror("unshare");
			return 2;
		}
		child = fork();
		if (child < 0)
			return 2;
		if (child > 0) {
			if (waitpid(child, &status, 0) < 0)
				return 2;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
		}
	}
	/* A trial whose gap was 1 ms or more (the machine was busy) is
	 * made again, up to as many times as there are trials; a failure
	 * counts whatever the gap. */
	for (i = 1; i <= trials; i++) {
		ret = trial(thread, i, &gap);
		if (ret < 0) {
			printf("trial %d failed to run: %s\n", i,
			       strerror(errno));
			return 2;
		}
		if (ret == 0 && gap >= 1000.0 && redone < trials) {
			redone++;
			i--;
			continue;
		}
		passed += ret == 0;
		fast += gap < 1000.0;
	}
	printf("passed %d of %d, gaps under 1 ms %d (%d made again)\n", passed,
	       trials, fast, redone);
	return passed == trials && fast == trials ? 0 : 1;
}
