/*
 * config: timingfs's configuration, read from an INI file with inih.
 *
 * This is the only module that knows inih. It turns a file into a
 * struct config, checking every section, key and value against the
 * contract; it never exits and never prints, so that the caller decides
 * what an error costs: main exits 2, and SIGHUP's reload (daemon.h)
 * keeps the configuration in use when the new one is bad.
 */
#ifndef TIMINGFS_CONFIG_H
#define TIMINGFS_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#include "access.h"
#include "engine.h"
#include "policy.h"

#define CONFIG_DEFAULT_PATH "/etc/timingfs.conf"
#define CONFIG_GROUP_MAX 64
#define CONFIG_ROOT_MAX 1024

/* [exited]: how long, and how many, exited tasks stay readable. */
#define CONFIG_KEEP_DEFAULT 60
#define CONFIG_KEEP_MAX 86400 /* a day */
#define CONFIG_MAX_TASKS_DEFAULT 65536
#define CONFIG_MAX_TASKS_MAX 4194304 /* the kernel's PID_MAX_LIMIT */

/* [limits]: the budgets of snapshot memory, in MiB (budget.h). */
#define CONFIG_READER_SNAPSHOTS_DEFAULT 32
#define CONFIG_TOTAL_SNAPSHOTS_DEFAULT 128
#define CONFIG_SNAPSHOTS_MAX 65536 /* 64 GiB */
#define CONFIG_READER_VIEWS_DEFAULT 64 /* view.h's VIEW_UID_MAX */
#define CONFIG_READER_VIEWS_MAX 958 /* view.h's VIEW_UID_MAX_LIMIT */

struct config {
	unsigned int group_max_size; /* [groups] max_size, 1..64 */
	enum units units; /* [format] units */
	uint64_t tsc_hz; /* [clock] tsc_hz; 0 means auto */
	char proc_root[CONFIG_ROOT_MAX]; /* [sources] proc */
	char sys_root[CONFIG_ROOT_MAX]; /* [sources] sys */
	enum task_source tasks; /* [sources] tasks; default auto */
	enum hidepid hidepid; /* [access] hidepid; default auto */
	gid_t access_gid; /* [access] gid; ACCESS_GID_NONE for none */
	bool access_gid_set; /* [access] gid gave a GID (it wins over auto) */
	unsigned int exited_keep_s; /* [exited] keep, 0..a day; 0: off */
	unsigned int exited_max_tasks; /* [exited] max_tasks, 1..2^22 */
	unsigned int reader_snapshots_mib; /* [limits] reader_snapshots */
	unsigned int total_snapshots_mib; /* [limits] total_snapshots */
	unsigned int reader_views; /* [limits] reader_views */
};

/*
 * config_defaults - fill @cfg with the built-in defaults: max_size 64,
 * units windows, tsc_hz auto, proc /proc, sys /sys, tasks auto,
 * hidepid auto, gid
 * none (not given), keep 60, max_tasks 65536, reader_snapshots 32 MiB,
 * total_snapshots 128 MiB, reader_views 64.
 */
void config_defaults(struct config *cfg);

/*
 * config_load - read the INI file at @path over the defaults into @cfg.
 *
 * Returns 0 on success. On failure returns -errno (-ENOENT and friends
 * for a file that cannot be opened, -EINVAL for bad content) and writes
 * one line into @err (no newline): "FILE: message" when the file cannot
 * be read, "FILE:LINE: message naming [section] key" for bad content.
 * @cfg is only written on success.
 */
int config_load(struct config *cfg, const char *path, char *err, size_t errlen);

/*
 * config_engine_opts - the engine's part of @cfg into @opts, whose
 * strings are @cfg's.
 */
void config_engine_opts(const struct config *cfg, struct engine_opts *opts);

/*
 * config_access - the access rules of @cfg (access_resolve()): its
 * hidepid, its gid where one was given, the procfs of its proc root as
 * @mountinfo_path shows it.
 */
int config_access(const struct config *cfg, const char *mountinfo_path,
		  struct access_policy *out, char *err, size_t errlen);

#endif
