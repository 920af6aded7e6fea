#ifndef TILEGEN_CP_ASYNC_CUH
#define TILEGEN_CP_ASYNC_CUH
// tilegen/cp_async.cuh: the cp.async instructions (sm_80+) that the pipelined loaders and the
// STAGES-deep shared-memory rings are built from. A copy goes from global to shared memory without
// passing through registers; copies are grouped per k tile (commit), and wait<N> blocks until at
// most N of this thread's groups are still in flight (the ring's depth minus one, or zero).
//
// The 16-byte form bypasses L1 (.cg); the zero-filling forms take a source size so that an element
// past the matrix edge is written as zero without reading global memory (seed 003: zero-filled
// partial tiles).
namespace tg {

__device__ __forceinline__ void cp_async16(float* smem, const float* gmem)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async16_zfill(float* smem, const float* gmem, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void cp_async4_zfill(float* smem, const float* gmem, bool valid)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

} // namespace tg
#endif // TILEGEN_CP_ASYNC_CUH
