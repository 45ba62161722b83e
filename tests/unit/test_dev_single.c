// SPDX-License-Identifier: GPL-2.0-or-later
/* test_dev_single.c — the pass-through ops that models over one lower device share
 * (src/dev/single.c): each such model reports its one lower and nothing past it,
 * names its lower's error with its own name first, and passes a flush down. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "tap.h"

static struct bdev *open_spec(const char *spec)
{
	struct bdev *d;
	struct bo_err err = {{0}};
	tap_require(dev_stack_open_text(spec, NULL, &d, &err) == 0, "open %s: %s", spec, err.msg);
	return d;
}

static void flush_count(void *ctx, const char *key, uint64_t v)
{
	if (strcmp(key, "flushes") == 0)
		*(uint64_t *)ctx = v;
}

int main(void)
{
	static const char *const specs[] = {
	    "cache > mem(size=64k)",
	    "disk > mem(size=64k)",
	    "fault > mem(size=64k)",
	    "flash(size=64k,eb=16k,page=4k) > mem(size=512k)",
	};
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct bdev *d = open_spec(specs[i]);
		struct bdev *l = blk_lower(d, 0);
		ok(l && strcmp(l->name, "mem") == 0, "%s: lower 0 is the mem", specs[i]);
		ok(blk_lower(d, 1) == NULL, "%s: nothing past it", specs[i]);
		/* a flush reaches the medium below (fault counts what it passes on) */
		is_int(blk_flush(d), 0, "%s: flush", specs[i]);
		is_int(blk_power_cut(d, &blk_chooser_zero, NULL), 0, "%s: cut", specs[i]);
		ok(l->powered_off, "%s: the cut reached the lower", specs[i]);
		is_int(blk_power_restore(d), 0, "%s: restore", specs[i]);
		ok(!l->powered_off && !d->powered_off, "%s: both are on again", specs[i]);
		blk_close(d);
	}

	/* a lower's error, named by each layer on the way up */
	struct bdev *d = open_spec("disk > cache(size=0) > fault(rules=\"read-error lba=0\") > "
	                           "mem(size=64k)");
	unsigned char b[512];
	is_int(blk_read(d, 0, 1, b), -EIO, "a read of the failing sector fails");
	ok(strncmp(d->err.msg, "disk: cache: fault: ", 20) == 0, "each layer names itself: %s",
	   d->err.msg);
	blk_close(d);

	/* flush passed down by disk: the fault layer below counts it */
	d = open_spec("disk > fault > mem(size=64k)");
	uint64_t n = 0;
	is_int(blk_flush(d), 0, "flush through disk");
	blk_stats(blk_lower(d, 0), flush_count, &n);
	is_int(n, 1, "the fault layer below saw the flush");
	blk_close(d);
	return tap_done();
}
