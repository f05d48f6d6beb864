/*
 * unit-config: the configuration file, good and bad, line by line.
 *
 * Each case writes a file into a fresh temporary directory and loads
 * it. Errors are compared whole: "FILE:LINE: [section] key: why".
 * argv[1] is t/fixtures; the shipped conf/timingfs.conf is ../../conf.
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

/* Load @text into @cfg; the return code of config_load. */
static int load(const char *text, struct config *cfg)
{
	char err[512];

	write_conf(text);
	config_defaults(cfg);
	return config_load(cfg, path, err, sizeof(err));
}

/*
 * Load @text and expect -EINVAL with the message "PATH:@line: @msg",
 * and the configuration untouched.
 */
static void expect_error(const char *text, int line, const char *msg,
			 const char *title)
{
	char err[512], want[512];
	struct config cfg;
	int ret;

	write_conf(text);
	config_defaults(&cfg);
	cfg.group_max_size = 7; /* a failed load must not touch it */
	err[0] = '\0';
	ret = config_load(&cfg, path, err, sizeof(err));
	snprintf(want, sizeof(want), "%s:%d: %s", path, line, msg);
	check_int(ret, -EINVAL, "%s: EINVAL", title);
	check_str(err, want, "%s: message", title);
	check_int(cfg.group_max_size, 7, "%s: configuration untouched", title);
}

static void test_defaults(void)
{
	struct config cfg;

	config_defaults(&cfg);
	check_int(cfg.group_max_size, 64, "default max_size is 64");
	check_int(cfg.units, UNITS_WINDOWS, "default units are windows");
	check_u64(cfg.tsc_hz, 0, "default tsc_hz is auto");
	check_str(cfg.proc_root, "/proc", "default proc root");
	check_str(cfg.sys_root, "/sys", "default sys root");
	check_str(units_name(UNITS_UNIX), "unix", "units name unix");
	check_str(units_name(UNITS_WINDOWS), "windows", "units name windows");
	check_int(cfg.hidepid, HIDEPID_AUTO, "default hidepid is auto");
	check(cfg.access_gid == ACCESS_GID_NONE && !cfg.access_gid_set,
	      "default gid is none, not given");
	check_str(hidepid_name(HIDEPID_INVISIBLE), "invisible",
		  "hidepid name invisible");
	check_int(cfg.exited_keep_s, 60, "default keep is 60 s");
	check_int(cfg.exited_max_tasks, 65536, "default max_tasks is 65536");
	check_int(cfg.reader_snapshots_mib, 32,
		  "default reader_snapshots is 32 MiB");
	check_int(cfg.total_snapshots_mib, 128,
		  "default total_snapshots is 128 MiB");
	check_int(cfg.reader_views, 64, "default reader_views is 64");
}

/* The shipped file must load and say exactly what the defaults say. */
static void test_shipped(const char *fixtures)
{
	struct config cfg, def;
	char shipped[4096], err[512];

	snprintf(shipped, sizeof(shipped), "%s/../../conf/timingfs.conf",
		 fixtures);
	config_defaults(&def);
	memset(&cfg, 0xff, sizeof(cfg));
	check_int(config_load(&cfg, shipped, err, sizeof(err)), 0,
		  "conf/timingfs.conf loads");
	check(cfg.group_max_size == def.group_max_size &&
		      cfg.units == def.units && cfg.tsc_hz == def.tsc_hz &&
		      !strcmp(cfg.proc_root, def.proc_root) &&
		      !strcmp(cfg.sys_root, def.sys_root) &&
		      cfg.hidepid == def.hidepid &&
		      cfg.access_gid == def.access_gid &&
		      cfg.access_gid_set == def.access_gid_set &&
		      cfg.exited_keep_s == def.exited_keep_s &&
		      cfg.exited_max_tasks == def.exited_max_tasks &&
		      cfg.reader_snapshots_mib == def.reader_snapshots_mib &&
		      cfg.total_snapshots_mib == def.total_snapshots_mib &&
		      cfg.reader_views == def.reader_views,
	      "conf/timingfs.conf says the defaults");
}

