#ifndef TINY_STORE_CUH
#define TINY_STORE_CUH
#include "tilegen/guard.cuh"
namespace tiny {
__device__ __forceinline__ void store(float* c, float alpha, float beta, float acc)
{
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
} // namespace tiny
#endif // TINY_STORE_CUH
