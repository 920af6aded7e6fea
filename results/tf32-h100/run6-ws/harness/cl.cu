// wgmma_ws with the shared operand shared by a cluster of two CTAs (the experiment after console 7,
// where leaving A's copies out took TF32 from 322 to 392 TFLOP/s at 4096^3): the two CTAs of a
// cluster have the same rows of C (the same A tile) and neighbouring columns; each producer copies
// half of A's k tile (and all of its own B) by cp.async, writes the half's 3xTF32 residual, then
// one thread forwards the half to the peer's ring slot with a bulk copy over distributed shared
// memory (cp.async.bulk.shared::cluster, completing on the peer's full barrier with a byte count).
// A slot is refilled once the consumers of both CTAs released it (empty: 8 WG arrivals, half of
// them remote). Interior shapes only (M a multiple of BM, N of 2 BN, K of BK); NN.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include "tilegen/wg_ws.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ uint32_t mapa(uint32_t a, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
    return r;
}
__device__ __forceinline__ uint32_t cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void arrive_remote(uint32_t bar)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void arrive_expect(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void wait_cluster(uint32_t bar, unsigned parity)
{
    asm volatile("{\n.reg .pred p;\nTG_CW:\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n@!p bra TG_CW;\n}\n" ::"r"(bar),
                 "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk_to_peer(uint32_t dst, uint32_t src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "r"(src),
                 "r"(bytes), "r"(bar) : "memory");
}
__device__ __forceinline__ void producer_bar() { asm volatile("bar.sync 1, 128;\n" ::: "memory"); }

template <class Cfg>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(Cfg::THREADS_ALL, 1)
    wscl(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc, int M, int N, int K,
         float alpha, float beta)
{
    using namespace tg;
    static_assert(Cfg::OP == 0, "NN");
    extern __shared__ float4 smem4[];
    float* smem_raw = reinterpret_cast<float*>(smem4);
    const int tid = threadIdx.x;
    const uint32_t rank = cluster_rank(), peer = rank ^ 1u;
    // Grouped order over clusters: GROUP block rows, column pairs down each group.
    const int gcx = gridDim.x / 2, gy = gridDim.y, id = blockIdx.y * gcx + blockIdx.x / 2;
    const int per = Cfg::GROUP * gcx, first = (id / per) * Cfg::GROUP, rows = min(gy - first, Cfg::GROUP);
    const int m0 = (first + (id % per) % rows) * Cfg::TILE_ROWS;
    const int n0 = (((id % per) / rows) * 2 + (int)rank) * Cfg::TILE_COLS;
    const int nt = K / Cfg::BK;
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float* smem = smem_raw + (sbase - raw) / 4;
    const uint32_t full = sbase + Cfg::BAR_OFFSET, empty = full + 8 * Cfg::STAGES;
    constexpr uint32_t HALF = Cfg::BM / 2 * Cfg::BK * 4, TX = HALF * (Cfg::SPLIT3 ? 2 : 1);
    if (tid == 0) {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full + 8 * s, 128);
            mbar_init(empty + 8 * s, 8 * Cfg::WG);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    cluster_sync();

    if (tid >= Cfg::CONSUMERS) {
        if (Cfg::REGS) setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int p = tid - Cfg::CONSUMERS;
        const WsCopier<Cfg> cp(A, lda, m0, B, ldb, n0, p);
        constexpr int NA = WsCopier<Cfg>::NA, NB = WsCopier<Cfg>::NB, RA = WsCopier<Cfg>::RA, RB = WsCopier<Cfg>::RB;
        const int i0 = (int)rank * NA / 2; // this CTA's half of A: rows rank * BM/2 ..
        int slot = 0, use = 0;
        for (int kt = 0; kt < nt + Cfg::LAG; ++kt) {
            if (kt < nt) {
                if (use > 0) wait_cluster(empty + 8 * slot, (use - 1) & 1);
                const uint32_t sl = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                const float* s = cp.sa + (size_t)kt * Cfg::BK + (size_t)i0 * cp.sa_i;
                uint32_t d = sl + 4u * cp.da + 4u * i0 * RA * Cfg::BK;
#pragma unroll 4
                for (int i = 0; i < NA / 2; ++i, s += cp.sa_i, d += 4u * RA * Cfg::BK)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                s = cp.ra + (size_t)kt * cp.ra_k;
                d = sl + 4u * (Cfg::A_TILE + Cfg::A_LO + cp.db);
#pragma unroll 4
                for (int i = 0; i < NB; ++i, s += cp.ra_i, d += 4u * RB * Cfg::BS)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
            cp_async_commit();
            const int j = kt - Cfg::LAG;
            if (j >= 0) {
                cp_async_wait<Cfg::LAG>();
                const int js = j % Cfg::STAGES;
                float* as = smem + js * Cfg::SLOT;
                if (Cfg::SPLIT3) {
                    for (int i = i0; i < i0 + NA / 2; ++i) {
                        const int off = wg_a_offset<Cfg>(cp.ar + i * RA, cp.akc);
                        const float4 v = *reinterpret_cast<const float4*>(as + off);
                        *reinterpret_cast<uint4*>(as + Cfg::A_TILE + off) =
                            make_uint4(wg_residual(v.x), wg_residual(v.y), wg_residual(v.z), wg_residual(v.w));
                    }
                }
                fence_async_shared();
                producer_bar();
                if (p == 0) {
                    const uint32_t src = sbase + (uint32_t)(js * Cfg::SLOT) * 4u + rank * HALF;
                    const uint32_t dst = mapa(src, peer), bar = mapa(full + 8 * js, peer);
                    bulk_to_peer(dst, src, HALF, bar);
                    if (Cfg::SPLIT3) bulk_to_peer(dst + Cfg::A_TILE * 4, src + Cfg::A_TILE * 4, HALF, bar);
                    arrive_expect(full + 8 * js, TX);
                } else {
                    mbar_arrive(full + 8 * js);
                }
            }
        }
        cp_async_wait<0>();
    } else {
        if (Cfg::REGS) setmaxnreg_inc<Cfg::REGS>();
        const int lane = tid % 32, g = lane / 4, t = lane % 4;
        const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16;
        const int bfrag = t * Cfg::BS + nb + g + Cfg::A_TILE + Cfg::A_LO;
        float acc[Cfg::NACC];
#pragma unroll
        for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
        float d[Cfg::SPLIT3 ? Cfg::NACC : 1];
        float(&part)[Cfg::NACC] = *reinterpret_cast<float(*)[Cfg::NACC]>(Cfg::SPLIT3 ? d : acc);
        int released = 0;
        auto release = [&](int upto) {
            for (; released < upto; ++released)
                if (lane == 0) {
                    const uint32_t e = empty + 8 * (released % Cfg::STAGES);
                    mbar_arrive(e);
                    arrive_remote(mapa(e, peer));
                }
        };
        constexpr int G = Cfg::SPLIT3 ? Cfg::FOLD : 2;
        WgFrag<Cfg> f[2];
        int slot = 0, use = 0;
        for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
            for (int j = 0; j < G; ++j) {
                const int kt = k0 + j;
                if (kt < nt) {
                    mbar_wait(full + 8 * slot, use & 1);
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
        release(nt); // the peer's producer may wait for these slots (its last tiles)
        wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
    }
    cluster_sync();
}

template <class Cfg>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(Cfg::THREADS_ALL, 1)
    wscl2(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc, int M, int N, int K,
         float alpha, float beta)
{
    using namespace tg;
    static_assert(Cfg::OP == 0, "NN");
    extern __shared__ float4 smem4[];
    float* smem_raw = reinterpret_cast<float*>(smem4);
    const int tid = threadIdx.x;
    const uint32_t rank = cluster_rank(), peer = rank ^ 1u;
    // Grouped order over clusters: GROUP block rows, column pairs down each group.
    const int gcx = gridDim.x / 2, gy = gridDim.y, id = blockIdx.y * gcx + blockIdx.x / 2;
    const int per = Cfg::GROUP * gcx, first = (id / per) * Cfg::GROUP, rows = min(gy - first, Cfg::GROUP);
    const int m0 = (first + (id % per) % rows) * Cfg::TILE_ROWS;
    const int n0 = (((id % per) / rows) * 2 + (int)rank) * Cfg::TILE_COLS;
    const int nt = K / Cfg::BK;
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float* smem = smem_raw + (sbase - raw) / 4;
    const uint32_t full = sbase + Cfg::BAR_OFFSET, empty = full + 8 * Cfg::STAGES;
    constexpr uint32_t HALF = Cfg::BM / 2 * Cfg::BK * 4, TX = HALF * (Cfg::SPLIT3 ? 2 : 1);
    if (tid == 0) {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, 8 * Cfg::WG);
            mbar_init(empty + 8 * Cfg::STAGES + 8 * s, 64); // landed
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    cluster_sync();

    if (tid >= Cfg::CONSUMERS) {
        // v2: producer warps 0-1 copy (A's half and B) and the copies arrive on landed[s] themselves;
        // warp 3 forwards: waits for landed, writes the half's residual (3xTF32), bulk-copies the
        // half to the peer and arrives on its own full barrier expecting the peer's bytes.
        if (Cfg::REGS) setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int p = tid - Cfg::CONSUMERS, pw = p / 32;
        const uint32_t landed = empty + 8 * Cfg::STAGES;
        constexpr int KC = Cfg::KC, HROWS = Cfg::BM / 2;
        if (pw < 2) {
            const int q = p; // 0..63
            // A's half: chunk c = q + 64 i: row c / KC (rows 64 / KC apart), chunk c % KC.
            constexpr int NAH = HROWS * KC / 64, RAH = 64 / KC;
            const int akc = q % KC, ar = (int)rank * HROWS + q / KC;
            const float* sa = A + (size_t)(m0 + ar) * lda + 4 * akc;
            const int da = tg::wg_a_offset<Cfg>(ar, akc);
            // B: k-rows of BN / 4 chunks; chunk c = q + 64 i: row c / (BN/4), column chunk c % (BN/4).
            constexpr int BN4 = Cfg::BN / 4, NB = Cfg::BK * BN4 / 64, RB = 64 / BN4;
            const int br = q / BN4, bc = (q % BN4) * 4;
            const float* rb = B + (size_t)br * ldb + n0 + bc;
            const int db = br * Cfg::BS + bc;
            int slot = 0, use = 0;
            for (int kt = 0; kt < nt; ++kt) {
                if (use > 0) wait_cluster(empty + 8 * slot, (use - 1) & 1);
                const uint32_t sl = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                const float* s = sa + (size_t)kt * Cfg::BK;
                uint32_t d = sl + 4u * da;
#pragma unroll 4
                for (int i = 0; i < NAH; ++i, s += (size_t)RAH * lda, d += 4u * RAH * Cfg::BK)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                s = rb + (size_t)kt * Cfg::BK * ldb;
                d = sl + 4u * (Cfg::A_TILE + Cfg::A_LO + db);
#pragma unroll 4
                for (int i = 0; i < NB; ++i, s += (size_t)RB * ldb, d += 4u * RB * Cfg::BS)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                tg::cp_async_mbar_arrive(landed + 8 * slot);
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
            cp_async_wait<0>();
        } else if (pw == 3) {
            const int lane = p % 32;
            int slot = 0, use = 0;
            for (int j = 0; j < nt; ++j) {
                mbar_wait(landed + 8 * slot, use & 1);
                fence_async_shared();
                float* as = smem + slot * Cfg::SLOT;
                if (Cfg::SPLIT3) {
                    // The half's chunks, lane by lane: row rank * HROWS + c / KC, chunk c % KC.
                    for (int c = lane; c < HROWS * KC; c += 32) {
                        const int off = wg_a_offset<Cfg>((int)rank * HROWS + c / KC, c % KC);
                        const float4 v = *reinterpret_cast<const float4*>(as + off);
                        *reinterpret_cast<uint4*>(as + Cfg::A_TILE + off) =
                            make_uint4(wg_residual(v.x), wg_residual(v.y), wg_residual(v.z), wg_residual(v.w));
                    }
                    fence_async_shared();
                }
                __syncwarp();
                if (lane == 0) {
                    const uint32_t src = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u + rank * HALF;
                    const uint32_t dst = mapa(src, peer), bar = mapa(full + 8 * slot, peer);
                    bulk_to_peer(dst, src, HALF, bar);
                    if (Cfg::SPLIT3) bulk_to_peer(dst + Cfg::A_TILE * 4, src + Cfg::A_TILE * 4, HALF, bar);
                    arrive_expect(full + 8 * slot, TX);
                }
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
        }
    } else {
        if (Cfg::REGS) setmaxnreg_inc<Cfg::REGS>();
        const int lane = tid % 32, g = lane / 4, t = lane % 4;
        const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16;
        const int bfrag = t * Cfg::BS + nb + g + Cfg::A_TILE + Cfg::A_LO;
        float acc[Cfg::NACC];
#pragma unroll
        for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
        float d[Cfg::SPLIT3 ? Cfg::NACC : 1];
        float(&part)[Cfg::NACC] = *reinterpret_cast<float(*)[Cfg::NACC]>(Cfg::SPLIT3 ? d : acc);
        int released = 0;
        auto release = [&](int upto) {
            for (; released < upto; ++released)
                if (lane == 0) {
                    const uint32_t e = empty + 8 * (released % Cfg::STAGES);
                    mbar_arrive(e);
                    arrive_remote(mapa(e, peer));
                }
        };
        constexpr int G = Cfg::SPLIT3 ? Cfg::FOLD : 2;
        WgFrag<Cfg> f[2];
        int slot = 0, use = 0;
        for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
            for (int j = 0; j < G; ++j) {
                const int kt = k0 + j;
                if (kt < nt) {
                    mbar_wait(full + 8 * slot, use & 1);
                    fence_async_shared();
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
        release(nt); // the peer's producer may wait for these slots (its last tiles)
        wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
    }
    cluster_sync();
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS_ALL, 1) wsone(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                                                            float* __restrict__ C, int ldc, int M, int N, int K, float alpha, float beta)
{
    extern __shared__ float4 smem4[];
    tg::wg_ws_gemm<Cfg>(reinterpret_cast<float*>(smem4), A, lda, B, ldb, C, ldc, M, N, K, alpha, beta);
}


// Pre-split 3xTF32 (issue 18: "measure both"): split_lo writes A's residual to a second matrix in
// one pass over A; wspre's producer then copies A, that residual and B like any operand (the copies
// arrive on the slot's barrier themselves) and writes nothing in shared memory.
__global__ void split_lo(const float* __restrict__ A, float* __restrict__ Alo, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        Alo[i] = __uint_as_float(tg::wg_residual(A[i]));
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS_ALL, 1) wspre(const float* __restrict__ A, const float* __restrict__ Alo, int lda,
                                                            const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc, int M,
                                                            int N, int K, float alpha, float beta)
{
    using namespace tg;
    static_assert(Cfg::OP == 0 && Cfg::SPLIT3, "NN, 3xTF32");
    extern __shared__ float4 smem4[];
    float* smem_raw = reinterpret_cast<float*>(smem4);
    const int tid = threadIdx.x;
    int m0, n0;
    wg_origin<Cfg>(m0, n0);
    const int nt = K / Cfg::BK;
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float* smem = smem_raw + (sbase - raw) / 4;
    const uint32_t full = sbase + Cfg::BAR_OFFSET, empty = full + 8 * Cfg::STAGES;
    if (tid == 0) {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full + 8 * s, 128);
            mbar_init(empty + 8 * s, 4 * Cfg::WG);
        }
    }
    __syncthreads();
    if (tid >= Cfg::CONSUMERS) {
        if (Cfg::REGS) setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int p = tid - Cfg::CONSUMERS;
        const WsCopier<Cfg> cp(A, lda, m0, B, ldb, n0, p), lo(Alo, lda, m0, B, ldb, n0, p);
        constexpr int NA = WsCopier<Cfg>::NA, RA = WsCopier<Cfg>::RA;
        int slot = 0, use = 0;
        for (int kt = 0; kt < nt; ++kt) {
            if (use > 0) mbar_wait(empty + 8 * slot, (use - 1) & 1);
            const uint32_t sl = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
            cp.copy(sl, kt);
            const float* s = lo.sa + (size_t)kt * Cfg::BK;
            uint32_t d = sl + 4u * (Cfg::A_TILE + lo.da);
#pragma unroll 4
            for (int i = 0; i < NA; ++i, s += lo.sa_i, d += 4u * RA * Cfg::BK)
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
            cp_async_mbar_arrive(full + 8 * slot);
            if (++slot == Cfg::STAGES) slot = 0, ++use;
        }
        cp_async_wait<0>();
        return;
    }
    if (Cfg::REGS) setmaxnreg_inc<Cfg::REGS>();
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16;
    const int bfrag = t * Cfg::BS + nb + g + Cfg::A_TILE + Cfg::A_LO;
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    float part[Cfg::NACC];
    int released = 0;
    auto release = [&](int upto) {
        for (; released < upto; ++released)
            if (lane == 0) mbar_arrive(empty + 8 * (released % Cfg::STAGES));
    };
    constexpr int G = Cfg::FOLD;
    WgFrag<Cfg> f[2];
    int slot = 0, use = 0;
    for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
        for (int j = 0; j < G; ++j) {
            const int kt = k0 + j;
            if (kt < nt) {
                mbar_wait(full + 8 * slot, use & 1);
                fence_async_shared();
                const uint32_t as = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                wg_frag<Cfg>(f[j % 2], smem + slot * Cfg::SLOT + bfrag);
                wg_issue<Cfg>(part, f[j % 2], as, as + Cfg::A_TILE * 4u, j == 0);
                if (j == G - 1 || kt + 1 == nt) {
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

template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS_ALL, 1) wsdec(const float* __restrict__ A, const float* __restrict__ Alo, int lda,
                                                            const float* __restrict__ B, int ldb, float* __restrict__ C, int ldc, int M,
                                                            int N, int K, float alpha, float beta)
{
    using namespace tg;
    static_assert(Cfg::OP == 0 && Cfg::SPLIT3, "NN, 3xTF32");
    extern __shared__ float4 smem4[];
    float* smem_raw = reinterpret_cast<float*>(smem4);
    const int tid = threadIdx.x;
    int m0, n0;
    wg_origin<Cfg>(m0, n0);
    const int nt = K / Cfg::BK;
    const uint32_t raw = (uint32_t)__cvta_generic_to_shared(smem_raw);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float* smem = smem_raw + (sbase - raw) / 4;
    const uint32_t full = sbase + Cfg::BAR_OFFSET, empty = full + 8 * Cfg::STAGES;
    if (tid == 0) {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full + 8 * s, 64);
            mbar_init(empty + 8 * s, 4 * Cfg::WG);
            mbar_init(empty + 8 * Cfg::STAGES + 8 * s, 64); // landed
        }
    }
    __syncthreads();
    if (tid >= Cfg::CONSUMERS) {
        // Producer warps 0-1 copy A and B (their copies arrive on landed[s]); warps 2-3 wait for a
        // landed slot, write A's residual and arrive on full[s]: the copies never wait for a split.
        if (Cfg::REGS) setmaxnreg_dec<Cfg::PRODUCER_REGS>();
        const int p = tid - Cfg::CONSUMERS;
        const uint32_t landed = empty + 8 * Cfg::STAGES;
        constexpr int KC = Cfg::KC;
        int slot = 0, use = 0;
        if (p < 64) {
            constexpr int NA = Cfg::BM * KC / 64, RA = 64 / KC;
            const int akc = p % KC, ar = p / KC;
            const float* sa = A + (size_t)(m0 + ar) * lda + 4 * akc;
            const int da = wg_a_offset<Cfg>(ar, akc);
            constexpr int BN4 = Cfg::BN / 4, NB = Cfg::BK * BN4 / 64, RB = 64 / BN4;
            const int br = p / BN4, bc = (p % BN4) * 4;
            const float* rb = B + (size_t)br * ldb + n0 + bc;
            const int db = br * Cfg::BS + bc;
            for (int kt = 0; kt < nt; ++kt) {
                if (use > 0) mbar_wait(empty + 8 * slot, (use - 1) & 1);
                const uint32_t sl = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                const float* s = sa + (size_t)kt * Cfg::BK;
                uint32_t d = sl + 4u * da;
#pragma unroll 4
                for (int i = 0; i < NA; ++i, s += (size_t)RA * lda, d += 4u * RA * Cfg::BK)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                s = rb + (size_t)kt * Cfg::BK * ldb;
                d = sl + 4u * (Cfg::A_TILE + Cfg::A_LO + db);
#pragma unroll 4
                for (int i = 0; i < NB; ++i, s += (size_t)RB * ldb, d += 4u * RB * Cfg::BS)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(s));
                cp_async_mbar_arrive(landed + 8 * slot);
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
            cp_async_wait<0>();
        } else {
            const int r = p - 64;
            for (int kt = 0; kt < nt; ++kt) {
                mbar_wait(landed + 8 * slot, use & 1);
                float* as = smem + slot * Cfg::SLOT;
#pragma unroll 4
                for (int c = r; c < Cfg::BM * KC; c += 64) {
                    const int off = wg_a_offset<Cfg>(c / KC, c % KC);
                    const float4 v = *reinterpret_cast<const float4*>(as + off);
                    *reinterpret_cast<uint4*>(as + Cfg::A_TILE + off) =
                        make_uint4(wg_residual(v.x), wg_residual(v.y), wg_residual(v.z), wg_residual(v.w));
                }
                fence_async_shared();
                mbar_arrive(full + 8 * slot);
                if (++slot == Cfg::STAGES) slot = 0, ++use;
            }
        }
        return;
    }
    if (Cfg::REGS) setmaxnreg_inc<Cfg::REGS>();
    const int lane = tid % 32, g = lane / 4, t = lane % 4;
    const int nb = (tid / 128) * 64 + ((tid / 32) % 4) * 16;
    const int bfrag = t * Cfg::BS + nb + g + Cfg::A_TILE + Cfg::A_LO;
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    float part[Cfg::NACC];
    int released = 0;
    auto release = [&](int upto) {
        for (; released < upto; ++released)
            if (lane == 0) mbar_arrive(empty + 8 * (released % Cfg::STAGES));
    };
    constexpr int G = Cfg::FOLD;
    WgFrag<Cfg> f[2];
    int slot = 0, use = 0;
    for (int k0 = 0; k0 < nt; k0 += G) {
#pragma unroll
        for (int j = 0; j < G; ++j) {
            const int kt = k0 + j;
            if (kt < nt) {
                mbar_wait(full + 8 * slot, use & 1);
                fence_async_shared();
                const uint32_t as = sbase + (uint32_t)(slot * Cfg::SLOT) * 4u;
                wg_frag<Cfg>(f[j % 2], smem + slot * Cfg::SLOT + bfrag);
                wg_issue<Cfg>(part, f[j % 2], as, as + Cfg::A_TILE * 4u, j == 0);
                if (j == G - 1 || kt + 1 == nt) {
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

struct Kern {
    const char* name;
    void (*fn)(const float*, int, const float*, int, float*, int, int, int, int, float, float);
    int TR, TC, threads, smem;
    bool split3;
};
template <class Cfg, int CL>
Kern mk(const char* name)
{
    auto fn = CL == 2 ? wscl2<Cfg> : CL ? wscl<Cfg> : wsone<Cfg>;
    int smem = Cfg::SMEM_BYTES + 8 * Cfg::STAGES;
    CK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, fn));
    printf("%-28s regs %d spill %zu smem %d\n", name, fa.numRegs, fa.localSizeBytes, smem);
    return Kern{name, fn, Cfg::TILE_ROWS, Cfg::TILE_COLS, Cfg::THREADS_ALL, smem, Cfg::SPLIT3};
}
template <int BM, bool S3, int F, int LAG>
using WS = tg::WgWsConfig<tg::WgTf32Config<BM, 2, 32, 4, S3, true, F, 0>, LAG, 40>;

int main()
{
    std::vector<Kern> ks;
    ks.push_back(mk<WS<256, false, 1, 0>, 0>("tf_256_one_l0"));
    ks.push_back(mk<WS<256, false, 1, 1>, 2>("tf_256_cl2"));
    ks.push_back(mk<WS<128, true, 2, 1>, 0>("3x_128_one_l1"));
    ks.push_back(mk<WS<128, true, 2, 1>, 2>("3x_128_cl2"));
    cublasHandle_t h;
    cublasCreate(&h);
    for (int S : {2048, 4096, 8192}) {
        size_t n = (size_t)S * S;
        std::vector<float> hA(n), hB(n);
        unsigned long long x = 88172645463325252ull;
        for (auto& v : hA) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }
        for (auto& v : hB) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; v = (float)((x >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1; }
        float *A, *B, *C, *R;
        CK(cudaMalloc(&A, n * 4)); CK(cudaMalloc(&B, n * 4)); CK(cudaMalloc(&C, n * 4)); CK(cudaMalloc(&R, n * 4));
        CK(cudaMemcpy(A, hA.data(), n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hB.data(), n * 4, cudaMemcpyHostToDevice));
        const float one = 1, zero = 0;
        cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, R, S);
        std::vector<float> hR(n), hC(n);
        CK(cudaMemcpy(hR.data(), R, n * 4, cudaMemcpyDeviceToHost));
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        auto timeit = [&](auto f) {
            for (int i = 0; i < 3; ++i) f();
            std::vector<float> ts;
            for (int i = 0; i < 30; ++i) { cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms); }
            std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
        };
        double fl = 2.0 * S * S * (double)S;
        float* Alo;
        CK(cudaMalloc(&Alo, n * 4));
        using P3 = WS<128, true, 2, 1>;
        const int psmem = P3::SMEM_BYTES + 8 * P3::STAGES;
        CK(cudaFuncSetAttribute(wsdec<P3>, cudaFuncAttributeMaxDynamicSharedMemorySize, psmem));
        CK(cudaFuncSetAttribute(wspre<P3>, cudaFuncAttributeMaxDynamicSharedMemorySize, psmem));
        const dim3 pgrid(S / P3::TILE_COLS, S / P3::TILE_ROWS);
        for (int round = 0; round < 2; ++round) {
            cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
            float tS = timeit([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, C, S); });
            cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
            float tT = timeit([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, C, S); });
            printf("%d r%d cublas sgemm %.1f TF tf32 %.1f TF\n", S, round, fl / tS / 1e9, fl / tT / 1e9);
            for (auto& k : ks) {
                CK(cudaMemset(C, 0xff, n * 4));
                dim3 grid(S / k.TC, S / k.TR);
                float t = timeit([&] { k.fn<<<grid, k.threads, k.smem>>>(A, S, B, S, C, S, S, S, S, 1.f, 0.f); });
                cudaError_t e = cudaDeviceSynchronize();
                if (e != cudaSuccess) { printf("%s: %s\n", k.name, cudaGetErrorString(e)); exit(1); }
                double worst = 0;
                if (round == 0) {
                    CK(cudaMemcpy(hC.data(), C, n * 4, cudaMemcpyDeviceToHost));
                    for (size_t i = 0; i < n; i += 61) worst = std::max(worst, (double)fabs(hC[i] - hR[i]) / sqrt((double)S));
                }
                printf("%d r%d %-22s %6.1f TF  x%.3f (vs %s)%s\n", S, round, k.name, fl / t / 1e9, (k.split3 ? tS : tT) / t, k.split3 ? "sgemm" : "tf32",
                       round ? "" : (worst < (k.split3 ? 1e-5 : 5e-3) ? "  check ok" : "  check FAIL"));
            }
            {
                CK(cudaMemset(C, 0xff, n * 4));
                const float tsplit = timeit([&] { split_lo<<<264, 1024>>>(A, Alo, n); });
                const float tmain = timeit([&] { wspre<P3><<<pgrid, P3::THREADS_ALL, psmem>>>(A, Alo, S, B, S, C, S, S, S, S, 1.f, 0.f); });
                const float tboth = timeit([&] {
                    split_lo<<<264, 1024>>>(A, Alo, n);
                    wspre<P3><<<pgrid, P3::THREADS_ALL, psmem>>>(A, Alo, S, B, S, C, S, S, S, S, 1.f, 0.f);
                });
                CK(cudaDeviceSynchronize());
                double worst = 0;
                if (round == 0) {
                    CK(cudaMemcpy(hC.data(), C, n * 4, cudaMemcpyDeviceToHost));
                    for (size_t i = 0; i < n; i += 61) worst = std::max(worst, (double)fabs(hC[i] - hR[i]) / sqrt((double)S));
                }
                CK(cudaMemset(C, 0xff, n * 4));
                const float tdec = timeit([&] { wsdec<P3><<<pgrid, P3::THREADS_ALL, psmem>>>(A, nullptr, S, B, S, C, S, S, S, S, 1.f, 0.f); });
                CK(cudaDeviceSynchronize());
                double wdec = 0;
                if (round == 0) {
                    CK(cudaMemcpy(hC.data(), C, n * 4, cudaMemcpyDeviceToHost));
                    for (size_t i = 0; i < n; i += 61) wdec = std::max(wdec, (double)fabs(hC[i] - hR[i]) / sqrt((double)S));
                }
                printf("%d r%d 3x_128_splitters %.1f TF x%.3f (vs sgemm)%s\n", S, round, fl / tdec / 1e9, tS / tdec,
                       round ? "" : (wdec < 1e-5 ? "  check ok" : "  check FAIL"));
                printf("%d r%d 3x_128_presplit: split %.4f ms, gemm %.1f TF x%.3f, split + gemm %.1f TF x%.3f (vs sgemm)%s\n", S, round, tsplit,
                       fl / tmain / 1e9, tS / tmain, fl / tboth / 1e9, tS / tboth, round ? "" : (worst < 1e-5 ? "  check ok" : "  check FAIL"));
            }
        }
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(R); cudaFree(Alo);
    }
    return 0;
}