static void test_good(void)
{
	struct config cfg;

	check_int(load("; every key\n"
		       "[groups]\nmax_size = 16        ; a comment\n"
		       "# another comment\n"
		       "[format]\nunits = unix\n"
		       "[clock]\ntsc_hz = 3000000000\n"
		       "[sources]\nproc = /srv/capture/proc/\nsys = /srv/sys\n",
		       &cfg),
		  0, "a full file loads");
	check_int(cfg.group_max_size, 16, "max_size read past inline comment");
	check_int(cfg.units, UNITS_UNIX, "units read");
	check_u64(cfg.tsc_hz, 3000000000ULL, "tsc_hz read");
	check_str(cfg.proc_root, "/srv/capture/proc",
		  "proc read, trailing slash dropped");
	check_str(cfg.sys_root, "/srv/sys", "sys read");

	/* The contract's own example, comments aligned after values. */
	check_int(load("[groups]\n"
		       "max_size = 64        ; logical processors per group, "
		       "1..64\n\n"
		       "[format]\nunits = windows      ; windows | unix\n\n"
		       "[clock]\ntsc_hz = auto        ; auto | Hz as a "
		       "positive integer\n\n"
		       "[sources]\nproc = /proc         ; procfs root\n"
		       "sys = /sys           ; sysfs root\n",
		       &cfg),
		  0, "the contract's example loads");

	check(load("[clock]\ntsc_hz = auto\n", &cfg) == 0 && cfg.tsc_hz == 0 &&
		      cfg.group_max_size == 64,
	      "tsc_hz auto; keys not given keep their defaults");
	check(load("[clock]\ntsc_hz = 1000000000000\n", &cfg) == 0 &&
		      cfg.tsc_hz == 1000000000000ULL,
	      "tsc_hz 1 THz is the upper bound");
	check(load("[groups]\nmax_size = 1\n", &cfg) == 0 &&
		      cfg.group_max_size == 1,
	      "max_size 1 is the lower bound");
	check(load("[groups]\nmax_size = 64\n", &cfg) == 0 &&
		      cfg.group_max_size == 64,
	      "max_size 64 is the upper bound");
	check(load("", &cfg) == 0 && cfg.group_max_size == 64,
	      "an empty file is the defaults");
	/* inih would take an indented line as more of the value before. */
	check(load("[sources]\n  proc = /p\n  sys = /s\n", &cfg) == 0 &&
		      !strcmp(cfg.proc_root, "/p") &&
		      !strcmp(cfg.sys_root, "/s"),
	      "indented keys are keys, not continued values");
	check(load("[groups]\r\nmax_size = 8\r\n", &cfg) == 0 &&
		      cfg.group_max_size == 8,
	      "CRLF line ends");
	check(load("[groups]\nmax_size = 8", &cfg) == 0 &&
		      cfg.group_max_size == 8,
	      "no newline at the end");
	check(load("\xEF\xBB\xBF[groups]\nmax_size = 9\n", &cfg) == 0 &&
		      cfg.group_max_size == 9,
	      "a UTF-8 byte order mark");
	check(load("[groups]\nmax_size: 10\n", &cfg) == 0 &&
		      cfg.group_max_size == 10,
	      "inih takes ':' for '='");
	check(load("[groups]\nmax_size = 2\n[format]\nunits = unix\n"
		   "[groups]\n",
		   &cfg) == 0,
	      "a section may come twice");
	check(load("[sources]\nproc = /\n", &cfg) == 0 &&
		      !strcmp(cfg.proc_root, "/"),
	      "proc / stays /");
}

