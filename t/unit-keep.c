/*
 * unit-keep: the store of open files' contents that outlives a server
 * (keep.h), without FUSE: every size comes back byte for byte, any
 * other handle is refused, a successor (a child that exits, or one
 * killed at a random moment, round after round on one store) finds
 * every committed content and nothing else, space and memory come back
 * after drops, and threads that put, read and drop at once agree.
 *
 * "unit-keep bench" times put+commit+get+drop cycles at length: 10^6
 * of a 20-byte content, 10^4 of 300 KiB (the suite's run times fewer).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "keep.h"
#include "tap.h"

#define KIB 1024
#define MIB (1024 * 1024)

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A random number from @state (xorshift64*). */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

/* The content of the file whose inode is @ino: its bytes from @ino. */
static void fill(char *buf, size_t len, uint64_t ino)
{
	uint64_t w = mix(ino) | 1, v;
	size_t i;

	for (i = 0; i < len; i += sizeof(v)) {
		v = next_random(&w);
		memcpy(buf + i, &v, len - i < sizeof(v) ? len - i : sizeof(v));
	}
}

static __thread char *same_buf;
static __thread size_t same_size;

/* Whether @len bytes at @data are @ino's content. */
static bool same(const char *data, size_t len, uint64_t ino)
{
	if (!len)
		return true;
	if (len > same_size) {
		free(same_buf);
		same_buf = malloc(len);
		same_size = len;
	}
	fill(same_buf, len, ino);
	return memcmp(same_buf, data, len) == 0;
}

/* The thread's buffer of same() freed. */
static void same_done(void)
{
	free(same_buf);
	same_buf = NULL;
	same_size = 0;
}

/* A content's length, made of its inode number: mostly small. */
static size_t length_of(uint64_t ino)
{
	uint64_t r = mix(ino * 7 + 3);

	switch (r % 10) {
	case 0:
		return r / 10 % (300 * KIB);
	case 1:
	case 2:
	case 3:
		return r / 10 % (8 * KIB);
	default:
		return r / 10 % 64;
	}
}

/* Put and commit @ino's content of @len bytes: the handle, or 0. */
static uint64_t put_len(struct keep *k, uint64_t ino, size_t len)
{
	char *buf = malloc(len ? len : 1);
	uint64_t handle = 0;

	fill(buf, len, ino);
	if (keep_put(k, ino, ~ino, buf, len, &handle) == 0)
		keep_commit(k, handle);
	else
		handle = 0;
	free(buf);
	return handle;
}

/* Whether @handle names @ino's content of @len bytes, and ~@ino. */
static bool holds(struct keep *k, uint64_t handle, uint64_t ino, size_t len)
{
	const char *data;
	uint64_t got_ino, node;
	size_t got_len;

	return keep_get(k, handle, &data, &got_len, &got_ino, &node) == 0 &&
	       got_len == len && got_ino == ino && node == ~ino &&
	       same(data, len, ino);
}

/* Whether @handle names a content made by put_len() of length_of(). */
static bool intact(struct keep *k, uint64_t handle)
{
	uint64_t ino;

	return keep_get(k, handle, NULL, NULL, &ino, NULL) == 0 &&
	       holds(k, handle, ino, length_of(ino));
}

/* What in_use() found. */
struct usage {
	const struct keep *k;
	size_t count, bytes;
};

static void usage_one(void *arg, uint64_t handle, uint64_t ino, uint64_t node)
{
	struct usage *u = arg;
	size_t len = 0;

	(void)ino;
	(void)node;
	keep_get(u->k, handle, NULL, &len, NULL, NULL);
	u->count++;
	u->bytes += len;
}

/*
 * How many contents @k holds, and the sum of their lengths in *@bytes
 * (may be NULL): the committed ones, as keep_each() finds them, each
 * one's length from keep_get(). A content put and not committed is not
 * counted: every content these tests count is committed (put_len()),
 * and a successor frees the others (keep_map()).
 */
