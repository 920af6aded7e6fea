// Package orchestrator is the runner's engine: it plans which (variant, shape) pairs to measure,
// hands them to GPU worker processes, survives their failures, caches every result, ranks the
// variants per shape against cuBLAS and writes the reports. It never links CUDA.
//
// Workers (the process handling is internal/workerproc). One tilegen-worker process per device
// (CUDA_VISIBLE_DEVICES selects the device, so a worker always opens its ordinal 0; "all" starts
// workers for devices 0, 1, ... until one fails to start). Work is handed out dynamically. A worker
// that exits, writes a line that is not a response or one over protocol.MaxResponseBytes, or
// outlives its watchdog (which also covers writing the request) is killed; the request in flight is
// recorded as failed with the reason ("worker crashed (exit status 2) while running: …" with the
// last line of its stderr, "timeout after 12s (watchdog)", "worker response over 64 MiB …") and the
// next request starts a fresh worker. Each worker runs in its own process group with SIGKILL as its
// parent-death signal: a runner killed with -9 takes its workers along, and killing or shutting
// down a worker kills anything it started, so nothing that holds its output delays the runner. A
// worker whose hello reports an error, or that exits before its hello, means no usable GPU: the
// command fails with one line naming the worker, its exit status and its last output, led by "no
// CUDA device found (driver: …)" when that output is gorgonia.org/cu's cuInit failure.
//
// Watchdog. Per request: 2 s start-up + (6 verification + warm-up + reps) launches at the expected
// launch time + the minimum timing time (+ the CPU reference when it runs), clamped to
// [--timeout-floor, --timeout-cap] (default 10 s and 120 s). The expected launch time is cuBLAS's
// median on the shape times --timeout-factor (20), or 2·M·N·K at --floor-gflops (200) before cuBLAS
// has been measured; cuBLAS is measured first for that reason.
//
// Plan. For each shape, every selected variant in name order; variants whose requirements do not fit
// (variant.Supports) are recorded as skipped with the reason. --strategy random keeps --budget fitting
// variants per shape, drawn from --seed. --shard i/n keeps item k of the plan when k mod n = i;
// cuBLAS is measured in every shard. Variants are selected by --variants (name globs), --family and
// --param KEY=V[,V...] (Filter, ParseParams).
//
// Dry run. DryRun (runner tune --dry-run) builds the same plan through the same planning code as
// Tune, but on GPUs known from --out's device.json and the cache's records instead of started
// workers, reading the cache without writing it: per shape, what is pruned and why, cached and to
// measure, and a time estimate from per-measurement constants fitted to the committed H100 runs
// (EstimateMeasurement and its neighbours; TestEstimateMatchesCommittedRuns keeps them within a
// third of those runs' cost.json).
//
// Cache (the file is internal/cache; keys and serving hits are the engine's). An append-only JSONL
// file of Records, each fsynced, keyed by the SHA-256 of what decides the result: kind, variant
// name, source and PTX hashes, arch, shape, verification and timing settings, GPU name and UUID,
// driver (and cuBLAS) version. A rerun reuses every key it finds (failures too, unless
// --retry-failed), so a killed run loses only what was in flight and a changed template re-measures
// only its variants. A hit is served only if the record says it is what was asked for (kind,
// variant, shape, source and PTX hashes, settings hash, seed, device); otherwise a warning and a
// new measurement. Runners may share a cache: appends are single O_APPEND writes under an exclusive
// flock. A torn last line is dropped with a warning (and cut by the next append); a file that is
// not a cache is refused untouched; the file is created by the first record.
//
// Merge. Every tune and verify directory holds run.json (RunPlan): the plan's hash, the shard i/n
// and the settings. runner merge accepts only shards 0..n-1 of one plan, each once, with equal
// settings on one kind of GPU, records with keys and no record in two shards, and names whatever
// is missing or foreign (--allow-partial merges an incomplete set and records what was missing).
// cuBLAS rows come from the lowest-numbered shard, one per shape as in a single run.
//
// Ranking. Each shape's ok variants and cuBLAS are ordered by median; neighbours whose ~95 % median
// confidence intervals overlap (stats.Separated) share a rank, shown as "=1". After the sweep, the
// best variant, up to --rank-top others within --rank-near percent of it, and cuBLAS are re-timed
// interleaved (A B C cuBLAS, A B C cuBLAS, ...) in short requests until their intervals separate or
// --rank-rounds run out; the printed table uses those samples (n marked *). results.csv's rank column
// comes from the sweep alone, so merged shards reproduce it exactly.
//
// Outputs in --out (written through internal/resultsdir): results.jsonl (the records, ordered by
// shape work, cuBLAS first, then name), results.csv (one row per record), bench.txt (Go benchmark
// format for benchstat), device.json (devices and tool versions), run.json (the plan and shard),
// ranking.txt (the tables printed on stdout) and, for verify, edge.txt. Records carry the source
// and PTX hashes of what was measured. Records, device.json and ranking.json are the data model of
// internal/results, which the engine shares with export, report and study.
package orchestrator
