/*
 * unit-render: the exact text of every kind of file, in both units, and
 * outputs far larger than any fixed buffer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "tap.h"

/*
 * One thread, as unit-engine's m2 thread 100: 1500000123 ns of CPU,
 * 500000041 of it in the kernel, 3 GHz, started 1700000050 s after the
 * epoch.
 */
static const struct task_times thread = {
	.cpu_ns = 1500000123ULL,
	.kernel_ns = 500000041ULL,
	.user_ns = 1000000082ULL,
	.cycles = 4500000369ULL,
	.start_tick_ns = 1700000050000000000ULL,
	.created_ns = 1700000050000000000ULL,
	.exit_ns = 0,
	.comm = "worker 7",
};

/* Names and their column: mountinfo's escapes, one field. */
static const struct {
	const char *comm, *column;
} names[] = {
	{ "java", "java" },
	{ "a b", "a\\040b" },
	{ "tab\there", "tab\\011here" },
	{ "new\nline", "new\\012line" },
	{ "back\\slash", "back\\134slash" },
	{ "fifteen bytes!!", "fifteen\\040bytes!!" },
	{ " \t\n\\ \t\n\\ \t\n\\ \t\n",
	  "\\040\\011\\012\\134\\040\\011\\012\\134\\040\\011\\012\\134"
	  "\\040\\011\\012" },
	{ "", "\\000" },
	{ "(x) 1 2", "(x)\\0401\\0402" },
};

/* The content of @b as a string, "" for a buffer never written. */
static const char *text(const struct rbuf *b)
{
	return b->data ? b->data : "";
}

static void test_buffer(void)
{
	struct rbuf b;
	char *big;

	rbuf_init(&b);
	check(b.data == NULL && b.len == 0, "a new buffer is empty");
	check(rbuf_printf(&b, "%s", "") == 0 && b.data && b.data[0] == '\0' &&
		      b.len == 0,
	      "an empty write leaves an empty string");
	rbuf_printf(&b, "a%d", 1);
	rbuf_printf(&b, "-%s", "b");
	check_str(text(&b), "a1-b", "writes append");
	check_int((long)b.len, 4, "len counts the bytes");
	rbuf_free(&b);
	check(b.data == NULL && b.len == 0 && b.cap == 0,
	      "free leaves an empty buffer");

	/* 100000 bytes in one write, far beyond any first allocation. */
	big = malloc(100001);
	if (!big)
		exit(99);
	memset(big, 'x', 100000);
	big[100000] = '\0';
	check_int(rbuf_printf(&b, "<%s>", big), 0, "a 100002-byte write");
	check(b.len == 100002 && b.data[0] == '<' && b.data[100001] == '>' &&
		      b.data[100002] == '\0' && b.cap > b.len,
	      "all of it, NUL-terminated");
	/* A write that does not fit after content keeps the content. */
	rbuf_free(&b);
	rbuf_printf(&b, "a1-b");
	big[100] = '\0';
	check_int(rbuf_printf(&b, "<%s>", big), 0, "a write past the room");
	check(b.len == 106 && !strncmp(b.data, "a1-b<xx", 7) &&
		      b.data[105] == '>' && b.data[106] == '\0',
	      "the content before it kept, the write whole");
	free(big);
	rbuf_free(&b);
}

/* Table lines written in place are what printf writes, at any size. */
static void test_table_rows(void)
{
	struct task_times t = thread;
	struct rbuf b;
	char line[256], *want;
	size_t at = 0, i;
	bool same = true;

	want = malloc(5000 * sizeof(line));
	if (!want)
		exit(99);
	rbuf_init(&b);
	for (i = 0; i < 5000; i++) {
		t.cycles = i % 3 ? UINT64_MAX - i : i;
		t.kernel_ns = i * 1000003ULL;
		t.user_ns = i % 7 ? 0 : UINT64_MAX / 1000;
		t.created_ns = 1700000050000000000ULL + i;
		t.exit_ns = i % 2 ? 0 : 1700000099000000000ULL;
		strcpy(t.comm,
		       names[i % (sizeof(names) / sizeof(names[0]))].comm);
		if (render_table_row(&b, UNITS_UNIX, (int)i * 7, (int)i * 13,
				     &t) < 0) {
			same = false;
			break;
		}
		at += (size_t)snprintf(
			want + at, sizeof(line),
			"%zu %zu %llu %llu %llu %llu %llu %s\n", i * 7, i * 13,
			(unsigned long long)t.cycles,
			(unsigned long long)t.kernel_ns,
			(unsigned long long)t.user_ns,
			(unsigned long long)t.created_ns,
			(unsigned long long)t.exit_ns,
			names[i % (sizeof(names) / sizeof(names[0]))].column);
	}
	check(same && b.len == at && !memcmp(b.data, want, at) &&
		      b.data[b.len] == '\0',
	      "5000 table lines, up to 20 digits, names escaped, as printf writes them");
	check_int(render_table_row(&b, UNITS_UNIX, -1, 1, &t), -EINVAL,
		  "a negative number is no line");
	check(b.len == at, "and writes nothing");
	free(want);
	rbuf_free(&b);
}

