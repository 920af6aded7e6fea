// Standalone check of tilegen/wg_pipeline.cuh on the GPU host: correctness against a float64
// reference (odd shapes, alpha/beta), accuracy and speed against cuBLAS SGEMM and cuBLAS TF32.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <fstream>
#include <sstream>
#include "tilegen/wg_pipeline.cuh"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <int BM, int WG, int BK, int ST, bool S3, bool PIPE, int F, int MINB, int TR = 0>
__global__ void __launch_bounds__(128 * WG, MINB) wgk(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                                               float* __restrict__ C, int ldc, int M, int N, int K, float alpha, float beta)
{
    using Cfg = tg::WgTf32Config<BM, WG, BK, ST, S3, PIPE, F, TR>;
    extern __shared__ float4 tg_tc_smem[];
    const int tid = threadIdx.x;
    int m0, n0;
    tg::wg_origin<Cfg>(m0, n0);
    float acc[Cfg::NACC];
#pragma unroll
    for (int i = 0; i < Cfg::NACC; ++i) acc[i] = 0.0f;
    tg::wg_mainloop<Cfg>(acc, reinterpret_cast<float*>(tg_tc_smem), A, lda, B, ldb, M, N, K, m0, n0, tid);
    tg::wg_store<Cfg>(acc, C, ldc, M, N, m0, n0, alpha, beta, tid);
}

__global__ void refk(const float* A, int lda, const float* B, int ldb, const float* C0, int ldc, double* R, int M, int N, int K, double alpha, double beta)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N || m >= M) return;
    double s = 0;
    for (int k = 0; k < K; ++k) s += (double)A[(size_t)m * lda + k] * (double)B[(size_t)k * ldb + n];
    R[(size_t)m * N + n] = alpha * s + (beta != 0 ? beta * (double)C0[(size_t)m * ldc + n] : 0.0);
}

struct Kern {
    const char* name;
    void (*fn)(const float*, int, const float*, int, float*, int, int, int, int, float, float);
    int BM, BN, threads, smem;
    bool split3;
};

template <int BM, int WG, int BK, int ST, bool S3, bool PIPE, int F, int MINB, int TR = 0>
Kern mk(const char* name)
{
    using Cfg = tg::WgTf32Config<BM, WG, BK, ST, S3, PIPE, F, TR>;
    int smem = Cfg::SMEM_BYTES;
    CK(cudaFuncSetAttribute(wgk<BM, WG, BK, ST, S3, PIPE, F, MINB, TR>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, wgk<BM, WG, BK, ST, S3, PIPE, F, MINB, TR>));
    printf("%-28s regs %d spill %zu smem %d\n", name, fa.numRegs, fa.localSizeBytes, smem);
    return Kern{name, wgk<BM, WG, BK, ST, S3, PIPE, F, MINB, TR>, BM, 64 * WG, 128 * WG, smem, S3};
}

static void jitlaunch(const float* A, int lda, const float* B, int ldb, float* C, int ldc, int M, int N, int K, float al, float be);
void launch(const Kern& k, const float* A, int lda, const float* B, int ldb, float* C, int ldc, int M, int N, int K, float al, float be)
{
    dim3 grid((N + k.BN - 1) / k.BN, (M + k.BM - 1) / k.BM);
    if (k.fn == jitlaunch) { jitlaunch(A, lda, B, ldb, C, ldc, M, N, K, al, be); return; }
    k.fn<<<grid, k.threads, k.smem>>>(A, lda, B, ldb, C, ldc, M, N, K, al, be);
}


static CUfunction jitfn;
static void jitlaunch(const float* A, int lda, const float* B, int ldb, float* C, int ldc, int M, int N, int K, float al, float be)
{
    void* args[] = {&A, &lda, &B, &ldb, &C, &ldc, &M, &N, &K, &al, &be};
    CUresult r = cuLaunchKernel(jitfn, (N + 127) / 128, (M + 127) / 128, 1, 256, 1, 1, tg::WgTf32Config<128, 2, 32, 4, true, false, 1>::SMEM_BYTES, 0, args, nullptr);
    if (r != CUDA_SUCCESS) { printf("jit launch %d\n", (int)r); exit(1); }
}
static unsigned long long rs = 88172645463325252ull;
float rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (float)((rs >> 11) * (1.0 / 9007199254740992.0)) * 2.f - 1.f; }

// relative Frobenius error and max relative error of C against R.
void errs(const std::vector<float>& C, int ldc, const std::vector<double>& R, int M, int N, double& fro, double& mx, int& bad, double tol)
{
    double num = 0, den = 0; mx = 0; bad = 0;
    double rmax = 0;
    for (int m = 0; m < M; ++m) for (int n = 0; n < N; ++n) rmax = std::max(rmax, fabs(R[(size_t)m * N + n]));
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double r = R[(size_t)m * N + n], c = C[(size_t)m * ldc + n];
            double d = c - r;
            if (!(fabs(d) <= tol * rmax)) bad++;
            num += d * d; den += r * r;
            if (fabs(r) > 1e-30) mx = std::max(mx, fabs(d) / fabs(r));
        }
    fro = sqrt(num / den);
}

