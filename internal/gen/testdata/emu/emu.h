// emu.h: a host emulation of the CUDA subset the split-rule kernels (deepk, gemvm, gemvn, streamk) use, so
// that their indexing, edge handling and slice fix-up can be checked against a float64 reference
// on a machine without a GPU (TestSplitKernelsOnHost). One std::thread per CUDA thread of a block,
// kept for the whole run; blocks run one after another; __syncthreads is a barrier of the block's
// live threads (a thread that returns leaves it); cp.async copies synchronously. It says nothing
// about speed, the memory model or races between blocks: the GPU's verification does that.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

struct float4 {
    float x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
thread_local dim3 threadIdx;
dim3 blockIdx, blockDim, gridDim; // blockIdx is the same for every thread: one block at a time

#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __shared__ static

// emu_barrier: a reusable barrier over the block's live threads.
struct emu_barrier {
    std::mutex mu;
    std::condition_variable cv;
    int alive = 0, arrived = 0;
    unsigned long gen = 0;
    void release() { arrived = 0, gen++, cv.notify_all(); }
    void sync()
    {
        std::unique_lock<std::mutex> l(mu);
        unsigned long g = gen;
        if (++arrived == alive) return release();
        cv.wait(l, [&] { return gen != g; });
    }
    void leave()
    {
        std::lock_guard<std::mutex> l(mu);
        if (--alive > 0 && arrived == alive) release();
    }
} emu_bar;

inline void __syncthreads() { emu_bar.sync(); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
template <class T> T __ldg(const T* p) { return *p; }
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> void __stcg(T* p, T v) { *p = v; }
// __shfl_xor_sync: the value of lane (lane ^ o) of the warp, exchanged through a block-wide buffer
// between two barriers; every live thread of the block must call it together (gemvn's butterfly
// does: no thread leaves before it).
static float emu_shfl[1024];
inline float __shfl_xor_sync(unsigned, float v, int o)
{
    const unsigned t = threadIdx.x;
    emu_shfl[t] = v;
    emu_bar.sync();
    const float r = emu_shfl[t ^ (unsigned)o];
    emu_bar.sync();
    return r;
}
inline unsigned atomicAdd(unsigned* p, unsigned v) { return std::atomic_ref<unsigned>(*p).fetch_add(v); }
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }

// tilegen/cp_async.cuh (the pipelined kernels' copies: streamk), replaced by synchronous copies
// (zero-fill when invalid); the generated source's own definitions are skipped by its guard.
#define TILEGEN_CP_ASYNC_CUH
namespace tg {
inline void cp_async16_zfill(float* s, const float* g, bool ok)
{
    for (int i = 0; i < 4; i++) s[i] = ok ? g[i] : 0.0f;
}
inline void cp_async16(float* s, const float* g) { cp_async16_zfill(s, g, true); }
inline void cp_async4_zfill(float* s, const float* g, bool ok) { *s = ok ? *g : 0.0f; }
inline void cp_async_commit() {}
template <int N> inline void cp_async_wait() {}
} // namespace tg

// deepk's own cp.async helpers: the same synchronous copies.
#define TG_DK_HELPERS
static inline void tg_dk_cp16(float* s, const float* g, bool ok) { tg::cp_async16_zfill(s, g, ok); }
static inline void tg_dk_cp4(float* s, const float* g, bool ok) { tg::cp_async4_zfill(s, g, ok); }
static inline void tg_dk_commit() {}
template <int N> static inline void tg_dk_wait() {}

// emu_pool runs a kernel block by block on T persistent threads.
struct emu_pool {
    int T;
    std::vector<std::thread> threads;
    std::mutex mu;
    std::condition_variable cv;
    std::function<void()> body;
    unsigned long gen = 0;
    int done = 0;
    bool quit = false;
    explicit emu_pool(int t) : T(t)
    {
        for (int i = 0; i < T; i++)
            threads.emplace_back([this, i] {
                threadIdx = {(unsigned)i, 0, 0};
                unsigned long seen = 0;
                for (;;) {
                    std::function<void()> f;
                    {
                        std::unique_lock<std::mutex> l(mu);
                        cv.wait(l, [&] { return quit || gen != seen; });
                        if (quit) return;
                        seen = gen;
                        f = body;
                    }
                    f();
                    emu_bar.leave();
                    std::lock_guard<std::mutex> l(mu);
                    if (++done == T) cv.notify_all();
                }
            });
    }
    void block(const std::function<void()>& f)
    {
        std::unique_lock<std::mutex> l(mu);
        emu_bar.alive = T, emu_bar.arrived = 0;
        body = f, done = 0, gen++;
        cv.notify_all();
        cv.wait(l, [&] { return done == T; });
    }
    ~emu_pool()
    {
        {
            std::lock_guard<std::mutex> l(mu);
            quit = true;
        }
        cv.notify_all();
        for (auto& t : threads) t.join();
    }
};
