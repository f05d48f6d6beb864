/*
 * unit-exited: the table of exited tasks, without a kernel: names in
 * several namespaces, replacement, expiry, the bound, and listings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exited.h"
#include "tap.h"

#define OWN 4026531836ULL /* the daemon's namespace, as nsfs numbers it */
#define BOX 4026532500ULL /* a container's */
#define SEC 1000000000ULL

static struct exited_task task(unsigned int flags, pid_t tgid, pid_t tid,
			       uint64_t cpu)
{
	struct exited_task t;

	memset(&t, 0, sizeof(t));
	t.flags = flags;
	t.cpu_ns = cpu;
	t.uid = 1000;
	t.nnames = 1;
	t.name[0].ns = OWN;
	t.name[0].tgid = tgid;
	t.name[0].tid = tid;
	return t;
}

static int count_fn(void *ctx, const struct exited_task *t,
		    const struct exited_name *name)
{
	long *sum = ctx;

	(void)t;
	*sum += name->tid ? name->tid : name->tgid;
	return 0;
}

static long sum_of(struct exited *x, uint64_t ns, pid_t tgid, uint64_t now)
{
	long sum = 0;

	exited_for_each(x, ns, tgid, now, count_fn, &sum);
	return sum;
}

static void test_find(void)
{
	struct exited *x;
	struct exited_task t, got;
	struct exited_counts c;

	check_int(exited_new(0, 10, &x), -EINVAL, "keep 0 makes no table");
	if (exited_new(60, 10, &x) < 0) {
		check(false, "a table of 10");
		return;
	}
	/* A process of one thread: one record, found both ways. */
	exited_add(x, &(struct exited_task){ 0 }, SEC); /* no name: ignored */
	t = task(EXITED_THREAD | EXITED_PROCESS, 100, 100, 7);
	exited_add(x, &t, SEC);
	check(exited_find(x, OWN, 100, 0, SEC, &got) == 0 && got.cpu_ns == 7,
	      "a process of one thread is found as the process");
	check(exited_find(x, OWN, 100, 100, SEC, &got) == 0 && got.cpu_ns == 7,
	      "and as its thread");
	check_int(exited_find(x, OWN, 101, 0, SEC, &got), -ENOENT,
		  "another number is not");
	check_int(exited_find(x, BOX, 100, 0, SEC, &got), -ENOENT,
		  "nor the same number in another namespace");

	/* A thread of a live process, and that process's record later. */
	t = task(EXITED_THREAD, 200, 201, 5);
	exited_add(x, &t, SEC);
	check_int(exited_find(x, OWN, 200, 0, SEC, &got), -ENOENT,
		  "a thread's record is not its process's");
	check(exited_find(x, OWN, 200, 201, SEC, &got) == 0 && got.cpu_ns == 5,
	      "a thread's record is found under its process");
	check_int(exited_find(x, OWN, 201, 201, SEC, &got), -ENOENT,
		  "and under no other");
	t = task(EXITED_PROCESS, 200, 0, 50);
	exited_add(x, &t, SEC);
	check(exited_find(x, OWN, 200, 0, SEC, &got) == 0 && got.cpu_ns == 50,
	      "the process record");
	check_int(sum_of(x, OWN, 200, SEC), 201,
		  "its threads: the thread records alone");
	check_int(sum_of(x, OWN, 0, SEC), 300, "the processes: 100 and 200");

	/* The same task again replaces it. */
	t = task(EXITED_THREAD, 200, 201, 6);
	exited_add(x, &t, SEC);
	check(exited_find(x, OWN, 200, 201, SEC, &got) == 0 && got.cpu_ns == 6,
	      "a record of the same task replaces the old one");
	exited_counts(x, SEC, &c);
	check(c.retained == 3 && c.dropped == 0,
	      "three kept, none dropped (got %llu, %llu)", c.retained,
	      c.dropped);

	/* Expiry: 60 s after each came. */
	t = task(EXITED_THREAD | EXITED_PROCESS, 300, 300, 1);
	exited_add(x, &t, 30 * SEC);
	check_int(exited_find(x, OWN, 100, 0, 61 * SEC - 1, &got), 0,
		  "kept until keep seconds have passed");
	check_int(exited_find(x, OWN, 100, 0, 61 * SEC, &got), -ENOENT,
		  "gone after keep seconds");
	check_int(exited_find(x, OWN, 300, 0, 61 * SEC, &got), 0,
		  "a later one stays");
	exited_counts(x, 61 * SEC, &c);
	check(c.retained == 1 && c.dropped == 0,
	      "expired records are not counted as dropped");
	exited_counts(x, 200 * SEC, &c);
	check_int((long)c.retained, 0, "all gone in the end");
	exited_free(x);
}

struct name_check {
	uint64_t ns;
	pid_t tgid, tid;
	int seen;
};

