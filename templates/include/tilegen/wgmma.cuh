#ifndef TILEGEN_WGMMA_CUH
#define TILEGEN_WGMMA_CUH
// tilegen/wgmma.cuh: Hopper's warpgroup MMA atom for TF32 (wgmma.mma_async m64nNk8, PTX ISA 8.0,
// target sm_90a) and the few instructions around it. A warpgroup (four consecutive warps, 128
// threads) computes D (64 x N, FP32) = A (64 x 8) * B (8 x N) asynchronously: A from registers,
// B from shared memory through a 64-bit matrix descriptor.
//
// Layouts (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts"), warp w of the group,
// lane = 4*g + t:
//   A (registers, tf32): rows 16w.. of the 64; a0 (16w+g, t), a1 (16w+g+8, t), a2 (16w+g, t+4),
//     a3 (16w+g+8, t+4): the A fragment of mma.m16n8k8, one per warp.
//   D (registers, f32): d[4j+0] (16w+g, 8j+2t), d[4j+1] (16w+g, 8j+2t+1), d[4j+2] (16w+g+8, 8j+2t),
//     d[4j+3] (16w+g+8, 8j+2t+1), j = 0..N/8-1.
//   B (shared, K-major): TF32 operands must be K-major, so B's N rows each hold their K elements
//     contiguously, in core matrices of 8 rows x 16 bytes (8 x 4 TF32). Without swizzle a core
//     matrix is 128 contiguous bytes; with a swizzle of 32, 64 or 128 bytes, a row holds that many
//     bytes of K and its 16-byte chunks are permuted by the row index (CuTe's Swizzle<B, 4, 3>).
//     The descriptor gives the start address, the byte offset between core matrices along K
//     (leading byte offset; no swizzle only, which these kernels do not use) and between groups of
//     8 rows (stride byte offset).
//
// Order of a step (PTX ISA, "Asynchronous Warpgroup Level Matrix Instructions"): shared memory the
// MMA reads was written through the generic proxy (st.shared, cp.async), so the writer fences it
// to the async proxy (fence_async_shared) before the barrier that publishes it; wgmma_fence orders
// earlier register writes (accumulators, A fragments) before the MMAs; commit closes a group of
// MMAs, and wait<N> returns once at most N groups are still running, after which their
// accumulators may be read and their registers and shared memory reused.
//
// nvcc releases before 12.0 reject the sm_90a target but pass inline PTX through unchanged: the
// generator compiles these kernels for sm_90 with TILEGEN_PTX_TARGET_SM_90A defined and raises the
// PTX's .version and .target (variants.yaml ptx_target), and the driver assembles them on the GPU.
// Compiled from source (an exported header), they need nvcc 12 or later and the sm_90a target.
#include <stdint.h>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && !defined(TILEGEN_PTX_TARGET_SM_90A)
#error "tilegen/wgmma.cuh: Hopper's wgmma kernels need the sm_90a target: compile with -gencode arch=compute_90a,code=sm_90a (nvcc 12 or later)"
#endif

namespace tg {

// wgmma_desc_sw is the descriptor of a swizzled K-major operand (swizzle 1: 128 bytes, 2: 64, 3:
// 32) whose groups of 8 rows lie sbo bytes apart; its atoms start on 1024-byte boundaries (base
// offset 0), and addr may step along k inside an atom (the hardware swizzles the address).
__device__ __forceinline__ uint64_t wgmma_desc_sw(uint32_t addr, uint32_t sbo, uint32_t swizzle)
{
    return (uint64_t)((addr & 0x3ffff) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)((sbo & 0x3ffff) >> 4) << 32) |
           ((uint64_t)swizzle << 62);
}

__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// fence_async_shared makes this thread's generic-proxy writes to shared memory visible to the
// async proxy that wgmma reads through.
__device__ __forceinline__ void fence_async_shared()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// wgmma_reg_fence keeps the compiler from moving reads or writes of an accumulator across the
// asynchronous MMAs (the registers belong to the tensor core until wgmma_wait returns).
template <int R>
__device__ __forceinline__ void wgmma_reg_fence(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// WgmmaTf32<N>::mma issues one wgmma.mma_async.m64nNk8.f32.tf32.tf32 with A from registers: a is
// the lane's A fragment, b the descriptor of B, acc != 0 adds into d, acc == 0 overwrites it.
template <int N>
struct WgmmaTf32;

// d (64 x 64) = a * b (+ d when acc): 32 accumulator registers per thread.
template <>
struct WgmmaTf32<64> {
    static __device__ __forceinline__ void mma(float (&d)[32], const uint32_t (&a)[4], uint64_t b, int acc)
    {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 "
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
            "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(acc));
    }
};

// d (64 x 128) = a * b (+ d when acc): 64 accumulator registers per thread.
template <>
struct WgmmaTf32<128> {
    static __device__ __forceinline__ void mma(float (&d)[64], const uint32_t (&a)[4], uint64_t b, int acc)
    {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
            "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(acc));
    }
};

// d (64 x 256) = a * b (+ d when acc): 128 accumulator registers per thread.
template <>
struct WgmmaTf32<256> {
    static __device__ __forceinline__ void mma(float (&d)[128], const uint32_t (&a)[4], uint64_t b, int acc)
    {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 "
            "{"
            "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
            "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
            "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
            "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
            "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
            "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
            "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
            "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
            "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
              "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
              "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
              "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
              "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
              "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
              "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
              "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
              "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
              "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
              "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
              "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
              "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
              "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
              "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
              "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(acc));
    }
};

} // namespace tg
#endif // TILEGEN_WGMMA_CUH
