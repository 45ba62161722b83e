// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_settle.c — idle time: a device that ignores flushes still loses an
 * acknowledged, "flushed" write at a cut, but not once it has been left idle
 * (blk_settle), for the write cache and for flash firmware with a RAM cache. */
#include <string.h>

#include "blackout/dev.h"
#include "tap.h"

static void check(const char *spec)
{
	unsigned char w[512], r[512];
	memset(w, 0xab, sizeof(w));
	for (int settle = 0; settle < 2; settle++) {
		struct bdev *d;
		struct bo_err err = {{0}};
		int rc = dev_stack_open_text(spec, NULL, &d, &err);
		tap_require(rc == 0, "open %s: %s", spec, bo_errstr(&err, rc));
		is_int(blk_write(d, 8, 1, w, 0), 0, "%s: write", spec);
		is_int(blk_flush(d), 0, "%s: flush acknowledged", spec);
		if (settle)
			is_int(blk_settle(d), 0, "%s: settle", spec);
		/* the outcome where nothing optional reached the media */
		is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "%s: cut", spec);
		is_int(blk_power_restore(d), 0, "%s: power back", spec);
		is_int(blk_read(d, 8, 1, r), 0, "%s: read", spec);
		if (settle)
			ok(memcmp(r, w, sizeof(w)) == 0,
			   "%s: after idle time the write is on the media", spec);
		else
			ok(memcmp(r, w, sizeof(w)) != 0,
			   "%s: without idle time a lying device can lose a flushed write", spec);
		blk_close(d);
	}
}

int main(void)
{
	check("cache(size=64k,flush=ignore) > mem(size=1M)");
	check("flash(ftl=careful,eb=16k,size=1M,cache=64k,flush=ignore)");
	check("flash(ftl=cheap,eb=16k,size=1M,cache=64k,flush=ignore)");
	return tap_done();
}
