#ifndef TILEGEN_MISALIGNED_A_CUH
#define TILEGEN_MISALIGNED_A_CUH
// tilegen/misaligned_a.cuh: the register-staged kernels' A loader for a misaligned A (lda not a
// multiple of 4, or A not 16-byte aligned: every problem with K % 4 != 0 under NN).
//
// tg::StagedLoad<KContiguous> gives each thread a float4 along k (4 consecutive k of one row) and
// stores it transposed. On a misaligned A its edge path reads the float4 as four scalars at the
// same map: each of the four loads a warp issues touches the 8 rows its lanes cover (lanes of a
// row 16 bytes apart), so the warp reads its 8 x 64 bytes four times over, a wavefront per row and
// load: the 10-13 % the split-K kernels lose on an odd K (results/workload/nvidia-h200/misaligned/).
//
// CoalescedLoad deals the tile the other way round: thread t holds one k of four consecutive rows, and
// the eight lanes of a quarter warp take eight consecutive groups of four rows at the same k (lane
// l: rows 4 * (l % 8) .. + 3 of its warp's 32, k = l / 8 of its warp's 4), so the four rows go to
// shared memory as one float4 (S[k][m..m+3]) and a quarter warp's float4s fill one contiguous
// 128-byte run: one wavefront per quarter where StagedLoad's four scalar stores take four each
// (S[k][m] with LDS a multiple of 32 puts its four lanes of a row in one bank). The loads read 16
// contiguous bytes of 8 rows per instruction, as StagedLoad's scalar loads do. Every path takes
// this map (the fast one too: four scalar loads for one float4 load), so that interior blocks of a
// misaligned A run the unguarded fast path; kernels launch it on problems whose A is misaligned.
// Same registers as StagedLoad (a float4 per F4).
//
// Kernels opt in with CoalescedA<Cfg> (a tg::StagedConfig whose A runs along k) and take this
// thread's origin from CoalescedLoad::origin_mn / origin_k (variants.yaml MIS = 3 with CoalescedB).
#include "tilegen/loaders.cuh"

namespace tg {

template <int MN, int BK, int LDS, int T>
struct CoalescedLoad {
    static constexpr int F4 = MN * BK / (4 * T);
    static constexpr int STEP = 4 * T / BK; // rows between a thread's groups of four
    static constexpr int KW = BK / 4;         // warps on one band of 32 rows, 4 k each
    static_assert(F4 * 4 * T == MN * BK && BK % 4 == 0 && (T / 32) % KW == 0 && LDS % 4 == 0,
                  "CoalescedLoad: whole warps per band of 32 rows, float4 stores in shared memory");

    // This thread's first row (relative to the tile) and its k: warp w covers rows 32 * (w / KW)
    // onwards at k 4 * (w % KW) .. + 3.
    static __device__ __forceinline__ int origin_mn(int tid) { return 32 * (tid / 32 / KW) + 4 * (tid % 8); }
    static __device__ __forceinline__ int origin_k(int tid) { return 4 * (tid / 32 % KW) + tid % 32 / 8; }

    // load reads rows mn + i * STEP + 0..3 at column k (this thread's k included) into r[i].x..w;
    // rows at or past extent are zero, and on the tail tile so are columns at or past kEnd. vec (a
    // 16-byte A) is not needed: the loads are scalar on every path.
    template <Path PATH>
    static __device__ __forceinline__ void load(float4 (&r)[F4], const float* __restrict__ g, int ld, int extent,
                                                int kEnd, int mn, int k, bool vec)
    {
        (void)vec;
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            const int row = mn + i * STEP;
            const float* p = g + (size_t)row * ld + k;
            if (PATH == PATH_FAST) {
                r[i] = make_float4(p[0], p[ld], p[2 * ld], p[3 * ld]);
            } else {
                const bool kok = PATH != PATH_TAIL || k < kEnd;
                r[i].x = (kok && row + 0 < extent) ? p[0] : 0.0f;
                r[i].y = (kok && row + 1 < extent) ? p[ld] : 0.0f;
                r[i].z = (kok && row + 2 < extent) ? p[2 * ld] : 0.0f;
                r[i].w = (kok && row + 3 < extent) ? p[3 * ld] : 0.0f;
            }
        }
    }

    // store writes the four rows of each float4 at k: S[k][mn + i * STEP .. + 3].
    static __device__ __forceinline__ void store(float* s, const float4 (&r)[F4], int k, int mn)
    {
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            *reinterpret_cast<float4*>(s + k * LDS + mn + i * STEP) = r[i];
        }
    }
};

// CoalescedA: a staged configuration (tg::StagedConfig with a k-contiguous A) whose A loads take
// CoalescedLoad's map.
template <class Cfg>
struct CoalescedA : Cfg {
    using ALoad = CoalescedLoad<Cfg::BM, Cfg::BK, Cfg::AS, Cfg::T>;
    static_assert(Cfg::ALoad::ROW_F4 > 0, "CoalescedA: a k-contiguous A through registers");
};

} // namespace tg
#endif // TILEGEN_MISALIGNED_A_CUH
