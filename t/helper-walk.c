/*
 * helper-walk: a reader that walks a timingfs mount over and over and
 * checks everything it reads, for the soak (t1950).
 *
 * usage: helper-walk [-s SECONDS] [-r ROUNDS] MNT
 *
 * For SECONDS (default 10), or ROUNDS walks if sooner, it walks MNT: info; groups/, groups/current
 * and each group's files; proc/, proc/self and proc/table; and in the
 * order proc/ lists them, each process's directory, its files, its
 * threads.table, its threads/ and each thread's directory and files.
 * Every file is opened, read whole with read(2) and closed, and its
 * content checked: a value file one canonical unsigned decimal and a
 * newline; a times file its five keys in order; a table its header and
 * lines of seven canonical integers and a name (in threads.table, the
 * first the process's number); a name file at most 15 bytes and a
 * newline; a directory the entries the contract names.
 *
 * Tasks come and go while it walks, so ENOENT where a task's path is
 * looked up (open or opendir below proc/PID: the task left between the
 * listing that named it and the lookup) is counted but no error. Any
 * other errno, anywhere, ENOENT for the paths that are always there
 * (info, groups/, proc/self, proc/table...), and ENOENT from read(2) or
 * getdents (served from what was taken at the open, so never racing),
 * is an error; so is content that is not well-formed. Each error is reported on stderr with its path
 * (the first 20 of each kind).
 *
 * At the end it prints "key value" lines on stdout:
 *
 *   rounds   walks of the whole tree finished
 *   files    files read and well-formed (tables and links included)
 *   tables   of which proc/table and threads.table
 *   lists    directories listed
 *   exited   files of exited tasks read (a nonzero exit_time)
 *   enoent   lookups that found the task gone
 *   errors   errors (any errno but those ENOENTs)
 *   malformed  files whose content is not well-formed
 *   errno NAME N   each errno seen, ENOENT included
 *
 * Exit status 0, 1 when there were errors or malformed content, 2 for
 * bad usage.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib-table.h"

#define REPORT_MAX 20
#define ERRNO_MAX 256

static struct {
	unsigned long long rounds, files, tables, lists, exited, enoent, errors,
		malformed;
	unsigned long long by_errno[ERRNO_MAX];
} count;

static struct timespec deadline;

static bool past_deadline(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec &&
		now.tv_nsec >= deadline.tv_nsec);
}

/* "MNT/proc/": the paths below it that name a task may vanish. */
static char task_prefix[PATH_MAX];

static bool names_task(const char *path)
{
	size_t n = strlen(task_prefix);

	return !strncmp(path, task_prefix, n) && path[n] >= '1' &&
	       path[n] <= '9';
}

/*
 * Count a call @op on @path that failed with @err. ENOENT from a lookup
 * (@lookup) of a task's path is a task gone; anything else is an
 * error, and reported.
 */
static void failed(const char *path, const char *op, int err, bool lookup)
{
	count.by_errno[err < ERRNO_MAX ? err : 0]++;
	if (err == ENOENT && lookup && names_task(path)) {
		count.enoent++;
		return;
	}
	if (++count.errors <= REPORT_MAX)
		fprintf(stderr, "helper-walk: %s: %s: %s\n", path, op,
			strerrorname_np(err) ? strerrorname_np(err) : "?");
}

static void malformed(const char *path, const char *why, const char *text)
{
	const char *nl;
	int len;

	if (++count.malformed > REPORT_MAX)
		return;
	nl = text ? strchr(text, '\n') : NULL;
	len = text ? (nl ? (int)(nl - text) : (int)strlen(text)) : 0;
	if (len > 80)
		len = 80;
	fprintf(stderr, "helper-walk: %s: malformed: %s: \"%.*s\"\n", path, why,
		len, text ? text : "");
}

/* ---- reading ------------------------------------------------------ */

struct buf {
	char *data;
	size_t len, size;
};

/*
 * The whole of @path, read with read(2) until it returns 0, into @b
 * (NUL-terminated): 0, or -1 with the failure counted (an ENOENT at
 * the open a task gone; a NUL byte in it malformed).
 */
