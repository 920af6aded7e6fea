# tilegen's entry points. `make test` is what CI runs (through .ci/run).
GO ?= go
BIN ?= bin
TUNE_FLAGS ?=
BENCH_FLAGS ?=
TEST_TIMEOUT ?= 90m

.PHONY: all generate check-generated test test-short build tune bench bench-go export-gpu-bins clean

all: test build

# Regenerate generated/ from variants.yaml and templates/ (only changed variants are recompiled).
generate:
	$(GO) generate ./generated

# Fail when generated/ differs from what the generator makes now (needs nvcc; CI=true makes a
# missing nvcc a failure instead of a skip).
check-generated:
	$(GO) test ./internal/gen -run 'TestGeneratedUpToDate' -count=1 -v

# Everything CI runs: vet, then every test, with the nvcc compile of every variant and the README's
# build commands. The generator's package compiles all of the catalog (829 variants): on a 2-core
# machine that takes longer than go test's default 10-minute limit per package (about 45 minutes with
# empty caches), hence TEST_TIMEOUT.
test:
	$(GO) vet ./...
	$(GO) test -timeout $(TEST_TIMEOUT) ./...

# The everyday fast path: the same tests with -short (the generator compiles one variant per family,
# the README test skips the commands that build or go run).
test-short:
	$(GO) vet ./...
	$(GO) test -short -timeout $(TEST_TIMEOUT) ./...

# The runner and the GPU worker (the only binary that links the CUDA driver API).
build:
	mkdir -p $(BIN)
	@if [ -d runner ]; then echo "$(GO) build -o $(BIN)/runner ./runner"; $(GO) build -o $(BIN)/runner ./runner; fi
	@if [ -d runner/worker ]; then echo "$(GO) build -tags gpu -o $(BIN)/tilegen-worker ./runner/worker"; $(GO) build -tags gpu -o $(BIN)/tilegen-worker ./runner/worker; fi

# Verify and time every variant against cuBLAS on the default shapes (needs a GPU).
tune: build
	$(BIN)/runner tune $(TUNE_FLAGS)

# The benchmark suite on a GPU host: edge suite, tune of the suite's shapes next to cuBLAS, FFMA
# peak probe; writes results/bench/<gpu>/ (summary.json) and BENCHMARKS.md.
bench: build
	$(BIN)/runner bench $(BENCH_FLAGS)

# Go benchmarks of the host-side packages (no GPU needed).
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Off-device binaries for scripts/export-gpu-check.sh on a GPU host without Go: the GPU test of
# examples/export-go in $(BIN)/export-gpu/export-go.test and its export in $(BIN)/export-gpu/_export.
# EXPORT_FLAGS="--results DIR --results DIR" builds against a fresh export of those results instead
# of the committed examples/export-go/tgsgemm.
EXPORT_FLAGS ?=
export-gpu-bins:
	scripts/export-gpu-build.sh $(BIN)/export-gpu $(EXPORT_FLAGS)

clean:
	rm -rf $(BIN)
