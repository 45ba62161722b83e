// SPDX-License-Identifier: GPL-2.0-or-later
/* escape.c — bytes from untrusted input (log mark names, control-socket lines)
 * rendered safely for a terminal or a one-line message. */
#include <stdio.h>

#include "blackout/util.h"

size_t bo_escape(char *out, size_t size, const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[5];
		const char *rep = tmp;
		size_t rlen;
		if (c == '\\')
			rep = "\\\\";
		else if (c == '\n')
			rep = "\\n";
		else if (c == '\t')
			rep = "\\t";
		else if (c == '\r')
			rep = "\\r";
		else if (c < 0x20 || c >= 0x7f)
			/* bytes >= 0x7f too: a C1 control or half of a terminal sequence */
			snprintf(tmp, sizeof tmp, "\\x%02x", c);
		else {
			tmp[0] = (char)c;
			tmp[1] = 0;
		}
		for (rlen = 0; rep[rlen]; rlen++)
			if (n + rlen + 1 < size)
				out[n + rlen] = rep[rlen];
		n += rlen;
	}
	if (size)
		out[n < size ? n : size - 1] = 0;
	return n;
}