static size_t in_use(const struct keep *k, size_t *bytes)
{
	struct usage u = { k, 0, 0 };

	keep_each(k, usage_one, &u);
	if (bytes)
		*bytes = u.bytes;
	return u.count;
}

static struct keep *map_new(unsigned int slots, size_t data_bytes, int *fd)
{
	struct keep *k = NULL;

	*fd = keep_create(slots, data_bytes, 0);
	if (*fd < 0 || keep_map(*fd, &k) != 0) {
		printf("Bail out! no store: %s\n", strerror(-*fd));
		exit(1);
	}
	return k;
}

static void test_round_trip(void)
{
	static const size_t sizes[] = { 0,    1,    31,	  32,	   33,
					4095, 4096, 4097, 3 * MIB, 100 };
	uint64_t handle[10], r = 42, h, h2;
	unsigned int i, bad = 0, wrong = 0;
	size_t n = sizeof(sizes) / sizeof(sizes[0]), sum = 0, bytes;
	const char *data;
	size_t len;
	struct keep *k;
	int fd;

	k = map_new(64, 8 * MIB, &fd);
	for (i = 0; i < n; i++) {
		handle[i] = put_len(k, 1000 + i, sizes[i]);
		sum += sizes[i];
	}
	for (i = 0; i < n; i++)
		check(handle[i] && holds(k, handle[i], 1000 + i, sizes[i]),
		      "a content of %zu bytes comes back", sizes[i]);
	check_u64(in_use(k, &bytes), n, "the keep holds them");
	check_u64(bytes, sum, "their lengths sum to those put");
	check(keep_get(k, handle[9], NULL, NULL, NULL, NULL) == 0,
	      "keep_get takes NULL for all it returns");
	keep_drop(k, handle[8]);
	check_int(keep_get(k, handle[8], &data, &len, NULL, NULL), -ENOENT,
		  "a dropped handle is ENOENT");
	keep_drop(k, handle[8]);
	/* Its slot freed twice would be taken by both. */
	h = put_len(k, 2000, 20);
	h2 = put_len(k, 2001, 40);
	check(in_use(k, NULL) == n + 1 && holds(k, h, 2000, 20) &&
		      holds(k, h2, 2001, 40),
	      "a second drop of it is ignored: two puts after it both kept");
	keep_drop(k, h);
	keep_drop(k, h2);
	check_int(keep_get(k, 0, &data, &len, NULL, NULL), -ENOENT,
		  "handle 0 is ENOENT");
	check_int(keep_get(k, 65, &data, &len, NULL, NULL), -ENOENT,
		  "a slot beyond the table is ENOENT");
	check_int(keep_get(k, UINT64_MAX, &data, &len, NULL, NULL), -ENOENT,
		  "handle 2^64-1 is ENOENT");
	check_int(keep_get(k, 1ULL << 32 | 64, &data, &len, NULL, NULL),
		  -ENOENT, "a slot never used is ENOENT");
	check(!(handle[0] & KEEP_HANDLE_TAG) &&
		      keep_get(k, handle[0] | KEEP_HANDLE_TAG, NULL, NULL, NULL,
			       NULL) == -ENOENT,
	      "no handle has the caller's tag bit, which is ENOENT");
	check_int(keep_get(k, handle[0] + (1ULL << 32), &data, &len, NULL,
			   NULL),
		  -ENOENT, "a used slot with another sequence is ENOENT");
	for (i = 0; i < 1000000; i++) {
		h = next_random(&r);
		if (h >> 32 < 4) /* the sequence of a slot in use */
			continue;
		if (i % 2)
			h = (h & ~0xffffffffULL) | (h % 66);
		if (keep_get(k, h, &data, &len, NULL, NULL) != -ENOENT)
			bad++;
		/* Random drops and commits must not touch what is there. */
		if (i % 1000 == 0) {
			keep_drop(k, h);
			keep_commit(k, h);
		}
	}
	check_int(bad, 0, "10^6 random handles, half in the table: ENOENT");
	for (i = 0; i < n; i++)
		if (i != 8 && !holds(k, handle[i], 1000 + i, sizes[i]))
			wrong++;
	check_int(wrong, 0, "and the contents are untouched");
	for (i = 0; i < n; i++)
		keep_drop(k, handle[i]);
	check(in_use(k, &bytes) == 0 && bytes == 0,
	      "all dropped: count and bytes 0");
	keep_unmap(k);
	close(fd);
}

