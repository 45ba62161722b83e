/* result.c — an exploration's results as JSON (written and read back, for shard
 * merging) and as the terminal summary. Timings stay out of the JSON so that the
 * same exploration run twice gives identical bytes. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/util.h"

static void inv_list(FILE *f, unsigned mask)
{
	fputc('[', f);
	bool first = true;
	for (int i = 0; i < CRASH_INV_N; i++)
		if (mask & (1u << i)) {
			fprintf(f, "%s\"%s\"", first ? "" : ",", crash_inv_name((enum crash_inv)i));
			first = false;
		}
	fputc(']', f);
}

static void inv_counts(FILE *f, const uint64_t *v)
{
	fputc('{', f);
	for (int i = 0; i < CRASH_INV_N; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", crash_inv_name((enum crash_inv)i),
		        v[i]);
	fputc('}', f);
}

int crash_result_write_json(const struct crash_result *r, FILE *f)
{
	fputs("{\"blackout_explore\":1,\"stack\":", f);
	bo_json_str(f, r->stack);
	fputs(",\"fs\":", f);
	bo_json_str(f, r->fs);
	fputs(",\"workload\":", f);
	bo_json_str(f, r->workload);
	fprintf(f,
	        ",\"seed\":%" PRIu64 ",\"max_states\":%" PRIu64 ",\"shard\":%u,\"nshards\":%u"
	        ",\n \"cuts\":%" PRIu64 ",\"space\":%" PRIu64 ",\"space_log2\":%.3f"
	        ",\"exhaustive\":%s,\"built\":%" PRIu64 ",\"coverage\":%.6f"
	        ",\n \"judged\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"ok\":%" PRIu64
	        ",\"silent\":%" PRIu64 ",\"detected\":%" PRIu64 ",\"e2fsck_runs\":%" PRIu64
	        ",\"e2fsck_disagree\":%" PRIu64 ",\n \"violations\":",
	        r->seed, r->max_states, r->shard, r->nshards, r->cuts, r->space, r->space_log2,
	        r->exhaustive ? "true" : "false", r->built, r->coverage, r->judged, r->duplicates,
	        r->ok, r->silent, r->detected, r->e2fsck_runs, r->e2fsck_disagree);
	inv_counts(f, r->viol);
	fputs(",\"allowed\":", f);
	inv_counts(f, r->allowed);
	fputs(",\n \"failures\":[", f);
	for (size_t i = 0; i < r->nfail; i++) {
		const struct crash_state *s = &r->fail[i];
		fprintf(f, "%s\n  {\"id\":", i ? "," : "");
		bo_json_str(f, s->id);
		fprintf(f, ",\"pos\":%zu,\"inflight\":%s,\"completed\":%zu,\"broken\":", s->pos,
		        s->inflight ? "true" : "false", s->completed);
		inv_list(f, s->broken);
		fputs(",\"allowed\":", f);
		inv_list(f, s->allowed);
		fprintf(f, ",\"detected\":%s,\"detected_by\":", s->detected ? "true" : "false");
		bo_json_str(f, s->detected_by);
		fprintf(f, ",\"e2fsck_agrees\":%d,\"detail\":", s->e2fsck_agrees);
		bo_json_str(f, s->detail);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}

void crash_result_print(const struct crash_result *r, FILE *f)
{
	fprintf(f, "stack:    %s\nfs:       %s\nworkload: %s\n", r->stack, r->fs, r->workload);
	if (r->exhaustive)
		fprintf(f, "states:   %" PRIu64 " built over %" PRIu64 " cut points: exhaustive\n",
		        r->built, r->cuts);
	else
		fprintf(f,
		        "states:   %" PRIu64 " built over %" PRIu64
		        " cut points: sampled (seed %" PRIu64 "), %.3g%% of 2^%.1f outcomes\n",
		        r->built, r->cuts, r->seed, 100.0 * r->coverage, r->space_log2);
	if (r->nshards > 1)
		fprintf(f, "shard:    %u/%u\n", r->shard, r->nshards);
	uint64_t failing = r->judged - r->ok;
	fprintf(f,
	        "judged:   %" PRIu64 " distinct (%" PRIu64 " duplicates), %" PRIu64 " ok, %" PRIu64
	        " failing: %" PRIu64 " SILENT, %" PRIu64 " detected\n",
	        r->judged, r->duplicates, r->ok, failing, r->silent, r->detected);
	fprintf(f, "\n  %-12s %10s %12s\n", "invariant", "broken", "allowed");
	for (int i = 0; i < CRASH_INV_N; i++)
		fprintf(f, "  %-12s %10" PRIu64 " %12" PRIu64 "\n",
		        crash_inv_name((enum crash_inv)i), r->viol[i], r->allowed[i]);
	if (r->e2fsck_runs)
		fprintf(f,
		        "\ne2fsck:   %" PRIu64 " runs, %" PRIu64 " disagreements with own fsck\n",
		        r->e2fsck_runs, r->e2fsck_disagree);
	size_t show = r->nfail < 10 ? r->nfail : 10;
	if (show)
		fprintf(f, "\nfailing states (first %zu of %zu):\n", show, r->nfail);
	for (size_t i = 0; i < show; i++) {
		const struct crash_state *s = &r->fail[i];
		fprintf(f, "  %-14s after step %zu, %s%s: %s\n", s->id, s->completed,
		        s->broken ? (s->detected ? "detected by " : "SILENT") : "allowed",
		        s->broken && s->detected ? s->detected_by : "", s->detail);
	}
}

int crash_result_merge(struct crash_result *const *parts, size_t n, struct crash_result **out,
                       struct bo_err *err)
{
	(void)parts;
	(void)n;
	*out = NULL;
	return bo_errf(err, -ENOSYS, "merge: not built yet");
}

int crash_result_read_json(const char *text, size_t len, struct crash_result **out,
                           struct bo_err *err)
{
	(void)text;
	(void)len;
	*out = NULL;
	return bo_errf(err, -ENOSYS, "reading results: not built yet");
}
