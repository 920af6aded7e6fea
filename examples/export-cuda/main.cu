// export-cuda uses a header written by `runner export` from any nvcc project: it runs the exported
// SGEMM on every tuned shape class and on edge shapes, checks each result against cuBLAS, and
// times each class the way the tuner did (rotated input sets, one event pair per launch, median),
// printing now/tuned, its time over the time recorded at tuning (not a "ratio", which in tilegen is
// always cuBLAS time / tilegen time). It exits 1 when a result is wrong, when a
// problem no variant accepts is not refused, or (with --strict-time PCT) when a class is more
// than PCT percent slower than at tuning through the header's launcher.
//
// So that a difference from the tuning record can be attributed, each class is also timed with
// the header's own kernel launched through the driver API (cuLaunchKernel, as the tuner launches)
// and, with --ptx-dir, with the exported PTX JIT-compiled by the driver (the code the tuner timed,
// while the header's kernels are compiled from source by this nvcc); and an empty kernel is timed
// through both APIs, the launch cost that remains inside an event pair.
//
//   nvcc -O2 -arch=sm_90 -I../export-go/tgsgemm -o export-cuda main.cu -lcublas -lcuda
//   ./export-cuda [--strict-time 5] [--ptx-dir ../export-go/tgsgemm/ptx]
//
// -DTG_EXPORT_NAME=NAME builds it against NAME.cuh (default tgsgemm). Where -lcuda is not found,
// add -L with the toolkit's lib64/stubs.
#ifndef TG_EXPORT_NAME
#define TG_EXPORT_NAME tgsgemm
#endif
#define TG_STR_(x) #x
#define TG_STR(x) TG_STR_(x)
#define TG_CAT_(a, b) a##b
#define TG_CAT(a, b) TG_CAT_(a, b)
// TG(_sgemm) is NAME_sgemm.
#define TG(suffix) TG_CAT(TG_EXPORT_NAME, suffix)
#include TG_STR(TG_EXPORT_NAME.cuh)

#include <cublas_v2.h>
#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(x)                                                                                  \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)
#define CHECK_CU(x)                                                                       \
    do {                                                                                  \
        CUresult r_ = (x);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                         \
            const char* n_ = nullptr;                                                     \
            cuGetErrorName(r_, &n_);                                                      \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, n_ ? n_ : "?"); \
            std::exit(2);                                                                 \
        }                                                                                 \
    } while (0)
#define CHECK_BLAS(x)                                                                   \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #x, s_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

// Row-major C = alpha*A*B + beta*C through column-major cuBLAS: C^T = B^T * A^T.
static void cublas_rowmajor(cublasHandle_t h, int M, int N, int K, float alpha, const float* A, int lda,
                            const float* B, int ldb, float beta, float* C, int ldc)
{
    CHECK_BLAS(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, ldb, A, lda, &beta, C, ldc));
}

