/*
 * unit-engine: the engine on fixture trees, every quantity against
 * values worked out by hand. argv[1] is t/fixtures.
 *
 * All fixtures run with tsc_hz = 3 GHz, so 1 ns is 3 cycles, and the
 * stat files' clock ticks are USER_HZ = 100, 10 ms each.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "engine_int.h"
#include "tap.h"

#define HZ 3000000000ULL

static const char *fixtures;

static struct engine *open_engine(const char *root, unsigned int max_size)
{
	struct engine *e = NULL;
	char proc[PATH_MAX], sys[PATH_MAX], err[256];
	struct engine_opts o = { .group_max_size = max_size,
				 .units = UNITS_WINDOWS,
				 .tsc_hz = HZ,
				 .proc_root = proc,
				 .sys_root = sys };

	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	if (engine_new(&o, &e, err, sizeof(err)) < 0) {
		printf("# engine_new(%s): %s\n", root, err);
		exit(99);
	}
	return e;
}

static struct engine *fixture(const char *name, unsigned int max_size)
{
	char root[PATH_MAX];

	snprintf(root, sizeof(root), "%s/%s", fixtures, name);
	return open_engine(root, max_size);
}

/* A copy of fixture @name in a fresh directory, to change under it. */
static char *copy_fixture(const char *name)
{
	static char dir[64];
	char cmd[PATH_MAX + 128];

	strcpy(dir, "/tmp/timingfs-engine.XXXXXX");
	if (!mkdtemp(dir))
		exit(99);
	snprintf(cmd, sizeof(cmd), "cp -R '%s/%s/.' '%s'", fixtures, name, dir);
	if (system(cmd) != 0)
		exit(99);
	return dir;
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		exit(99);
}

static void make_dir(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755) != 0)
		exit(99);
}

static void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		exit(99);
}

/* Linux CPU numbers of @group, in M order, as "0,1,2". */
static const char *group_cpus(struct engine *e, unsigned int group)
{
	static char buf[1024];
	unsigned int m;
	size_t len = 0;

	buf[0] = '\0';
	for (m = 0; m < engine_group_size(e, group); m++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d",
					m ? "," : "",
					engine_group_cpu(e, group, m));
	return buf;
}

static void test_info(void)
{
	struct engine *e = fixture("m2", 64);
	struct engine_info info;

	engine_get_info(e, &info);
	check_u64(info.tsc_hz, HZ, "info: tsc_hz from the configuration");
	check_str(info.tsc_source, "config", "info: tsc_source config");
	check_int(info.clk_tck, 100, "info: clk_tck");
	check_str(info.idle_source, "proc_stat", "info: idle from /proc/stat");
	check_int(info.group_max_size, 64, "info: group_max_size");
	check_int(info.group_count, 1, "info: group_count");
	engine_free(e);

	e = fixture("cpuidle", 64);
	engine_get_info(e, &info);
	check_str(info.idle_source, "cpuidle", "info: idle from cpuidle");
	engine_free(e);
}

static void test_groups_m2(void)
{
	struct engine *e = fixture("m2", 64);
	unsigned int g, m;
	uint64_t mask;

	check_int(engine_group_count(e), 1, "m2: one group");
	check_str(group_cpus(e, 0), "0,1", "m2: group 0 is cpus 0,1");
	check_int(engine_group_cpu(e, 0, 2), -ENOENT, "m2: no processor 2");
	check_int(engine_group_cpu(e, 1, 0), -ENOENT, "m2: no group 1");
	check(engine_group_online(e, 0, &mask) == 0 && mask == 3,
	      "m2: both online");
	check(engine_cpu_group(e, 1, &g, &m) == 0 && g == 0 && m == 1,
	      "m2: cpu1 is group 0 processor 1");
	check_int(engine_cpu_group(e, 2, &g, &m), -ENOENT,
		  "m2: cpu2 is not present");
	engine_free(e);

	e = fixture("m2", 1);
	check_int(engine_group_count(e), 2, "m2, max_size 1: two groups");
	check_str(group_cpus(e, 1), "1", "m2, max_size 1: group 1 is cpu1");
	engine_free(e);
}

