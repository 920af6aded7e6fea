// prototype: the block's C tile through shared memory, each row stored by a group of lanes as
// 16-byte-aligned float4s at any ldc (the row's misalignment taken out by a funnel of two shared reads).
namespace tg {
__device__ __forceinline__ float4 funnel4(float4 lo, float4 hi, int mis)
{
    return mis == 1 ? make_float4(lo.w, hi.x, hi.y, hi.z)
         : mis == 2 ? make_float4(lo.z, lo.w, hi.x, hi.y)
                    : make_float4(lo.y, lo.z, lo.w, hi.x);
}
template <class Tile, int SMEM_FLOATS, bool CS = false>
__device__ __forceinline__ void store_tile_realign(const float (&acc)[Tile::TM][Tile::TN], float* smem, int tid,
                                                   float* __restrict__ C, int ldc, int M, int N, int m0, int n0,
                                                   int wm, int wn, float alpha, float beta)
{
    constexpr int BM = Tile::BM, BN = Tile::BN, TM = Tile::TM, TN = Tile::TN, LM = Tile::LM, LN = Tile::LN, T = Tile::T;
    constexpr int PADS = (((4 * LN) % 32) - (BN % 32) + 32) % 32;
    constexpr int S = BN + PADS;       // floats per staged row
    constexpr int RPI = BM / TM;       // block rows per accumulator row index
    constexpr int CH = (RPI * TM * S <= SMEM_FLOATS) ? 1 : (RPI * TM / 2 * S <= SMEM_FLOATS) ? 2 : (RPI * TM / 4 * S <= SMEM_FLOATS) ? 4 : 8;
    constexpr int TMC = TM / CH;       // accumulator rows per chunk
    constexpr int R = RPI * TMC;       // staged rows per chunk
    constexpr int GPR = BN / 4;        // float4 groups (lanes) per row
    constexpr int RPW = 32 / GPR;      // rows per warp per pass
    constexpr int NW = T / 32;
    constexpr int PASSES = R / (NW * RPW);
    static_assert(CH <= TM && R * S <= SMEM_FLOATS, "the staged chunk must fit the ring");
    static_assert(GPR <= 32 && 32 % GPR == 0 && PASSES * NW * RPW == R, "rows must split evenly over the warps");
    const int warp = tid / 32, lane = tid % 32;
    const int lm = lane / LN, ln = lane % LN;
    const int wrow = (wm / Tile::WM) * LM + lm; // this thread's staged row within an accumulator row index
    const int q = lane % GPR;                   // this lane's float4 of a row in the copy-out
    const int ncols = min(BN, N - n0);
    cp_async_wait<0>();
    __syncthreads();
#pragma unroll
    for (int g = 0; g < CH; ++g) {
        if (g > 0) __syncthreads();
#pragma unroll
        for (int ii = 0; ii < TMC; ++ii) {
            const int i = g * TMC + ii;
#pragma unroll
            for (int c = 0; c < TN / 4; ++c)
                *reinterpret_cast<float4*>(smem + (ii * RPI + wrow) * S + wn + (c * LN + ln) * 4) =
                    make_float4(acc[i][4 * c], acc[i][4 * c + 1], acc[i][4 * c + 2], acc[i][4 * c + 3]);
        }
        __syncthreads();
#pragma unroll
        for (int p = 0; p < PASSES; ++p) {
            const int lr = (p * NW + warp) * RPW + lane / GPR;
            const int ii = lr / RPI, rest = lr % RPI;
            const int i = g * TMC + ii;
            const int row = m0 + (rest / LM) * Tile::WM + (i / 4) * LM * 4 + (rest % LM) * 4 + (i % 4);
            if (row >= M) continue;
            float* const crow = C + (size_t)row * ldc + n0;
            const int mis = (int)(((uintptr_t)crow >> 2) & 3);
            const float* const srow = smem + lr * S;
            if (q > 0 || mis == 0) {
                const int e0 = 4 * q - mis;
                const float4 hi = *reinterpret_cast<const float4*>(srow + 4 * q);
                float4 v = hi;
                if (mis) v = funnel4(*reinterpret_cast<const float4*>(srow + 4 * q - 4), hi, mis);
                v = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
                float* const pc = crow + e0;
                if (e0 + 4 <= ncols) {
                    if (beta != 0.0f) {
                        const float4 o = *reinterpret_cast<const float4*>(pc);
                        v.x = fmaf(beta, o.x, v.x); v.y = fmaf(beta, o.y, v.y);
                        v.z = fmaf(beta, o.z, v.z); v.w = fmaf(beta, o.w, v.w);
                    }
                    if (CS) __stcs(reinterpret_cast<float4*>(pc), v); else *reinterpret_cast<float4*>(pc) = v;
                } else {
                    const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        if (e0 + j < ncols) {
                            float x = e[j];
                            if (beta != 0.0f) x = fmaf(beta, pc[j], x);
                            if (CS) __stcs(pc + j, x); else pc[j] = x;
                        }
                    }
                }
            } else {
                // lane 0 of a misaligned row: its 4 - mis head elements and the row's mis tail ones.
#pragma unroll
                for (int t = 0; t < 4; ++t) {
                    const int e = t < 4 - mis ? t : BN - 4 + t;
                    if (e < ncols) {
                        float x = alpha * srow[e];
                        if (beta != 0.0f) x = fmaf(beta, crow[e], x);
                        if (CS) __stcs(crow + e, x); else crow[e] = x;
                    }
                }
            }
        }
    }
}

template <class Tile>
__device__ __forceinline__ void store_tile_cs(const float (&acc)[Tile::TM][Tile::TN], float* __restrict__ C, int ldc,
                                              int M, int N, int row0, int col0, float alpha, float beta, bool vc)
{
#pragma unroll
    for (int jj = 0; jj < Tile::F4; ++jj) {
        float4 v = Tile::group(acc, jj);
        const int row = row0 + Tile::grow(jj), col = col0 + Tile::gcol(jj);
        if (row >= M) continue;
        float* crow = C + (size_t)row * ldc;
        v = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
        if (vc && col + 4 <= N) {
            float4* p = reinterpret_cast<float4*>(crow + col);
            if (beta != 0.0f) {
                const float4 o = *p;
                v.x = fmaf(beta, o.x, v.x); v.y = fmaf(beta, o.y, v.y); v.z = fmaf(beta, o.z, v.z); v.w = fmaf(beta, o.w, v.w);
            }
            __stcs(p, v);
        } else {
            const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (col + j < N) {
                    float x = e[j];
                    if (beta != 0.0f) x = fmaf(beta, crow[col + j], x);
                    __stcs(crow + col + j, x);
                }
            }
        }
    }
}
}
