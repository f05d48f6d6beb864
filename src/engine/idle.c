/*
 * idle: per-CPU idle time that never goes backwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "idle.h"
#include "procfile.h"
#include "units.h"

#define STATE_MAX 64
/*
 * At most this many time files are kept open, so that a machine of
 * thousands of CPUs does not spend the daemon's descriptors on them:
 * the CPUs beyond are read by path.
 */
#define KEPT_FDS_MAX 512

/* A CPU's idle states' time files, open. */
struct idle_state_fds {
	int count;
	int fd[];
};

static bool has_cpuidle(const char *sys_root, int cpu)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path),
		 "%s/devices/system/cpu/cpu%d/cpuidle/state0/time", sys_root,
		 cpu);
	return access(path, R_OK) == 0;
}

int idle_init(struct idle *idle, const char *proc_root, const char *sys_root,
	      size_t ncpus, int probe_cpu, uint64_t clk_tck)
{
	memset(idle, 0, sizeof(*idle));
	idle->stat_fd = -1;
	idle->stat_hint = 8192;
	idle->proc_root = strdup(proc_root);
	idle->sys_root = strdup(sys_root);
	idle->last_ns = calloc(ncpus ? ncpus : 1, sizeof(uint64_t));
	idle->state_fds = calloc(ncpus ? ncpus : 1, sizeof(*idle->state_fds));
	if (!idle->proc_root || !idle->sys_root || !idle->last_ns ||
	    !idle->state_fds) {
		idle_destroy(idle);
		return -ENOMEM;
	}
	idle->ncpus = ncpus;
	idle->clk_tck = clk_tck;
	idle->cpuidle = has_cpuidle(sys_root, probe_cpu);
	idle->keep_stat_fd = strcmp(proc_root, "/proc") == 0;
	idle->keep_state_fds = strcmp(sys_root, "/sys") == 0;
	pthread_mutex_init(&idle->lock, NULL);
	pthread_rwlock_init(&idle->fds_lock, NULL);
	return 0;
}

static void state_fds_close(struct idle *idle, struct idle_state_fds *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < f->count; i++)
		close(f->fd[i]);
	idle->kept_fds -= (size_t)f->count;
	free(f);
}

void idle_destroy(struct idle *idle)
{
	size_t i;

	if (idle->stat_fd >= 0)
		close(idle->stat_fd);
	if (idle->last_ns && idle->state_fds) {
		pthread_mutex_destroy(&idle->lock);
		pthread_rwlock_destroy(&idle->fds_lock);
	}
	for (i = 0; idle->state_fds && i < idle->ncpus; i++)
		state_fds_close(idle, idle->state_fds[i]);
	free(idle->state_fds);
	free(idle->proc_root);
	free(idle->sys_root);
	free(idle->last_ns);
	memset(idle, 0, sizeof(*idle));
	idle->stat_fd = -1;
}

const char *idle_source(const struct idle *idle)
{
	return idle->cpuidle ? "cpuidle" : "proc_stat";
}

/*
 * One "cpuN user nice system idle iowait ..." line of /proc/stat: idle
 * and iowait ticks. -EIO when the line is short or malformed.
 */
static int stat_line_idle(const char *p, uint64_t *ticks)
{
	uint64_t v[5];
	int i;

	for (i = 0; i < 5; i++)
		if (procfile_u64(&p, &v[i]) < 0)
			return -EIO;
	*ticks = v[3] + v[4];
	return 0;
}

static int index_of(const int *cpus, size_t n, uint64_t cpu)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((uint64_t)cpus[i] == cpu)
			return (int)i;
	return -1;
}

/*
 * PROC/stat, opened at its first use and kept open: a read from its
 * start makes it anew, and costs half as much as open, read and close.
 * Only procfs does that: a captured tree's file, replaced or removed,
 * would be read as it was; there it is opened at every read.
 */
static int stat_fd(struct idle *idle)
{
	char path[PATH_MAX];
	int fd;

	fd = __atomic_load_n(&idle->stat_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0)
		return fd;
	pthread_mutex_lock(&idle->lock);
	fd = idle->stat_fd;
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/stat", idle->proc_root);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			__atomic_store_n(&idle->stat_fd, fd, __ATOMIC_RELEASE);
		else
			fd = -errno;
	}
	pthread_mutex_unlock(&idle->lock);
	return fd;
}

int idle_parse_stat(const char *text, const int *cpus, size_t n,
		    uint64_t clk_tck, uint64_t *ns, bool *found)
{
	const char *line, *p;
	uint64_t cpu, ticks;
	int i;

	for (line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		p = line + 3;
		if (procfile_u64(&p, &cpu) < 0 || *p != ' ')
			return -EIO;
		i = index_of(cpus, n, cpu);
		if (i < 0)
			continue;
		if (stat_line_idle(p, &ticks) < 0)
			return -EIO;
		ns[i] = units_ticks_to_ns(ticks, clk_tck);
		found[i] = true;
	}
	return 0;
}

static int read_proc_stat(struct idle *idle, const int *cpus, size_t n,
			  uint64_t *ns, bool *found)
{
	char path[PATH_MAX], *text;
	int ret;

	if (idle->keep_stat_fd) {
		ret = stat_fd(idle);
		if (ret >= 0)
			ret = procfile_pread_alloc(ret, &idle->stat_hint,
						   &text);
	} else {
		snprintf(path, sizeof(path), "%s/stat", idle->proc_root);
		ret = procfile_read_alloc(path, idle->stat_hint, &text);
	}
	if (ret < 0)
		return ret == -ENOMEM || procfile_no_fds(-ret) ? ret : -EIO;
	ret = idle_parse_stat(text, cpus, n, idle->clk_tck, ns, found);
	free(text);
	return ret;
}

