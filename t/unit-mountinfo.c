/*
 * unit-mountinfo: procfs's hidepid= and gid= from mountinfo files under
 * t/fixtures/mountinfo (argv[1] is t/fixtures), and the access rules a
 * configuration resolves to.
 *
 *	machine      a capture of a test machine's own: /proc listed
 *	             before "/", as after an initramfs; no hidepid
 *	plain        a Debian machine's, /proc without hidepid
 *	invisible    the same, /proc with gid=1234,hidepid=invisible
 *	numeric      an older kernel's: gid=27,hidepid=2
 *	noaccess     a Fedora machine's: hidepid=noaccess, root mount id 1
 *	escaped      mount points with \040 \011 \012 \134 \043 (and \000,
 *	             which the kernel never writes)
 *	overmounted  /proc mounted three times (the last wins), "/"
 *	             mounted over, a captured tree on tmpfs
 *	values       every spelling of hidepid=, gid= alone, a tmpfs with
 *	             procfs's options, a bad procfs off the path, /pro
 *	empty        no mounts at all
 *	bad-hidepid, bad-gid, no-separator, no-source, no-super,
 *	short-line   not what the kernel writes
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "config.h"
#include "tap.h"

static const char *fixtures;

static const char *file(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/mountinfo/%s", fixtures, name);
	return path;
}

/*
 * "HIDEPID GID" of mountinfo_proc_access on fixture @name for @path, or
 * the error code; with "untouched" when it failed but wrote its outputs.
 */
static const char *access_of(const char *name, const char *path)
{
	static char text[64];
	enum hidepid h = HIDEPID_AUTO;
	gid_t g = 99;
	int ret;

	ret = mountinfo_proc_access(file(name), path, &h, &g);
	if (ret < 0) {
		snprintf(text, sizeof(text), "%d%s", ret,
			 h == HIDEPID_AUTO && g == 99 ? "" : " touched");
		return text;
	}
	if (g == ACCESS_GID_NONE)
		snprintf(text, sizeof(text), "%s none", hidepid_name(h));
	else
		snprintf(text, sizeof(text), "%s %u", hidepid_name(h),
			 (unsigned int)g);
	return text;
}

static void test_machines(void)
{
	check_str(access_of("machine", "/proc"), "off none",
		  "machine: /proc (listed before /) hides nothing");
	check_str(access_of("machine", "/sys/fs/cgroup/cpu"), "off none",
		  "machine: a cgroup directory is not procfs");
	check_str(access_of("plain", "/proc"), "off none",
		  "plain: /proc without hidepid= is off, no gid");
	check_str(access_of("invisible", "/proc"), "invisible 1234",
		  "invisible: hidepid=invisible,gid=1234");
	check_str(access_of("numeric", "/proc"), "invisible 27",
		  "numeric: gid=27,hidepid=2 is invisible, 27");
	check_str(access_of("numeric", "/proc/sys/fs/binfmt_misc/status"),
		  "off none", "numeric: autofs over a part of /proc");
	check_str(access_of("noaccess", "/proc"), "noaccess none",
		  "noaccess: hidepid=noaccess, no gid");
}

/* Which mount holds a path: components, not characters. */
static void test_paths(void)
{
	check_str(access_of("invisible", "/proc/"), "invisible 1234",
		  "/proc/ is /proc");
	check_str(access_of("invisible", "/proc/1/task"), "invisible 1234",
		  "/proc holds /proc/1/task");
	check_str(access_of("invisible", "/procfoo"), "off none",
		  "/proc does not hold /procfoo");
	check_str(access_of("invisible", "/"), "off none",
		  "/ is held by / alone");
	check_str(access_of("invisible", "/srv/tree/proc"), "off none",
		  "a captured tree in a directory of / is not procfs");
	check_str(access_of("invisible", "/run/timingfs/proc"), "off none",
		  "nor is one in a FUSE file system");
	check_str(access_of("invisible", "/proc/sys/fs/binfmt_misc"),
		  "off none", "a mount inside /proc is its own");
	check_str(access_of("values", "/pro"), "noaccess none",
		  "a procfs on /pro holds /pro");
	check_str(access_of("values", "/pro/1"), "noaccess none", "and /pro/1");
	check_str(access_of("values", "/prox"), "off none",
		  "/pro does not hold /prox");
	check_str(access_of("values", "/proc"), "invisible none",
		  "/proc is held by /proc, not /pro");
	check_str(access_of("empty", "/proc"), "off none",
		  "no mount holds it: nothing hidden");
}