static void test_access(void)
{
	static const char *const modes[] = { "auto", "off", "noaccess",
					     "invisible" };
	char text[128];
	struct config cfg;
	int i;

	check(load("[access]\ngid = 5\nhidepid = off\n", &cfg) == 0 &&
		      cfg.hidepid == HIDEPID_OFF && cfg.access_gid == 5,
	      "gid before hidepid: each keeps its own");
	for (i = 0; i < 4; i++) {
		snprintf(text, sizeof(text), "[access]\nhidepid = %s\n",
			 modes[i]);
		check(load(text, &cfg) == 0 && (int)cfg.hidepid == i &&
			      !strcmp(hidepid_name(cfg.hidepid), modes[i]),
		      "hidepid = %s", modes[i]);
	}
	check(load("[access]\ngid = none\n", &cfg) == 0 &&
		      cfg.access_gid == ACCESS_GID_NONE && !cfg.access_gid_set,
	      "gid = none leaves the gid to hidepid = auto");
	check(load("[access]\ngid = 0\n", &cfg) == 0 && cfg.access_gid == 0 &&
		      cfg.access_gid_set,
	      "gid = 0, root's group");
	check(load("[access]\ngid = 4242\n", &cfg) == 0 &&
		      cfg.access_gid == 4242,
	      "gid = 4242");
	check(load("[access]\ngid = 4294967294\n", &cfg) == 0 &&
		      cfg.access_gid == 4294967294U,
	      "gid 4294967294 is the upper bound");
	check(load("[access]\ngid = 00\n", &cfg) == 0 && cfg.access_gid == 0 &&
		      cfg.access_gid_set,
	      "gid = 00 is 0");
	check(load("[access]\ngid = 0042\n", &cfg) == 0 && cfg.access_gid == 42,
	      "gid = 0042 is 42, as max_size takes leading zeros");
	check(load("[access]\nhidepid = invisible ; a comment\ngid = 27\n",
		   &cfg) == 0 &&
		      cfg.hidepid == HIDEPID_INVISIBLE &&
		      cfg.access_gid == 27 && cfg.access_gid_set,
	      "hidepid and gid together");
	expect_error("[access]\nhidepid = Off\n", 2,
		     "[access] hidepid: 'Off' is not auto, off, noaccess or "
		     "invisible",
		     "hidepid is case-sensitive");
	expect_error("[access]\nhidepid = 2\n", 2,
		     "[access] hidepid: '2' is not auto, off, noaccess or "
		     "invisible",
		     "hidepid takes names, not procfs's numbers");
	expect_error("[access]\ngid = 4294967295\n", 2,
		     "[access] gid: 4294967295 is out of range 0..4294967294",
		     "gid (gid_t)-1 is out of range");
	expect_error("[access]\ngid = -1\n", 2,
		     "[access] gid: -1 is out of range 0..4294967294",
		     "a negative gid is out of range");
	expect_error("[access]\ngid = staff\n", 2,
		     "[access] gid: 'staff' is not none or a GID",
		     "a group name is not a GID");
	expect_error("[access]\ngid = -12x\n", 2,
		     "[access] gid: '-12x' is not none or a GID",
		     "nor is -12x");
	expect_error("[access]\ngid =\n", 2, "[access] gid: no value",
		     "gid needs a value");
	expect_error("[access]\ngid = 4294967296\n", 2,
		     "[access] gid: 4294967296 is out of range 0..4294967294",
		     "gid 2^32 is out of range");
	expect_error("[access]\ngid = 99999999999999999999\n", 2,
		     "[access] gid: 99999999999999999999 is out of range "
		     "0..4294967294",
		     "a gid beyond 64 bits is out of range");
	expect_error("[access]\ngid = -0\n", 2,
		     "[access] gid: -0 is out of range 0..4294967294",
		     "a signed zero is out of range");
	expect_error("[access]\ngid = +5\n", 2,
		     "[access] gid: '+5' is not none or a GID",
		     "a gid with a plus sign");
	expect_error("[access]\ngid = -\n", 2,
		     "[access] gid: '-' is not none or a GID", "a lone minus");
	expect_error("[access]\ngid = 12 34\n", 2,
		     "[access] gid: '12 34' is not none or a GID", "two gids");
	expect_error("[access]\ngid = NONE\n", 2,
		     "[access] gid: 'NONE' is not none or a GID",
		     "none is case-sensitive");
	expect_error("[access]\ngid = 5\ngid = none\n", 3,
		     "[access] gid: given twice", "gid given twice");
	expect_error(
		"[access]\nhidepid = ptraceable\n", 2,
		"[access] hidepid: 'ptraceable' is not auto, off, noaccess "
		"or invisible",
		"hidepid takes none of procfs's other names");
	expect_error("[access]\nhidepid = invisible off\n", 2,
		     "[access] hidepid: 'invisible off' is not auto, off, "
		     "noaccess or invisible",
		     "hidepid takes one value");
	expect_error("[access]\nhidepid =\n", 2, "[access] hidepid: no value",
		     "hidepid needs a value");
	expect_error("[access]\nhidepid = off\n[access]\nhidepid = auto\n", 4,
		     "[access] hidepid: given twice", "hidepid given twice");
	expect_error("[Access]\nhidepid = off\n", 1,
		     "[Access]: unknown section",
		     "sections are case-sensitive");
	expect_error("[access]\nhide = off\n", 2, "[access] hide: unknown key",
		     "an unknown [access] key");
}

