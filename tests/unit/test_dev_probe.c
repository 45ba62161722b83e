// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_probe.c — the black-box probe's verdicts equal the declared parameters
 * for every combination of cache/flush/fua/tear on 512- and 4096-byte sectors
 * (medium's or disk's), through other layers too, and it never writes the media it
 * probes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/dev.h"
#include "tap.h"

static void expect(const char *spec, bool vol, bool flush, bool fua, bool tw, bool ts)
{
	struct dev_spec *s;
	struct bo_err err = {{0}};
	if (dev_spec_parse(spec, &s, &err)) {
		ok(0, "parse %s: %s", spec, err.msg);
		return;
	}
	struct dev_probe_result r;
	int rc = dev_probe(s, &r, &err);
	dev_spec_free(s);
	is_int(rc, 0, "probe %s", spec);
	if (rc) {
		diag("%s", err.msg);
		return;
	}
	bool right = r.volatile_cache == vol && r.honors_flush == flush && r.honors_fua == fua &&
	             r.tears_writes == tw && r.tears_sectors == ts;
	ok(right && r.exhaustive,
	   "%s: volatile=%d flush=%d fua=%d tears-writes=%d tears-sectors=%d (%llu outcomes)", spec,
	   r.volatile_cache, r.honors_flush, r.honors_fua, r.tears_writes, r.tears_sectors,
	   (unsigned long long)r.outcomes);
}

int main(void)
{
	static const char *const tears[] = {"none", "sector", "byte"};
	static const char *const hi[] = {"honor", "ignore"};
	/* 512-byte sectors; 4096-byte sectors from the medium; 4096-byte disk sectors
	 * over a 512-byte medium, torn at the disk's sector */
	static const struct {
		const char *disk, *medium;
	} sizes[] = {
	    {"", "mem(size=64k)"},
	    {"", "mem(size=64k,sector=4096)"},
	    {"sector=4096,", "mem(size=64k)"},
	};
	char spec[256];
	for (int m = 0; m < 3; m++)
		for (int t = 0; t < 3; t++) {
			snprintf(spec, sizeof(spec), "disk(%stear=%s) > %s", sizes[m].disk,
			         tears[t], sizes[m].medium);
			expect(spec, false, true, true, t > 0, t == 2);
			for (int f = 0; f < 2; f++)
				for (int u = 0; u < 2; u++) {
					snprintf(spec, sizeof(spec),
					         "cache(flush=%s,fua=%s) > disk(%stear=%s) > %s",
					         hi[f], hi[u], sizes[m].disk, tears[t],
					         sizes[m].medium);
					expect(spec, true, f == 0, u == 0, t > 0, t == 2);
				}
		}
	/* the bare media of both sector sizes, through a cache */
	for (int m = 0; m < 2; m++)
		for (int f = 0; f < 2; f++)
			for (int u = 0; u < 2; u++) {
				snprintf(spec, sizeof(spec), "cache(flush=%s,fua=%s) > %s", hi[f],
				         hi[u], sizes[m].medium);
				expect(spec, true, f == 0, u == 0, true, false);
			}
	/* bare media persist an in-flight write as a prefix of whole sectors */
	expect("mem(size=64k)", false, true, true, true, false);
	expect("mem(size=64k,sector=4096)", false, true, true, true, false);
	/* a no-op cache, other layers in between, and several lowers */
	expect("cache(size=0,flush=ignore) > disk(tear=none) > mem(size=64k)", false, true, true,
	       false, false);
	expect("fault > cache(flush=ignore,order=lba) > fault > disk(tear=sector) > mem(size=64k)",
	       true, false, true, true, false);
	expect("concat > [disk > mem(size=4k) ; disk > mem(size=64k)]", false, true, true, false,
	       false);
	expect("cache(size=1k,flush=ignore,fua=ignore) > disk > mem(size=64k)", true, false, false,
	       false, false);

	/* a file stack: probed through overlays, the image is not written */
	char path[] = "/tmp/blackout-probe-XXXXXX";
	int fd = mkstemp(path);
	tap_require(fd >= 0, "temp file");
	unsigned char blk[4096];
	memset(blk, 0x3c, sizeof(blk));
	for (int i = 0; i < 16; i++)
		tap_require(write(fd, blk, sizeof(blk)) == (ssize_t)sizeof(blk), "fill image");
	snprintf(spec, sizeof(spec), "cache(flush=ignore) > disk(tear=byte) > file(path=%s)", path);
	expect(spec, true, false, true, true, true);
	unsigned char back[4096];
	bool same = true;
	lseek(fd, 0, SEEK_SET);
	for (int i = 0; i < 16; i++)
		same = same && read(fd, back, sizeof(back)) == (ssize_t)sizeof(back) &&
		       memcmp(back, blk, sizeof(blk)) == 0;
	ok(same, "the image file is unchanged");
	close(fd);
	unlink(path);

	struct bdev *d;
	struct bo_err err;
	blk_mem_open(512, 4, &d);
	struct dev_probe_result r;
	is_int(dev_probe_bdev(d, &r, &err), -EINVAL, "a device too small to probe");
	blk_close(d);
	return tap_done();
}
