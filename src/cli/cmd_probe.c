// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_probe.c — `blackout probe write|verify|listen|spec`: a real device (or a stack
 * spec in-process) tested across one power pull. Parsing and printing only; the work is
 * src/probe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/probe.h"
#include "blackout/util.h"
#include "cli/cli.h"

static void help(FILE *out)
{
	fprintf(
	    out,
	    "usage: blackout probe write DEVICE (--log FILE | --listener HOST:PORT) [--size N]\n"
	    "           [--offset N] [--ops N] [--seed N] [--settle SECONDS] [--on-ready CMD]\n"
	    "           [--destroy-contents]\n"
	    "       blackout probe verify DEVICE --log FILE\n"
	    "       blackout probe timing DEVICE [--max-eb N] [--destroy-contents]\n"
	    "       blackout probe listen --port PORT --out FILE [--bind ADDR]\n"
	    "       blackout probe spec SPEC [--seed N] [--cut-at N] [--size N] [--timing]\n\n"
	    "Does a device honour flushes and FUA, tear sectors, destroy data it was not\n"
	    "writing when the power goes? One pull answers for one sample (docs/probe.md).\n\n"
	    "  write   DESTROYS the device's contents from --offset (default 0) for --size\n"
	    "          bytes (default: the rest of it, at most 1 GiB): lays a self-describing\n"
	    "          pattern, flushes, waits --settle seconds (default 5), says when to pull\n"
	    "          the power (and runs --on-ready CMD with sh -c, e.g. to arm a switched\n"
	    "          outlet; the stream starts once it exits 0), then writes (O_DIRECT,\n"
	    "          some FUA, seeded by --seed) and flushes until the device\n"
	    "          fails (the pull) or --ops operations are done (default 10000, so\n"
	    "          a run nobody pulls ends; --ops 0: until the device fails); every\n"
	    "          write is announced before it\n"
	    "          is issued and every completed write and flush reported to the log: a\n"
	    "          file on ANOTHER device (--log, each line synced; the device itself\n"
	    "          or a file on its disk is refused) or a listener on\n"
	    "          another machine (--listener). Refuses a mounted device, one in use,\n"
	    "          and one holding a filesystem, partition table or volume signature\n"
	    "          unless --destroy-contents is given (a mount: never).\n"
	    "  verify  after the power is back: reads the region and holds it against the\n"
	    "          log: flushes honoured, FUA honoured, torn writes and sectors (and at\n"
	    "          what granularity), collateral damage to data not written since the\n"
	    "          last flush (its radius and the erase block it suggests). Read only.\n"
	    "  listen  a TCP server for 'write --listener': accepts one writer, appends its\n"
	    "          lines to FILE, synced as they arrive; ends when the writer closes.\n"
	    "  spec    the same write, pull and verify on a blackout stack spec in this\n"
	    "          process, the pull made by the model with seeded decisions (--seed,\n"
	    "          default 1) at the write in flight after --ops operations (default\n"
	    "          100), over the first --size bytes (default 2M).\n\n"
	    "Exit status: 0 done (verify: no broken promise seen), 3 verify saw a broken\n"
	    "promise (lost flushed or FUA data, torn sectors, collateral damage), 1 an\n"
	    "error, 2 usage.\n");
}

static int verdict_status(const struct probe_verdict *v)
{
	return !v->flush_honoured || !v->fua_honoured || v->torn_units ||
	               (v->collateral_measured && v->damaged)
	           ? 3
	           : 0;
}

struct opts {
	const char *dev, *log, *listener, *out, *bind, *on_ready;
	uint64_t size, offset, ops, seed, settle, port, cut_at, max_eb;
	bool destroy, seed_given, ops_given, timing;
};

static int parse(int argc, char **argv, struct opts *o)
{
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		struct {
			const char *name;
			uint64_t *dst;
			unsigned flags;
			uint64_t min, max;
		} nums[] = {
		    {"--size", &o->size, BO_NUM_SIZE, 4 * PROBE_BLOCK, UINT64_MAX / 2},
		    {"--offset", &o->offset, BO_NUM_SIZE, 0, UINT64_MAX / 2},
		    {"--ops", &o->ops, 0, 0, UINT64_MAX / 2},
		    {"--cut-at", &o->cut_at, 0, 1, UINT64_MAX / 2},
		    {"--max-eb", &o->max_eb, BO_NUM_SIZE, 16384, 1ull << 30},
		    {"--seed", &o->seed, BO_NUM_HEX, 0, UINT64_MAX},
		    {"--settle", &o->settle, 0, 0, 3600},
		    {"--port", &o->port, 0, 1, 65535},
		};
		bool done = false;
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]) && !done; k++) {
			if (strcmp(a, nums[k].name) != 0)
				continue;
			if (cli_num("probe", a, v, nums[k].flags, nums[k].min, nums[k].max,
			            nums[k].dst))
				return 2;
			o->seed_given |= nums[k].dst == &o->seed;
			o->ops_given |= nums[k].dst == &o->ops;
			i++;
			done = true;
		}
		if (done)
			continue;
		const char **s = !strcmp(a, "--log")        ? &o->log
		                 : !strcmp(a, "--listener") ? &o->listener
		                 : !strcmp(a, "--out")      ? &o->out
		                 : !strcmp(a, "--bind")     ? &o->bind
		                 : !strcmp(a, "--on-ready") ? &o->on_ready
		                                            : NULL;
		if (s) {
			if (!v)
				return cli_usage_error("probe", "%s needs a value", a);
			*s = v;
			i++;
		} else if (!strcmp(a, "--destroy-contents")) {
			o->destroy = true;
		} else if (!strcmp(a, "--timing")) {
			o->timing = true;
		} else if (a[0] == '-' || o->dev) {
			return cli_usage_error("probe", "unexpected argument '%s'", a);
		} else {
			o->dev = a;
		}
	}
	return 0;
}

