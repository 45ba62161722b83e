/* vm.h — guests of the real Linux kernel judging crash states from a state store
 * (docs/realkernel.md): a pool of qemu guests, each booted once, each observing many
 * states served by the nbdkit plugin (states=DIR). Observations only: the one judge
 * (crash_judge) decides. */
#ifndef BLACKOUT_VM_H
#define BLACKOUT_VM_H

#include <stdbool.h>
#include <stddef.h>

#include "blackout/crash.h"
#include "blackout/err.h"

struct vm_pool_cfg {
	const char *kernel;   /* the guest kernel (build/vm/vmlinuz) */
	const char *initrd;   /* its initramfs with guest-init (build/vm/initramfs.gz) */
	const char *plugin;   /* build/blackout-nbdkit.so */
	const char *statedir; /* the state store: base.img, s<N>.delta */
	const char *workdir;  /* sockets, consoles and logs go here */
	const char *fs;       /* ext4 | ext3 | xfs | btrfs */
	const char *mopt;     /* mount options; NULL: "defaults" */
	unsigned jobs;        /* guests in parallel; 0: the number of cores */
	double boot_timeout;  /* seconds from qemu start to the guest's READY; 0: 120 */
	double state_timeout; /* seconds for one state's CHECK to END; 0: 60 */
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
};

/* Where the time went, summed over guests (seconds), and what happened. */
struct vm_pool_stats {
	double boot, connect, mount, read, umount, check, other;
	double wall;       /* the pool's own wall time */
	unsigned boots;    /* guests booted (restarts included) */
	unsigned hung;     /* states whose guest stopped answering or panicked */
	size_t observed;   /* states with a full observation */
};

/* Observes states s0..s<n-1> of cfg->statedir. obs[i] is filled for every i: a
 * state that hung or panicked its guest gets obs[i].guest_hung set with what was
 * seen in mount_msg. Returns 0, or -errno when the pool itself could not run (no
 * qemu, a guest that never boots twice in a row, ...), with the reason in err. */
int vm_pool_observe(const struct vm_pool_cfg *cfg, size_t n, struct crash_observation *obs,
                    struct vm_pool_stats *stats, struct bo_err *err);

#endif
