/*
 * make-seeds: the binary seeds of the fuzz targets taskstats and
 * netlink, written under the corpus directory named on the command
 * line (make fuzz-seeds: t/fuzz/corpus).
 *
 * taskstats/: struct taskstats records of versions 11 to 17 (15 with
 * its twelve inserted counters), one cut before ac_tgid ends, and a
 * thread group's with version 0. netlink/: what the listener receives:
 * a taskstats exit message of a lone thread, one of a process's last
 * thread with its group's record, a proc connector fork record, and a
 * buffer of several messages.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libmnl/libmnl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/taskstats.h>

/* Version 15's counters inserted before ac_tgid (see src/listener.c). */
#define V15_EARLY (6 * 8)
#define V15_LATE (12 * 8)

static const char *corpus;

static void save(const char *dir, const char *name, const void *p, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", corpus, dir);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/%s/%s", corpus, dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/*
 * A record of @version for thread @pid of @tgid into @out (room for a
 * struct taskstats and V15_LATE more); its length.
 */
static size_t record(unsigned char *out, unsigned int version, uint32_t pid,
		     uint32_t tgid)
{
	struct taskstats ts;
	size_t early = version == 15 ? V15_EARLY : 0;
	size_t late = version == 15 ? V15_LATE : 0;
	size_t cut = offsetof(struct taskstats, ac_comm);

	memset(&ts, 0, sizeof(ts));
	ts.version = (uint16_t)version;
	ts.ac_flag = pid == tgid ? 0x20 : 0;
	ts.cpu_run_virtual_total = 306835073;
	strcpy(ts.ac_comm, "worker");
	ts.ac_uid = 1000;
	ts.ac_gid = 100;
	ts.ac_pid = pid;
	ts.ac_etime = 350000;
	ts.ac_utime = 300000;
	ts.ac_stime = 4000;
	ts.ac_tgid = tgid;
	memset(out, 0, sizeof(ts) + V15_LATE);
	if (!early) {
		memcpy(out, &ts, sizeof(ts));
		return sizeof(ts);
	}
	/* Version 15: counters in the middle, the rest moved down. */
	memcpy(out, &ts, cut - 2 * 8);
	memcpy(out + cut - 2 * 8 + early, (char *)&ts + cut - 2 * 8,
	       offsetof(struct taskstats, ac_tgid) - (cut - 2 * 8));
	memcpy(out + offsetof(struct taskstats, ac_tgid) + late, &ts.ac_tgid,
	       sizeof(ts) - offsetof(struct taskstats, ac_tgid));
	return sizeof(ts) + late;
}

static void taskstats_seeds(void)
{
	unsigned char rec[sizeof(struct taskstats) + V15_LATE];
	char name[32];
	unsigned int v;
	size_t len;

	for (v = 11; v <= 17; v++) {
		len = record(rec, v, 4242, 4240);
		snprintf(name, sizeof(name), "version-%u", v);
		save("taskstats", name, rec, len);
	}
	len = record(rec, 13, 4242, 4240);
	save("taskstats", "cut-before-tgid", rec,
	     offsetof(struct taskstats, ac_tgid) + 3);
	len = record(rec, 0, 4240, 4240);
	save("taskstats", "group-version-0", rec, len);
}

/* A taskstats exit message: the thread's part, and the group's. */
static struct nlmsghdr *exit_msg(char *buf, unsigned int version, uint32_t pid,
				 uint32_t tgid, bool group)
{
	unsigned char rec[sizeof(struct taskstats) + V15_LATE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;
	struct nlattr *nest;
	size_t len;

	nlh->nlmsg_type = 0x17; /* the family's id, as the kernel gave it */
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = TASKSTATS_CMD_NEW;
	g->version = TASKSTATS_GENL_VERSION;
	nest = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_PID);
	mnl_attr_put_u32(nlh, TASKSTATS_TYPE_PID, pid);
	len = record(rec, version, pid, tgid);
	mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, len, rec);
	mnl_attr_nest_end(nlh, nest);
	if (group) {
		nest = mnl_attr_nest_start(nlh, TASKSTATS_TYPE_AGGR_TGID);
		mnl_attr_put_u32(nlh, TASKSTATS_TYPE_TGID, tgid);
		/* The group's record, in the thread's layout, may say 0. */
		len = record(rec, version, tgid, tgid);
		memset(rec, 0, sizeof(uint16_t));
		mnl_attr_put(nlh, TASKSTATS_TYPE_STATS, len, rec);
		mnl_attr_nest_end(nlh, nest);
	}
	return nlh;
}

/* A proc connector fork record of @pid of @tgid. */
static struct nlmsghdr *fork_msg(char *buf, uint32_t pid, uint32_t tgid)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct proc_event ev;
	struct cn_msg *cn;

	nlh->nlmsg_type = NLMSG_DONE;
	cn = mnl_nlmsg_put_extra_header(nlh, sizeof(*cn) + sizeof(ev));
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(ev);
	memset(&ev, 0, sizeof(ev));
	ev.what = PROC_EVENT_FORK;
	ev.timestamp_ns = 123456789000;
	ev.event_data.fork.parent_pid = 1;
	ev.event_data.fork.parent_tgid = 1;
	ev.event_data.fork.child_pid = (int)pid;
	ev.event_data.fork.child_tgid = (int)tgid;
	memcpy(cn->data, &ev, sizeof(ev));
	return nlh;
}

static void netlink_seeds(void)
{
	static char buf[8192] __attribute__((aligned(8)));
	struct nlmsghdr *nlh;
	size_t len = 0;

	nlh = exit_msg(buf, 13, 4240, 4240, false);
	save("netlink", "exit-lone-thread", buf, nlh->nlmsg_len);
	nlh = exit_msg(buf, 15, 4242, 4240, true);
	save("netlink", "exit-last-thread-v15", buf, nlh->nlmsg_len);
	nlh = fork_msg(buf, 4242, 4240);
	save("netlink", "fork", buf, nlh->nlmsg_len);

	nlh = fork_msg(buf, 4243, 4240);
	len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = exit_msg(buf + len, 16, 4243, 4240, false);
	len += NLMSG_ALIGN(nlh->nlmsg_len);
	nlh = exit_msg(buf + len, 16, 4240, 4240, true);
	len += nlh->nlmsg_len;
	save("netlink", "burst", buf, len);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: make-seeds CORPUS_DIR\n");
		return 2;
	}
	corpus = argv[1];
	taskstats_seeds();
	netlink_seeds();
	return 0;
}
