#include "tilegen/wg_pipeline.cuh"
extern "C" __global__ void __launch_bounds__(256, 1) jitk(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                                               float* __restrict__ C, int ldc, int M, int N, int K, float alpha, float beta)
{
    using Cfg = tg::WgTf32Config<128, 2, 32, 4, true, false, 1>;
    extern __shared__ float4 tg_tc_smem[];
    const int tid = threadIdx.x;
    const int m0 = blockIdx.y * Cfg::BM, n0 = blockIdx.x * Cfg::BN;
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    tg::wg_mainloop<Cfg>(acc, reinterpret_cast<float*>(tg_tc_smem), A, lda, B, ldb, M, N, K, m0, n0, tid);
    tg::wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
}
