// probe: cublasSgemm on one row-major NN problem (C = A·B, M×N×K; cuBLAS column-major C^T = B^T·A^T),
// launched a few times after a warm-up, so that a profiler sees which kernels cuBLAS runs for it
// (their names carry the tile, stages and split-K) and with what grid. Usage: probe M N K
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: probe M N K\n");
        return 2;
    }
    const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
    if (m < 1 || n < 1 || k < 1) return 2;
    float *a, *b, *c;
    if (cudaMalloc(&a, sizeof(float) * (size_t)m * k) || cudaMalloc(&b, sizeof(float) * (size_t)k * n) ||
        cudaMalloc(&c, sizeof(float) * (size_t)m * n))
        return 1;
    cudaMemset(a, 0, sizeof(float) * (size_t)m * k);
    cudaMemset(b, 0, sizeof(float) * (size_t)k * n);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
    const float one = 1, zero = 0;
    for (int i = 0; i < 3; i++)
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n) != CUBLAS_STATUS_SUCCESS) return 1;
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    cublasDestroy(h);
    std::printf("%dx%dx%d ok\n", m, n, k);
    return 0;
}