static void test_exited(void)
{
	struct config cfg;

	check(load("[exited]\nkeep = 0\nmax_tasks = 1\n", &cfg) == 0 &&
		      cfg.exited_keep_s == 0 && cfg.exited_max_tasks == 1,
	      "keep = 0 turns retention off; max_tasks = 1");
	check(load("[exited]\nkeep = 86400\nmax_tasks = 4194304\n", &cfg) ==
			      0 &&
		      cfg.exited_keep_s == 86400 &&
		      cfg.exited_max_tasks == 4194304,
	      "keep and max_tasks at their largest");
	expect_error("[exited]\nkeep = 86401\n", 2,
		     "[exited] keep: 86401 is out of range 0..86400",
		     "keep beyond a day");
	expect_error("[exited]\nkeep = 1m\n", 2,
		     "[exited] keep: '1m' is not a number of seconds",
		     "keep takes seconds only");
	expect_error("[exited]\nkeep = -1\n", 2,
		     "[exited] keep: -1 is out of range 0..86400",
		     "a negative keep");
	expect_error("[exited]\nmax_tasks = 0\n", 2,
		     "[exited] max_tasks: 0 is out of range 1..4194304",
		     "max_tasks 0");
	expect_error("[exited]\nmax_tasks = 4194305\n", 2,
		     "[exited] max_tasks: 4194305 is out of range 1..4194304",
		     "max_tasks above PID_MAX_LIMIT");
	expect_error("[exited]\nmax_tasks = 10\nmax_tasks = 10\n", 3,
		     "[exited] max_tasks: given twice",
		     "max_tasks given twice");
	expect_error("[exited]\nkept = 5\n", 2, "[exited] kept: unknown key",
		     "an unknown [exited] key");
}

static void test_limits(void)
{
	struct config cfg;

	check(load("[limits]\nreader_snapshots = 1\ntotal_snapshots = 1\n",
		   &cfg) == 0 &&
		      cfg.reader_snapshots_mib == 1 &&
		      cfg.total_snapshots_mib == 1,
	      "the budgets at their least, 1 MiB");
	check(load("[limits]\nreader_snapshots = 65536\n"
		   "total_snapshots = 65536\n",
		   &cfg) == 0 &&
		      cfg.reader_snapshots_mib == 65536 &&
		      cfg.total_snapshots_mib == 65536,
	      "the budgets at their largest, 64 GiB");
	check(load("[limits]\nreader_views = 958\n", &cfg) == 0 &&
		      cfg.reader_views == 958,
	      "reader_views at its largest, every slot but root's");
	expect_error("[limits]\nreader_views = 959\n", 2,
		     "[limits] reader_views: 959 is out of range 1..958",
		     "reader_views 959");
	expect_error("[limits]\nreader_snapshots = 0\n", 2,
		     "[limits] reader_snapshots: 0 is out of range 1..65536",
		     "reader_snapshots 0");
	expect_error("[limits]\ntotal_snapshots = 65537\n", 2,
		     "[limits] total_snapshots: 65537 is out of range 1..65536",
		     "total_snapshots above 64 GiB");
	expect_error("\n[limits]\ntotal_snapshots = 12M\n", 3,
		     "[limits] total_snapshots: '12M' is not a number of MiB",
		     "total_snapshots takes MiB as a number only");
	expect_error("[limits]\nreader_snapshots = -4\n", 2,
		     "[limits] reader_snapshots: -4 is out of range 1..65536",
		     "a negative reader_snapshots");
	expect_error("[limits]\nsnapshots = 4\n", 2,
		     "[limits] snapshots: unknown key",
		     "an unknown [limits] key");
}

