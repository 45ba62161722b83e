// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_matrix_part.c — libFuzzer target for a matrix part (one shard's results,
 * report/matrix_part.c): any input either reads or is refused with a message; what
 * reads is written back, read again the same, and merges as a one-shard matrix. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/matrix.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bo_err err = {{0}};
	struct matrix_part *p;
	if (matrix_part_read((const char *)data, size, &p, &err) != 0) {
		check(err.msg[0] != '\0');
		return 0;
	}
	char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	FILE *f = open_memstream(&a, &na);
	check(f && matrix_part_write(p, f) == 0);
	fclose(f);
	struct matrix_part *q;
	check(matrix_part_read(a, na, &q, &err) == 0);
	f = open_memstream(&b, &nb);
	check(f && matrix_part_write(q, f) == 0);
	fclose(f);
	check(na == nb && memcmp(a, b, na) == 0);
	struct matrix m;
	/* a part of one shard is a whole matrix; of more, the others are missing */
	if (matrix_merge(&q, NULL, 1, &m, &err) == 0) {
		f = fopen("/dev/null", "w");
		check(f && matrix_write_json(&m, f) == 0);
		fclose(f);
		matrix_free_cells(&m);
	}
	matrix_part_free(q);
	matrix_part_free(p);
	free(a);
	free(b);
	return 0;
}
