/*
 * unit-jobs: the engine's source of jobs/ (jobs.h) on trees made here:
 * which hierarchy a mountinfo offers under the sys root, where a
 * process's cgroup lies below another's, and the accounting of a
 * hierarchy's root cgroup (opened without a handle, so any directory
 * serves): v1's cpuacct files and v2's cpu.stat, split, kept from
 * going back, and EIO for what does not parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs.h"
#include "tap.h"

static char top[256];

static const char *at(const char *rel)
{
	static char path[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", top, rel);
	return path[i];
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");

	if (!f) {
		perror(at(rel));
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void dirs(const char *rel)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", at(rel));
	if (system(cmd) != 0)
		exit(1);
}

/* mountinfo with @lines (%s: the sys root), then the source it gives. */
static const char *source_of(const char *lines)
{
	static char name[8];
	char text[4096];
	struct jobs *j;

	snprintf(text, sizeof(text), lines, at("sys"), at("sys"), at("sys"));
	put("proc/self/mountinfo", text);
	if (jobs_open(at("proc"), at("sys"), 3000000000ULL, &j) < 0)
		return "ENOMEM";
	snprintf(name, sizeof(name), "%s", jobs_source_name(j));
	jobs_close(j);
	return name;
}

#define V1_LINE \
	"33 31 0:30 / %s/fs/cgroup/cpuacct rw - cgroup cgroup rw,cpuacct\n"
#define V2_LINE "41 31 0:38 / %s/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"

static void test_sources(void)
{
	check_str(source_of(V1_LINE V2_LINE), "v1", "hybrid: v1 cpuacct");
	check_str(source_of(V2_LINE V1_LINE), "v1", "v1 wherever it is listed");
	check_str(source_of(V2_LINE), "v2", "cgroup2 alone: v2");
	check_str(source_of("33 31 0:30 / %s/fs/cgroup/cpuacct rw - cgroup "
			    "cgroup rw,cpu,cpuacct\n"),
		  "v1", "cpu,cpuacct together");
	check_str(source_of("33 31 0:30 / %s/fs/cgroup/cpuacct rw - cgroup "
			    "cgroup rw,cpuacct_x\n"),
		  "none", "a controller whose name begins so is another");
	check_str(source_of("33 31 0:30 / /elsewhere/cpuacct rw - cgroup "
			    "cgroup rw,cpuacct\n"),
		  "none", "a hierarchy outside the sys root is not taken");
	check_str(source_of("41 31 0:38 / %s/fs/cgroup/un\\040ified rw - "
			    "cgroup2 cgroup2 rw\n"),
		  "v2", "an escaped mount point");
	check_str(source_of(""), "none", "no mounts: none");
	unlink(at("proc/self/mountinfo"));
	check_str(source_of(""), "none", "no mountinfo: none");
}

static struct jobs *open_with(const char *lines)
{
	char text[4096];
	struct jobs *j;

	snprintf(text, sizeof(text), lines, at("sys"), at("sys"));
	put("proc/self/mountinfo", text);
	if (jobs_open(at("proc"), at("sys"), 3000000000ULL, &j) < 0)
		exit(1);
	return j;
}

static const char *below(struct jobs *j, pid_t first, pid_t pid)
{
	static char buf[256];
	int ret = jobs_path_below(j, first, pid, buf, sizeof(buf));

	if (ret < 0)
		snprintf(buf, sizeof(buf), "%d", ret);
	return buf;
}

static void test_paths(void)
{
	struct jobs *j = open_with(V1_LINE V2_LINE);
	struct stat st;
	uint64_t id = 0;

	put("proc/100/cgroup", "5:memory:/x\n4:cpu,cpuacct:/docker/abc\n"
			       "0::/v2/abc\n");
	put("proc/200/cgroup", "4:cpu,cpuacct:/docker/abc/sub/x\n0::/v2\n");
	put("proc/300/cgroup", "4:cpu,cpuacct:/docker/abcd\n0::/v2/abc/y\n");
	put("proc/400/cgroup", "4:cpu,cpuacct:/\n0::/\n");
	put("proc/500/cgroup", "1:name=systemd:/\n");
	check_str(below(j, 100, 200), "sub/x", "v1: below the first's cgroup");
	check_str(below(j, 100, 100), "", "v1: the first's own cgroup");
	check_str(below(j, 100, 300), "-2", "v1: a name that begins so");
	check_str(below(j, 100, 400), "-2", "v1: above it");
	check_str(below(j, 0, 200), "docker/abc/sub/x", "v1: the host's view");
	check_str(below(j, 0, 400), "", "v1: the root in the host's view");
	check_str(below(j, 100, 500), "-2", "no line of the hierarchy");
	check_str(below(j, 100, 999), "-2", "a process gone");
	dirs("sys/fs/cgroup/cpuacct/docker/abc");
	stat(at("sys/fs/cgroup/cpuacct/docker/abc"), &st);
	check_int(jobs_view_root(j, 100, &id), 0, "the view's root");
	check_u64(id, (uint64_t)st.st_ino, "is the first's cgroup's id");
	stat(at("sys/fs/cgroup/cpuacct"), &st);
	check_int(jobs_view_root(j, 0, &id), 0, "the host's root");
	check_u64(id, (uint64_t)st.st_ino, "is the hierarchy's root");
	check_int(jobs_view_root(j, 200, &id), -ENOENT, "no such directory");
	jobs_close(j);

	j = open_with(V2_LINE);
	check_str(below(j, 200, 100), "abc", "v2: below the first's cgroup");
	check_str(below(j, 100, 300), "y", "v2: deeper");
	check_str(below(j, 300, 100), "-2", "v2: above it");
	check_str(below(j, 0, 300), "v2/abc/y", "v2: the host's view");
	jobs_close(j);
}

