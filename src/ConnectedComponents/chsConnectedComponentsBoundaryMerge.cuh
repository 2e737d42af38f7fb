// Connected components, stage 2: the boundary pass (BoundaryMergeKernel). Threads only for voxels on the low faces
// of tiles, one launch for all three axes; each voxel unites with its neighbours in the tile behind the face, and
// every successful link removes one root from the chunk counts.
#ifndef chsCCBoundaryMerge_cuh
#define chsCCBoundaryMerge_cuh

#include "chsConnectedComponentsCommon.cuh"

namespace chs
{
namespace cc
{

/** A block's place in one axis' grid of the combined boundary launch (the builtins' roles, for that axis). */
struct FaceBlock
{
  uint3 block;
  dim3  grid;
};

/** Calls f(x, y, z, valid) for every voxel of this thread on the low faces across `Axis` (x = 32i, y = TY*j or
 * z = TZ*l, with i, j, l >= 1), with grid-stride loops in all three grid dimensions and no integer division but
 * one. */
template <int Axis, class TileT, typename I, class F>
__device__ __forceinline__ void
ForFaceVoxels(const Extent<I> & e, const FaceBlock & b, F && f)
{
  // Every loop is uniform across the warp (the unions' queue needs all lanes): a lane past the end of a row gets
  // valid = false and coordinates inside the image.
  const uint3 blockIdx  = b.block;
  const dim3  gridDim   = b.grid;
  const I     lane      = threadIdx.x & 31;
  const I     warpStart = I(blockIdx.x) * blockDim.x + threadIdx.x - lane;
  const I     xStride   = I(gridDim.x) * blockDim.x;
  if (Axis == 0)
  {
    // Threads run over the rows (y, z); blockIdx.y over the faces.
    const I rows = e.ny * e.nz;
    for (I face = I(blockIdx.y) + 1; face * kTileX < e.nx; face += gridDim.y)
      for (I row0 = warpStart; row0 < rows; row0 += xStride)
      {
        const bool valid = row0 + lane < rows;
        const I    row   = valid ? row0 + lane : row0;
        f(face * kTileX, row % e.ny, row / e.ny, valid);
      }
  }
  else if (Axis == 1)
  {
    for (I z = blockIdx.z; z < e.nz; z += gridDim.z)
      for (I face = I(blockIdx.y) + 1; face * TileT::Y < e.ny; face += gridDim.y)
        for (I x0 = warpStart; x0 < e.nx; x0 += xStride)
        {
          const bool valid = x0 + lane < e.nx;
          f(valid ? x0 + lane : x0, face * TileT::Y, z, valid);
        }
  }
  else
  {
    for (I face = I(blockIdx.z) + 1; face * TileT::Z < e.nz; face += gridDim.z)
      for (I y = blockIdx.y; y < e.ny; y += gridDim.y)
        for (I x0 = warpStart; x0 < e.nx; x0 += xStride)
        {
          const bool valid = x0 + lane < e.nx;
          f(valid ? x0 + lane : x0, y, face * TileT::Z, valid);
        }
  }
}

template <typename I>
struct VoxelPair
{
  I p, q;
};

template <class Op, bool Full, typename I, class TileT, int Axis>
__device__ __forceinline__ void
BoundaryMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, const FaceBlock & b, VoxelPair<I> * queue)
{
  const I sy        = e.nx;
  const I sz        = e.nx * e.ny;
  const I stride[3] = { 1, sy, sz };
  auto    unite     = [&](const VoxelPair<I> & pair)
  {
    I linked;
    if (Unite<I>(parent, pair.p, pair.q, &linked))
      atomicAdd(chunkRoots + (linked >> kChunkShift), ~I(0)); // minus one
  };
  WarpQueue<VoxelPair<I>, decltype(unite)> unions{ queue, int(threadIdx.x & 31), 0, unite };
  ForFaceVoxels<Axis, TileT, I>(
    e,
    b,
    [&](I x, I y, I z, bool valid)
    {
      const I    p      = (z * e.ny + y) * e.nx + x;
      const auto cp     = valid ? op.Load(p) : Op::Outside();
      const bool active = Op::Active(cp);
      // The skip rule walks along j (y on x faces, x on the others); it may lean only on pairs inside a tile.
      constexpr int J     = Axis == 0 ? 1 : 0;
      constexpr I   TJ    = Axis == 0 ? I(TileT::Y) : I(kTileX);
      const I       pj    = J == 1 ? y : x;
      const bool    linkP = active && (pj % TJ) != 0 && Op::Connected(cp, op.Load(p - stride[J]));
      // The voxel straight across the face.
      const I    straight     = p - stride[Axis];
      const bool linkStraight = Full && active && Op::Connected(cp, op.Load(straight));
      const I    tx = x / kTileX, ty = y / TileT::Y, tz = z / TileT::Z; // tile of p (same as straight's, but Axis)
#pragma unroll
      for (int dz = (Axis == 2 ? -1 : (Full ? -1 : 0)); dz <= (Axis == 2 ? -1 : (Full ? 1 : 0)); ++dz)
#pragma unroll
        for (int dy = (Axis == 1 ? -1 : (Full ? -1 : 0)); dy <= (Axis == 1 ? -1 : (Full ? 1 : 0)); ++dy)
#pragma unroll
          for (int dx = (Axis == 0 ? -1 : (Full ? -1 : 0)); dx <= (Axis == 0 ? -1 : (Full ? 1 : 0)); ++dx)
          {
            const I qx = x + dx, qy = y + dy, qz = z + dz;
            const I q = (qz * e.ny + qy) * e.nx + qx;
            bool    wanted =
              active && !((dx < 0 && x == 0) || (dy < 0 && y == 0) || (dz < 0 && z == 0) || (dx > 0 && x + 1 >= e.nx) ||
                          (dy > 0 && y + 1 >= e.ny) || (dz > 0 && z + 1 >= e.nz));
            if (Full && wanted && linkStraight && q != straight)
            {
              // q neighbours the voxel straight across the face in that voxel's plane; inside one tile that pair is
              // joined by the local merge, so (p, q) follows from (p, straight).
              const bool sameTile = (Axis == 0 || qx / kTileX == tx) && (Axis == 1 || qy / TileT::Y == ty) &&
                                    (Axis == 2 || qz / TileT::Z == tz);
              wanted = !sameTile;
            }
            if (wanted)
            {
              const auto cq = op.Load(q);
              const I    qj = J == 1 ? qy : qx;
              // Not wanted either when it follows from the same offset one step back along j.
              wanted = Op::Connected(cp, cq) && !(linkP && (qj % TJ) != 0 && Op::Connected(cq, op.Load(q - stride[J])));
            }
            // Full connectivity queues its unions (up to nine a voxel, on scattered lanes): 512^3 blobs 2.46 ->
            // 0.89 ms. With face connectivity the queue did not pay (0.54 -> 0.57 ms), so those unite at once.
            if constexpr (Full)
              unions.Push(wanted, VoxelPair<I>{ p, q });
            else if (wanted)
              unite(VoxelPair<I>{ p, q });
          }
    });
  if constexpr (Full)
    unions.Flush();
}

/** Blocks of the combined boundary launch, per axis: its grid and the first flat block index of each axis
 * (first[3] is the total). All three axes run in one launch, so their latency-bound unions overlap; unions are
 * atomic and every skip rule leans only on pairs inside one tile, so the axes need no order. */
struct FaceLaunch
{
  dim3     grid[3];
  unsigned first[4];
};

template <class Op, bool Full, typename I, class TileT>
__global__ void
__launch_bounds__(kBoundaryThreads)
  BoundaryMergeKernel(Op op, I * parent, Extent<I> e, I * chunkRoots, FaceLaunch launch)
{
  const unsigned  flat  = blockIdx.x;
  const int       axis  = flat < launch.first[1] ? 0 : flat < launch.first[2] ? 1 : 2;
  const dim3      g     = launch.grid[axis];
  const unsigned  local = flat - launch.first[axis];
  const FaceBlock b{ make_uint3(local % g.x, (local / g.x) % g.y, local / (g.x * g.y)), g };
  __shared__ VoxelPair<I> queues[kBoundaryThreads / 32][64];
  VoxelPair<I> *          queue = queues[threadIdx.x >> 5];
  if (axis == 0)
    BoundaryMerge<Op, Full, I, TileT, 0>(op, parent, e, chunkRoots, b, queue);
  else if (axis == 1)
    BoundaryMerge<Op, Full, I, TileT, 1>(op, parent, e, chunkRoots, b, queue);
  else
    BoundaryMerge<Op, Full, I, TileT, 2>(op, parent, e, chunkRoots, b, queue);
}

} // namespace cc
} // namespace chs

#endif