static void test_groups_m96(void)
{
	struct engine *e = fixture("m96", 64);
	unsigned int g, m;
	uint64_t mask;
	char *dir;

	/* node0 = 0-23,48-71 (48 CPUs), node1 = 24-47,72-95 with CPU 30
	 * offline and dropped from its list: 48 + 48 > 64, two groups. */
	check_int(engine_group_count(e), 2, "m96: two groups of a node each");
	check_int(engine_group_size(e, 0), 48, "m96: group 0 has 48");
	check_int(engine_group_size(e, 1), 48,
		  "m96: group 1 has 48, offline CPU 30 counted");
	check_int(engine_group_cpu(e, 0, 23), 23, "m96: group 0 M23 is cpu23");
	check_int(engine_group_cpu(e, 0, 24), 48, "m96: group 0 M24 is cpu48");
	check_int(engine_group_cpu(e, 1, 0), 24, "m96: group 1 M0 is cpu24");
	check_int(engine_group_cpu(e, 1, 6), 30, "m96: group 1 M6 is cpu30");
	check_int(engine_group_cpu(e, 1, 24), 72, "m96: group 1 M24 is cpu72");
	check(engine_group_online(e, 1, &mask) == 0 &&
		      mask == (((1ULL << 48) - 1) & ~(1ULL << 6)),
	      "m96: group 1 online is all but M6");
	check(engine_cpu_group(e, 95, &g, &m) == 0 && g == 1 && m == 47,
	      "m96: cpu95 is group 1 processor 47");
	engine_free(e);

	e = fixture("m96", 16);
	/* node0 splits into 0-15 | 16-23,48-55 | 56-71, node1 into
	 * 24-39 | 40-47,72-79 | 80-95. */
	check_int(engine_group_count(e), 6, "m96, max_size 16: six groups");
	check_str(group_cpus(e, 1),
		  "16,17,18,19,20,21,22,23,48,49,50,51,52,53,54,55",
		  "m96, max_size 16: group 1");
	check(engine_cpu_group(e, 30, &g, &m) == 0 && g == 3 && m == 6,
	      "m96, max_size 16: cpu30 is group 3 processor 6");
	check_int(engine_group_cpu(e, 5, 0), 80,
		  "m96, max_size 16: group 5 starts at cpu80");
	engine_free(e);

	/* The other way a kernel may show it: node1 lists offline 30. */
	dir = copy_fixture("m96");
	put(dir, "sys/devices/system/node/node1/cpulist", "24-47,72-95\n");
	e = open_engine(dir, 64);
	check_int(engine_group_count(e), 2, "m96, 30 in node1: two groups");
	check(engine_cpu_group(e, 30, &g, &m) == 0 && g == 1 && m == 6,
	      "m96, 30 in node1: cpu30 is group 1 processor 6");
	check(engine_group_online(e, 1, &mask) == 0 &&
		      mask == (((1ULL << 48) - 1) & ~(1ULL << 6)),
	      "m96, 30 in node1: still not online");
	/* CPU 30 comes online: same place, now in the mask. */
	put(dir, "sys/devices/system/cpu/online", "0-95\n");
	check(engine_group_online(e, 1, &mask) == 0 &&
		      mask == ((1ULL << 48) - 1),
	      "m96: cpu30 online again, at the same M");
	put(dir, "sys/devices/system/cpu/online", "0-x\n");
	check_int(engine_group_online(e, 1, &mask), -EIO,
		  "m96: a malformed online list is EIO");
	remove_tree(dir);
	engine_free(e);
}

