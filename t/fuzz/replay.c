/*
 * replay: a fuzz target's inputs run again without libFuzzer.
 *
 * Linked with one t/fuzz/fuzz-NAME.c into t/bin/replay-NAME by the
 * normal build, so that make check replays the committed corpus and
 * every crash found so far (t/fuzz/regress) through the same
 * LLVMFuzzerTestOneInput, with ASan and UBSan under make check-sanitize.
 *
 *	replay-NAME PATH...
 *
 * Each PATH is an input file or a directory of them (its files in name
 * order; dot files skipped). Prints TAP: one line per PATH with the
 * number of inputs. An input that crashes the target gets a "not ok"
 * line naming it before the process dies; a PATH that cannot be read
 * is "not ok" too, and the exit status is then 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

/* The sanitizers' hook run as they end the process (weak: absent without). */
void __sanitizer_set_death_callback(void (*callback)(void))
	__attribute__((weak));

/* "not ok N - PATH: crashed on FILE", made ready before each input. */
static char crash_line[8192];

static void say_crash(void)
{
	ssize_t ignored = write(STDOUT_FILENO, crash_line, strlen(crash_line));

	(void)ignored;
}

static void on_signal(int sig)
{
	say_crash();
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * A failed invariant aborts under every build. Other crashes are the
 * sanitizers' to report when they are there, with their own hook.
 */
static void catch_crashes(void)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	size_t i;

	signal(SIGABRT, on_signal);
	if (__sanitizer_set_death_callback) {
		__sanitizer_set_death_callback(say_crash);
		return;
	}
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], on_signal);
}

/* The whole file @path into a malloc'd buffer of its size exactly. */
static int read_input(const char *path, uint8_t **data, size_t *size)
{
	size_t len = 0, cap = 4096;
	uint8_t *buf = malloc(cap), *bigger;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf)
		goto out_fail;
	for (;;) {
		if (len == cap) {
			bigger = realloc(buf, cap *= 2);
			if (!bigger)
				goto out_fail;
			buf = bigger;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto out_fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	/* Exactly the input's size, as libFuzzer gives it: no slack to hide
	 * a read past its end. */
	*data = realloc(buf, len ? len : 1);
	if (!*data)
		*data = buf;
	*size = len;
	return 0;

out_fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return -1;
}

/* Run the input @file of the TAP line @num for @path. */
static int replay_file(int num, const char *path, const char *file)
{
	uint8_t *data;
	size_t size;

	if (read_input(file, &data, &size) < 0) {
		printf("not ok %d - %s: cannot read %s: %s\n", num, path, file,
		       strerror(errno));
		return -1;
	}
	snprintf(crash_line, sizeof(crash_line),
		 "not ok %d - %s: crashed on %s\n", num, path, file);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 0;
}

static int visible(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Every file in the directory @path; how many, or -1. */
static int replay_dir(int num, const char *path)
{
	struct dirent **names;
	char file[4096];
	int n, i, count = 0, ret = 0;

	n = scandir(path, &names, visible, alphasort);
	if (n < 0) {
		printf("not ok %d - %s: %s\n", num, path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (ret == 0 && replay_file(num, path, file) < 0)
			ret = -1;
		count++;
		free(names[i]);
	}
	free(names);
	return ret < 0 ? -1 : count;
}

int main(int argc, char **argv)
{
	struct stat st;
	int i, count, failed = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	catch_crashes();
	printf("1..%d\n", argc - 1);
	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) < 0) {
			printf("not ok %d - %s: %s\n", i, argv[i],
			       strerror(errno));
			failed = 1;
			continue;
		}
		if (S_ISDIR(st.st_mode))
			count = replay_dir(i, argv[i]);
		else
			count = replay_file(i, argv[i], argv[i]) < 0 ? -1 : 1;
		if (count < 0)
			failed = 1;
		else
			printf("ok %d - %s: %d input%s\n", i, argv[i], count,
			       count == 1 ? "" : "s");
	}
	return failed;
}
