/* cmd_jbd.c — `blackout jbd`: recover a JBD2 journal inside an image, or write
 * transactions into it, given the journal's block map. For tests against
 * e2fsprogs and for looking at journals; it knows nothing of ext3 either. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/blk.h"
#include "blackout/jbd.h"
#include "blackout/util.h"
#include "cli/cli.h"

static void help(void)
{
	printf("usage: blackout jbd recover --block-size N --map EXTENTS [--fs-blocks N] IMAGE\n"
	       "       blackout jbd write --block-size N --map EXTENTS [--fs-blocks N]\n"
	       "                          [--features v1|v3|none] [--barrier 0|1]\n"
	       "                          IMAGE ACTION...\n\n"
	       "A JBD2 journal inside IMAGE. EXTENTS lists the device blocks of the journal's\n"
	       "logical blocks in order, as debugfs 'blocks <8>' prints them: '562-573,575-830'.\n"
	       "\n"
	       "recover  three-pass replay (scan, revoke, replay) as e2fsck does it; resets the\n"
	       "         journal superblock. Prints what it found. Exit 1 on a corrupt log.\n"
	       "write    loads the journal (recovering it first if needed) and writes\n"
	       "         transactions; ACTIONs, in order:\n"
	       "           meta=BLK[,BLK...]:FILE  dirty these blocks with FILE's blocks\n"
	       "           revoke=BLK[,BLK...]     forget (revoke) these blocks\n"
	       "           commit                  commit the running transaction\n"
	       "           checkpoint              write committed blocks home\n"
	       "         then exits without checkpointing or marking the journal empty (a\n"
	       "         crash), so the log holds every committed transaction.\n"
	       "--features  v1: crc32 commit checksum; v3: crc32c checksum v3; none: plain\n"
	       "            (set on the empty journal before writing)\n");
}

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
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			struct jbd_extent *ne = realloc(e, cap * sizeof(*e));
			if (!ne) {
				free(dup);
				free(e);
				return -ENOMEM;
			}
			e = ne;
		}
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

int cmd_jbd(int argc, char **argv)
{
	const char *cmd = "jbd";
	if (argc < 2 || cli_is_help(argv[1])) {
		help();
		return argc < 2 ? 2 : 0;
	}
	const char *sub = argv[1];
	bool write = strcmp(sub, "write") == 0;
	if (!write && strcmp(sub, "recover") != 0)
		return cli_usage_error(cmd, "unknown subcommand '%s'", sub);
	uint64_t bs = 0, fs_blocks = 0;
	const char *map = NULL, *image = NULL, *features = NULL;
	bool barrier = true;
	int i = 2;
	for (; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			help();
			return 0;
		} else if (strcmp(a, "--block-size") == 0 && v) {
			if (cli_num(cmd, a, v, BO_NUM_HEX, 1, UINT32_MAX, &bs))
				return 2;
			i++;
		} else if (strcmp(a, "--fs-blocks") == 0 && v) {
			if (cli_num(cmd, a, v, BO_NUM_HEX, 1, UINT64_MAX, &fs_blocks))
				return 2;
			i++;
		} else if (strcmp(a, "--map") == 0 && v) {
			map = v;
			i++;
		} else if (strcmp(a, "--features") == 0 && v && write) {
			features = v;
			i++;
		} else if (strcmp(a, "--barrier") == 0 && v && write) {
			barrier = strcmp(v, "0") != 0;
			i++;
		} else if (a[0] == '-') {
			return cli_usage_error(cmd, "unknown option '%s'", a);
		} else {
			image = a;
			i++;
			break;
		}
	}
	if (!bs || !map || !image)
		return cli_usage_error(cmd, "--block-size, --map and IMAGE are required");
	if (!write && i < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[i]);
	struct jbd_extent *ext;
	size_t ne;
	uint64_t total;
	if (parse_map(map, &ext, &ne, &total))
		return cli_usage_error(cmd, "bad --map '%s'", map);
	struct bo_err err = {{0}};
	struct bdev *d;
	int rc = blk_file_open(image, 512, 0, 0, &d, &err);
	if (rc) {
		free(ext);
		return cli_fail(cmd, "%s: %s", image, bo_errstr(&err, rc));
	}
	struct jbd_config c = {.block_size = (uint32_t)bs,
	                       .nr_blocks = total,
	                       .map = {.extents = ext, .nr_extents = ne},
	                       .fs_blocks = fs_blocks,
	                       .barrier = barrier};
	struct jbd_journal *j;
	int ret = 0;
	rc = jbd_journal_open(d, &c, &j, &err);
	if (rc) {
		ret = cli_fail(cmd, "%s: %s", image, bo_errstr(&err, rc));
		goto out;
	}
	if (!write) {
		struct jbd_recovery_info info;
		rc = jbd_journal_recover(j, &info);
		printf("transactions %u..%u: %u replayed, %llu blocks written, %llu revoked, "
		       "%llu revoke records, %llu bad checksums\n",
		       info.start_tid, info.end_tid, info.nr_transactions,
		       (unsigned long long)info.nr_replayed, (unsigned long long)info.nr_revoked,
		       (unsigned long long)info.nr_revoke_records,
		       (unsigned long long)info.nr_bad_csum);
		if (info.failed_commit)
			printf("transaction %u: corrupt commit, replay stopped before it\n",
			       info.failed_commit);
		printf("stop: %s\n", info.stop[0] ? info.stop : "end of log");
		if (rc)
			ret = cli_fail(cmd, "%s: %s", image, bo_errstr(jbd_journal_err(j), rc));
		jbd_journal_destroy(j, false);
		goto out;
	}
	if (features) {
		const struct jbd_sb *sb = jbd_journal_sb(j);
		uint32_t compat = sb->compat & ~(uint32_t)JBD_FEATURE_COMPAT_CHECKSUM;
		uint32_t incompat = sb->incompat & ~(uint32_t)(JBD_FEATURE_INCOMPAT_CSUM_V2 |
		                                               JBD_FEATURE_INCOMPAT_CSUM_V3);
		if (strcmp(features, "v1") == 0)
			compat |= JBD_FEATURE_COMPAT_CHECKSUM;
		else if (strcmp(features, "v3") == 0)
			incompat |= JBD_FEATURE_INCOMPAT_CSUM_V3;
		else if (strcmp(features, "none") != 0) {
			jbd_journal_destroy(j, false);
			ret = cli_usage_error(cmd, "bad --features '%s'", features);
			goto out;
		}
		rc = jbd_journal_set_features(j, compat, incompat);
	}
	if (!rc)
		rc = jbd_journal_load(j);
	if (rc) {
		ret = cli_fail(cmd, "%s: %s", image, bo_errstr(jbd_journal_err(j), rc));
		jbd_journal_destroy(j, false);
		goto out;
	}
	ret = do_actions(cmd, j, (uint32_t)bs, argc - i, argv + i);
	jbd_journal_destroy(j, false);
out:
	if (!ret) {
		rc = blk_flush(d);
		if (rc)
			ret = cli_fail(cmd, "%s: flush: %s", image, bo_errstr(&d->err, rc));
	}
	blk_close(d);
	free(ext);
	return ret;
}
