package orchestrator

import (
	"fmt"
	"io"
	"text/tabwriter"

	"tilegen/internal/workerproc"
)

// Devices starts a worker per device and prints what each reports.
func Devices(worker string, devices []int, wd Watchdog, stdout io.Writer) error {
	p, err := workerproc.OpenPool(worker, nil, devices, wd.Hello)
	if err != nil {
		return err
	}
	defer p.Close()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "index\tname\tuuid\tcc\tSMs\tmemory\tL2\tdriver\tclock MHz\tcuBLAS\t")
	for _, sl := range p.Slots {
		d := sl.Device
		cublas := "-"
		if d.CublasVersion > 0 {
			cublas = fmt.Sprint(d.CublasVersion)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.1f GiB\t%d MiB\t%d\t%d\t%s\t\n", sl.Visible, d.Name, d.UUID,
			d.ComputeCapability, d.SMs, float64(d.MemoryBytes)/(1<<30), d.L2Bytes>>20, d.DriverVersion, d.ClockKHz/1000, cublas)
	}
	return tw.Flush()
}
