/*
 * config: the INI configuration, parsed with inih and checked key by key.
 *
 * inih calls a handler for every "key = value" but does not say on which
 * line, and says nothing of a section without keys. So the file is fed
 * to inih through a reader of our own that counts lines and checks
 * section headers: every error names the file, the line and the key.
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
	unsigned int line; /* the line inih is working on */
	struct config cfg;
	bool seen[KEY_COUNT];
	unsigned int err_line; /* 0: no error yet */
	char err[256];
};

static int parse_max_size(struct config *cfg, const char *value, char *why,
			  size_t whylen)
{
	unsigned int n = 0;
	const char *p;

	for (p = value; *p >= '0' && *p <= '9' && n <= CONFIG_GROUP_MAX; p++)
		n = n * 10 + (unsigned int)(*p - '0');
	if (p == value || (*p && (*p < '0' || *p > '9'))) {
		snprintf(why, whylen, "'%s' is not a number", value);
		return -EINVAL;
	}
	if (*p || n < 1 || n > CONFIG_GROUP_MAX) {
		snprintf(why, whylen, "%s is out of range 1..%d", value,
			 CONFIG_GROUP_MAX);
		return -EINVAL;
	}
	cfg->group_max_size = n;
	return 0;
}

static int parse_units(struct config *cfg, const char *value, char *why,
		       size_t whylen)
{
	if (strcmp(value, "windows") == 0) {
		cfg->units = UNITS_WINDOWS;
	} else if (strcmp(value, "unix") == 0) {
		cfg->units = UNITS_UNIX;
	} else {
		snprintf(why, whylen, "'%s' is not windows or unix", value);
		return -EINVAL;
	}
	return 0;
}

static int parse_tsc_hz(struct config *cfg, const char *value, char *why,
			size_t whylen)
{
	unsigned long long hz = 0;
	const char *p;

	if (strcmp(value, "auto") == 0) {
		cfg->tsc_hz = 0;
		return 0;
	}
	for (p = value; *p >= '0' && *p <= '9'; p++) {
		if (hz > CONFIG_TSC_HZ_MAX)
			break;
		hz = hz * 10 + (unsigned long long)(*p - '0');
	}
	if (p == value || (*p && (*p < '0' || *p > '9'))) {
		snprintf(why, whylen, "'%s' is not auto or a number of Hz",
			 value);
		return -EINVAL;
	}
	if (*p || hz < 1 || hz > CONFIG_TSC_HZ_MAX) {
		snprintf(why, whylen, "%s is out of range 1..%llu", value,
			 CONFIG_TSC_HZ_MAX);
		return -EINVAL;
	}
	cfg->tsc_hz = hz;
	return 0;
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

static const struct key_def keys[KEY_COUNT] = {
	[KEY_MAX_SIZE] = { "groups", "max_size", parse_max_size },
	[KEY_UNITS] = { "format", "units", parse_units },
	[KEY_TSC_HZ] = { "clock", "tsc_hz", parse_tsc_hz },
	[KEY_PROC] = { "sources", "proc", parse_proc },
	[KEY_SYS] = { "sources", "sys", parse_sys },
};

static bool known_section(const char *section)
{
	int i;

	for (i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].section, section) == 0)
			return true;
	return false;
}

/* Record the first error only: it is the one on the earliest line. */
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
	char why[200];
	int i;

	if (!known_section(section)) {
		fail(st, "[%s]: unknown section", section);
		return 0;
	}
	for (i = 0; i < KEY_COUNT; i++)
		if (!strcmp(keys[i].section, section) &&
		    !strcmp(keys[i].name, name))
			break;
	if (i == KEY_COUNT) {
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

/* A section header "[name]" (blanks and a comment allowed around). */
static void check_section_line(struct parse_state *st, const char *line)
{
	char name[64];
	size_t len;
	const char *end;

	while (*line == ' ' || *line == '\t')
		line++;
	if (*line != '[')
		return;
	end = strchr(line, ']');
	if (!end)
		return; /* inih reports it as a syntax error */
	len = (size_t)(end - line - 1);
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, line + 1, len);
	name[len] = '\0';
	if (!known_section(name))
		fail(st, "[%s]: unknown section", name);
}

/* inih's line reader: fgets that counts lines and checks sections. */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	char *line = fgets(str, num, st->file);

	if (line) {
		st->line++;
		check_section_line(st, line);
	}
	return line;
}

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->group_max_size = CONFIG_GROUP_MAX;
	cfg->units = UNITS_WINDOWS;
	cfg->tsc_hz = 0;
	strcpy(cfg->proc_root, "/proc");
	strcpy(cfg->sys_root, "/sys");
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
	ret = ini_parse_stream(read_line, &st, handle_key, &st);
	if (ferror(st.file)) {
		saved = errno ? errno : EIO;
		fclose(st.file);
		snprintf(err, errlen, "%s: cannot read: %s", path,
			 strerror(saved));
		return -saved;
	}
	fclose(st.file);
	/* inih's own line number is right for lines it cannot parse. */
	if (ret > 0 && (!st.err_line || (unsigned int)ret < st.err_line)) {
		st.err_line = (unsigned int)ret;
		snprintf(st.err, sizeof(st.err),
			 "not a section, a key = value or a comment");
	}
	if (st.err_line) {
		snprintf(err, errlen, "%s:%u: %s", path, st.err_line, st.err);
		return -EINVAL;
	}
	*cfg = st.cfg;
	return 0;
}

const char *config_units_name(enum units units)
{
	return units == UNITS_UNIX ? "unix" : "windows";
}
