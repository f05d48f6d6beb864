/*
 * timingfsctl: ask the running timingfs daemon to attach a mount of its
 * tree inside a container, to detach one, or to list them; or to
 * upgrade itself to the binary now installed, keeping every mount.
 *
 * It opens the namespaces itself and passes their descriptors over the
 * daemon's control socket (control.h): NSFILE, a PID namespace, and the
 * mount namespace of a process in it (NSFILE's sibling "mnt" when NSFILE
 * is /proc/PID/ns/pid, else the first process /proc shows in it). Exit
 * status: 0 done, 1 refused or failed (one line of why), 2 bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "control.h"

#define EXIT_FAIL 1
#define EXIT_USAGE 2

static const char *prog = "timingfsctl";

static void usage(FILE *to)
{
	fprintf(to,
		"usage: %s attach [-o OPT[,OPT]] NSFILE TARGET\n"
		"       %s detach NSFILE TARGET\n"
		"       %s mounts\n"
		"       %s upgrade\n\n"
		"Ask the running timingfs daemon to mount its tree at TARGET,\n"
		"as the mount namespace of NSFILE's process sees it, pinned to\n"
		"the PID namespace NSFILE (/proc/PID/ns/pid); to unmount it; or\n"
		"to list what it attached, a line each: the PID namespace's\n"
		"inode, TARGET, its init's PID and its mount namespace's inode.\n\n"
		"attach options: ro, allow_other (always), hidepid=auto|off|\n"
		"noaccess|invisible, gid=GID|none ([access] of timingfs.conf;\n"
		"auto: as the procfs of the container is mounted).\n\n"
		"upgrade: the daemon runs the binary at the path it was\n"
		"started from in its place, keeping every mount and reader;\n"
		"one that cannot start leaves the running one serving.\n\n"
		"The daemon listens on %s ($%s); only root may ask.\n",
		prog, prog, prog, prog, control_path(), CONTROL_ENV);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXIT_FAIL;
}

/* Whether namespace @fd, opened from @path, has the type @type ("pid"). */
static int is_ns(int fd, const char *path, int type, const char *name)
{
	char link[64];
	ssize_t n;
	int t = ioctl(fd, NS_GET_NSTYPE);

	if (t >= 0 || errno != ENOTTY)
		return t == type;
	/* Before NS_GET_NSTYPE (4.11): the link says "pid:[INODE]". */
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;
	link[n] = '\0';
	return strncmp(link, name, strlen(name)) == 0 &&
	       link[strlen(name)] == ':';
}

/* The mount namespace of a process in the PID namespace @pidfd. */
static int open_mnt_ns(const char *nsfile, int pidfd)
{
	size_t len = strlen(nsfile);
	struct stat want, st;
	char path[4096];
	struct dirent *e;
	int fd = -1;
	DIR *d;

	if (len > 7 && strcmp(nsfile + len - 7, "/ns/pid") == 0 &&
	    len < sizeof(path)) {
		snprintf(path, sizeof(path), "%.*smnt", (int)(len - 3), nsfile);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
	}
	if (fstat(pidfd, &want) < 0 || !(d = opendir("/proc")))
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", e->d_name);
		if (stat(path, &st) < 0 || st.st_ino != want.st_ino ||
		    st.st_dev != want.st_dev)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	closedir(d);
	return fd;
}

/* Send @field with @fd to the daemon, print its answer: the exit status. */
static int ask(const char *const *field, unsigned int nfields, const int *fd,
	       unsigned int nfds)
{
	static struct control_msg m;
	/* An upgrade first tries the new binary (SUPER_CHECK_MS). */
	int wait_s = strcmp(field[0], "upgrade") ? CONTROL_ANSWER_S :
						   CONTROL_UPGRADE_S;
	struct timeval limit = { .tv_sec = wait_s };
	const char *path = control_path();
	int sock, ret, status;

	sock = control_connect(path);
	if (sock == -ENOENT || sock == -ECONNREFUSED)
		return fail("no timingfs daemon is running (nothing answers "
			    "on %s)",
			    path);
	if (sock < 0)
		return fail("%s: %s", path, strerror(-sock));
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
	ret = control_send(sock, field, nfields, fd, nfds);
	if (ret == 0)
		ret = control_recv(sock, &m);
	close(sock);
	if (ret == -EAGAIN)
		return fail("the daemon at %s did not answer in %d s", path,
			    wait_s);
	if (ret == -EPIPE || (ret == 0 && m.nfields < 2))
		return fail("the daemon at %s closed the connection without "
			    "an answer",
			    path);
	if (ret < 0)
		return fail("%s: %s", path, strerror(-ret));
	control_close_fds(&m);
	status = m.field[0][0] - '0';
	if (status == 0) {
		fputs(m.field[1], stdout);
		return 0;
	}
	fprintf(stderr, "%s: %s\n", prog, m.field[1]);
	return status == EXIT_USAGE ? EXIT_USAGE : EXIT_FAIL;
}

/* attach or detach: the namespaces, then ask. */
static int namespaces(const char *cmd, const char *opts, const char *nsfile,
		      const char *target)
{
	const char *field[3];
	int fd[2], status;
	unsigned int n = 0;

	fd[0] = open(nsfile, O_RDONLY | O_CLOEXEC);
	if (fd[0] < 0)
		return fail("%s: %s", nsfile, strerror(errno));
	if (!is_ns(fd[0], nsfile, CLONE_NEWPID, "pid")) {
		close(fd[0]);
		return fail("%s: not a PID namespace (want /proc/PID/ns/pid)",
			    nsfile);
	}
	field[n++] = cmd;
	if (opts) {
		fd[1] = open_mnt_ns(nsfile, fd[0]);
		if (fd[1] < 0) {
			close(fd[0]);
			return fail("%s: no process of that namespace is left "
				    "to give its mount namespace",
				    nsfile);
		}
		field[n++] = opts;
	}
	field[n++] = target;
	status = ask(field, n, fd, opts ? 2 : 1);
	close(fd[0]);
	if (opts)
		close(fd[1]);
	return status;
}

int main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	const char *cmd, *opts = "";
	int c;

	/* Options after the command are its own (-o of attach). */
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("timingfsctl version %s\n", TIMINGFS_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	argv += optind;
	argc -= optind;
	optind = 1;
	if (!strcmp(cmd, "attach")) {
		while ((c = getopt(argc, argv, "+o:")) != -1) {
			if (c != 'o') {
				usage(stderr);
				return EXIT_USAGE;
			}
			opts = optarg;
		}
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "mounts") || !strcmp(cmd, "upgrade") ?
		    argc != 0 :
		    (strcmp(cmd, "attach") && strcmp(cmd, "detach")) ||
			    argc != 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (argc == 2 && argv[1][0] != '/') {
		fprintf(stderr,
			"%s: TARGET must be an absolute path (as the "
			"container sees it): %s\n",
			prog, argv[1]);
		return EXIT_USAGE;
	}
	if (geteuid() != 0)
		return fail("only root may attach and detach mounts (the "
			    "control socket %s is root's)",
			    control_path());
	if (!strcmp(cmd, "mounts") || !strcmp(cmd, "upgrade")) {
		const char *field[] = { cmd };

		int ret = ask(field, 1, NULL, 0);

		if (ret != 0)
			return ret;
		if (!strcmp(cmd, "upgrade"))
			putchar('\n');
		return 0;
	}
	return namespaces(cmd, !strcmp(cmd, "attach") ? opts : NULL, argv[0],
			  argv[1]);
}
