#!/usr/bin/env bash
# Installs the CUDA toolkit (nvcc 11.8 on Debian 12) and the host compiler nvcc needs (g++-11)
# from Debian's own contrib/non-free components. Idempotent: does nothing when nvcc and g++-11
# are already present. Edits a copy of the existing apt sources (components only), never adds a host.
set -euo pipefail

if command -v nvcc >/dev/null 2>&1 && command -v g++-11 >/dev/null 2>&1; then
	echo "install-cuda: nvcc and g++-11 already present: $(nvcc --version | tail -n 1)"
	exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi

src=/etc/apt/sources.list.d/debian.sources
dst=/etc/apt/sources.list.d/tilegen-nonfree.sources
if [ -f "$src" ] && [ ! -f "$dst" ]; then
	sed -e 's/^Components: main$/Components: main contrib non-free/' "$src" | $SUDO tee "$dst" >/dev/null
	# The original file would list the same suites twice with fewer components; keep one copy.
	$SUDO mv "$src" "$src.tilegen-orig"
elif [ ! -f "$src" ] && [ ! -f "$dst" ]; then
	echo "install-cuda: $src not found; enable contrib and non-free in your apt sources, then rerun" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit g++-11
nvcc --version | tail -n 1
