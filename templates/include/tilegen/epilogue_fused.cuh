#ifndef TILEGEN_EPILOGUE_FUSED_CUH
#define TILEGEN_EPILOGUE_FUSED_CUH
// tilegen/epilogue_fused.cuh: the fused epilogues of issue 16 on top of tilegen/epilogue.cuh's
// stores, C = act(alpha*acc + beta*C + bias) with bias one float per row of C (bias[i]) or per
// column (bias[j]) and act the identity, ReLU or GELU (tanh form). Kept apart from epilogue.cuh so
// that kernels without an epilogue include exactly what they did before (same source, same PTX).
//   activate<ACT>            one element's activation (also the separate baseline kernel's)
//   store4_fused, store_tile_fused  the register-tiled families' float4 groups and thread tiles
// beta == 0 never reads C (BLAS semantics), as in epilogue.cuh; the bias is added after beta*C and
// before the activation (cublasLt's BIAS, RELU_BIAS and GELU_BIAS order).
#include "tilegen/epilogue.cuh"

namespace tg {

// Act is the activation after the bias.
enum class Act { None, ReLU, GELU };

// activate applies ACT to x. GELU is the tanh form 0.5x(1 + tanh(u)), u = sqrt(2/pi)(x + 0.044715x^3),
// computed as x / (1 + exp(-2u)), the same function in exact arithmetic (0.5(1 + tanh u) is the
// logistic function of 2u), with the hardware exp (ex2.approx) and a fast division: a handful of
// instructions per element instead of tanhf's slow path, which the thread tile unrolls 32 to 128
// times (measured on H100: tanhf cost the 4096x4096x1024 GEMM 15 % of its time). Its error stays
// within a few ulp of |x| (the verifier's epilogue allowance). exp(-2u) overflowing to infinity (x
// below about -9) gives x * 0 = -0, GELU's limit.
template <Act ACT>
__device__ __forceinline__ float activate(float x)
{
    if (ACT == Act::ReLU) return fmaxf(x, 0.0f);
    if (ACT == Act::GELU) {
        const float u = 0.7978845608028654f * fmaf(0.044715f * x, x * x, x);
        return __fdividef(x, 1.0f + __expf(-2.0f * u));
    }
    return x;
}

// store4_fused is store4 with the epilogue: C[row][col..col+3] = act(alpha*v + beta*C + bias). A row
// past M is skipped; a group wholly inside N is one 16-byte load of C (beta != 0) and one 16-byte
// store when C and ldc are 16-byte aligned (vc), else element by element with a column guard.
// BIAS_ROW: bias[row] for the whole group, else bias[col + j] per element (read only for columns
// inside N; one 16-byte load for a whole group when the bias is 16-byte aligned, vbias, and col a
// multiple of 4, as in the tiled kernels). The activation is written once for both paths: a thread
// tile unrolls this 32 to 128 times, and two copies of GELU made the kernel's epilogue code about
// 100 KB longer than ReLU's (on the H100 GELU cost the 4096x4096x1024 GEMM 9 % over bias+ReLU).
template <Act ACT, bool BIAS_ROW>
__device__ __forceinline__ void store4_fused(float4 v, float* __restrict__ C, int ldc, int M, int N, int row, int col,
                                             float alpha, float beta, bool vc, const float* __restrict__ bias,
                                             bool vbias)
{
    if (row >= M) return;
    float* crow = C + (size_t)row * ldc;
    const bool vec = vc && col + 4 <= N;
    float e[4] = {alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w};
    if (beta != 0.0f) {
        if (vec) {
            const float4 o = *reinterpret_cast<const float4*>(crow + col);
            e[0] = fmaf(beta, o.x, e[0]);
            e[1] = fmaf(beta, o.y, e[1]);
            e[2] = fmaf(beta, o.z, e[2]);
            e[3] = fmaf(beta, o.w, e[3]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (col + j < N) e[j] = fmaf(beta, crow[col + j], e[j]);
            }
        }
    }
    float b[4];
    if (BIAS_ROW) {
        b[0] = b[1] = b[2] = b[3] = __ldg(bias + row);
    } else if (vbias && vec) {
        // col is a multiple of 4: the group's four biases are one 16-byte load.
        const float4 b4 = __ldg(reinterpret_cast<const float4*>(bias + col));
        b[0] = b4.x, b[1] = b4.y, b[2] = b4.z, b[3] = b4.w;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) b[j] = col + j < N ? __ldg(bias + col + j) : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) e[j] = activate<ACT>(e[j] + b[j]);
    if (vec) {
        *reinterpret_cast<float4*>(crow + col) = make_float4(e[0], e[1], e[2], e[3]);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (col + j < N) crow[col + j] = e[j];
        }
    }
}

// store_tile_fused is store_tile with the epilogue: a thread's whole TM x TN tile (Tile: a
// tg::WarpTile) whose first element is C[row0][col0], group by group.
template <class Tile, Act ACT, bool BIAS_ROW>
__device__ __forceinline__ void store_tile_fused(const float (&acc)[Tile::TM][Tile::TN], float* __restrict__ C, int ldc,
                                                 int M, int N, int row0, int col0, float alpha, float beta, bool vc,
                                                 const float* __restrict__ bias)
{
    // The thread tile's columns start at multiples of 4 (tg::WarpTile's float4 groups).
    const bool vbias = !BIAS_ROW && (reinterpret_cast<uintptr_t>(bias) & 15) == 0;
#pragma unroll
    for (int j = 0; j < Tile::F4; ++j) {
        store4_fused<ACT, BIAS_ROW>(Tile::group(acc, j), C, ldc, M, N, row0 + Tile::grow(j), col0 + Tile::gcol(j), alpha,
                                    beta, vc, bias, vbias);
    }
}

} // namespace tg
#endif // TILEGEN_EPILOGUE_FUSED_CUH
