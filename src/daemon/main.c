/*
 * main: timingfs's command line and configuration.
 *
 * Parses the options (ours, then libfuse's), loads the configuration,
 * builds the engine and the daemon's own mount, and hands them to
 * daemon_run() (daemon.h), which mounts and serves until unmounted or
 * signalled.
 * This is the only place that exits; the exit status says what went
 * wrong: 0 after a clean unmount or SIGTERM/SIGINT, 1 when it cannot
 * mount or serve, 2 for bad usage or a bad configuration.
 *
 * Mount options added by default, before the user's (so that a later
 * -o of the user's wins where libfuse keeps the last):
 *   ro                   nothing can be changed (handlers say EROFS
 *                        even if mounted rw)
 *   default_permissions  the kernel checks modes and owners
 *   fsname=, subtype=    "timingfs" in /proc/mounts
 *   auto_unmount         the mount goes when the daemon dies, even by
 *                        SIGKILL; -o no_auto_unmount leaves it out
 *
 * A daemon killed without auto_unmount leaves a stale mount behind
 * ("Transport endpoint is not connected"). The next start on it says so
 * and how to clear it, or with -o unmount_stale clears it itself.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <syslog.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "config.h"
#include "daemon.h"
#include "engine.h"
#include "fs.h"
#include "super.h"
#include "log.h"
#include "access.h"
#include "view.h"

struct options {
	char *config; /* libfuse strdup()s it */
	char *pidns; /* -o pidns=FILE */
	char *source; /* what mount.fuse3 passes first: a name, unused */
	char *mountpoint; /* as given */
	int help;
	int version;
	int no_auto_unmount;
	int unmount_stale; /* clear a stale timingfs mount on the point */
	int allow_other; /* asked for: kept for libfuse too */
};

enum { KEY_HELP, KEY_VERSION, KEY_ALLOW_OTHER };

#define OPTION(TEMPLATE, FIELD, VALUE)                           \
	{                                                        \
		TEMPLATE, offsetof(struct options, FIELD), VALUE \
	}

static const struct fuse_opt option_spec[] = {
	OPTION("-c %s", config, 0),
	OPTION("--config=%s", config, 0),
	OPTION("config=%s", config, 0),
	OPTION("pidns=%s", pidns, 0),
	OPTION("no_auto_unmount", no_auto_unmount, 1),
	OPTION("unmount_stale", unmount_stale, 1),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END,
};

/* libfuse's own messages go where ours go. */
static void fuse_log_to(enum fuse_log_level level, const char *fmt, va_list ap)
{
	log_fuse((int)level, fmt, ap);
}

static int option_key(void *data, const char *arg, int key,
		      struct fuse_args *args)
{
	struct options *o = data;

	(void)args;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		/*
		 * Ours, so that a missing directory is "cannot mount". Two
		 * are SOURCE MOUNTPOINT, as mount.fuse3 passes them (mount
		 * -t fuse.timingfs, fstab); the source is only a name.
		 */
		if (o->source) {
			log_msg(LOG_ERR,
				"one mount point only: %s, %s (usage: "
				"timingfs [SOURCE] MOUNTPOINT)",
				o->mountpoint, arg);
			return -1;
		}
		if (o->mountpoint)
			o->source = o->mountpoint;
		o->mountpoint = strdup(arg);
		return o->mountpoint ? 0 : -1;
	case KEY_ALLOW_OTHER:
		o->allow_other = 1;
		return 1;
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	}
	return 1; /* the rest is libfuse's */
}

