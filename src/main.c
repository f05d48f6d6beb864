/*
 * main: timingfs's command line, configuration and lifetime.
 *
 * Parses the options (ours, then libfuse's), loads the configuration,
 * builds the engine, mounts and serves until unmounted or signalled.
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
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <syslog.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "engine.h"
#include "exited.h"
#include "fs.h"
#include "listener.h"
#include "mountinfo.h"
#include "view.h"

#define EXIT_SERVE 1
#define EXIT_USAGE 2

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

static bool use_syslog;

static void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fputs("timingfs: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

/* libfuse's own messages go where ours go. */
static void fuse_log_to(enum fuse_log_level level, const char *fmt, va_list ap)
{
	if (use_syslog)
		vsyslog((int)level, fmt, ap);
	else
		vfprintf(stderr, fmt, ap);
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
 * Unmount the stale mount at @path lazily (a reader still in it does not
 * keep it): root itself, another user through fusermount3, which lets a
 * user unmount only what that user mounted. 0 or -errno.
 */
static int unmount_dead(const char *path)
{
	char *argv[] = { "fusermount3", "-u", "-z", "--", (char *)path, NULL };
	pid_t pid;
	int status, err;

	if (geteuid() == 0)
		return umount2(path, MNT_DETACH) == 0 ? 0 : -errno;
	err = posix_spawnp(&pid, "fusermount3", NULL, NULL, argv, environ);
	if (err)
		return -err;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
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
	ret = unmount_dead(path);
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
 * Run the request loop: several workers, at most cmd->max_threads (10
 * unless -o max_threads=N), idle ones kept (libfuse's default since
 * 3.12: destroying and re-creating threads costs more than it saves).
 */
static int run_loop(struct fuse_session *se,
		    const struct fuse_cmdline_opts *cmd)
{
	struct fuse_loop_config *loop;
	int ret;

	if (cmd->singlethread)
		return fuse_session_loop(se);
	loop = fuse_loop_cfg_create();
	if (!loop)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(loop, (unsigned int)cmd->clone_fd);
	fuse_loop_cfg_set_max_threads(loop, cmd->max_threads);
	/* libfuse's "no limit" is (unsigned)-1, which its setter refuses. */
	if (cmd->max_idle_threads != (unsigned int)-1)
		fuse_loop_cfg_set_idle_threads(loop, cmd->max_idle_threads);
	ret = fuse_session_loop_mt(se, loop);
	fuse_loop_cfg_destroy(loop);
	return ret;
}

/* What serve() starts once the daemon has forked, and stops. */
struct daemon {
	struct config *cfg; /* in use: SIGHUP's thread alone changes it */
	const char *config_path; /* the file read at mount, or NULL */
	struct engine *engine;
	struct views *views;
	struct fs *fs;
	struct exited *exited;
	struct listener *listener;
	pthread_t reloader;
	bool reloader_started;
	bool stopping;
};

/* A key that a re-read cannot change, and that changed. */
static void fixed_key(const struct daemon *d, bool changed, const char *key)
{
	if (changed)
		log_msg(LOG_WARNING,
			"%s: %s changed: it takes effect at the next mount",
			d->config_path, key);
}

/*
 * SIGHUP: read the configuration file again. A valid one takes effect
 * for every file opened from now on, for the keys a running daemon can
 * change ([format] units, and [exited] keep while tasks are kept); a
 * change to any other is logged, to wait for the next mount. A bad file
 * is logged with its file, line and key, and the one in use stays.
 */
static void reload(struct daemon *d)
{
	const struct config *old = d->cfg;
	struct config cfg;
	char err[512];

	if (!d->config_path) {
		log_msg(LOG_NOTICE,
			"SIGHUP: no configuration file was read at mount; "
			"nothing to re-read");
		return;
	}
	if (config_load(&cfg, d->config_path, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s (SIGHUP: the configuration in use stays)",
			err);
		return;
	}
	fixed_key(d, cfg.group_max_size != old->group_max_size,
		  "[groups] max_size");
	fixed_key(d, cfg.tsc_hz != old->tsc_hz, "[clock] tsc_hz");
	fixed_key(d, strcmp(cfg.proc_root, old->proc_root) != 0,
		  "[sources] proc");
	fixed_key(d, strcmp(cfg.sys_root, old->sys_root) != 0, "[sources] sys");
	fixed_key(d, cfg.hidepid != old->hidepid, "[access] hidepid");
	fixed_key(d,
		  cfg.access_gid != old->access_gid ||
			  cfg.access_gid_set != old->access_gid_set,
		  "[access] gid");
	fixed_key(d, cfg.exited_max_tasks != old->exited_max_tasks,
		  "[exited] max_tasks");
	fixed_key(d, !cfg.exited_keep_s != !old->exited_keep_s,
		  "[exited] keep (on or off)");
	engine_set_units(d->engine, cfg.units);
	d->cfg->units = cfg.units;
	if (d->exited && cfg.exited_keep_s) {
		exited_set_keep(d->exited, cfg.exited_keep_s);
		d->cfg->exited_keep_s = cfg.exited_keep_s;
	}
	log_msg(LOG_NOTICE, "%s re-read: units %s%s", d->config_path,
		config_units_name(cfg.units),
		d->exited ? ", exited tasks kept as it says" : "");
}

/* The thread that takes SIGHUP, blocked in every other thread. */
static void *reloader(void *arg)
{
	struct daemon *d = arg;
	sigset_t hup;
	int sig;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	for (;;) {
		if (sigwait(&hup, &sig) != 0)
			continue;
		if (__atomic_load_n(&d->stopping, __ATOMIC_ACQUIRE))
			return NULL;
		reload(d);
	}
}

static void start_reloader(struct daemon *d)
{
	sigset_t hup;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &hup, NULL); /* threads made from now on */
	if (pthread_create(&d->reloader, NULL, reloader, d) == 0)
		d->reloader_started = true;
	else
		log_msg(LOG_WARNING, "SIGHUP will not re-read the "
				     "configuration: no thread for it");
}

static void stop_reloader(struct daemon *d)
{
	if (!d->reloader_started)
		return;
	__atomic_store_n(&d->stopping, true, __ATOMIC_RELEASE);
	pthread_kill(d->reloader, SIGHUP);
	pthread_join(d->reloader, NULL);
	d->reloader_started = false;
}

/*
 * Keep exited tasks, where the configuration asks for them, the engine
 * reads this machine's /proc, and the kernel lets the daemon listen;
 * otherwise say why not, and serve without (exit_source none).
 */
static void start_exited(struct daemon *d)
{
	char err[512];
	int ret;

	if (!d->cfg->exited_keep_s || !engine_is_live(d->engine))
		return;
	ret = exited_new(d->cfg->exited_keep_s, d->cfg->exited_max_tasks,
			 &d->exited);
	if (ret == 0)
		ret = listener_start(d->engine, d->exited,
				     views_own_ns(d->views), log_msg,
				     &d->listener, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	if (ret < 0) {
		log_msg(LOG_WARNING, "exited tasks are not kept: %s", err);
		exited_free(d->exited);
		d->exited = NULL;
		return;
	}
	fs_set_exited(d->fs, d->exited, d->listener);
}

/* Mount, serve until unmounted or signalled; returns the exit status. */
static int serve(struct fuse_session *se, const char *mountpoint,
		 const struct fuse_cmdline_opts *cmd, struct daemon *d)
{
	int ret;

	if (fuse_session_mount(se, mountpoint) != 0)
		return EXIT_SERVE; /* libfuse said why */
	if (fuse_daemonize(cmd->foreground) != 0) {
		ret = EXIT_SERVE;
		goto out_unmount;
	}
	if (!cmd->foreground) {
		openlog("timingfs", LOG_PID, LOG_DAEMON);
		use_syslog = true;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		ret = EXIT_SERVE;
		goto out_unmount;
	}
	/*
	 * Threads only now: one made before the fork would be lost.
	 * SIGHUP re-reads the configuration rather than end the loop.
	 */
	start_reloader(d);
	start_exited(d);
	ret = run_loop(se, cmd);
	stop_reloader(d);
	fuse_remove_signal_handlers(se);
	/* The loop returns the signal that ended it: a clean stop. */
	if (ret == SIGTERM || ret == SIGINT)
		ret = 0;
	if (ret != 0) {
		log_msg(LOG_ERR, "serving %s failed: %s", mountpoint,
			strerror(ret < 0 ? -ret : ret));
		ret = EXIT_SERVE;
	}
out_unmount:
	fuse_session_unmount(se);
	listener_stop(d->listener);
	d->listener = NULL;
	return ret;
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

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct options o = { 0 };
	struct engine *engine = NULL;
	struct views *views = NULL;
	struct access_policy access;
	struct fuse_session *se;
	struct daemon d = { 0 };
	const char *config_path = NULL;
	char *config_abs = NULL;
	struct fs *fs = NULL;
	char *mountpoint = NULL;
	struct config cfg;
	char err[512];
	int status = EXIT_USAGE;

	malloc_policy();
	fuse_set_log_func(fuse_log_to);
	if (fuse_opt_parse(&args, &o, option_spec, option_key) != 0)
		goto out;
	if (o.help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		status = 0;
		goto out;
	}
	if (o.version) {
		printf("timingfs version %s\nlibfuse version %s\n",
		       TIMINGFS_VERSION, fuse_pkgversion());
		status = 0;
		goto out;
	}
	if (add_mount_defaults(&args, &o) != 0 ||
	    fuse_parse_cmdline(&args, &cmd) != 0)
		goto out;
	if (!o.mountpoint) {
		log_msg(LOG_ERR, "no mount point given (see --help)");
		goto out;
	}
	if (load_config(&o, &cfg, &config_path) < 0)
		goto out;
	/* Absolute, for SIGHUP: the daemon works from / (fuse_daemonize). */
	if (config_path) {
		config_abs = realpath(config_path, NULL);
		config_path = config_abs ? config_abs : config_path;
	}
	mountpoint = resolve_mountpoint(&o);
	if (!mountpoint) {
		status = EXIT_SERVE;
		goto out;
	}
	if (preflight(&o, mountpoint) < 0) {
		status = EXIT_SERVE;
		goto out;
	}
	if (views_new(o.pidns, &views, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		goto out;
	}
	if (!views_can_translate(views))
		log_msg(LOG_WARNING,
			"this kernel cannot translate process numbers between "
			"PID namespaces (Linux 4.9 or later can): readers in "
			"other namespaces see an empty proc/");
	if (access_resolve(&cfg, "/proc/self/mountinfo", &access, err,
			   sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		status = EXIT_SERVE;
		goto out;
	}
	if (engine_new(&cfg, &engine, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		status = EXIT_SERVE;
		goto out;
	}
	if (fs_new(engine, views, &access, &fs) < 0) {
		log_msg(LOG_ERR, "out of memory");
		status = EXIT_SERVE;
		goto out;
	}
	se = fuse_session_new(&args, fs_operations(),
			      sizeof(struct fuse_lowlevel_ops), fs);
	if (!se)
		goto out; /* libfuse said which option it did not take */
	fs_set_session(fs, se);
	d.cfg = &cfg;
	d.config_path = config_path;
	d.engine = engine;
	d.views = views;
	d.fs = fs;
	status = serve(se, mountpoint, &cmd, &d);
	fuse_session_destroy(se);
out:
	fs_free(fs);
	exited_free(d.exited);
	engine_free(engine);
	views_free(views);
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
