/*
 * unit-history: the history of kernel/user splits (task.h) and the hash
 * table under it (hash.h), without /proc: no counter goes back however
 * many tasks are read, a sweep drops exactly the tasks gone, a later
 * task takes a number over and an earlier one is left alone, and
 * readers on several threads agree; and in a shared area, a second
 * mapping (a successor's) finds every entry whole and nothing that was
 * not published.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hash.h"
#include "tap.h"
#include "task.h"

/* The clamp alone: the shares, no start. */
static bool history_clamp(struct task_history *h, pid_t pid, pid_t tid,
			  uint64_t start_ticks, uint64_t *kernel_ns,
			  uint64_t *user_ns)
{
	return task_history_record(h, pid, tid, start_ticks, kernel_ns, user_ns,
				   NULL);
}

/* The entries @h holds now. */
static size_t history_count(struct task_history *h)
{
	size_t n;

	pthread_mutex_lock(&h->lock);
	n = h->table.count;
	pthread_mutex_unlock(&h->lock);
	return n;
}

/* A clamp, and the sweep it says is due, as the engine does. */
static void clamp(struct task_history *h, pid_t pid, pid_t tid,
		  uint64_t start_ticks, uint64_t *kernel_ns, uint64_t *user_ns)
{
	if (history_clamp(h, pid, tid, start_ticks, kernel_ns, user_ns))
		task_history_sweep(h);
}

/* More tasks than the old table's 4096 slots, several times over. */
#define TASKS 20000

/* The split of @cpu_ns with @kernel_pct percent in the kernel. */
static void split_pct(uint64_t cpu_ns, unsigned int kernel_pct,
		      uint64_t *kernel_ns, uint64_t *user_ns)
{
	task_split(cpu_ns, 100 - kernel_pct, kernel_pct, kernel_ns, user_ns);
}

/*
 * Every task read twice with the same runtime, its proportion moved
 * from 60 % kernel to 30 % (so the kernel share would drop), then again
 * to 90 % (so the user share would): the number of tasks that went
 * back, or had the wrong sum.
 */
static unsigned int read_all_twice(struct task_history *h, pid_t pid0)
{
	uint64_t k1, u1, k2, u2, k3, u3, cpu;
	unsigned int bad = 0;
	pid_t i;

	for (i = 0; i < TASKS; i++) {
		cpu = 1000000 + (uint64_t)i;
		split_pct(cpu, 60, &k1, &u1);
		clamp(h, pid0 + i / 8, pid0 + i, 7, &k1, &u1);
	}
	for (i = 0; i < TASKS; i++) {
		cpu = 1000000 + (uint64_t)i;
		split_pct(cpu, 60, &k1, &u1);
		split_pct(cpu, 30, &k2, &u2);
		clamp(h, pid0 + i / 8, pid0 + i, 7, &k2, &u2);
		split_pct(cpu, 90, &k3, &u3);
		clamp(h, pid0 + i / 8, pid0 + i, 7, &k3, &u3);
		if (k2 < k1 || u2 < u1 || k2 + u2 != cpu || k3 < k2 ||
		    u3 < u2 || k3 + u3 != cpu)
			bad++;
	}
	return bad;
}

static void test_many_tasks(void)
{
	struct task_history h;

	task_history_init(&h);
	check_int(read_all_twice(&h, 1000), 0,
		  "%d tasks, each clamped twice: none goes back", TASKS);
	check_u64(history_count(&h), TASKS,
		  "an entry per task, with no keep function");
	task_history_destroy(&h);
}

/* The tasks of the sweep test: even tids alive, tids % 3 == 0 kept. */
static unsigned int keep_calls;

static bool keep_some(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks)
{
	(void)ctx;
	(void)pid;
	(void)start_ticks;
	__atomic_add_fetch(&keep_calls, 1, __ATOMIC_RELAXED);
	return tid % 2 == 0 || tid % 3 == 0;
}