static void test_groups_m200(void)
{
	struct engine *e = fixture("m200", 64);
	uint64_t mask, cycles[64];

	/* node0 = 0-99 splits 64 + 36; node1 = 100-199 starts a new group
	 * and splits 64 + 36; node2 has no CPUs. */
	check_int(engine_group_count(e), 4, "m200: four groups");
	check_int(engine_group_size(e, 0), 64, "m200: group 0 has 64");
	check_int(engine_group_size(e, 1), 36, "m200: group 1 has 36");
	check_int(engine_group_cpu(e, 1, 0), 64, "m200: group 1 is cpu64..");
	check_int(engine_group_cpu(e, 2, 0), 100,
		  "m200: node1 starts group 2 at cpu100");
	check_int(engine_group_cpu(e, 3, 35), 199,
		  "m200: group 3 ends at cpu199");
	check_int(engine_group_cpu(e, 3, 36), -ENOENT,
		  "m200: group 3 has no M36");
	check(engine_group_online(e, 1, &mask) == 0 && mask == (1ULL << 36) - 1,
	      "m200: group 1 online mask has 36 bits");
	check(engine_group_online(e, 0, &mask) == 0 && mask == UINT64_MAX,
	      "m200: group 0 online mask has all 64 bits");
	/* cpu199 = group 3 M35: idle 1199 + iowait 2 = 1201 ticks =
	 * 12.01 s = 36.03e9 cycles. cpu63 = group 0 M63: 1063 + 2 =
	 * 1065 ticks = 31.95e9 cycles. */
	check(engine_group_idle_cycles(e, 3, &mask, cycles) == 0 &&
		      mask == (1ULL << 36) - 1,
	      "m200: group 3 idle snapshot of 36");
	check_u64(cycles[35], 36030000000ULL, "m200: cpu199 idle cycles");
	check(engine_group_idle_cycles(e, 0, &mask, cycles) == 0 &&
		      mask == UINT64_MAX,
	      "m200: group 0 idle snapshot of 64");
	check_u64(cycles[63], 31950000000ULL, "m200: cpu63 idle cycles");
	engine_free(e);

	/* node0 = 0-99: 6 groups of 16 and 96-99; node1 the same. */
	e = fixture("m200", 16);
	check_int(engine_group_count(e), 14, "m200, max_size 16: 14 groups");
	check_int(engine_group_size(e, 6), 4,
		  "m200, max_size 16: group 6 is node0's last 4");
	check_int(engine_group_cpu(e, 6, 0), 96,
		  "m200, max_size 16: group 6 starts at cpu96");
	check_int(engine_group_cpu(e, 7, 0), 100,
		  "m200, max_size 16: node1 starts group 7");
	check_int(engine_group_cpu(e, 13, 3), 199,
		  "m200, max_size 16: group 13 ends at cpu199");
	check_int(engine_group_size(e, 14), 0,
		  "m200, max_size 16: no group 14");
	engine_free(e);

	e = fixture("nonuma", 2);
	check_int(engine_group_count(e), 2,
		  "no NUMA: all in node 0, split by max_size 2");
	check_str(group_cpus(e, 1), "2", "no NUMA: group 1 is cpu2");
	engine_free(e);
}