int main(int argc, char** argv)
{
    const bool prof = argc > 2;
    std::vector<Kern> ks;
    ks.push_back(mk<128, 2, 32, 4, true, true, 2, 1>("3x_128x128x32_s4_pipe_f2"));
    ks.push_back(mk<128, 2, 32, 4, true, true, 2, 1, 8>("3x_128x128x32_s4_pipe_f2_g8"));
    ks.push_back(mk<128, 2, 32, 4, true, true, 2, 1, 16>("3x_128x128x32_s4_pipe_f2_g16"));
    ks.push_back(mk<256, 2, 32, 4, false, true, 1, 1>("tf_256x128x32_s4_pipe"));
    ks.push_back(mk<256, 2, 32, 4, false, true, 1, 1, 4>("tf_256x128x32_s4_pipe_g4"));
    ks.push_back(mk<256, 2, 32, 4, false, true, 1, 1, 8>("tf_256x128x32_s4_pipe_g8"));
    ks.push_back(mk<256, 2, 32, 4, false, true, 1, 1, 16>("tf_256x128x32_s4_pipe_g16"));
    {
        cudaFree(0);
        const char* jp = getenv("JITK") ? getenv("JITK") : "jitk.ptx";
        std::ifstream f(jp); std::stringstream ss; ss << f.rdbuf(); std::string ptx = ss.str();
        char log[8192] = {0};
        CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void* v[] = {log, (void*)(size_t)sizeof log};
        CUmodule mod;
        CUresult r = cuModuleLoadDataEx(&mod, ptx.c_str(), 2, o, v);
        printf("jit load of nvcc-11.8 PTX (patched to sm_90a): %d %s\n", (int)r, log);
        if (r == CUDA_SUCCESS) {
            cuModuleGetFunction(&jitfn, mod, "jitk");
            cuFuncSetAttribute(jitfn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, tg::WgTf32Config<128, 2, 32, 4, true, false, 1>::SMEM_BYTES);
            int regs; cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, jitfn);
            printf("jitk regs %d\n", regs);
            ks.push_back(Kern{"jit_3x_128x128x32_s4", jitlaunch, 128, 128, 256, tg::WgTf32Config<128, 2, 32, 4, true, false, 1>::SMEM_BYTES, true});
        }
    }
    cublasHandle_t h; cublasCreate(&h);
    if (prof) { // one kernel at 4096^3, three launches, for the profiler
        const Kern& k = ks[atoi(argv[2])];
        size_t n = (size_t)4096 * 4096;
        float *A, *B, *C;
        CK(cudaMalloc(&A, n * 4)); CK(cudaMalloc(&B, n * 4)); CK(cudaMalloc(&C, n * 4));
        CK(cudaMemset(A, 0, n * 4)); CK(cudaMemset(B, 0, n * 4));
        for (int i = 0; i < 3; ++i) launch(k, A, 4096, B, 4096, C, 4096, 4096, 4096, 4096, 1.f, 0.f);
        CK(cudaDeviceSynchronize());
        printf("profiled %s\n", k.name);
        return 0;
    }

    // Correctness: odd shapes, odd leading dimensions, alpha/beta.
    struct Sh { int M, N, K, lda, ldb, ldc; float al, be; } shs[] = {
        {257, 383, 129, 131, 389, 385, 1.5f, -0.5f}, {128, 128, 32, 32, 128, 128, 1.f, 0.f}, {1000, 1000, 1000, 1000, 1000, 1000, 1.f, 0.f},
        {1, 700, 333, 333, 700, 700, 1.f, 0.f}, {517, 3, 1031, 1032, 4, 3, 0.75f, 0.25f}, {640, 640, 7, 8, 640, 640, 1.f, 1.f}};
    int nchk = 0, nbad = 0;
    for (auto& s : shs) {
        std::vector<float> hA((size_t)s.M * s.lda), hB((size_t)s.K * s.ldb), hC((size_t)s.M * s.ldc);
        for (auto& x : hA) x = rnd();
        for (auto& x : hB) x = rnd();
        for (auto& x : hC) x = rnd();
        float *A, *B, *C, *C0; double* R;
        CK(cudaMalloc(&A, hA.size() * 4)); CK(cudaMalloc(&B, hB.size() * 4)); CK(cudaMalloc(&C, hC.size() * 4)); CK(cudaMalloc(&C0, hC.size() * 4));
        CK(cudaMalloc(&R, (size_t)s.M * s.N * 8));
        CK(cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(C0, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice));
        refk<<<dim3((s.N + 127) / 128, s.M), 128>>>(A, s.lda, B, s.ldb, C0, s.ldc, R, s.M, s.N, s.K, s.al, s.be);
        std::vector<double> hR((size_t)s.M * s.N);
        CK(cudaMemcpy(hR.data(), R, hR.size() * 8, cudaMemcpyDeviceToHost));
        for (auto& k : ks) {
            CK(cudaMemcpy(C, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice));
            launch(k, A, s.lda, B, s.ldb, C, s.ldc, s.M, s.N, s.K, s.al, s.be);
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { printf("%s %dx%dx%d: %s\n", k.name, s.M, s.N, s.K, cudaGetErrorString(e)); exit(1); }
            std::vector<float> out(hC.size());
            CK(cudaMemcpy(out.data(), C, out.size() * 4, cudaMemcpyDeviceToHost));
            double fro, mx; int bad;
            double tol = (k.split3 ? 4e-7 : 2e-3) * sqrt((double)s.K) * 4;
            errs(out, s.ldc, hR, s.M, s.N, fro, mx, bad, tol);
            if (bad) printf("check %-22s %5dx%5dx%5d fro %.3g max %.3g bad %d FAIL\n", k.name, s.M, s.N, s.K, fro, mx, bad);
            nchk++; nbad += bad != 0;
        }
        cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(C0); cudaFree(R);
    }

    printf("checks: %d, failed %d\n", nchk, nbad);
    // Speed and accuracy at squares.
    int sizes[] = {2048, 4096, 8192};
    for (int S : sizes) {
        size_t n = (size_t)S * S;
        std::vector<float> hA(n), hB(n);
        for (auto& x : hA) x = rnd();
        for (auto& x : hB) x = rnd();
        float *A, *B, *C; double* R = nullptr;
        CK(cudaMalloc(&A, n * 4)); CK(cudaMalloc(&B, n * 4)); CK(cudaMalloc(&C, n * 4));
        CK(cudaMemcpy(A, hA.data(), n * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hB.data(), n * 4, cudaMemcpyHostToDevice));
        std::vector<double> hR;
        if (S == 2048) {
            CK(cudaMalloc(&R, n * 8));
            refk<<<dim3(S / 128, S), 128>>>(A, S, B, S, C, S, R, S, S, S, 1.0, 0.0);
            hR.resize(n);
            CK(cudaMemcpy(hR.data(), R, n * 8, cudaMemcpyDeviceToHost));
        }
        cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
        auto timeit = [&](auto f) {
            for (int i = 0; i < 3; ++i) f();
            std::vector<float> ts;
            for (int i = 0; i < 15; ++i) {
                cudaEventRecord(e0); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
                float ms; cudaEventElapsedTime(&ms, e0, e1); ts.push_back(ms);
            }
            std::sort(ts.begin(), ts.end());
            return ts[ts.size() / 2];
        };
        const float one = 1, zero = 0;
        std::vector<float> out(n);
        double fl = 2.0 * S * S * (double)S;
        cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
        float tS = timeit([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, C, S); });
        double fro, mx; int bad;
        if (S == 2048) { CK(cudaMemcpy(out.data(), C, n * 4, cudaMemcpyDeviceToHost)); errs(out, S, hR, S, S, fro, mx, bad, 1); printf("acc cublas_sgemm %d fro %.3g max %.3g\n", S, fro, mx); }
        cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
        float tT = timeit([&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, S, S, S, &one, B, S, A, S, &zero, C, S); });
        if (S == 2048) { CK(cudaMemcpy(out.data(), C, n * 4, cudaMemcpyDeviceToHost)); errs(out, S, hR, S, S, fro, mx, bad, 1); printf("acc cublas_tf32 %d fro %.3g max %.3g\n", S, fro, mx); }
        printf("time %d cublas_sgemm %.3f ms (%.1f TF)  cublas_tf32 %.3f ms (%.1f TF)\n", S, tS, fl / tS / 1e9, tT, fl / tT / 1e9);
        for (auto& k : ks) {
            float t = timeit([&] { launch(k, A, S, B, S, C, S, S, S, S, 1.f, 0.f); });
            cudaError_t e = cudaDeviceSynchronize();
            if (e != cudaSuccess) { printf("%s: %s\n", k.name, cudaGetErrorString(e)); exit(1); }
            if (S == 2048) { CK(cudaMemcpy(out.data(), C, n * 4, cudaMemcpyDeviceToHost)); errs(out, S, hR, S, S, fro, mx, bad, 1); }
            printf("%d %-26s %6.1f TF sgemm x%.3f tf32 x%.3f", S, k.name, fl / t / 1e9, tS / t, tT / t);
            if (S == 2048) printf(" fro %.3g", fro);
            printf("\n");
        }
        cudaFree(A); cudaFree(B); cudaFree(C); if (R) cudaFree(R);
    }
    return 0;
}