static void usage(const char *prog)
{
	printf("usage: %s [options] MOUNTPOINT\n"
	       "       %s SOURCE MOUNTPOINT -o OPTS   (as mount.fuse3 runs it)\n\n"
	       "The Windows timing APIs as files: cycles, process and thread\n"
	       "times, and the idle cycles of processor groups.\n\n"
	       "timingfs options:\n"
	       "    -c FILE, --config=FILE, -o config=FILE\n"
	       "                           configuration file (default: %s\n"
	       "                           when present, else built-in)\n"
	       "    -f                     stay in the foreground\n"
	       "    -d                     debug output (implies -f)\n"
	       "    -s                     single-threaded\n"
	       "    -o OPT[,OPT...]        mount options (below); timingfs adds\n"
	       "                           ro,default_permissions,auto_unmount\n"
	       "    -o pidns=FILE          pin every reader's view of proc/ to the\n"
	       "                           PID namespace FILE (/proc/PID/ns/pid);\n"
	       "                           default: each reader sees its own\n"
	       "    -o allow_other         let readers other than the mounting user\n"
	       "                           in (containers with a bind mount of it)\n"
	       "    -o no_auto_unmount     leave the mount behind if killed\n"
	       "    -o unmount_stale       a stale timingfs mount on MOUNTPOINT,\n"
	       "                           left by a daemon that died (\"Transport\n"
	       "                           endpoint is not connected\"): unmount it\n"
	       "                           (lazily) and mount; without it, say so\n"
	       "                           and exit 1. No other mount is touched\n"
	       "    -h, --help             this help\n"
	       "    -V, --version          the version\n\n"
	       "Containers: each reader sees the processes of its own PID\n"
	       "namespace, under its numbers. Mount once on the host with\n"
	       "-o allow_other and bind-mount it into containers, e.g.\n"
	       "    docker run -v /run/timingfs:/timingfs:ro IMAGE ...\n"
	       "[access] hidepid in the configuration hides other users'\n"
	       "processes as procfs's hidepid= does (auto: as the procfs\n"
	       "read is mounted).\n\n"
	       "mount(8) and fstab run it through mount.fuse3:\n"
	       "    mount -t fuse.timingfs timingfs /run/timingfs -o allow_other\n"
	       "    timingfs /run/timingfs fuse.timingfs allow_other,nofail 0 0\n"
	       "SIGHUP re-reads the configuration; SIGTERM and SIGINT unmount.\n\n",
	       prog, prog, CONFIG_DEFAULT_PATH);
}

/*
 * The configuration: the one named, else the default file, else none;
 * *@used says which file was read (NULL: none), for SIGHUP.
 */
static int load_config(const struct options *o, struct config *cfg,
		       const char **used)
{
	const char *path = o->config;
	char err[512];

	if (!path && access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		path = CONFIG_DEFAULT_PATH;
	*used = path;
	if (!path) {
		config_defaults(cfg);
		return 0;
	}
	if (config_load(cfg, path, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return -EINVAL;
	}
	return 0;
}

/* Whether @name is an executable file in a directory of $PATH. */
static bool in_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	char file[4096];

	for (p = path ? path : "/usr/bin:/bin"; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, ':');
		snprintf(file, sizeof(file), "%.*s/%s", (int)(end - p), p,
			 name);
		if (access(file, X_OK) == 0)
			return true;
	}
	return false;
}

