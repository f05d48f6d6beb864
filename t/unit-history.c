/*
 * unit-history: the history of kernel/user splits (task.h) and the hash
 * table under it (hash.h), without /proc: no counter goes back however
 * many tasks are read, a sweep drops exactly the tasks gone, a later
 * task takes a number over and an earlier one is left alone, and
 * readers on several threads agree.
 */
#include <pthread.h>
#include <stdlib.h>

#include "hash.h"
#include "tap.h"
#include "task.h"

/* A clamp, and the sweep it says is due, as the engine does. */
static void clamp(struct task_history *h, pid_t pid, pid_t tid,
		  uint64_t start_ticks, uint64_t *kernel_ns, uint64_t *user_ns)
{
	if (task_history_clamp(h, pid, tid, start_ticks, kernel_ns, user_ns))
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
	check_u64(task_history_count(&h), TASKS,
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
	check_u64(task_history_count(&h), left, "and keeps the others");
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
		if (task_history_clamp(&h, 2, tid, 5, &k, &u) && !due++)
			first_due = (unsigned int)tid;
	}
	check_int(keep_calls, 0, "a clamp never calls keep");
	check_int(first_due, TASK_HISTORY_SWEEP_MIN,
		  "a sweep is due at the floor");
	check_int(due, 10, "and stays due until one is done");
	task_history_sweep(&h);
	split_pct(1000, 60, &k, &u);
	check(!task_history_clamp(&h, 2, 100000, 5, &k, &u),
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
		if (task_history_count(&h) > most)
			most = task_history_count(&h);
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
	check_u64(task_history_count(&h), 4 * TASKS, "every task kept");
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
	return tap_done();
}
