/*
 * mountinfo: parsing /proc/self/mountinfo for procfs's hidepid= and gid=.
 *
 * A line of mountinfo (proc(5)) is
 *
 *	ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
 *
 * with blanks, tabs, newlines and backslashes in paths written as octal
 * escapes (\040). The file is read whole, however large.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
#include "procfile.h"

#define MAX_FIELDS 64

/* Decode the kernel's \ooo escapes of @s in place. */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/* Whether the mount point @mnt holds @path: the same, or above it. */
static bool holds(const char *mnt, const char *path)
{
	size_t len = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return path[0] == '/';
	return strncmp(mnt, path, len) == 0 &&
	       (path[len] == '\0' || path[len] == '/');
}

/* Split @line at blanks into @field; the count, or -EIO. */
static int split(char *line, char **field)
{
	int n = 0;
	char *save = NULL, *f;

	for (f = strtok_r(line, " ", &save); f;
	     f = strtok_r(NULL, " ", &save)) {
		if (n == MAX_FIELDS)
			return -EIO;
		field[n++] = f;
	}
	return n;
}

static int parse_hidepid(const char *v, enum hidepid *hidepid)
{
	if (!strcmp(v, "0") || !strcmp(v, "off"))
		*hidepid = HIDEPID_OFF;
	else if (!strcmp(v, "1") || !strcmp(v, "noaccess"))
		*hidepid = HIDEPID_NOACCESS;
	else if (!strcmp(v, "2") || !strcmp(v, "invisible") ||
		 !strcmp(v, "4") || !strcmp(v, "ptraceable"))
		*hidepid = HIDEPID_INVISIBLE;
	else
		return -EIO;
	return 0;
}

static int parse_gid(const char *v, gid_t *gid)
{
	uint64_t n;

	if (procfile_canonical_uint(v, CONFIG_GID_MAX, &n) < 0)
		return -EIO;
	*gid = (gid_t)n;
	return 0;
}

/* procfs's super options, "rw,hidepid=invisible,gid=4242". */
static int parse_super(char *opts, enum hidepid *hidepid, gid_t *gid)
{
	char *save = NULL, *o;
	int ret = 0;

	*hidepid = HIDEPID_OFF;
	*gid = CONFIG_GID_NONE;
	for (o = strtok_r(opts, ",", &save); o && ret == 0;
	     o = strtok_r(NULL, ",", &save)) {
		if (strncmp(o, "hidepid=", 8) == 0)
			ret = parse_hidepid(o + 8, hidepid);
		else if (strncmp(o, "gid=", 4) == 0)
			ret = parse_gid(o + 4, gid);
	}
	return ret;
}

/*
 * One line: -EIO if malformed; else the length of its mount point when
 * it holds @path (and the rules of its mount: OFF for one that is not
 * procfs), or -ENOENT when it does not hold it.
 */
static int parse_line(char *line, const char *path, enum hidepid *hidepid,
		      gid_t *gid)
{
	char *field[MAX_FIELDS];
	int n, sep;

	n = split(line, field);
	if (n < 0)
		return n;
	for (sep = 6; sep < n && strcmp(field[sep], "-") != 0; sep++)
		;
	if (n < 7 || sep + 2 >= n)
		return -EIO; /* no separator, type or source */
	unescape(field[4]);
	if (!holds(field[4], path))
		return -ENOENT;
	*hidepid = HIDEPID_OFF;
	*gid = CONFIG_GID_NONE;
	if (strcmp(field[sep + 1], "proc") == 0 &&
	    (sep + 3 >= n || parse_super(field[sep + 3], hidepid, gid) < 0))
		return -EIO; /* procfs always has super options */
	return (int)strlen(field[4]);
}

int mountinfo_proc_access(const char *mountinfo_path, const char *path,
			  enum hidepid *hidepid, gid_t *gid)
{
	char *text, *line, *next;
	enum hidepid h = HIDEPID_OFF, lh;
	gid_t g = CONFIG_GID_NONE, lg;
	int ret, best = -1;

	ret = procfile_read_alloc(mountinfo_path, 4096, &text);
	if (ret < 0)
		return ret;
	/* The deepest mount point that holds it; of those, the last. */
	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		ret = *line ? parse_line(line, path, &lh, &lg) : -ENOENT;
		if (ret == -EIO)
			break;
		if (ret >= best) {
			best = ret;
			h = lh;
			g = lg;
		}
	}
	free(text);
	if (ret == -EIO)
		return ret;
	*hidepid = h;
	*gid = g;
	return 0;
}

int access_resolve(const struct config *cfg, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen)
{
	enum hidepid hidepid = cfg->hidepid;
	gid_t gid = CONFIG_GID_NONE;
	int ret;

	if (hidepid == HIDEPID_AUTO) {
		ret = mountinfo_proc_access(mountinfo_path, cfg->proc_root,
					    &hidepid, &gid);
		if (ret < 0) {
			snprintf(err, errlen, "%s: %s", mountinfo_path,
				 ret == -EIO ? "not what the kernel writes" :
					       strerror(-ret));
			return ret;
		}
	}
	out->hidepid = hidepid;
	out->gid = cfg->access_gid_set ? cfg->access_gid : gid;
	return 0;
}
