// Connected components, stage 1: the local merge (LocalMergeKernel). One 32 x TY x TZ tile a block in shared
// memory: a warp a tile row, whose ballot finds the runs of connected voxels (the paper's row scan), then a
// shared-memory union-find over the other backward neighbours inside the tile. Writes the global index of each
// voxel's local root and counts the local roots per chunk. Binary images with long rows use the runs path instead
// (chsConnectedComponentsRuns.cuh).
#ifndef chsCCLocalMerge_cuh
#define chsCCLocalMerge_cuh

#include "chsConnectedComponentsCommon.cuh"

namespace chs
{
namespace cc
{

/** A local-merge thread's lane and warp, its column x and its tile's first row y0 and slice z0. */
template <typename I, class TileT>
struct TileThread
{
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  I   x    = I(blockIdx.x) * kTileX + lane;
  I   y0   = I(blockIdx.y) * TileT::Y;
  I   z0   = I(blockIdx.z) * TileT::Z;
};

/** Last step of the general local merge, for one tile row: the first voxel of each run (lane `start`) finds its
 * root in the tile, counts it when it is a root, and the warp hands the root's global index to the rest of the
 * run; inactive voxels get the sentinel. (The binary local merge queues its run starts' lookups instead.) */
template <typename I, class TileT>
__device__ __forceinline__ void
StoreLocalRoots(int *             L,
                I *               parent,
                const Extent<I> & e,
                I *               chunkRoots,
                int               row,
                int               lane,
                int               start,
                bool              active,
                I                 x,
                I                 y0,
                I                 z0)
{
  constexpr int TY   = TileT::Y;
  const I       y    = y0 + row % TY;
  const I       z    = z0 + row / TY;
  I             root = Sentinel<I>();
  if (active && lane == start)
  {
    const int t    = row * kTileX + lane;
    const int r    = FindRoot(L, t);
    const int rrow = r / kTileX;
    root           = ((z0 + rrow / TY) * e.ny + (y0 + rrow % TY)) * e.nx + (x - lane + (r % kTileX));
    if (r == t)
      atomicAdd(chunkRoots + (root >> kChunkShift), I(1));
  }
  root = __shfl_sync(0xffffffffu, root, start);
  if (x < e.nx && y < e.ny && z < e.nz)
    parent[(z * e.ny + y) * e.nx + x] = root;
}

template <class Op, bool Full, typename I, class TileT>
__global__ void
__launch_bounds__(kLocalThreads) LocalMergeKernel(Op op, I * parent, Extent<I> e, I * chunkRoots)
{
  using Class                  = typename Op::Class;
  constexpr int    TY          = TileT::Y;
  constexpr int    rowStride   = kTileX;
  constexpr int    sliceStride = kTileX * TY;
  __shared__ int   L[TileT::Voxels];
  __shared__ Class C[TileT::Voxels];

  const auto [lane, warp, x, y0, z0] = TileThread<I, TileT>();

  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const I    y           = y0 + row % TY;
    const I    z           = z0 + row / TY;
    const bool inside      = x < e.nx && y < e.ny && z < e.nz;
    C[row * kTileX + lane] = inside ? op.Load((z * e.ny + y) * e.nx + x) : Op::Outside();
  }
  __syncthreads();

  // Coarse labeling: every voxel points to the first voxel of its run in the row.
  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const int      t        = row * kTileX + lane;
    const bool     link     = lane > 0 && Op::Connected(C[t], C[t - 1]);
    const unsigned starts   = __ballot_sync(0xffffffffu, !link);
    const unsigned upToLane = starts & (0xffffffffu >> (31 - lane));
    L[t]                    = row * kTileX + (31 - __clz(upToLane));
  }
  __syncthreads();

  // Local union-find over the backward neighbours not already joined by the runs.
  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const int   t = row * kTileX + lane;
    const Class c = C[t];
    if (!Op::Active(c))
      continue;
    const int  ly    = row % TY;
    const int  lz    = row / TY;
    const bool linkT = lane > 0 && Op::Connected(c, C[t - 1]);
    // Full connectivity: a neighbour in the row (dz = 0) or plane (dz = -1) of the voxel straight behind t is
    // joined to that voxel inside the tile (an earlier pair), so when t is connected to it, t needs no other union
    // in that row or plane. Decided before any of those neighbours is read.
    const bool straightY = Full && ly > 0 && Op::Connected(c, C[t - rowStride]);
    const bool straightZ = Full && TileT::Z > 1 && lz > 0 && Op::Connected(c, C[t - sliceStride]);
#pragma unroll
    for (int dz = -1; dz <= 0; ++dz)
    {
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
      {
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx)
        {
          if (dz == 0 && dy >= 0)
            continue; // not backward, or the row neighbour (runs)
          if (!Full && (dx != 0 || (dy != 0 && dz != 0)))
            continue; // face connectivity: (0, -1, 0) and (0, 0, -1) only
          if (TileT::Z == 1 && dz != 0)
            continue;
          if (Full && dz < 0 && (dx != 0 || dy != 0) && straightZ)
            continue;
          if (Full && dz == 0 && dx != 0 && straightY)
            continue;
          const int qx = lane + dx;
          const int qy = ly + dy;
          const int qz = lz + dz;
          if (qx < 0 || qx >= kTileX || qy < 0 || qy >= TY || qz < 0)
            continue; // across the tile: the boundary kernel
          const int u = t + dx + dy * rowStride + dz * sliceStride;
          if (!Op::Connected(c, C[u]))
            continue;
          // (t, u) follows from (t-1, u-1), which the left neighbour handles with the same offset.
          if (linkT && qx >= 1 && Op::Connected(C[u], C[u - 1]))
            continue;
          Unite(L, t, u);
        }
      }
    }
  }
  __syncthreads();

  // Only the first voxel of each run looks up the root; the warp hands it to the rest of the run.
  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const int      t      = row * kTileX + lane;
    const Class    c      = C[t];
    const bool     link   = lane > 0 && Op::Connected(c, C[t - 1]);
    const unsigned starts = __ballot_sync(0xffffffffu, !link);
    const int      start  = 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
    StoreLocalRoots<I, TileT>(L, parent, e, chunkRoots, row, lane, start, Op::Active(c), x, y0, z0);
  }
}

} // namespace cc
} // namespace chs

#endif
