#ifndef TILEGEN_GUARDS_CUH
#define TILEGEN_GUARDS_CUH
// tilegen/guards.cuh: edge guards (seed 003: tiles with boundary conditions). Every kernel of the
// library accepts any M, N, K and leading dimension: rows and columns past the matrix edge are
// zero-filled when a tile is loaded, so the math on a partial tile needs no guard and adds exact
// zeros, and the store skips what lies outside C. The guards cost instructions, so a kernel picks
// a path per k tile, uniform across the block, and the hot path carries none.
#include <stdint.h>

namespace tg {

// Path of one k tile's loads.
//   PATH_FAST  interior block, full k tile, 16-byte-aligned operands: unguarded float4s.
//   PATH_EDGE  full k tile of an edge block or of a misaligned operand: per float4, rows (columns)
//              past the edge are zero, the rest is one float4 (aligned) or four scalars (any ld).
//   PATH_TAIL  the tile crossing the end of the k range: every element guarded and zero-filled.
enum Path { PATH_FAST, PATH_EDGE, PATH_TAIL };

// aligned16 says whether the rows of a matrix at address addr with leading dimension ld are 16-byte
// aligned, the condition of every float4 (16-byte) path; kernels check it once per operand. It
// takes the address as an integer: handing the pointer itself to a function changes how nvcc
// loads through it (ld.global.nc), and kernels keep their loads as they are.
__device__ __forceinline__ bool aligned16(uintptr_t addr, int ld)
{
    return ((addr & 15) == 0) && ((ld & 3) == 0);
}

} // namespace tg
#endif // TILEGEN_GUARDS_CUH
