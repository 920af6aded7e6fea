#ifndef TILEGEN_LOADERS_CUH
#define TILEGEN_LOADERS_CUH
// tilegen/loaders.cuh: moving one operand's k tile from global to shared memory.
//
// Every kernel of the library computes from k-major shared tiles, S[k][mn] with LDS floats per k
// row (A as As[k][m], B as Bs[k][n]), so that the TM (TN) fragment values of one k are contiguous
// (tilegen/fragments.cuh). In global memory an operand runs either along k (Layout::KContiguous: A
// of C = A*B with row-major A, a row of A is contiguous in k) or along m/n (Layout::MNContiguous: B
// with row-major B). A loader is chosen by that layout:
//   KContiguous   the tile is transposed on its way into shared memory (the seed's As[ty][i] turned
//                 k-major: measured 7 to 9 points of cuBLAS over an untransposed A on H100);
//   MNContiguous  the tile is copied straight, rows of global memory to k rows of shared memory.
// Each comes as StagedLoad (float4 loads into registers, then stores into shared memory: the
// register prefetch of seed 001 can hold them across the math) and as AsyncCopy (cp.async, no
// registers: the B operand of the pipelined kernels, and both operands of cpasync/slicedk).
//
// Under NN A is k-contiguous and B mn-contiguous (C = A*B with both row-major). The op axis swaps
// them (A^T runs along m, B^T along k): StagedLoad serves either layout as it is; AsyncCopy::copy
// (16-byte copies straight into k rows) needs mn-contiguous rows, and a k-contiguous operand in a
// cp.async ring takes the element copies of AsyncCopy<KContiguous> (its copy is copy4).
//
// MN is the tile's extent along m (n), BK along k, T the threads that share the work. Callers pass
// the operand at the block's first row (column) and `extent`, the rows (columns) left before the
// matrix edge; past it, and past kEnd on the tail tile, the tile is zero-filled (seed 003).
#include "tilegen/cp_async.cuh"
#include "tilegen/guards.cuh"

namespace tg {

// How an operand runs in global memory (see above).
enum class Layout { KContiguous, MNContiguous };

template <Layout L, int MN, int BK, int LDS, int T>
struct StagedLoad;
template <Layout L, int MN, int BK, int LDS, int T>
struct AsyncCopy;

// StagedLoad, k-contiguous (A): each thread moves F4 float4s that run along k; consecutive threads
// take consecutive float4s, so a thread's k offset is the same for all of them and its rows are
// STEP apart. store() writes them transposed (S[k][mn]).
template <int MN, int BK, int LDS, int T>
struct StagedLoad<Layout::KContiguous, MN, BK, LDS, T> {
    static constexpr int F4 = MN * BK / (4 * T);
    static constexpr int ROW_F4 = BK / 4; // float4s per row: thread t's first is row t / ROW_F4, k (t % ROW_F4) * 4
    static constexpr int STEP = 4 * T / BK;
    static_assert(F4 * 4 * T == MN * BK && T % ROW_F4 == 0, "the tile must split into whole float4s per thread");

    // load reads this thread's float4s of the tile at k (k includes the thread's k offset) into registers.
    template <Path PATH>
    static __device__ __forceinline__ void load(float4 (&r)[F4], const float* __restrict__ g, int ld, int extent,
                                                int kEnd, int mn, int k, bool vec)
    {
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            const int row = mn + i * STEP;
            const float* p = g + (size_t)row * ld + k;
            if (PATH == PATH_FAST) {
                r[i] = *reinterpret_cast<const float4*>(p);
            } else if (PATH == PATH_EDGE) {
                if (row >= extent) {
                    r[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                } else if (vec) {
                    r[i] = *reinterpret_cast<const float4*>(p);
                } else {
                    r[i] = make_float4(p[0], p[1], p[2], p[3]);
                }
            } else {
                const bool ok = row < extent;
                r[i].x = (ok && k + 0 < kEnd) ? p[0] : 0.0f;
                r[i].y = (ok && k + 1 < kEnd) ? p[1] : 0.0f;
                r[i].z = (ok && k + 2 < kEnd) ? p[2] : 0.0f;
                r[i].w = (ok && k + 3 < kEnd) ? p[3] : 0.0f;
            }
        }
    }

    // store writes the registers transposed into the shared tile s: S[k][mn].
    static __device__ __forceinline__ void store(float* s, const float4 (&r)[F4], int k, int mn)
    {
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            float* p = s + k * LDS + mn + i * STEP;
            p[0 * LDS] = r[i].x;
            p[1 * LDS] = r[i].y;
            p[2 * LDS] = r[i].z;
            p[3 * LDS] = r[i].w;
        }
    }
};

// StagedLoad, mn-contiguous (B): float4s run along mn, a thread's rows (k) are STEP apart. A
// float4 can cross the edge, so the edge path checks it whole and falls back to guarded elements.
template <int MN, int BK, int LDS, int T>
struct StagedLoad<Layout::MNContiguous, MN, BK, LDS, T> {
    static constexpr int F4 = MN * BK / (4 * T);
    static constexpr int ROW_F4 = MN / 4; // float4s per k row: thread t's first is k row t / ROW_F4, mn (t % ROW_F4) * 4
    static constexpr int STEP = 4 * T / MN;
    static_assert(F4 * 4 * T == MN * BK && T % ROW_F4 == 0, "the tile must split into whole float4s per thread");

