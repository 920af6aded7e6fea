// Prototype timing of GEMV designs against cuBLAS SGEMM (row-major C = A*B via the transposed call).
// nvcc -O3 -arch=sm_90 gemv_proto.cu -lcublas -o gemv_proto
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

// gemvn: N = 1. A warp per row (RPB rows per block), float4 loads of the row, U in flight, shuffle reduction.
template <int U, int WPR>
__global__ void gemvn_warp(int M, int K, const float* __restrict__ A, int lda, const float* __restrict__ x, float* __restrict__ y) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const int rpb = blockDim.x / 32 / WPR;
    const int row = blockIdx.x * rpb + w / WPR, part = w % WPR;
    if (row >= M) return;
    const float4* a = reinterpret_cast<const float4*>(A + (size_t)row * lda);
    const float4* xv = reinterpret_cast<const float4*>(x);
    const int K4 = K / 4;
    float acc = 0.f;
    for (int k = (part * 32 + lane); k < K4; k += 32 * WPR * U) {
        float4 av[U], xx[U];
#pragma unroll
        for (int u = 0; u < U; ++u) { int kk = k + u * 32 * WPR; av[u] = kk < K4 ? __ldg(a + kk) : make_float4(0,0,0,0); xx[u] = kk < K4 ? __ldg(xv + kk) : make_float4(0,0,0,0); }
#pragma unroll
        for (int u = 0; u < U; ++u) acc += av[u].x * xx[u].x + av[u].y * xx[u].y + av[u].z * xx[u].z + av[u].w * xx[u].w;
    }
#pragma unroll
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, o);
    if (WPR == 1) { if (lane == 0) y[row] = acc; }
    else {
        __shared__ float red[32];
        if (lane == 0) red[w] = acc;
        __syncthreads();
        if (part == 0 && lane == 0) { float s = 0; for (int p = 0; p < WPR; ++p) s += red[w + p]; y[row] = s; }
    }
}

// gemvm: M = 1. Thread per float4 of columns, TPB threads, grid (N/(4 TPB), S): slice of K per blockIdx.y, U rows in flight.
template <int U>
__global__ void gemvm_col(int K, int N, const float* __restrict__ x, const float* __restrict__ B, int ldb, float* __restrict__ ws) {
    const int c4 = blockIdx.x * blockDim.x + threadIdx.x;
    const int S = gridDim.y, z = blockIdx.y;
    const int per = (K + S - 1) / S, k0 = z * per, k1 = min(K, k0 + per);
    if (4 * c4 >= N) return;
    const float4* b = reinterpret_cast<const float4*>(B) + c4;
    const int ld4 = ldb / 4;
    float4 acc = make_float4(0, 0, 0, 0);
    for (int k = k0; k < k1; k += U) {
        float4 bv[U]; float xv[U];
#pragma unroll
        for (int u = 0; u < U; ++u) { int kk = k + u; bool ok = kk < k1; bv[u] = ok ? __ldg(b + (size_t)kk * ld4) : make_float4(0,0,0,0); xv[u] = ok ? __ldg(x + kk) : 0.f; }
#pragma unroll
        for (int u = 0; u < U; ++u) { acc.x += xv[u] * bv[u].x; acc.y += xv[u] * bv[u].y; acc.z += xv[u] * bv[u].z; acc.w += xv[u] * bv[u].w; }
    }
    reinterpret_cast<float4*>(ws)[(size_t)z * (N / 4) + c4] = acc;
}
__global__ void reduce_slices(int S, int N, const float* __restrict__ ws, float* __restrict__ y) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    float s = 0; for (int z = 0; z < S; ++z) s += ws[(size_t)z * N + j];
    y[j] = s;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
template <class F> float timeit(F f, int sets) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 10; ++i) f(i % sets);
    std::vector<float> ts;
    for (int i = 0; i < 300; ++i) { cudaEventRecord(a); f(i % sets); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms); }
    CK(cudaGetLastError());
    return median(ts) * 1000.f; // us
}

