/*
 * taskpass: every task's times and start from a BPF task iterator
 * (taskpass.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "procfile.h"
#include "task_rec.h"
#include "taskpass.h"
#include "tasks.skel.h"

#define BTF_PATH "/sys/kernel/btf/vmlinux"

struct taskpass {
	struct tasks_bpf *skel;
	struct bpf_link *link;
	bool scoped; /* atomic: the kernel can scope a pass to a process */
};

/* libbpf's own messages: none; taskpass_open() says what failed. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/*
 * Whether this process is in the initial PID namespace: its status has
 * one NSpid number (procfs lists one per namespace it is in).
 */
static int in_initial_pidns(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int ret = -ENOENT;
	char *p, *end;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		p = line + 6;
		strtol(p, &end, 10);
		ret = end == p ? -EIO : 0;
		while (*end == ' ' || *end == '\t')
			end++;
		if (ret == 0 && *end != '\n' && *end != '\0')
			ret = -EXDEV; /* a second number: nested */
		break;
	}
	fclose(f);
	return ret;
}

int taskpass_open(struct taskpass **out, char *why, size_t whylen)
{
	struct taskpass *p;
	int ret;

	ret = in_initial_pidns();
	if (ret < 0) {
		snprintf(
			why, whylen,
			ret == -EXDEV ?
				"the daemon is not in the initial PID namespace" :
				"cannot read /proc/self/status: %s",
			strerror(-ret));
		return ret;
	}
	if (access(BTF_PATH, R_OK) < 0) {
		ret = -errno;
		snprintf(why, whylen, "no kernel BTF: %s: %s", BTF_PATH,
			 strerror(errno));
		return ret;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	libbpf_set_print(quiet);
	p->skel = tasks_bpf__open_and_load();
	if (!p->skel) {
		ret = errno ? -errno : -EINVAL;
		snprintf(why, whylen, "cannot load the task iterator: %s",
			 strerror(-ret));
		goto fail;
	}
	p->link = bpf_program__attach_iter(p->skel->progs.task_records, NULL);
	if (!p->link) {
		ret = errno ? -errno : -EINVAL;
		snprintf(why, whylen, "cannot attach the task iterator: %s",
			 strerror(-ret));
		goto fail;
	}
	/* Linux 6.1 scopes a task iterator to one process; simulated
	 * absent for tests of older kernels. */
	p->scoped = !getenv("TIMINGFS_TEST_NO_SCOPED_PASS");
	*out = p;
	return 0;
fail:
	taskpass_close(p);
	return ret;
}

void taskpass_close(struct taskpass *p)
{
	if (!p)
		return;
	bpf_link__destroy(p->link);
	tasks_bpf__destroy(p->skel);
	free(p);
}

static int by_process(const void *a, const void *b)
{
	const struct taskpass_task *x = a, *y = b;

	if (x->tgid != y->tgid)
		return (x->tgid > y->tgid) - (x->tgid < y->tgid);
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Whether @err says the daemon is out of descriptors or memory. */
static bool no_fds(int err)
{
	return procfile_no_fds(err) || err == ENOMEM;
}

/* Read the iterator's file @fd to its end into *@buf (grown). */
static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 64 * sizeof(struct task_rec) * 64, n = 0;
	char *b = malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	for (;;) {
		if (cap - n < 4096) {
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -EIO;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

/* The tasks of the iterator's file @fd, into *@tasks (sorted). */
static int read_pass(int fd, struct taskpass_task **tasks, size_t *count)
{
	struct taskpass_task *out;
	struct task_rec rec;
	size_t len, n, i;
	char *buf;
	int ret;

	ret = read_all(fd, &buf, &len);
	if (ret < 0)
		return ret;
	if (len % sizeof(rec)) {
		free(buf);
		return -EIO;
	}
	n = len / sizeof(rec);
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!out) {
		free(buf);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		memcpy(&rec, buf + i * sizeof(rec), sizeof(rec));
		out[i] = (struct taskpass_task){
			.tid = (pid_t)rec.tid,
			.tgid = (pid_t)rec.tgid,
			.start_boot_ns = rec.start_boot_ns,
			.runtime_ns = rec.runtime_ns,
			.utime_ns = rec.utime_ns,
			.stime_ns = rec.stime_ns,
			.prev_utime_ns = rec.prev_utime_ns,
			.prev_stime_ns = rec.prev_stime_ns,
		};
		memcpy(out[i].comm, rec.comm, sizeof(out[i].comm) - 1);
		out[i].comm[sizeof(out[i].comm) - 1] = '\0';
	}
	free(buf);
	qsort(out, n, sizeof(*out), by_process);
	*tasks = out;
	*count = n;
	return 0;
}

int taskpass_run(struct taskpass *p, struct taskpass_task **tasks,
		 size_t *count)
{
	int fd, ret;

	fd = bpf_iter_create(bpf_link__fd(p->link));
	if (fd < 0)
		return no_fds(errno) ? -errno : -EIO;
	ret = read_pass(fd, tasks, count);
	close(fd);
	return ret;
}

int taskpass_run_process(struct taskpass *p, pid_t tgid,
			 struct taskpass_task **tasks, size_t *count)
{
	union bpf_iter_link_info info = { .task = { .pid = (__u32)tgid } };
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info,
		    .iter_info_len = sizeof(info));
	int link, fd, ret;

	if (!__atomic_load_n(&p->scoped, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	link = bpf_link_create(bpf_program__fd(p->skel->progs.task_records), 0,
			       BPF_TRACE_ITER, &opts);
	if (link < 0) {
		ret = -errno;
		if (ret == -ENOENT || ret == -ESRCH)
			return -ENOENT; /* no such process by now */
		if (no_fds(-ret))
			return ret;
		/* Before Linux 6.1 the iterator takes no process. */
		__atomic_store_n(&p->scoped, false, __ATOMIC_RELAXED);
		return -EOPNOTSUPP;
	}
	fd = bpf_iter_create(link);
	ret = fd < 0 ? -errno : 0;
	close(link);
	if (ret < 0)
		return no_fds(-ret) ? ret : -EIO;
	ret = read_pass(fd, tasks, count);
	close(fd);
	return ret;
}

void taskpass_adjust(const struct taskpass_task *t, uint64_t *utime_ns,
		     uint64_t *stime_ns)
{
	uint64_t rtime = t->runtime_ns, s = t->stime_ns, u = t->utime_ns;

	/* Not more than the runtime shown last: those shares stand. */
	if (t->prev_stime_ns + t->prev_utime_ns >= rtime) {
		*utime_ns = t->prev_utime_ns;
		*stime_ns = t->prev_stime_ns;
		return;
	}
	/* The system share scaled; with no tick of one kind yet, all of
	 * the runtime is the other kind. */
	if (s && u)
		s = (uint64_t)((unsigned __int128)s * rtime / (s + u));
	else if (s)
		s = rtime;
	/* Neither share goes back. */
	if (s < t->prev_stime_ns)
		s = t->prev_stime_ns;
	u = rtime - s;
	if (u < t->prev_utime_ns) {
		u = t->prev_utime_ns;
		s = rtime - u;
	}
	*utime_ns = u;
	*stime_ns = s;
}

const struct taskpass_task *taskpass_find(const struct taskpass_task *tasks,
					  size_t count, pid_t tgid, pid_t tid)
{
	struct taskpass_task key = { .tgid = tgid, .tid = tid };

	return bsearch(&key, tasks, count, sizeof(*tasks), by_process);
}

size_t taskpass_process(const struct taskpass_task *tasks, size_t count,
			pid_t tgid, size_t *first)
{
	size_t lo = 0, hi = count, end;

	while (lo < hi) { /* the first of @tgid or after it */
		size_t mid = lo + (hi - lo) / 2;

		if (tasks[mid].tgid < tgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < count && tasks[end].tgid == tgid; end++)
		;
	*first = lo;
	return end - lo;
}
