/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.h — guests of the real Linux kernel judging crash states from a state store
 * (docs/realkernel.md): a pool of qemu guests, each booted once, each observing many
 * states of the store, which reaches it as two read-only disks (base.img and the
 * packed deltas). Observations only: the one judge (crash_judge) decides. */
#ifndef BLACKOUT_VM_H
#define BLACKOUT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blackout/crash.h"
#include "blackout/err.h"

struct vm_pool_cfg {
	const char *kernel;   /* the guest kernel (build/vm/vmlinuz) */
	const char *initrd;   /* its initramfs with guest-init (build/vm/initramfs.cpio) */
	const char *plugin;   /* unused by the pool since it reads the store from disks */
	const char *statedir; /* the state store: base.img, s<N>.delta */
	const char *workdir;  /* sockets, consoles, logs and deltas.img go here */
	const char *fs;       /* ext4 | ext3 | xfs | btrfs */
	const char *mopt;     /* mount options; NULL: "defaults" */
	unsigned jobs;        /* guests in parallel; 0: the number of cores */
	double boot_timeout;  /* seconds from qemu start to the guest's READY; 0: 120 */
	double state_timeout; /* seconds for one state's CHECK to END; 0: 60 */
	bool integrity;       /* dm-integrity under the fs: guests open it (docs/integrity.md) */
	/* an application's checker runs on every mounted state (blackout app): a state
	 * whose guest reported no checker verdict is the checker failing, never ok */
	bool app;
	/* a store of several members: md is assembled without member md_drop (a member
	 * that did not come back after the cut, docs/md.md); needs md_drop_set */
	bool md_drop_set;
	unsigned md_drop;
	void (*progress)(void *ctx, size_t done, size_t total);
	void *progress_ctx;
};

/* Where the time went, summed over guests (seconds), and what happened. */
struct vm_pool_stats {
	double boot, connect, mount, read, umount, check, other;
	double wall;      /* the pool's own wall time */
	unsigned boots;   /* guests booted (restarts included) */
	unsigned hung;    /* states whose guest stopped answering or panicked, twice */
	unsigned retried; /* states handed to a fresh guest after their guest did so once */
	size_t observed;  /* states with a full observation */
};

/* Observes states s0..s<n-1> of cfg->statedir. obs[i] is filled for every i: a
 * state that hung or panicked its guest is handed once more to a fresh guest; when
 * that one stops too, obs[i].guest_hung is set with what was seen in mount_msg. Returns 0, or -errno when the pool itself could not run (no
 * qemu, a guest that fails to boot twice in a row, a guest sending garbage or
 * flooding, ...), with the reason in err; obs then holds nothing to free.
 * Every child process is killed and reaped before it returns; each also gets
 * SIGKILL from the kernel if the calling thread dies (PR_SET_PDEATHSIG), so an
 * interrupted caller leaves no qemu or nbdkit running. Not thread-safe against other
 * users of waitpid(-1) in the same process. */
int vm_pool_observe(const struct vm_pool_cfg *cfg, size_t n, struct crash_observation *obs,
                    struct vm_pool_stats *stats, struct bo_err *err);

/* "" when no state was retried after a hang, else " (N retried on a fresh guest after
 * a hang)", for a line that prints stats->hung; the text lives until the next call from
 * the same thread. */
const char *vm_retried_note(const struct vm_pool_stats *stats);

/* Removes what the pool left in a work directory (sockets, consoles, logs), then the
 * directory if that emptied it. */
void vm_workdir_remove(const char *dir);

/* ---- the state store's delta files (docs/realkernel.md section 2) ---------- */
#define VM_DELTA_MAGIC "BOSTATE1"
#define VM_DELTA_BLOCK 4096u
#define VM_DELTA_HDR   16u
#define VM_DELTA_REC   (8u + VM_DELTA_BLOCK) /* u64 LE block index + the block */
/* Checks a whole delta file held in buf (untrusted) for a device of nblocks 4 KiB
 * blocks: magic, block size, exact size for its count, indices strictly increasing
 * and inside the device. Sets *count; record i's data is at
 * buf + VM_DELTA_HDR + i * VM_DELTA_REC + 8. The error names the problem, not the file. */
int vm_delta_check(const uint8_t *buf, size_t len, uint64_t nblocks, uint32_t *count,
                   struct bo_err *err);
uint64_t vm_delta_block(const uint8_t *buf, uint32_t i); /* record i's block index */
/* The number of 4 KiB blocks of STATEDIR/base.img, refused unless a regular file of a
 * non-zero multiple of 4096 bytes. */
int vm_store_base_blocks(const char *statedir, uint64_t *nblocks, struct bo_err *err);
/* Writes OUT (via OUT.tmp, renamed): s0..s<n-1>.delta of STATEDIR, each checked by
 * vm_delta_check against base.img's size, one after another at 4096-aligned offsets
 * (offsets[i] for state i), zero-padded to a multiple of 4096. The error names the file
 * and what is wrong with it. */
int vm_deltas_pack(const char *statedir, size_t n, const char *out, uint64_t *offsets,
                   struct bo_err *err);
/* Writes OUT: the delta of IMAGE against BASE (same size, a multiple of 4096). */
int vm_delta_write(const char *base, const char *image, const char *out, struct bo_err *err);

#endif