static int read_file(const char *path, struct buf *b)
{
	ssize_t n;
	int fd;

	b->len = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		failed(path, "open", errno, true);
		return -1;
	}
	for (;;) {
		if (b->size - b->len < 4096 + 1) {
			b->size = b->size ? b->size * 2 : 65536;
			b->data = realloc(b->data, b->size);
			if (!b->data) {
				perror("realloc");
				exit(2);
			}
		}
		n = read(fd, b->data + b->len, b->size - b->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			failed(path, "read", errno, false);
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		b->len += (size_t)n;
	}
	b->data[b->len] = '\0';
	if (close(fd) < 0) {
		failed(path, "close", errno, false);
		return -1;
	}
	if (memchr(b->data, '\0', b->len)) {
		malformed(path, "a NUL byte", NULL);
		return -1;
	}
	return 0;
}

/*
 * A canonical unsigned decimal at *@p that fits 64 bits, ended by
 * @end: its value in *@v and *@p moved past @end; false if not.
 */
static bool parse_u64(const char **p, char end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int d;

	if (*s < '0' || *s > '9' || (*s == '0' && s[1] >= '0' && s[1] <= '9'))
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		d = *s - '0';
		if (x > (UINT64_MAX - (uint64_t)d) / 10)
			return false;
		x = x * 10 + (uint64_t)d;
	}
	if (*s != end)
		return false;
	*v = x;
	*p = s + 1;
	return true;
}

/* A value file: one canonical decimal and a newline. */
static bool check_value(const char *text, uint64_t *v)
{
	return parse_u64(&text, '\n', v) && !*text;
}

/* A times file: its five keys, in order, each with a value. */
static bool check_times(const char *text, uint64_t *exit_time)
{
	static const char *const keys[] = { "cycles ", "kernel_time ",
					    "user_time ", "creation_time ",
					    "exit_time " };
	uint64_t v = 0;
	size_t i, k;

	for (i = 0; i < 5; i++) {
		k = strlen(keys[i]);
		if (strncmp(text, keys[i], k) != 0)
			return false;
		text += k;
		if (!parse_u64(&text, '\n', &v))
			return false;
	}
	*exit_time = v;
	return !*text;
}

/*
 * A table: the header, then lines of seven canonical integers and a
 * name (escaped: no blank, tab or newline in it, and never empty), one
 * blank apart; the first @pid unless 0. NULL if it is, else the line
 * that is not. Sets *@exited when a line has a nonzero exit_time.
 */
static const char *check_table(const char *text, uint64_t pid, bool *exited)
{
	const char *line;
	uint64_t v;
	int i;

	if (strncmp(text, table_header, strlen(table_header)) != 0)
		return text;
	text += strlen(table_header);
	while (*text) {
		line = text;
		for (i = 0; i < 7; i++) {
			if (!parse_u64(&text, ' ', &v))
				return line;
			if (i == 0 && pid && v != pid)
				return line;
			if (i == 6 && v)
				*exited = true;
		}
		i = (int)strcspn(text, " \t\n");
		if (i == 0 || text[i] != '\n')
			return line;
		text += i + 1;
	}
	return NULL;
}

/* A cpulist: "0-63", "0,2,4-7", and a newline. */
static bool check_cpulist(const char *text)
{
	uint64_t a, b;
	const char *p;

	for (;;) {
		p = text;
		if (parse_u64(&p, '-', &a)) {
			text = p;
			if (!parse_u64(&p, ',', &b) && !parse_u64(&p, '\n', &b))
				return false;
			if (b < a)
				return false;
		} else if (!parse_u64(&p, ',', &a) &&
			   !parse_u64(&p, '\n', &a)) {
			return false;
		}
		text = p;
		if (p[-1] == '\n')
			return !*text;
	}
}

/* A group's idle_cycles: "cpuM VALUE" lines, M ascending. */
static bool check_idle_lines(const char *text)
{
	uint64_t m, v, last = 0;
	bool first = true;

	if (!*text)
		return false;
	while (*text) {
		if (strncmp(text, "cpu", 3) != 0)
			return false;
		text += 3;
		if (!parse_u64(&text, ' ', &m) || !parse_u64(&text, '\n', &v))
			return false;
		if (!first && m <= last)
			return false;
		first = false;
		last = m;
	}
	return true;
}

