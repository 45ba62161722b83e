// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_log.c — `blackout log dump LOG [--json]`: print a recorder log, one
 * operation per line. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "blackout/json.h"
#include "blackout/rec.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

enum { OPT_JSON = CLI_LONG };
static const struct cli_opt dump_opts[] = {
    {OPT_JSON, "json", NULL, "one JSON object: geometry and an array of operations", 0}, {0}};
static const struct cli_spec dump_spec = {
    "log dump",
    "print a recorder log, one operation per line",
    "[--json] LOG",
    "Prints an I/O log written by the recorder (format: docs/log-format.md), one\n"
    "operation per line: index, operation, first sector, sector count, flags, the\n"
    "result the device gave, and a 64-bit hash of written data (or a marker's name).\n"
    "Control bytes in marker names are printed escaped (\\n, \\xHH). A truncated,\n"
    "corrupted or malformed log is reported with the record, the byte offset and\n"
    "the field at fault; LOG must be a regular file of at most 1 GiB.\n",
    dump_opts,
    1,
    1,
    "0 done, 1 a log that cannot be read or is malformed, 2 usage error.",
    "$ blackout log dump run.log\n$ blackout log dump --json run.log | jq '.ops | length'\n",
    NULL};
static const struct cli_spec *const log_actions[] = {&dump_spec, NULL};
static const struct cli_spec log_spec = {
    "log",
    "print an I/O log written by the recorder (log dump)",
    NULL,
    NULL,
    NULL,
    0,
    0,
    "0 done, 1 a log that cannot be read or is malformed, 2 usage error.",
    "$ blackout log dump run.log\n",
    log_actions};

/* " result=-5 (Input/output error)"; never negates a result that is no errno. */
static void print_result(int result)
{
	if (result == 0)
		return;
	printf(" result=%d", result);
	if (result < 0 && result >= -4095)
		printf(" (%s)", strerror(-result));
	else
		printf(" (not an errno)");
}

/* A mark name on one line, control and non-ASCII bytes escaped. */
static void print_mark(const char *name)
{
	char buf[4 * REC_MARK_MAX + 1];
	bo_escape(buf, sizeof buf, name, strlen(name));
	printf(" %s", buf);
}

static int dump(const char *path, bool json)
{
	struct rec_log *log;
	struct bo_err err = {{0}};
	int rc = rec_log_load(path, &log, &err);
	if (rc)
		return cli_fail("log", "%s", bo_errstr(&err, rc));
	uint32_t ss = rec_log_sector_size(log);
	size_t n = rec_log_len(log);
	json_t *ops = json ? json_array() : NULL;
	if (json && !ops)
		return cli_fail("log", "out of memory");
	unsigned nd = rec_log_ndev(log);
	if (!json)
		printf("# %zu operations, %u-byte sectors, %" PRIu64 " sectors\n", n, ss,
		       rec_log_nr_sectors(log));
	for (unsigned d = 0; !json && nd > 1 && d < nd; d++)
		printf("# device %u: %" PRIu64 " sectors\n", d, rec_log_dev_sectors(log, d));
	for (size_t i = 0; i < n; i++) {
		const struct rec_entry *e = rec_log_get(log, i);
		uint64_t h = e->op == REC_WRITE
		                 ? bo_hash64(BO_HASH64_INIT, e->data, (size_t)e->count * ss)
		                 : 0;
		if (json) {
			json_t *o =
			    json_pack("{s:I,s:s}", "i", (json_int_t)i, "op", rec_op_name(e->op));
			if (nd > 1 && e->op != REC_MARK)
				json_object_set_new(o, "dev", json_integer(e->dev));
			if (e->op == REC_MARK)
				json_object_set_new(o, "name", bo_json_text(e->mark));
			else if (e->op != REC_FLUSH) {
				json_object_set_new(o, "lba", json_integer((json_int_t)e->lba));
				json_object_set_new(o, "count", json_integer(e->count));
			}
			if (e->op == REC_WRITE) {
				char hex[17];
				snprintf(hex, sizeof(hex), "%016" PRIx64, h);
				json_object_set_new(o, "fua", json_boolean(e->flags & BLK_FUA));
				json_object_set_new(o, "hash", json_string(hex));
			}
			json_object_set_new(o, "result", json_integer(e->result));
			json_array_append_new(ops, o);
			continue;
		}
		printf("%6zu %-7s", i, rec_op_name(e->op));
		if (nd > 1 && e->op != REC_MARK)
			printf(" dev=%u", e->dev);
		if (e->op == REC_MARK)
			print_mark(e->mark);
		else if (e->op != REC_FLUSH)
			printf(" lba=%" PRIu64 " count=%u", e->lba, e->count);
		if (e->op == REC_WRITE)
			printf("%s data=%016" PRIx64, e->flags & BLK_FUA ? " fua" : "", h);
		print_result(e->result);
		putchar('\n');
	}
	if (json) {
		json_t *top = json_pack("{s:i,s:I}", "sector_size", (int)ss, "nr_sectors",
		                        (json_int_t)rec_log_nr_sectors(log));
		if (top && nd > 1) {
			json_t *devs = json_array();
			for (unsigned d = 0; d < nd; d++)
				json_array_append_new(
				    devs, json_integer((json_int_t)rec_log_dev_sectors(log, d)));
			json_object_set_new(top, "devices", devs);
		}
		if (top)
			json_object_set_new(top, "ops", ops);
		bo_json_write(top, stdout, 0);
	}
	rec_log_free(log);
	return 0;
}

int cmd_log(int argc, char **argv)
{
	int rc = 0;
	const struct cli_spec *act = cli_action(&log_spec, argc, argv, &rc);
	if (!act)
		return rc;
	bool json = false;
	struct cli_parse p;
	int k;
	cli_parse_start(&p, act, argc - 1, argv + 1);
	while ((k = cli_next(&p)) > 0)
		json = true;
	if (k < 0)
		return p.status;
	return dump(p.args[0], json);
}