static void test_sweep(void)
{
	struct task_history h;
	uint64_t k, u, left = 0;
	unsigned int bad = 0;
	pid_t tid;

	task_history_init(&h);
	task_history_set_keep(&h, keep_some, NULL);
	/* Below the floor, nothing is swept on its own. */
	for (tid = 1; tid < TASK_HISTORY_SWEEP_MIN; tid++) {
		split_pct(1000, 60, &k, &u);
		clamp(&h, 1, tid, 5, &k, &u);
	}
	check_int(keep_calls, 0, "no sweep below %d entries",
		  TASK_HISTORY_SWEEP_MIN);
	for (tid = 1; tid < TASK_HISTORY_SWEEP_MIN; tid++)
		left += tid % 2 == 0 || tid % 3 == 0;
	check_u64(task_history_sweep(&h), TASK_HISTORY_SWEEP_MIN - 1 - left,
		  "a sweep drops the tasks neither alive nor kept");
	check_u64(history_count(&h), left, "and keeps the others");
	/* A kept one is still clamped; a dropped one starts afresh. */
	for (tid = 1; tid < TASK_HISTORY_SWEEP_MIN; tid++) {
		split_pct(1000, 30, &k, &u);
		clamp(&h, 1, tid, 5, &k, &u);
		if ((tid % 2 == 0 || tid % 3 == 0) ? k != 600 : k != 300)
			bad++;
	}
	check_int(bad, 0, "kept tasks stay clamped, dropped ones are new");
	task_history_destroy(&h);
}

/*
 * A clamp never calls keep itself (its caller may hold a lock keep
 * takes, as engine_exited_times() holds the exited table's): it says a
 * sweep is due, from the floor on, until one is done.
 */
static void test_due(void)
{
	struct task_history h;
	unsigned int due = 0, first_due = 0;
	uint64_t k, u;
	pid_t tid;

	keep_calls = 0;
	task_history_init(&h);
	task_history_set_keep(&h, keep_some, NULL);
	for (tid = 1; tid <= TASK_HISTORY_SWEEP_MIN + 9; tid++) {
		split_pct(1000, 60, &k, &u);
		if (history_clamp(&h, 2, tid, 5, &k, &u) && !due++)
			first_due = (unsigned int)tid;
	}
	check_int(keep_calls, 0, "a clamp never calls keep");
	check_int(first_due, TASK_HISTORY_SWEEP_MIN,
		  "a sweep is due at the floor");
	check_int(due, 10, "and stays due until one is done");
	task_history_sweep(&h);
	split_pct(1000, 60, &k, &u);
	check(!history_clamp(&h, 2, 100000, 5, &k, &u),
	      "not due after a sweep");
	task_history_destroy(&h);
}

/* Sweeps start by themselves, and the table stays bounded. */
static bool keep_none_below(void *ctx, pid_t pid, pid_t tid,
			    uint64_t start_ticks)
{
	(void)pid;
	(void)start_ticks;
	return tid >= *(pid_t *)ctx;
}

static void test_bounded(void)
{
	struct task_history h;
	pid_t alive_from = 0, tid;
	uint64_t k, u;
	size_t most = 0;

	task_history_init(&h);
	task_history_set_keep(&h, keep_none_below, &alive_from);
	/* 100,000 short-lived tasks, a thousand alive at any time. */
	for (tid = 1; tid <= 100000; tid++) {
		alive_from = tid > 1000 ? tid - 1000 : 0;
		split_pct(1000, 60, &k, &u);
		clamp(&h, 1, tid, 5, &k, &u);
		if (history_count(&h) > most)
			most = history_count(&h);
	}
	check(most <= TASK_HISTORY_SWEEP_MIN,
	      "100000 tasks, 1000 alive: at most %d entries (%zu)",
	      TASK_HISTORY_SWEEP_MIN, most);
	task_history_destroy(&h);
}

