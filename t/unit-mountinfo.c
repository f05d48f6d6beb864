/*
 * unit-mountinfo: procfs's hidepid= and gid= from mountinfo files under
 * t/fixtures/mountinfo (argv[1] is t/fixtures), and the access rules a
 * configuration resolves to.
 *
 *	plain         a machine's own, /proc without hidepid
 *	invisible     the same, /proc with gid=4242,hidepid=invisible
 *	overmounted   /proc mounted twice (the last wins), a mount point
 *	              with a blank in it, a captured tree on tmpfs
 *	bad-hidepid, no-separator   not what the kernel writes
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mountinfo.h"
#include "tap.h"

static const char *fixtures;

static const char *file(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/mountinfo/%s", fixtures, name);
	return path;
}

/* "RET HIDEPID GID" of mountinfo_proc_access on fixture @name. */
static const char *access_of(const char *name, const char *path)
{
	static char text[64];
	enum hidepid h = HIDEPID_AUTO;
	gid_t g = 99;
	int ret;

	ret = mountinfo_proc_access(file(name), path, &h, &g);
	if (ret < 0) {
		snprintf(text, sizeof(text), "%d", ret);
		return text;
	}
	snprintf(text, sizeof(text), "%s %s%.0u", config_hidepid_name(h),
		 g == CONFIG_GID_NONE ? "none" : "",
		 g == CONFIG_GID_NONE ? 0 : (unsigned int)g);
	return text;
}

static void test_mounts(void)
{
	check_str(access_of("plain", "/proc"), "off none",
		  "plain /proc hides nothing");
	check_str(access_of("invisible", "/proc"), "invisible 4242",
		  "hidepid=invisible,gid=4242");
	check_str(access_of("invisible", "/proc/"), "invisible 4242",
		  "a trailing slash is the same directory");
	check_str(access_of("invisible", "/srv/tree/proc"), "off none",
		  "a captured tree on / is not procfs");
	check_str(access_of("invisible", "/procfoo"), "off none",
		  "/proc does not hold /procfoo");
	check_str(access_of("overmounted", "/proc"), "noaccess 27",
		  "/proc mounted twice: the last mount wins");
	check_str(access_of("overmounted", "/srv/my tree/proc"),
		  "noaccess none", "an escaped blank; numeric hidepid=1");
	check_str(access_of("overmounted", "/srv/tree/proc"), "off none",
		  "a tree on tmpfs is not procfs");
	check_str(access_of("overmounted", "/srv/tree2"), "off none",
		  "/srv/tree does not hold /srv/tree2");
	check_str(access_of("bad-hidepid", "/proc"), "-5",
		  "an unknown hidepid value is EIO");
	check_str(access_of("no-separator", "/proc"), "-5",
		  "a line without its separator is EIO");
	check_str(access_of("nonexistent", "/proc"), "-2",
		  "no mountinfo: ENOENT");
}

static void test_resolve(void)
{
	struct access_policy a;
	struct config cfg;
	char err[256];

	config_defaults(&cfg);
	check_int(access_resolve(&cfg, file("invisible"), &a, err, sizeof(err)),
		  0, "auto resolves");
	check(a.hidepid == HIDEPID_INVISIBLE && a.gid == 4242,
	      "auto: procfs's hidepid and gid");
	cfg.access_gid_set = true;
	cfg.access_gid = 7;
	access_resolve(&cfg, file("invisible"), &a, err, sizeof(err));
	check(a.hidepid == HIDEPID_INVISIBLE && a.gid == 7,
	      "auto with a gid given: the given gid wins");
	cfg.access_gid_set = false;
	cfg.access_gid = CONFIG_GID_NONE;
	access_resolve(&cfg, file("invisible"), &a, err, sizeof(err));
	check(a.gid == 4242, "auto with gid = none: procfs's");
	config_defaults(&cfg);
	cfg.hidepid = HIDEPID_NOACCESS;
	check_int(access_resolve(&cfg, file("nonexistent"), &a, err,
				 sizeof(err)),
		  0, "an explicit hidepid reads no mountinfo");
	check(a.hidepid == HIDEPID_NOACCESS && a.gid == CONFIG_GID_NONE,
	      "explicit noaccess, no gid");
	config_defaults(&cfg);
	check_int(access_resolve(&cfg, file("bad-hidepid"), &a, err,
				 sizeof(err)),
		  -EIO, "auto on a broken mountinfo: EIO");
	check(strstr(err, "bad-hidepid: not what the kernel writes") != NULL,
	      "and it names the file");
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "t/fixtures";
	test_mounts();
	test_resolve();
	return tap_done();
}