static void test_idle(void)
{
	struct engine *e = fixture("m2", 64);
	uint64_t mask, cycles[64];
	char *dir;

	/* cpu0: idle 5000 + iowait 20 = 5020 ticks = 50.2 s = 150.6e9
	 * cycles; cpu1: 5000 + 30 = 5030 ticks = 150.9e9 cycles. */
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), 0,
		  "m2: idle cycles read");
	check_u64(mask, 3, "m2: both processors in the snapshot");
	check_u64(cycles[0], 150600000000ULL, "m2: cpu0 idle+iowait cycles");
	check_u64(cycles[1], 150900000000ULL, "m2: cpu1 idle+iowait cycles");
	check_int(engine_group_idle_cycles(e, 1, &mask, cycles), -ENOENT,
		  "m2: no group 1");
	engine_free(e);

	e = fixture("m96", 64);
	/* CPU N: idle 1000+N, iowait 2. cpu24 (group 1 M0): 1026 ticks =
	 * 10.26 s = 30.78e9 cycles; cpu71 (group 0 M47): 1073 ticks. */
	check_int(engine_group_idle_cycles(e, 1, &mask, cycles), 0,
		  "m96: group 1 idle cycles");
	check_u64(mask, ((1ULL << 48) - 1) & ~(1ULL << 6),
		  "m96: offline cpu30 not in the snapshot");
	check_u64(cycles[0], 30780000000ULL, "m96: cpu24");
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), 0,
		  "m96: group 0 idle cycles");
	check_u64(cycles[47], 32190000000ULL, "m96: cpu71");
	engine_free(e);

	e = fixture("cpuidle", 64);
	/* cpu0: 100 + 2000000 + 500000 µs = 2.5001 s = 7500300000 cycles;
	 * cpu1: 10 + 1000 µs = 1010 µs = 3030000 cycles. */
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), 0,
		  "cpuidle: read");
	check_u64(cycles[0], 7500300000ULL, "cpuidle: cpu0 residency sum");
	check_u64(cycles[1], 3030000ULL, "cpuidle: cpu1 residency sum");
	engine_free(e);

	dir = copy_fixture("m2");
	e = open_engine(dir, 64);
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), 0,
		  "iowait down: first read");
	/* Now cpu0's iowait falls 20 -> 10 (5010 ticks, less than the
	 * 5020 read) and cpu1's idle rises 5000 -> 5100 (5130 ticks =
	 * 51.3 s = 153.9e9 cycles). */
	put(dir, "proc/stat",
	    "cpu  300 0 200 10100 40 0 0 0 0 0\n"
	    "cpu0 100 0 100 5000 10 0 0 0 0 0\n"
	    "cpu1 200 0 100 5100 30 0 0 0 0 0\n"
	    "intr 1000 0 0\nctxt 5000\nbtime 1700000000\nprocesses 300\n"
	    "procs_running 1\nprocs_blocked 0\n");
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), 0,
		  "iowait down: read again");
	check_u64(cycles[0], 150600000000ULL,
		  "iowait down: cpu0 does not go backwards");
	check_u64(cycles[1], 153900000000ULL, "iowait down: cpu1 moves on");
	/* cpu0 back above its high-water mark: 5000 + 30 = 5030 ticks. */
	put(dir, "proc/stat",
	    "cpu  300 0 200 10100 60 0 0 0 0 0\n"
	    "cpu0 100 0 100 5000 30 0 0 0 0 0\n"
	    "cpu1 200 0 100 5100 30 0 0 0 0 0\n"
	    "btime 1700000000\n");
	check(engine_group_idle_cycles(e, 0, &mask, cycles) == 0 &&
		      cycles[0] == 150900000000ULL,
	      "iowait up again: cpu0 moves on from the kernel's value");
	put(dir, "proc/stat", "cpu  1 2 3\ncpu0 1 2 3\nbtime 1\n");
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), -EIO,
		  "a short cpu line is EIO");
	put(dir, "proc/stat", "");
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), -EIO,
		  "an empty /proc/stat, without the online processors, is EIO");
	put(dir, "proc/stat", "cpu0 100 0 100 5000 30 0 0 0 0 0\nbtime 1\n");
	check_int(engine_group_idle_cycles(e, 0, &mask, cycles), -EIO,
		  "a /proc/stat without an online processor's line is EIO");
	remove_tree(dir);
	engine_free(e);
}

/*
 * Sources with no size limit: the fixture "big" has a process 300 whose
 * status is over 8 KiB (1,200 supplementary groups) and whose name is
 * ") ) ) (", with 30 + 10 ticks of CPU, started at tick 7000.
 */
static void test_big_sources(void)
{
	struct engine *e = fixture("big", 64);
	struct task_times t;
	struct task_ident id;

	check(engine_task_ident(e, 300, 0, &id) == 0 && id.tgid == 300 &&
		      id.uid == 1501 && id.gid == 1601,
	      "big: an 8 KiB status is read whole");
	check(engine_task_ident(e, 300, 300, &id) == 0 && id.tgid == 300,
	      "big: and its main thread's");
	check_int(engine_task_cpu(e, 300, 300), 1,
		  "big: the processor after a name of ') ) ) ('");
	check_int(engine_task_times(e, 300, 0, TASK_ALL, &t), 0,
		  "big: the process's times");
	check(t.cpu_ns == 400000000 && t.kernel_ns == 100000000 &&
		      t.user_ns == 300000000,
	      "big: 40 ticks, a quarter of them kernel time");
	check_u64(t.start_tick_ns, 1700000070000000000ULL,
		  "big: started 70 s after boot");
	check(engine_task_times(e, 300, 300, TASK_ALL, &t) == 0 &&
		      t.cpu_ns == 400000000 && t.kernel_ns == 100000000,
	      "big: the thread's times from its schedstat");
	engine_free(e);
}

