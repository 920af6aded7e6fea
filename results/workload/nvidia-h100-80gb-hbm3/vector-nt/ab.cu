// ab: two exports' headers (tga.cuh, tgb.cuh: `runner export --name tga` and `--name tgb`) in one
// process, timed against cuBLAS with the same op on the shapes of a file ("M N K [op=XX]  # source"
// per line; ../unseen/run16/ab.cu with the op column: row-major op(A), op(B) through
// NAME_sgemm_op, cuBLAS called column-major on the swapped problem). Where two
// processes, each with its own export, saw cuBLAS itself move by 12 % on microsecond shapes (run9),
// here cuBLAS, A and B are timed in the same process, in three rounds whose order rotates (cuBLAS A B,
// A B cuBLAS, B cuBLAS A), each the median of event pairs after warm-up over rotated input sets (as
// examples/export-cuda times), the lowest of the three rounds kept. Each result is first checked
// against cuBLAS (relative Frobenius error below 1e-4, NaN-poisoned C). Kernels both headers hold
// are compiled once (their TILEGEN_KERNEL_ guards).
//
//   nvcc -O2 -arch=sm_90 -I A/ -I B/ -o ab ab.cu -lcublas
//   ./ab shapes.txt
#include "tga.cuh"
#include "tgb.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                          \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                           \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

template <class F>
static double time_ms(cudaStream_t s, F launch)
{
    for (int i = 0; i < 3; i++) launch(i);
    CK(cudaStreamSynchronize(s));
    const int batch_max = 128;
    std::vector<cudaEvent_t> ev(2 * batch_max);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    std::vector<double> samples;
    double total = 0;
    while (samples.size() < 1000 && (samples.size() < 20 || total < 100.0)) {
        int want = 20 - (int)samples.size();
        if (!samples.empty() && total < 100.0) {
            double per = std::max(total / samples.size(), 1e-6);
            want = std::max(want, (int)std::ceil((100.0 - total) / per));
        }
        int batch = std::min({std::max(want, 1), batch_max, 1000 - (int)samples.size()});
        for (int i = 0; i < batch; i++) {
            CK(cudaEventRecord(ev[2 * i], s));
            launch((int)samples.size() + i);
            CK(cudaEventRecord(ev[2 * i + 1], s));
        }
        CK(cudaStreamSynchronize(s));
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            samples.push_back(ms);
            total += ms;
        }
    }
    for (auto& e : ev) CK(cudaEventDestroy(e));
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

