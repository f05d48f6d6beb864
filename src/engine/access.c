/*
 * access: who may see a task (access.h): procfs's hidepid= and gid=,
 * parsed from /proc/self/mountinfo, and the pieces of procfs's rule.
 *
 * A line of mountinfo (proc(5)) is
 *
 *	ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
 *
 * with blanks, tabs, newlines, backslashes (and, in newer kernels, '#')
 * in paths written as octal escapes (\040). The file is read whole,
 * however large, and cut into lines and fields in place: no line or
 * field has a size limit.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "decimal.h"
#include "procfile.h"

/* The fields of one line that matter here, pointing into the line. */
struct mount_line {
	char *mount_point; /* unescaped */
	const char *type;
	char *super; /* NULL when the line ends after the source */
};

/*
 * The next blank-separated field at *@p, NUL-terminated in place, and
 * *@p moved past it; NULL at the end of the line.
 */
static char *next_field(char **p)
{
	char *start = *p + strspn(*p, " "), *end;

	if (!*start)
		return NULL;
	end = start + strcspn(start, " ");
	if (*end)
		*end++ = '\0';
	*p = end;
	return start;
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * Decode the kernel's \ooo escapes of @s in place. The kernel escapes
 * only what would break the line (\040 \011 \012 \134, \043), never a
 * NUL: \000 is left as it is.
 */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    is_octal(s[2]) && is_octal(s[3]) &&
		    (s[1] != '0' || s[2] != '0' || s[3] != '0')) {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					(s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

/*
 * The length of the mount point @mnt when it holds @path (is it, or a
 * directory above it), else -1.
 */
static int holds(const char *mnt, const char *path)
{
	size_t len = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return path[0] == '/' ? 1 : -1;
	if (strncmp(mnt, path, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'))
		return (int)len;
	return -1;
}

/*
 * Cut @line into @m: the mount point (field 5, unescaped) and the type,
 * source and super options after the "-" that ends the optional fields.
 * Returns 0, or -EIO when fields are missing.
 */
static int parse_line(char *line, struct mount_line *m)
{
	char *p = line, *f = NULL;
	int i;

	for (i = 0; i < 6; i++) {
		f = next_field(&p);
		if (!f)
			return -EIO;
		if (i == 4)
			m->mount_point = f;
	}
	do
		f = next_field(&p);
	while (f && strcmp(f, "-") != 0);
	if (!f)
		return -EIO; /* no separator */
	m->type = next_field(&p);
	if (!m->type || !next_field(&p))
		return -EIO; /* no type, or no source */
	m->super = next_field(&p);
	unescape(m->mount_point);
	return 0;
}

/* procfs's super options, "rw,hidepid=invisible,gid=4242". */
static int parse_super(char *opts, enum hidepid *hidepid, gid_t *gid)
{
	char *save = NULL, *o;
	int ret = 0;

	*hidepid = HIDEPID_OFF;
	*gid = ACCESS_GID_NONE;
	for (o = strtok_r(opts, ",", &save); o && ret == 0;
	     o = strtok_r(NULL, ",", &save)) {
		if (strncmp(o, "hidepid=", 8) == 0)
			ret = hidepid_parse(o + 8, true, hidepid) < 0 ? -EIO :
									0;
		else if (strncmp(o, "gid=", 4) == 0)
			ret = gid_parse(o + 4, gid) < 0 ? -EIO : 0;
	}
	return ret;
}

/*
 * The mount of @text (cut in place) that holds @path into @found: the
 * deepest mount point, and of those the last line. Returns 1 when one
 * does, 0 when none does, -EIO for a malformed line.
 */
static int find_mount(char *text, const char *path, struct mount_line *found)
{
	struct mount_line m;
	char *line, *next;
	int len, best = -1;

	for (line = text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (!*line)
			continue;
		if (parse_line(line, &m) < 0)
			return -EIO;
		len = holds(m.mount_point, path);
		if (len >= 0 && len >= best) {
			best = len;
			*found = m;
		}
	}
	return best >= 0;
}

int mountinfo_parse_access(char *text, const char *proc_root,
			   enum hidepid *hidepid, gid_t *gid)
{
	enum hidepid h = HIDEPID_OFF;
	gid_t g = ACCESS_GID_NONE;
	struct mount_line m;
	int ret;

	ret = find_mount(text, proc_root, &m);
	if (ret > 0 && strcmp(m.type, "proc") == 0)
		/* procfs always has super options: "rw" at least. */
		ret = m.super ? parse_super(m.super, &h, &g) : -EIO;
	if (ret < 0)
		return ret;
	*hidepid = h;
	*gid = g;
	return 0;
}

int mountinfo_proc_access(const char *mountinfo_path, const char *proc_root,
			  enum hidepid *hidepid, gid_t *gid)
{
	char *text;
	int ret;

	ret = procfile_read_alloc(mountinfo_path, 4096, &text);
	if (ret < 0)
		return ret;
	ret = mountinfo_parse_access(text, proc_root, hidepid, gid);
	free(text);
	return ret;
}

int mountinfo_type_at(const char *mountinfo_path, const char *path, char *type,
		      size_t size)
{
	struct mount_line m;
	char *text;
	int ret;

	ret = procfile_read_alloc(mountinfo_path, 4096, &text);
	if (ret < 0)
		return ret;
	ret = find_mount(text, path, &m);
	if (ret > 0 && strcmp(m.mount_point, path) != 0)
		ret = 0; /* held by a mount above it */
	if (ret > 0)
		snprintf(type, size, "%s", m.type);
	free(text);
	return ret;
}

int access_resolve(enum hidepid hidepid, const gid_t *gid,
		   const char *proc_root, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen)
{
	gid_t procfs_gid = ACCESS_GID_NONE;
	char *real;
	int ret;

	if (hidepid == HIDEPID_AUTO) {
		/*
		 * mountinfo names mounts by their real paths: a proc root
		 * reached through a symbolic link would otherwise be held
		 * by "/" and hide nothing. One that does not exist (yet)
		 * is looked up as written.
		 */
		real = realpath(proc_root, NULL);
		ret = mountinfo_proc_access(mountinfo_path,
					    real ? real : proc_root, &hidepid,
					    &procfs_gid);
		free(real);
		if (ret < 0) {
			snprintf(err, errlen, "%s: %s", mountinfo_path,
				 ret == -EIO ? "not what the kernel writes" :
					       strerror(-ret));
			return ret;
		}
	}
	out->hidepid = hidepid;
	out->gid = gid ? *gid : procfs_gid;
	return 0;
}

/* ---- who may see a task --------------------------------------------- */

bool access_ids_match(const uid_t uid[3], const gid_t gid[3], uid_t fsuid,
		      gid_t fsgid)
{
	int i;

	for (i = 0; i < 3; i++)
		if (uid[i] != fsuid || gid[i] != fsgid)
			return false;
	return true;
}

bool access_caps_cover(uint64_t eff, uint64_t prm)
{
	return (prm & ~eff) == 0;
}

ino_t access_userns_of(pid_t pid)
{
	char path[48];

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/user");
	return procfile_ns_ino(path, "user");
}

int access_reader_caps(pid_t tid, uint64_t *eff, ino_t *userns)
{
	char path[48], *status = NULL, *end;
	const char *cap;
	int ret;

	if (tid <= 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	ret = procfile_read_alloc(path, 2048, &status);
	if (ret < 0)
		return ret == -ENOENT || ret == -ESRCH ? -ENOENT : -EIO;
	cap = procfile_field(status, "CapEff:");
	ret = -EIO;
	if (cap) {
		errno = 0;
		*eff = strtoull(cap, &end, 16);
		if (!errno && end != cap)
			ret = 0;
	}
	free(status);
	if (ret == 0)
		*userns = access_userns_of(tid);
	return ret;
}

bool access_same_process(pid_t pid, pid_t tid)
{
	char path[64];

	if (pid <= 0 || tid <= 0)
		return false;
	if (pid == tid)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}