/* One residency, µs, from the text of a state's time file. */
static int parse_residency(const char *buf, uint64_t *us)
{
	const char *p = buf;

	if (procfile_u64(&p, us) < 0 || (*p != '\n' && *p != '\0'))
		return -EIO;
	return 0;
}

/* CPU @cpu's states' time files, opened now: NULL when it has none. */
static struct idle_state_fds *state_fds_open(struct idle *idle, int cpu)
{
	struct idle_state_fds *f;
	char path[PATH_MAX];
	bool all = false;
	int fd, state;

	f = malloc(sizeof(*f) + STATE_MAX * sizeof(int));
	if (!f)
		return NULL;
	f->count = 0;
	for (state = 0; state < STATE_MAX; state++) {
		snprintf(path, sizeof(path),
			 "%s/devices/system/cpu/cpu%d/cpuidle/state%d/time",
			 idle->sys_root, cpu, state);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		all = fd < 0 && errno == ENOENT;
		if (fd < 0)
			break;
		f->fd[f->count++] = fd;
		idle->kept_fds++;
		if (idle->kept_fds >= KEPT_FDS_MAX)
			break;
	}
	/* None, or not all of them: this CPU is read by path. */
	if (f->count == 0 || !all) {
		state_fds_close(idle, f);
		return NULL;
	}
	return f;
}

/*
 * The sum of CPU @cpu's residencies, µs, with one pread of each time
 * file kept open (sysfs makes the text anew at offset 0). 0; 1 when the
 * kept files cannot serve (none yet, or one failed: a CPU unplugged
 * removes them), so that the caller reads by path; -EIO.
 */
static int read_cpuidle_kept(struct idle *idle, int cpu, uint64_t *sum)
{
	struct idle_state_fds *f;
	char buf[64];
	uint64_t us;
	ssize_t len;
	int i, ret = 0;

	pthread_rwlock_rdlock(&idle->fds_lock);
	f = idle->state_fds[cpu];
	*sum = 0;
	for (i = 0; f && i < f->count && ret == 0; i++) {
		len = pread(f->fd[i], buf, sizeof(buf) - 1, 0);
		if (len <= 0) {
			ret = 1;
			break;
		}
		buf[len] = '\0';
		ret = parse_residency(buf, &us);
		*sum += us;
	}
	pthread_rwlock_unlock(&idle->fds_lock);
	if (f && ret <= 0)
		return ret;
	/* Open them afresh for the next read; this one goes by path. */
	pthread_rwlock_wrlock(&idle->fds_lock);
	if (idle->state_fds[cpu] == f) {
		state_fds_close(idle, f);
		idle->state_fds[cpu] = state_fds_open(idle, cpu);
	}
	pthread_rwlock_unlock(&idle->fds_lock);
	return 1;
}

/* The sum of a CPU's idle state residencies, µs, as ns. */
static int read_cpuidle_one(struct idle *idle, int cpu, uint64_t *ns,
			    bool *found)
{
	char path[PATH_MAX], buf[64];
	uint64_t us, sum = 0;
	int state, ret;

	if (idle->keep_state_fds && cpu >= 0 && (size_t)cpu < idle->ncpus) {
		ret = read_cpuidle_kept(idle, cpu, &sum);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			*found = true;
			*ns = sum * 1000;
			return 0;
		}
		sum = 0;
	}
	for (state = 0; state < STATE_MAX; state++) {
		snprintf(path, sizeof(path),
			 "%s/devices/system/cpu/cpu%d/cpuidle/state%d/time",
			 idle->sys_root, cpu, state);
		ret = procfile_read(path, buf, sizeof(buf));
		if (ret == -ENOENT)
			break;
		if (procfile_no_fds(-ret))
			return ret; /* out of descriptors: not a broken source */
		if (ret < 0 || parse_residency(buf, &us) < 0)
			return -EIO;
		sum += us;
	}
	/* No state0: the CPU went offline, or has no driver now. */
	*found = state > 0;
	*ns = sum * 1000;
	return 0;
}

static int read_cpuidle(struct idle *idle, const int *cpus, size_t n,
			uint64_t *ns, bool *found)
{
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = read_cpuidle_one(idle, cpus[i], &ns[i], &found[i]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Keep each CPU's value from going below what was shown before. */
static void clamp_monotonic(struct idle *idle, const int *cpus, size_t n,
			    uint64_t *ns, const bool *found)
{
	size_t i, cpu;

	pthread_mutex_lock(&idle->lock);
	for (i = 0; i < n; i++) {
		cpu = (size_t)cpus[i];
		if (!found[i] || cpu >= idle->ncpus)
			continue;
		if (ns[i] < idle->last_ns[cpu])
			ns[i] = idle->last_ns[cpu];
		idle->last_ns[cpu] = ns[i];
	}
	pthread_mutex_unlock(&idle->lock);
}

int idle_read(struct idle *idle, const int *cpus, size_t n, uint64_t *ns,
	      bool *found)
{
	int ret;

	memset(found, 0, n * sizeof(*found));
	if (idle->cpuidle)
		ret = read_cpuidle(idle, cpus, n, ns, found);
	else
		ret = read_proc_stat(idle, cpus, n, ns, found);
	if (ret < 0)
		return ret;
	clamp_monotonic(idle, cpus, n, ns, found);
	return 0;
}
