/*
 * helper-acc-sleep: a process to be looked at by readers, for the
 * access tests (t2120).
 *
 *   helper-acc-sleep [nodump]   with "nodump", first make itself not
 *                               dumpable (prctl PR_SET_DUMPABLE 0), as
 *                               a process that guards its memory does;
 *                               then sleep until killed
 *
 * Exit status: 2 for bad usage, 1 when prctl fails.
 */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "nodump") != 0)) {
		fprintf(stderr, "usage: helper-acc-sleep [nodump]\n");
		return 2;
	}
	if (argc == 2 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		perror("prctl");
		return 1;
	}
	for (;;)
		pause();
}
