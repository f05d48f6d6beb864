/*
 * lib-seccomp.h: what helper-noioctl and helper-oldkernel share: run a
 * command under a seccomp filter that makes some system calls fail as
 * on an older kernel.
 *
 *   helper-NAME COMMAND [ARGS...]
 *                  install the filter, then execvp(3) COMMAND: the same
 *                  process (its pid is the caller's $!), and every
 *                  process it starts inherits the filter
 *
 * The filter is a classic BPF program (no libseccomp), installed with
 * prctl(PR_SET_NO_NEW_PRIVS) and prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER). It knows the system call numbers of the
 * architecture it was built for (x86_64 or aarch64, SECCOMP_ARCH,
 * undefined on any other). A call made through another ABI (a 32-bit
 * int 0x80 on x86_64, whose numbers mean other calls) kills the process
 * (SECCOMP_RET_KILL_PROCESS, SIGSYS: SECCOMP_OTHER_ABI_KILLED, the
 * first three instructions of each filter): a call that the filter
 * cannot recognise must not get through unnoticed, and nothing run
 * under it (the daemon, shells, python3) makes such calls. x32 calls,
 * which share x86_64's audit architecture with numbers of their own,
 * are not matched. The filter is a simulation for tests, not a
 * confinement.
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
#ifndef TIMINGFS_T_LIB_SECCOMP_H
#define TIMINGFS_T_LIB_SECCOMP_H

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
#define SECCOMP_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SECCOMP_ARCH AUDIT_ARCH_AARCH64
#endif

/* The first three instructions of a filter: another ABI, killed. */
#define SECCOMP_OTHER_ABI_KILLED                                         \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS,                               \
		 offsetof(struct seccomp_data, arch)),                   \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SECCOMP_ARCH, 1, 0), \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)

/*
 * seccomp_exec(NAME, ARGC, ARGV, CODE, LEN): the main of helper-NAME:
 * the filter CODE of LEN instructions installed (NULL: no filter for
 * this architecture, exit 1), then ARGV[1] run; returns the exit status
 * when it could not be.
 */
static inline int seccomp_exec(const char *name, int argc, char **argv,
			       struct sock_filter *code, size_t len)
{
	struct sock_fprog prog = {
		.len = (unsigned short)len,
		.filter = code,
	};

	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: helper-%s COMMAND [ARGS...]\n", name);
		return 2;
	}
	if (!code) {
		fprintf(stderr, "helper-%s: no filter for this architecture\n",
			name);
		return 1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "helper-%s: PR_SET_NO_NEW_PRIVS: %s\n", name,
			strerror(errno));
		return 1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		fprintf(stderr, "helper-%s: PR_SET_SECCOMP: %s\n", name,
			strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "helper-%s: %s: %s\n", name, argv[1], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

#endif
