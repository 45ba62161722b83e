/* probe.c — bo-probe, the guest's static `blackout probe` (write and verify on the NBD
 * device the plugin serves, tests/vm/guest-probe.sh): cmd_probe.c and src/probe over a
 * plain C library, without ISA-L (no static archive): CRC32C by table here. Not the
 * CLI; `spec` (the models in-process) stays on the host. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "blackout/probe.h"
#include "blackout/util.h"
#include "cli/cli.h"

int cmd_probe(int argc, char **argv);

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

int probe_inproc(const char *spec, const struct probe_inproc_opts *o, struct probe_verdict *v,
                 struct bo_err *err)
{
	(void)spec, (void)o, (void)v;
	return bo_errf(err, -EOPNOTSUPP,
	               "probe spec: not in the guest's bo-probe (run it on the "
	               "host: blackout probe spec)");
}

int probe_timing_spec(const char *spec, const struct probe_timing_opts *o, struct probe_timing *t,
                      struct bo_err *err)
{
	(void)spec, (void)o, (void)t;
	return bo_errf(err, -EOPNOTSUPP,
	               "probe spec: not in the guest's bo-probe (run it on the "
	               "host: blackout probe spec)");
}

int probe_sink_tcp(const char *hostport, int *fd, struct probe_sink *s, struct bo_err *err)
{
	(void)fd, (void)s;
	return bo_errf(err, -EOPNOTSUPP,
	               "--listener %s: not in the guest's bo-probe (its acknowledgements go "
	               "to a serial port: --log)",
	               hostport);
}

int probe_listen(const char *addr, unsigned port, const char *out, FILE *status, struct bo_err *err)
{
	(void)addr, (void)port, (void)out, (void)status;
	return bo_errf(err, -EOPNOTSUPP,
	               "probe listen: not in the guest's bo-probe (run it on the host)");
}

int main(int argc, char **argv)
{
	return cmd_probe(argc, argv);
}