static float* upload(const std::vector<float>& h)
{
    float* d = nullptr;
    CHECK_CUDA(cudaMalloc(&d, std::max<size_t>(h.size(), 1) * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static std::vector<float> random_matrix(std::mt19937& rng, size_t n)
{
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    return v;
}

// check compares the exported SGEMM with cuBLAS on one problem. The tolerance per element is
// 2*(K+2)*2^-24 * (|alpha|*(|A||B|)_ij + |beta*C0_ij|) for each of the two results (so twice that
// between them); |A||B| comes from cuBLAS on the absolute values.
static bool check(cublasHandle_t h, int M, int N, int K, float alpha, float beta, int pad, std::mt19937& rng)
{
    int lda = K + pad, ldb = N + pad, ldc = N + pad;
    std::vector<float> a = random_matrix(rng, (size_t)M * lda), b = random_matrix(rng, (size_t)K * ldb),
                       c0 = random_matrix(rng, (size_t)M * ldc);
    std::vector<float> aa(a.size()), ab(b.size());
    for (size_t i = 0; i < a.size(); i++) aa[i] = std::fabs(a[i]);
    for (size_t i = 0; i < b.size(); i++) ab[i] = std::fabs(b[i]);
    float *dA = upload(a), *dB = upload(b), *dC = upload(c0), *dR = upload(c0), *dAA = upload(aa), *dAB = upload(ab);
    std::vector<float> zeros((size_t)M * ldc, 0.0f);
    float* dS = upload(zeros);

    cudaError_t err = TG(_sgemm)(M, N, K, alpha, dA, lda, dB, ldb, beta, dC, ldc, 0);
    cublas_rowmajor(h, M, N, K, alpha, dA, lda, dB, ldb, beta, dR, ldc);
    cublas_rowmajor(h, M, N, K, 1.0f, dAA, lda, dAB, ldb, 0.0f, dS, ldc);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> c((size_t)M * ldc), r((size_t)M * ldc), s((size_t)M * ldc);
    CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(r.data(), dR, r.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(s.data(), dS, s.size() * sizeof(float), cudaMemcpyDeviceToHost));
    for (float* p : {dA, dB, dC, dR, dAA, dAB, dS}) CHECK_CUDA(cudaFree(p));

    const char* v = TG(_variant)(M, N, K, lda, ldb, ldc, dA, dB, dC);
    if (err != cudaSuccess) {
        std::printf("FAIL %dx%dx%d alpha=%g beta=%g pad=%d: %s (variant %s)\n", M, N, K, alpha, beta, pad,
                    cudaGetErrorString(err), v ? v : "none");
        return false;
    }
    double scale = 2.0 * (K + 2) * std::ldexp(1.0, -24), max_abs = 0, worst = 0;
    long bad = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            size_t x = (size_t)i * ldc + j;
            double bound = 2.0 * scale * (std::fabs(alpha) * s[x] + std::fabs(beta * c0[x])) + 1e-30;
            double d = std::fabs((double)c[x] - (double)r[x]);
            if (!(d <= bound)) bad++;
            max_abs = std::max(max_abs, d);
            worst = std::max(worst, d / bound);
        }
    }
    // The padding columns must be untouched.
    for (int i = 0; i < M; i++)
        for (int j = N; j < ldc; j++)
            if (c[(size_t)i * ldc + j] != c0[(size_t)i * ldc + j]) bad++;
    std::printf("%s %dx%dx%d alpha=%g beta=%g pad=%d variant=%s max_abs=%.3g worst/tol=%.3f bad=%ld\n",
                bad ? "FAIL" : "ok  ", M, N, K, alpha, beta, pad, v, max_abs, worst, bad);
    return bad == 0;
}

// time_ms times launch(i), i = 0, 1, ..., like the tuner: 3 warm-up launches, then at least 20
// launches and 100 ms of measured time (at most 1000), each between its own event pair, enqueued in
// batches of 128 before the events are read; it returns the median.
template <class F>
static double time_ms(cudaStream_t s, F launch)
{
    for (int i = 0; i < 3; i++) launch(i);
    CHECK_CUDA(cudaStreamSynchronize(s));
    const int batch_max = 128;
    std::vector<cudaEvent_t> ev(2 * batch_max);
    for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
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
            CHECK_CUDA(cudaEventRecord(ev[2 * i], s));
            launch((int)samples.size() + i);
            CHECK_CUDA(cudaEventRecord(ev[2 * i + 1], s));
        }
        CHECK_CUDA(cudaStreamSynchronize(s));
        for (int i = 0; i < batch; i++) {
            float ms = 0;
            CHECK_CUDA(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            samples.push_back(ms);
            total += ms;
        }
    }
    for (auto& e : ev) CHECK_CUDA(cudaEventDestroy(e));
    std::sort(samples.begin(), samples.end());
    size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

// Input sets for timing like the tuner's: beta = 0, dense leading dimensions, as many sets as make
// about three times L2 when one fits in it (at most 64), so a launch does not find its inputs
// cached by the previous one.
struct input_sets {
    int M, N, K, n;
    std::vector<float*> A, B, C;

    input_sets(int M_, int N_, int K_, int l2) : M(M_), N(N_), K(K_), n(1)
    {
        long long set_bytes = 4LL * ((long long)M * K + (long long)K * N + (long long)M * N);
        if (set_bytes <= l2) n = (int)std::min<long long>(std::max<long long>((3LL * l2 + set_bytes - 1) / set_bytes, 2), 64);
        std::mt19937 rng(0x5eed);
        for (int i = 0; i < n; i++) {
            A.push_back(upload(random_matrix(rng, (size_t)M * K)));
            B.push_back(upload(random_matrix(rng, (size_t)K * N)));
            float* c = nullptr;
            CHECK_CUDA(cudaMalloc(&c, (size_t)M * N * sizeof(float)));
            C.push_back(c);
        }
    }
    ~input_sets()
    {
        for (int i = 0; i < n; i++) {
            CHECK_CUDA(cudaFree(A[i]));
            CHECK_CUDA(cudaFree(B[i]));
            CHECK_CUDA(cudaFree(C[i]));
        }
    }
};

// driver_ms times kernel f (the geometry of exported kernel k) launched with cuLaunchKernel.
static double driver_ms(CUfunction f, const TG(_kernel_info) & k, input_sets& in, cudaStream_t s)
{
    if (k.dynamic_shared > 48 * 1024)
        CHECK_CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k.dynamic_shared));
    unsigned gx = (unsigned)((in.N + k.tile_cols - 1) / k.tile_cols), gy = (unsigned)((in.M + k.tile_rows - 1) / k.tile_rows);
    return time_ms(s, [&](int i) {
        int x = i % in.n, M = in.M, N = in.N, K = in.K, lda = in.K, ldb = in.N, ldc = in.N;
        float alpha = 1.0f, beta = 0.0f;
        const float *A = in.A[x], *B = in.B[x];
        float* C = in.C[x];
        void* args[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
        CHECK_CU(cuLaunchKernel(f, gx, gy, (unsigned)k.grid_z, (unsigned)k.block_x, (unsigned)k.block_y, 1,
                                (unsigned)k.dynamic_shared, (CUstream)s, args, nullptr));
    });
}

