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
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
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
	char *mountpoint; /* as given */
	int help;
	int version;
	int no_auto_unmount;
};

enum { KEY_HELP, KEY_VERSION };

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
		/* Ours, so that a missing directory is "cannot mount". */
		if (o->mountpoint) {
			log_msg(LOG_ERR, "one mount point only: %s, %s",
				o->mountpoint, arg);
			return -1;
		}
		o->mountpoint = strdup(arg);
		return o->mountpoint ? 0 : -1;
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
	printf("usage: %s [options] MOUNTPOINT\n\n"
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
	       "    -h, --help             this help\n"
	       "    -V, --version          the version\n\n"
	       "Containers: each reader sees the processes of its own PID\n"
	       "namespace, under its numbers. Mount once on the host with\n"
	       "-o allow_other and bind-mount it into containers, e.g.\n"
	       "    docker run -v /run/timingfs:/timingfs:ro IMAGE ...\n"
	       "[access] hidepid in the configuration hides other users'\n"
	       "processes as procfs's hidepid= does (auto: as the procfs\n"
	       "read is mounted).\n\n",
	       prog, CONFIG_DEFAULT_PATH);
}

/* The configuration: the one named, else the default file, else none. */
static int load_config(const struct options *o, struct config *cfg)
{
	const char *path = o->config;
	char err[512];

	if (!path && access(CONFIG_DEFAULT_PATH, F_OK) == 0)
		path = CONFIG_DEFAULT_PATH;
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
	const struct config *cfg;
	struct engine *engine;
	struct views *views;
	struct fs *fs;
	struct exited *exited;
	struct listener *listener;
};

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
	fs_set_exited(d->fs, d->exited, d->listener, d->cfg->exited_keep_s);
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
	/* Threads only now: one made before the fork would be lost. */
	start_exited(d);
	ret = run_loop(se, cmd);
	fuse_remove_signal_handlers(se);
	/* The loop returns the signal that ended it: a clean stop. */
	if (ret == SIGTERM || ret == SIGINT || ret == SIGHUP)
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
	struct fs *fs = NULL;
	char *mountpoint = NULL;
	struct config cfg;
	char err[512];
	int status = EXIT_USAGE;

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
	if (load_config(&o, &cfg) < 0)
		goto out;
	mountpoint = realpath(o.mountpoint, NULL);
	if (!mountpoint) {
		log_msg(LOG_ERR, "cannot mount on %s: %s", o.mountpoint,
			strerror(errno));
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
			"PID namespaces (Linux 6.10 or later can): readers in "
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
	d = (struct daemon){ &cfg, engine, views, fs, NULL, NULL };
	status = serve(se, mountpoint, &cmd, &d);
	fuse_session_destroy(se);
out:
	fs_free(fs);
	exited_free(d.exited);
	engine_free(engine);
	views_free(views);
	free(mountpoint);
	free(o.mountpoint);
	free(o.config);
	free(o.pidns);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return status;
}
