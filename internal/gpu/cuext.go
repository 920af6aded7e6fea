package gpu

// The few driver calls gorgonia.org/cu v0.9.6 does not wrap. cu's handle types keep their C
// handle as their only field, so a handle is read through unsafe.Pointer (checked by size below).

//#cgo LDFLAGS: -lcuda
//#include <cuda.h>
import "C"

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// The conversions below rely on cu.Function and cu.Stream being one C handle each.
var _ = [1]struct{}{}[unsafe.Sizeof(cu.Function{})-unsafe.Sizeof(C.CUfunction(nil))]
var _ = [1]struct{}{}[unsafe.Sizeof(cu.Stream{})-unsafe.Sizeof(C.CUstream(nil))]

func cFunction(fn cu.Function) C.CUfunction { return *(*C.CUfunction)(unsafe.Pointer(&fn)) }

// streamHandle is the raw CUstream, which is also the cudaStream_t cuBLAS takes.
func streamHandle(s cu.Stream) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&s)) }

// setMaxDynamicShared lets fn launch with more than the default 48 KiB of dynamic shared memory.
func setMaxDynamicShared(fn cu.Function, bytes int) error {
	r := C.cuFuncSetAttribute(cFunction(fn), C.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, C.int(bytes))
	if r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %d): %s", bytes, resultName(r))
	}
	return nil
}

// ctxSynchronize waits for all work in the current context; its error is the sticky one after a fault.
func ctxSynchronize() error {
	if r := C.cuCtxSynchronize(); r != C.CUDA_SUCCESS {
		return fmt.Errorf("cuCtxSynchronize: %s", resultName(r))
	}
	return nil
}

// hostWord is one 32-bit word of pinned host memory mapped into the device's address space: the
// host writes it, kernels read it through dev.
type hostWord struct {
	host unsafe.Pointer
	dev  cu.DevicePtr
}

func newHostWord() (*hostWord, error) {
	var p unsafe.Pointer
	if r := C.cuMemHostAlloc(&p, 4, C.CU_MEMHOSTALLOC_DEVICEMAP|C.CU_MEMHOSTALLOC_PORTABLE); r != C.CUDA_SUCCESS {
		return nil, fmt.Errorf("cuMemHostAlloc(DEVICEMAP): %s", resultName(r))
	}
	var d C.CUdeviceptr
	if r := C.cuMemHostGetDevicePointer(&d, p, 0); r != C.CUDA_SUCCESS {
		C.cuMemFreeHost(p)
		return nil, fmt.Errorf("cuMemHostGetDevicePointer: %s", resultName(r))
	}
	*(*uint32)(p) = 0
	return &hostWord{host: p, dev: cu.DevicePtr(d)}, nil
}

// word is the host's view of the word.
func (h *hostWord) word() *uint32 { return (*uint32)(h.host) }

func (h *hostWord) free() { C.cuMemFreeHost(h.host) }

func resultName(r C.CUresult) string {
	var name, desc *C.char
	C.cuGetErrorName(r, &name)
	C.cuGetErrorString(r, &desc)
	if name == nil {
		return fmt.Sprintf("CUresult %d", int(r))
	}
	if desc == nil {
		return C.GoString(name)
	}
	return C.GoString(name) + ": " + C.GoString(desc)
}