static int times_of(struct jobs *j, struct job_times *t)
{
	uint64_t root;

	if (jobs_view_root(j, 0, &root) < 0)
		return -1;
	return jobs_times(j, root, root, t);
}

static void test_v2_times(void)
{
	struct jobs *j = open_with(V2_LINE);
	struct job_times t;
	int status;

	dirs("sys/fs/cgroup/unified/a/b");
	put("sys/fs/cgroup/unified/cgroup.procs", "1\n2\n");
	put("sys/fs/cgroup/unified/a/cgroup.procs", "3\n");
	put("sys/fs/cgroup/unified/a/b/cgroup.procs", "");
	put("sys/fs/cgroup/unified/cpu.stat",
	    "usage_usec 1000\nuser_usec 300\nsystem_usec 100\n"
	    "nr_periods 0\n");
	check_int(times_of(j, &t), 0, "v2: read");
	check_u64(t.kernel_ns, 250000, "v2: kernel share, rounded down");
	check_u64(t.user_ns, 750000, "v2: user is the rest");
	check_u64(t.cycles, 3000000, "v2: cycles of the usage at 3 GHz");
	check_u64(t.processes, 3, "v2: processes below too");
	put("sys/fs/cgroup/unified/cpu.stat",
	    "usage_usec 900\nuser_usec 300\nsystem_usec 100\n");
	times_of(j, &t);
	check_u64(t.kernel_ns + t.user_ns, 1000000, "v2: never backwards");
	check_u64(t.cycles, 3000000, "v2: cycles never backwards");
	put("sys/fs/cgroup/unified/cpu.stat",
	    "usage_usec 2000\nuser_usec 100\nsystem_usec 300\n");
	times_of(j, &t);
	check_u64(t.kernel_ns, 1250000, "v2: kernel grows, user kept");
	check_u64(t.user_ns, 750000, "v2: user never backwards");
	/* A process forked from it (a server after a dead one) keeps to
	 * what another showed. */
	if (fork() == 0) {
		put("sys/fs/cgroup/unified/cpu.stat",
		    "usage_usec 2500\nuser_usec 100\nsystem_usec 300\n");
		_exit(times_of(j, &t) == 0 && t.kernel_ns == 1750000 ? 0 : 1);
	}
	check(wait(&status) > 0 && WIFEXITED(status) && !WEXITSTATUS(status),
	      "v2: a forked process reads on from the same table");
	put("sys/fs/cgroup/unified/cpu.stat",
	    "usage_usec 2600\nuser_usec 300\nsystem_usec 100\n");
	times_of(j, &t);
	check_u64(t.kernel_ns, 1750000, "v2: what it showed holds here too");
	check_u64(t.user_ns, 850000, "v2: the rest is user time");
	put("sys/fs/cgroup/unified/cpu.stat", "usage_usec x\n");
	check_int(times_of(j, &t), -EIO, "v2: a broken cpu.stat is EIO");
	put("sys/fs/cgroup/unified/cpu.stat", "usage_usec 5\nuser_usec 1\n");
	check_int(times_of(j, &t), -EIO, "v2: a missing key is EIO");
	jobs_close(j);
}

static void test_v1_times(void)
{
	struct jobs *j = open_with(V1_LINE);
	struct job_times t;

	put("sys/fs/cgroup/cpuacct/cgroup.procs", "1\n");
	put("sys/fs/cgroup/cpuacct/docker/cgroup.procs", "");
	put("sys/fs/cgroup/cpuacct/docker/abc/cgroup.procs", "7\n");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage", "1000\n");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage_user", "0\n");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage_sys", "0\n");
	check_int(times_of(j, &t), 0, "v1: read");
	check_u64(t.user_ns, 1000, "v1: no split: all user");
	check_u64(t.kernel_ns, 0, "v1: no split: no kernel");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage", "4000\n");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage_user", "1000\n");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage_sys", "3000\n");
	times_of(j, &t);
	check_u64(t.kernel_ns, 3000, "v1: split in its proportion");
	check_u64(t.user_ns, 1000, "v1: user kept");
	check_u64(t.processes, 2, "v1: processes below too");
	put("sys/fs/cgroup/cpuacct/cpuacct.usage", "-1\n");
	check_int(times_of(j, &t), -EIO, "v1: a broken usage is EIO");
	jobs_close(j);
}

int main(void)
{
	char cmd[300];

	snprintf(top, sizeof(top), "/tmp/unit-jobs.XXXXXX");
	if (!mkdtemp(top))
		return 1;
	dirs("proc/self");
	dirs("proc/100");
	dirs("proc/200");
	dirs("proc/300");
	dirs("proc/400");
	dirs("proc/500");
	dirs("sys/fs/cgroup/cpuacct");
	dirs("sys/fs/cgroup/unified");
	dirs("sys/fs/cgroup/un ified");
	test_sources();
	test_paths();
	test_v2_times();
	test_v1_times();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;
	return tap_done();
}
