#!/bin/bash
# The NT rule borrowing the NN corpus (commit b21b17e3: in the regime classes where NT has no shape of
# its own, the NN shapes timed through the NT variants' verified NN twins, cpasync_auto's split-K
# kernels) against the rule fitted on NT's two large squares alone (the export of commit 052da18e), through
# their headers on a GPU host: ../vector-nt/run.sh with tga = the export of 052da18e and tgb = the
# export of b21b17e3 (each made where Go is with its commit's runner, the README's export command
# with --name tga / tgb, and carried as hdr.tar.xz): examples/export-cuda against tgb (every class,
# edge shape and vector problem of every op against cuBLAS), then both headers in one process on the
# unseen workload shapes as NN (the rules agree there) and as NT (y = x·Wᵀ).
# Usage: X=<folder with hdr.tar.xz> run.sh   (from the repository root; writes under $OUT)
exec bash "$(dirname "$0")/../vector-nt/run.sh"
