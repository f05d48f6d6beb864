/*
 * config: the INI configuration, parsed with inih and checked key by key.
 *
 * inih calls a handler for every "key = value" but does not say on which
 * line, says nothing of a section without keys, and treats an indented
 * line as the continuation of the previous value. So the file is fed to
 * inih through a line reader of our own: it counts physical lines, takes
 * the blanks off the start of each line (an indented key is a key), checks
 * section headers, catches lines longer than inih's buffer, and ends the
 * file at the first error. Every error names the file, the line and,
 * where there is one, the section and key.
 *
 * Decisions: keys and values are case-sensitive; a key given twice is an
 * error (the second would silently win otherwise); a section may appear
 * more than once; inih also takes ':' for '='.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ini.h>

#include "config.h"

/* The largest tsc_hz taken: 1 THz, far above any real counter. */
#define CONFIG_TSC_HZ_MAX 1000000000000ULL

enum config_key {
	KEY_MAX_SIZE,
	KEY_UNITS,
	KEY_TSC_HZ,
	KEY_PROC,
	KEY_SYS,
	KEY_TASKS,
	KEY_HIDEPID,
	KEY_GID,
	KEY_KEEP,
	KEY_MAX_TASKS,
	KEY_READER_SNAPSHOTS,
	KEY_TOTAL_SNAPSHOTS,
	KEY_READER_VIEWS,
	KEY_COUNT,
};

struct key_def {
	const char *section;
	const char *name;
	/* Parse @value into @cfg; 0, or -EINVAL with a message in @why. */
	int (*parse)(struct config *cfg, const char *value, char *why,
		     size_t whylen);
};

struct parse_state {
	const char *path;
	FILE *file;
	unsigned int line; /* the physical line inih is working on */
	char section[64]; /* the section of that line, for messages */
	struct config cfg;
	bool seen[KEY_COUNT];
	unsigned int err_line; /* 0: no error yet */
	char err[320];
};

/*
 * parse_uint - @value as a decimal integer in @min..@max: digits only,
 * no sign, no blanks. A negative number or one too large for any type
 * is out of range; anything else that is not digits is not a number,
 * and @what says what was wanted instead.
 */
