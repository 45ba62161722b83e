// SPDX-License-Identifier: GPL-2.0-or-later
/* test_e2fsck_judge.c — the strict e2fsck verdict: a fresh mke2fs image is clean, the
 * same image with a wrong free-block count is not, even though e2fsck -fn may exit 0
 * for some problems. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blackout/e2fsck.h"
#include "blackout/endian.h"
#include "tap.h"

int main(void)
{
	ok(e2fsck_line_is_clean("e2fsck 1.47.0 (5-Feb-2023)"), "banner is clean");
	ok(e2fsck_line_is_clean("Pass 3: Checking directory connectivity"), "pass line is clean");
	ok(e2fsck_line_is_clean("img: 11/2048 files (0.0% non-contiguous), 1234/8192 blocks"),
	   "summary line is clean");
	ok(!e2fsck_line_is_clean("Free blocks count wrong (7000, counted=6999)."),
	   "a count problem is not");
	ok(!e2fsck_line_is_clean("Fix? no"), "a Fix? line is not");

	char path[] = "/tmp/blackout-judge-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F -t ext3 %s 8M >/dev/null 2>&1", path);
	tap_require(system(cmd) == 0, "mke2fs -t ext3 made an image");
	struct e2fsck_verdict v;
	struct bo_err err = {{0}};
	is_int(e2fsck_run(path, NULL, &v, &err), 0, "e2fsck ran");
	ok(v.clean, "a fresh mke2fs image is clean (first problem: %s)", v.first_problem);
	e2fsck_verdict_free(&v);

	/* superblock free-blocks count (offset 1024 + 12) off by one */
	struct bdev *d;
	tap_require(blk_file_open(path, 512, 0, 0, &d, &err) == 0, "open the image");
	unsigned char sb[1024];
	blk_pread(d, 1024, 1024, sb);
	put_le32(sb + 12, get_le32(sb + 12) - 1);
	blk_pwrite(d, 1024, 1024, sb, 0);
	is_int(e2fsck_run_bdev(d, NULL, &v, &err), 0, "e2fsck ran on a copy of the device");
	ok(!v.clean, "a wrong free count is a problem: %s (exit %d)", v.first_problem, v.exit_code);
	e2fsck_verdict_free(&v);
	blk_close(d);
	unlink(path);
	return tap_done();
}
