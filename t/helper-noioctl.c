/*
 * helper-noioctl: run a command as on a kernel before Linux 6.10, whose
 * nsfs has none of the ioctls that translate process numbers between
 * PID namespaces (docs/containers.md: the `ioctl` and `nspid` ways
 * of translating): the way to test the daemon's other way of
 * translating (NSpid/NStgid lines) on this kernel.
 *
 *   helper-noioctl COMMAND [ARGS...]
 *                  install a seccomp filter, then execvp(3) COMMAND
 *                  (t/lib-seccomp.h: the filter's ABI check, no new
 *                  privileges, exit status)
 *
 * An ioctl(2) whose request, its low 32 bits (the kernel's own
 * "unsigned int cmd": high bits are ignored), is NS_GET_PID_FROM_PIDNS,
 * NS_GET_TGID_FROM_PIDNS, NS_GET_PID_IN_PIDNS or NS_GET_TGID_IN_PIDNS
 * (_IOR(0xb7, 0x6..0x9, int)) fails with ENOTTY, as nsfs answers on an
 * older kernel, whatever the descriptor; every other system call, every
 * other ioctl (NS_GET_PARENT and NS_GET_NSTYPE, which older kernels
 * have, included) is allowed.
 */
#include <sys/ioctl.h>

#include "lib-seccomp.h"

/* Linux 6.10's nsfs ioctls (linux/nsfs.h), for headers that predate them. */
#define NSIO 0xb7
#define NOIOCTL_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#define NOIOCTL_TGID_FROM_PIDNS _IOR(NSIO, 0x7, int)
#define NOIOCTL_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#define NOIOCTL_TGID_IN_PIDNS _IOR(NSIO, 0x9, int)

/* The low 32 bits of a 64-bit argument of struct seccomp_data. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

int main(int argc, char **argv)
{
#ifdef SECCOMP_ARCH
	struct sock_filter code[] = {
		/* [0] Another ABI: killed. */
		SECCOMP_OTHER_ABI_KILLED,
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

	return seccomp_exec("noioctl", argc, argv, code,
			    sizeof(code) / sizeof(code[0]));
#else
	return seccomp_exec("noioctl", argc, argv, NULL, 0);
#endif
}