static void test_values(void)
{
	struct rbuf b;

	rbuf_init(&b);
	render_value(&b, 0);
	check_str(text(&b), "0\n", "value 0");
	rbuf_free(&b);

	render_value(&b, UINT64_MAX);
	check_str(text(&b), "18446744073709551615\n", "value 2^64-1");
	rbuf_free(&b);
}

/* The value file @name of @t, by the catalogue's row of that name. */
static void render_named(struct rbuf *b, enum units units, const char *name,
			 const struct task_times *t)
{
	unsigned int i;

	for (i = 0; i < TASK_VALUE_COUNT; i++)
		if (strcmp(task_values[i].name, name) == 0)
			break;
	if (i == TASK_VALUE_COUNT) {
		printf("Bail out! no value %s in the catalogue\n", name);
		exit(99);
	}
	check_int(render_task_value(b, units, &task_values[i], t), 0,
		  "render %s", name);
}

static void test_task_files(void)
{
	struct task_times gone = thread;
	struct rbuf b;

	rbuf_init(&b);
	render_named(&b, UNITS_WINDOWS, "cycles", &thread);
	check_str(text(&b), "4500000369\n", "cycles have no units");
	rbuf_free(&b);

	/* 500000041 ns / 100 = 5000000.41 -> 5000000. */
	render_named(&b, UNITS_WINDOWS, "kernel_time", &thread);
	check_str(text(&b), "5000000\n", "kernel_time in 100 ns");
	rbuf_free(&b);
	render_named(&b, UNITS_UNIX, "kernel_time", &thread);
	check_str(text(&b), "500000041\n", "kernel_time in ns");
	rbuf_free(&b);

	/* 1000000082 ns / 100 = 10000000.82 -> 10000000. */
	render_named(&b, UNITS_WINDOWS, "user_time", &thread);
	check_str(text(&b), "10000000\n", "user_time in 100 ns");
	rbuf_free(&b);
	render_named(&b, UNITS_UNIX, "user_time", &thread);
	check_str(text(&b), "1000000082\n", "user_time in ns");
	rbuf_free(&b);

	/* 1700000050 s = 17000000500000000 intervals, + 116444736000000000
	 * for 1601..1970 = 133444736500000000. */
	render_named(&b, UNITS_WINDOWS, "creation_time", &thread);
	check_str(text(&b), "133444736500000000\n", "creation_time FILETIME");
	rbuf_free(&b);
	render_named(&b, UNITS_UNIX, "creation_time", &thread);
	check_str(text(&b), "1700000050000000000\n", "creation_time unix ns");
	rbuf_free(&b);
	{
		struct task_times fine = thread;

		/* The start to the ns, where the tick-grained one says
		 * which task it is: the former is shown. */
		fine.created_ns = 1700000050004321987ULL;
		render_named(&b, UNITS_UNIX, "creation_time", &fine);
		check_str(text(&b), "1700000050004321987\n",
			  "creation_time: the start to the ns, unix");
		rbuf_free(&b);
		render_named(&b, UNITS_WINDOWS, "creation_time", &fine);
		check_str(text(&b), "133444736500043219\n",
			  "creation_time: the start to the ns, FILETIME");
		rbuf_free(&b);
	}

	render_named(&b, UNITS_WINDOWS, "exit_time", &thread);
	check_str(text(&b), "0\n", "exit_time of a live task is 0 (windows)");
	rbuf_free(&b);
	render_named(&b, UNITS_UNIX, "exit_time", &thread);
	check_str(text(&b), "0\n", "exit_time of a live task is 0 (unix)");
	rbuf_free(&b);

	/* Exited 10 s after it started: 1700000060 s. */
	gone.exit_ns = 1700000060000000000ULL;
	render_named(&b, UNITS_WINDOWS, "exit_time", &gone);
	check_str(text(&b), "133444736600000000\n", "exit_time FILETIME");
	rbuf_free(&b);
}