static void test_unique(void)
{
	uint64_t h1, h2;
	struct keep *k;
	int fd;

	k = map_new(4, 0, &fd);
	h1 = put_len(k, 1, 20);
	keep_drop(k, h1);
	h2 = put_len(k, 2, 20);
	check(h1 && h2 && (uint32_t)h1 == (uint32_t)h2 && h1 != h2,
	      "a slot taken again gives another handle (%#llx, %#llx)",
	      (unsigned long long)h1, (unsigned long long)h2);
	check_int(keep_get(k, h1, NULL, NULL, NULL, NULL), -ENOENT,
		  "the old handle is ENOENT");
	keep_drop(k, h1);
	check(holds(k, h2, 2, 20), "its drop leaves the new content alone");
	check(put_len(k, 3, 40) == 0, "a store of no data takes no 40 bytes");
	keep_unmap(k);
	close(fd);
}

static void test_invalid(void)
{
	struct keep *k = NULL;
	char junk[8192];
	int fd;

	check_int(keep_create(0, MIB, 0), -EINVAL, "keep_create of 0 slots");
	fd = memfd_create("junk", MFD_CLOEXEC);
	check_int(keep_map(fd, &k), -EINVAL, "an empty memfd holds no store");
	memset(junk, 'x', sizeof(junk));
	check(write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk),
	      "junk written");
	check_int(keep_map(fd, &k), -EINVAL, "nor does one of junk");
	close(fd);
	fd = keep_create(8, 0, 0);
	check(ftruncate(fd, 1 * MIB) < 0, "a store's size is sealed");
	check(keep_map(fd, &k) == 0 && in_use(k, NULL) == 0,
	      "a store of no data maps, empty");
	keep_unmap(k);
	keep_unmap(NULL);
	close(fd);
}

/* What keep_each() found: every content checked, and counted. */
struct found {
	struct keep *k;
	unsigned int count, wrong;
	size_t bytes;
	uint64_t *handle; /* of each, when not NULL */
	uint64_t wanted; /* an inode that must not be found */
	bool unwanted;
};

static void found_one(void *arg, uint64_t handle, uint64_t ino, uint64_t node)
{
	struct found *f = arg;
	const char *data;
	size_t len = 0;

	if (ino == f->wanted)
		f->unwanted = true;
	if (node != ~ino ||
	    keep_get(f->k, handle, &data, &len, NULL, NULL) != 0 ||
	    len != length_of(ino) || !same(data, len, ino))
		f->wrong++;
	if (f->handle)
		f->handle[f->count] = handle;
	f->count++;
	f->bytes += len;
}

/* Put contents of every length_of() until the store is full. */
static unsigned int fill_up(struct keep *k, uint64_t ino0, uint64_t *handle,
			    unsigned int max)
{
	unsigned int n = 0, misses = 0;
	uint64_t ino = ino0;

	while (n < max && misses < 100) {
		handle[n] = put_len(k, ino, length_of(ino));
		if (handle[n])
			n++;
		else
			misses++;
		ino++;
	}
	return n;
}

#define SUCCESSOR_N 300

