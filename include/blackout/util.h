/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h — small shared helpers: checksums, a seeded RNG, hashing, size and number
 * parsing. */
#ifndef BLACKOUT_UTIL_H
#define BLACKOUT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "blackout/err.h"

/* Standard CRC32C (Castagnoli) as ext4 and JBD2 use it: pass the running value
 * (~0 to start a fresh CRC the way ext4 does, i.e. crc32c_raw(~0, ...)).
 * crc32c_raw does no pre/post inversion, matching the kernel's crc32c() helper:
 * ext4_chksum(sbi, seed, buf, len) == crc32c_raw(seed, buf, len). */
uint32_t crc32c_raw(uint32_t crc, const void *buf, size_t len);
/* Plain CRC32C of a buffer: ~crc32c_raw(~0, buf, len). */
uint32_t crc32c(const void *buf, size_t len);

/* splitmix64-seeded xoshiro256** : deterministic across machines. */
struct bo_rng {
	uint64_t s[4];
};
void bo_rng_seed(struct bo_rng *r, uint64_t seed);
uint64_t bo_rng_next(struct bo_rng *r);
/* uniform in [0, n), n >= 1, without modulo bias */
uint64_t bo_rng_below(struct bo_rng *r, uint64_t n);

/* Sorts v[0..n) ascending: an LSD radix sort by bytes (the passes over bytes every
 * key shares are skipped), O(n) for the device models' line and block numbers.
 * tmp: room for n values. */
void bo_sort_u64(uint64_t *v, size_t n, uint64_t *tmp);

/* Set bits, inline: built without -mpopcnt, __builtin_popcount is a call into libgcc
 * (2.5% of a cached 4 KiB write; 3.4% of the explorer's time in fsck pass 5). */
static inline unsigned bo_popcount64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/* 64-bit FNV-1a style hash, for digests and dedup (not cryptographic). */
uint64_t bo_hash64(uint64_t h, const void *buf, size_t len);
#define BO_HASH64_INIT 0xcbf29ce484222325ull

/* "4096", "64k", "32M", "1G", "2T" (binary units, case-insensitive, optional B
 * or iB) into bytes. Returns -EINVAL with a message on junk or overflow. */
int bo_parse_size(const char *s, uint64_t *out, struct bo_err *err);
/* What bo_parse_num accepts besides plain decimal. */
#define BO_NUM_HEX  1u /* 0x1f */
#define BO_NUM_SIZE 2u /* 64k, 32M, as bo_parse_size */
/* The value s of command-line option opt (e.g. "--seed") as an unsigned number in
 * [min, max]. Signs, blanks and trailing junk are refused. Errors (-EINVAL: not a
 * number, -ERANGE: outside the range) name the option, the value and the accepted
 * range: "--jobs: '99' is out of range (1 to 64)". s == NULL: the option had no
 * value. */
int bo_parse_num(const char *opt, const char *s, unsigned flags, uint64_t min, uint64_t max,
                 uint64_t *out, struct bo_err *err);
/* Shortest exact rendering: 65536 -> "64k", 1000 -> "1000". buf >= 32 bytes. */
const char *bo_format_size(uint64_t v, char *buf, size_t len);

/* Renders len bytes of s on one line: printable ASCII as is, a backslash doubled,
 * \n \t \r, every other byte (controls, >= 0x7f) as \xHH. Writes at most size
 * bytes, NUL included; returns the length of the whole rendering (like snprintf). */
size_t bo_escape(char *out, size_t size, const char *s, size_t len);

/* Reads the whole file at path into *buf (malloc'd, *len bytes; the caller frees).
 * Errors name the file: cannot open, read error, or larger than max bytes. */
int bo_read_file(const char *path, size_t max, char **buf, size_t *len, struct bo_err *err);
/* Reads the file at path (as bo_read_file) and hands its bytes to parse(buf, len, out,
 * err); a parse error is reported prefixed with the path. */
typedef int (*bo_parse_fn)(const char *buf, size_t len, void *out, struct bo_err *err);
int bo_parse_file(const char *path, size_t max, bo_parse_fn parse, void *out, struct bo_err *err);

/* Room for element n of a growing array of elem-byte elements with *cap allocated:
 * returns arr itself while n < *cap, else arr reallocated to twice *cap (`first`
 * elements when empty) with *cap updated, or NULL when out of memory or the size
 * would overflow (arr is then unchanged, and still the caller's to free). */
void *bo_grow(void *arr, size_t *cap, size_t n, size_t elem, size_t first);

/* mkdir -p: path and every missing directory above it, 0755 (src/util/mkdir.c);
 * bo_mkdir_parent does the same for the directory that will hold the file at path.
 * 0 or -errno (-ENAMETOOLONG past 4 KiB). */
int bo_mkdir_p(const char *path);
int bo_mkdir_parent(const char *path);

/* monotonic seconds, for benchmarks and progress */
double bo_now(void);

/* All of len bytes at off, or -errno (-ENODATA: the file ends first; -EIO: a write
 * made no progress); EINTR and short transfers are retried (src/util/fdio.c). */
int bo_pread_full(int fd, void *buf, size_t len, off_t off);
int bo_pwrite_full(int fd, const void *buf, size_t len, off_t off);
/* The same on a stream (pipe, socket, file position): -ENODATA when the other end
 * closes before len bytes came. */
int bo_read_full(int fd, void *buf, size_t len);
int bo_write_full(int fd, const void *buf, size_t len);

#endif