static void write_opts(const struct opts *o, struct probe_write_opts *w)
{
	*w = (struct probe_write_opts){.dev = o->dev,
	                               .log = o->log,
	                               .offset = o->offset,
	                               .size = o->size,
	                               .ops = o->ops_given ? o->ops : PROBE_DEFAULT_OPS,
	                               .seed = o->seed,
	                               .seed_given = o->seed_given,
	                               .settle = o->settle,
	                               .on_ready = o->on_ready};
}

static int do_write(struct opts *o)
{
	if (!o->dev)
		return cli_usage_error("probe", "write needs a DEVICE");
	if (!o->log == !o->listener)
		return cli_usage_error("probe", "write needs one of --log FILE (on another device) "
		                                "or --listener HOST:PORT");
	if (o->offset % PROBE_BLOCK || o->size % PROBE_BLOCK)
		return cli_usage_error("probe", "--offset and --size must be multiples of 4096");
	struct bo_err err = {{0}};
	int rc = 0;
	/* --destroy-contents overrides a signature, never a mount */
	if ((rc = probe_safety_check(o->dev, !o->destroy, &err)) != 0)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	struct probe_write_opts w;
	write_opts(o, &w);
	struct probe_stream st;
	if (o->log) {
		rc = probe_write_logged(&w, &st, &err);
	} else {
		int sfd = -1;
		struct probe_sink sink;
		rc = probe_sink_tcp(o->listener, &sfd, &sink, &err);
		if (rc == 0) {
			rc = probe_write_device(&w, &sink, &st, &err);
			close(sfd);
		}
	}
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	printf("writes %llu (FUA %llu), flushes %llu acknowledged%s\n",
	       (unsigned long long)st.writes, (unsigned long long)st.fua_writes,
	       (unsigned long long)st.flushes,
	       st.stopped_by_error ? "; then the device failed (the pull?): restore power and "
	                             "run 'blackout probe verify'"
	       : w.ops && st.ops >= w.ops ? "; the stream's --ops are done (no pull came)"
	                                  : "");
	return 0;
}

static int do_verify(struct opts *o)
{
	if (!o->dev || !o->log)
		return cli_usage_error("probe", "verify needs a DEVICE and --log FILE");
	struct bo_err err = {{0}};
	struct probe_verdict v;
	int rc = probe_verify_device(o->dev, o->log, &v, &err);
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	probe_verdict_print(&v, stdout);
	return verdict_status(&v);
}

static int do_timing(struct opts *o)
{
	if (!o->dev)
		return cli_usage_error("probe", "timing needs a DEVICE");
	struct bo_err err = {{0}};
	int rc = probe_safety_check(o->dev, !o->destroy, &err);
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	struct bdev *d;
	rc = probe_fd_open(o->dev, true, &d, &err);
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	struct probe_timing_opts to = {.max_eb = o->max_eb};
	struct probe_timing t;
	rc = probe_timing_run(d, &to, &t, &err);
	blk_close(d);
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	printf("costs in nanoseconds (medians)\n");
	probe_timing_print(&t, stdout);
	return 0;
}

static int do_spec(struct opts *o)
{
	if (!o->dev)
		return cli_usage_error("probe", "spec needs a stack spec");
	if (o->timing) {
		struct probe_timing_opts to = {.max_eb = o->max_eb};
		struct probe_timing t;
		struct bo_err err = {{0}};
		int rc = probe_timing_spec(o->dev, &to, &t, &err);
		if (rc)
			return cli_fail("probe", "%s", bo_errstr(&err, rc));
		printf("costs in NAND work (programs + 10 x erases; medians)\n");
		probe_timing_print(&t, stdout);
		return 0;
	}
	struct probe_inproc_opts io = {.seed = o->seed_given ? o->seed : 1,
	                               .write = o->cut_at ? o->cut_at : 40,
	                               .region_bytes = o->size ? o->size : 2u << 20};
	struct probe_verdict v;
	struct bo_err err = {{0}};
	int rc = probe_inproc(o->dev, &io, &v, &err);
	if (rc)
		return cli_fail("probe", "%s", bo_errstr(&err, rc));
	probe_verdict_print(&v, stdout);
	return verdict_status(&v);
}

int cmd_probe(int argc, char **argv)
{
	if (argc < 2 || cli_is_help(argv[1])) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (int i = 2; i < argc; i++)
		if (cli_is_help(argv[i])) {
			help(stdout);
			return 0;
		}
	struct opts o = {.settle = 5};
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	const char *sub = argv[1];
	if (!strcmp(sub, "write"))
		return do_write(&o);
	if (!strcmp(sub, "verify"))
		return do_verify(&o);
	if (!strcmp(sub, "spec"))
		return do_spec(&o);
	if (!strcmp(sub, "timing"))
		return do_timing(&o);
	if (!strcmp(sub, "listen")) {
		if (!o.port || !o.out || o.dev)
			return cli_usage_error("probe", "listen needs --port PORT and --out FILE");
		struct bo_err err = {{0}};
		rc = probe_listen(o.bind, (unsigned)o.port, o.out, stderr, &err);
		return rc ? cli_fail("probe", "%s", bo_errstr(&err, rc)) : 0;
	}
	return cli_usage_error(
	    "probe", "unknown subcommand '%s' (write, verify, timing, listen, spec)", sub);
}