static void test_escapes(void)
{
	check_str(access_of("escaped", "/srv/my tree/proc"), "invisible 1234",
		  "\\040 is a blank");
	check_str(access_of("escaped", "/srv/my tree"), "off none",
		  "a mount below the path does not hold it");
	check_str(access_of("escaped", "/srv/tab\tand\\back/proc"),
		  "noaccess none", "\\011 is a tab, \\134 a backslash");
	check_str(access_of("escaped", "/srv/hash#proc"), "invisible 7",
		  "\\043 is a '#'");
	check_str(access_of("escaped", "/srv/new\nline"), "noaccess 8",
		  "\\012 is a newline");
	check_str(access_of("escaped", "/srv/nul\\000proc"), "invisible none",
		  "\\000 is not decoded");
	check_str(access_of("escaped", "/srv/nul"), "off none",
		  "so it does not cut the mount point");
	check_str(access_of("escaped", "/srv/my\\040tree"), "noaccess 9",
		  "\\134040 is a backslash and 040, decoded once");
}

static void test_overmounted(void)
{
	check_str(access_of("overmounted", "/proc"), "invisible none",
		  "/proc mounted three times: the last wins, gid and all");
	check_str(access_of("overmounted", "/proc/sys/fs/binfmt_misc"),
		  "off none", "a mount inside the first /proc");
	check_str(access_of("overmounted", "/srv/tree/proc"), "off none",
		  "a captured tree on tmpfs is not procfs");
	check_str(access_of("overmounted", "/srv/other"), "off none",
		  "/ mounted over: the last of the two");
}

static void test_values(void)
{
	check_str(access_of("values", "/srv/h0"), "off none", "hidepid=0");
	check_str(access_of("values", "/srv/hoff"), "off none", "hidepid=off");
	check_str(access_of("values", "/srv/h1"), "noaccess none", "hidepid=1");
	check_str(access_of("values", "/srv/hnoaccess"), "noaccess none",
		  "hidepid=noaccess");
	check_str(access_of("values", "/srv/h2"), "invisible none",
		  "hidepid=2");
	check_str(access_of("values", "/srv/hinvisible"), "invisible none",
		  "hidepid=invisible");
	check_str(access_of("values", "/srv/h4"), "invisible none",
		  "hidepid=4 is taken as invisible");
	check_str(access_of("values", "/srv/hptraceable"), "invisible none",
		  "hidepid=ptraceable is taken as invisible");
	check_str(access_of("values", "/srv/subset"), "invisible 0",
		  "gid=0, subset=pid ignored");
	check_str(access_of("values", "/srv/gidonly/1"), "off 4294967294",
		  "gid= alone, the largest GID");
	check_str(access_of("values", "/srv/fake"), "off none",
		  "procfs's options on a tmpfs mean nothing");
	check_str(access_of("values", "/srv/bad"), "-5",
		  "hidepid=7 on the procfs read is EIO");
}

static void test_errors(void)
{
	check_str(access_of("bad-hidepid", "/proc"), "-5",
		  "an unknown hidepid value is EIO, outputs untouched");
	check_str(access_of("bad-gid", "/proc"), "-5", "gid=staff is EIO");
	check_str(access_of("bad-gid", "/srv/big"), "-5",
		  "gid=4294967295 is EIO");
	check_str(access_of("bad-gid", "/srv/lead"), "-5", "gid=007 is EIO");
	check_str(access_of("bad-gid", "/srv/neg"), "-5", "gid=-1 is EIO");
	check_str(access_of("bad-gid", "/srv/empty"), "-5", "gid= is EIO");
	check_str(access_of("bad-gid", "/srv/ok"), "off none",
		  "bad options of a procfs not read do not matter");
	check_str(access_of("no-separator", "/proc"), "-5",
		  "a line without its separator is EIO");
	check_str(access_of("no-source", "/proc"), "-5",
		  "a line without a source is EIO");
	check_str(access_of("no-super", "/proc"), "-5",
		  "a procfs without super options is EIO");
	check_str(access_of("no-super", "/srv"), "off none",
		  "another file system may lack them");
	check_str(access_of("short-line", "/proc"), "-5",
		  "a short line anywhere is EIO");
	check_str(access_of("nonexistent", "/proc"), "-2",
		  "no mountinfo: ENOENT");
	check_str(access_of("", "/proc"), "-21", "a directory: EISDIR");
}

/* config_access on fixture @name; "RET HIDEPID GID" and the error. */
static const char *resolve(const struct config *cfg, const char *name,
			   char *err, size_t errlen)
{
	static char text[64];
	struct access_policy a = { HIDEPID_AUTO, 99 };
	int ret;

	err[0] = '\0';
	ret = config_access(cfg, file(name), &a, err, errlen);
	if (a.gid == ACCESS_GID_NONE)
		snprintf(text, sizeof(text), "%d %s none", ret,
			 hidepid_name(a.hidepid));
	else
		snprintf(text, sizeof(text), "%d %s %u", ret,
			 hidepid_name(a.hidepid), (unsigned int)a.gid);
	return text;
}

