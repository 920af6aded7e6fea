#ifndef TILEGEN_FRAGMENTS_CUH
#define TILEGEN_FRAGMENTS_CUH
// tilegen/fragments.cuh: 2D register tiling with warp tiles (seed 001: more work per thread), the
// math of every regtile-class kernel. A block of T threads computes a BM x BN tile of C; each warp a
// WM x WN warp tile (WN = 32*TM*TN/WM); each thread a TM x TN thread tile held in registers. Per k
// step a thread reads TM values of A and TN of B from the k-major shared tiles (its fragments) and
// does TM*TN FFMAs, an outer product: FFMAs per shared read is what sets speed on Hopper, where
// every other instruction takes an FFMA's issue slot.
//
// A warp's 32 lanes form an LM x LN grid over its warp tile. A thread's TM rows are TM/4 groups of
// 4 consecutive rows, LM*4 apart (likewise columns), so each fragment read is one float4 (LDS.128)
// and a warp's reads of one k row touch LM (LN) distinct float4s, broadcast to the other lanes.
//
// SK > 1 (slicedk): SK groups of TB = T/SK threads each take every SK-th k step of the same tile
// (in-block split-K), so a group computes KS = BK/SK steps per tile.
namespace tg {

template <int BM_, int BN_, int BK_, int WM_, int TM_, int TN_, int PAD_, int T_, int SK_ = 1>
struct WarpTile {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int WM = WM_, TM = TM_, TN = TN_;
    static constexpr int WN = 32 * TM * TN / WM;
    static constexpr int PAD = PAD_, T = T_;
    static constexpr int SK = SK_, TB = T / SK, KS = BK / SK;
    static constexpr int LM = WM / TM, LN = WN / TN, WARPS_N = BN / WN;
    static_assert(WN * WM == 32 * TM * TN && LM * LN == 32, "a warp tile must hold 32 thread tiles");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of float4 groups");
    static_assert((BM / WM) * (BN / WN) * 32 == TB, "warps must cover the block tile");
    // Shared tiles, k-major: As[k][m] with AS floats per k row, Bs[k][n] with BS. PAD floats per
    // row shift banks (for the transposed stores of A).
    static constexpr int AS = BM + PAD, BS = BN + PAD;
    static constexpr int A_TILE = BK * AS, B_TILE = BK * BS;
    // A thread tile is F4 float4 groups: group j is accumulator row j / (TN/4), columns
    // 4*(j % (TN/4)) + 0..3, at C row row0 + grow(j) and column col0 + gcol(j).
    static constexpr int F4 = TM * TN / 4;

    // Thread t computes in warp w = (t % TB) / 32 at lane l = t % 32 (k slice t / TB): its thread
    // tile starts at row (w / WARPS_N) * WM + (l / LN) * 4 and column (w % WARPS_N) * WN + (l % LN) * 4
    // of the block tile, its fragments at k row ks of the shared tiles (aoffk = row + ks * AS).

    // load_frag reads the TM (TN) fragment values of k step k; as/bs already point at this thread's
    // first float4 of the tile (and slice), so all other offsets are compile-time constants.
    static __device__ __forceinline__ void load_frag(float (&a)[TM], float (&b)[TN], const float* as, const float* bs, int k)
    {
#pragma unroll
        for (int r = 0; r < TM / 4; ++r) {
            const float4 v = *reinterpret_cast<const float4*>(as + k * SK * AS + r * LM * 4);
            a[4 * r + 0] = v.x;
            a[4 * r + 1] = v.y;
            a[4 * r + 2] = v.z;
            a[4 * r + 3] = v.w;
        }
#pragma unroll
        for (int c = 0; c < TN / 4; ++c) {
            const float4 v = *reinterpret_cast<const float4*>(bs + k * SK * BS + c * LN * 4);
            b[4 * c + 0] = v.x;
            b[4 * c + 1] = v.y;
            b[4 * c + 2] = v.z;
            b[4 * c + 3] = v.w;
        }
    }

    // fma_frag is one k step's rank-1 update of the thread tile.
    static __device__ __forceinline__ void fma_frag(float (&acc)[TM][TN], const float (&a)[TM], const float (&b)[TN])
    {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    }

    // compute runs the KS k steps of one shared tile pair, each fragment read just before its FMAs
    // (the XB main loop instead reads step k+1's fragments during step k's FMAs).
    static __device__ __forceinline__ void compute(float (&acc)[TM][TN], const float* as, const float* bs)
    {
#pragma unroll
        for (int k = 0; k < KS; ++k) {
            float a[TM], b[TN];
            load_frag(a, b, as, bs, k);
            fma_frag(acc, a, b);
        }
    }

    static __device__ __forceinline__ int grow(int j) { return ((j / (TN / 4)) / 4) * LM * 4 + (j / (TN / 4)) % 4; }
    static __device__ __forceinline__ int gcol(int j) { return (j % (TN / 4)) * LN * 4; }
    static __device__ __forceinline__ float4 group(const float (&acc)[TM][TN], int j)
    {
        const float* a = &acc[j / (TN / 4)][4 * (j % (TN / 4))];
        return make_float4(a[0], a[1], a[2], a[3]);
    }
};

} // namespace tg
#endif // TILEGEN_FRAGMENTS_CUH
