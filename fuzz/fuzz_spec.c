// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_spec.c — libFuzzer target for the two text parsers of src/dev/: stack specs
 * (parse, print, parse again: must be equal and a fixed point) and fault rules
 * (armed on a small device, then exercised). Not a test of the models' I/O. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;

	struct bo_err err = {{0}};
	struct dev_spec *s;
	if (dev_spec_parse(text, &s, &err) == 0) {
		int n = dev_spec_format(s, NULL, 0);
		check(n > 0);
		char *t = malloc((size_t)n + 1), *u = malloc((size_t)n + 1);
		check(t && u);
		check(dev_spec_format(s, t, (size_t)n + 1) == n);
		struct dev_spec *s2;
		check(dev_spec_parse(t, &s2, &err) == 0);
		check(dev_spec_equal(s, s2));
		check(dev_spec_format(s2, u, (size_t)n + 1) == n && strcmp(t, u) == 0);
		dev_spec_free(s2);
		free(t);
		free(u);
		dev_spec_free(s);
	} else {
		/* a refusal says why (a column for syntax, the limit for a spec too large
		 * after its repeats expand) */
		check(err.msg[0] != '\0');
	}

	/* the same bytes as fault rules, ';'-separated, on a 64-sector device */
	struct bdev *f;
	if (dev_stack_open_text("fault > mem(size=32k)", NULL, &f, &err) == 0) {
		char *save = NULL;
		for (char *r = strtok_r(text, ";", &save); r; r = strtok_r(NULL, ";", &save))
			dev_fault_arm(f, r, &err);
		unsigned char buf[4 * 512];
		memset(buf, 0x5a, sizeof(buf));
		for (uint64_t lba = 0; lba < 64; lba += 3) {
			blk_write(f, lba, lba + 4 <= 64 ? 4 : 1, buf, lba & 1 ? BLK_FUA : 0);
			blk_read(f, lba, 1, buf);
		}
		blk_flush(f);
		blk_close(f);
	}
	free(text);
	return 0;
}
