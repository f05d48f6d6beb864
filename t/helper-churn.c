/*
 * helper-churn: short-lived threads and processes at steady rates, for
 * the soak (t1950).
 *
 * usage: helper-churn [-t THREADS_PER_S] [-p FORKS_PER_S] [-s SECONDS]
 *
 * Prints its pid on a line once it runs, then until SIGTERM or until
 * SECONDS (default 10) have passed:
 *
 * - its main thread starts THREADS_PER_S (default 800) threads a
 *   second; thread i lives i % 10 ms and exits;
 * - a forker, a single-threaded child of its own (so that its children
 *   may start threads safely), forks FORKS_PER_S (default 80) children
 *   a second and reaps them; child i lives i % 20 ms, and every other
 *   one starts i % 3 + 1 threads of its own, of 1 ms each, first.
 *
 * A rate that falls behind (a loaded machine) catches up, up to a
 * second's worth; what falls further behind is counted as missed.
 * At the end it prints one line of counts,
 *
 *   threads N forks N fork_threads N missed N failed N
 *
 * (threads started, children forked, threads those children started,
 * births given up, and calls that failed), and exits 0, or 1 when a
 * call failed. Exit status 2 for bad usage.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_SEC 1000000000ULL
#define STACK_BYTES (256 * 1024)

struct counts {
	unsigned long long made; /* threads, or children */
	unsigned long long fork_threads; /* threads of the children */
	unsigned long long missed;
	unsigned long long failed;
};

static sigset_t term_set;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Wait until @deadline (CLOCK_MONOTONIC ns) for SIGTERM, which stays
 * blocked in every thread: 1 if it came.
 */
static int term_until(uint64_t deadline)
{
	uint64_t now = now_ns(), left;
	struct timespec ts;
	int sig;

	if (deadline <= now)
		return sigtimedwait(&term_set, NULL,
				    &(struct timespec){ 0, 0 }) == SIGTERM;
	left = deadline - now;
	ts.tv_sec = (time_t)(left / NSEC_PER_SEC);
	ts.tv_nsec = (long)(left % NSEC_PER_SEC);
	do
		sig = sigtimedwait(&term_set, NULL, &ts);
	while (sig < 0 && errno == EINTR);
	return sig == SIGTERM;
}

/*
 * Call @birth at @rate a second until SIGTERM or @end: catching up
 * when late, but by a second's worth at most.
 */
static void at_rate(unsigned long rate, uint64_t end,
		    void (*birth)(unsigned long long i, struct counts *c),
		    struct counts *c)
{
	uint64_t start = now_ns(), now, due;
	unsigned long long done = 0;

	if (!rate) {
		term_until(end);
		return;
	}
	for (;;) {
		now = now_ns();
		if (now >= end)
			break;
		due = (now - start) * rate / NSEC_PER_SEC;
		if (due > done + rate) {
			c->missed += due - done - rate;
			done = due - rate;
		}
		for (; done < due && now_ns() < end; done++)
			birth(done, c);
		if (term_until(start + (done + 1) * NSEC_PER_SEC / rate))
			break;
	}
}

static void *short_life(void *arg)
{
	sleep_ms((unsigned long)(uintptr_t)arg);
	return NULL;
}

static pthread_attr_t attr;

static void thread_birth(unsigned long long i, struct counts *c)
{
	pthread_t t;

	if (pthread_create(&t, &attr, short_life, (void *)(uintptr_t)(i % 10)))
		c->failed++;
	else
		c->made++;
}

/* A forked child: a few threads of its own for every other one. */
static void child_life(unsigned long long i)
{
	pthread_t t[3];
	int n = i % 2 ? (int)(i % 3) + 1 : 0, k, made = 0;

	sigprocmask(SIG_UNBLOCK, &term_set, NULL);
	for (k = 0; k < n; k++)
		if (pthread_create(&t[made], NULL, short_life, (void *)1) == 0)
			made++;
	sleep_ms(i % 20);
	for (k = 0; k < made; k++)
		pthread_join(t[k], NULL);
	_exit(made == n ? 0 : 1);
}

static void reap(int flags, struct counts *c)
{
	int status;

	while (waitpid(-1, &status, flags) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			c->failed++;
	}
}

static void fork_birth(unsigned long long i, struct counts *c)
{
	pid_t pid = fork();

	if (pid == 0)
		child_life(i);
	if (pid < 0) {
		c->failed++;
	} else {
		c->made++;
		if (i % 2)
			c->fork_threads += i % 3 + 1;
	}
	reap(WNOHANG, c);
}

/*
 * The forker: forks at @rate until SIGTERM or @end, reaps every child,
 * and writes its counts to @out.
 */
static void forker(unsigned long rate, uint64_t end, int out)
{
	struct counts c = { 0 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	at_rate(rate, end, fork_birth, &c);
	reap(0, &c);
	if (write(out, &c, sizeof(c)) != (ssize_t)sizeof(c))
		_exit(1);
	_exit(0);
}

static int usage(void)
{
	fprintf(stderr, "usage: helper-churn [-t THREADS_PER_S] "
			"[-p FORKS_PER_S] [-s SECONDS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long threads_rate = 800, forks_rate = 80, seconds = 10;
	struct counts th = { 0 }, fk = { 0 };
	int opt, pipefd[2], status;
	pid_t forker_pid;
	uint64_t end;

	while ((opt = getopt(argc, argv, "t:p:s:")) != -1) {
		switch (opt) {
		case 't':
			threads_rate = strtoul(optarg, NULL, 10);
			break;
		case 'p':
			forks_rate = strtoul(optarg, NULL, 10);
			break;
		case 's':
			seconds = strtoul(optarg, NULL, 10);
			break;
		default:
			return usage();
		}
	}
	if (optind != argc || !seconds)
		return usage();

	/* SIGTERM is taken by sigtimedwait() alone, in both loops. */
	sigemptyset(&term_set);
	sigaddset(&term_set, SIGTERM);
	sigprocmask(SIG_BLOCK, &term_set, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_BYTES);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);

	end = now_ns() + seconds * NSEC_PER_SEC;
	if (pipe(pipefd) < 0) {
		perror("pipe");
		return 1;
	}
	fflush(stdout);
	forker_pid = fork();
	if (forker_pid < 0) {
		perror("fork");
		return 1;
	}
	if (forker_pid == 0) {
		close(pipefd[0]);
		forker(forks_rate, end, pipefd[1]);
	}
	close(pipefd[1]);
	printf("%d\n", (int)getpid());
	fflush(stdout);

	at_rate(threads_rate, end, thread_birth, &th);
	kill(forker_pid, SIGTERM);
	if (read(pipefd[0], &fk, sizeof(fk)) != (ssize_t)sizeof(fk))
		fk.failed++;
	if (waitpid(forker_pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		fk.failed++;
	/* The last threads end within 10 ms: let them, before counting. */
	sleep_ms(20);
	printf("threads %llu forks %llu fork_threads %llu missed %llu "
	       "failed %llu\n",
	       th.made, fk.made, fk.fork_threads, th.missed + fk.missed,
	       th.failed + fk.failed);
	return th.failed + fk.failed ? 1 : 0;
}
