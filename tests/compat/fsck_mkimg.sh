# SPDX-License-Identifier: GPL-2.0-or-later
# fsck_mkimg.sh — builds the small populated ext2/ext3 images the fsck compat tests
# corrupt (source it; needs mke2fs -d and e2fsck). fsck_mkimg OUT TYPE BS [mke2fs opts]
fsck_mkimg() {
	out=$1 t=$2 bs=$3
	shift 3
	d=$(mktemp -d "${SCRATCH:-/tmp}/tree.XXXXXX")
	mkdir -p "$d/a/b/c" "$d/big" "$d/e"
	for i in $(seq 1 300); do echo "file $i" >"$d/big/f_name_$i"; done
	for i in $(seq 1 40); do head -c $((i * 900)) /dev/urandom >"$d/a/data$i"; done
	head -c 300000 /dev/urandom >"$d/a/b/large"
	ln -s data1 "$d/a/fastlink"
	ln -s "$(printf 'x%.0s' $(seq 1 100))/long/target" "$d/a/slowlink"
	ln "$d/a/data2" "$d/a/b/hardlink"
	mkfifo "$d/e/fifo"
	echo hi >"$d/a/b/c/deep"
	g=2048
	[ "$bs" -eq 4096 ] && g=512
	mke2fs -q -F -t "$t" -b "$bs" -g $g -N 1024 "$@" -d "$d" "$out" 8M >/dev/null 2>&1 || return 1
	rm -rf "$d"
	# index the big directory (htree), as a kernel would have
	e2fsck -fyD "$out" >/dev/null 2>&1
	e2fsck_clean "$out"
}