/* info: "key value" lines, the contract's keys there, numbers numeric. */
static bool check_info(const char *text)
{
	static const char *const needed[] = { "version",       "units",
					      "tsc_hz",	       "tsc_source",
					      "clk_tck",       "idle_source",
					      "group_max_size" };
	static const char *const numeric[] = {
		"tsc_hz",    "clk_tck",	      "group_max_size", "group_count",
		"exit_keep", "exit_retained", "exit_dropped",	"exit_lost"
	};
	unsigned int seen = 0;
	const char *line = text, *sp, *nl, *p;
	size_t i, klen;
	uint64_t v;

	while (*line) {
		nl = strchr(line, '\n');
		sp = strchr(line, ' ');
		if (!nl || !sp || sp > nl || sp == line || sp + 1 == nl ||
		    memchr(sp + 1, ' ', (size_t)(nl - sp - 1)))
			return false;
		klen = (size_t)(sp - line);
		for (p = line; p < sp; p++)
			if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
				return false;
		for (i = 0; i < sizeof(needed) / sizeof(*needed); i++)
			if (strlen(needed[i]) == klen &&
			    !strncmp(line, needed[i], klen))
				seen |= 1u << i;
		for (i = 0; i < sizeof(numeric) / sizeof(*numeric); i++) {
			p = sp + 1;
			if (strlen(numeric[i]) == klen &&
			    !strncmp(line, numeric[i], klen) &&
			    !parse_u64(&p, '\n', &v))
				return false;
		}
		line = nl + 1;
	}
	return seen == (1u << (sizeof(needed) / sizeof(*needed))) - 1;
}

/* ---- walking ------------------------------------------------------ */

/* A canonical unsigned decimal, the whole of @s. */
static bool is_canonical(const char *s, uint64_t *v)
{
	char tmp[32];
	const char *p = tmp;

	if (strlen(s) >= sizeof(tmp) - 1)
		return false;
	snprintf(tmp, sizeof(tmp), "%s\n", s);
	return parse_u64(&p, '\n', v);
}

/* A task's name in proc/ and threads/: canonical, 1..INT_MAX. */
static bool is_task_number(const char *s, uint64_t *v)
{
	return is_canonical(s, v) && *v && *v <= INT_MAX;
}

struct names {
	char **name;
	size_t n, size;
};

static void names_free(struct names *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->name[i]);
	free(l->name);
	l->name = NULL;
	l->n = l->size = 0;
}

/*
 * The entries of @path but "." and "..", into @l: 0, or -1 with the
 * failure counted (ENOENT at the open: a task gone).
 */
static int list_dir(const char *path, struct names *l)
{
	struct dirent *d;
	DIR *dir;

	l->n = 0;
	dir = opendir(path);
	if (!dir) {
		failed(path, "opendir", errno, true);
		return -1;
	}
	for (;;) {
		errno = 0;
		d = readdir(dir);
		if (!d)
			break;
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if (l->n == l->size) {
			l->size = l->size ? l->size * 2 : 64;
			l->name = realloc(l->name, l->size * sizeof(*l->name));
			if (!l->name) {
				perror("realloc");
				exit(2);
			}
		}
		l->name[l->n] = strdup(d->d_name);
		if (!l->name[l->n]) {
			perror("strdup");
			exit(2);
		}
		l->n++;
	}
	if (errno) {
		failed(path, "readdir", errno, false);
		closedir(dir);
		names_free(l);
		return -1;
	}
	closedir(dir);
	count.lists++;
	return 0;
}

/*
 * @l holds exactly the @n names of @want, in any order, besides those
 * @extra accepts (numbers): malformed if not.
 */
static bool check_entries(const char *path, const struct names *l,
			  const char *const *want, size_t n,
			  bool (*extra)(const char *name))
{
	unsigned long long seen = 0;
	size_t i, k;

	for (i = 0; i < l->n; i++) {
		for (k = 0; k < n; k++)
			if (!strcmp(l->name[i], want[k]))
				break;
		if (k < n && !(seen & (1ULL << k))) {
			seen |= 1ULL << k;
			continue;
		}
		if (k == n && extra && extra(l->name[i]))
			continue;
		malformed(path, "unexpected entry", l->name[i]);
		return false;
	}
	if (seen != (1ULL << n) - 1) {
		malformed(path, "entries missing", NULL);
		return false;
	}
	return true;
}

static struct buf buf;

/* Format a path into @path (PATH_MAX bytes); one too long ends it all. */
static void __attribute__((format(printf, 2, 3)))
path_of(char *path, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, PATH_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= PATH_MAX) {
		fprintf(stderr, "helper-walk: a path too long\n");
		exit(2);
	}
}