int main() {
    cublasHandle_t h; cublasCreate(&h);
    const int sizes[] = {4096, 8192};
    float *ws; CK(cudaMalloc(&ws, sizeof(float) * 8192 * 1024));
    printf("%-28s %10s %8s %8s\n", "case", "us", "GB/s", "vs_cublas");
    for (int n : sizes) {
        size_t elems = (size_t)n * n; int sets = n == 4096 ? 3 : 1;
        std::vector<float*> mat(sets), vin(sets), vout(sets);
        std::vector<float> host(elems); for (size_t i = 0; i < elems; ++i) host[i] = (float)((i * 2654435761u) % 1000) / 1000.f - 0.5f;
        for (int s = 0; s < sets; ++s) { CK(cudaMalloc(&mat[s], elems * 4)); CK(cudaMemcpy(mat[s], host.data(), elems * 4, cudaMemcpyHostToDevice));
            CK(cudaMalloc(&vin[s], n * 4)); CK(cudaMemcpy(vin[s], host.data(), n * 4, cudaMemcpyHostToDevice)); CK(cudaMalloc(&vout[s], n * 4)); }
        double bytes = 4.0 * elems + 8.0 * n;
        float one = 1, zero = 0;
        // M = n, N = 1, K = n: C (n x 1) = A (n x n) * x (n x 1). Row-major via column-major: C^T(1xn) = x^T * A^T.
        float tb = timeit([&](int s) { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, n, n, &one, vin[s], 1, mat[s], n, &zero, vout[s], 1); }, sets);
        printf("%-28s %10.2f %8.0f %8.2f\n", (std::to_string(n) + "x1x" + std::to_string(n) + " cublas").c_str(), tb, bytes / tb / 1e3, 1.0);
        float tv = timeit([&](int s) { cublasSgemv(h, CUBLAS_OP_T, n, n, &one, mat[s], n, vin[s], 1, &zero, vout[s], 1); }, sets);
        printf("%-28s %10.2f %8.0f %8.2f\n", "  cublasSgemv", tv, bytes / tv / 1e3, tb / tv);
#define GN(U, WPR, TPB) { float t = timeit([&](int s) { int rpb = TPB / 32 / WPR; gemvn_warp<U, WPR><<<(n + rpb - 1) / rpb, TPB>>>(n, n, mat[s], n, vin[s], vout[s]); }, sets); \
        printf("  gemvn_warp U%d WPR%d T%-4d    %10.2f %8.0f %8.2f\n", U, WPR, TPB, t, bytes / t / 1e3, tb / t); }
        GN(1,1,256) GN(2,1,256) GN(4,1,256) GN(8,1,256) GN(4,1,128) GN(4,2,256) GN(2,2,256) GN(4,1,512)
        // M = 1, N = n, K = n.
        float tm = timeit([&](int s) { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, 1, n, &one, mat[s], n, vin[s], n, &zero, vout[s], n); }, sets);
        printf("%-28s %10.2f %8.0f %8.2f\n", ("1x" + std::to_string(n) + "x" + std::to_string(n) + " cublas").c_str(), tm, bytes / tm / 1e3, 1.0);
        for (int tpb : {128, 256}) for (int S : {8, 16, 32, 64, 128, 256}) {
#define GM(U) { float t = timeit([&](int s) { dim3 g((n / 4 + tpb - 1) / tpb, S); gemvm_col<U><<<g, tpb>>>(n, n, vin[s], mat[s], n, ws); reduce_slices<<<(n + 255) / 256, 256>>>(S, n, ws, vout[s]); }, sets); \
            printf("  gemvm_col U%d T%-4d S%-4d     %10.2f %8.0f %8.2f  blocks=%d\n", U, tpb, S, t, bytes / t / 1e3, tm / t, (n / 4 + tpb - 1) / tpb * S); }
            GM(4) GM(8)
        }
        for (int s = 0; s < sets; ++s) { cudaFree(mat[s]); cudaFree(vin[s]); cudaFree(vout[s]); }
    }
    return 0;
}
