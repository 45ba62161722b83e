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
#include "cli/cli_opts.h"

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

enum {
	OPT_LOG = CLI_LONG,
	OPT_LISTENER,
	OPT_SIZE,
	OPT_OFFSET,
	OPT_OPS,
	OPT_SEED,
	OPT_SETTLE,
	OPT_ON_READY,
	OPT_DESTROY,
	OPT_MAX_EB,
	OPT_PORT,
	OPT_OUT,
	OPT_BIND,
	OPT_CUT_AT,
	OPT_TIMING,
};

/* --log and --listener are the two places a write's log may go: one of them. */
enum { G_SINK = 1 };

#define O_DESTROY                                                                                  \
	{                                                                                          \
		OPT_DESTROY, "destroy-contents", NULL,                                             \
		    "write over a filesystem, partition table or volume signature (never a "       \
		    "mount)",                                                                      \
		    0, 0                                                                           \
	}

static const struct cli_opt write_opts_tab[] = {
    {OPT_LOG, "log", "FILE",
     "the log, each line synced: a file on ANOTHER device (the device itself or a file "
     "on its disk is refused)",
     G_SINK, G_SINK},
    {OPT_LISTENER, "listener", "HOST:PORT",
     "send the log to 'blackout probe listen' on another machine", G_SINK, G_SINK},
    {OPT_SIZE, "size", "N", "bytes to write over (default: the rest, at most 1 GiB)", 0, 0},
    {OPT_OFFSET, "offset", "N", "where the region starts (default 0)", 0, 0},
    {OPT_OPS, "ops", "N",
     "stop after N operations (default 10000, so a run nobody pulls ends; 0: until the "
     "device fails)",
     0, 0},
    {OPT_SEED, "seed", "N", "seed of the stream (hex; default: random, logged)", 0, 0},
    {OPT_SETTLE, "settle", "SECONDS", "wait before the stream starts (default 5)", 0, 0},
    {OPT_ON_READY, "on-ready", "CMD",
     "run CMD with sh -c when ready to pull (e.g. to arm a switched outlet); the stream "
     "starts once it exits 0",
     0, 0},
    O_DESTROY,
    {0}};

static const struct cli_opt verify_opts_tab[] = {
    {OPT_LOG, "log", "FILE", "the log 'probe write' (or 'probe listen') wrote", 0, 0}, {0}};

static const struct cli_opt timing_opts_tab[] = {
    {OPT_MAX_EB, "max-eb", "N", "largest erase block size tried (16k to 1G)", 0, 0},
    O_DESTROY,
    {0}};

static const struct cli_opt listen_opts_tab[] = {
    {OPT_PORT, "port", "PORT", "the TCP port to listen on", 0, 0},
    {OPT_OUT, "out", "FILE", "where the writer's lines go, synced as they arrive", 0, 0},
    {OPT_BIND, "bind", "ADDR", "the address to listen on (default: every address)", 0, 0},
    {0}};

static const struct cli_opt spec_opts_tab[] = {
    {OPT_SEED, "seed", "N", "seed of the model's decisions (default 1)", 0, 0},
    {OPT_CUT_AT, "cut-at", "N", "pull the power at the Nth write (default 40)", 0, 0},
    {OPT_SIZE, "size", "N", "bytes of the region (default 2M)", 0, 0},
    {OPT_TIMING, "timing", NULL, "measure the costs (probe timing) instead", 0, 0},
    {OPT_MAX_EB, "max-eb", "N", "with --timing: largest erase block size tried", 0, 0},
    {0}};

static const char probe_exit[] =
    "0 done (verify: no broken promise seen), 3 verify saw a broken promise (lost flushed "
    "or FUA data, torn sectors, collateral damage), 1 an error, 2 usage.";

static const struct cli_spec write_spec = {
    "probe write",
    "DESTROY the device's region, then stream writes and flushes until the power is pulled",
    "DEVICE (--log FILE | --listener HOST:PORT) [OPTIONS]",
    "DESTROYS the device's contents from --offset (default 0) for --size bytes (default: "
    "the rest of it, at most 1 GiB): lays a self-describing pattern, flushes, waits "
    "--settle seconds (default 5), says when to pull the power (and runs --on-ready CMD), "
    "then writes (O_DIRECT, some FUA, seeded by --seed) and flushes until the device "
    "fails (the pull) or --ops operations are done. Every write is announced before it is "
    "issued and every completed write and flush reported to the log: a file on ANOTHER "
    "device (--log) or a listener on another machine (--listener). Refuses a mounted "
    "device, one in use, and one holding a filesystem, partition table or volume "
    "signature unless --destroy-contents is given (a mount: never).\n",
    write_opts_tab,
    1,
    1,
    probe_exit,
    "$ blackout probe write /dev/sdc --log ~/probe.log --size 256M\n"
    "  pull the power when told, then run probe verify\n",
    NULL,
    0};

static const struct cli_spec verify_spec = {
    "probe verify",
    "after the power is back: hold the region against the log (read only)",
    "DEVICE --log FILE",
    "Reads the region and holds it against the log: flushes honoured, FUA honoured, torn "
    "writes and sectors (and at what granularity), collateral damage to data not written "
    "since the last flush (its radius and the erase block it suggests). Read only.\n",
    verify_opts_tab,
    1,
    1,
    probe_exit,
    "$ blackout probe verify /dev/sdc --log ~/probe.log\n  the verdict of one pull\n",
    NULL,
    0};

