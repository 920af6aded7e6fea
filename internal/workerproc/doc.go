// Package workerproc is the runner's side of the GPU worker process: finding the tilegen-worker
// binary, starting one per device (chosen through CUDA_VISIBLE_DEVICES, so the worker always opens
// its ordinal 0) in its own process group with a parent-death signal, checking its hello and
// protocol version, sending one request at a time under a watchdog, and reporting crashes, hangs,
// garbage and over-long lines with the worker's last stderr line. A worker that dies before its
// hello is explained (no driver, the toolkit's stub libcuda, no device).
//
// Pool holds one Slot per device and hands out Tasks dynamically; a slot whose worker crashed
// starts a fresh one for the next request, and a slot that cannot start one retires. Worker is a
// single process driven directly (runner outofcore and hybrid). The protocol itself is
// internal/protocol; what the requests mean is the engine's (internal/orchestrator).
package workerproc
