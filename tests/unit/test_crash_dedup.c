// SPDX-License-Identifier: GPL-2.0-or-later
/* test_crash_dedup.c — the explorer's duplicate check: states whose 64-bit keys
 * collide (forced by the table's key hook) are both kept when their bytes differ, in
 * process (the overlays, by blk_cow_same) and for an outside observer (the state
 * store's views, against the seen file); a true copy is still a duplicate and the
 * crash point is part of the identity. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	/* the clones the table keeps outlive the states they were taken from */
	blk_close(a);
	blk_close(b);
	is_int(crash_seen_add(&seen, crash_state_key(a2, 3, 4), a2, 3, 4, &dup, &first), 0,
	       "added after the originals closed");
	ok(dup && first == 0, "still a duplicate of the first");
	is_int(crash_seen_add(&seen, crash_state_key(a2, 4, 3), a2, 4, 3, &dup, &first), 0,
	       "the same bytes at another crash point added");
	ok(!dup && first == 3, "the same bytes after another completed write are distinct");
	is_int((int)seen.n, 3, "three distinct states held");
	/* the explorer has moved on to crash point 4: the overlays kept for 3 are let go */
	ok(seen.released == 2 && !seen.kept[0].cow && !seen.kept[1].cow && seen.kept[2].cow,
	   "a later crash point lets go of the earlier one's overlays (released %zu of %zu)",
	   seen.released, seen.nkept);
	is_int(crash_seen_add(&seen, crash_state_key(a2, 3, 7), a2, 3, 7, &dup, &first), 0,
	       "a state of crash point 3 again");
	ok(!dup && first == 7, "... has nothing to compare with and is judged again, not skipped");
	/* a stack with no overlay has no bytes to compare: a colliding key never makes it
	 * a duplicate */
	is_int(crash_seen_add(&seen, crash_state_key(base, 3, 5), base, 3, 5, &dup, &first), 0,
	       "a state with no overlay added");
	is_int(crash_seen_add(&seen, crash_state_key(base, 3, 6), base, 3, 6, &dup, &first), 0,
	       "another with no overlay added");
	ok(!dup && first == 6, "a state with no overlay is never a duplicate");
	is_int(crash_seen_add(&seen, crash_state_key(a2, 4, 8), a2, 4, 8, &dup, &first), 0,
	       "the crash point 4 state once more");
	ok(dup && first == 3, "... is a duplicate: its crash point's overlays are still kept");
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

/* Views one state into the store and asks the table whether it is new. */
static bool store_new(struct crash_store *st, struct crash_seen *seen, struct bdev *state,
                      size_t completed, uint64_t ordinal, uint64_t *first)
{
	struct bo_err err = {{0}};
	uint64_t key;
	bool dup = true;
	tap_require(crash_store_view(st, state, completed, &key, &err) == 0, "view a state");
	tap_require(crash_store_seen(st, seen, key, completed, ordinal, &dup, first, &err) == 0,
	            "look a state up");
	return !dup;
}

static void store_collision(struct bdev *base)
{
	char dir[] = "/tmp/test_crash_dedup.XXXXXX";
	tap_require(mkdtemp(dir) != NULL, "a store directory");
	struct bdev *live0, *a = state_with(base, 'a'), *b = state_with(base, 'b'), *a2, *d;
	tap_require(blk_cow_open(base, &live0) == 0, "the view where the run began");
	tap_require(blk_clone(a, &a2) == 0, "clone");
	d = state_with(base, 'a'); /* a's block, and another sector of that block apart */
	unsigned char x[512];
	memset(x, 'x', sizeof(x));
	tap_require(blk_write(d, 6, 1, x, 0) == 0, "write to the overlay");
	struct crash_store st;
	struct bo_err err = {{0}};
	tap_require(crash_store_open(&st, dir, live0, &err) == 0, "open the store");
	struct crash_seen seen = {.key_hook = collide};
	uint64_t first = 99;
	ok(store_new(&st, &seen, a, 3, 0, &first) && first == 0, "store: the first state is new");
	ok(store_new(&st, &seen, b, 3, 1, &first) && first == 1,
	   "store: a distinct state whose key collides is kept (judged)");
	ok(seen.compared == 1, "store: the collision was settled by comparing bytes");
	ok(store_new(&st, &seen, d, 3, 2, &first) && first == 2,
	   "store: the same blocks holding other bytes are distinct");
	ok(!store_new(&st, &seen, a2, 3, 3, &first) && first == 0,
	   "store: a true copy is a duplicate of the first");
	ok(store_new(&st, &seen, a2, 4, 4, &first) && first == 4,
	   "store: the same bytes after another completed write are distinct");
	ok(store_new(&st, &seen, live0, 3, 5, &first) && first == 5,
	   "store: the view where the run began (no block differs) is distinct");
	ok(!store_new(&st, &seen, live0, 3, 6, &first) && first == 5,
	   "store: and a duplicate when seen again");
	ok(!store_new(&st, &seen, b, 3, 7, &first) && first == 1,
	   "store: a later state found again among colliding ones");
	is_int((int)seen.n, 5, "store: five distinct states held");
	char seenf[64];
	snprintf(seenf, sizeof(seenf), "%s/.seen.tmp", dir);
	ok(access(seenf, F_OK) != 0, "store: the seen file is never in the directory");
	crash_store_close(&st);
	crash_seen_free(&seen);
	char base_img[64];
	snprintf(base_img, sizeof(base_img), "%s/base.img", dir);
	unlink(base_img);
	rmdir(dir);
	blk_close(a);
	blk_close(a2);
	blk_close(b);
	blk_close(d);
	blk_close(live0);
}

int main(void)
{
	struct bdev *base;
	tap_require(blk_mem_open(512, 1024, &base) == 0, "base");
	base->read_only = true;
	cow_same(base);
	forced_collision(base);
	without_hook(base);
	store_collision(base);
	blk_close(base);
	return tap_done();
}