static void test_successor(void)
{
	uint64_t handle[SUCCESSOR_N + 1], more[4096], lost;
	struct found f = { 0 };
	unsigned int i, n, wrong = 0;
	size_t bytes, want = 0;
	struct keep *k;
	int fd, p[2], status;
	pid_t pid;

	fd = keep_create(4096, 64 * MIB, 0);
	if (pipe(p) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		if (keep_map(fd, &k) != 0)
			_exit(2);
		for (i = 0; i < SUCCESSOR_N; i++)
			handle[i] = put_len(k, i, length_of(i));
		for (i = 0; i < SUCCESSOR_N; i += 7)
			keep_drop(k, handle[i]);
		if (keep_put(k, 100000, ~100000ULL, "lost", 4, &lost) != 0)
			_exit(3);
		if (write(p[1], &lost, sizeof(lost)) != (ssize_t)sizeof(lost))
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	waitpid(pid, &status, 0);
	check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child put %d contents, dropped a seventh, and exited",
	      SUCCESSOR_N);
	check(read(p[0], &lost, sizeof(lost)) == (ssize_t)sizeof(lost),
	      "and told the uncommitted handle");
	close(p[0]);
	if (!check(keep_map(fd, &k) == 0, "the successor maps the store"))
		return;
	f.k = k;
	f.wanted = 100000;
	keep_each(k, found_one, &f);
	n = SUCCESSOR_N - (SUCCESSOR_N + 6) / 7;
	check_int(f.count, n, "it finds every committed content");
	check_int(f.wrong, 0, "each byte-exact, with its numbers");
	check(!f.unwanted, "and not the uncommitted one");
	check_int(keep_get(k, lost, NULL, NULL, NULL, NULL), -ENOENT,
		  "whose handle is ENOENT");
	for (i = 0; i < SUCCESSOR_N; i++)
		if (i % 7)
			want += length_of(i);
	check(in_use(k, &bytes) == n && bytes == want,
	      "what it holds is what was committed and not dropped, in bytes");
	i = fill_up(k, 200000, more, 4096);
	check(i > 0, "the free space fills again (%u more)", i);
	memset(&f, 0, sizeof(f));
	f.k = k;
	keep_each(k, found_one, &f);
	check_int(f.wrong, 0, "and every content, old and new, is intact");
	for (n = 0; n < i; n++)
		if (!intact(k, more[n]))
			wrong++;
	check_int(wrong, 0, "the new ones by their handles too");
	keep_unmap(k);
	close(fd);
}

/* A journal record from a child that is killed: 'C' after a commit,
 * 'D' before a drop. */
struct record {
	uint64_t kind;
	uint64_t handle;
};

static void drop_half(void *arg, uint64_t handle, uint64_t ino, uint64_t node)
{
	struct keep *k = arg;
	struct record rec = { 'D', handle };

	(void)node;
	if (ino % 2) {
		if (write(STDOUT_FILENO, &rec, sizeof(rec)) !=
		    (ssize_t)sizeof(rec))
			_exit(5);
		keep_drop(k, handle);
	}
}

