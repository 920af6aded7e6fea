#ifndef TILEGEN_WG_WS_CUH
#define TILEGEN_WG_WS_CUH
// tilegen/wg_ws.cuh: the wgmma_tf32 block tile (tilegen/wg_pipeline.cuh) with warp specialization,
// the wgmma_ws family. One warpgroup more than the MMAs need is the producer: it copies k tiles into
// the STAGES-deep ring, writes A's 3xTF32 residual, and hands each slot to the consumers through a
// "full" mbarrier; the consumer warpgroups read their register-operand fragments, issue the MMAs and
// hand the slot back through an "empty" mbarrier once the MMAs that read it have finished. Nothing
// waits on a block-wide barrier inside the loop, so the consumer warpgroups drift apart: one drains
// its MMAs (the 3xTF32 fold, a wait for a slot) while the other keeps the tensor core busy. (H100,
// 4096^3: 3xTF32 91 -> 110 TFLOP/s against the barrier-per-tile loop with the same tile.)
//
// Producer, k tile kt: wait until the slot's previous tile was released (empty, parity of its
// previous use), copy tile kt (cp.async, one group per tile; WsCopier: an interior tile is two
// pointer increments per 16-byte copy, so the producer fits in PRODUCER_REGS registers), then
// finish tile kt - LAG: wait for its copies (cp.async.wait_group LAG), write its residual
// (3xTF32), fence the slot to the async proxy that wgmma reads through and arrive on its full
// barrier (128 arrivals). LAG <= STAGES - 2, or the producer would wait for a release that needs a
// tile it has not published. LAG 0 (TF32, nothing to write): the copies themselves arrive on the
// full barrier when they land (cp.async.mbarrier.arrive.noinc), and the consumer fences to the
// async proxy after its wait.
//
// Consumer, k tile kt: wait on full (parity of this use), read the fragments, issue the slot's MMAs
// as one group; once at most one group is in flight (none at a 3xTF32 fold, every FOLD tiles) the
// slots of the finished groups are released (one arrival per warp, 4 WG in all).
//
// Registers: the block has 128 (WG + 1) threads. With two consumer warpgroups the launch gives each
// thread 168; the producer gives back all but PRODUCER_REGS (setmaxnreg.dec) and the consumers take
// exactly what it gave (setmaxnreg.inc to REGS; asking for more waits forever).
#include "tilegen/wg_pipeline.cuh"

namespace tg {

__device__ __forceinline__ void mbar_init(uint32_t bar, unsigned count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

// mbar_wait returns once the barrier's phase of the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nTG_MBAR_WAIT:\n"
                 "mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n"
                 "@!p bra TG_MBAR_WAIT;\n}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

// cp_async_mbar_arrive makes the barrier count one arrival of this thread once all of its earlier
// cp.async copies have landed (.noinc: the arrival is one of the count the barrier was set up with).
__device__ __forceinline__ void cp_async_mbar_arrive(uint32_t bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];\n" ::"r"(bar) : "memory");
}

template <int N>
__device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N>
__device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

// WgLoaders is Cfg as the producer warpgroup sees it: the tile's copies and residuals spread over
// its 128 threads instead of the whole block (wg_load_tile and wg_split_tile read THREADS).
template <class Cfg>
struct WgLoaders : Cfg {
    static constexpr int THREADS = 128;
    static_assert(Cfg::A_CHUNKS % 128 == 0 && Cfg::B_CHUNKS % 128 == 0, "whole copies per producer thread");
};

// WsCopier is a producer thread's share of an interior k tile (no guards): its chunks of each
// operand lie a fixed number of rows apart in global and shared memory (the swizzle of a chunk's
// A row repeats every 8 rows, and a thread's rows are 16 or 32 apart), so a copy is two pointer
// increments, and a k tile further is one more: the producer needs few registers.
template <class Cfg>
struct WsCopier {
    static constexpr int KC = Cfg::KC, BN4 = Cfg::BN / 4;
    static constexpr int NA = Cfg::A_CHUNKS / 128, NB = Cfg::B_CHUNKS / 128;
    static constexpr int RA = 128 / KC;                    // A rows between a thread's chunks
    static constexpr int RB = Cfg::RK ? 128 / KC : 128 / BN4; // B rows (k-rows unless RK)
    static_assert(128 % KC == 0 && 128 % BN4 == 0, "chunks a fixed number of rows apart");
    const float* sa; // shared operand: this thread's first chunk of k tile 0
    const float* ra; // register operand, the same
    size_t sa_i, ra_i, ra_k; // source steps: between chunks (floats), per k tile (register operand)
    int da, db;      // destinations in a slot's A and B tiles (floats)
    int ar, akc, br, bc; // the first chunk's row and column (k, or n for B's k-rows) in each tile