/* Whether /etc/fuse.conf has the line user_allow_other. */
static bool user_allow_other(void)
{
	char line[256], *p;
	bool found = false;
	FILE *f = fopen("/etc/fuse.conf", "r");

	while (f && !found && fgets(line, sizeof(line), f)) {
		for (p = line; *p == ' ' || *p == '\t'; p++)
			;
		found = strncmp(p, "user_allow_other", 16) == 0 &&
			strchr(" \t\n#", p[16]);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * What must hold before mounting, each failure with what to do about
 * it: the mount point a directory; /dev/fuse there and open to this
 * user; and for a user other than root, fusermount3, and for
 * allow_other, user_allow_other in /etc/fuse.conf.
 */
static int preflight(const struct options *o, const char *mountpoint)
{
	struct stat st;
	int fd, err;

	if (stat(mountpoint, &st) == 0 && !S_ISDIR(st.st_mode)) {
		log_msg(LOG_ERR, "cannot mount on %s: not a directory",
			mountpoint);
		return -ENOTDIR;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT)
			log_msg(LOG_ERR,
				"cannot open /dev/fuse: there is none: load "
				"the fuse module (modprobe fuse); in a "
				"container, pass the device in (docker run "
				"--device /dev/fuse --cap-add SYS_ADMIN)");
		else if (err == EACCES || err == EPERM)
			log_msg(LOG_ERR,
				"cannot open /dev/fuse: %s: it should be "
				"crw-rw-rw- (the fuse3 package's udev rule "
				"makes it so; chmod 0666 /dev/fuse); in a "
				"container, allow the device (--device "
				"/dev/fuse)",
				strerror(err));
		else
			log_msg(LOG_ERR, "cannot open /dev/fuse: %s",
				strerror(err));
		return -err;
	}
	close(fd);
	if (geteuid() == 0)
		return 0;
	if (access("/usr/bin/fusermount3", X_OK) != 0 &&
	    !in_path("fusermount3")) {
		log_msg(LOG_ERR,
			"no fusermount3, which mounts for users other than "
			"root: install the fuse3 package");
		return -ENOENT;
	}
	if (o->allow_other && !user_allow_other()) {
		log_msg(LOG_ERR,
			"-o allow_other for a user other than root needs the "
			"line user_allow_other in /etc/fuse.conf");
		return -EPERM;
	}
	return 0;
}

/*
 * The mount point @path answered ENOTCONN: a FUSE mount whose daemon
 * died is there. One of timingfs's is unmounted with -o unmount_stale,
 * else named with how to clear it; any other is left alone, whatever
 * the options. 0 once it is gone, or -errno after saying why not.
 */
static int clear_stale_mount(const struct options *o, const char *path)
{
	char type[64];
	int ret;

	ret = mountinfo_type_at("/proc/self/mountinfo", path, type,
				sizeof(type));
	if (ret <= 0) {
		log_msg(LOG_ERR, "cannot mount on %s: %s", path,
			strerror(ENOTCONN));
		return -ENOTCONN;
	}
	if (strcmp(type, "fuse.timingfs") != 0) {
		log_msg(LOG_ERR,
			"cannot mount on %s: a stale %s mount is there, not "
			"timingfs's (%s): clear it with `%s %s`",
			path, type, strerror(ENOTCONN),
			strncmp(type, "fuse", 4) ? "umount" : "fusermount3 -u",
			path);
		return -ENOTCONN;
	}
	if (!o->unmount_stale) {
		log_msg(LOG_ERR,
			"%s: a stale timingfs mount is there (its daemon "
			"died): clear it with `fusermount3 -u %s`, or start "
			"with -o unmount_stale",
			path, path);
		return -ENOTCONN;
	}
	ret = daemon_unmount_path(path);
	if (ret < 0)
		log_msg(LOG_ERR,
			"%s: cannot unmount the stale timingfs mount there: %s",
			path, strerror(-ret));
	else
		log_msg(LOG_NOTICE,
			"%s: unmounted a stale timingfs mount (its daemon "
			"died)",
			path);
	return ret;
}

/*
 * The mount point, absolute and resolved, with the stale mounts of
 * timingfs's on it (a few stacked, at most) cleared where -o
 * unmount_stale says so. (realpath() does not stat the last component,
 * a stale mount's root: stat does, and a dead one answers ENOTCONN.)
 * NULL after saying why not.
 */
static char *resolve_mountpoint(const struct options *o)
{
	char *path = realpath(o->mountpoint, NULL);
	struct stat st;
	int layers;

	if (!path) {
		log_msg(LOG_ERR, "cannot mount on %s: %s", o->mountpoint,
			strerror(errno));
		return NULL;
	}
	for (layers = 0; stat(path, &st) < 0 && errno == ENOTCONN; layers++) {
		if (layers == 8) {
			log_msg(LOG_ERR, "cannot mount on %s: %s", path,
				strerror(ENOTCONN));
			goto fail;
		}
		if (clear_stale_mount(o, path) < 0)
			goto fail;
	}
	return path;
fail:
	free(path);
	return NULL;
}

/* Why the engine reads tasks from procfs, when bpf was tried (auto). */
static void log_task_source(const struct engine *engine)
{
	struct engine_info info;

	engine_get_info(engine, &info);
	if (info.task_source_why[0])
		log_msg(LOG_NOTICE, "task source procfs: %s",
			info.task_source_why);
}

/* Our default mount options, in front of the user's. */
static int add_mount_defaults(struct fuse_args *args, const struct options *o)
{
	const char *opts = o->no_auto_unmount ?
				   "-oro,default_permissions,fsname=timingfs,"
				   "subtype=timingfs" :
				   "-oro,default_permissions,fsname=timingfs,"
				   "subtype=timingfs,auto_unmount";

	return fuse_opt_insert_arg(args, 1, opts);
}

/*
 * Every worker makes and frees snapshots, and a table is as large as
 * the threads it lists (hundreds of KiB to MiB). glibc would give each
 * worker an arena of its own, and raise its mmap threshold to the
 * largest block freed so far, so that each arena kept blocks as large
 * as the largest table resident for good: the daemon's memory would
 * grow with its readers (4 reading the table of 8,000 threads at once
 * left it 4 MiB larger). One arena, and large blocks always mapped
 * and unmapped, keep it where it was.
 */
static void malloc_policy(void)
{
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
}

/*
 * Every reader's lookups and listings may need descriptors of /proc
 * (the engine keeps up to 256 task files open, a view holds its
 * namespace, every mount its /dev/fuse): the soft limit of 1024 that
 * a shell gives is too few for a busy machine. Raise it to the hard
 * limit (the unit's LimitNOFILE=). Running out all the same is an
 * error to the reader (EMFILE or ENFILE), never an empty listing.
 */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_msg(LOG_WARNING, "cannot raise the descriptor limit: %s",
			strerror(errno));
}