/* inih reads lines of up to 199 characters (Debian's INI_MAX_LINE). */
static void test_long_lines(void)
{
	char text[2048], pad[512];
	struct config cfg;

	/* "proc = /" is 8 characters; 191 more make 199. */
	memset(pad, 'a', 191);
	pad[191] = '\0';
	snprintf(text, sizeof(text), "[sources]\nproc = /%s\n", pad);
	check(load(text, &cfg) == 0 && strlen(cfg.proc_root) == 192,
	      "a line of 199 characters is whole");
	snprintf(text, sizeof(text), "[sources]\nproc = /%s", pad);
	check(load(text, &cfg) == 0 && strlen(cfg.proc_root) == 192,
	      "and at the end of the file without a newline");
	snprintf(text, sizeof(text), "[sources]\nproc = /%sb\nsys = /s\n", pad);
	expect_error(text, 2, "[sources] proc: line longer than 199 characters",
		     "a line of 200 characters");
	snprintf(text, sizeof(text), "[groups]\n; %s%s\nmax_size = 3\n", pad,
		 pad);
	check(load(text, &cfg) == 0 && cfg.group_max_size == 3,
	      "a long comment line is skipped whole");
	snprintf(text, sizeof(text), "[groups]\nmax_size = 4 ; %s\nx = 1\n",
		 pad);
	expect_error(text, 3, "[groups] x: unknown key",
		     "a long inline comment is skipped, lines still counted");
}

static void test_errors(void)
{
	expect_error("[groups]\nmax_size = 64\n[bogus]\n", 3,
		     "[bogus]: unknown section",
		     "an unknown section, even without keys");
	expect_error("[groups]\nmax_size = 64\ncolour = blue\n", 3,
		     "[groups] colour: unknown key", "an unknown key");
	expect_error("[groups]\nMax_Size = 8\n", 2,
		     "[groups] Max_Size: unknown key",
		     "keys are case-sensitive");
	expect_error("[format]\nmax_size = 8\n", 2,
		     "[format] max_size: unknown key",
		     "a key in the wrong section");
	expect_error("max_size = 64\n", 1, "max_size: key before any [section]",
		     "a key before any section");
	expect_error("[groups]\nmax_size = 0\n", 2,
		     "[groups] max_size: 0 is out of range 1..64",
		     "max_size 0");
	expect_error("[groups]\nmax_size = 65\n", 2,
		     "[groups] max_size: 65 is out of range 1..64",
		     "max_size 65");
	expect_error("[groups]\nmax_size = abc\n", 2,
		     "[groups] max_size: 'abc' is not a number",
		     "max_size not a number");
	expect_error("[groups]\nmax_size = -1\n", 2,
		     "[groups] max_size: -1 is out of range 1..64",
		     "max_size negative");
	expect_error("[groups]\nmax_size = +8\n", 2,
		     "[groups] max_size: '+8' is not a number",
		     "max_size with a plus sign");
	expect_error("[groups]\nmax_size = 8 8\n", 2,
		     "[groups] max_size: '8 8' is not a number",
		     "max_size two numbers");
	expect_error("[groups]\nmax_size = 99999999999999999999\n", 2,
		     "[groups] max_size: 99999999999999999999 is out of range "
		     "1..64",
		     "max_size beyond 64 bits");
	expect_error("[format]\nunits = metric\n", 2,
		     "[format] units: 'metric' is not windows or unix",
		     "units bogus");
	expect_error("[format]\nunits = Windows\n", 2,
		     "[format] units: 'Windows' is not windows or unix",
		     "units are case-sensitive");
	expect_error("[clock]\ntsc_hz = 0\n", 2,
		     "[clock] tsc_hz: 0 is out of range 1..1000000000000",
		     "tsc_hz 0");
	expect_error("[clock]\ntsc_hz = -5\n", 2,
		     "[clock] tsc_hz: -5 is out of range 1..1000000000000",
		     "tsc_hz negative");
	expect_error("[clock]\ntsc_hz = +5\n", 2,
		     "[clock] tsc_hz: '+5' is not auto or a number of Hz",
		     "tsc_hz with a plus sign");
	expect_error("[clock]\ntsc_hz = 12x\n", 2,
		     "[clock] tsc_hz: '12x' is not auto or a number of Hz",
		     "tsc_hz with garbage after the number");
	expect_error("[clock]\ntsc_hz = 3.2e9\n", 2,
		     "[clock] tsc_hz: '3.2e9' is not auto or a number of Hz",
		     "tsc_hz not an integer");
	expect_error("[clock]\ntsc_hz = AUTO\n", 2,
		     "[clock] tsc_hz: 'AUTO' is not auto or a number of Hz",
		     "tsc_hz AUTO");
	expect_error("[clock]\ntsc_hz = 1000000000001\n", 2,
		     "[clock] tsc_hz: 1000000000001 is out of range "
		     "1..1000000000000",
		     "tsc_hz above 1 THz");
	expect_error("[clock]\ntsc_hz = 99999999999999999999999\n", 2,
		     "[clock] tsc_hz: 99999999999999999999999 is out of range "
		     "1..1000000000000",
		     "tsc_hz overflowing 64 bits");
	expect_error("[sources]\nproc = relative/proc\n", 2,
		     "[sources] proc: 'relative/proc' is not an absolute path",
		     "proc relative");
	expect_error("[sources]\nsys =\n", 2, "[sources] sys: no value",
		     "sys empty");
	expect_error("[sources]\nproc =      ; nothing but a comment\n", 2,
		     "[sources] proc: no value", "proc only a comment");
	expect_error("[groups]\nmax_size = 8\nmax_size = 9\n", 3,
		     "[groups] max_size: given twice", "a key given twice");
	expect_error("[groups]\nmax_size = 8\n[groups]\nmax_size = 8\n", 4,
		     "[groups] max_size: given twice",
		     "a key given twice in two sections of the same name");
	expect_error("[groups]\n\nthis line has no equals sign\n", 3,
		     "not a [section], a key = value or a comment",
		     "a line without '='");
	expect_error("[groups\nmax_size = 8\n", 1,
		     "not a [section], a key = value or a comment",
		     "a section without ']'");
	expect_error("[groups]\nmax_size = 8\n[clock]\ntsc_hz = x\n"
		     "[format]\nunits = y\n",
		     4, "[clock] tsc_hz: 'x' is not auto or a number of Hz",
		     "the first of several errors");
	expect_error("[groups]\nnonsense\nmax_size = 0\n", 2,
		     "not a [section], a key = value or a comment",
		     "a syntax error before a bad value");
}

