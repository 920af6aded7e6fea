#!/usr/bin/env bash
# The export GPU check on a GPU host with nvcc and without Go (the binaries come from
# scripts/export-gpu-build.sh, i.e. `make export-gpu-bins`, run where Go is):
#
#   1. builds examples/export-cuda/main.cu against EXPORT/<name>.cuh with this host's nvcc and runs
#      it: every class and edge shape against cuBLAS, refusals, and timing against the tuning
#      record with --strict-time (the launcher, the same kernel through the driver API, and the
#      exported PTX through the driver API, plus an empty-kernel launch on both APIs);
#   2. runs GO_TEST (the GPU test of examples/export-go built against the same export): cuBLAS and
#      float64 checks, refusals, timing within 5 % of the record.
#
# Logs go to LOGDIR (nvcc-build.log, export-cuda.log, export-go-test.log, device.txt); the timing
# tables are printed last. Exit status: 0 when both passed, 1 when either failed.
#
# usage: scripts/export-gpu-check.sh EXPORT GO_TEST LOGDIR
# environment: NVCC (default nvcc, else /usr/local/cuda/bin/nvcc), NVCC_FLAGS (extra flags, e.g.
# "-ccbin g++-11" for nvcc 11.8), ARCH (default: the GPU's, e.g. sm_90), STRICT_TIME (percent,
# default 5).
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 EXPORT GO_TEST LOGDIR" >&2
	exit 2
fi
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
export_dir=$(abs "$1")
go_test=$(abs "$2")
logs=$(abs "$3")
cd "$(dirname "$0")/.."
mkdir -p "$logs"

shopt -s nullglob
headers=("$export_dir"/*.cuh)
if [ ${#headers[@]} -ne 1 ]; then
	echo "export-gpu-check: want exactly one .cuh in $export_dir, found ${#headers[@]}" >&2
	exit 2
fi
name=$(basename "${headers[0]}" .cuh)
if [ ! -x "$go_test" ]; then
	echo "export-gpu-check: $go_test is not an executable (build it with make export-gpu-bins)" >&2
	exit 2
fi
# The Go test binary embeds its export: every exported variant must be in it.
for ptx in "$export_dir"/ptx/*.ptx; do
	if ! grep -qaF "$(basename "$ptx" .ptx)" "$go_test"; then
		echo "export-gpu-check: $go_test was not built against $export_dir (no $(basename "$ptx" .ptx))" >&2
		exit 2
	fi
done

nvcc=${NVCC:-nvcc}
if ! command -v "$nvcc" >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	nvcc=/usr/local/cuda/bin/nvcc
fi
if ! command -v "$nvcc" >/dev/null 2>&1; then
	echo "export-gpu-check: nvcc not found (set NVCC)" >&2
	exit 2
fi
cuda=$(cd "$(dirname "$(command -v "$nvcc")")/.." && pwd)
arch=${ARCH:-}
if [ -z "$arch" ]; then
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
	[[ $cc =~ ^[0-9]+$ ]] || cc=90
	arch=sm_$cc
fi
# libcuda from the toolkit's stubs (the driver provides libcuda.so.1 at run time); cuBLAS found at
# run time where this toolkit keeps it.
link=(-lcublas -lcuda)
for d in "$cuda/lib64" "$cuda/targets/x86_64-linux/lib"; do
	[ -d "$d/stubs" ] && link=(-L"$d/stubs" "${link[@]}")
	[ -d "$d" ] && link+=(-Xlinker -rpath -Xlinker "$d")
done

{
	nvidia-smi 2>&1 || true
	"$nvcc" --version
} >"$logs/device.txt"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
echo "== nvcc ($arch) against $export_dir/$name.cuh"
# shellcheck disable=SC2086 # NVCC_FLAGS is a list of flags
if ! "$nvcc" ${NVCC_FLAGS:-} -O2 -arch="$arch" -DTG_EXPORT_NAME="$name" -I"$export_dir" -o "$work/export-cuda" \
	examples/export-cuda/main.cu "${link[@]}" >"$logs/nvcc-build.log" 2>&1; then
	cat "$logs/nvcc-build.log"
	echo "FAIL: nvcc (log: $logs/nvcc-build.log)"
	exit 1
fi

echo "== C++ example (log: $logs/export-cuda.log)"
"$work/export-cuda" --strict-time "${STRICT_TIME:-5}" --ptx-dir "$export_dir/ptx" >"$logs/export-cuda.log" 2>&1 ||
	{ status=1; tail -n 3 "$logs/export-cuda.log"; }
sed -n '/^== timing/,$p' "$logs/export-cuda.log"
grep -E '^FAIL' "$logs/export-cuda.log" || true

echo "== Go test (log: $logs/export-go-test.log)"
"$go_test" -test.v -test.count=1 -test.timeout 20m >"$logs/export-go-test.log" 2>&1 ||
	{ status=1; tail -n 3 "$logs/export-go-test.log"; }
grep -E 'cuBLAS [0-9]+ from|time +[0-9]|--- (PASS|FAIL)|^(ok|FAIL|PASS)' "$logs/export-go-test.log" || true
grep -E 'gpu_test.go:[0-9]+: .*(accepted|slower|vs cuBLAS:|vs float64:|itself|current context)' "$logs/export-go-test.log" || true

if [ $status -eq 0 ]; then echo "export-gpu-check: PASS"; else echo "export-gpu-check: FAIL"; fi
exit $status