static int parse_uint(const char *value, uint64_t min, uint64_t max,
		      const char *what, uint64_t *out, char *why, size_t whylen)
{
	const char *p = value[0] == '-' ? value + 1 : value;
	bool over = false;
	uint64_t n = 0;

	if (*p < '0' || *p > '9') {
		snprintf(why, whylen, "'%s' is not %s", value, what);
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int digit = (unsigned int)(*p - '0');

		if (n > (max - digit) / 10)
			over = true;
		else
			n = n * 10 + digit;
	}
	if (*p) {
		snprintf(why, whylen, "'%s' is not %s", value, what);
		return -EINVAL;
	}
	if (value[0] == '-' || over || n < min) {
		snprintf(why, whylen, "%s is out of range %llu..%llu", value,
			 (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = n;
	return 0;
}

/* parse_uint into an unsigned int field of the configuration. */
static int parse_field(const char *value, uint64_t min, uint64_t max,
		       const char *what, unsigned int *field, char *why,
		       size_t whylen)
{
	uint64_t n;
	int ret;

	ret = parse_uint(value, min, max, what, &n, why, whylen);
	if (ret == 0)
		*field = (unsigned int)n;
	return ret;
}

static int parse_max_size(struct config *cfg, const char *value, char *why,
			  size_t whylen)
{
	return parse_field(value, 1, CONFIG_GROUP_MAX, "a number",
			   &cfg->group_max_size, why, whylen);
}

static int parse_units(struct config *cfg, const char *value, char *why,
		       size_t whylen)
{
	if (units_parse(value, &cfg->units) < 0) {
		snprintf(why, whylen, "'%s' is not windows or unix", value);
		return -EINVAL;
	}
	return 0;
}

static int parse_tasks(struct config *cfg, const char *value, char *why,
		       size_t whylen)
{
	if (task_source_parse(value, &cfg->tasks) < 0) {
		snprintf(why, whylen, "'%s' is not auto, bpf or procfs", value);
		return -EINVAL;
	}
	return 0;
}

static int parse_tsc_hz(struct config *cfg, const char *value, char *why,
			size_t whylen)
{
	uint64_t hz;
	int ret;

	if (strcmp(value, "auto") == 0) {
		cfg->tsc_hz = 0;
		return 0;
	}
	ret = parse_uint(value, 1, CONFIG_TSC_HZ_MAX, "auto or a number of Hz",
			 &hz, why, whylen);
	if (ret == 0)
		cfg->tsc_hz = hz;
	return ret;
}

static int parse_root(char *root, const char *value, char *why, size_t whylen)
{
	size_t len = strlen(value);

	if (value[0] != '/') {
		snprintf(why, whylen, "'%s' is not an absolute path", value);
		return -EINVAL;
	}
	if (len >= CONFIG_ROOT_MAX) {
		snprintf(why, whylen, "path longer than %d bytes",
			 CONFIG_ROOT_MAX - 1);
		return -EINVAL;
	}
	/* "/proc/" and "/proc" are the same root; "/" stays "/". */
	while (len > 1 && value[len - 1] == '/')
		len--;
	memcpy(root, value, len);
	root[len] = '\0';
	return 0;
}

static int parse_proc(struct config *cfg, const char *value, char *why,
		      size_t whylen)
{
	return parse_root(cfg->proc_root, value, why, whylen);
}

static int parse_sys(struct config *cfg, const char *value, char *why,
		     size_t whylen)
{
	return parse_root(cfg->sys_root, value, why, whylen);
}

static int parse_hidepid(struct config *cfg, const char *value, char *why,
			 size_t whylen)
{
	if (hidepid_parse(value, false, &cfg->hidepid) == 0)
		return 0;
	snprintf(why, whylen, "'%s' is not auto, off, noaccess or invisible",
		 value);
	return -EINVAL;
}

/*
 * none is "not given": with hidepid = auto the gid then comes from
 * procfs, as it does when the key is absent, so that the shipped file
 * (which spells every default out) means what an empty one means.
 */
static int parse_gid(struct config *cfg, const char *value, char *why,
		     size_t whylen)
{
	uint64_t gid;
	int ret;

	if (strcmp(value, "none") == 0) {
		cfg->access_gid = ACCESS_GID_NONE;
		cfg->access_gid_set = false;
		return 0;
	}
	ret = parse_uint(value, 0, ACCESS_GID_MAX, "none or a GID", &gid, why,
			 whylen);
	if (ret == 0) {
		cfg->access_gid = (gid_t)gid;
		cfg->access_gid_set = true;
	}
	return ret;
}

static int parse_keep(struct config *cfg, const char *value, char *why,
		      size_t whylen)
{
	return parse_field(value, 0, CONFIG_KEEP_MAX, "a number of seconds",
			   &cfg->exited_keep_s, why, whylen);
}

static int parse_max_tasks(struct config *cfg, const char *value, char *why,
			   size_t whylen)
{
	return parse_field(value, 1, CONFIG_MAX_TASKS_MAX, "a number",
			   &cfg->exited_max_tasks, why, whylen);
}

static int parse_reader_snapshots(struct config *cfg, const char *value,
				  char *why, size_t whylen)
{
	return parse_field(value, 1, CONFIG_SNAPSHOTS_MAX, "a number of MiB",
			   &cfg->reader_snapshots_mib, why, whylen);
}

static int parse_total_snapshots(struct config *cfg, const char *value,
				 char *why, size_t whylen)
{
	return parse_field(value, 1, CONFIG_SNAPSHOTS_MAX, "a number of MiB",
			   &cfg->total_snapshots_mib, why, whylen);
}

static int parse_reader_views(struct config *cfg, const char *value, char *why,
			      size_t whylen)
{
	return parse_field(value, 1, CONFIG_READER_VIEWS_MAX, "a number",
			   &cfg->reader_views, why, whylen);
}

static const struct key_def keys[KEY_COUNT] = {
	[KEY_MAX_SIZE] = { "groups", "max_size", parse_max_size },
	[KEY_UNITS] = { "format", "units", parse_units },
	[KEY_TSC_HZ] = { "clock", "tsc_hz", parse_tsc_hz },
	[KEY_PROC] = { "sources", "proc", parse_proc },
	[KEY_SYS] = { "sources", "sys", parse_sys },
	[KEY_TASKS] = { "sources", "tasks", parse_tasks },
	[KEY_HIDEPID] = { "access", "hidepid", parse_hidepid },
	[KEY_GID] = { "access", "gid", parse_gid },
	[KEY_KEEP] = { "exited", "keep", parse_keep },
	[KEY_MAX_TASKS] = { "exited", "max_tasks", parse_max_tasks },
	[KEY_READER_SNAPSHOTS] = { "limits", "reader_snapshots",
				   parse_reader_snapshots },
	[KEY_TOTAL_SNAPSHOTS] = { "limits", "total_snapshots",
				  parse_total_snapshots },
	[KEY_READER_VIEWS] = { "limits", "reader_views", parse_reader_views },
};

static bool known_section(const char *section)
{
	int i;

	for (i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].section, section) == 0)
			return true;
	return false;
}

/* Record the first error only; the reader then ends the file. */
static void fail(struct parse_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct parse_state *st, const char *fmt, ...)
{
	va_list ap;

	if (st->err_line)
		return;
	st->err_line = st->line;
	va_start(ap, fmt);
	vsnprintf(st->err, sizeof(st->err), fmt, ap);
	va_end(ap);
}

static int handle_key(void *user, const char *section, const char *name,
		      const char *value)
{
	struct parse_state *st = user;
	char why[256];
	int i;

	if (!*section) {
		fail(st, "%s: key before any [section]", name);
		return 0;
	}
	for (i = 0; i < KEY_COUNT; i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].name, name))
			break;
	if (i == KEY_COUNT) {
		/* An unknown section failed at its header already. */
		fail(st, "[%s] %s: unknown key", section, name);
		return 0;
	}
	if (st->seen[i]) {
		fail(st, "[%s] %s: given twice", section, name);
		return 0;
	}
	st->seen[i] = true;
	if (!*value) {
		fail(st, "[%s] %s: no value", section, name);
		return 0;
	}
	if (keys[i].parse(&st->cfg, value, why, sizeof(why)) < 0) {
		fail(st, "[%s] %s: %s", section, name, why);
		return 0;
	}
	return 1;
}