/* The child of a round: until killed, put, commit and drop at random. */
static void churn(int fd, int out, uint64_t ino)
{
	uint64_t live[64] = { 0 }, r = mix(ino) | 1, h;
	struct record rec;
	struct keep *k;
	unsigned int i;

	if (dup2(out, STDOUT_FILENO) < 0 || keep_map(fd, &k) != 0)
		_exit(2);
	keep_each(k, drop_half, k);
	for (;; ino++) {
		i = next_random(&r) % 64;
		if (live[i]) {
			rec = (struct record){ 'D', live[i] };
			if (write(STDOUT_FILENO, &rec, sizeof(rec)) !=
			    (ssize_t)sizeof(rec))
				_exit(5);
			keep_drop(k, live[i]);
			live[i] = 0;
		}
		h = put_len(k, ino, length_of(ino));
		if (!h)
			continue;
		if (next_random(&r) % 16 == 0) {
			keep_drop(k, h); /* a reply that failed */
			continue;
		}
		rec = (struct record){ 'C', h };
		if (write(STDOUT_FILENO, &rec, sizeof(rec)) !=
		    (ssize_t)sizeof(rec))
			_exit(5);
		live[i] = h;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define ROUNDS 30
#define REQUIRED_MAX 100000

/* The handles of round's journal on @in, into @required. */
static size_t journal(int in, uint64_t *required, size_t n)
{
	static uint64_t dropped[REQUIRED_MAX];
	size_t ndropped = 0, i, kept = 0;
	struct record rec;

	while (read(in, &rec, sizeof(rec)) == (ssize_t)sizeof(rec)) {
		if (rec.kind == 'C' && n < REQUIRED_MAX)
			required[n++] = rec.handle;
		else if (rec.kind == 'D' && ndropped < REQUIRED_MAX)
			dropped[ndropped++] = rec.handle;
	}
	qsort(dropped, ndropped, sizeof(*dropped), cmp_u64);
	for (i = 0; i < n; i++)
		if (!bsearch(&required[i], dropped, ndropped, sizeof(*dropped),
			     cmp_u64))
			required[kept++] = required[i];
	return kept;
}

/*
 * How many of the handles that keep_each() found, @found of them at
 * @handle, the journal did not keep: the @n in @required (sorted here).
 */
static unsigned int unjournaled(const uint64_t *handle, unsigned int found,
				uint64_t *required, size_t n)
{
	unsigned int i, extra = 0;

	qsort(required, n, sizeof(*required), cmp_u64);
	for (i = 0; i < found; i++)
		if (!bsearch(&handle[i], required, n, sizeof(*required),
			     cmp_u64))
			extra++;
	return extra;
}

static void test_killed(void)
{
	static uint64_t required[REQUIRED_MAX], more[8192], found[8192];
	unsigned int round, missing = 0, wrong = 0, strays = 0, i, n;
	uint64_t r = (uint64_t)time(NULL) | 1;
	size_t nrequired = 0, j, bytes;
	struct keep *k;
	struct found f;
	struct stat st;
	int fd, p[2];
	pid_t pid;

	fd = keep_create(8192, 32 * MIB, 0);
	for (round = 0; round < ROUNDS; round++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return;
		fcntl(p[1], F_SETPIPE_SZ, MIB);
		pid = fork();
		if (pid == 0)
			churn(fd, p[1], (uint64_t)(round + 1) << 32);
		close(p[1]);
		usleep(next_random(&r) % 20000);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		nrequired = journal(p[0], required, nrequired);
		close(p[0]);
		if (keep_map(fd, &k) != 0) {
			missing++;
			break;
		}
		for (j = 0; j < nrequired; j++)
			if (keep_get(k, required[j], NULL, NULL, NULL, NULL))
				missing++;
		memset(&f, 0, sizeof(f));
		f.k = k;
		f.handle = found;
		keep_each(k, found_one, &f);
		wrong += f.wrong;
		/* A child killed between a commit or a drop and its record
		 * leaves one content that the journal does not keep. */
		if (unjournaled(found, f.count, required, nrequired) >
		    round + 1)
			strays++;
		keep_unmap(k);
	}
	printf("# %u rounds, %zu contents committed and kept at the end\n",
	       ROUNDS, nrequired);
	check_int(missing, 0,
		  "%d children killed at random: every committed content kept",
		  ROUNDS);
	check_int(wrong, 0, "every content found is byte-exact");
	check_int(strays, 0,
		  "what is found is what the journal kept, and at most one "
		  "content more a round");
	if (keep_map(fd, &k) != 0)
		return;
	n = fill_up(k, 1ULL << 40, more, 8192);
	memset(&f, 0, sizeof(f));
	f.k = k;
	keep_each(k, found_one, &f);
	check(n > 0 && f.wrong == 0,
	      "the store filled up again (%u more), every content intact", n);
	f.handle = calloc(8192, sizeof(uint64_t));
	f.count = 0;
	keep_each(k, found_one, &f);
	for (i = 0; i < f.count; i++)
		keep_drop(k, f.handle[i]);
	free(f.handle);
	check(in_use(k, &bytes) == 0 && bytes == 0, "all dropped: empty");
	fstat(fd, &st);
	printf("# %lld KiB allocated to the memfd\n",
	       (long long)st.st_blocks / 2);
	check((long long)st.st_blocks * 512 <= KEEP_WARM_BYTES + MIB,
	      "the data area given back, but for its warm start");
	keep_unmap(k);
	close(fd);
}

static long long blocks_kib(int fd)
{
	struct stat st;

	fstat(fd, &st);
	return (long long)st.st_blocks / 2;
}

static void test_space(void)
{
	uint64_t handle[2048];
	unsigned int n1, n2, i;
	long long empty, full;
	size_t bytes;
	struct keep *k;
	int fd;

	k = map_new(2048, 4 * MIB, &fd);
	for (n1 = 0; (handle[n1] = put_len(k, n1, 8 * KIB)); n1++)
		;
	check_int(n1, 512, "4 MiB holds 512 contents of 8 KiB, then ENOSPC");
	for (i = 0; i < n1; i++)
		keep_drop(k, handle[i]);
	check(in_use(k, &bytes) == 0 && bytes == 0, "all dropped: empty");
	for (n2 = 0; (handle[n2] = put_len(k, n2, 8 * KIB)); n2++)
		;
	check_int(n2, n1, "and it holds as many again");
	for (i = 0; i < n2; i++)
		keep_drop(k, handle[i]);
	for (n1 = 0; n1 < 2048 && (handle[n1] = put_len(k, n1, 32)); n1++)
		;
	check_int(n1, 2048, "2048 slots hold 2048 contents of 32 bytes");
	check(put_len(k, 0, 0) == 0, "and not one more, even empty");
	for (i = 0; i < n1; i++)
		keep_drop(k, handle[i]);
	check(put_len(k, 0, 4 * MIB) != 0, "a content as large as the data");
	keep_unmap(k);
	close(fd);

	k = map_new(16, 64 * MIB, &fd);
	empty = blocks_kib(fd);
	for (i = 0; i < 3; i++)
		handle[i] = put_len(k, i, 8 * MIB + i);
	full = blocks_kib(fd);
	check(full >= empty + 24 * 1024, "3 contents of 8 MiB take %lld KiB",
	      full - empty);
	keep_drop(k, handle[1]);
	check(blocks_kib(fd) <= full - 8 * 1024 + 128,
	      "one dropped gives its 8 MiB back (%lld KiB left)",
	      blocks_kib(fd));
	keep_drop(k, handle[0]);
	keep_drop(k, handle[2]);
	/* The warm start, and the table's page. */
	check(blocks_kib(fd) <= empty + KEEP_WARM_BYTES / KIB + 64,
	      "all dropped: %lld KiB left, %lld empty", blocks_kib(fd), empty);
	keep_unmap(k);
	close(fd);
}

#define THREADS 4
#define THREAD_LOOPS 5000

/* Every handle a worker has given, dropped or not, for the prober. */
static uint64_t given[THREADS * 8];
static int workers_done;

struct worker {
	struct keep *k;
	unsigned int id, bad, full;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t live[8] = { 0 }, ino[8], r = w->id + 1;
	unsigned int i, n;
	size_t len;

	for (n = 0; n < THREAD_LOOPS; n++) {
		i = next_random(&r) % 8;
		if (live[i]) {
			if (!holds(w->k, live[i], ino[i], length_of(ino[i])))
				w->bad++;
			keep_drop(w->k, live[i]);
			if (keep_get(w->k, live[i], NULL, NULL, NULL, NULL) !=
			    -ENOENT)
				w->bad++;
		}
		ino[i] = (uint64_t)w->id << 32 | n;
		len = length_of(ino[i]);
		live[i] = put_len(w->k, ino[i], len);
		__atomic_store_n(&given[w->id * 8 + i], live[i],
				 __ATOMIC_RELAXED);
		if (!live[i])
			w->full++;
		else if (!holds(w->k, live[i], ino[i], len))
			w->bad++;
	}
	for (i = 0; i < 8; i++)
		keep_drop(w->k, live[i]);
	same_done();
	return NULL;
}

/*
 * Until the workers are done, get their handles, whichever are in use,
 * dropped, or taken again meanwhile: a get that succeeds returns the
 * numbers and the length of one content, never a mix (the bytes may
 * change under it, as a drop may come: not read here).
 */
static void *probe(void *arg)
{
	struct worker *w = arg;
	uint64_t r = 99, h, ino, node;
	const char *data;
	size_t len;

	while (!__atomic_load_n(&workers_done, __ATOMIC_RELAXED)) {
		h = __atomic_load_n(&given[next_random(&r) % (THREADS * 8)],
				    __ATOMIC_RELAXED);
		if (keep_get(w->k, h, &data, &len, &ino, &node) == 0) {
			if (node != ~ino || len != length_of(ino))
				w->bad++;
			else
				w->full++;
		}
	}
	return NULL;
}

static void test_threads(void)
{
	struct worker w[THREADS], prober;
	pthread_t th[THREADS], pt;
	unsigned int i, bad = 0, full = 0;
	size_t bytes;
	struct keep *k;
	int fd;

	k = map_new(64, 64 * MIB, &fd);
	prober = (struct worker){ k, THREADS, 0, 0 };
	pthread_create(&pt, NULL, probe, &prober);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ k, i, 0, 0 };
		pthread_create(&th[i], NULL, work, &w[i]);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		bad += w[i].bad;
		full += w[i].full;
	}
	__atomic_store_n(&workers_done, 1, __ATOMIC_RELAXED);
	pthread_join(pt, NULL);
	check_int(prober.bad, 0,
		  "a prober's gets of their handles, live or not: never a "
		  "mix (%u found)",
		  prober.full);
	check_int(bad, 0, "%d threads put, read and drop %d each: all exact",
		  THREADS, THREAD_LOOPS);
	check_int(full, 0, "none was refused");
	check(in_use(k, &bytes) == 0 && bytes == 0, "all dropped: empty");
	keep_unmap(k);
	close(fd);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* put+commit+get+drop of @len bytes, @loops times: ns a cycle. */
static double cycle_ns(struct keep *k, size_t len, unsigned int loops)
{
	char *buf = calloc(1, len + 1);
	unsigned int i, bad = 0;
	const char *data;
	uint64_t handle;
	size_t got;
	double t0;

	t0 = now_ns();
	for (i = 0; i < loops; i++) {
		buf[0] = (char)i;
		if (keep_put(k, i, i, buf, len, &handle)) {
			bad++;
			continue;
		}
		keep_commit(k, handle);
		if (keep_get(k, handle, &data, &got, NULL, NULL) ||
		    got != len || (len && data[0] != (char)i))
			bad++;
		keep_drop(k, handle);
	}
	t0 = (now_ns() - t0) / loops;
	free(buf);
	return bad ? -1 : t0;
}

static void bench(unsigned int small, unsigned int large)
{
	double small_ns, large_ns;
	struct keep *k;
	int fd;

	k = map_new(65536, 256 * MIB, &fd);
	small_ns = cycle_ns(k, 20, small);
	large_ns = cycle_ns(k, 300 * KIB, large);
	printf("# put+commit+get+drop: %.0f ns for 20 bytes (%u), "
	       "%.0f ns for 300 KiB (%u)\n",
	       small_ns, small, large_ns, large);
	check(small_ns > 0 && large_ns > 0, "the timed cycles were exact");
	keep_unmap(k);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0) {
		bench(1000000, 10000);
		return tap_done();
	}
	test_round_trip();
	test_unique();
	test_invalid();
	test_space();
	test_successor();
	test_killed();
	test_threads();
	bench(100000, 200);
	same_done();
	return tap_done();
}
