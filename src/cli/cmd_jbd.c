// SPDX-License-Identifier: GPL-2.0-or-later
/* cmd_jbd.c — `blackout jbd`: recover a JBD2 journal inside an image, or write
 * transactions into it; the journal found through an ext3 superblock (fsck's
 * fsck_journal_map) or given as a block map. For tests against e2fsprogs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/fsck.h"
#include "blackout/jbd.h"
#include "blackout/util.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"

#define JBD_MAP_OPTS                                                                               \
	{'m', "map", "EXTENTS",                                                                    \
	 "a raw journal: the device blocks of its logical blocks in\n"                             \
	 "order, e.g. '562-573,575-830' (journal blocks only)",                                    \
	 0},                                                                                       \
	    {'b', "block-size", "N", "the journal's block size (with --map)", 0},                  \
	{                                                                                          \
		'F', "fs-blocks", "N", "blocks of the filesystem around it (with --map)", 0        \
	}

#define JBD_ABOUT                                                                                  \
	"The JBD2 journal inside IMAGE. Without --map, IMAGE is an ext3 filesystem and\n"          \
	"the journal is found through its superblock: the journal inode's blocks (or,\n"           \
	"when that inode is damaged, the superblock's backup of them), as e2fsck finds\n"          \
	"it. --map is for a raw journal; an indirect block of an ext3 journal inode\n"             \
	"(debugfs 'blocks <8>' lists them too) is refused, and so is a map whose length\n"         \
	"is not the journal superblock's.\n"

static const struct cli_opt recover_opts[] = {JBD_MAP_OPTS, {0}};
static const struct cli_opt write_opts[] = {
    JBD_MAP_OPTS,
    {'f', "features", "v1|v3|none",
     "v1: crc32 commit checksum; v3: crc32c checksum v3;\nnone: plain (set on the empty journal "
     "before writing)",
     0},
    {'B', "barrier", "0|1", "flush around commits (default 1)", 0},
    {0}};

static const struct cli_spec recover_spec = {
    "jbd recover",
    "replay the journal as e2fsck does",
    "[OPTIONS] IMAGE",
    "Three-pass replay (scan, revoke, replay) as e2fsck does it; resets the journal\n"
    "superblock, and on an ext3 image found without --map clears needs_recovery (the\n"
    "same blocks as e2fsck -E journal_only). Prints what it found.\n\n" JBD_ABOUT,
    recover_opts,
    1,
    1,
    "0 done, 1 a corrupt log, an unusable journal or an unreadable image,\n"
    "2 usage error.",
    "$ blackout jbd recover a.img\n",
    NULL};

static const struct cli_spec write_spec = {
    "jbd write",
    "write transactions into the journal, then stop as a crash would",
    "[OPTIONS] IMAGE ACTION...",
    "Loads the journal (recovering it first if needed) and writes transactions;\n"
    "ACTIONs, in order:\n"
    "\n"
    "  meta=BLK[,BLK...]:FILE  dirty these blocks with FILE's blocks\n"
    "  revoke=BLK[,BLK...]     forget (revoke) these blocks\n"
    "  commit                  commit the running transaction\n"
    "  checkpoint              write committed blocks home\n"
    "\n"
    "then exits without checkpointing or marking the journal empty (a crash), so\n"
    "the log holds every committed transaction.\n\n" JBD_ABOUT,
    write_opts,
    1,
    -1,
    NULL,
    "$ blackout jbd write a.img meta=300:blk.bin commit\n",
    NULL};

static const struct cli_spec *const jbd_actions[] = {&recover_spec, &write_spec, NULL};
static const struct cli_spec jbd_spec = {
    "jbd",
    "recover or write a JBD2 journal inside an image (tests, inspection)",
    NULL,
    JBD_ABOUT,
    NULL,
    0,
    0,
    NULL,
    "$ blackout jbd recover a.img\n"
    "$ blackout jbd write a.img meta=300,301:two-blocks.bin commit\n",
    jbd_actions};

static int parse_u64(const char *s, uint64_t *out)
{
	return bo_parse_num("block", s, BO_NUM_HEX, 0, UINT64_MAX, out, NULL);
}

/* "a-b,c,d-e" into extents in logical order */
static int parse_map(const char *spec, struct jbd_extent **out, size_t *n, uint64_t *total)
{
	struct jbd_extent *e = NULL;
	size_t cnt = 0, cap = 0;
	uint64_t l = 0;
	char *dup = strdup(spec), *save = NULL;
	if (!dup)
		return -ENOMEM;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t a, b;
		if (dash)
			*dash = 0;
		if (parse_u64(tok, &a) || (dash ? parse_u64(dash + 1, &b) : (b = a, 0)) || b < a) {
			free(dup);
			free(e);
			return -EINVAL;
		}
		struct jbd_extent *ne = bo_grow(e, &cap, cnt, sizeof(*e), 16);
		if (!ne) {
			free(dup);
			free(e);
			return -ENOMEM;
		}
		e = ne;
		e[cnt++] = (struct jbd_extent){.lblk = l, .pblk = a, .count = b - a + 1};
		l += b - a + 1;
	}
	free(dup);
	if (!cnt)
		return -EINVAL;
	*out = e;
	*n = cnt;
	*total = l;
	return 0;
}