static const struct cli_spec timing_spec = {
    "probe timing",
    "the costs of FUA writes, flushes and erase-block-sized patterns (flashbench-like)",
    "DEVICE [--max-eb N] [--destroy-contents]",
    "Measures the latency of FUA writes of two sizes, of flushes, and of write patterns "
    "that reveal the erase block size, as medians in nanoseconds. Writes to the device: "
    "refuses one holding a signature unless --destroy-contents is given.\n",
    timing_opts_tab,
    1,
    1,
    "0 done, 1 an error, 2 usage.",
    "$ blackout probe timing /dev/sdc --max-eb 4M --destroy-contents\n"
    "  the costs, erase blocks up to 4 MiB\n",
    NULL,
    0};

static const struct cli_spec listen_spec = {
    "probe listen",
    "a TCP server for 'write --listener': appends one writer's lines to FILE, synced",
    "--port PORT --out FILE [--bind ADDR]",
    "Accepts one writer, appends its lines to FILE, synced as they arrive; ends when the "
    "writer closes.\n",
    listen_opts_tab,
    0,
    0,
    "0 done, 1 an error, 2 usage.",
    "$ blackout probe listen --port 7777 --out probe.log\n"
    "  on the machine that keeps the log\n",
    NULL,
    0};

static const struct cli_spec spec_spec = {
    "probe spec",
    "the same write, pull and verify on a blackout stack spec in this process",
    "SPEC [--seed N] [--cut-at N] [--size N] [--timing]",
    "The same write, pull and verify on a blackout stack spec in this process, the pull "
    "made by the model with seeded decisions (--seed, default 1) at the write in flight "
    "after --cut-at writes (default 40), over the first --size bytes (default 2M). "
    "--timing measures the costs instead, in NAND work.\n",
    spec_opts_tab,
    1,
    1,
    probe_exit,
    "$ blackout probe spec 'disk(cache=volatile,flush=ignore) > mem(size=16M)'\n"
    "  shows the flushes it does not honour\n",
    NULL,
    0};

static const struct cli_spec *const probe_actions[] = {&write_spec,  &verify_spec, &timing_spec,
                                                       &listen_spec, &spec_spec,   NULL};

static const struct cli_spec probe_spec = {
    "probe",
    "test a real device (or a stack spec) across one power pull",
    NULL,
    "Does a device honour flushes and FUA, tear sectors, destroy data it was not writing "
    "when the power goes? One pull answers for one sample (docs/probe.md).\n",
    NULL,
    0,
    0,
    probe_exit,
    "$ blackout probe listen --port 7777 --out probe.log\n"
    "$ blackout probe write /dev/sdc --listener host:7777 --destroy-contents\n"
    "  the log on another machine; pull the power when told\n"
    "$ blackout probe verify /dev/sdc --log probe.log\n"
    "  after the power is back\n",
    probe_actions,
    0};

static int parse(const struct cli_spec *spec, int argc, char **argv, struct opts *o)
{
	struct cli_parse p;
	int k;
	cli_parse_start(&p, spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		struct {
			int key;
			uint64_t *dst;
			unsigned flags;
			uint64_t min, max;
		} nums[] = {
		    {OPT_SIZE, &o->size, BO_NUM_SIZE, 4 * PROBE_BLOCK, UINT64_MAX / 2},
		    {OPT_OFFSET, &o->offset, BO_NUM_SIZE, 0, UINT64_MAX / 2},
		    {OPT_OPS, &o->ops, 0, 0, UINT64_MAX / 2},
		    {OPT_CUT_AT, &o->cut_at, 0, 1, UINT64_MAX / 2},
		    {OPT_MAX_EB, &o->max_eb, BO_NUM_SIZE, 16384, 1ull << 30},
		    {OPT_SEED, &o->seed, BO_NUM_HEX, 0, UINT64_MAX},
		    {OPT_SETTLE, &o->settle, 0, 0, 3600},
		    {OPT_PORT, &o->port, 0, 1, 65535},
		};
		char l[32];
		bool done = false;
		for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]) && !done; i++) {
			if (k != nums[i].key)
				continue;
			if (cli_num("probe", cli_opt_label(spec, k, l, sizeof(l)), p.arg,
			            nums[i].flags, nums[i].min, nums[i].max, nums[i].dst))
				return CLI_EXIT_USAGE;
			o->seed_given |= k == OPT_SEED;
			o->ops_given |= k == OPT_OPS;
			done = true;
		}
		if (done)
			continue;
		switch (k) {
		case OPT_LOG: o->log = p.arg; break;
		case OPT_LISTENER: o->listener = p.arg; break;
		case OPT_OUT: o->out = p.arg; break;
		case OPT_BIND: o->bind = p.arg; break;
		case OPT_ON_READY: o->on_ready = p.arg; break;
		case OPT_DESTROY: o->destroy = true; break;
		case OPT_TIMING: o->timing = true; break;
		}
	}
	if (k < 0) /* -1 after --help: stop, with status 0 */
		return p.status ? p.status : -1;
	o->dev = p.nargs ? p.args[0] : NULL;
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
	int rc = 0;
	const struct cli_spec *act = cli_action(&probe_spec, argc, argv, &rc);
	if (!act)
		return rc;
	struct opts o = {.settle = 5};
	if ((rc = parse(act, argc - 1, argv + 1, &o)) != 0)
		return rc < 0 ? 0 : rc;
	if (act == &write_spec)
		return do_write(&o);
	if (act == &verify_spec)
		return do_verify(&o);
	if (act == &spec_spec)
		return do_spec(&o);
	if (act == &timing_spec)
		return do_timing(&o);
	if (!o.port || !o.out)
		return cli_usage_error("probe", "listen needs --port PORT and --out FILE");
	struct bo_err err = {{0}};
	rc = probe_listen(o.bind, (unsigned)o.port, o.out, stderr, &err);
	return rc ? cli_fail("probe", "%s", bo_errstr(&err, rc)) : 0;
}
