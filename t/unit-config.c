/*
 * unit-config: the configuration file, good and bad, line by line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

static char dir[64];
static char path[128];

static void write_conf(const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
}

/*
 * Load @text; expect failure with "PATH:@line: " followed by a message
 * that contains @needle.
 */
static void expect_error(const char *text, int line, const char *needle,
			 const char *title)
{
	struct config cfg;
	char err[512], prefix[200];
	int ret;

	write_conf(text);
	config_defaults(&cfg);
	cfg.group_max_size = 7; /* a failed load must not touch it */
	ret = config_load(&cfg, path, err, sizeof(err));
	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	check(ret == -EINVAL && strncmp(err, prefix, strlen(prefix)) == 0 &&
		      strstr(err, needle) && cfg.group_max_size == 7,
	      "%s", title);
	if (ret != -EINVAL || strncmp(err, prefix, strlen(prefix)) ||
	    !strstr(err, needle))
		printf("#   ret %d, message '%s', wanted '%s...%s'\n", ret,
		       ret ? err : "", prefix, needle);
}

int main(void)
{
	struct config cfg;
	char err[512];
	int ret;

	strcpy(dir, "/tmp/timingfs-config.XXXXXX");
	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/t.conf", dir);

	config_defaults(&cfg);
	check_int(cfg.group_max_size, 64, "default max_size is 64");
	check_int(cfg.units, UNITS_WINDOWS, "default units are windows");
	check_u64(cfg.tsc_hz, 0, "default tsc_hz is auto");
	check_str(cfg.proc_root, "/proc", "default proc root");
	check_str(cfg.sys_root, "/sys", "default sys root");
	check_str(config_units_name(UNITS_UNIX), "unix", "units name unix");

	write_conf("; every key\n"
		   "[groups]\nmax_size = 16        ; a comment\n"
		   "# another comment\n"
		   "[format]\nunits = unix\n"
		   "[clock]\ntsc_hz = 3000000000\n"
		   "[sources]\nproc = /srv/capture/proc/\nsys = /srv/sys\n");
	ret = config_load(&cfg, path, err, sizeof(err));
	check_int(ret, 0, "a full file loads");
	check_int(cfg.group_max_size, 16, "max_size read past inline comment");
	check_int(cfg.units, UNITS_UNIX, "units read");
	check_u64(cfg.tsc_hz, 3000000000ULL, "tsc_hz read");
	check_str(cfg.proc_root, "/srv/capture/proc",
		  "proc read, trailing slash dropped");
	check_str(cfg.sys_root, "/srv/sys", "sys read");

	write_conf("[clock]\ntsc_hz = auto\n");
	ret = config_load(&cfg, path, err, sizeof(err));
	check(ret == 0 && cfg.tsc_hz == 0 && cfg.group_max_size == 64,
	      "tsc_hz auto; keys not given keep their defaults");

	write_conf("[groups]\nmax_size = 1\n");
	check(config_load(&cfg, path, err, sizeof(err)) == 0 &&
		      cfg.group_max_size == 1,
	      "max_size 1 is the lower bound");

	expect_error("[groups]\nmax_size = 64\n[bogus]\n", 3,
		     "[bogus]: unknown section",
		     "an unknown section, even without keys");
	expect_error("[groups]\nmax_size = 64\ncolour = blue\n", 3,
		     "[groups] colour: unknown key", "an unknown key");
	expect_error("max_size = 64\n", 1, "unknown section",
		     "a key before any section");
	expect_error("[groups]\nmax_size = 0\n", 2,
		     "[groups] max_size: 0 is out of range 1..64",
		     "max_size 0");
	expect_error("[groups]\nmax_size = 65\n", 2,
		     "[groups] max_size: 65 is out of range", "max_size 65");
	expect_error("[groups]\nmax_size = abc\n", 2,
		     "[groups] max_size: 'abc' is not a number",
		     "max_size not a number");
	expect_error("[groups]\nmax_size = -1\n", 2, "[groups] max_size",
		     "max_size negative");
	expect_error("[groups]\nmax_size = 99999999999999999999\n", 2,
		     "[groups] max_size: 99999999999999999999 is out of range",
		     "max_size huge");
	expect_error("[format]\nunits = metric\n", 2,
		     "[format] units: 'metric' is not windows or unix",
		     "units bogus");
	expect_error("[format]\nunits = Windows\n", 2, "[format] units",
		     "units are case-sensitive");
	expect_error("[clock]\ntsc_hz = 0\n", 2,
		     "[clock] tsc_hz: 0 is out of range", "tsc_hz 0");
	expect_error("[clock]\ntsc_hz = -5\n", 2,
		     "[clock] tsc_hz: '-5' is not auto or a number",
		     "tsc_hz negative");
	expect_error("[clock]\ntsc_hz = 12x\n", 2,
		     "[clock] tsc_hz: '12x' is not auto",
		     "tsc_hz with garbage after the number");
	expect_error("[clock]\ntsc_hz = 99999999999999999999999\n", 2,
		     "[clock] tsc_hz: 99999999999999999999999 is out of range",
		     "tsc_hz overflowing 64 bits");
	expect_error("[sources]\nproc = relative/proc\n", 2,
		     "[sources] proc: 'relative/proc' is not an absolute path",
		     "proc relative");
	expect_error("[sources]\nsys =\n", 2, "[sources] sys: no value",
		     "sys empty");
	expect_error("[groups]\nmax_size = 8\nmax_size = 9\n", 3,
		     "[groups] max_size: given twice", "a key given twice");
	expect_error("[groups]\n\nthis line has no equals sign\n", 3,
		     "not a section, a key = value or a comment",
		     "a line that is not INI");
	expect_error("[groups]\nmax_size = 8\n[clock]\ntsc_hz = x\n"
		     "[format]\nunits = y\n",
		     4, "[clock] tsc_hz", "the first of several errors");

	unlink(path);
	ret = config_load(&cfg, path, err, sizeof(err));
	check(ret == -ENOENT && strstr(err, path) &&
		      strstr(err, "No such file or directory"),
	      "a missing file names the file and the reason");
	check(strstr(err, ":1:") == NULL, "and no line");
	rmdir(dir);
	return tap_done();
}
