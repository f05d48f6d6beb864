/*
 * cycles.c: what a Windows program asks of the timing APIs, built on
 * Linux against libtimingfs. Only the include differs from the Windows
 * source (<windows.h> there):
 *
 *   cc cycles.c $(pkg-config --cflags --libs timingfs)
 *
 * It prints the calling thread's and process's cycles and times, and the
 * idle cycles of each processor of group 0, one "key value" line each,
 * the keys those of the mount's files (thread_cycles, process_user_time,
 * idle_cpu0, ...). Exit status 1, with GetLastError(), on a failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include <timingfs/windows.h>

static ULONG64 ft64(const FILETIME *ft)
{
	return (ULONG64)ft->dwHighDateTime << 32 | ft->dwLowDateTime;
}

static int failed(const char *what)
{
	fprintf(stderr, "cycles: %s failed: error %lu\n", what,
		(unsigned long)GetLastError());
	return 1;
}

static void print_times(const char *who, const FILETIME *creation,
			const FILETIME *exit_time, const FILETIME *kernel,
			const FILETIME *user)
{
	printf("%s_kernel_time %llu\n", who, ft64(kernel));
	printf("%s_user_time %llu\n", who, ft64(user));
	printf("%s_creation_time %llu\n", who, ft64(creation));
	printf("%s_exit_time %llu\n", who, ft64(exit_time));
}

int main(void)
{
	FILETIME creation, exit_time, kernel, user;
	ULONG64 cycles, *idle;
	ULONG len = 0, i;

	if (!QueryThreadCycleTime(GetCurrentThread(), &cycles))
		return failed("QueryThreadCycleTime");
	printf("thread_cycles %llu\n", cycles);
	if (!GetThreadTimes(GetCurrentThread(), &creation, &exit_time, &kernel,
			    &user))
		return failed("GetThreadTimes");
	print_times("thread", &creation, &exit_time, &kernel, &user);

	if (!QueryProcessCycleTime(GetCurrentProcess(), &cycles))
		return failed("QueryProcessCycleTime");
	printf("process_cycles %llu\n", cycles);
	if (!GetProcessTimes(GetCurrentProcess(), &creation, &exit_time,
			     &kernel, &user))
		return failed("GetProcessTimes");
	print_times("process", &creation, &exit_time, &kernel, &user);

	printf("groups %u\n", (unsigned int)GetActiveProcessorGroupCount());
	/* Asked with no buffer first: the size needed comes back. */
	if (QueryIdleProcessorCycleTimeEx(0, &len, NULL) ||
	    GetLastError() != ERROR_INSUFFICIENT_BUFFER)
		return failed("QueryIdleProcessorCycleTimeEx (size)");
	idle = malloc(len);
	if (!idle)
		return 1;
	if (!QueryIdleProcessorCycleTimeEx(0, &len, idle))
		return failed("QueryIdleProcessorCycleTimeEx");
	for (i = 0; i < len / sizeof(*idle); i++)
		printf("idle_cpu%lu %llu\n", (unsigned long)i, idle[i]);
	free(idle);
	return 0;
}