    template <Path PATH>
    static __device__ __forceinline__ void load(float4 (&r)[F4], const float* __restrict__ g, int ld, int extent,
                                                int kEnd, int mn, int k, bool vec)
    {
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            const int kk = k + i * STEP;
            const float* p = g + (size_t)kk * ld + mn;
            if (PATH == PATH_FAST || (PATH == PATH_EDGE && vec && mn + 4 <= extent)) {
                r[i] = *reinterpret_cast<const float4*>(p);
            } else if (PATH == PATH_EDGE && mn + 4 <= extent) {
                r[i] = make_float4(p[0], p[1], p[2], p[3]);
            } else {
                const bool ok = kk < kEnd;
                r[i].x = (ok && mn + 0 < extent) ? p[0] : 0.0f;
                r[i].y = (ok && mn + 1 < extent) ? p[1] : 0.0f;
                r[i].z = (ok && mn + 2 < extent) ? p[2] : 0.0f;
                r[i].w = (ok && mn + 3 < extent) ? p[3] : 0.0f;
            }
        }
    }

    static __device__ __forceinline__ void store(float* s, const float4 (&r)[F4], int k, int mn)
    {
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            *reinterpret_cast<float4*>(s + (k + i * STEP) * LDS + mn) = r[i];
        }
    }
};

// AsyncCopy, k-contiguous (A of cpasync and slicedk): copy4 copies the tile into shared memory
// transposed, S[k][mn], one 4-byte cp.async per element with zero-fill past the edge (and past kEnd
// on the tail): no register staging, so any ld costs the same. Lanes take 8 consecutive k of 4
// consecutive rows: a warp reads four 32-byte row segments, and since LDS % 32 == 4 its 32 stores
// (bank 4k + mn) fall in 32 distinct banks. The row offsets are loop-invariant, the k offsets
// immediates.
template <int MN, int BK, int LDS, int T>
struct AsyncCopy<Layout::KContiguous, MN, BK, LDS, T> {
    static_assert(LDS % 32 == 4, "transposed element copies are conflict-free only with LDS % 32 == 4");

    template <Path PATH>
    static __device__ __forceinline__ void copy4(float* s, const float* __restrict__ tp, const float* __restrict__ g,
                                                 int ld, int extent, int kEnd, int k, int tid)
    {
        // tp is this thread's first element, g + (tid / 8) * ld + tid % 8.
        constexpr int MS = T / 8; // rows per pass
        static_assert(BK % 8 == 0 && MN % MS == 0, "transposed element copies: 8 k by T/8 rows per pass");
        const int kq = tid % 8, mq = tid / 8;
        const float* const base = tp + k;
#pragma unroll
        for (int mb = 0; mb < MN / MS; ++mb) {
            // A row past the edge reads (nothing, zero-filled) through the tile's first row, which
            // exists: the row offset and the predicate are loop-invariant, no per-copy select.
            const bool rowok = PATH == PATH_FAST || mb * MS + mq < extent;
            const float* const row = base + (rowok ? (size_t)(mb * MS) * ld : -(ptrdiff_t)mq * ld);
#pragma unroll
            for (int kb = 0; kb < BK / 8; ++kb) {
                const int kk = kb * 8 + kq;
                float* const d = s + kk * LDS + mb * MS + mq;
                if (PATH == PATH_TAIL) {
                    const bool ok = rowok && k + kk < kEnd;
                    cp_async4_zfill(d, ok ? row + kb * 8 : g, ok);
                } else {
                    cp_async4_zfill(d, row + kb * 8, rowok);
                }
            }
        }
    }

    // copy is copy4 under the ring's call of the mn-contiguous copy (a k-contiguous B in a
    // staged_mainloop: B of op(B) = B^T, the ring stays STAGES deep); the float4 coordinates and
    // the alignment it is passed go unused, any ld costs the same. tp is this thread's first
    // element, g + (tid / 8) * ld + tid % 8.
    template <Path PATH, bool EDGE_Z16, bool ELEM>
    static __device__ __forceinline__ void copy(float* s, const float* __restrict__ g, int ld, int extent, int kEnd,
                                                int, int, int, int, bool, int k0, int tid,
                                                const float* __restrict__ tp)
    {
        copy4<PATH>(s, tp, g, ld, extent, kEnd, k0, tid);
    }
};

// AsyncCopy, mn-contiguous (B of every pipelined kernel): copy() moves this thread's float4s
// straight into shared memory, copy4() the whole tile element by element.
template <int MN, int BK, int LDS, int T>
struct AsyncCopy<Layout::MNContiguous, MN, BK, LDS, T> {
    static constexpr int F4 = MN * BK / (4 * T);
    static constexpr int ROW_F4 = MN / 4; // as StagedLoad's: thread t's first float4 is k row t / ROW_F4, mn (t % ROW_F4) * 4
    static constexpr int STEP = 4 * T / MN;
    static_assert(F4 * 4 * T == MN * BK && T % ROW_F4 == 0, "the tile must split into whole float4s per thread");

