package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMarshalResponseLimit(t *testing.T) {
	small := Response{ID: 7, Op: OpRun, Note: "fine"}
	b, err := marshalResponse(small, 1000)
	if err != nil || !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("small response: %q %v", b, err)
	}
	big := Response{ID: 8, Op: OpRun, Timing: &TimingResult{Samples: make([]float64, 1000)}}
	b, err = marshalResponse(big, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1000 {
		t.Fatalf("over-limit response still %d bytes", len(b))
	}
	var got Response
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != 8 || got.Op != OpRun || got.Timing != nil || !strings.Contains(got.Error, "over the protocol's limit of 1000") {
		t.Fatalf("got %+v", got)
	}
	if _, err := MarshalResponse(big); err != nil {
		t.Fatal(err)
	}
}