/* A section header "[name]": remember it, and fail on an unknown one. */
static void check_section_line(struct parse_state *st, const char *line)
{
	const char *end;
	size_t len;

	if (*line != '[')
		return;
	end = strchr(line, ']');
	if (!end)
		return; /* inih reports it as a syntax error */
	len = (size_t)(end - line - 1);
	if (len >= sizeof(st->section))
		len = sizeof(st->section) - 1;
	memcpy(st->section, line + 1, len);
	st->section[len] = '\0';
	if (!known_section(st->section))
		fail(st, "[%s]: unknown section", st->section);
}

/*
 * The rest of a line longer than inih's buffer. Skipped when the part
 * read is a comment or ends in one ("; ..." after a blank); otherwise
 * an error naming the key when the part read shows one.
 */
static void skip_long_line(struct parse_state *st, const char *line, int max)
{
	size_t name_end = strcspn(line, "=:"), len = name_end;
	const char *semi = strchr(line, ';');
	int c;

	do
		c = getc(st->file);
	while (c != '\n' && c != EOF);
	if (*line == ';' || *line == '#' ||
	    (semi && semi > line && (semi[-1] == ' ' || semi[-1] == '\t')))
		return;
	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	if (line[name_end] && len > 0 && *line != '[')
		fail(st, "[%s] %.*s: line longer than %d characters",
		     st->section, (int)len, line, max);
	else
		fail(st, "line longer than %d characters", max);
}

