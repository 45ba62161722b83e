// SPDX-License-Identifier: GPL-2.0-or-later
/* test_blk_basic.c — the checked entry points and the mem backend. */
#include <errno.h>

#include "blackout/blk.h"
#include "tap.h"

int main(void)
{
	struct bdev *d;
	tap_require(blk_mem_open(512, 64, &d) == 0, "mem opens");
	unsigned char buf[1024] = {1}, got[1024];
	is_int(blk_write(d, 0, 2, buf, 0), 0, "write 2 sectors");
	is_int(blk_read(d, 0, 2, got), 0, "read them back");
	ok(got[0] == 1, "data round-trips");
	is_int(blk_read(d, 63, 2, got), -EINVAL, "read past the end is -EINVAL");
	is_int(blk_write(d, 64, 1, buf, 0), -EINVAL, "write at the end is -EINVAL");
	is_int(blk_read(d, 0, 0, got), -EINVAL, "zero-length read is -EINVAL");
	is_int(blk_write(d, 0, 1, buf, 0x80), -EINVAL, "unknown flags are -EINVAL");
	is_int(blk_pread(d, 100, 512, got), -EINVAL, "misaligned byte read is -EINVAL");
	blk_close(d);
	return tap_done();
}