static int parse_list(const char *s, uint64_t **out, size_t *n)
{
	struct jbd_extent *e;
	size_t ne;
	uint64_t total;
	int rc = parse_map(s, &e, &ne, &total);
	if (rc)
		return rc;
	uint64_t *v = malloc(total * sizeof(*v));
	if (!v) {
		free(e);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		for (uint64_t b = 0; b < e[i].count; b++)
			v[k++] = e[i].pblk + b;
	free(e);
	*out = v;
	*n = k;
	return 0;
}

static int do_actions(const char *cmd, struct jbd_journal *j, uint32_t bs, int argc, char **argv)
{
	uint8_t *buf = malloc(bs);
	if (!buf)
		return cli_fail(cmd, "out of memory");
	int ret = 0;
	for (int i = 0; i < argc && !ret; i++) {
		const char *a = argv[i];
		int rc = 0;
		if (strcmp(a, "commit") == 0) {
			rc = jbd_journal_commit(j);
		} else if (strcmp(a, "checkpoint") == 0) {
			rc = jbd_journal_checkpoint(j);
		} else if (strncmp(a, "meta=", 5) == 0 || strncmp(a, "revoke=", 7) == 0) {
			bool meta = a[0] == 'm';
			char *spec = strdup(a + (meta ? 5 : 7));
			char *colon = spec ? strchr(spec, ':') : NULL;
			if (!spec || (meta && !colon)) {
				free(spec);
				ret = cli_usage_error(cmd, "'%s': expected meta=BLK[,BLK...]:FILE",
				                      a);
				break;
			}
			if (colon)
				*colon = 0;
			uint64_t *blks = NULL;
			size_t nb = 0;
			if (parse_list(spec, &blks, &nb)) {
				free(spec);
				ret = cli_usage_error(cmd, "'%s': bad block list", a);
				break;
			}
			FILE *f = meta ? fopen(colon + 1, "rb") : NULL;
			if (meta && !f) {
				ret = cli_fail(cmd, "%s: %s", colon + 1, strerror(errno));
			} else {
				struct jbd_handle *h;
				rc = jbd_journal_start(j, (uint32_t)nb, &h);
				for (size_t k = 0; k < nb && !rc; k++) {
					if (meta && fread(buf, bs, 1, f) != 1) {
						ret = cli_fail(cmd, "%s: shorter than %zu blocks",
						               colon + 1, nb);
						break;
					}
					rc = jbd_journal_get_write_access(h, blks[k]);
					if (!rc)
						rc = meta ? jbd_journal_dirty_metadata(h, blks[k],
						                                       buf)
						          : jbd_journal_forget(h, blks[k]);
				}
				if (h) {
					int src = jbd_journal_stop(h);
					if (!rc)
						rc = src;
				}
			}
			if (f)
				fclose(f);
			free(blks);
			free(spec);
		} else {
			ret = cli_usage_error(cmd, "unknown action '%s'", a);
			break;
		}
		if (rc && !ret)
			ret = cli_fail(cmd, "%s: %s", a, bo_errstr(jbd_journal_err(j), rc));
	}
	free(buf);
	return ret;
}

static void print_info(const struct jbd_recovery_info *info)
{
	printf("transactions %u..%u: %u replayed, %llu blocks written, %llu revoked, "
	       "%llu revoke records, %llu bad checksums\n",
	       info->start_tid, info->end_tid, info->nr_transactions,
	       (unsigned long long)info->nr_replayed, (unsigned long long)info->nr_revoked,
	       (unsigned long long)info->nr_revoke_records, (unsigned long long)info->nr_bad_csum);
	if (info->failed_commit)
		printf("transaction %u: corrupt commit, replay stopped before it\n",
		       info->failed_commit);
	printf("stop: %s\n", info->stop[0] ? info->stop : "end of log");
}

/* recover without --map: the filesystem says where its journal is. */
static int recover_fs(const char *cmd, struct bdev *d, const char *image)
{
	struct fsck_replay rp;
	struct bo_err err = {{0}};
	int rc = fsck_journal_recover(d, &rp, &err);
	if (rp.from_backup)
		printf("journal inode damaged: journal found through the superblock's backup of "
		       "its blocks\n");
	if (rp.done || (!rc && rp.info.start_tid)) {
		if (!rp.needed)
			snprintf(rp.info.stop, sizeof(rp.info.stop), "journal empty (s_start = 0)");
		print_info(&rp.info);
	}
	if (rc)
		return cli_fail_named(cmd, image, bo_errstr(&err, rc));
	if (rp.done)
		printf("needs_recovery cleared\n");
	return 0;
}

/* A --map given for a journal inside an ext3 image must list journal blocks only:
 * the journal inode's indirect blocks shift every later block of the log. */
static int check_map(const char *cmd, struct bdev *d, const struct jbd_extent *ext, size_t ne)
{
	struct fsck_journal_map fm;
	struct bo_err err = {{0}};
	if (fsck_journal_map(d, &fm, &err))
		return 0; /* no ext3 journal found: a raw journal */
	int ret = 0;
	for (size_t i = 0; i < ne && !ret; i++)
		for (size_t k = 0; k < fm.nr_indirect && !ret; k++)
			if (fm.indirect[k] >= ext[i].pblk &&
			    fm.indirect[k] < ext[i].pblk + ext[i].count)
				ret =
				    cli_fail(cmd,
				             "--map names block %llu, an indirect block of the "
				             "journal inode, not a journal block (debugfs 'blocks "
				             "<8>' lists those too): leave --map out and the "
				             "journal is found through the superblock",
				             (unsigned long long)fm.indirect[k]);
	fsck_journal_map_free(&fm);
	return ret;
}

struct jbd_args {
	bool write, barrier;
	uint64_t bs, fs_blocks;
	const char *map, *image, *features;
	char **actions;
	int nactions;
};

/* 0, or the exit status to return (help printed: 0; usage error: 2) */
static int parse_args(const struct cli_spec *spec, int argc, char **argv, struct jbd_args *a,
                      int *status)
{
	const char *cmd = "jbd";
	struct cli_parse p;
	int k;
	cli_parse_start(&p, spec, argc, argv);
	while ((k = cli_next(&p)) > 0) {
		switch (k) {
		case 'b':
			if (cli_num(cmd, "--block-size", p.arg, BO_NUM_HEX, 512, 65536, &a->bs))
				return *status = CLI_EXIT_USAGE;
			if (a->bs & (a->bs - 1))
				return *status = cli_usage_error(
				           cmd, "--block-size %s is not a power of two", p.arg);
			break;
		case 'F':
			if (cli_num(cmd, "--fs-blocks", p.arg, BO_NUM_HEX, 1, UINT64_MAX,
			            &a->fs_blocks))
				return *status = CLI_EXIT_USAGE;
			break;
		case 'm': a->map = p.arg; break;
		case 'f': a->features = p.arg; break;
		case 'B':
			if (strcmp(p.arg, "0") && strcmp(p.arg, "1"))
				return *status =
				           cli_usage_error(cmd, "--barrier %s: 0 or 1", p.arg);
			a->barrier = p.arg[0] == '1';
			break;
		}
	}
	if (k < 0)
		return *status = p.status, 1;
	a->image = p.args[0];
	a->actions = p.args + 1;
	a->nactions = p.nargs - 1;
	if (a->map && !a->bs)
		return *status = cli_usage_error(cmd, "--map needs --block-size"), 1;
	if (!a->map && (a->bs || a->fs_blocks))
		return *status = cli_usage_error(cmd, "--block-size and --fs-blocks go with --map"),
		       1;
	return 0;
}

static int set_features(const char *cmd, struct jbd_journal *j, const char *features)
{
	const struct jbd_sb *sb = jbd_journal_sb(j);
	uint32_t compat = sb->compat & ~(uint32_t)JBD_FEATURE_COMPAT_CHECKSUM;
	uint32_t incompat =
	    sb->incompat & ~(uint32_t)(JBD_FEATURE_INCOMPAT_CSUM_V2 | JBD_FEATURE_INCOMPAT_CSUM_V3);
	if (strcmp(features, "v1") == 0)
		compat |= JBD_FEATURE_COMPAT_CHECKSUM;
	else if (strcmp(features, "v3") == 0)
		incompat |= JBD_FEATURE_INCOMPAT_CSUM_V3;
	else if (strcmp(features, "none") != 0)
		return cli_usage_error(cmd, "bad --features '%s'", features);
	int rc = jbd_journal_set_features(j, compat, incompat);
	return rc ? cli_fail(cmd, "%s", bo_errstr(jbd_journal_err(j), rc)) : 0;
}

/* The journal on d, from --map or from the filesystem; checked against its own
 * superblock's length. */
static int open_journal(const char *cmd, struct bdev *d, const struct jbd_args *a,
                        struct jbd_journal **j, struct jbd_extent **ext)
{
	struct jbd_config c = {
	    .block_size = (uint32_t)a->bs, .fs_blocks = a->fs_blocks, .barrier = a->barrier};
	struct bo_err err = {{0}};
	size_t ne;
	if (a->map) {
		if (parse_map(a->map, ext, &ne, &c.nr_blocks))
			return cli_usage_error(cmd, "bad --map '%s'", a->map);
		int ret = check_map(cmd, d, *ext, ne);
		if (ret)
			return ret;
	} else {
		struct fsck_journal_map fm;
		int rc = fsck_journal_map(d, &fm, &err);
		if (rc)
			return cli_fail_named(cmd, a->image, bo_errstr(&err, rc));
		*ext = fm.ext;
		ne = fm.nr_ext;
		fm.ext = NULL;
		c.block_size = fm.block_size;
		c.nr_blocks = fm.nr_blocks;
		c.fs_blocks = fm.fs_blocks;
		fsck_journal_map_free(&fm);
	}
	c.map = (struct jbd_map){.extents = *ext, .nr_extents = ne};
	int rc = jbd_journal_open(d, &c, j, &err);
	if (rc)
		return cli_fail_named(cmd, a->image, bo_errstr(&err, rc));
	if (jbd_journal_sb(*j)->maxlen != c.nr_blocks) {
		jbd_journal_destroy(*j, false);
		return cli_fail(cmd,
		                "%s: the map lists %llu blocks but the journal superblock says "
		                "the journal has %u: the map is not this journal's",
		                a->image, (unsigned long long)c.nr_blocks,
		                jbd_journal_sb(*j)->maxlen);
	}
	return 0;
}

int cmd_jbd(int argc, char **argv)
{
	const char *cmd = "jbd";
	int ret = 0;
	const struct cli_spec *act = cli_action(&jbd_spec, argc, argv, &ret);
	if (!act)
		return ret;
	struct jbd_args a = {.write = act == &write_spec, .barrier = true};
	if (parse_args(act, argc - 1, argv + 1, &a, &ret))
		return ret;
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(a.image, 512, 0, 0, &d, &err);
	if (rc)
		return cli_fail_named(cmd, a.image, bo_errstr(&err, rc));
	struct jbd_extent *ext = NULL;
	struct jbd_journal *j = NULL;
	if (!a.write && !a.map) {
		ret = recover_fs(cmd, d, a.image);
	} else if (!(ret = open_journal(cmd, d, &a, &j, &ext))) {
		if (!a.write) {
			struct jbd_recovery_info info;
			rc = jbd_journal_recover(j, &info);
			print_info(&info);
		} else {
			ret = a.features ? set_features(cmd, j, a.features) : 0;
			if (!ret && !(rc = jbd_journal_load(j)))
				ret = do_actions(cmd, j, jbd_journal_sb(j)->block_size, a.nactions,
				                 a.actions);
		}
		if (rc && !ret)
			ret = cli_fail_named(cmd, a.image, bo_errstr(jbd_journal_err(j), rc));
		jbd_journal_destroy(j, false);
	}
	if (!ret && (rc = blk_flush(d)))
		ret = cli_fail(cmd, "%s: flush: %s", a.image, bo_errstr(&d->err, rc));
	blk_close(d);
	free(ext);
	return ret;
}