/* Read @path and check it as a value file; counts a nonzero exit_time. */
static void walk_value(const char *path, bool is_exit_time)
{
	uint64_t v;

	if (read_file(path, &buf) < 0)
		return;
	if (!check_value(buf.data, &v)) {
		malformed(path, "not one unsigned decimal", buf.data);
		return;
	}
	count.files++;
	if (is_exit_time && v)
		count.exited++;
}

/* A name file: the kernel's comm, at most 15 bytes, and a newline. */
static void walk_name(const char *path)
{
	size_t len;

	if (read_file(path, &buf) < 0)
		return;
	len = strlen(buf.data);
	if (len < 1 || len > 16 || buf.data[len - 1] != '\n') {
		malformed(path, "not a name and a newline", buf.data);
		return;
	}
	count.files++;
}

static void walk_times(const char *path)
{
	uint64_t exit_time;

	if (read_file(path, &buf) < 0)
		return;
	if (!check_times(buf.data, &exit_time)) {
		malformed(path, "not the five keys of times", buf.data);
		return;
	}
	count.files++;
	if (exit_time)
		count.exited++;
}

static void walk_table(const char *path, uint64_t pid)
{
	bool exited = false;
	const char *bad;

	if (read_file(path, &buf) < 0)
		return;
	bad = check_table(buf.data, pid, &exited);
	if (bad) {
		malformed(path, "not a table line", bad);
		return;
	}
	count.files++;
	count.tables++;
	if (exited)
		count.exited++;
}

/* Read the link @path: its target must be a canonical number. */
static void walk_link(const char *path)
{
	char target[64];
	uint64_t v;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		failed(path, "readlink", errno, true);
		return;
	}
	target[n] = '\0';
	if (!is_canonical(target, &v)) {
		malformed(path, "not a link to a number", target);
		return;
	}
	count.files++;
}

static const char *const task_files[] = { "cycles",    "kernel_time",
					  "user_time", "creation_time",
					  "exit_time", "name",
					  "times" };
#define TASK_FILES 7

/* The files of a task directory @dir (a process or a thread). */
static void walk_task_files(const char *dir)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < TASK_FILES; i++) {
		path_of(path, "%s/%s", dir, task_files[i]);
		if (i == 6)
			walk_times(path);
		else if (i == 5)
			walk_name(path);
		else
			walk_value(path, i == 4);
	}
}

static bool task_name(const char *name)
{
	uint64_t v;

	return is_task_number(name, &v);
}

static bool group_name(const char *name)
{
	uint64_t v;

	return is_canonical(name, &v);
}

static bool cpu_name(const char *name)
{
	uint64_t v;

	return !strncmp(name, "cpu", 3) && is_canonical(name + 3, &v);
}

static void walk_thread(const char *dir)
{
	struct names l = { 0 };

	if (list_dir(dir, &l) < 0)
		return;
	check_entries(dir, &l, task_files, TASK_FILES, NULL);
	names_free(&l);
	walk_task_files(dir);
}

/* proc/PID/job: there where the process lies in the reader's jobs/. */
static bool job_link(const char *name)
{
	return strcmp(name, "job") == 0;
}

static void walk_process(const char *dir, uint64_t pid)
{
	static const char *const want[] = { "cycles",	    "kernel_time",
					    "user_time",    "creation_time",
					    "exit_time",    "name",
					    "times",	    "threads",
					    "threads.table" };
	char path[PATH_MAX];
	struct names l = { 0 };
	size_t i;

	if (list_dir(dir, &l) < 0)
		return;
	check_entries(dir, &l, want, 9, job_link);
	names_free(&l);
	walk_task_files(dir);
	path_of(path, "%s/threads.table", dir);
	walk_table(path, pid);
	path_of(path, "%s/threads", dir);
	if (list_dir(path, &l) < 0)
		return;
	check_entries(path, &l, NULL, 0, task_name);
	for (i = 0; i < l.n && !past_deadline(); i++) {
		path_of(path, "%s/threads/%s", dir, l.name[i]);
		walk_thread(path);
	}
	names_free(&l);
}

