/* TEMPORARY stub until the real module lands. */
#ifndef TIMINGFS_MOUNTINFO_H
#define TIMINGFS_MOUNTINFO_H
#include <stddef.h>
#include <sys/types.h>
#include "config.h"
struct access_policy {
	enum hidepid hidepid;
	gid_t gid;
};
int access_resolve(const struct config *cfg, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen);
#endif