/* The [limits] budgets, for every mount of the daemon (budget.h,
 * view.h). */
static void set_budgets(const struct config *cfg)
{
	_Static_assert(CONFIG_READER_VIEWS_DEFAULT == VIEW_UID_MAX &&
			       CONFIG_READER_VIEWS_MAX == VIEW_UID_MAX_LIMIT,
		       "[limits] reader_views as view.h says");

	budget_set_limits((size_t)cfg->reader_snapshots_mib << 20,
			  (size_t)cfg->total_snapshots_mib << 20);
	views_set_uid_max(cfg->reader_views);
}

/*
 * The command line into @o, its mount options into @args and libfuse's
 * into @cmd: 0 to go on, 1 when it asked for the help or the version
 * (printed), -1 when it cannot be used (said).
 */
static int parse_command_line(struct fuse_args *args, struct options *o,
			      struct fuse_cmdline_opts *cmd, const char *prog)
{
	if (fuse_opt_parse(args, o, option_spec, option_key) != 0)
		return -1;
	if (o->help) {
		usage(prog);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		return 1;
	}
	if (o->version) {
		printf("timingfs version %s\nlibfuse version %s\n",
		       TIMINGFS_VERSION, fuse_pkgversion());
		return 1;
	}
	if (add_mount_defaults(args, o) != 0 ||
	    fuse_parse_cmdline(args, cmd) != 0)
		return -1;
	if (!o->mountpoint) {
		log_msg(LOG_ERR, "no mount point given (see --help)");
		return -1;
	}
	return 0;
}

/*
 * The mount point, a new string: as given when @taking_over (the mount
 * is there and served by another process, or the binary is on trial:
 * nothing on it is asked), else resolved and checked. NULL, with the
 * exit status in *@status, when there is none.
 */
static char *mountpoint_for(const struct options *o, bool taking_over,
			    int *status)
{
	char *mountpoint;

	if (taking_over)
		return strdup(o->mountpoint);
	mountpoint = resolve_mountpoint(o);
	if (mountpoint && preflight(o, mountpoint) < 0) {
		free(mountpoint);
		mountpoint = NULL;
	}
	if (!mountpoint)
		*status = EXIT_SERVE;
	return mountpoint;
}

