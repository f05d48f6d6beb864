/*
 * unit-nspid: the NSpid and NStgid lines of status files, as kernels
 * print them and as they must not be taken.
 */
#include <errno.h>

#include "nspid.h"
#include "tap.h"

/* A status text of a task three namespaces deep (daemon, pod, inner). */
static const char deep[] = "Name:\tsleep\n"
			   "Tgid:\t4242\n"
			   "Pid:\t4243\n"
			   "NStgid:\t4242\t17\t1\n"
			   "NSpid:\t4243\t18\t2\n"
			   "Uid:\t0\t0\t0\t0\n";

static void test_kernels(void)
{
	pid_t n[NSPID_LEVELS_MAX];

	check_int(nspid_parse(deep, "NSpid:", n, NSPID_LEVELS_MAX), 3,
		  "NSpid of a task three levels deep: three numbers");
	check(n[0] == 4243 && n[1] == 18 && n[2] == 2,
	      "the daemon's number first, its own namespace's last");
	check_int(nspid_parse(deep, "NStgid:", n, NSPID_LEVELS_MAX), 3,
		  "NStgid: three numbers");
	check(n[0] == 4242 && n[1] == 17 && n[2] == 1,
	      "NStgid's numbers, the last the process's init");
	check_int(nspid_parse("Name:\tbash\nNSpid:\t1\n", "NSpid:", n, 4), 1,
		  "a task of the daemon's namespace: one number");
	check_int(n[0], 1, "that number");
	check_int(nspid_parse("NSpid:\t7\t1", "NSpid:", n, 4), 2,
		  "the last line, without a newline");
	check_int(nspid_parse("Name:\tx\nTgid:\t1\n", "NSpid:", n, 4), -ENOENT,
		  "no NSpid line (before Linux 4.1): ENOENT");
	check_int(nspid_parse("NStgid:\t5\t6\n", "NSpid:", n, 4), -ENOENT,
		  "NStgid is not NSpid");
	check_int(nspid_parse("NSpid: 4194304 1\n", "NSpid:", n, 4), 2,
		  "blanks as separators, the largest pid there is");
}

static void test_malformed(void)
{
	pid_t n[4];

	check_int(nspid_parse("NSpid:\n", "NSpid:", n, 4), -EIO,
		  "an empty line: EIO");
	check_int(nspid_parse("NSpid:\t12x\t3\n", "NSpid:", n, 4), -EIO,
		  "a number run into a letter: EIO");
	check_int(nspid_parse("NSpid:\t0\n", "NSpid:", n, 4), -EIO,
		  "pid 0: EIO");
	check_int(nspid_parse("NSpid:\t4194305\n", "NSpid:", n, 4), -EIO,
		  "above PID_MAX_LIMIT: EIO");
	check_int(nspid_parse("NSpid:\t99999999999999999999\n", "NSpid:", n, 4),
		  -EIO, "a number past 64 bits: EIO");
	check_int(nspid_parse("NSpid:\t-1\n", "NSpid:", n, 4), -EIO,
		  "a sign: EIO");
	check_int(nspid_parse("NSpid:\t1\t2\t3\t4\t5\n", "NSpid:", n, 4), -EIO,
		  "more levels than room: EIO, nothing written past it");
	check_int(nspid_parse("NSpid:\t1\t2\t3\t4\n", "NSpid:", n, 4), 4,
		  "exactly as many as room");
}

int main(void)
{
	test_kernels();
	test_malformed();
	return tap_done();
}
