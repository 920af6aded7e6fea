// Command fakeworker is the stand-in, in the worker client's and the engine's tests, for the GPU worker: it speaks the worker
// protocol without a GPU and misbehaves on cue. A variant's parameters choose its behaviour:
//
//	US=n      the timing median is n microseconds (samples spread ±0.5 % around it, identical for
//	          equal n, so equal medians tie and different ones separate)
//	CRASH=1   exit 2 in the middle of the request
//	FATAL=1   answer with a fatal error (the context is gone), then exit 1, as the worker does
//	HANG=1    never answer
//	WRONG=1   fail verification
//	GARBAGE=1 answer with a line that is not JSON
//	SLOWMS=n  sleep n milliseconds before answering
//	FLOOD=1   write bytes without a newline until the pipe breaks
//	PARTIAL=1 write half a response line, a line on stderr, then exit 3 (PARTIAL=2: kill itself
//	          with SIGKILL instead)
//
// Environment: FAKEWORKER_NOGPU=1 says hello with an error (no GPU); FAKEWORKER_CUINIT=1 exits
// before the hello the way gorgonia.org/cu's init does on a host without a GPU; FAKEWORKER_DEVICES=n
// (default 1) makes device indexes >= n fail to start like a missing device; FAKEWORKER_NOREAD=1
// stops reading requests after the hello; FAKEWORKER_GRANDCHILD=1 starts a child that holds
// stdout and stderr open for 30 s (its pid goes to the log as "grandchild PID");
// FAKEWORKER_LOG=file appends one line per request ("op variant MxNxK"); FAKEWORKER_CUBLAS_US sets
// cuBLAS's median (default 1000).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"tilegen/internal/protocol"
)

// logf appends one line to FAKEWORKER_LOG, if set.
func logf(format string, args ...any) {
	if f := os.Getenv("FAKEWORKER_LOG"); f != "" {
		if lf, err := os.OpenFile(f, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(lf, format+"\n", args...)
			lf.Close()
		}
	}
}

