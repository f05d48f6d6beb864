/*
 * main: timingfs's command line, configuration and lifetime.
 *
 * Parses the options (ours, then libfuse's), loads the configuration,
 * builds the engine, mounts and serves until unmounted or signalled.
 * This is the only place that exits; the exit status says what went
 * wrong: 1 cannot mount or serve, 2 bad usage or configuration.
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
#include "fs.h"

#include <fuse_lowlevel.h>

#define EXIT_SERVE 1
#define EXIT_USAGE 2

/* Worker threads at most, when multi-threaded. */
#define MAX_THREADS 8

struct options {
	const char *config;
	int help;
	int version;
};

enum { KEY_HELP, KEY_VERSION };

static const struct fuse_opt option_spec[] = {
	{ "-c %s", offsetof(struct options, config), 0 },
	{ "--config=%s", offsetof(struct options, config), 0 },
	{ "config=%s", offsetof(struct options, config), 0 },
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

	(void)arg;
	(void)args;
	switch (key) {
	case KEY_HELP:
		o->help = 1;
		return 0;
	case KEY_VERSION:
		o->version = 1;
		return 0;
	}
	return 1; /* keep the rest for libfuse */
}

static void usage(const char *prog)
{
	printf("usage: %s [options] MOUNTPOINT\n\n"
	       "Windows timing data (cycles, process and thread times, idle\n"
	       "cycles of processor groups) as files.\n\n"
	       "timingfs options:\n"
	       "    -c FILE, --config=FILE, -o config=FILE\n"
	       "                           configuration file (default: %s\n"
	       "                           when present)\n"
	       "    -f                     stay in the foreground\n"
	       "    -d                     debug output (implies -f)\n"
	       "    -s                     single-threaded\n"
	       "    -o OPT[,OPT...]        mount options\n"
	       "    -h, --help             this help\n"
	       "    -V, --version          the version\n\n",
	       prog, CONFIG_DEFAULT_PATH);
}

/* The configuration: the one named, else the default file, else none. */
static int load_config(const struct options *o, struct config *cfg)
{
	char err[512];
	const char *path = o->config;

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

/* Serve until unmounted or signalled; returns the exit status. */
static int serve(struct fuse *fuse, const struct fuse_cmdline_opts *cmd)
{
	struct fuse_session *se = fuse_get_session(fuse);
	struct fuse_loop_config *loop;
	int ret;

	if (fuse_mount(fuse, cmd->mountpoint) != 0)
		return EXIT_SERVE;
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
	if (cmd->singlethread) {
		ret = fuse_loop(fuse);
	} else {
		loop = fuse_loop_cfg_create();
		if (!loop) {
			ret = EXIT_SERVE;
			goto out_signals;
		}
		fuse_loop_cfg_set_clone_fd(loop, cmd->clone_fd);
		fuse_loop_cfg_set_max_threads(loop, MAX_THREADS);
		fuse_loop_cfg_set_idle_threads(loop, MAX_THREADS / 2);
		ret = fuse_loop_mt(fuse, loop);
		fuse_loop_cfg_destroy(loop);
	}
	/* A signal that ended the loop is a clean stop. */
	if (ret == SIGTERM || ret == SIGINT || ret == SIGHUP)
		ret = 0;
	if (ret != 0) {
		log_msg(LOG_ERR, "serving failed: %s",
			strerror(ret < 0 ? -ret : ret));
		ret = EXIT_SERVE;
	}
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_unmount(fuse);
	return ret;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct options o = { 0 };
	struct engine *engine = NULL;
	struct fuse *fuse;
	struct config cfg;
	char err[512];
	int status = EXIT_USAGE;

	fuse_set_log_func(fuse_log_to);
	if (fuse_opt_parse(&args, &o, option_spec, option_key) != 0)
		goto out;
	if (o.help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lib_help(&args);
		status = 0;
		goto out;
	}
	if (o.version) {
		printf("timingfs %s\nlibfuse %s\n", TIMINGFS_VERSION,
		       fuse_pkgversion());
		status = 0;
		goto out;
	}
	if (fuse_parse_cmdline(&args, &cmd) != 0)
		goto out;
	if (!cmd.mountpoint) {
		log_msg(LOG_ERR, "no mount point given (see --help)");
		goto out;
	}
	if (load_config(&o, &cfg) < 0)
		goto out;
	/* Read-only, and gone with the daemon even when it is killed. */
	if (fuse_opt_add_arg(&args, "-oro,auto_unmount,fsname=timingfs,"
				    "subtype=timingfs") != 0)
		goto out;
	if (engine_new(&cfg, &engine, err, sizeof(err)) < 0) {
		log_msg(LOG_ERR, "%s", err);
		status = EXIT_SERVE;
		goto out;
	}
	fuse = fuse_new(&args, fs_operations(), sizeof(struct fuse_operations),
			engine);
	if (!fuse)
		goto out; /* libfuse said which option it did not take */
	status = serve(fuse, &cmd);
	fuse_destroy(fuse);
out:
	engine_free(engine);
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return status;
}