static void test_ident(void)
{
	struct engine *e = fixture("m2", 64);
	struct task_ident id;

	check_int(engine_task_ident(e, 100, 0, &id), 0, "ident: process 100");
	check_int(id.tgid, 100, "ident: tgid");
	check_int(id.uid, 1001, "ident: effective uid");
	check_int(id.gid, 101, "ident: effective gid");
	check_int(engine_task_cpu(e, 100, 100), 1,
		  "cpu: the last processor of the main thread");
	check(engine_task_ident(e, 101, 0, &id) == 0 && id.tgid == 100,
	      "ident: 101 is a thread of 100, not a process");
	check(engine_task_ident(e, 100, 101, &id) == 0 && id.tgid == 100 &&
		      id.uid == 1001,
	      "ident: thread 101 of process 100");
	check_int(engine_task_cpu(e, 100, 101), 0,
		  "cpu: thread 101 last ran on 0");
	check(engine_task_ident(e, 200, 0, &id) == 0 && id.tgid == 200 &&
		      id.uid == 0,
	      "ident: a name with ') (' in it");
	check_int(engine_task_ident(e, 100, 102, &id), 0,
		  "ident: a thread whose stat is cut short is there");
	check_int(engine_task_cpu(e, 100, 102), -EIO,
		  "cpu: its stat cut short is EIO");
	check_int(engine_task_ident(e, 999, 0, &id), -ENOENT,
		  "ident: no such process");
	check_int(engine_task_ident(e, 100, 200, &id), -ENOENT,
		  "ident: not a thread of that process");
	engine_free(e);
}

static void test_times(void)
{
	struct engine *e = fixture("m2", 64);
	struct task_times t;

	/* Thread 100: schedstat 1500000123 ns; utime 100, stime 50, so
	 * kernel = 1500000123 * 50 / 150 = 500000041 (rounded down) and
	 * user = 1000000082; cycles = 3 * 1500000123 = 4500000369.
	 * Created 5000 ticks = 50 s after btime 1700000000. */
	check_int(engine_task_times(e, 100, 100, TASK_ALL, &t), 0,
		  "thread 100 read");
	check_u64(t.cpu_ns, 1500000123ULL, "thread 100: cpu ns = schedstat");
	check_u64(t.kernel_ns, 500000041ULL, "thread 100: kernel share");
	check_u64(t.user_ns, 1000000082ULL, "thread 100: user share");
	check_u64(t.cycles, 4500000369ULL, "thread 100: cycles");
	check_u64(t.start_tick_ns, 1700000050000000000ULL,
		  "thread 100: creation = btime + start");
	check_u64(t.exit_ns, 0, "thread 100: exit 0 while running");

	/* Thread 101: utime = stime = 0, 2500 ns run: all user time;
	 * started one tick later. */
	check_int(engine_task_times(e, 100, 101, TASK_ALL, &t), 0,
		  "thread 101 read");
	check_u64(t.kernel_ns, 0, "utime = stime = 0: no kernel time");
	check_u64(t.user_ns, 2500, "utime = stime = 0: all user time");
	check_u64(t.cycles, 7500, "thread 101: cycles");
	check_u64(t.start_tick_ns, 1700000050010000000ULL,
		  "thread 101: one tick later");

	/* Process 100 from a captured tree: utime 300 + stime 100 ticks =
	 * 4 s; kernel 1 s, user 3 s; 12e9 cycles. */
	check_int(engine_task_times(e, 100, 0, TASK_ALL, &t), 0,
		  "process 100 read");
	check_u64(t.cpu_ns, 4000000000ULL, "process 100: cpu ns");
	check_u64(t.kernel_ns, 1000000000ULL, "process 100: kernel");
	check_u64(t.user_ns, 3000000000ULL, "process 100: user");
	check_u64(t.cycles, 12000000000ULL, "process 100: cycles");

	/* Process 200, "a) (b": utime 7, stime 3 = 0.1 s. Its thread:
	 * 123456789 ns, kernel 123456789 * 3 / 10 = 37037036. */
	check_int(engine_task_times(e, 200, 0, TASK_ALL, &t), 0,
		  "process 'a) (b' read");
	check(t.kernel_ns == 30000000 && t.user_ns == 70000000,
	      "process 'a) (b': split 3:7");
	check_u64(t.start_tick_ns, 1700000123450000000ULL,
		  "process 'a) (b': created 123.45 s after boot");
	check_int(engine_task_times(e, 200, 200, TASK_ALL, &t), 0,
		  "thread 200 read");
	check(t.kernel_ns == 37037036 && t.user_ns == 86419753,
	      "thread 200: split 3:7 of 123456789 ns");

	check_int(engine_task_times(e, 100, 102, TASK_ALL, &t), -EIO,
		  "truncated stat: EIO, not a made-up value");
	/* Each part reads only its sources: thread 102's runtime is
	 * there, its truncated stat is not needed for it. */
	check_int(engine_task_times(e, 100, 102, TASK_CPU, &t), 0,
		  "cycles alone: stat not read");
	check_u64(t.cycles, 2997, "cycles alone: 999 ns of schedstat");
	check_int(engine_task_times(e, 100, 102, TASK_START, &t), -EIO,
		  "start of a truncated stat: EIO");
	check_int(engine_task_times(e, 100, 102, TASK_SPLIT, &t), -EIO,
		  "split of a truncated stat: EIO");
	check_int(engine_task_times(e, 100, 100, TASK_CPU, &t), 0,
		  "thread 100, cycles alone");
	check(t.cycles == 4500000369ULL && t.kernel_ns == 0 && t.user_ns == 0 &&
		      t.start_tick_ns == 0,
	      "cycles alone: the same cycles, nothing else filled in");
	check_int(engine_task_times(e, 100, 100, TASK_START, &t), 0,
		  "thread 100, start alone");
	check(t.start_tick_ns == 1700000050000000000ULL && t.cycles == 0,
	      "start alone: the same creation time, no cycles");
	check_int(engine_task_times(e, 100, 0, TASK_CPU, &t), 0,
		  "captured process 100, cycles alone");
	check_u64(t.cycles, 12000000000ULL,
		  "captured process: cycles alone from stat's ticks");
	check_int(engine_task_times(e, 100, 999, TASK_CPU, &t), -ENOENT,
		  "cycles alone of no such thread: ENOENT");
	check_int(engine_task_times(e, 999, 0, TASK_ALL, &t), -ENOENT,
		  "no such process: ENOENT");
	check_int(engine_task_times(e, 100, 999, TASK_ALL, &t), -ENOENT,
		  "no such thread: ENOENT");
	engine_free(e);
}