static void test_name_file(void)
{
	struct task_times t = thread;
	struct rbuf b;

	rbuf_init(&b);
	render_named(&b, UNITS_WINDOWS, "name", &t);
	check_str(text(&b), "worker 7\n", "name: as the kernel keeps it");
	rbuf_free(&b);
	strcpy(t.comm, "a\\b\tc\nd");
	render_named(&b, UNITS_UNIX, "name", &t);
	check_str(text(&b), "a\\b\tc\nd\n", "name: not escaped in its file");
	rbuf_free(&b);
}

static void test_times(void)
{
	struct task_times gone = thread;
	struct rbuf b;

	rbuf_init(&b);
	render_times(&b, UNITS_WINDOWS, &thread);
	check_str(text(&b),
		  "cycles 4500000369\n"
		  "kernel_time 5000000\n"
		  "user_time 10000000\n"
		  "creation_time 133444736500000000\n"
		  "exit_time 0\n",
		  "times file, windows units");
	rbuf_free(&b);

	gone.exit_ns = 1700000060000000000ULL;
	render_times(&b, UNITS_UNIX, &gone);
	check_str(text(&b),
		  "cycles 4500000369\n"
		  "kernel_time 500000041\n"
		  "user_time 1000000082\n"
		  "creation_time 1700000050000000000\n"
		  "exit_time 1700000060000000000\n",
		  "times file, unix units, an exited task");
	rbuf_free(&b);
}

/* The header and the times file name the catalogue's values in its
 * order, and a line has a number for each. */
static void test_catalogue(void)
{
	struct task_times t = thread;
	char want[256] = "pid tid", *line, *save = NULL;
	unsigned int i, n = 0;
	struct rbuf b;
	bool same = true;

	rbuf_init(&b);
	for (i = 0; i < TASK_VALUE_COUNT; i++)
		if (task_values[i].in & VALUE_IN_TABLE)
			snprintf(want + strlen(want),
				 sizeof(want) - strlen(want), " %s",
				 task_values[i].name);
	strcat(want, "\n");
	check_int(render_table_header(&b), 0, "header: ok");
	check_str(text(&b), want, "header: pid, tid and the catalogue");
	rbuf_free(&b);

	render_times(&b, UNITS_UNIX, &t);
	for (i = 0;
	     i < TASK_VALUE_COUNT && !(task_values[i].in & VALUE_IN_TIMES); i++)
		;
	for (line = strtok_r(b.data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), n++) {
		same &= i < TASK_VALUE_COUNT &&
			strncmp(line, task_values[i].name,
				strlen(task_values[i].name)) == 0 &&
			line[strlen(task_values[i].name)] == ' ';
		for (i++; i < TASK_VALUE_COUNT &&
			  !(task_values[i].in & VALUE_IN_TIMES);
		     i++)
			;
	}
	check(same && i == TASK_VALUE_COUNT && n == 5,
	      "times: a line per value it shows, in the catalogue's order: "
	      "the five numbers");
	rbuf_free(&b);

	render_table_row(&b, UNITS_UNIX, 1, 2, &t);
	for (i = 0, n = 0; i < b.len; i++)
		n += b.data[i] == ' ';
	check_int(n, 7, "a table line: eight fields");
	check(b.len > 13 && !strcmp(b.data + b.len - 13, " worker\\0407\n"),
	      "the last, its name, escaped");
	rbuf_free(&b);
}

static void test_idle_cycles(void)
{
	uint64_t cycles[64];
	struct rbuf b;
	unsigned int m;

	for (m = 0; m < 64; m++)
		cycles[m] = 1000 + m;
	rbuf_init(&b);
	check_int(render_idle_cycles(&b, 0, cycles), 0, "no processor: ok");
	check_str(text(&b), "", "no processor: empty");
	rbuf_free(&b);

	cycles[63] = UINT64_MAX;
	render_idle_cycles(&b, (1ULL << 0) | (1ULL << 2) | (1ULL << 63),
			   cycles);
	check_str(text(&b),
		  "cpu0 1000\ncpu2 1002\ncpu63 18446744073709551615\n",
		  "sparse mask: M ascending, holes skipped, bit 63");
	rbuf_free(&b);

	/* All 64: "cpu0 1000\n" is 10 bytes for M < 10, "cpu10 1010\n"
	 * 11 for M 10..62, and "cpu63 18446744073709551615\n" 27:
	 * 10 * 10 + 53 * 11 + 27 = 710. */
	render_idle_cycles(&b, UINT64_MAX, cycles);
	check_int((long)b.len, 710, "all 64 processors, no truncation");
	check(b.len >= 27 && !strcmp(b.data + b.len - 27,
				     "cpu63 18446744073709551615\n"),
	      "the last line is whole");
	rbuf_free(&b);
}

