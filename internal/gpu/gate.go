package gpu

import (
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"
)

// gateTimeoutNS bounds how long tilegen_gate holds a stream: a batch whose launches the host cannot
// queue in that time (a host stalled that long, or one blocked on a full launch queue) runs ungated
// from there on instead of hanging.
const gateTimeoutNS = 200_000_000

// gate holds a stream while the host queues a batch of timed launches (templates/support/gate.cu.tmpl):
// hold launches tilegen_gate, which spins until the host writes its token into mapped host memory;
// release writes it. Between the two the host queues the batch, so the GPU runs it back to back and
// each event pair times the GPU alone, however late the host queued a launch.
type gate struct {
	fn    cu.Function
	flag  *hostWord
	token uint32
}

func newGate(fn cu.Function) (*gate, error) {
	h, err := newHostWord()
	if err != nil {
		return nil, err
	}
	return &gate{fn: fn, flag: h}, nil
}

// hold queues the gate on stream with a new token. Gates may be queued behind each other (the
// next batch's behind the running one's): each passes once the flag has reached its token, so a
// host that has already released a later batch does not keep an earlier gate waiting.
func (g *gate) hold(stream cu.Stream) error {
	g.token++
	flag, token, timeout := g.flag.dev, g.token, uint64(gateTimeoutNS)
	return g.fn.Launch(1, 1, 1, 1, 1, 1, 0, stream, []unsafe.Pointer{unsafe.Pointer(&flag), unsafe.Pointer(&token), unsafe.Pointer(&timeout)})
}

// release lets the held stream go on.
func (g *gate) release() { atomic.StoreUint32(g.flag.word(), g.token) }

func (g *gate) close() { g.flag.free() }