static float* upload(const std::vector<float>& h)
{
    float* d = nullptr;
    CK(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(float)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

// rel_err is ||c - r||_F / ||r||_F of two device results of n floats (NaN: infinity).
static double rel_err(const float* dc, const float* dr, size_t n)
{
    std::vector<float> c(n), r(n);
    CK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), dr, n * sizeof(float), cudaMemcpyDeviceToHost));
    double d = 0, z = 0;
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(c[i])) return INFINITY;
        d += ((double)c[i] - r[i]) * ((double)c[i] - r[i]);
        z += (double)r[i] * r[i];
    }
    return std::sqrt(d / std::max(z, 1e-300));
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s SHAPES_FILE\n", argv[0]);
        return 2;
    }
    FILE* f = std::fopen(argv[1], "r");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", argv[1]);
        return 2;
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\n", prop.name);
    const long long l2 = prop.l2CacheSize;
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CB(cublasSetStream(h, s));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<double> la, lb, da, db;
    bool ok = true;
    char buf[4096];
    for (int line = 1; std::fgets(buf, sizeof buf, f); line++) {
        std::string l(buf), src;
        size_t hash = l.find('#');
        if (hash != std::string::npos) src = l.substr(hash + 1), l = l.substr(0, hash);
        while (!src.empty() && (src.back() == '\n' || src.back() == ' ')) src.pop_back();
        int M, N, K, used = 0;
        if (std::sscanf(l.c_str(), "%d %d %d %n", &M, &N, &K, &used) != 3) continue;
        char opa = 'N', opb = 'N';
        if (std::sscanf(l.c_str() + used, "op=%c%c", &opa, &opb) != 2) opa = opb = 'N';
        // Stored A is K x M under op(A) = T (lda = M), B N x K under op(B) = T (ldb = K).
        const int lda = opa == 'T' ? M : K, ldb = opb == 'T' ? K : N;
        const cublasOperation_t ta = opb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N, tb = opa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
        long long set_bytes = 4LL * ((long long)M * K + (long long)K * N + (long long)M * N);
        int n = set_bytes <= l2 ? (int)std::min<long long>(std::max<long long>((3 * l2 + set_bytes - 1) / set_bytes, 2), 64) : 1;
        std::vector<float*> A(n), B(n), C(n);
        for (int i = 0; i < n; i++) {
            std::vector<float> a((size_t)M * K), b((size_t)K * N);
            for (auto& x : a) x = u(rng);
            for (auto& x : b) x = u(rng);
            A[i] = upload(a), B[i] = upload(b);
            CK(cudaMalloc(&C[i], (size_t)M * N * sizeof(float)));
        }
        float* R = nullptr;
        CK(cudaMalloc(&R, (size_t)M * N * sizeof(float)));
        const float one = 1.0f, zero = 0.0f;
        auto cub = [&](int j, float* c) {
            CB(cublasSgemm(h, ta, tb, N, M, K, &one, B[j % n], ldb, A[j % n], lda, &zero, c, N));
        };
        auto ga = [&](int j, float* c) { CK(tga_sgemm_op(opa, opb, M, N, K, 1.0f, A[j % n], lda, B[j % n], ldb, 0.0f, c, N, s)); };
        auto gb = [&](int j, float* c) { CK(tgb_sgemm_op(opa, opb, M, N, K, 1.0f, A[j % n], lda, B[j % n], ldb, 0.0f, c, N, s)); };
        cub(0, R);
        double ea, eb;
        CK(cudaMemsetAsync(C[0], 0xff, (size_t)M * N * sizeof(float), s));
        ga(0, C[0]);
        CK(cudaStreamSynchronize(s));
        ea = rel_err(C[0], R, (size_t)M * N);
        CK(cudaMemsetAsync(C[0], 0xff, (size_t)M * N * sizeof(float), s));
        gb(0, C[0]);
        CK(cudaStreamSynchronize(s));
        eb = rel_err(C[0], R, (size_t)M * N);
        bool good = ea < 1e-4 && eb < 1e-4;
        ok &= good;
        double t[3] = {INFINITY, INFINITY, INFINITY};
        for (int round = 0; round < 3; round++)
            for (int q = 0; q < 3; q++) {
                int who = (round + q) % 3;
                double ms = time_ms(s, [&](int j) {
                    if (who == 0) cub(j, C[j % n]);
                    else if (who == 1) ga(j, C[j % n]);
                    else gb(j, C[j % n]);
                });
                t[who] = std::min(t[who], ms);
            }
        const char* va = tga_variant_op(opa, opb, M, N, K, lda, ldb, N, A[0], B[0], C[0]);
        const char* vb = tgb_variant_op(opa, opb, M, N, K, lda, ldb, N, A[0], B[0], C[0]);
        bool diff = std::strcmp(va ? va : "", vb ? vb : "") != 0;
        la.push_back(std::log(t[0] / t[1])), lb.push_back(std::log(t[0] / t[2]));
        if (diff) da.push_back(la.back()), db.push_back(lb.back());
        std::printf("shape %dx%dx%d op=%c%c %s A=%s B=%s cublas_ms=%.5f a_ms=%.5f b_ms=%.5f ratio_a=%.3f ratio_b=%.3f err_a=%.1e err_b=%.1e%s  # %s\n",
                    M, N, K, opa, opb, diff ? "differ" : "same", va ? va : "none", vb ? vb : "none", t[0], t[1], t[2], t[0] / t[1], t[0] / t[2],
                    ea, eb, good ? "" : " WRONG", src.c_str());
        std::fflush(stdout);
        for (int i = 0; i < n; i++) {
            CK(cudaFree(A[i]));
            CK(cudaFree(B[i]));
            CK(cudaFree(C[i]));
        }
        CK(cudaFree(R));
    }
    std::fclose(f);
    auto gm = [](const std::vector<double>& v) {
        double x = 0;
        for (double e : v) x += e;
        return v.empty() ? NAN : std::exp(x / v.size());
    };
    std::printf("all %zu: geomean ratio_a %.3f ratio_b %.3f\n", la.size(), gm(la), gm(lb));
    std::printf("differ %zu: geomean ratio_a %.3f ratio_b %.3f\n", da.size(), gm(da), gm(db));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    CB(cublasDestroy(h));
    return ok ? 0 : 1;
}
