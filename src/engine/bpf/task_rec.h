/*
 * task_rec: what the task iterator (tasks.bpf.c) writes of each task,
 * one record after another, and taskpass.c reads: the same layout on
 * both sides, fixed-width fields in the host's byte order.
 */
#ifndef TIMINGFS_TASK_REC_H
#define TIMINGFS_TASK_REC_H

#include <linux/types.h>

struct task_rec {
	__u32 tid; /* the kernel's task->pid, in the initial PID namespace */
	__u32 tgid; /* its thread group's */
	__u64 start_boot_ns; /* task->start_boottime: since boot, ns */
	__u64 runtime_ns; /* se.sum_exec_runtime: CPU time, ns */
	__u64 utime_ns; /* the raw user and system shares (not scaled) */
	__u64 stime_ns;
	__u64 prev_utime_ns; /* the shares /proc showed last (prev_cputime) */
	__u64 prev_stime_ns;
	char comm[16]; /* task->comm: its name, NUL-terminated */
};

#endif
