#ifndef TILEGEN_MISALIGNED_CUH
#define TILEGEN_MISALIGNED_CUH
// tilegen/misaligned.cuh: the register-staged kernels' B ring for a misaligned B (ldb not a multiple
// of 4, or B not 16-byte aligned: every problem with an odd N under NN). The 16-byte cp.async of
// tg::AsyncCopy<MNContiguous> cannot take such rows, and its fallback keeps the fast path's
// thread-to-float4 map, one 4-byte copy per element: lane l copies columns 4l..4l+3, so each of the
// four copies a warp issues spans 512 bytes at a 16-byte stride (16 sectors for 128 useful bytes,
// four times the sectors and shared-memory wavefronts of the aligned copy). On an H200 it cost the
// register-staged kernels up to 30 % against 7-10 % for cpasync, whose element copies are
// coalesced (results/workload/nvidia-h200/misaligned/).
//
// CoalescedCopy is that ring with the lanes that share a k row re-dealt over its columns on a
// misaligned operand: lane l of a group of G lanes (G = the float4s of a row a warp covers, at most
// 32) copies columns l, l + G, l + 2G, l + 3G of the group's 4G, so each warp-wide copy reads one
// contiguous run of G floats and writes G consecutive banks. Same registers as the copies it
// replaces: one row pointer, the column offsets loop-invariant. An aligned operand, the tail tile
// and everything else take tg::AsyncCopy unchanged.
//
// Kernels opt in with CoalescedB<Cfg> (a tg::StagedConfig whose B runs along n), a template
// parameter of the families (variants.yaml MIS), so that the kernels without it stay as they are.
#include "tilegen/loaders.cuh"

namespace tg {

template <int MN, int BK, int LDS, int T>
struct CoalescedCopy : AsyncCopy<Layout::MNContiguous, MN, BK, LDS, T> {
    using Base = AsyncCopy<Layout::MNContiguous, MN, BK, LDS, T>;
    using Base::F4;
    using Base::ROW_F4;
    using Base::STEP;
    static constexpr int G = ROW_F4 < 32 ? ROW_F4 : 32; // lanes of a warp on one k row
    static_assert(ROW_F4 % G == 0 && 32 % G == 0, "a warp's lanes cover whole groups of a row");

    // copy: as AsyncCopy::copy (same arguments; k, mn: this thread's row and column in the fast
    // path's map). A misaligned operand's full k tiles take the re-dealt element copies; columns
    // past the edge (extent) are zero-filled through the row's first element, a valid address.
    template <Path PATH, bool EDGE_Z16, bool ELEM>
    static __device__ __forceinline__ void copy(float* s, const float* __restrict__ g, int ld, int extent, int kEnd,
                                                int k, int mn, int sk, int smn, bool vec, int k0, int tid,
                                                const float* __restrict__ tp)
    {
        if (PATH != PATH_EDGE || vec) {
            Base::template copy<PATH, EDGE_Z16, ELEM>(s, g, ld, extent, kEnd, k, mn, sk, smn, vec, k0, tid, tp);
            return;
        }
        // This thread's float4 f of its row belongs to the group of G starting at float4 f - f % G;
        // its columns are that group's first column plus f % G, then every G.
        const int f = smn / 4;
        const int c0 = (f / G) * (4 * G) + f % G;
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            const float* const row = g + (size_t)(k + i * STEP) * ld;
            float* const d = s + (sk + i * STEP) * LDS;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = c0 + j * G;
                const bool ok = c < extent;
                cp_async4_zfill(d + c, row + (ok ? c : 0), ok);
            }
        }
    }
};

// CoalescedB: a staged configuration (tg::StagedConfig with an n-contiguous B) whose ring copies
// a misaligned B with CoalescedCopy.
template <class Cfg>
struct CoalescedB : Cfg {
    using BCopy = CoalescedCopy<Cfg::BN, Cfg::BK, Cfg::BS, Cfg::T>;
    static_assert(Cfg::BCopy::ROW_F4 > 0 && Cfg::STAGES >= 2, "CoalescedB: an n-contiguous B through the cp.async ring");
};

} // namespace tg
#endif // TILEGEN_MISALIGNED_CUH
