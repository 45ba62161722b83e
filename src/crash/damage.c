// SPDX-License-Identifier: GPL-2.0-or-later
/* damage.c — for one state rebuilt by id: the map of sectors a power cut lost or
 * damaged, each range named by its owner; and --keep, a state saved as an image with
 * the command that rebuilds it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crash/crash_int.h"

static int save_image(struct bdev *d, const char *path, struct bo_err *err)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return bo_errf(err, -errno, "--keep: cannot create %s: %s", path, strerror(errno));
	size_t chunk = 1 << 20;
	uint8_t *buf = malloc(chunk);
	int rc = buf ? 0 : -ENOMEM;
	uint64_t total = blk_size_bytes(d);
	for (uint64_t off = 0; rc == 0 && off < total; off += chunk) {
		size_t n = total - off < chunk ? (size_t)(total - off) : chunk;
		rc = blk_pread(d, off, n, buf);
		if (rc)
			bo_errf(err, rc, "--keep: reading the state: %s", bo_errstr(&d->err, rc));
		else if (fwrite(buf, 1, n, f) != n)
			rc = bo_errf(err, -EIO, "--keep: writing %s failed", path);
	}
	free(buf);
	if (fclose(f) && rc == 0)
		rc = bo_errf(err, -EIO, "--keep: writing %s failed", path);
	return rc;
}

int crash_keep_state(const struct crash_config *cfg, struct bdev *raw, const char *id,
                     struct bo_err *err)
{
	const char *dir = cfg->keep_dir;
	mkdir(dir, 0777);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s.img", dir, id);
	int rc = save_image(raw, path, err);
	if (rc)
		return rc;
	struct crash_config one = *cfg;
	one.state_id = id;
	char line[4096];
	if (crash_config_format(&one, NULL, line, sizeof(line)) < 0)
		return bo_errf(err, -ENAMETOOLONG, "--keep: the rebuild line is too long");
	snprintf(path, sizeof(path), "%s/%s.cmd", dir, id);
	FILE *f = fopen(path, "w");
	if (!f)
		return bo_errf(err, -errno, "--keep: cannot create %s", path);
	fprintf(f, "%s --keep DIR\n", line);
	fclose(f);
	return 0;
}

static int add_damage(struct crash_result *r, uint64_t lba, const char *what)
{
	struct crash_damage *d = r->ndamage ? &r->damage[r->ndamage - 1] : NULL;
	if (d && d->lba + d->count == lba && strcmp(d->what, what) == 0) {
		d->count++;
		return 0;
	}
	if (r->ndamage == CRASH_DAMAGE_MAX) {
		r->damage_truncated = true;
		return 0;
	}
	if (!r->damage && !(r->damage = calloc(CRASH_DAMAGE_MAX, sizeof(*r->damage))))
		return -ENOMEM;
	d = &r->damage[r->ndamage++];
	d->lba = lba;
	d->count = 1;
	snprintf(d->what, sizeof(d->what), "%s", what);
	return 0;
}

/* Names what each damaged range's first block belonged to, on a recovered copy of
 * the stack as it stood at the cut (best effort: a copy that does not mount leaves
 * the owners empty). */
static void name_damage_owners(struct crash_result *r, struct bdev *live,
                               const struct fs_mount_opts *mo)
{
	struct bdev *ref;
	if (!r->ndamage || blk_clone(live, &ref) != 0)
		return;
	struct fs *fs;
	struct bo_err e = {{0}};
	struct fs_statfs st;
	uint64_t *blocks = calloc(r->ndamage, sizeof(*blocks));
	struct fs_block_owner *own = calloc(r->ndamage, sizeof(*own));
	if (blocks && own && fs_mount(ref, mo, &fs, &e) == 0) {
		if (fs_statfs(fs, &st) == 0 && st.block_size) {
			for (size_t i = 0; i < r->ndamage; i++) {
				struct crash_damage *d = &r->damage[i];
				d->block = d->lba * ref->sector_size / st.block_size;
				d->blocks = (d->lba + d->count) * ref->sector_size / st.block_size -
				            d->block;
				if ((d->lba + d->count) * ref->sector_size % st.block_size)
					d->blocks++;
				blocks[i] = r->damage[i].block;
			}
			if (fs_block_owners(fs, blocks, r->ndamage, own) == 0)
				for (size_t i = 0; i < r->ndamage; i++) {
					r->damage[i].ino = own[i].ino;
					snprintf(r->damage[i].owner, sizeof(r->damage[i].owner),
					         "%s", own[i].what);
				}
		}
		fs_abandon(fs);
	}
	free(blocks);
	free(own);
	blk_close(ref);
}

int crash_map_damage(struct crash_result *r, struct bdev *state, struct bdev *live,
                     struct bdev *live0, const struct blk_inflight *infl,
                     const struct fs_mount_opts *mo, struct bo_err *err)
{
	uint32_t ss = state->sector_size;
	size_t chunk = 1 << 20;
	uint8_t *a = malloc(chunk), *n = malloc(chunk), *o = malloc(chunk);
	int rc = a && n && o ? 0 : -ENOMEM;
	uint64_t total = blk_size_bytes(state);
	for (uint64_t off = 0; rc == 0 && off < total; off += chunk) {
		size_t len = total - off < chunk ? (size_t)(total - off) : chunk;
		if ((rc = blk_pread(state, off, len, a)) || (rc = blk_pread(live, off, len, n)) ||
		    (rc = blk_pread(live0, off, len, o)))
			break;
		for (size_t i = 0; i < len && rc == 0; i += ss) {
			uint64_t lba = (off + i) / ss;
			if (memcmp(a + i, n + i, ss) == 0)
				continue;
			const struct blk_inflight *w = infl;
			if (w && lba >= w->lba && lba - w->lba < w->count &&
			    memcmp(a + i, (const uint8_t *)w->data + (lba - w->lba) * ss, ss) == 0)
				continue;
			rc = add_damage(r, lba, memcmp(a + i, o + i, ss) == 0 ? "lost" : "damaged");
		}
	}
	free(a);
	free(n);
	free(o);
	if (rc == 0)
		name_damage_owners(r, live, mo);
	return rc ? bo_errf(err, rc, "mapping the damage: %s", strerror(-rc)) : 0;
}