func main() {
	if os.Getenv("FAKEWORKER_SLEEPER") == "1" {
		time.Sleep(30 * time.Second)
		return
	}
	if os.Getenv("FAKEWORKER_CUINIT") == "1" {
		// gorgonia.org/cu v0.9.6, cu.go: init() on cuInit failure.
		fmt.Printf("Error in initialization, please refer to %q for details on: %+v\n",
			"https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__INITIALIZE.html", "NoDevice")
		os.Exit(1)
	}
	if os.Getenv("FAKEWORKER_GRANDCHILD") == "1" {
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), "FAKEWORKER_SLEEPER=1")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			os.Exit(4)
		}
		logf("grandchild %d", gc.Process.Pid)
	}
	dev, _ := strconv.Atoi(os.Getenv("CUDA_VISIBLE_DEVICES"))
	n := 1
	if s := os.Getenv("FAKEWORKER_DEVICES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if dev >= n {
		fmt.Fprintln(os.Stderr, "cuInit: no CUDA-capable device is detected")
		os.Exit(1)
	}
	out := json.NewEncoder(os.Stdout)
	hello := protocol.Response{Op: protocol.OpHello, Version: protocol.Version}
	if os.Getenv("FAKEWORKER_NOGPU") == "1" {
		hello.Error = "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected"
		out.Encode(hello)
		os.Exit(1)
	}
	hello.Device = &protocol.Device{Ordinal: 0, Name: "Fake GPU", UUID: fmt.Sprintf("GPU-fake-%d", dev),
		ComputeCapability: "9.0", SMs: 4, MemoryBytes: 1 << 30, L2Bytes: 1 << 20, DriverVersion: 13000, CublasVersion: 130000}
	out.Encode(hello)
	if os.Getenv("FAKEWORKER_NOREAD") == "1" {
		time.Sleep(time.Hour)
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	for in.Scan() {
		var req protocol.Request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad request:", err)
			os.Exit(3)
		}
		if req.Op == protocol.OpQuit {
			return
		}
		if req.Op == protocol.OpPreload {
			// Preloading only saves time on a real device; the fake logs the module count.
			logf("preload %d modules", len(req.Preload))
			out.Encode(protocol.Response{ID: req.ID, Op: req.Op,
				Preload: &protocol.PreloadResult{Loaded: len(req.Preload), Threads: 1}})
			continue
		}
		name := "cublas"
		params := map[string]int{}
		if req.Kernel != nil {
			name = req.Kernel.Variant.Name
			for _, p := range req.Kernel.Variant.Params {
				params[p.Name] = p.Value
			}
		}
		logf("%s %s %dx%dx%d", req.Op, name, req.Shape.M, req.Shape.N, req.Shape.K)
		if ms := params["SLOWMS"]; ms > 0 {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		switch {
		case params["CRASH"] == 1:
			fmt.Fprintln(os.Stderr, "fake: illegal memory access")
			os.Exit(2)
		case params["FATAL"] == 1:
			out := json.NewEncoder(os.Stdout)
			_ = out.Encode(protocol.Response{ID: req.ID, Op: req.Op, Error: protocol.FatalPrefix + "kernel under test: IllegalAddress"})
			os.Exit(1)
		case params["HANG"] == 1:
			for {
				time.Sleep(time.Hour)
			}
		case params["FLOOD"] == 1:
			chunk := make([]byte, 1<<20)
			for i := range chunk {
				chunk[i] = 'x'
			}
			for {
				if _, err := os.Stdout.Write(chunk); err != nil {
					os.Exit(5)
				}
			}
		case params["PARTIAL"] > 0:
			fmt.Printf(`{"id":%d,"op":"run","tim`, req.ID)
			fmt.Fprintln(os.Stderr, "fake: died mid-line")
			if params["PARTIAL"] == 2 {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
			os.Exit(3)
		case params["GARBAGE"] == 1:
			fmt.Println("this is not JSON")
			continue
		}
		resp := protocol.Response{ID: req.ID, Op: req.Op}
		us := params["US"]
		if req.Op == protocol.OpCublas {
			us = 1000
			if s := os.Getenv("FAKEWORKER_CUBLAS_US"); s != "" {
				us, _ = strconv.Atoi(s)
			}
		}
		if req.Kernel != nil {
			v := req.Kernel.Variant
			gx, gy, gz := v.Grid(req.Shape.M, req.Shape.N, req.Shape.K, 4)
			blocks := gx * gy * gz
			resp.Attributes = &protocol.Attributes{Registers: 32, BlocksPerSM: 2, Blocks: blocks,
				Waves: float64(blocks) / float64(4*2), MaxThreadsPerBlock: 1024}
		}
		if vs := req.Verify; vs != nil {
			pass := params["WRONG"] != 1
			r := protocol.VerifyResult{Pass: pass, Seed: vs.Seed, Alpha: 1, LDA: req.Shape.K, LDB: req.Shape.N,
				LDC: req.Shape.N, MaxAbs: 1e-6, MaxRel: 1e-7, NormRel: 1e-8, FirstBad: -1}
			if !pass {
				r.MaxAbs, r.MaxRel, r.NormRel, r.MismatchPct, r.FirstBad = 3, 0.5, 0.2, 12.5, 7
				r.Reason = "12.5% of elements over tolerance, first at (0,7)"
			}
			resp.Verify = []protocol.VerifyResult{r}
			if vs.SubMatrix {
				r2 := r
				r2.Beta, r2.LDA, r2.LDB, r2.LDC = 0.5, req.Shape.K+3, req.Shape.N+3, req.Shape.N+3
				resp.Verify = append(resp.Verify, r2)
			}
			if !pass {
				out.Encode(resp)
				continue
			}
		}
		if t := req.Timing; t != nil {
			reps := t.Reps
			if reps < 1 {
				reps = 1
			}
			tr := &protocol.TimingResult{Reps: reps, Cold: t.Cold, InputSets: 1}
			var sum float64
			for i := 0; i < reps; i++ {
				x := float64(us) / 1000 * (1 + 0.001*float64((i*7)%11-5))
				tr.Samples = append(tr.Samples, x)
				sum += x
				if i == 0 || x < tr.MinMS {
					tr.MinMS = x
				}
				tr.MaxMS = max(tr.MaxMS, x)
			}
			tr.MeanMS = sum / float64(reps)
			tr.MedianMS = float64(us) / 1000
			resp.Timing = tr
		}
		out.Encode(resp)
	}
}