/*
 * inih's line reader: fgets that counts physical lines, strips leading
 * blanks (and a UTF-8 byte order mark), checks section headers and
 * reports the end of the file at the first error.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	size_t skip, len;
	int c;

	if (st->err_line || !fgets(str, num, st->file))
		return NULL;
	st->line++;
	skip = st->line == 1 && strncmp(str, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
	skip += strspn(str + skip, " \t");
	len = strlen(str + skip);
	memmove(str, str + skip, len + 1);

	if (strchr(str, '\n') == NULL && (c = getc(st->file)) != EOF) {
		/* Exactly num - 1 characters and a newline still fit. */
		if (c != '\n')
			skip_long_line(st, str, num - 1);
	}
	check_section_line(st, str);
	return str;
}

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->group_max_size = CONFIG_GROUP_MAX;
	cfg->units = UNITS_WINDOWS;
	cfg->tsc_hz = 0;
	strcpy(cfg->proc_root, "/proc");
	strcpy(cfg->sys_root, "/sys");
	cfg->tasks = TASKS_AUTO;
	cfg->hidepid = HIDEPID_AUTO;
	cfg->access_gid = ACCESS_GID_NONE;
	cfg->access_gid_set = false;
	cfg->exited_keep_s = CONFIG_KEEP_DEFAULT;
	cfg->exited_max_tasks = CONFIG_MAX_TASKS_DEFAULT;
	cfg->reader_snapshots_mib = CONFIG_READER_SNAPSHOTS_DEFAULT;
	cfg->total_snapshots_mib = CONFIG_TOTAL_SNAPSHOTS_DEFAULT;
	cfg->reader_views = CONFIG_READER_VIEWS_DEFAULT;
}

int config_load(struct config *cfg, const char *path, char *err, size_t errlen)
{
	struct parse_state st = { .path = path };
	int ret, saved;

	config_defaults(&st.cfg);
	st.file = fopen(path, "r");
	if (!st.file) {
		saved = errno;
		snprintf(err, errlen, "%s: cannot open: %s", path,
			 strerror(saved));
		return -saved;
	}
	errno = 0;
	ret = ini_parse_stream(read_line, &st, handle_key, &st);
	if (ferror(st.file)) {
		saved = errno ? errno : EIO;
		fclose(st.file);
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(saved));
		return -saved;
	}
	fclose(st.file);
	if (ret < 0) {
		snprintf(err, errlen, "%s: cannot parse: out of memory", path);
		return -ENOMEM;
	}
	/* inih's own line number is right for lines it cannot parse. */
	if (ret > 0 && (!st.err_line || (unsigned int)ret < st.err_line)) {
		st.err_line = (unsigned int)ret;
		snprintf(st.err, sizeof(st.err),
			 "not a [section], a key = value or a comment");
	}
	if (st.err_line) {
		snprintf(err, errlen, "%s:%u: %s", path, st.err_line, st.err);
		return -EINVAL;
	}
	*cfg = st.cfg;
	return 0;
}

void config_engine_opts(const struct config *cfg, struct engine_opts *opts)
{
	opts->group_max_size = cfg->group_max_size;
	opts->units = cfg->units;
	opts->tsc_hz = cfg->tsc_hz;
	opts->proc_root = cfg->proc_root;
	opts->sys_root = cfg->sys_root;
	opts->tasks = cfg->tasks;
}

int config_access(const struct config *cfg, const char *mountinfo_path,
		  struct access_policy *out, char *err, size_t errlen)
{
	return access_resolve(cfg->hidepid,
			      cfg->access_gid_set ? &cfg->access_gid : NULL,
			      cfg->proc_root, mountinfo_path, out, err, errlen);
}
