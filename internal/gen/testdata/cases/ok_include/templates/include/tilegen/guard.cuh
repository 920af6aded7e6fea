#ifndef TINY_GUARD_CUH
#define TINY_GUARD_CUH
namespace tiny {
__device__ __forceinline__ bool inside(int i, int j, int M, int N) { return i < M && j < N; }
} // namespace tiny
#endif // TINY_GUARD_CUH