static void test_numbers_reused(void)
{
	struct task_history h;
	uint64_t k, u;

	task_history_init(&h);
	split_pct(1000, 60, &k, &u);
	clamp(&h, 9, 9, 100, &k, &u);
	/* A later task with the number: its own values, not clamped. */
	split_pct(500, 20, &k, &u);
	clamp(&h, 9, 9, 200, &k, &u);
	check(k == 100 && u == 400, "a later task takes the number over");
	/* The earlier one, read late: neither clamped nor recorded. */
	split_pct(1000, 10, &k, &u);
	clamp(&h, 9, 9, 100, &k, &u);
	check(k == 100 && u == 900, "an earlier task is not clamped");
	split_pct(500, 0, &k, &u);
	clamp(&h, 9, 9, 200, &k, &u);
	check(k == 100 && u == 400, "nor does it change the later one's");
	/* The process and its main thread are two entries. */
	split_pct(1000, 50, &k, &u);
	clamp(&h, 9, 0, 200, &k, &u);
	check(k == 500 && u == 500, "the process is not its main thread");
	task_history_destroy(&h);
}

struct reader {
	struct task_history *h;
	pid_t pid0;
	unsigned int bad;
};

static void *reader_run(void *arg)
{
	struct reader *r = arg;

	r->bad = read_all_twice(r->h, r->pid0);
	return NULL;
}

static bool keep_all(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks)
{
	(void)ctx;
	(void)pid;
	(void)tid;
	(void)start_ticks;
	return true;
}

