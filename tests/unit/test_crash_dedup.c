// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_dedup.c — the explorer's duplicate check: states whose 64-bit keys
 * collide (forced by the table's key hook) are both kept when their overlays' bytes
 * differ, a true copy is still a duplicate, the crash point is part of the identity,
 * and the blk_cow_same comparison it rests on tells overlays apart by content. */
#include <string.h>

#include "blackout/blk.h"
#include "crash/crash_int.h"
#include "tap.h"

static uint64_t collide(uint64_t key)
{
	(void)key;
	return 42; /* every state gets the same key */
}

/* An overlay over base with sector 7 holding `fill`. */
static struct bdev *state_with(struct bdev *base, int fill)
{
	struct bdev *c;
	unsigned char s[512];
	memset(s, fill, sizeof(s));
	tap_require(blk_cow_open(base, &c) == 0, "overlay");
	tap_require(blk_write(c, 7, 1, s, 0) == 0, "write to the overlay");
	return c;
}

static void cow_same(struct bdev *base)
{
	struct bdev *a = state_with(base, 'a'), *b = state_with(base, 'b'), *a2, *c;
	ok(!blk_cow_same(a, b), "overlays holding different bytes differ");
	tap_require(blk_clone(a, &a2) == 0, "clone");
	ok(blk_cow_same(a, a2), "a clone is the same (shared tree)");
	c = state_with(base, 'a');
	ok(blk_cow_same(a, c), "the same bytes written apart are the same");
	unsigned char z[512] = {0};
	blk_write(c, 9, 1, z, 0);
	ok(!blk_cow_same(a, c), "one more sector held differs");
	ok(!blk_cow_same(a, base), "a device that is not an overlay is never the same");
	blk_close(a);
	blk_close(a2);
	blk_close(b);
	blk_close(c);
}

static void forced_collision(struct bdev *base)
{
	struct crash_seen seen = {.key_hook = collide};
	struct bdev *a = state_with(base, 'a'), *b = state_with(base, 'b'), *a2;
	tap_require(blk_clone(a, &a2) == 0, "clone");
	bool dup = true;
	uint64_t first = 99;
	is_int(crash_seen_add(&seen, crash_state_key(a, 3, 0), a, 3, 0, &dup, &first), 0,
	       "first state added");
	ok(!dup && first == 0, "the first state is new");
	is_int(crash_seen_add(&seen, crash_state_key(b, 3, 1), b, 3, 1, &dup, &first), 0,
	       "second state added");
	ok(!dup && first == 1, "a distinct state whose key collides is kept (judged)");
	ok(seen.compared == 1, "the collision was settled by comparing bytes");
	is_int(crash_seen_add(&seen, crash_state_key(a2, 3, 2), a2, 3, 2, &dup, &first), 0,
	       "a copy of the first added");
	ok(dup && first == 0, "a true copy is a duplicate of the first");
	is_int(crash_seen_add(&seen, crash_state_key(a2, 4, 3), a2, 4, 3, &dup, &first), 0,
	       "the same bytes at another crash point added");
	ok(!dup && first == 3, "the same bytes after another completed write are distinct");
	is_int((int)seen.n, 3, "three distinct states held");
	/* the clones the table keeps outlive the states they were taken from */
	blk_close(a);
	blk_close(b);
	is_int(crash_seen_add(&seen, crash_state_key(a2, 3, 4), a2, 3, 4, &dup, &first), 0,
	       "added after the originals closed");
	ok(dup && first == 0, "still a duplicate of the first");
	blk_close(a2);
	crash_seen_free(&seen);
}

static void without_hook(struct bdev *base)
{
	struct crash_seen seen = {0};
	struct bdev *a = state_with(base, 'a'), *b = state_with(base, 'b');
	bool dup = true;
	uint64_t first;
	crash_seen_add(&seen, crash_state_key(a, 0, 0), a, 0, 0, &dup, &first);
	crash_seen_add(&seen, crash_state_key(b, 0, 1), b, 0, 1, &dup, &first);
	ok(!dup && seen.compared == 0, "distinct keys need no byte comparison");
	/* thousands of states grow the table; every one is found again */
	struct bdev *s[3000];
	unsigned char d[512] = {0};
	bool all_new = true, all_dup = true;
	for (int i = 0; i < 3000; i++) {
		blk_clone(a, &s[i]);
		memcpy(d, &i, sizeof(i));
		blk_write(s[i], 100, 1, d, 0);
		crash_seen_add(&seen, crash_state_key(s[i], 0, 2 + (uint64_t)i), s[i], 0,
		               2 + (uint64_t)i, &dup, &first);
		all_new = all_new && !dup;
	}
	for (int i = 0; i < 3000; i++) {
		crash_seen_add(&seen, crash_state_key(s[i], 0, 9000), s[i], 0, 9000, &dup, &first);
		all_dup = all_dup && dup && first == 2 + (uint64_t)i;
		blk_close(s[i]);
	}
	ok(all_new, "3,000 distinct states are new");
	ok(all_dup, "each is found again as its own first appearance");
	blk_close(a);
	blk_close(b);
	crash_seen_free(&seen);
}

int main(void)
{
	struct bdev *base;
	tap_require(blk_mem_open(512, 1024, &base) == 0, "base");
	base->read_only = true;
	cow_same(base);
	forced_collision(base);
	without_hook(base);
	blk_close(base);
	return tap_done();
}
