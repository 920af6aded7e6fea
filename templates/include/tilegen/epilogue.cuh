#ifndef TILEGEN_EPILOGUE_CUH
#define TILEGEN_EPILOGUE_CUH
// tilegen/epilogue.cuh: writing results, C = alpha*acc + beta*C, with the boundary conditions of
// seed 003 (nothing outside the M x N result is written). beta == 0 never reads C, so C may hold
// NaN or garbage on entry (BLAS semantics).
//   store, store_unguarded  one element: the seed families (naive, coalesced, shared, micro1d,
//                           coarse), one or a few results per thread.
//   store4, store_tile      float4 groups: the register-tiled families' thread tiles.
namespace tg {

// store writes C[i][j] = alpha*acc + beta*C[i][j] when (i, j) lies inside the M x N result.
__device__ __forceinline__ void store(float* __restrict__ C, int ldc, int M, int N, int i, int j, float alpha,
                                      float beta, float acc)
{
    if (i < M && j < N) {
        float* p = C + (size_t)i * ldc + j;
        if (beta == 0.0f) {
            *p = alpha * acc;
        } else {
            *p = alpha * acc + beta * *p;
        }
    }
}

// store_unguarded is store for an element known to be inside the result.
__device__ __forceinline__ void store_unguarded(float* __restrict__ C, int ldc, int i, int j, float alpha, float beta,
                                                float acc)
{
    float* p = C + (size_t)i * ldc + j;
    if (beta == 0.0f) {
        *p = alpha * acc;
    } else {
        *p = alpha * acc + beta * *p;
    }
}

// store4 writes one float4 group of a thread tile, C[row][col..col+3] = alpha*v + beta*C. A row
// past M is skipped; a group wholly inside N is one 16-byte store when C and ldc are 16-byte
// aligned (vc), else it is stored element by element with a column guard.
__device__ __forceinline__ void store4(float4 v, float* __restrict__ C, int ldc, int M, int N, int row, int col,
                                       float alpha, float beta, bool vc)
{
    if (row >= M) return;
    float* crow = C + (size_t)row * ldc;
    v = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    if (vc && col + 4 <= N) {
        float4* p = reinterpret_cast<float4*>(crow + col);
        if (beta != 0.0f) {
            const float4 o = *p;
            v.x = fmaf(beta, o.x, v.x);
            v.y = fmaf(beta, o.y, v.y);
            v.z = fmaf(beta, o.z, v.z);
            v.w = fmaf(beta, o.w, v.w);
        }
        *p = v;
    } else {
        const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (col + j < N) {
                float x = e[j];
                if (beta != 0.0f) x = fmaf(beta, crow[col + j], x);
                crow[col + j] = x;
            }
        }
    }
}

// store_tile writes a thread's whole TM x TN tile (Tile: a tg::WarpTile) whose first element is
// C[row0][col0], group by group.
template <class Tile>
__device__ __forceinline__ void store_tile(const float (&acc)[Tile::TM][Tile::TN], float* __restrict__ C, int ldc,
                                           int M, int N, int row0, int col0, float alpha, float beta, bool vc)
{
#pragma unroll
    for (int j = 0; j < Tile::F4; ++j) {
        store4(Tile::group(acc, j), C, ldc, M, N, row0 + Tile::grow(j), col0 + Tile::gcol(j), alpha, beta, vc);
    }
}

} // namespace tg
#endif // TILEGEN_EPILOGUE_CUH