/*
 * The views, the engine and the filesystem of @d, as @cfg says, the
 * filesystem with the access rules @access (which must outlive it):
 * 0, or the exit status, said. What was made is @d's to free.
 */
static int build_parts(struct daemon_parts *d, const struct options *o,
		       const struct config *cfg, struct access_policy *access)
{
	struct engine_opts eopts;
	char err[512];

	if (views_new(o->pidns, &d->views, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_USAGE;
	}
	if (!views_can_translate(d->views))
		log_msg(LOG_WARNING,
			"this kernel cannot translate process numbers between "
			"PID namespaces (Linux 4.9 or later can): readers in "
			"other namespaces see an empty proc/");
	if (config_access(cfg, "/proc/self/mountinfo", access, err,
			  sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_SERVE;
	}
	config_engine_opts(cfg, &eopts);
	if (engine_new(&eopts, &d->engine, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		return EXIT_SERVE;
	}
	log_task_source(d->engine);
	if (fs_dropper_new(&d->dropper) < 0 ||
	    fs_new(d->engine, d->views, access, d->dropper, &d->fs) < 0) {
		log_msg(LOG_ERR, "out of memory");
		return EXIT_SERVE;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct options o = { 0 };
	struct access_policy access;
	struct daemon_parts d = { 0 };
	const char *config_path = NULL;
	char *config_abs = NULL;
	char *mountpoint = NULL;
	struct config cfg;
	int status = EXIT_USAGE, ret;
	/* Exec'd by a supervisor (super.h): its state, or a trial run. */
	const char *state = getenv(SUPER_STATE_ENV);
	bool check = getenv(SUPER_CHECK_ENV) != NULL;
	int state_fd = state ? atoi(state) : super_store_state();

	unsetenv(SUPER_STATE_ENV);
	unsetenv(SUPER_CHECK_ENV);
	malloc_policy();
	fuse_set_log_func(fuse_log_to);
	ret = parse_command_line(&args, &o, &cmd, argv[0]);
	if (ret != 0) {
		status = ret > 0 ? 0 : EXIT_USAGE;
		goto out;
	}
	if (load_config(&o, &cfg, &config_path) < 0)
		goto out;
	set_budgets(&cfg);
	raise_nofile();
	/* Absolute, for SIGHUP: the daemon works from / (fuse_daemonize). */
	if (config_path) {
		config_abs = realpath(config_path, NULL);
		config_path = config_abs ? config_abs : config_path;
	}
	mountpoint = mountpoint_for(&o, state_fd >= 0 || check, &status);
	if (!mountpoint)
		goto out;
	status = build_parts(&d, &o, &cfg, &access);
	if (status != 0)
		goto out;
	status = EXIT_USAGE;
	d.se = fuse_session_new(&args, fs_operations(),
				sizeof(struct fuse_lowlevel_ops), d.fs);
	if (!d.se)
		goto out; /* libfuse said which option it did not take */
	fs_set_session(d.fs, d.se);
	if (check) { /* it would start: the trial is over */
		fuse_session_destroy(d.se);
		status = 0;
		goto out;
	}
	d.argv = argv;
	d.state_fd = state_fd;
	d.cfg = &cfg;
	d.config_path = config_path;
	d.mountpoint = mountpoint;
	d.foreground = cmd.foreground;
	/* libfuse's -s and -o max_threads= (10 unless given). */
	d.max_workers = cmd.singlethread ? 1 : cmd.max_threads;
	status = daemon_run(&d);
	fuse_session_destroy(d.se);
out:
	fs_free(d.fs);
	fs_dropper_free(d.dropper);
	engine_free(d.engine);
	views_free(d.views);
	free(mountpoint);
	free(o.mountpoint);
	free(o.source);
	free(config_abs);
	free(o.config);
	free(o.pidns);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return status;
}
