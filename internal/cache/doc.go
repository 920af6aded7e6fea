// Package cache is the runner's result cache: an append-only JSONL file of measured records
// (internal/results.Record), keyed by Record.Key, that several runners may share. Each record is
// one write(2) under an exclusive flock and fsynced on its own; readers take a shared lock; a torn
// last line is dropped with a warning and cut by the next append; a file that is not a cache is
// refused untouched. What a key covers and when a hit may be served are the engine's
// (internal/orchestrator).
package cache
