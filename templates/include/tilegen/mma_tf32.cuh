#ifndef TILEGEN_MMA_TF32_CUH
#define TILEGEN_MMA_TF32_CUH
// tilegen/mma_tf32.cuh: the TF32 tensor-core atom (mma.sync m16n8k8, FP32 accumulate, inline PTX)
// and the 3xTF32 operand split (the technique CUTLASS ships for Ampere as "3xTF32" and Triton as
// tf32x3): an FP32 value x is carried as hi = tf32(x) and lo = tf32(x - hi), both rounded to
// nearest (cvt.rna), so hi + lo holds 21 significant bits of x, and a product
// a*b ~= a_lo*b_hi + a_hi*b_lo + a_hi*b_hi (the a_lo*b_lo term lies below FP32's last bit). The
// split happens on the fragment as it is read from shared memory: no extra pass over A or B.
//
// Fragment layout of m16n8k8 .row.col with .tf32 operands (PTX ISA, "Matrix Fragments for
// mma.m16n8k8"), lane = 4*g + t: A (16x8) a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4);
// B (8x8) b0 (t, g), b1 (t+4, g); C (16x8) c0 (g, 2t), c1 (g, 2t+1), c2 (g+8, 2t), c3 (g+8, 2t+1).
// The k index of A and B only pairs a[k] with b[k], so the kernels map fragment k-slots t and t+4
// to the adjacent k = 2t and 2t+1 of shared memory: one 8-byte load per A row pair.
//
// The tensor core adds into its FP32 accumulator with truncation (round toward zero), so a long
// running sum kept in the MMA accumulator drifts toward zero by up to an ulp per MMA: measured on
// H100 at 4096^3 this made 3xTF32 25x less accurate than SGEMM. The 3xTF32 kernels therefore sum
// each k-step's three products in a fresh accumulator (small terms first) and add it to the running
// sum with an FP32 add, rounded to nearest (Ootomo and Yokota, "Recovering single precision
// accuracy from Tensor Cores while surpassing the FP32 theoretical peak performance", 2022).
//
// Where 3xTF32 differs from FP32: hi = tf32(x) of a finite x near FLT_MAX may round up to
// infinity (then lo = x - inf is NaN), and x - hi of an infinite x is NaN; operands are
// expected finite and below 2^127 * (2 - 2^-10).
#include <stdint.h>

namespace tg {

// to_tf32 is x as a TF32 MMA operand, rounded to nearest (ties away from zero): half a TF32 ulp
// (bit 12) is added to the FP32 bits and the tensor core ignores the low 13 bits, so the MMA sees
// the rounded value (CUTLASS's round_half_ulp_truncate). One integer add instead of cvt.rna's
// finiteness test, add and select; Inf stays Inf, and a finite x that rounds past FLT_MAX becomes
// Inf as under cvt.rna.
__device__ __forceinline__ uint32_t to_tf32(float x)
{
    return __float_as_uint(x) + 0x1000u;
}

// split_tf32 is the 3xTF32 split of x: hi = tf32(x) (rounded to nearest, low bits cleared, so that
// x - hi is exact in FP32), lo = tf32(x - hi) as an MMA operand. hi + lo is x to 2^-22 relative.
__device__ __forceinline__ void split_tf32(float x, uint32_t& hi, uint32_t& lo)
{
    hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    lo = to_tf32(x - __uint_as_float(hi));
}

// mma_tf32_zero is d = a * b on one m16n8k8 TF32 tile (a fresh accumulator).
__device__ __forceinline__ void mma_tf32_zero(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %10, %10, %10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

// mma_tf32 is d += a * b on one m16n8k8 TF32 tile: a is the A fragment (a0..a3), b the B
// fragment (b0, b1), d the FP32 accumulator fragment (c0..c3), all in the layout above.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// store2 writes C[row][col], C[row][col+1] = alpha*(x, y) + beta*C inside the M x N result: one
// 8-byte store when both lie inside and the pair is 8-byte aligned (v8), else element by element.
// beta == 0 never reads C.
__device__ __forceinline__ void store2(float x, float y, float* __restrict__ C, int ldc, int M, int N, int row,
                                       int col, float alpha, float beta, bool v8)
{
    if (row >= M) return;
    float* p = C + (size_t)row * ldc + col;
    x *= alpha;
    y *= alpha;
    if (v8 && col + 2 <= N) {
        float2 v = make_float2(x, y);
        if (beta != 0.0f) {
            const float2 o = *reinterpret_cast<float2*>(p);
            v.x = fmaf(beta, o.x, v.x);
            v.y = fmaf(beta, o.y, v.y);
        }
        *reinterpret_cast<float2*>(p) = v;
    } else {
        if (col < N) p[0] = beta != 0.0f ? fmaf(beta, p[0], x) : x;
        if (col + 1 < N) p[1] = beta != 0.0f ? fmaf(beta, p[1], y) : y;
    }
}

} // namespace tg
#endif // TILEGEN_MMA_TF32_CUH
