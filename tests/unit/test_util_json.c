// SPDX-License-Identifier: GPL-2.0-or-later
/* test_util_json.c — JSON through jansson: names that are not UTF-8 round-trip exactly,
 * UTF-8 stays UTF-8, and the result reader refuses bad fields by name. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/crash.h"
#include "blackout/json.h"
#include "tap.h"

/* s written as JSON text, parsed back by jansson, turned back into bytes */
static void round_trip(const char *s, const char *name)
{
	json_t *v = json_pack("[o]", bo_json_text(s));
	char *text = v ? json_dumps(v, 0) : NULL;
	json_decref(v);
	json_error_t je;
	json_t *back = text ? json_loads(text, 0, &je) : NULL;
	char out[256] = "";
	int n =
	    back ? bo_json_bytes(json_string_value(json_array_get(back, 0)), out, sizeof(out)) : -1;
	ok(n == (int)strlen(s) && strcmp(out, s) == 0, "%s round-trips exactly", name);
	json_decref(back);
	free(text);
}

static char *result_text(const struct crash_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	crash_result_write_json(r, f);
	fclose(f);
	return buf;
}

/* the text with the first `from` replaced by `to` */
static char *edit(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	if (!p)
		return strdup("(edit failed)");
	size_t a = (size_t)(p - text), n = strlen(text) + strlen(to) + 1;
	char *s = malloc(n);
	memcpy(s, text, a);
	strcpy(s + a, to);
	strcat(s, p + strlen(from));
	return s;
}

static void refused(const char *text, const char *from, const char *to, const char *want)
{
	char *s = edit(text, from, to);
	struct crash_result *r = NULL;
	struct bo_err err = {{0}};
	int rc = crash_result_read_json(s, strlen(s), &r, &err);
	ok(rc == -EINVAL && r == NULL && strstr(err.msg, want), "%s -> %s is refused: %s", from, to,
	   err.msg);
	free(s);
}

int main(void)
{
	json_t *v = json_pack("[o]", bo_json_text("a\xe2\x80\x94"
	                                          "b"));
	char *t = v ? json_dumps(v, 0) : NULL;
	json_decref(v);
	ok(t && strcmp(t, "[\"a\xe2\x80\x94"
	                  "b\"]") == 0,
	   "an em dash is written as UTF-8: %s", t);
	free(t);
	round_trip("plain", "ASCII");
	round_trip("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x92\xbe", "UTF-8 text");
	round_trip("bad\xff\xfe\x80name", "bytes that are not UTF-8");
	round_trip("\xc3", "a truncated sequence");
	round_trip("\xed\xa0\x80", "an encoded surrogate");
	round_trip("pua\xee\xbe\x80\xee\xbf\xbf", "the private-use code points used for escapes");
	round_trip("q\"\\\n\t<>&", "quotes, backslashes, controls and markup");
	char small[4];
	ok(bo_json_bytes("abcdef", small, sizeof(small)) == -ENAMETOOLONG, "too long is refused");

	struct crash_result *r = calloc(1, sizeof(*r));
	snprintf(r->stack, sizeof(r->stack), "disk > mem(size=8M)");
	snprintf(r->fs, sizeof(r->fs), "ext3");
	snprintf(r->workload, sizeof(r->workload), "tree");
	r->nshards = 1;
	r->judged = 10, r->ok = 4, r->silent = 2, r->detected = 3, r->built = 10, r->cuts = 5;
	r->coverage = 0.5;
	r->fail = calloc(1, sizeof(*r->fail));
	r->nfail = 1;
	snprintf(r->fail[0].id, sizeof(r->fail[0].id), "p3-1");
	snprintf(r->fail[0].detail, sizeof(r->fail[0].detail), "/d\xff\xfe/f \xe2\x80\x94 lost");
	r->fail[0].broken = 1;
	char *text = result_text(r);
	ok(strstr(text, "\xe2\x80\x94 lost") != NULL, "the result keeps UTF-8 as UTF-8");
	struct crash_result *back = NULL;
	struct bo_err err = {{0}};
	ok(crash_result_read_json(text, strlen(text), &back, &err) == 0, "reads back %s", err.msg);
	ok(back && strcmp(back->fail[0].detail, r->fail[0].detail) == 0,
	   "a detail with invalid bytes reads back byte for byte");
	char *again = back ? result_text(back) : NULL;
	ok(again && strcmp(again, text) == 0, "written, read and written again: same bytes");
	free(again);
	crash_result_free(back);

	refused(text, "\"judged\":10", "\"judged\":1.5", "'judged' is a number, not an integer");
	refused(text, "\"judged\":10", "\"judged\":1e999", "real number overflow");
	refused(text, "\"judged\":10", "\"judged\":99999999999999999999", "too big integer");
	refused(text, "\"judged\":10", "\"judged\":-1", "'judged' is -1");
	refused(text, "\"blackout_explore\":1", "\"blackout_explore\":2",
	        "format version) is another number");
	refused(text, "\"judged\":10", "\"judged\":10,\"judged\":11", "duplicate");
	refused(text, "\"coverage\":0.5", "\"coverage\":-1e308", "'coverage' is -1e+308");
	refused(text, "\"silent\":2", "\"silent\":200", "failing states");
	refused(text, "\"ok\":4", "\"ok\":40", "'ok' (40) is more than 'judged'");
	refused(text, "\"detail\":", "\"detail\":7,\"x\":", "'failures[0].detail' is an integer");
	refused(text, "\"stack\":", "\"stuck\":", "'stack' is missing");
	free(text);
	crash_result_free(r);
	return tap_done();
}