static void test_threads(void)
{
	struct reader r[4];
	struct task_history h;
	pthread_t th[4];
	unsigned int bad = 0;
	int i;

	task_history_init(&h);
	task_history_set_keep(&h, keep_all, NULL);
	for (i = 0; i < 4; i++) {
		r[i] = (struct reader){ &h, 100000 * (i + 1), 0 };
		pthread_create(&th[i], NULL, reader_run, &r[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		bad += r[i].bad;
	}
	check_int(bad, 0, "4 threads of %d tasks each, sweeping: none back",
		  TASKS);
	check_u64(history_count(&h), 4 * TASKS, "every task kept");
	task_history_destroy(&h);
}

struct item {
	struct hash_node node;
	uint64_t key;
};

static bool drop_odd(void *ctx, struct hash_node *n)
{
	struct item *it = container_of(n, struct item, node);

	(void)ctx;
	return it->key % 2;
}

static void test_hash(void)
{
	static struct item items[1000];
	struct hash_table t;
	struct hash_node *n;
	unsigned int found = 0, i;

	hash_init(&t);
	check(hash_first(&t, 1) == NULL, "an empty table finds nothing");
	for (i = 0; i < 1000; i++) {
		items[i].key = i;
		hash_add(&t, &items[i].node, hash_mix(i % 500, 0));
	}
	check_u64(t.count, 1000, "1000 nodes added");
	for (n = hash_first(&t, hash_mix(7, 0)); n; n = hash_next(n))
		found |= 1u
			 << (container_of(n, struct item, node)->key == 7 ? 0 :
									    1);
	check_int(found, 3, "both nodes of one hash found");
	check_u64(hash_filter(&t, drop_odd, NULL), 500, "filter drops half");
	hash_del(&t, &items[8].node);
	check_u64(t.count, 499, "and a node deleted");
	for (n = hash_first(&t, hash_mix(8, 0)); n; n = hash_next(n))
		check(container_of(n, struct item, node)->key != 8,
		      "a deleted node is not found");
	hash_destroy(&t);
}

/*
 * A task's start to the ns: the first recorded stays; a later task that
 * takes the number starts with none, and an earlier one is refused; the
 * shares and the start live in one entry, and each keeps the other.
 */
static void test_born(void)
{
	struct task_history h;
	uint64_t ns = 0, k = 5, u = 5;

	task_history_init(&h);
	check(!task_history_born(&h, 10, 11, 100, &ns),
	      "born: none recorded, none known");
	task_history_set_born(&h, 10, 11, 100, 1000000123);
	task_history_set_born(&h, 10, 11, 100, 1000000999);
	check(task_history_born(&h, 10, 11, 100, &ns) && ns == 1000000123,
	      "born: the first recorded stays");
	check(!task_history_born(&h, 10, 11, 99, &ns),
	      "born: not another start's");
	clamp(&h, 10, 11, 100, &k, &u);
	check(task_history_born(&h, 10, 11, 100, &ns) && ns == 1000000123,
	      "born: kept through a clamp of its shares");
	task_history_set_born(&h, 10, 11, 90, 900000000);
	check(task_history_born(&h, 10, 11, 100, &ns) && ns == 1000000123,
	      "born: an earlier task of the number is refused");
	task_history_set_born(&h, 10, 11, 200, TASK_BORN_NONE);
	check(task_history_born(&h, 10, 11, 200, &ns) && ns == TASK_BORN_NONE &&
		      !task_history_born(&h, 10, 11, 100, &ns),
	      "born: a later task takes the number, none of the first's");
	clamp(&h, 10, 12, 300, &k, &u);
	check(!task_history_born(&h, 10, 12, 300, &ns),
	      "born: a clamp records shares, no start");
	task_history_destroy(&h);
}

/* ---- the shared area, as a server and its successor see it --------- */

/* A memfd of @bytes, and two mappings of it (as two processes). */
static int area_new(size_t bytes, void **first, void **second)
{
	int fd = memfd_create("unit-history", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0)
		return -1;
	*first = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	*second = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*first == MAP_FAILED || *second == MAP_FAILED)
		return -1;
	return fd;
}

#define SHARED_TASKS 5000

/* Tasks of SHARED_TASKS whose tid % 5 == 0 are gone at the sweep. */
static bool keep_not_fifth(void *ctx, pid_t pid, pid_t tid,
			   uint64_t start_ticks)
{
	(void)ctx;
	(void)pid;
	(void)start_ticks;
	return tid % 5 != 0;
}

/*
 * The first server: every task at 60 % kernel, a start to the ns for
 * the even ones, tids % 7 == 0 taken over by a later task (start 9),
 * those % 5 == 0 swept (free entries left among the others).
 */
static void first_server(struct task_history *h)
{
	uint64_t k, u;
	pid_t tid;

	task_history_set_keep(h, keep_not_fifth, NULL);
	for (tid = 1; tid <= SHARED_TASKS; tid++) {
		split_pct(1000000 + (uint64_t)tid, 60, &k, &u);
		task_history_record(h, 77, tid, 5, &k, &u, NULL);
		if (tid % 2 == 0)
			task_history_set_born(h, 77, tid, 5,
					      1000 + (uint64_t)tid);
		if (tid % 7 == 0) {
			split_pct(2000, 50, &k, &u);
			history_clamp(h, 77, tid, 9, &k, &u);
		}
	}
	task_history_sweep(h);
}

/* What the first server left, read by a successor: faults counted. */
static unsigned int successor_reads(struct task_history *h)
{
	uint64_t k, u, k1, u1, start, born;
	unsigned int bad = 0;
	bool gone;
	pid_t tid;

	for (tid = 1; tid <= SHARED_TASKS; tid++) {
		gone = tid % 5 == 0;
		if (task_history_start(h, 77, tid, &start) == gone ||
		    (!gone && start != (tid % 7 ? 5u : 9u))) {
			bad++;
			continue;
		}
		if (gone)
			continue;
		born = 0;
		if (task_history_born(h, 77, tid, start, &born) !=
			    (tid % 2 == 0 && tid % 7 != 0) ||
		    (born && born != 1000 + (uint64_t)tid))
			bad++;
		/* The proportion moves to 30 %: the kernel share holds. */
		if (tid % 7) {
			split_pct(1000000 + (uint64_t)tid, 60, &k1, &u1);
			split_pct(1000000 + (uint64_t)tid, 30, &k, &u);
		} else {
			split_pct(2000, 50, &k1, &u1);
			split_pct(2000, 30, &k, &u);
		}
		history_clamp(h, 77, tid, start, &k, &u);
		if (k != k1 || u != u1)
			bad++;
	}
	return bad;
}

static void test_shared_successor(void)
{
	struct task_history first, next;
	void *a1, *a2;
	int fd = area_new(TASK_HISTORY_BYTES, &a1, &a2);
	size_t left = SHARED_TASKS - SHARED_TASKS / 5;

	if (fd < 0) {
		tap_skip("a successor finds every entry", "no memfd");
		return;
	}
	task_history_init(&first);
	check_int(task_history_set_area(&first, a1, TASK_HISTORY_BYTES), 0,
		  "shared: a new area taken");
	first_server(&first);
	check_u64(history_count(&first), left, "shared: %zu entries", left);
	/* The first server dies: its index goes, the area stays. */
	task_history_destroy(&first);
	task_history_init(&next);
	check_int(task_history_set_area(&next, a2, TASK_HISTORY_BYTES), 0,
		  "shared: a successor maps it elsewhere");
	check_u64(history_count(&next), left,
		  "shared: the successor finds every entry");
	check_int(successor_reads(&next), 0,
		  "shared: each with its start, its start to the ns and its "
		  "split, clamped as before");
	/* Entries freed by the sweep are used again, none past them. */
	{
		const struct history_area *h = a2;
		uint64_t used = h->used, k = 1, u = 1;
		pid_t tid;

		for (tid = 1; tid <= SHARED_TASKS / 5; tid++)
			history_clamp(&next, 78, tid, 5, &k, &u);
		check_u64(h->used, used,
			  "shared: new tasks take the swept entries first");
	}
	task_history_destroy(&next);
	munmap(a1, TASK_HISTORY_BYTES);
	munmap(a2, TASK_HISTORY_BYTES);
	close(fd);
}

/*
 * What a death mid-write leaves: an entry written and not published
 * (past used or under it), a take-over whose key was cleared, a clamp
 * with one share stored, two published entries of one number.
 */
static void test_shared_torn(void)
{
	struct task_history h;
	struct history_area *a;
	struct history_slot *s;
	void *a1, *a2;
	int fd = area_new(TASK_HISTORY_BYTES, &a1, &a2);
	uint64_t k, u, start;

	if (fd < 0) {
		tap_skip("torn writes", "no memfd");
		return;
	}
	a = a1;
	task_history_init(&h);
	task_history_set_area(&h, a1, TASK_HISTORY_BYTES);
	k = 600, u = 400;
	history_clamp(&h, 5, 5, 1, &k, &u); /* slot 0 */
	history_clamp(&h, 6, 6, 1, &k, &u); /* slot 1 */
	k = 600, u = 400;
	history_clamp(&h, 7, 7, 1, &k, &u); /* slot 2 */
	task_history_destroy(&h);
	/* An entry for 8 whole but for its key, counted in use. */
	s = &a->slot[a->used];
	*s = (struct history_slot){ 0, 1, 900, 100, 0 };
	a->used++;
	/* An entry past used, published by a layout nobody wrote. */
	a->slot[a->used + 1] =
		(struct history_slot){ TASK_HISTORY_LIVE | 9ull << 32 | 9, 1,
				       900, 100, 0 };
	/* 6's take-over by a task started at 2: key cleared, then died. */
	a->slot[1].key = 0;
	a->slot[1].start_ticks = 2;
	/* 7's clamp to 650/450: the kernel share stored, not the user's. */
	a->slot[2].kernel_ns = 650;
	/* Two entries of 5 (a death between two writes): the later wins. */
	a->slot[a->used] =
		(struct history_slot){ TASK_HISTORY_LIVE | 5ull << 32 | 5, 3,
				       10, 20, 0 };
	a->used++;

	task_history_init(&h);
	task_history_set_area(&h, a2, TASK_HISTORY_BYTES);
	check_u64(history_count(&h), 2,
		  "torn: only whole, published entries are found");
	check(!task_history_start(&h, 8, 8, &start),
	      "torn: an entry not published is not found");
	check(!task_history_start(&h, 9, 9, &start),
	      "torn: nothing past the entries in use is read");
	check(!task_history_start(&h, 6, 6, &start),
	      "torn: a take-over cut short leaves no entry");
	k = 500, u = 500;
	history_clamp(&h, 7, 7, 1, &k, &u);
	check(k == 650 && u == 400,
	      "torn: a clamp cut short clamps to both shares (%" PRIu64
	      "/%" PRIu64 ")",
	      k, u);
	check(task_history_start(&h, 5, 5, &start) && start == 3,
	      "torn: of two entries of a number, the later task's");
	k = 1, u = 1;
	history_clamp(&h, 10, 10, 1, &k, &u);
	history_clamp(&h, 11, 11, 1, &k, &u);
	check_u64(a->used, 5, "torn: the free entries are used again");
	task_history_destroy(&h);
	munmap(a1, TASK_HISTORY_BYTES);
	munmap(a2, TASK_HISTORY_BYTES);
	close(fd);
}

/* An area of another layout is emptied; one too small is refused. */
static void test_shared_layout(void)
{
	struct task_history h;
	struct history_area *a;
	void *a1, *a2;
	int fd = area_new(TASK_HISTORY_BYTES, &a1, &a2);
	uint64_t k = 600, u = 400, start;

	if (fd < 0) {
		tap_skip("another layout", "no memfd");
		return;
	}
	a = a1;
	task_history_init(&h);
	task_history_set_area(&h, a1, TASK_HISTORY_BYTES);
	history_clamp(&h, 5, 5, 1, &k, &u);
	task_history_destroy(&h);
	a->slot_bytes = 48; /* another binary's layout */
	task_history_init(&h);
	task_history_set_area(&h, a2, TASK_HISTORY_BYTES);
	check(!task_history_start(&h, 5, 5, &start) && a->used == 0 &&
		      a->slot[0].key == 0 && a->slot_bytes == 40,
	      "layout: an area of another layout is emptied");
	check_int(task_history_set_area(&h, a2, 64), -EINVAL,
		  "layout: an area too small for one entry is refused");
	k = 600, u = 400;
	history_clamp(&h, 5, 5, 1, &k, &u);
	check_u64(history_count(&h), 0, "layout: and nothing recorded");
	task_history_destroy(&h);
	munmap(a1, TASK_HISTORY_BYTES);
	munmap(a2, TASK_HISTORY_BYTES);
	close(fd);
}

static bool keep_even(void *ctx, pid_t pid, pid_t tid, uint64_t start_ticks)
{
	(void)ctx;
	(void)pid;
	(void)start_ticks;
	return tid % 2 == 0;
}

/*
 * A full area: a task not recorded is not clamped, and no error; the
 * misses count toward a sweep, which makes room.
 */
static void test_shared_full(void)
{
	size_t bytes =
		sizeof(struct history_area) + 8 * sizeof(struct history_slot);
	struct task_history h;
	uint64_t k, u, start;
	unsigned int due = 0;
	void *area = aligned_alloc(64, bytes);
	pid_t tid;

	memset(area, 0, bytes);
	task_history_init(&h);
	task_history_set_keep(&h, keep_even, NULL);
	task_history_set_area(&h, area, bytes);
	for (tid = 1; tid <= 9; tid++) {
		k = 600, u = 400;
		history_clamp(&h, 1, tid, 1, &k, &u);
	}
	check(history_count(&h) == 8 && !task_history_start(&h, 1, 9, &start),
	      "full: 8 entries, the 9th task not recorded");
	k = 300, u = 700;
	history_clamp(&h, 1, 9, 1, &k, &u);
	check(k == 300 && u == 700, "full: nor clamped");
	for (tid = 10; tid < 10 + TASK_HISTORY_SWEEP_MIN; tid++) {
		k = 1, u = 1;
		due += history_clamp(&h, 1, tid, 1, &k, &u);
	}
	check(due > 0, "full: the misses make a sweep due");
	check_u64(task_history_sweep(&h), 4, "full: a sweep drops the gone");
	k = 600, u = 400;
	history_clamp(&h, 1, 9, 1, &k, &u);
	check(task_history_start(&h, 1, 9, &start),
	      "full: and the next task is recorded");
	task_history_destroy(&h);
	free(area);
}

int main(void)
{
	test_hash();
	test_many_tasks();
	test_sweep();
	test_due();
	test_bounded();
	test_numbers_reused();
	test_threads();
	test_born();
	test_shared_successor();
	test_shared_torn();
	test_shared_layout();
	test_shared_full();
	return tap_done();
}
