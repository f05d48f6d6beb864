// SPDX-License-Identifier: GPL-2.0
/*
 * tasks.bpf: a BPF task iterator that writes one struct task_rec
 * (task_rec.h) for every task it is shown, in one pass, read by
 * taskpass.c from the iterator's file.
 *
 * The kernel's structures are declared here in part, with
 * preserve_access_index: libbpf relocates each field read (CO-RE)
 * against the running kernel's BTF (/sys/kernel/btf/vmlinux), so no
 * vmlinux.h is needed to build it and the object runs on any kernel
 * with the task iterator (5.8) and those fields. It is GPL: the task
 * iterator's helpers are for GPL programs only.
 */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "task_rec.h"

struct seq_file;

struct sched_entity {
	__u64 sum_exec_runtime;
} __attribute__((preserve_access_index));

struct prev_cputime {
	__u64 utime;
	__u64 stime;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	__u64 start_boottime;
	__u64 utime;
	__u64 stime;
	struct sched_entity se;
	struct prev_cputime prev_cputime;
	char comm[16];
} __attribute__((preserve_access_index));

struct bpf_iter_meta {
	struct seq_file *seq;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int task_records(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct task_rec r;

	if (!t) /* the end of the pass */
		return 0;
	/* The task is the kernel's, trusted: read in place, each field
	 * relocated by CO-RE (no probe_read, which costs a copy each). */
	r.tid = (__u32)t->pid;
	r.tgid = (__u32)t->tgid;
	r.start_boot_ns = t->start_boottime;
	r.runtime_ns = t->se.sum_exec_runtime;
	r.utime_ns = t->utime;
	r.stime_ns = t->stime;
	r.prev_utime_ns = 0;
	r.prev_stime_ns = 0;
	if (bpf_core_field_exists(t->prev_cputime)) {
		r.prev_utime_ns = t->prev_cputime.utime;
		r.prev_stime_ns = t->prev_cputime.stime;
	}
	/* The name: one copy, relocated as the fields above. */
	if (bpf_core_read(&r.comm, sizeof(r.comm), &t->comm) < 0)
		r.comm[0] = '\0';
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}
