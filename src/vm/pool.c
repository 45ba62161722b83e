/* pool.c — the pool of real-kernel guests judging crash states (include/blackout/vm.h,
 * docs/realkernel.md). Placeholder until the pool is built: it says so. */
#include "blackout/vm.h"

#include <errno.h>

int vm_pool_observe(const struct vm_pool_cfg *cfg, size_t n, struct crash_observation *obs,
                    struct vm_pool_stats *stats, struct bo_err *err)
{
	(void)cfg;
	(void)n;
	(void)obs;
	(void)stats;
	return bo_errf(err, -ENOSYS, "the real-kernel guest pool is not built yet");
}
