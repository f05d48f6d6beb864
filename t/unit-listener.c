/*
 * unit-listener: decoding taskstats records of each layout the kernel
 * has sent, without a kernel: the fields timingfs uses, at the offsets
 * of versions 12 to 14 and 16 (the header's), and of version 15, which
 * put twelve counters in the middle of the struct; and the walk over
 * the netlink messages of a received buffer.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <linux/taskstats.h>

#include "listener.h"
#include "tap.h"

#define V15_EARLY (6 * 8)
#define V15_LATE (12 * 8)

static unsigned char buf[1024] __attribute__((aligned(8)));

static void put_u64(size_t off, uint64_t v)
{
	memcpy(buf + off, &v, sizeof(v));
}

static void put_u32(size_t off, uint32_t v)
{
	memcpy(buf + off, &v, sizeof(v));
}

/* A record of @version, its fields shifted as version 15 shifts them. */
static size_t record(uint16_t version, size_t early, size_t late)
{
	memset(buf, 0xee, sizeof(buf));
	memcpy(buf, &version, sizeof(version));
	buf[offsetof(struct taskstats, ac_flag)] = 0x20;
	put_u64(offsetof(struct taskstats, cpu_run_virtual_total) + early,
		306835073);
	put_u32(offsetof(struct taskstats, ac_uid) + early, 1000);
	put_u32(offsetof(struct taskstats, ac_gid) + early, 100);
	put_u32(offsetof(struct taskstats, ac_pid) + early, 4242);
	put_u64(offsetof(struct taskstats, ac_etime) + early, 350000);
	put_u64(offsetof(struct taskstats, ac_utime) + early, 300000);
	put_u64(offsetof(struct taskstats, ac_stime) + early, 4000);
	put_u32(offsetof(struct taskstats, ac_tgid) + late, 4240);
	/* The kernel pads the name with NULs to 32 bytes. */
	memset(buf + offsetof(struct taskstats, ac_comm) + early, 0, 32);
	memcpy(buf + offsetof(struct taskstats, ac_comm) + early,
	       "fifteen bytes!!", 15);
	return sizeof(struct taskstats) + late;
}

static bool fields_ok(const struct taskstats_fields *f, unsigned int version)
{
	return f->version == version && f->flag == 0x20 &&
	       f->run_ns == 306835073 && f->uid == 1000 && f->gid == 100 &&
	       f->pid == 4242 && f->tgid == 4240 && f->etime_us == 350000 &&
	       f->utime_us == 300000 && f->stime_us == 4000 &&
	       strcmp(f->comm, "fifteen bytes!!") == 0;
}

/* A netlink message of @len bytes at @off in buf; the offset after it. */
static size_t message(size_t off, uint32_t len)
{
	struct nlmsghdr nlh = { .nlmsg_len = len, .nlmsg_type = NLMSG_DONE };

	memcpy(buf + off, &nlh, sizeof(nlh));
	return off + NLMSG_ALIGN(len);
}

static void test_walk(void)
{
	size_t end, off = 0;

	memset(buf, 0, sizeof(buf));
	end = message(message(0, 20), 16);
	check(listener_next_msg(buf, end, &off) == (void *)buf && off == 20 &&
		      listener_next_msg(buf, end, &off) == (void *)(buf + 20) &&
		      off == 36 && !listener_next_msg(buf, end, &off),
	      "walk: two messages, padded to 4 bytes, then the end");
	off = 0;
	check(!listener_next_msg(buf, 19, &off),
	      "walk: a message longer than what was received: the end");
	off = 0;
	message(0, 0x80000010);
	check(!listener_next_msg(buf, sizeof(buf), &off),
	      "walk: a length of 2 GiB and more is no negative int: the end");
	off = 0;
	message(0, 15);
	check(!listener_next_msg(buf, sizeof(buf), &off),
	      "walk: a length shorter than the header: the end");
	off = 0;
	check(!listener_next_msg(buf, 15, &off),
	      "walk: a buffer shorter than a header: the end");
}

int main(void)
{
	static const uint16_t versions[] = { 12, 13, 14, 16, 17 };
	struct taskstats_fields f;
	size_t len, i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		len = record(versions[i], 0, 0);
		check(listener_parse_stats(buf, len, 0, &f) == 0 &&
			      fields_ok(&f, versions[i]),
		      "version %u: every field at its place", versions[i]);
	}
	len = record(15, V15_EARLY, V15_LATE);
	check(listener_parse_stats(buf, len, 0, &f) == 0 && fields_ok(&f, 15),
	      "version 15: the fields past its inserted counters");
	len = record(16, 0, 0);
	check(listener_parse_stats(buf, len, 0, &f) == 0 && f.pid == 4242,
	      "version 16: back at version 14's places");

	/* A thread group's record may leave its version 0. */
	len = record(0, V15_EARLY, V15_LATE);
	check(listener_parse_stats(buf, len, 15, &f) == 0 && fields_ok(&f, 15),
	      "version 0 read as the thread's record says (15)");
	len = record(0, 0, 0);
	check(listener_parse_stats(buf, len, 16, &f) == 0 && fields_ok(&f, 16),
	      "version 0 read as the thread's record says (16)");
	check_int(listener_parse_stats(buf, len, 0, &f), -EIO,
		  "version 0 with nothing to go by: refused");

	len = record(11, 0, 0);
	check_int(listener_parse_stats(buf, len, 0, &f), -EIO,
		  "version 11, which has no ac_tgid: refused");
	len = record(13, 0, 0);
	check_int(listener_parse_stats(
			  buf, offsetof(struct taskstats, ac_tgid) + 3, 0, &f),
		  -EIO, "a record cut before ac_tgid ends: refused");
	check_int(listener_parse_stats(
			  buf, offsetof(struct taskstats, ac_tgid) + 4, 0, &f),
		  0, "one that ends with ac_tgid: read");
	len = record(15, V15_EARLY, V15_LATE);
	check_int(listener_parse_stats(buf, sizeof(struct taskstats), 0, &f),
		  -EIO, "a version 15 record of version 14's size: refused");
	check_int(listener_parse_stats(buf, 1, 0, &f), -EIO,
		  "one byte: refused");
	test_walk();
	return tap_done();
}