    // copy4 copies the whole tile at k element by element (4-byte cp.async, zero-filling columns
    // past the edge and, on the tail, rows past kEnd). Consecutive threads take consecutive columns,
    // so one warp-wide copy reads a contiguous row segment and writes consecutive banks: any ld
    // stays coalesced (four 4-byte copies of one thread's float4 would touch 4x the sectors and
    // banks). One pointer walks down the rows: two adds per copy. tp is this thread's first element:
    // g + (tid / MN) * ld + tid % MN for T >= MN, with a column past the edge clamped to the tile's
    // first one, so that every address is valid and only the loop-invariant predicate zero-fills it;
    // g + tid for T < MN.
    template <Path PATH>
    static __device__ __forceinline__ void copy4(float* s, const float* __restrict__ tp, const float* __restrict__ g,
                                                 int ld, int extent, int kEnd, int k, int tid)
    {
        constexpr bool TAIL = PATH == PATH_TAIL;
        constexpr int E = BK * MN / T;
        if (T >= MN) {
            constexpr int RS = T >= MN ? T / MN : 1; // rows per pass
            const int c = tid % MN, r0 = tid / MN;
            const bool cok = c < extent;
            const float* p = tp + (size_t)k * ld;
            const size_t step = (size_t)RS * ld;
#pragma unroll
            for (int i = 0; i < E; ++i) {
                const int r = r0 + i * RS;
                if (TAIL) {
                    const bool ok = cok && k + r < kEnd;
                    cp_async4_zfill(s + r * LDS + c, ok ? p : g, ok);
                } else {
                    cp_async4_zfill(s + r * LDS + c, p, cok);
                }
                p += step;
            }
        } else {
#pragma unroll
            for (int i = 0; i < E; ++i) {
                // T < MN: row i*T / MN, column tid + i*T % MN.
                const int c = (i * T) % MN + tid, r = (i * T) / MN;
                const float* p = tp + (size_t)(k + r) * ld + (i * T) % MN;
                const bool ok = c < extent && (!TAIL || k + r < kEnd);
                cp_async4_zfill(s + r * LDS + c, ok ? p : g, ok);
            }
        }
    }

    // copy issues this thread's part of the tile at k0 (its row k = k0 + sk, column mn = smn):
    // one 16-byte copy per float4 on the fast path and, with an aligned operand (vec), for an edge
    // float4 wholly inside the edge; four 4-byte copies for one inside it with any ld, and
    // element-wise zero-filling copies for a float4 crossing the edge and on the tail.
    // EDGE_Z16: an edge float4 wholly past the edge is one zero-filling 16-byte copy too (edge
    // blocks then run as fast as interior ones). ELEM: a misaligned operand and the tail take copy4
    // instead (coalesced; in register-staged kernels its addressing costs 30-40 registers).
    template <Path PATH, bool EDGE_Z16, bool ELEM>
    static __device__ __forceinline__ void copy(float* s, const float* __restrict__ g, int ld, int extent, int kEnd,
                                                int k, int mn, int sk, int smn, bool vec, int k0, int tid,
                                                const float* __restrict__ tp)
    {
        if (ELEM && PATH == PATH_TAIL) {
            copy4<PATH_TAIL>(s, tp, g, ld, extent, kEnd, k0, tid);
            return;
        }
        if (ELEM && PATH == PATH_EDGE && !vec) {
            copy4<PATH_EDGE>(s, tp, g, ld, extent, kEnd, k0, tid);
            return;
        }
#pragma unroll
        for (int i = 0; i < F4; ++i) {
            const int kk = k + i * STEP;
            float* d = s + (sk + i * STEP) * LDS + smn;
            const float* p = g + (size_t)kk * ld + mn;
            if (PATH == PATH_FAST || (!EDGE_Z16 && PATH == PATH_EDGE && vec && mn + 4 <= extent)) {
                cp_async16(d, p);
            } else if (EDGE_Z16 && PATH == PATH_EDGE && vec && (mn + 4 <= extent || mn >= extent)) {
                // The column is loop-invariant: a float4 wholly inside the edge is one 16-byte copy,
                // one wholly past it is zero-filled through the tile's first column (a valid
                // address, nothing read).
                const bool ok = mn < extent;
                cp_async16_zfill(d, ok ? p : p - mn, ok);
            } else if (PATH == PATH_EDGE && mn + 4 <= extent) {
#pragma unroll
                for (int j = 0; j < 4; ++j) cp_async4_zfill(d + j, p + j, true);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool ok = kk < kEnd && mn + j < extent;
                    cp_async4_zfill(d + j, ok ? p + j : g, ok);
                }
            }
        }
    }
};

} // namespace tg
#endif // TILEGEN_LOADERS_CUH