static int name_fn(void *ctx, const struct exited_task *t,
		   const struct exited_name *name)
{
	struct name_check *nc = ctx;

	(void)t;
	if (name->ns == nc->ns && name->tgid == nc->tgid &&
	    name->tid == nc->tid)
		nc->seen++;
	return 0;
}

static void test_names(void)
{
	struct exited_name names[EXITED_NAMES] = {
		{ OWN, 5000, 5001 },
		{ BOX, 7, 8 },
	};
	struct exited_birth b = { 42,
				  2,
				  { { OWN, 5000, 5001 }, { BOX, 7, 8 } } };
	struct exited_birth got;
	struct name_check nc = { BOX, 7, 8, 0 };
	struct exited_task t, rec;
	struct exited *x;

	if (exited_new(60, 100, &x) < 0) {
		check(false, "a table of 100");
		return;
	}
	exited_learn(x, 5001, &b);
	check_int(exited_learned(x, 4999, &got), -ENOENT,
		  "nothing learned of 4999");
	check(exited_learned(x, 5001, &got) == 0 && got.fork_ns == 42 &&
		      got.nnames == 2 && got.name[1].ns == BOX &&
		      got.name[1].tgid == 7 && got.name[1].tid == 8,
	      "what was learned of 5001");
	check_int(exited_learned(x, 5001, &got), -ENOENT, "is given once");
	exited_learn(x, 5001 + 16384, &b);
	exited_learn(x, 5001, &b);
	check_int(exited_learned(x, 5001 + 16384, &got), -ENOENT,
		  "a slot holds the thread learned last");
	b.nnames = 0;
	exited_learn(x, 6000, &b);
	check_int(exited_learned(x, 6000, &got), -ENOENT,
		  "a birth without a name is not kept");

	t = task(EXITED_THREAD, 5000, 5001, 9);
	t.nnames = 2;
	t.name[1] = names[1];
	exited_add(x, &t, SEC);
	check(exited_find(x, BOX, 7, 8, SEC, &rec) == 0 && rec.cpu_ns == 9,
	      "found by the container's numbers");
	check(exited_find(x, OWN, 5000, 5001, SEC, &rec) == 0,
	      "and by the daemon's");
	check_int(exited_find(x, BOX, 5000, 5001, SEC, &rec), -ENOENT,
		  "but not by the daemon's numbers in the container");
	exited_for_each(x, BOX, 7, SEC, name_fn, &nc);
	check_int(nc.seen, 1, "listed under the container's numbers");
	exited_free(x);
}

/*
 * A name in a container that a later exit had too (its number taken,
 * or its namespace's inode number given again): the later one's. The
 * earlier keeps its other names.
 */
static void test_name_taken(void)
{
	struct exited_task a =
		task(EXITED_THREAD | EXITED_PROCESS, 1000, 1000, 1);
	struct exited_task b =
		task(EXITED_THREAD | EXITED_PROCESS, 2000, 2000, 2);
	struct exited_task got;
	long sum;
	struct exited *x;

	if (exited_new(60, 100, &x) < 0) {
		check(false, "a table of 100");
		return;
	}
	a.nnames = b.nnames = 2;
	a.name[1] = b.name[1] = (struct exited_name){ BOX, 2, 2 };
	exited_add(x, &a, SEC);
	exited_add(x, &b, 2 * SEC);
	check(exited_find(x, BOX, 2, 0, 2 * SEC, &got) == 0 && got.cpu_ns == 2,
	      "a container's name taken: the later exit's");
	check(exited_find(x, BOX, 2, 2, 2 * SEC, &got) == 0 && got.cpu_ns == 2,
	      "and its thread's");
	check(exited_find(x, OWN, 1000, 0, 2 * SEC, &got) == 0 &&
		      got.cpu_ns == 1,
	      "the earlier still kept under the daemon's numbers");
	sum = 0;
	exited_for_each(x, BOX, 0, 2 * SEC, count_fn, &sum);
	check(sum == 2, "the container lists the name once");
	exited_free(x);
}

static void test_bound(void)
{
	struct exited_counts c;
	struct exited_task t, got;
	struct exited *x;
	pid_t p;

	if (exited_new(60, 1000, &x) < 0) {
		check(false, "a table of 1000");
		return;
	}
	for (p = 1; p <= 20000; p++) {
		t = task(EXITED_THREAD | EXITED_PROCESS, p, p, (uint64_t)p);
		exited_add(x, &t, SEC + (uint64_t)p);
	}
	exited_counts(x, 2 * SEC, &c);
	check(c.retained == 1000 && c.dropped == 19000,
	      "20,000 into 1,000: the last 1,000 kept, 19,000 dropped "
	      "(got %llu, %llu)",
	      c.retained, c.dropped);
	check_int(exited_find(x, OWN, 19000, 0, 2 * SEC, &got), -ENOENT,
		  "the 19,000th is gone");
	check_int(exited_find(x, OWN, 19001, 0, 2 * SEC, &got), 0,
		  "the 19,001st is kept");
	check_int(exited_find(x, OWN, 20000, 20000, 2 * SEC, &got), 0,
		  "the last is kept");
	check_int(sum_of(x, OWN, 0, 2 * SEC), (19001L + 20000L) * 1000L / 2,
		  "a listing has those 1,000");
	/* A replacement takes a position of its own in a full ring. */
	t = task(EXITED_THREAD | EXITED_PROCESS, 20000, 20000, 1);
	exited_add(x, &t, 2 * SEC);
	exited_counts(x, 2 * SEC, &c);
	check(c.retained == 999 && c.dropped == 19001,
	      "a replacement in a full table drops the oldest (got %llu, "
	      "%llu)",
	      c.retained, c.dropped);
	exited_free(x);
}