static void test_times_monotonic(void)
{
	char *dir = copy_fixture("m2");
	struct engine *e = open_engine(dir, 64);
	struct task_times t;

	engine_task_times(e, 100, 100, TASK_ALL, &t);
	/* The proportion moves to 1:1 and the runtime to 1500000200:
	 * 750000100 each would take user time back from 1000000082. The
	 * kernel share may take only 1500000200 - 1000000082 = 500000118. */
	put(dir, "proc/100/task/100/stat",
	    "100 (worker) S 1 100 100 0 -1 4194560 120 0 0 0 100 100 0 0 20 "
	    "0 3 0 5000 10240000 300 18446744073709551615 0 0 0 0 0 0 0 0 0 "
	    "0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n");
	put(dir, "proc/100/task/100/schedstat", "1500000200 0 0\n");
	check_int(engine_task_times(e, 100, 100, TASK_ALL, &t), 0,
		  "split moved: read");
	check_u64(t.user_ns, 1000000082ULL, "split moved: user not backwards");
	check_u64(t.kernel_ns, 500000118ULL,
		  "split moved: kernel takes the rest");
	check_u64(t.cycles, 4500000600ULL, "split moved: cycles of the sum");
	put(dir, "proc/100/task/100/schedstat", "garbage\n");
	check_int(engine_task_times(e, 100, 100, TASK_ALL, &t), -EIO,
		  "malformed schedstat: EIO");
	remove_tree(dir);
	engine_free(e);
}

/* The retained tasks of test_history_sweep: thread 101 of 100 alone. */
static bool retained_101(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks)
{
	(void)ctx;
	return pid == 100 && tid == 101 && start_ticks == 5001;
}