static void walk_proc(const char *mnt, size_t rotate)
{
	static const char *const want[] = { "self", "table" };
	char path[PATH_MAX];
	struct names l = { 0 };
	size_t i, k;
	uint64_t pid;

	path_of(path, "%s/proc", mnt);
	if (list_dir(path, &l) < 0)
		return;
	check_entries(path, &l, want, 2, task_name);
	path_of(path, "%s/proc/self", mnt);
	walk_link(path);
	path_of(path, "%s/proc/table", mnt);
	walk_table(path, 0);
	for (k = 0; k < l.n && !past_deadline(); k++) {
		i = (k + rotate) % l.n;
		if (!is_task_number(l.name[i], &pid))
			continue;
		path_of(path, "%s/proc/%s", mnt, l.name[i]);
		walk_process(path, pid);
	}
	names_free(&l);
}

static void walk_group(const char *dir)
{
	static const char *const want[] = { "cpus", "idle_cycles" };
	char path[PATH_MAX];
	struct names l = { 0 };
	size_t i;

	if (list_dir(dir, &l) < 0)
		return;
	check_entries(dir, &l, want, 2, cpu_name);
	path_of(path, "%s/cpus", dir);
	if (read_file(path, &buf) == 0) {
		if (check_cpulist(buf.data))
			count.files++;
		else
			malformed(path, "not a cpulist", buf.data);
	}
	path_of(path, "%s/idle_cycles", dir);
	if (read_file(path, &buf) == 0) {
		if (check_idle_lines(buf.data))
			count.files++;
		else
			malformed(path, "not cpuM VALUE lines", buf.data);
	}
	for (i = 0; i < l.n; i++) {
		if (!cpu_name(l.name[i]))
			continue;
		path_of(path, "%s/%s/idle_cycles", dir, l.name[i]);
		walk_value(path, false);
		path_of(path, "%s/%s/cpu", dir, l.name[i]);
		walk_value(path, false);
	}
	names_free(&l);
}

static void walk_groups(const char *mnt)
{
	static const char *const want[] = { "current" };
	char path[PATH_MAX];
	struct names l = { 0 };
	size_t i;

	path_of(path, "%s/groups", mnt);
	if (list_dir(path, &l) < 0)
		return;
	check_entries(path, &l, want, 1, group_name);
	path_of(path, "%s/groups/current", mnt);
	walk_link(path);
	for (i = 0; i < l.n; i++) {
		if (!strcmp(l.name[i], "current"))
			continue;
		path_of(path, "%s/groups/%s", mnt, l.name[i]);
		walk_group(path);
	}
	names_free(&l);
}

static void walk_info(const char *mnt)
{
	char path[PATH_MAX];

	path_of(path, "%s/info", mnt);
	if (read_file(path, &buf) < 0)
		return;
	if (check_info(buf.data))
		count.files++;
	else
		malformed(path, "not the key value lines of info", buf.data);
}

static void print_counts(void)
{
	int e;

	printf("rounds %llu\nfiles %llu\ntables %llu\nlists %llu\n"
	       "exited %llu\nenoent %llu\nerrors %llu\nmalformed %llu\n",
	       count.rounds, count.files, count.tables, count.lists,
	       count.exited, count.enoent, count.errors, count.malformed);
	for (e = 0; e < ERRNO_MAX; e++)
		if (count.by_errno[e])
			printf("errno %s %llu\n",
			       e && strerrorname_np(e) ? strerrorname_np(e) :
							 "other",
			       count.by_errno[e]);
}

int main(int argc, char **argv)
{
	unsigned long seconds = 10, rounds = 0;
	const char *mnt;
	size_t rotate;
	int opt;

	table_header_init("helper-walk");
	while ((opt = getopt(argc, argv, "s:r:")) != -1) {
		if (opt == 's')
			seconds = strtoul(optarg, NULL, 10);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 10);
		else
			goto usage;
	}
	if (optind + 1 != argc || !seconds)
		goto usage;
	mnt = argv[optind];
	path_of(task_prefix, "%s/proc/", mnt);
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += (time_t)seconds;
	/* Walkers started together begin their rounds at other processes. */
	rotate = (size_t)getpid();
	while (!past_deadline() && (!rounds || count.rounds < rounds)) {
		walk_info(mnt);
		walk_groups(mnt);
		walk_proc(mnt, rotate);
		if (!past_deadline())
			count.rounds++;
		rotate += 7;
	}
	print_counts();
	return count.errors || count.malformed ? 1 : 0;
usage:
	fprintf(stderr, "usage: helper-walk [-s SECONDS] [-r ROUNDS] MNT\n");
	return 2;
}