    __device__ __forceinline__ WsCopier(const float* S, int lds, int s0, const float* R, int ldr, int r0, int p)
    {
        akc = p % KC, ar = p / KC;
        sa = S + (size_t)(s0 + ar) * lds + 4 * akc;
        da = wg_a_offset<Cfg>(ar, akc);
        sa_i = (size_t)RA * lds;
        if (Cfg::RK) {
            br = p / KC, bc = (p % KC) * 4;
            ra = R + (size_t)(r0 + br) * ldr + bc;
            db = br * Cfg::BS + bc;
            ra_i = (size_t)RB * ldr;
            ra_k = Cfg::BK;
        } else {
            br = p / BN4, bc = (p % BN4) * 4;
            ra = R + (size_t)br * ldr + r0 + bc;
            db = br * Cfg::BS + bc;
            ra_i = (size_t)RB * ldr;
            ra_k = (size_t)Cfg::BK * ldr;
        }
    }
    // copy issues k tile kt's copies into the slot at shared address slot (bytes).
    __device__ __forceinline__ void copy(uint32_t slot, int kt) const
    {
        const float* s = sa + (size_t)kt * Cfg::BK;
        uint32_t d = slot + 4u * da;
#pragma unroll 4
        for (int i = 0; i < NA; ++i, s += sa_i, d += 4u * RA * Cfg::BK)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
        s = ra + (size_t)kt * ra_k;
        d = slot + 4u * (Cfg::A_TILE + Cfg::A_LO + db);
#pragma unroll 4
        for (int i = 0; i < NB; ++i, s += ra_i, d += 4u * RB * Cfg::BS)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
    }
    // copy_edge is copy for a tile at an edge (rows past ns or nr, k past K, or unaligned
    // operands): tc_chunk's guarded copies, zeros past the edges, one chunk at a time.
    __device__ __forceinline__ void copy_edge(float* slot, int kt, const float* S, int ns, int s0, bool vs,
                                              const float* R, int nr, int r0, bool vr, int K) const
    {
        const int k0 = kt * Cfg::BK;
#pragma unroll 1
        for (int i = 0; i < NA; ++i) {
            const int r = ar + i * RA;
            const int n = s0 + r < ns ? min(max(K - k0 - 4 * akc, 0), 4) : 0;
            tc_chunk(slot + da + i * RA * Cfg::BK, sa + (size_t)kt * Cfg::BK + i * sa_i, n, vs, S);
        }
        float* bs = slot + Cfg::A_TILE + Cfg::A_LO + db;
#pragma unroll 1
        for (int i = 0; i < NB; ++i) {
            const int r = br + i * RB;
            const int n = Cfg::RK ? (r0 + r < nr ? min(max(K - k0 - bc, 0), 4) : 0)
                                  : (k0 + r < K ? min(max(nr - r0 - bc, 0), 4) : 0);
            tc_chunk(bs + i * RB * Cfg::BS, ra + (size_t)kt * ra_k + i * ra_i, n, vr, R);
        }
    }
};

// WgWsConfig adds the producer to a WgTf32Config: LAG tiles between a tile's copies and its
// hand-off, the block's threads, the consumers' register budget and the barriers' shared memory.
template <class Cfg, int LAG_, int PREGS_ = 56>
struct WgWsConfig : Cfg {
    // LAG 0: the copies themselves arrive on the full barrier (cp.async.mbarrier.arrive), TF32 only.
    static constexpr int LAG = LAG_;
    static_assert(LAG <= Cfg::STAGES - 2 && (LAG >= 1 || !Cfg::SPLIT3), "LAG: 1 .. STAGES - 2 (0: TF32)");
    static constexpr int CONSUMERS = Cfg::THREADS, THREADS_ALL = Cfg::THREADS + 128;
    // With 384 threads a launch gives each 65536 / 384 = 168 registers; the producer keeps PREGS.
    static constexpr int PRODUCER_REGS = PREGS_;
    // The block holds LAUNCH_REGS per thread from the launch (65536 / threads, in steps of 8); what
    // the producer gives back is all the consumers may take (setmaxnreg.inc waits for it forever).
    static constexpr int LAUNCH_REGS = 65536 / THREADS_ALL / 8 * 8 > 255 ? 255 : 65536 / THREADS_ALL / 8 * 8;
    static constexpr int REGS = Cfg::WG >= 2 ? (LAUNCH_REGS * THREADS_ALL - 128 * PRODUCER_REGS) / Cfg::THREADS / 8 * 8 : 0;
    static_assert(REGS == 0 || (REGS >= LAUNCH_REGS && REGS <= 256 && PRODUCER_REGS <= LAUNCH_REGS), "register budget");
    static constexpr int BAR_OFFSET = Cfg::STAGES * Cfg::SLOT * 4; // bytes from the ring's start
    static constexpr int SMEM_BYTES = Cfg::SMEM_BYTES + 16 * Cfg::STAGES;
};

// wg_ws_gemm computes the block's tile of C = alpha op(A) op(B) + beta C (Cfg: a WgWsConfig).
template <class Cfg>
__device__ __forceinline__ void wg_ws_gemm(float* smem_raw, const float* __restrict__ A, int lda,
                                           const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc,
                                           int M, int N, int K, float alpha, float beta)
{
    using LC = WgLoaders<Cfg>;
    const int tid = threadIdx.x;
    int m0, n0;
    wg_origin<Cfg>(m0, n0);
    const float *S, *R;
    int lds, ldr, ns, nr, s0, r0;
    if (Cfg::OP == 0) { // C^T = B^T A^T: A shared (rows m), B registers (rows n)
        S = A, lds = lda, ns = M, s0 = m0;
        R = B, ldr = ldb, nr = N, r0 = n0;
    } else { // C = A B: B shared (rows n), A registers (rows m)
        S = B, lds = ldb, ns = N, s0 = n0;
        R = A, ldr = lda, nr = M, r0 = m0;
    }
    const int nt = (K + Cfg::BK - 1) / Cfg::BK;
    // The ring starts on a 1024-byte boundary (the swizzle atom); the barriers follow it.
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float* smem = smem_raw + (sbase - raw) / 4;
    const uint32_t full = sbase + Cfg::BAR_OFFSET, empty = full + 8 * Cfg::STAGES;
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full + 8 * s, 128);
            mbar_init(empty + 8 * s, 4 * Cfg::WG);
        }
    }
    __syncthreads();

    if (tid >= Cfg::CONSUMERS) { // the producer warpgroup
        if (Cfg::REGS) setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int p = tid - Cfg::CONSUMERS;
        const bool vs = aligned16((uintptr_t)S, lds), vr = aligned16((uintptr_t)R, ldr);
        const bool inner = vs && vr && s0 + Cfg::BM <= ns && r0 + Cfg::BN <= nr;
        const WsCopier<Cfg> cp(S, lds, s0, R, ldr, r0, p);
        int slot = 0, use = 0; // tile kt's slot and how often the slot was filled before
        for (int kt = 0; kt < nt + Cfg::LAG; ++kt) {
            if (kt < nt) {
                if (use > 0) mbar_wait(empty + 8 * slot, (use - 1) & 1);
                float* as = smem + slot * Cfg::SLOT;
                if (inner && (kt + 1) * Cfg::BK <= K)
                    cp.copy(sbase + (uint32_t)(slot * Cfg::SLOT) * 4u, kt);
                else
                    cp.copy_edge(as, kt, S, ns, s0, vs, R, nr, r0, vr, K);
                if (Cfg::LAG == 0) cp_async_mbar_arrive(full + 8 * slot);
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
            if (Cfg::LAG == 0) continue;
            cp_async_commit();
            const int j = kt - Cfg::LAG;
            if (j >= 0) {
                cp_async_wait<Cfg::LAG == 0 ? 0 : Cfg::LAG>();
                const int js = j % Cfg::STAGES;
                if (Cfg::SPLIT3) wg_split_tile<LC>(smem + js * Cfg::SLOT, smem + js * Cfg::SLOT + Cfg::A_TILE, p);
                fence_async_shared();
                mbar_arrive(full + 8 * js);
            }
        }
        cp_async_wait<0>();
        return;
    }

    if (Cfg::REGS) setmaxnreg_inc<Cfg::REGS>();
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16; // this warp's first register-operand row
    const int bfrag = (Cfg::RK ? (nb + g) * Cfg::BS + t : t * Cfg::BS + nb + g) + Cfg::A_TILE + Cfg::A_LO;
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    float d[Cfg::SPLIT3 ? Cfg::NACC : 1];
    float(&part)[Cfg::NACC] = *reinterpret_cast<float(*)[Cfg::NACC]>(Cfg::SPLIT3 ? d : acc);
    int released = 0; // tiles whose slots this warp has handed back
    auto release = [&](int upto) {
        for (; released < upto; ++released)
            if (lane == 0) mbar_arrive(empty + 8 * (released % Cfg::STAGES));
    };
    constexpr int G = Cfg::SPLIT3 ? Cfg::FOLD : 2; // tiles per unrolled group (fragment sets alternate)
    WgFrag<Cfg> f[2];
    int slot = 0, use = 0;
    for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
        for (int j = 0; j < G; ++j) {
            const int kt = k0 + j;
            if (kt < nt) {
                mbar_wait(full + 8 * slot, use & 1);
                if (Cfg::LAG == 0) fence_async_shared();
                const uint32_t as = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                wg_frag<Cfg>(f[j % 2], smem + slot * Cfg::SLOT + bfrag);
                wg_issue<Cfg>(part, f[j % 2], as, as + Cfg::A_TILE * 4u, j == 0);
                if (Cfg::SPLIT3 && (j == G - 1 || kt + 1 == nt)) {
                    wgmma_wait<0>();
                    wgmma_reg_fence(part);
#pragma unroll
                    for (int i = 0; i < Cfg::NACC; ++i) acc[i] += part[i];
                    release(kt + 1);
                } else {
                    wgmma_wait<1>();
                    release(kt);
                }
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
        }
    }
    wgmma_wait<0>();
    wgmma_reg_fence(acc);
    wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
}

} // namespace tg
#endif // TILEGEN_WG_WS_CUH
