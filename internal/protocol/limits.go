package protocol

import (
	"encoding/json"
	"fmt"
)

// Line limits. Both sides refuse a longer line instead of buffering it: a peer that writes without
// a newline must not be able to take all memory.
const (
	// MaxRequestBytes bounds one request line. The largest legitimate request is a preload of a
	// whole catalog's PTX (tens of MB; one module of a large unrolled kernel is a few MB).
	MaxRequestBytes = 256 << 20
	// MaxResponseBytes bounds one response line, without its newline. The largest legitimate
	// responses carry timing samples (about 20 bytes each: 1000 by default, one per repetition of
	// --max-reps) or a breakdown's five series: a few MB even for a million samples. The
	// orchestrator kills a worker whose line grows past this and fails the request with
	// "worker response over 64 MiB"; the worker answers with an error instead of such a line.
	MaxResponseBytes = 64 << 20
)

// MarshalResponse encodes resp as one line (with its newline). A response that would be longer
// than MaxResponseBytes is replaced by an error response to the same request, so the orchestrator
// gets a reason instead of a line it must refuse.
func MarshalResponse(resp Response) ([]byte, error) {
	return marshalResponse(resp, MaxResponseBytes)
}

func marshalResponse(resp Response, limit int) ([]byte, error) {
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("encoding response %d: %w", resp.ID, err)
	}
	if len(b) > limit {
		short := Response{ID: resp.ID, Op: resp.Op, Version: resp.Version,
			Error: fmt.Sprintf("response of %d bytes is over the protocol's limit of %d (ask for fewer repetitions)", len(b), limit)}
		if b, err = json.Marshal(short); err != nil {
			return nil, fmt.Errorf("encoding response %d: %w", resp.ID, err)
		}
	}
	return append(b, '\n'), nil
}
