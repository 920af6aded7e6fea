package gpu

import (
	"fmt"

	"gorgonia.org/cu"

	"tilegen/internal/protocol"
)

// deviceInfo gathers the facts recorded with every result. Clocks are optional: newer drivers
// may stop reporting them, so a failure there leaves the field zero instead of failing the worker.
func deviceInfo(dev cu.Device, ordinal int) (protocol.Device, error) {
	d := protocol.Device{Ordinal: ordinal, DriverVersion: cu.Version()}
	var err error
	if d.Name, err = dev.Name(); err != nil {
		return d, fmt.Errorf("device name: %w", err)
	}
	id, err := dev.UUID()
	if err != nil {
		return d, fmt.Errorf("device UUID: %w", err)
	}
	d.UUID = "GPU-" + id.String() // the form nvidia-smi prints
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return d, fmt.Errorf("compute capability: %w", err)
	}
	d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	if d.MemoryBytes, err = dev.TotalMem(); err != nil {
		return d, fmt.Errorf("device memory: %w", err)
	}
	if free, _, err := cu.MemInfo(); err == nil {
		d.FreeBytes = free
	}
	for _, a := range []struct {
		attr     cu.DeviceAttribute
		dst      *int
		required bool
	}{
		{cu.MultiprocessorCount, &d.SMs, true},
		{cu.L2CacheSize, &d.L2Bytes, true},
		{cu.ClockRate, &d.ClockKHz, false},
		{cu.MemoryClockRate, &d.MemClockKHz, false},
		{cu.GlobalMemoryBusWidth, &d.MemBusWidth, false},
	} {
		v, err := dev.Attribute(a.attr)
		if err != nil && a.required {
			return d, fmt.Errorf("device attribute %v: %w", a.attr, err)
		}
		if err == nil {
			*a.dst = v
		}
	}
	return d, nil
}