static void cpulist_is(const int *cpus, size_t n, const char *want,
		       const char *title)
{
	struct rbuf b;

	rbuf_init(&b);
	check_int(render_cpulist(&b, cpus, n), 0, "cpulist %s: ok", title);
	check_str(text(&b), want, "cpulist %s", title);
	rbuf_free(&b);
}

static void test_cpulist(void)
{
	static const int one[] = { 0 };
	static const int four[] = { 0, 1, 2, 3 };
	static const int mixed[] = { 0, 2, 4, 5, 6, 7 };
	static const int pair[] = { 5, 6, 9 };
	static int m96[95], even[2048];
	struct rbuf b;
	int i, n = 0;

	cpulist_is(one, 1, "0\n", "a single CPU");
	cpulist_is(four, 4, "0-3\n", "one range");
	cpulist_is(mixed, 6, "0,2,4-7\n", "singles and a range");
	cpulist_is(pair, 3, "5-6,9\n", "two neighbours are a range");
	cpulist_is(NULL, 0, "\n", "empty, as a memory-only node");

	/* 0..95 without the offline 30. */
	for (i = 0; i < 96; i++)
		if (i != 30)
			m96[n++] = i;
	cpulist_is(m96, 95, "0-29,31-95\n", "96 CPUs, one offline");

	/* 0,2,...,4094: digits 5*1 + 45*2 + 450*3 + 1548*4 = 7637, plus
	 * 2047 commas and the newline = 9685 bytes. */
	for (i = 0; i < 2048; i++)
		even[i] = 2 * i;
	rbuf_init(&b);
	render_cpulist(&b, even, 2048);
	check_int((long)b.len, 9685, "4096 CPUs, every other one: 9685 bytes");
	check(b.len > 20 && !strncmp(b.data, "0,2,4,6,8,10,", 13) &&
		      !strcmp(b.data + b.len - 11, ",4092,4094\n"),
	      "4096 CPUs: whole from start to end");
	rbuf_free(&b);
}

static void test_info(void)
{
	struct engine_info info = {
		.tsc_hz = 3000000000ULL,
		.tsc_source = "config",
		.clk_tck = 100,
		.idle_source = "proc_stat",
		.task_source = "procfs",
		.group_max_size = 64,
		.group_count = 4,
		.units = UNITS_WINDOWS,
		.proc_root = "/proc",
		.sys_root = "/sys",
	};
	struct rbuf b;

	rbuf_init(&b);
	check_int(render_info(&b, "0.1.0", &info), 0, "info: ok");
	check_str(text(&b),
		  "version 0.1.0\n"
		  "units windows\n"
		  "tsc_hz 3000000000\n"
		  "tsc_source config\n"
		  "clk_tck 100\n"
		  "idle_source proc_stat\n"
		  "task_source procfs\n"
		  "identity_source ticks\n"
		  "group_max_size 64\n"
		  "group_count 4\n"
		  "jobs none\n",
		  "info: every line, in order");
	rbuf_free(&b);

	info.units = UNITS_UNIX;
	info.tsc_hz = 2096009998;
	info.tsc_source = "calibrated";
	info.idle_source = "cpuidle";
	info.task_source = "bpf";
	info.identity_source = "pidfs";
	info.group_max_size = 16;
	info.group_count = 6;
	info.jobs_source = "v2";
	render_info(&b, "0.1.0", &info);
	check_str(text(&b),
		  "version 0.1.0\n"
		  "units unix\n"
		  "tsc_hz 2096009998\n"
		  "tsc_source calibrated\n"
		  "clk_tck 100\n"
		  "idle_source cpuidle\n"
		  "task_source bpf\n"
		  "identity_source pidfs\n"
		  "group_max_size 16\n"
		  "group_count 6\n"
		  "jobs v2\n",
		  "info: unix units, calibrated, cpuidle");
	rbuf_free(&b);
}

int main(void)
{
	test_buffer();
	test_table_rows();
	test_values();
	test_task_files();
	test_times();
	test_catalogue();
	test_name_file();
	test_idle_cycles();
	test_cpulist();
	test_info();
	return tap_done();
}
