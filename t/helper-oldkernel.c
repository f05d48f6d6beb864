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
 *                  install a seccomp filter, then execvp(3) COMMAND
 *                  (t/lib-seccomp.h: the filter's ABI check, no new
 *                  privileges, exit status)
 *
 * Those system calls fail with ENOSYS, as on such a kernel; every other
 * one is allowed.
 */
#include "lib-seccomp.h"

/* The same numbers on both architectures (the generic table). */
#define NR_OPEN_TREE 428
#define NR_MOVE_MOUNT 429
#define NR_FSOPEN 430
#define NR_FSCONFIG 431
#define NR_FSMOUNT 432
#define NR_PIDFD_OPEN 434

int main(int argc, char **argv)
{
#ifdef SECCOMP_ARCH
	struct sock_filter code[] = {
		/* [0] Another ABI: killed. */
		SECCOMP_OTHER_ABI_KILLED,
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

	return seccomp_exec("oldkernel", argc, argv, code,
			    sizeof(code) / sizeof(code[0]));
#else
	return seccomp_exec("oldkernel", argc, argv, NULL, 0);
#endif
}
