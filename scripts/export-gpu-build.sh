#!/usr/bin/env bash
# The off-device half of the export GPU check (needs Go, no GPU; `make export-gpu-bins` runs it):
# builds the GPU test of examples/export-go into OUT/export-go.test and puts the export it was
# built against into OUT/_export (a leading underscore keeps it out of `go ... ./...`). Then, on a
# GPU host with nvcc and without Go:
#
#   scripts/export-gpu-check.sh OUT/_export OUT/export-go.test LOGDIR
#
# Without further arguments the export is the committed examples/export-go/tgsgemm. With
# `runner export` flags (--results DIR ... [--generated DIR] [--shapes ...]) a fresh export, named
# tgsgemm, is made from those results and the test is built against it through go's -overlay,
# which stands it in for the committed package (e.g. register-tiled winners with more than 48 KiB
# of dynamic shared memory). Results written before records carried source/PTX hashes, as the
# committed ones under results/ were, need --allow-unhashed among the flags.
#
# usage: scripts/export-gpu-build.sh OUT [runner export flags]
set -euo pipefail

if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
	echo "usage: $0 OUT [runner export flags: --results DIR ...]" >&2
	exit 2
fi
out=$1
shift
GO=${GO:-go}
cd "$(dirname "$0")/.."
pkg=examples/export-go/tgsgemm
exp=$out/_export

rm -rf "$out"
mkdir -p "$out"
if [ $# -eq 0 ]; then
	cp -R "$pkg" "$exp"
	"$GO" test -c -tags gpu -o "$out/export-go.test" ./examples/export-go
else
	"$GO" run ./runner export "$@" --out "$exp" --name tgsgemm --go-package tilegen/examples/export-go/tgsgemm
	# The overlay deletes every file of the committed package and adds every file of the new one.
	root=$(pwd)
	abs_exp=$(cd "$exp" && pwd)
	{
		printf '{"Replace": {\n'
		sep=""
		while IFS= read -r f; do
			if [ -f "$exp/$f" ]; then
				printf '%s  "%s": "%s"' "$sep" "$root/$pkg/$f" "$abs_exp/$f"
			else
				printf '%s  "%s": ""' "$sep" "$root/$pkg/$f"
			fi
			sep=$',\n'
		done < <( (cd "$pkg" && find . -type f; cd "$abs_exp" && find . -type f) | sed 's|^\./||' | sort -u)
		printf '\n}}\n'
	} >"$out/overlay.json"
	"$GO" test -c -tags gpu -overlay "$out/overlay.json" -o "$out/export-go.test" ./examples/export-go
fi
echo "built $out/export-go.test against $exp; on the GPU host:"
echo "  scripts/export-gpu-check.sh $exp $out/export-go.test LOGDIR"
