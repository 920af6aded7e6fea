package workerproc

import "testing"

func TestParseDevices(t *testing.T) {
	if d, err := ParseDevices("0,1,1"); err != nil || len(d) != 2 {
		t.Errorf("ParseDevices: %v %v", d, err)
	}
	if d, err := ParseDevices("all"); err != nil || d != nil {
		t.Errorf("ParseDevices(all): %v %v", d, err)
	}
}