static void test_files(void)
{
	char err[512], want[512];
	struct config cfg;
	int ret;

	/* The example message of the lead, whole. */
	write_conf("[groups]\n; 65 is too many\nmax_size = 65\n");
	config_load(&cfg, path, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "%s:3: [groups] max_size: 65 is out of range 1..64", path);
	check_str(err, want, "the message names file, line, section and key");

	unlink(path);
	ret = config_load(&cfg, path, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "%s: cannot open: No such file or directory", path);
	check_int(ret, -ENOENT, "a missing file is ENOENT");
	check_str(err, want, "a missing file names the file and the reason");

	ret = config_load(&cfg, dir, err, sizeof(err));
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", dir);
	check_int(ret, -EISDIR, "a directory is EISDIR");
	check_str(err, want, "a directory names the file and the reason");

	/* A short buffer is cut, never overrun. */
	write_conf("[nope]\n");
	memset(err, 'x', sizeof(err));
	config_load(&cfg, path, err, 8);
	check(err[7] == '\0' && err[8] == 'x', "the message fits errlen");
}

int main(int argc, char **argv)
{
	const char *fixtures = argc > 1 ? argv[1] : "t/fixtures";

	strcpy(dir, "/tmp/timingfs-config.XXXXXX");
	if (!mkdtemp(dir))
		return 99;
	snprintf(path, sizeof(path), "%s/t.conf", dir);

	test_defaults();
	test_shipped(fixtures);
	test_good();
	test_long_lines();
	test_access();
	test_exited();
	test_limits();
	test_errors();
	test_files();

	unlink(path);
	rmdir(dir);
	return tap_done();
}
