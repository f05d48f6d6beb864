/*
 * helper-noioctl: run a command as on a kernel before Linux 6.10, whose
 * nsfs has none of the ioctls that translate process numbers between
 * PID namespaces (field-notes.md, "Round three"): the way to test the
 * daemon's other way of translating (NSpid/NStgid lines) on this kernel.
 *
 *   helper-noioctl COMMAND [ARGS...]
 *                  install a seccomp filter, then execvp(3) COMMAND: the
 *                  same process (its pid is the caller's $!), and every
 *                  process it starts inherits the filter
 *
 * The filter is a classic BPF program (no libseccomp), installed with
 * prctl(PR_SET_NO_NEW_PRIVS) and prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER). An ioctl(2) whose request, its low 32 bits (the
 * kernel's own "unsigned int cmd": high bits are ignored), is
 * NS_GET_PID_FROM_PIDNS, NS_GET_TGID_FROM_PIDNS, NS_GET_PID_IN_PIDNS or
 * NS_GET_TGID_IN_PIDNS (_IOR(0xb7, 0x6..0x9, int)) fails with ENOTTY, as
 * nsfs answers on an older kernel, whatever the descriptor; every other
 * system call, every other ioctl (NS_GET_PARENT and NS_GET_NSTYPE, which
 * older kernels have, included) is allowed.
 *
 * The filter knows the system call numbers of the architecture it was
 * built for (x86_64 or aarch64). A call made through another ABI (a
 * 32-bit int 0x80 on x86_64, whose numbers mean other calls) kills the
 * process (SECCOMP_RET_KILL_PROCESS, SIGSYS): an ioctl that the filter
 * cannot recognise must not get through unnoticed, and nothing run under
 * it (the daemon, shells, python3) makes such calls. x32 calls, which
 * share x86_64's audit architecture with numbers of their own, are not
 * matched. The filter is a simulation for tests, not a confinement.
 *
 * No new privileges: under it, a set-user-ID program (fusermount3) runs
 * as its caller. The tests run the daemon as root, which mounts by
 * itself.
 *
 * Exit status: COMMAND's; 2 for bad usage; 1 when the filter cannot be
 * installed (the failing call, or an architecture it knows nothing of,
 * on stderr); 127 when COMMAND is not found and 126 when it cannot be
 * run, as env(1).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* Linux 6.10's nsfs ioctls (linux/nsfs.h), for headers that predate them. */
#define NSIO 0xb7
#define NOIOCTL_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#define NOIOCTL_TGID_FROM_PIDNS _IOR(NSIO, 0x7, int)
#define NOIOCTL_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#define NOIOCTL_TGID_IN_PIDNS _IOR(NSIO, 0x9, int)

#if defined(__x86_64__)
#define NOIOCTL_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define NOIOCTL_ARCH AUDIT_ARCH_AARCH64
#endif

/* The low 32 bits of a 64-bit argument of struct seccomp_data. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

#ifdef NOIOCTL_ARCH
static int install_filter(void)
{
	struct sock_filter code[] = {
		/* [0] Another ABI: killed. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOIOCTL_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		/* [3] Not an ioctl: allowed. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5),
		/* [5] The request's low 32 bits: one of the four, ENOTTY. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOIOCTL_PID_FROM_PIDNS, 4,
			 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOIOCTL_TGID_FROM_PIDNS, 3,
			 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOIOCTL_PID_IN_PIDNS, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOIOCTL_TGID_IN_PIDNS, 1,
			 0),
		/* [10] */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* [11] */
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (ENOTTY & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(code) / sizeof(code[0])),
		.filter = code,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "helper-noioctl: PR_SET_NO_NEW_PRIVS: %s\n",
			strerror(errno));
		return -1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		fprintf(stderr, "helper-noioctl: PR_SET_SECCOMP: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: helper-noioctl COMMAND [ARGS...]\n");
		return 2;
	}
#ifdef NOIOCTL_ARCH
	if (install_filter() < 0)
		return 1;
#else
	fprintf(stderr, "helper-noioctl: no filter for this architecture\n");
	return 1;
#endif
	execvp(argv[1], argv + 1);
	fprintf(stderr, "helper-noioctl: %s: %s\n", argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