static void test_history_sweep(void)
{
	const struct engine_retained retained = { retained_101, NULL };
	char *dir = copy_fixture("m2"), path[PATH_MAX];
	struct engine *e = open_engine(dir, 64);
	struct task_times t;

	engine_set_retained(e, &retained);
	/* Entries (100, 0), (100, 100), (100, 101), (200, 0), (200, 200). */
	engine_task_times(e, 100, 0, TASK_ALL, &t);
	engine_task_times(e, 100, 100, TASK_ALL, &t);
	engine_task_times(e, 100, 101, TASK_ALL, &t);
	engine_task_times(e, 200, 0, TASK_ALL, &t);
	engine_task_times(e, 200, 200, TASK_ALL, &t);
	check_u64(task_history_sweep(&e->history), 0,
		  "sweep: every task there stays");
	/* Process 200 gone; thread 101 gone, but retained; 100 there. */
	snprintf(path, sizeof(path), "%s/proc/200", dir);
	remove_tree(path);
	snprintf(path, sizeof(path), "%s/proc/100/task/101", dir);
	remove_tree(path);
	check_int(engine_task_gone(e, 200, 0) &&
			  engine_task_gone(e, 100, 101) &&
			  !engine_task_gone(e, 100, 0) &&
			  !engine_task_gone(e, 100, 100),
		  1, "task gone: what the proc root has, not the exited table");
	check_u64(task_history_sweep(&e->history), 2,
		  "sweep: a process gone goes, with its thread");
	check_u64(task_history_sweep(&e->history), 0,
		  "sweep: a retained thread stays, and the live ones");
	engine_set_retained(e, NULL);
	check_u64(task_history_sweep(&e->history), 1,
		  "sweep: a thread no longer retained goes");
	remove_tree(dir);
	engine_free(e);
}

/* A stat of task @tid of @pid with @utime, @stime ticks, started at
 * @start ticks, as m2's. */
static void put_stat(const char *dir, pid_t pid, pid_t tid, int utime,
		     int stime, unsigned long start)
{
	char file[64], text[512];

	if (tid)
		snprintf(file, sizeof(file), "proc/%d/task/%d/stat", (int)pid,
			 (int)tid);
	else
		snprintf(file, sizeof(file), "proc/%d/stat", (int)pid);
	snprintf(text, sizeof(text),
		 "%d (worker) S 1 %d %d 0 -1 4194560 120 0 0 0 %d %d 0 0 20 "
		 "0 3 0 %lu 10240000 300 18446744073709551615 94000000000000 "
		 "94000000100000 140700000000000 0 0 0 0 0 0 0 0 0 17 0 0 0 0 "
		 "0 0 94000000200000 94000000300000 94000000400000 "
		 "140700000001000 140700000001100 140700000001100 "
		 "140700000002000 0\n",
		 (int)(tid ? tid : pid), (int)pid, (int)pid, utime, stime,
		 start);
	put(dir, file, text);
}

/*
 * At exit, the exit record's proportion (here 90 % user, where the live
 * stat said 90 % kernel) takes nothing back: for a thread whose start
 * the engine's memo of starts lost to another thread (tid + 4096), the
 * history's start is the exit's; for a process of one thread, read as
 * a process, the process's split is the one kept.
 */
