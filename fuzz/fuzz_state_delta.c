// SPDX-License-Identifier: GPL-2.0-or-later
/* fuzz_state_delta.c — libFuzzer target for the state store's delta files
 * (src/vm/delta.c, served by src/nbd/states.c): any input is accepted with every
 * record inside the device and in order, or refused with a reason. */
#include <stdint.h>
#include <string.h>

#include "blackout/vm.h"

static void check(int cond)
{
	if (!cond)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the first byte picks the device's size so range checks meet small devices */
	uint64_t nblocks = size ? (uint64_t)data[0] % 64 : 16;
	uint32_t n = 0;
	struct bo_err err = {{0}};
	if (vm_delta_check(data, size, nblocks, &n, &err) != 0) {
		check(err.msg[0] != '\0');
		return 0;
	}
	check(size == VM_DELTA_HDR + (size_t)n * VM_DELTA_REC);
	for (uint32_t i = 0; i < n; i++) {
		check(vm_delta_block(data, i) < nblocks);
		check(i == 0 || vm_delta_block(data, i) > vm_delta_block(data, i - 1));
	}
	return 0;
}