static void test_resolve(void)
{
	char err[256], want[256], dir[] = "/tmp/timingfs-mi.XXXXXX";
	char link[64];
	struct config cfg;

	config_defaults(&cfg);
	check_str(resolve(&cfg, "invisible", err, sizeof(err)),
		  "0 invisible 1234", "auto: procfs's hidepid and gid");
	check_str(resolve(&cfg, "numeric", err, sizeof(err)), "0 invisible 27",
		  "auto: an older kernel's numbers");
	check_str(resolve(&cfg, "machine", err, sizeof(err)), "0 off none",
		  "auto: a /proc without hidepid");
	cfg.access_gid_set = true;
	cfg.access_gid = 7;
	check_str(resolve(&cfg, "invisible", err, sizeof(err)), "0 invisible 7",
		  "auto with a gid given: the given gid wins");
	cfg.access_gid = 0;
	check_str(resolve(&cfg, "invisible", err, sizeof(err)), "0 invisible 0",
		  "and gid 0 as well");
	check_str(resolve(&cfg, "machine", err, sizeof(err)), "0 off 0",
		  "a gid given with a procfs that has none");

	config_defaults(&cfg);
	strcpy(cfg.proc_root, "/srv/tree/proc");
	check_str(resolve(&cfg, "invisible", err, sizeof(err)), "0 off none",
		  "auto on a captured tree hides nothing");

	config_defaults(&cfg);
	cfg.hidepid = HIDEPID_OFF;
	check_str(resolve(&cfg, "nonexistent", err, sizeof(err)), "0 off none",
		  "explicit off reads no mountinfo");
	cfg.hidepid = HIDEPID_NOACCESS;
	check_str(resolve(&cfg, "invisible", err, sizeof(err)),
		  "0 noaccess none",
		  "explicit noaccess: no gid, procfs's not taken");
	cfg.hidepid = HIDEPID_INVISIBLE;
	cfg.access_gid_set = true;
	cfg.access_gid = 5;
	check_str(resolve(&cfg, "nonexistent", err, sizeof(err)),
		  "0 invisible 5", "explicit invisible with gid 5");

	/* A proc root reached through a symbolic link is the real one's. */
	config_defaults(&cfg);
	if (mkdtemp(dir)) {
		snprintf(link, sizeof(link), "%s/p", dir);
		if (symlink("/proc", link) == 0) {
			strcpy(cfg.proc_root, link);
			check_str(resolve(&cfg, "invisible", err, sizeof(err)),
				  "0 invisible 1234",
				  "auto through a symbolic link to /proc");
			unlink(link);
		} else {
			tap_skip("auto through a symbolic link to /proc",
				 "cannot make a symbolic link");
		}
		rmdir(dir);
	} else {
		tap_skip("auto through a symbolic link to /proc",
			 "cannot make a temporary directory");
	}

	config_defaults(&cfg);
	check_str(resolve(&cfg, "bad-hidepid", err, sizeof(err)), "-5 auto 99",
		  "auto on a broken mountinfo: EIO, untouched");
	snprintf(want, sizeof(want), "%s: not what the kernel writes",
		 file("bad-hidepid"));
	check_str(err, want, "and the message names the file");
	check_str(resolve(&cfg, "nonexistent", err, sizeof(err)), "-2 auto 99",
		  "auto without a mountinfo: ENOENT");
	snprintf(want, sizeof(want), "%s: No such file or directory",
		 file("nonexistent"));
	check_str(err, want, "and the message says why");
	memset(err, 'x', sizeof(err));
	resolve(&cfg, "nonexistent", err, 8);
	check(err[7] == '\0' && err[8] == 'x', "the message fits errlen");
	cfg.access_gid_set = true;
	cfg.access_gid = 5;
	check_str(resolve(&cfg, "short-line", err, sizeof(err)), "-5 auto 99",
		  "a gid given does not hide a broken file");
}

/* The pieces of procfs's access check (ptrace_may_access). */
static void test_access_pieces(void)
{
	uid_t uid[3] = { 1000, 1000, 1000 },
	      setuid_other[3] = { 1000, 2000, 2000 };
	gid_t gid[3] = { 100, 100, 100 }, setgid[3] = { 100, 100, 50 };

	check(access_ids_match(uid, gid, 1000, 100),
	      "ids: all six the reader's");
	check(!access_ids_match(setuid_other, gid, 2000, 100),
	      "ids: a setuid process is not its effective uid's");
	check(!access_ids_match(setuid_other, gid, 1000, 100),
	      "ids: nor its real uid's");
	check(!access_ids_match(uid, setgid, 1000, 100),
	      "ids: a saved gid of another group is not the reader's");
	check(!access_ids_match(uid, gid, 1000, 50),
	      "ids: a reader of another fsgid is not the owner");
	check(access_caps_cover(0, 0), "caps: none hold none");
	check(access_caps_cover(1ULL << 13, 1ULL << 13),
	      "caps: the same ones hold");
	check(!access_caps_cover(0, 1ULL << 13),
	      "caps: a task with cap_net_raw is not a plain reader's");
	check(!access_caps_cover(1ULL << 19, (1ULL << 19) | 1),
	      "caps: one missing is enough");
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "t/fixtures";
	test_machines();
	test_paths();
	test_escapes();
	test_overmounted();
	test_values();
	test_errors();
	test_resolve();
	test_access_pieces();
	return tap_done();
}