static void test_exit_split(void)
{
	char *dir = copy_fixture("m2"), cmd[PATH_MAX + 64];
	uint64_t tick_ns = 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK);
	struct task_times alive, gone, other;
	struct exited_task x;
	struct engine *e;

	put_stat(dir, 100, 101, 10, 90, 5001);
	put_stat(dir, 200, 0, 10, 90, 12345);
	put_stat(dir, 200, 200, 10, 90, 12345);
	snprintf(cmd, sizeof(cmd),
		 "cp -R '%s/proc/100/task/101' '%s/proc/100/task/4197'", dir,
		 dir);
	if (system(cmd) != 0)
		exit(99);
	put_stat(dir, 100, 4197, 10, 90, 5002);
	e = open_engine(dir, 64);

	check_int(engine_task_times(e, 100, 101, TASK_ALL, &alive), 0,
		  "exit split: thread 101 read alive");
	check_int(engine_task_times(e, 100, 4197, TASK_ALL, &other), 0,
		  "exit split: thread 4197, the same slot of starts, read");
	/* The exit record's start: a tick and a half late. */
	check_u64(engine_exit_start_ticks(e, 100, 101,
					  5002 * tick_ns + tick_ns / 2),
		  5001, "exit split: the start the thread was shown with");
	memset(&x, 0, sizeof(x));
	x.flags = EXITED_THREAD;
	x.cpu_ns = alive.cpu_ns;
	x.utime_us = 900;
	x.stime_us = 100;
	x.start_ticks = engine_exit_start_ticks(e, 100, 101,
						5002 * tick_ns + tick_ns / 2);
	x.nnames = 1;
	x.name[0].tgid = 100;
	x.name[0].tid = 101;
	engine_exited_times(e, &x, true, &gone);
	check_u64(gone.kernel_ns, alive.kernel_ns,
		  "exit split: the thread's kernel time stays");
	check_u64(gone.user_ns, alive.user_ns,
		  "exit split: the thread's user time stays");

	check_int(engine_task_times(e, 200, 0, TASK_ALL, &alive), 0,
		  "exit split: process 200 read alive, as a process");
	x.flags = EXITED_THREAD | EXITED_PROCESS;
	x.cpu_ns = alive.cpu_ns;
	x.start_ticks = 12345;
	x.name[0].tgid = 200;
	x.name[0].tid = 200;
	engine_exited_times(e, &x, false, &gone);
	check_u64(gone.kernel_ns, alive.kernel_ns,
		  "exit split: the process's kernel time stays");
	check_u64(gone.user_ns, alive.user_ns,
		  "exit split: the process's user time stays");
	remove_tree(dir);
	engine_free(e);
}

struct ids {
	size_t n;
	pid_t id[16];
};

static int collect_cb(void *ctx, pid_t id)
{
	struct ids *ids = ctx;

	if (ids->n < 16)
		ids->id[ids->n] = id;
	ids->n++;
	return 0;
}

static int stop_cb(void *ctx, pid_t id)
{
	(void)ctx;
	(void)id;
	return 7;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* The ids collected, sorted (readdir order is the filesystem's). */
static const char *ids_text(struct ids *ids)
{
	static char buf[256];
	size_t i, len = 0, n = ids->n < 16 ? ids->n : 16;

	qsort(ids->id, n, sizeof(ids->id[0]), cmp_pid);
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d",
					i ? "," : "", (int)ids->id[i]);
	return buf;
}

static void test_lists(void)
{
	struct engine *e = fixture("m2", 64);
	struct ids ids = { 0 };
	char *dir;

	check_int(engine_for_each_thread(e, 100, collect_cb, &ids), 0,
		  "threads of 100 listed");
	check_str(ids_text(&ids), "100,101,102",
		  "threads of 100 are 100, 101, 102");
	ids.n = 0;
	check_int(engine_for_each_thread(e, 200, collect_cb, &ids), 0,
		  "threads of 200 listed");
	check_str(ids_text(&ids), "200", "process 200 has one thread");
	check_int(engine_for_each_thread(e, 999, collect_cb, &ids), -ENOENT,
		  "threads of a missing process: ENOENT");
	check_int(engine_for_each_process(e, stop_cb, NULL), 7,
		  "a callback's nonzero return stops the walk");
	ids.n = 0;
	check_int(engine_for_each_process(e, collect_cb, &ids), 0,
		  "processes listed");
	check_str(ids_text(&ids), "100,200",
		  "processes: 100 and 200; not thread 101, not stat");
	engine_free(e);

	/* Directories of other names, as /proc has (net, sys, self). */
	dir = copy_fixture("m2");
	e = open_engine(dir, 64);
	make_dir(dir, "proc/sys");
	make_dir(dir, "proc/1x");
	make_dir(dir, "proc/0100");
	make_dir(dir, "proc/300"); /* no status, no stat: no task */
	ids.n = 0;
	engine_for_each_process(e, collect_cb, &ids);
	check_str(ids_text(&ids), "100,200",
		  "processes: only canonical numeric directories of tasks");
	remove_tree(dir);
	engine_free(e);
}

int main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "t/fixtures";
	test_info();
	test_groups_m2();
	test_groups_m96();
	test_groups_m200();
	test_idle();
	test_ident();
	test_big_sources();
	test_times();
	test_times_monotonic();
	test_history_sweep();
	test_exit_split();
	test_lists();
	return tap_done();
}
