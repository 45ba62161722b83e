// SPDX-License-Identifier: GPL-2.0-or-later
/* probe.c — bo-probe, the guest's static probe (src/guest/guest-probe.sh): `write` and
 * `verify` on the NBD device the plugin serves, through the same driver as `blackout
 * probe` (src/probe/drive.c), over a plain C library. Without ISA-L (no static
 * archive): CRC32C by table here. The guest writes to the device it was given, so
 * the host's safety checks (mounts, signatures) are not in it; nor are the TCP
 * listener, timing and in-process runs, which stay on the host. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "blackout/probe.h"
#include "blackout/util.h"

/* ISA-L's crc32_iscsi: reflected CRC32C (0x82F63B78), no inversion of its own */
unsigned int crc32_iscsi(unsigned char *buf, int len, unsigned int crc);
unsigned int crc32_iscsi(unsigned char *buf, int len, unsigned int crc)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? c >> 1 ^ 0x82F63B78u : c >> 1;
			table[i] = c;
		}
	for (int i = 0; i < len; i++)
		crc = table[(crc ^ buf[i]) & 0xff] ^ crc >> 8;
	return crc;
}

static int usage(const char *why)
{
	fprintf(stderr,
	        "bo-probe: %s\n"
	        "usage: bo-probe write DEVICE --log FILE [--size N] [--offset N] [--ops N]\n"
	        "                [--seed N] [--settle SECONDS] [--on-ready CMD]\n"
	        "       bo-probe verify DEVICE --log FILE\n"
	        "(the options of `blackout probe`, docs/probe.md)\n",
	        why);
	return 2;
}

static int fail(const struct bo_err *err, int rc)
{
	fprintf(stderr, "bo-probe: %s\n", bo_errstr(err, rc));
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage("a subcommand and a DEVICE");
	struct probe_write_opts w = {.dev = argv[2], .ops = PROBE_DEFAULT_OPS, .settle = 5};
	struct bo_err err = {{0}};
	for (int i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--destroy-contents")) /* the guest has no safety checks */
			continue;
		if (!v)
			return usage("an option without its value");
		i++;
		int rc = 0;
		if (!strcmp(a, "--log"))
			w.log = v;
		else if (!strcmp(a, "--on-ready"))
			w.on_ready = v;
		else if (!strcmp(a, "--size"))
			rc = bo_parse_num(a, v, BO_NUM_SIZE, 4 * PROBE_BLOCK, UINT64_MAX / 2,
			                  &w.size, &err);
		else if (!strcmp(a, "--offset"))
			rc = bo_parse_num(a, v, BO_NUM_SIZE, 0, UINT64_MAX / 2, &w.offset, &err);
		else if (!strcmp(a, "--ops"))
			rc = bo_parse_num(a, v, 0, 0, UINT64_MAX / 2, &w.ops, &err);
		else if (!strcmp(a, "--seed"))
			rc = bo_parse_num(a, v, BO_NUM_HEX, 0, UINT64_MAX, &w.seed, &err),
			w.seed_given = true;
		else if (!strcmp(a, "--settle"))
			rc = bo_parse_num(a, v, 0, 0, 3600, &w.settle, &err);
		else
			return usage("an unknown option");
		if (rc)
			return usage(err.msg);
	}
	if (!w.log)
		return usage("--log FILE is needed");
	if (!strcmp(argv[1], "verify")) {
		struct probe_verdict v;
		int rc = probe_verify_device(w.dev, w.log, &v, &err);
		if (rc)
			return fail(&err, rc);
		probe_verdict_print(&v, stdout);
		return !v.flush_honoured || !v.fua_honoured || v.torn_units ||
		               (v.collateral_measured && v.damaged)
		           ? 3
		           : 0;
	}
	if (strcmp(argv[1], "write"))
		return usage("the subcommands are write and verify");
	struct probe_stream st;
	int rc = probe_write_logged(&w, &st, &err);
	if (rc)
		return fail(&err, rc);
	printf("writes %llu (FUA %llu), flushes %llu acknowledged%s\n",
	       (unsigned long long)st.writes, (unsigned long long)st.fua_writes,
	       (unsigned long long)st.flushes,
	       st.stopped_by_error ? "; then the device failed (the pull?)" : "");
	return 0;
}
