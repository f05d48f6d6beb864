/*
 * helper-oldkernel: run a command as on a kernel before Linux 5.2,
 * which has neither the mount API (fsopen, fsconfig, fsmount,
 * move_mount, open_tree: 5.2) nor pidfds (pidfd_open: 5.3) nor the BPF
 * task iterator (5.8; here bpf(2) itself, as a kernel built without
 * it): the way to test the daemon's other ways of attaching mounts
 * (mount(2) by a child), of learning of a container's end (polling)
 * and of reading task times (procfs) on this kernel, as RHEL 8's 4.18
 * would have it.
 *
 *   helper-oldkernel COMMAND [ARGS...]
 *                  install a seccomp filter, then execvp(3) COMMAND: the
 *                  same process (its pid is the caller's $!), and every
 *                  process it starts inherits the filter
 *
 * Those system calls fail with ENOSYS, as on such a kernel; every other
 * one is allowed. As helper-noioctl's, the filter knows the numbers of
 * the architecture it was built for (x86_64 or aarch64), kills a call
 * made through another ABI, and sets no-new-privileges: it is a
 * simulation for tests, not a confinement.
 *
 * Exit status: COMMAND's; 2 for bad usage; 1 when the filter cannot be
 * installed; 127 when COMMAND is not found and 126 when it cannot be
 * run, as env(1).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define OLD_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define OLD_ARCH AUDIT_ARCH_AARCH64
#endif

/* The same numbers on both architectures (the generic table). */
#define NR_OPEN_TREE 428
#define NR_MOVE_MOUNT 429
#define NR_FSOPEN 430
#define NR_FSCONFIG 431
#define NR_FSMOUNT 432
#define NR_PIDFD_OPEN 434

#ifdef OLD_ARCH
static int install_filter(void)
{
	struct sock_filter code[] = {
		/* [0] Another ABI: killed. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OLD_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* [3] One of the seven: ENOSYS (at [12]). */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 7, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_OPEN_TREE, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_MOVE_MOUNT, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_FSOPEN, 4, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_FSCONFIG, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_FSMOUNT, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_PIDFD_OPEN, 1, 0),
		/* [11] */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* [12] */
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(code) / sizeof(code[0])),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		fprintf(stderr, "helper-oldkernel: seccomp: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: helper-oldkernel COMMAND [ARGS...]\n");
		return 2;
	}
#ifdef OLD_ARCH
	if (install_filter() < 0)
		return 1;
#else
	fprintf(stderr, "helper-oldkernel: no filter for this architecture\n");
	return 1;
#endif
	execvp(argv[1], argv + 1);
	fprintf(stderr, "helper-oldkernel: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
