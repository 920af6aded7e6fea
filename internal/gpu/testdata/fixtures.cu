// Fixture kernels for the worker's GPU tests, with the shared SGEMM signature. Compiled to
// fixtures.ptx by mkptx.go (go generate ./internal/gpu).
#define SIG int M, int N, int K, float alpha, const float* __restrict__ A, int lda, \
            const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc
#define T 16

__device__ __forceinline__ void store(float* C, int ldc, int row, int col, float alpha, float beta, float acc)
{
    float* p = &C[(size_t)row * ldc + col];
    *p = beta == 0.0f ? alpha * acc : alpha * acc + beta * *p;
}

// good: 16x16 shared tiles with zero-filled partial tiles; handles any shape and ld.
extern "C" __global__ void __launch_bounds__(T * T) good(SIG)
{
    __shared__ float As[T][T + 1], Bs[T][T + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * lda + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) store(C, ldc, row, col, alpha, beta, acc);
}

// good_dyn: as good, tiles in dynamic shared memory placed after a 64 KiB scratch area, so the
// launch needs the >48 KiB opt-in (dynamic shared = 64 KiB + 2 tiles).
extern "C" __global__ void __launch_bounds__(T * T) good_dyn(SIG)
{
    extern __shared__ float dyn[];
    float* As = dyn + 16384;           // skip 64 KiB
    float* Bs = As + T * (T + 1);
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty * (T + 1) + tx] = (row < M && k0 + tx < K) ? A[(size_t)row * lda + k0 + tx] : 0.0f;
        Bs[ty * (T + 1) + tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * ldb + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += As[ty * (T + 1) + k] * Bs[k * (T + 1) + tx];
        __syncthreads();
    }
    if (row < M && col < N) store(C, ldc, row, col, alpha, beta, acc);
}

// race: 32x32 tiles with no barriers. Row r of As is written by 32 different warps (thread
// (y, x) stores As[x][y]) and read by warp r right away, and the next tile overwrites it while
// other warps may still read: wrong results on essentially every run of a multi-tile K.
extern "C" __global__ void __launch_bounds__(1024) race(SIG)
{
    __shared__ float As[32][33], Bs[32][33];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 32 + ty, col = blockIdx.x * 32 + tx;
    int lrow = blockIdx.y * 32 + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += 32) {
        As[tx][ty] = (lrow < M && k0 + ty < K) ? A[(size_t)lrow * lda + k0 + ty] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * ldb + col] : 0.0f;
        for (int k = 0; k < 32; ++k) acc += As[ty][k] * Bs[k][tx];
    }
    if (row < M && col < N) store(C, ldc, row, col, alpha, beta, acc);
}

// edge: forgets the last row of C (unwritten elements must fail verification).
extern "C" __global__ void __launch_bounds__(T * T) edge(SIG)
{
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    if (row >= M - 1 || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * lda + k] * B[(size_t)k * ldb + col];
    store(C, ldc, row, col, alpha, beta, acc);
}

// pad: correct inside M×N but also writes the padding columns N..ldc-1 (a write outside the
// sub-matrix must fail the sub-matrix check; the dense check passes).
extern "C" __global__ void __launch_bounds__(T * T) pad(SIG)
{
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    if (row >= M) return;
    if (col >= N) {
        if (col < ldc) C[(size_t)row * ldc + col] = 0.0f;
        return;
    }
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[(size_t)row * lda + k] * B[(size_t)k * ldb + col];
    store(C, ldc, row, col, alpha, beta, acc);
}

// oob: writes 4 TiB past C: an illegal address fault that poisons the context.
extern "C" __global__ void oob(SIG)
{
    C[((size_t)1 << 40) + threadIdx.x] = alpha;
}

// hang: spins until A[0] holds a value the inputs in [-1, 1) never contain.
extern "C" __global__ void hang(SIG)
{
    while (*(volatile const float*)A != 12345.0f) {
    }
    C[0] = alpha;
}
