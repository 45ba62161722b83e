// SPDX-License-Identifier: GPL-2.0-or-later
/* bo-leveldb.c — the LevelDB example of blackout app (docs/apps.md), against Debian's
 * libleveldb: `put DIR SYNC N` writes key:1..N, acknowledging each once its Put returned;
 * `check DIR ACKS` opens the database as LevelDB would after the crash (no repair) and
 * looks up every acknowledged key. Not a benchmark, not a general LevelDB tool. */
#include <errno.h>
#include <leveldb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* the checker's exit statuses (docs/apps.md): 1 lost acknowledged work, 2 corruption */
enum { OK = 0, LOST = 1, CORRUPT = 2, USAGE = 4 };
#define MAXKEYS 100000

static void value_of(unsigned long i, char *buf, size_t len)
{
	/* long enough that a few Puts fill a log block, and each one's own */
	int n = snprintf(buf, len, "value %lu ", i);
	for (size_t k = (size_t)n; k + 1 < len; k++)
		buf[k] = (char)('a' + (i + k) % 26);
	buf[len - 1] = '\0';
}

/* bo_ack TEXT, the guest's acknowledgement command, run once the Put returned */
static int ack(const char *text)
{
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("bo_ack", "bo_ack", text, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static int put(const char *dir, const char *sync, const char *count)
{
	char *end;
	unsigned long n = strtoul(count, &end, 10);
	if (*end || n == 0 || n > MAXKEYS || (strcmp(sync, "sync") && strcmp(sync, "nosync"))) {
		fprintf(stderr, "usage: bo-leveldb put DIR sync|nosync N (1..%d)\n", MAXKEYS);
		return USAGE;
	}
	leveldb_options_t *o = leveldb_options_create();
	leveldb_options_set_create_if_missing(o, 1);
	char *err = NULL;
	leveldb_t *db = leveldb_open(o, dir, &err);
	if (!db) {
		printf("cannot open %s: %s\n", dir, err);
		leveldb_free(err);
		leveldb_options_destroy(o);
		return 1;
	}
	leveldb_writeoptions_t *w = leveldb_writeoptions_create();
	leveldb_writeoptions_set_sync(w, strcmp(sync, "sync") == 0);
	int rc = 0;
	for (unsigned long i = 1; i <= n && rc == 0; i++) {
		char key[32], val[700], text[48];
		snprintf(key, sizeof(key), "key:%lu", i);
		value_of(i, val, sizeof(val));
		leveldb_put(db, w, key, strlen(key), val, strlen(val), &err);
		if (err) {
			printf("Put %s: %s\n", key, err);
			leveldb_free(err);
			rc = 1;
			break;
		}
		snprintf(text, sizeof(text), "put %s", key);
		if (ack(text)) {
			printf("bo_ack %s failed\n", text);
			rc = 1;
		}
	}
	leveldb_close(db);
	leveldb_writeoptions_destroy(w);
	leveldb_options_destroy(o);
	return rc;
}

/* The acknowledged key numbers, "put key:I" one a line; a line of any other form is the
 * checker's own failure (USAGE), not a verdict on the database. */
static int read_acks(const char *path, unsigned long *keys, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("cannot read %s: %s\n", path, strerror(errno));
		return USAGE;
	}
	char line[300];
	*n = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long i = 0;
		if (strncmp(line, "put key:", 8) == 0)
			i = strtoul(line + 8, &end, 10);
		if (i == 0 || i > MAXKEYS || (*end != '\n' && *end) || *n == MAXKEYS) {
			printf("%s: line %zu is not \"put key:N\"\n", path, *n + 1);
			rc = USAGE;
		} else {
			keys[(*n)++] = i;
		}
	}
	fclose(f);
	return rc;
}

/* A directory without LevelDB's CURRENT is a database never created (or its creation
 * lost): nothing to open, so no open is tried, which would make one. */
static int check(const char *dir, const char *acks)
{
	static unsigned long keys[MAXKEYS];
	size_t n;
	int rc = read_acks(acks, keys, &n);
	if (rc)
		return rc;
	char current[4200];
	struct stat st;
	snprintf(current, sizeof(current), "%s/CURRENT", dir);
	if (stat(current, &st) != 0) {
		if (n == 0)
			return OK;
		printf("no database (no CURRENT), though %zu puts were acknowledged\n", n);
		return LOST;
	}
	leveldb_options_t *o = leveldb_options_create();
	leveldb_options_set_paranoid_checks(o, 1);
	char *err = NULL;
	leveldb_t *db = leveldb_open(o, dir, &err);
	if (!db) {
		/* LevelDB refuses it: the user would have to run RepairDB, which may drop data */
		printf("LevelDB refuses to open the database: %.200s\n", err);
		leveldb_free(err);
		leveldb_options_destroy(o);
		return CORRUPT;
	}
	leveldb_readoptions_t *r = leveldb_readoptions_create();
	leveldb_readoptions_set_verify_checksums(r, 1);
	char lost[200] = "";
	size_t nlost = 0, l = 0;
	rc = OK;
	for (size_t k = 0; k < n && rc != CORRUPT; k++) {
		char key[32], want[700];
		snprintf(key, sizeof(key), "key:%lu", keys[k]);
		value_of(keys[k], want, sizeof(want));
		size_t vlen = 0;
		char *v = leveldb_get(db, r, key, strlen(key), &vlen, &err);
		if (err) {
			printf("Get %s: %.200s\n", key, err);
			leveldb_free(err);
			err = NULL;
			rc = CORRUPT;
		} else if (!v) {
			nlost++;
			if (l < sizeof(lost) - 16)
				l += (size_t)snprintf(lost + l, sizeof(lost) - l, " %lu", keys[k]);
			rc = LOST;
		} else if (vlen != strlen(want) || memcmp(v, want, vlen) != 0) {
			printf("%s holds another value (%zu bytes)\n", key, vlen);
			rc = CORRUPT;
		}
		leveldb_free(v);
	}
	if (rc == LOST)
		printf("acknowledged keys missing (%zu of %zu):%s\n", nlost, n, lost);
	leveldb_readoptions_destroy(r);
	leveldb_close(db);
	leveldb_options_destroy(o);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "put") == 0)
		return put(argv[2], argv[3], argv[4]);
	if (argc == 4 && strcmp(argv[1], "check") == 0)
		return check(argv[2], argv[3]);
	fprintf(stderr, "usage: bo-leveldb put DIR sync|nosync N | bo-leveldb check DIR ACKS\n");
	return USAGE;
}
