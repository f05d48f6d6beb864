/*
 * helper-nsholders: a hostile tenant that takes a view of timingfs for
 * each of many PID namespaces of its own, for the tests of view slots.
 *
 * usage: helper-nsholders N DIR PIDS
 *
 * N times: a user and PID namespace of its own (as unshare -Urpf
 * makes, so any user can), whose init makes DIR its working directory
 * (a path walk to it, a view of the daemon's) and holds it. Writes the
 * pids of the inits that hold one, one a line, to PIDS; then prints one
 * line,
 *
 *	ok K refused R errno ERR
 *
 * how many inits hold DIR, how many could not enter it (ERR: the name
 * of the errno of the first such failure, 0 if none), and waits for a
 * SIGTERM; then kills every init (which ends its namespace) and reaps
 * them before it exits.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* An init of a namespace, in the parent namespace's numbers. */
struct holder {
	pid_t pid;
	int err; /* its chdir's errno, 0 if it holds DIR */
};

static const char *errno_name(int err)
{
	switch (err) {
	case EAGAIN:
		return "EAGAIN";
	case EMFILE:
		return "EMFILE";
	case ENOMEM:
		return "ENOMEM";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	default:
		return "other";
	}
}

/* The init of a new namespace, holding @dir; its result through @w. */
static void init_main(const char *dir, int w)
{
	int err = chdir(dir) == 0 ? 0 : errno;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (write(w, &err, sizeof(err)) != sizeof(err))
		_exit(1);
	close(w);
	if (err)
		_exit(0);
	for (;;)
		pause();
}

/* One namespace: its init's pid and result in @h; -1 if none made. */
static int make_one(const char *dir, struct holder *h)
{
	int p[2], q[2], got;
	pid_t c, g;

	/* The init's pid through @p, its result through @q. */
	if (pipe(p) < 0)
		return -1;
	if (pipe(q) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	c = fork();
	if (c < 0)
		return -1;
	if (c == 0) {
		close(p[0]);
		close(q[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWPID) < 0)
			_exit(2);
		g = fork();
		if (g < 0)
			_exit(3);
		if (g == 0)
			init_main(dir, q[1]);
		/* The init goes to the subreaper, the helper. */
		if (write(p[1], &g, sizeof(g)) != sizeof(g))
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	close(q[1]);
	waitpid(c, NULL, 0);
	got = read(p[0], &h->pid, sizeof(h->pid)) == sizeof(h->pid) &&
	      read(q[0], &h->err, sizeof(h->err)) == sizeof(h->err);
	close(p[0]);
	close(q[0]);
	return got ? 0 : -1;
}

int main(int argc, char **argv)
{
	long n, i, ok = 0, refused = 0;
	struct holder *h;
	int first_err = 0;
	FILE *pids;
	sigset_t term;
	int sig;

	if (argc != 4 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: helper-nsholders N DIR PIDS\n");
		return 2;
	}
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL); /* the inits unblock it */
	h = calloc((size_t)n, sizeof(*h));
	pids = fopen(argv[3], "w");
	if (!h || !pids || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("helper-nsholders");
		return 1;
	}
	for (i = 0; i < n; i++) {
		if (make_one(argv[2], &h[i]) < 0) {
			fprintf(stderr, "namespace %ld: could not be made\n",
				i);
			h[i].pid = 0;
			break;
		}
		if (h[i].err) {
			refused++;
			if (!first_err)
				first_err = h[i].err;
			waitpid(h[i].pid, NULL, 0); /* it exits: no zombie */
			continue;
		}
		ok++;
		fprintf(pids, "%d\n", (int)h[i].pid);
	}
	fclose(pids);
	printf("ok %ld refused %ld errno %s\n", ok, refused,
	       first_err ? errno_name(first_err) : "0");
	fflush(stdout);
	sigwait(&term, &sig);
	for (i = 0; i < n; i++)
		if (h[i].pid > 0 && !h[i].err)
			kill(h[i].pid, SIGKILL);
	/* Every init, and the refused ones' that exited by themselves. */
	while (wait(NULL) > 0 || errno == EINTR)
		;
	free(h);
	return 0;
}
