package orchestrator

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"tilegen/internal/results"
)

// progress reports each finished measurement.
type progress interface {
	step(r results.Record)
	done()
}

// newProgress picks a progress bar with an ETA when w is a terminal (mode auto) or asked for (bar),
// plain lines otherwise, or nothing (none).
func newProgress(w io.Writer, mode string, total int) progress {
	if mode == "auto" || mode == "" {
		mode = "plain"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bar"
		}
	}
	switch mode {
	case "none":
		return noProgress{}
	case "bar":
		return &barProgress{bar: progressbar.NewOptions(total, progressbar.OptionSetWriter(w),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionSetElapsedTime(true),
			progressbar.OptionFullWidth(), progressbar.OptionClearOnFinish(), progressbar.OptionSetDescription("measuring"))}
	default:
		return &plainProgress{w: w, total: total}
	}
}

// ValidProgress reports whether s is a --progress mode.
func ValidProgress(s string) bool {
	return s == "auto" || s == "bar" || s == "plain" || s == "none"
}

type noProgress struct{}

func (noProgress) step(results.Record) {}
func (noProgress) done()               {}

type plainProgress struct {
	mu    sync.Mutex
	w     io.Writer
	n     int
	total int
}

func (p *plainProgress) step(r results.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "[%d/%d] %s %s %s\n", p.n, p.total, r.Variant, results.ShapeString(r.Shape), outcome(r))
}

func (p *plainProgress) done() {}

type barProgress struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar
}

func (p *barProgress) step(r results.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Describe(fmt.Sprintf("%s %s %s", r.Variant, results.ShapeString(r.Shape), outcome(r)))
	p.bar.Add(1)
}

func (p *barProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bar.Finish()
}

// outcome is a record's status in a few words: "ok 9.1 TFLOP/s", "failed: reason".
func outcome(r results.Record) string {
	switch {
	case r.Status != results.StatusOK:
		return r.Status + ": " + r.Reason
	case r.Timing != nil:
		return fmt.Sprintf("ok %.1f TFLOP/s", results.GFLOPS(r.Shape, r.Timing.MedianMS)/1000)
	default:
		worst := 0.0
		for _, v := range r.Verify {
			worst = max(worst, v.MaxRel)
		}
		return fmt.Sprintf("ok max rel err %.2g", worst)
	}
}
