package workerproc

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

// startupError is a worker that ended before its hello. Its message names the worker, the device,
// the exit status and the last line the worker printed, and says first when that line means there
// is no usable CUDA driver or device.
type startupError struct{ msg string }

func (e *startupError) Error() string { return e.msg }

// cuInitFailure is what gorgonia.org/cu's package init prints on stdout before os.Exit(1) when
// cuInit fails: the worker cannot say hello, or anything else, on a host without a GPU.
var cuInitFailure = regexp.MustCompile(`Error in initialization, .* for details on: (\S+)`)

// cuInitMeaning explains the cuInit results a host without a usable GPU gives (cu's names).
var cuInitMeaning = map[string]string{
	"NoDevice":             "no CUDA-capable device is visible",
	"InsufficientDriver":   "the driver is older than the CUDA version the worker needs",
	"SystemDriverMismatch": "the driver library and the kernel module are different versions",
	"NotPermitted":         "not permitted to use the device",
	"UnknownErrorCode:34":  "libcuda.so is the toolkit's stub, not a driver",
	"UnknownErrorCode:804": "forward compatibility is not supported on this device",
}

// nvidiaVersionFile is where a loaded NVIDIA kernel module reports its version.
var nvidiaVersionFile = "/proc/driver/nvidia/version"

// earlyExit describes a worker that exited with status before its hello. stderrLast is its
// stderr's last line; early the non-protocol line it printed on stdout, if any.
func earlyExit(bin, visible, status, stderrLast string, early []byte) error {
	last := stderrLast
	if last == "" && early != nil {
		last = printable(string(early))
	}
	msg := fmt.Sprintf("worker %s for device %s exited before its hello (%s)", bin, visible, status)
	if last != "" {
		msg += ": " + OneLine(last)
	} else {
		msg += " without printing anything"
	}
	if d := driverProblem(printable(string(early)) + "\n" + stderrLast); d != "" {
		msg = fmt.Sprintf("no CUDA device found (driver: %s; %s): %s", d, nvidiaModule(), msg)
	}
	return &startupError{msg}
}

// driverProblem recognizes a worker that died because CUDA could not start: cu's init failure, or
// a missing driver library. It returns "" for anything else.
func driverProblem(out string) string {
	if m := cuInitFailure.FindStringSubmatch(out); m != nil {
		if why, ok := cuInitMeaning[m[1]]; ok {
			return fmt.Sprintf("cuInit failed with %s, %s", m[1], why)
		}
		return "cuInit failed with " + m[1]
	}
	if strings.Contains(out, "libcuda.so") && strings.Contains(out, "cannot open shared object file") {
		return "libcuda.so.1 is not installed"
	}
	return ""
}

// nvidiaModule says which NVIDIA kernel module is loaded, if any.
func nvidiaModule() string {
	b, err := os.ReadFile(nvidiaVersionFile)
	if err != nil {
		return "no NVIDIA kernel module loaded"
	}
	// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue ..."
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	for i := 0; i+2 < len(f); i++ {
		if f[i] == "Kernel" && f[i+1] == "Module" {
			return "NVIDIA kernel module " + f[i+2]
		}
	}
	return "NVIDIA kernel module loaded"
}

// printable makes worker-written text safe to show on one line: invalid UTF-8 and control
// characters (escape sequences included) become '?', tabs spaces.
func printable(s string) string {
	s = strings.ToValidUTF8(s, "?")
	return strings.Map(func(r rune) rune {
		if r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, strings.TrimRight(s, "\r\n"))
}

// OneLine keeps worker-provided text to a single printable line so that every reason fits one CSV
// cell and one error line: the first line only, control characters (escape sequences included) as
// in printable, at most 300 bytes.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	s = printable(s)
	const max = 300
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut-- // never split a character
		}
		s = s[:cut] + "…"
	}
	return s
}