/*
 * One process churning 10,000 threads, each record named in the
 * daemon's namespace and a container's, among other processes: every
 * thread is found under both names, the process too, a listing of its
 * threads has them all, and a lookup compares a few names, not the
 * process's 10,000 (the table's count of compared names, steps).
 */
#define CHURN 10000

static void test_churn(void)
{
	struct exited_counts c0, c1;
	struct exited_task t, got;
	struct exited *x;
	unsigned long long steps;
	long sum = 0, box_sum = 0;
	int found = 0, found_box = 0;
	pid_t i;

	if (exited_new(60, 65536, &x) < 0) {
		check(false, "a table of 65,536");
		return;
	}
	for (i = 1; i <= CHURN; i++) {
		t = task(EXITED_THREAD, 3000, 3000 + i, (uint64_t)i);
		t.nnames = 2;
		t.name[1] = (struct exited_name){ BOX, 1, 1 + i };
		exited_add(x, &t, SEC);
		sum += 3000 + i;
		box_sum += 1 + i;
		/* Others' processes of one thread, in between. */
		t = task(EXITED_THREAD | EXITED_PROCESS, 20000 + i, 20000 + i,
			 1);
		exited_add(x, &t, SEC);
	}
	t = task(EXITED_PROCESS, 3000, 0, 99);
	t.nnames = 2;
	t.name[1] = (struct exited_name){ BOX, 1, 0 };
	exited_add(x, &t, SEC);

	exited_counts(x, SEC, &c0);
	for (i = 1; i <= CHURN; i++) {
		found += exited_find(x, OWN, 3000, 3000 + i, SEC, &got) == 0 &&
			 got.cpu_ns == (uint64_t)i;
		found_box += exited_find(x, BOX, 1, 1 + i, SEC, &got) == 0 &&
			     got.cpu_ns == (uint64_t)i;
	}
	exited_counts(x, SEC, &c1);
	steps = c1.steps - c0.steps;
	check_int(found, CHURN, "each of 10,000 threads of one process found");
	check_int(found_box, CHURN, "and under the container's numbers");
	check(steps <= 4ULL * 2 * CHURN,
	      "20,000 lookups compare at most 4 names each (%llu in all, "
	      "%.1f each)",
	      steps, (double)steps / (2 * CHURN));
	check(exited_find(x, OWN, 3000, 0, SEC, &got) == 0 && got.cpu_ns == 99,
	      "the process itself");
	check(exited_find(x, BOX, 1, 0, SEC, &got) == 0 && got.cpu_ns == 99,
	      "and as the container numbers it");
	check_int(exited_find(x, OWN, 3000, 3000 + CHURN + 1, SEC, &got),
		  -ENOENT, "a thread it never had is not found");
	check(exited_find(x, OWN, 20005, 20005, SEC, &got) == 0,
	      "a process of one thread, as its thread, among them");
	exited_counts(x, SEC, &c0);
	check_int(exited_find(x, OWN, 3000, 3000 + CHURN + 1, SEC, &got),
		  -ENOENT, "a miss");
	exited_counts(x, SEC, &c1);
	check(c1.steps - c0.steps <= 8, "compares a few names too (%llu)",
	      c1.steps - c0.steps);
	check_int(sum_of(x, OWN, 3000, SEC), sum,
		  "a listing of its threads has them all");
	check_int(sum_of(x, BOX, 1, SEC), box_sum,
		  "under the container's numbers too");

	/* Replaced: a thread again keeps one record. */
	t = task(EXITED_THREAD, 3000, 3005, 7);
	t.nnames = 2;
	t.name[1] = (struct exited_name){ BOX, 1, 6 };
	exited_add(x, &t, SEC);
	check(exited_find(x, BOX, 1, 6, SEC, &got) == 0 && got.cpu_ns == 7,
	      "a thread's record replaced among 10,000");
	check_int(sum_of(x, OWN, 3000, SEC), sum, "listed once");
	exited_counts(x, SEC, &c1);
	check(c1.retained == 2 * CHURN + 1 && c1.dropped == 0,
	      "20,001 kept, none dropped (got %llu, %llu)", c1.retained,
	      c1.dropped);
	exited_free(x);
}

int main(void)
{
	test_find();
	test_names();
	test_name_taken();
	test_bound();
	test_churn();
	return tap_done();
}