// load_ptx JIT-compiles DIR/NAME.ptx in the current context and returns the kernel NAME, or null
// when the file cannot be read.
static CUfunction load_ptx(const std::string& dir, const char* name)
{
    std::string path = dir + "/" + name + ".ptx";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        std::fprintf(stderr, "%s: cannot open\n", path.c_str());
        return nullptr;
    }
    std::string text;
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    CUmodule mod;
    CUfunction fn;
    CHECK_CU(cuModuleLoadData(&mod, text.c_str())); // kept loaded until the process exits
    CHECK_CU(cuModuleGetFunction(&fn, mod, name));
    return fn;
}

__global__ void tg_empty_kernel() {}

int main(int argc, char** argv)
{
    double strict = -1;
    std::string ptx_dir;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--strict-time") && i + 1 < argc) {
            strict = std::atof(argv[++i]);
        } else if (!std::strcmp(argv[i], "--ptx-dir") && i + 1 < argc) {
            ptx_dir = argv[++i];
        } else {
            std::fprintf(stderr, "usage: %s [--strict-time PCT] [--ptx-dir DIR]\n", argv[0]);
            return 2;
        }
    }
    cudaDeviceProp prop;
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s\n", prop.name);
    cublasHandle_t h;
    CHECK_BLAS(cublasCreate(&h));
    CHECK_BLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH)); // no TF32: a float32 reference
    std::mt19937 rng(1);
    bool ok = true;

    int n_classes = 0;
    const TG(_class_info)* cls = TG(_classes)(&n_classes);
    std::printf("== correctness vs cuBLAS\n");
    for (int i = 0; i < n_classes; i++) {
        ok &= check(h, cls[i].M, cls[i].N, cls[i].K, 1.0f, 0.0f, 0, rng);
        ok &= check(h, cls[i].M, cls[i].N, cls[i].K, 1.5f, -0.75f, 3, rng);
    }
    const int edges[][3] = {{1, 1, 1}, {97, 89, 83}, {4099, 17, 513}, {1, 4097, 3}, {33, 65, 129}, {2500, 300, 700}};
    for (auto& e : edges) ok &= check(h, e[0], e[1], e[2], -0.5f, 2.0f, 1, rng);

    std::printf("== refusals (must return an error and launch nothing)\n");
    {
        float* d = nullptr;
        CHECK_CUDA(cudaMalloc(&d, 64 * sizeof(float)));
        cudaError_t e1 = TG(_sgemm)(4, 4, 4, 1, d, 3, d, 4, 0, d, 4, 0);  // lda < K
        cudaError_t e2 = TG(_sgemm)(0, 4, 4, 1, d, 4, d, 4, 0, d, 4, 0);  // M = 0
        bool refused = e1 == cudaErrorInvalidValue && e2 == cudaErrorInvalidValue;
        std::printf("%s lda<K -> %s, M=0 -> %s\n", refused ? "ok  " : "FAIL", cudaGetErrorName(e1), cudaGetErrorName(e2));
        ok &= refused;
        CHECK_CUDA(cudaFree(d));
    }

    std::printf("== timing vs the times recorded at tuning (median of event pairs, one launch each)\n");
    int dev = 0, l2 = 0, rt = 0, drv = 0;
    CHECK_CUDA(cudaGetDevice(&dev));
    CHECK_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CHECK_CUDA(cudaRuntimeGetVersion(&rt));
    CHECK_CUDA(cudaDriverGetVersion(&drv));
    cudaStream_t s;
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    {
        // The launch cost that stays inside an event pair when nothing else is queued.
        cudaFunction_t ef;
        CHECK_CUDA(cudaGetFuncBySymbol(&ef, (const void*)tg_empty_kernel));
        double rt_ms = time_ms(s, [&](int) {
            CHECK_CUDA(cudaLaunchKernel((const void*)tg_empty_kernel, dim3(1), dim3(1), (void**)nullptr, 0, s));
        });
        double drv_ms = time_ms(s, [&](int) { CHECK_CU(cuLaunchKernel((CUfunction)ef, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, nullptr, nullptr)); });
        std::printf("empty kernel: runtime cudaLaunchKernel %.5f ms, driver cuLaunchKernel %.5f ms (CUDA runtime %d, driver %d)\n",
                    rt_ms, drv_ms, rt, drv);
    }
    std::printf("ms; launcher: %s_sgemm; driver: its kernel through cuLaunchKernel; ptx: the exported PTX JIT-compiled\n"
                "by the driver, launched the same way (the tuner's code and launch); now/tuned: launcher / tuned\n",
                TG_STR(TG_EXPORT_NAME));
    std::printf("%-17s %-40s %4s %10s %10s %10s %10s %9s %9s\n", "shape", "variant", "sets", "launcher", "driver", "ptx",
                "tuned", "now/tuned", "ptx/tuned");
    for (int i = 0; i < n_classes; i++) {
        const TG(_kernel_info)& k = TG(_kernels)(NULL)[cls[i].kernel];
        input_sets in(cls[i].M, cls[i].N, cls[i].K, l2);
        double ms = time_ms(s, [&](int j) {
            int x = j % in.n;
            CHECK_CUDA(TG(_sgemm)(in.M, in.N, in.K, 1.0f, in.A[x], in.K, in.B[x], in.N, 0.0f, in.C[x], in.N, s));
        });
        cudaFunction_t hf;
        CHECK_CUDA(cudaGetFuncBySymbol(&hf, k.fn));
        double dms = driver_ms((CUfunction)hf, k, in, s);
        double pms = NAN;
        if (!ptx_dir.empty())
            if (CUfunction pf = load_ptx(ptx_dir, k.name)) pms = driver_ms(pf, k, in, s);
        double now_tuned = ms / cls[i].tuned_ms;
        bool slow = strict >= 0 && now_tuned > 1.0 + strict / 100.0;
        char ptx[2][16] = {"-", "-"};
        if (!std::isnan(pms)) {
            std::snprintf(ptx[0], sizeof ptx[0], "%.5f", pms);
            std::snprintf(ptx[1], sizeof ptx[1], "%.3f", pms / cls[i].tuned_ms);
        }
        std::printf("%5dx%5dx%5d %-40s %4d %10.5f %10.5f %10s %10.5f %9.3f %9s%s\n", cls[i].M, cls[i].N, cls[i].K, k.name, in.n,
                    ms, dms, ptx[0], cls[i].tuned_ms, now_tuned, ptx[1], slow ? "  SLOW" : "");
        ok &= !slow;
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_BLAS(cublasDestroy(h));
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
