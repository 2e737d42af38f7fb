// Alpha-tree construction, stage 1: a partial tree per tile in shared memory (the paper's "local trees"). One thread
// per pixel of a TX x TY x TZ tile; the tile's nodes are its pixels and the K forward edge slots of each pixel. Edges
// whose both ends lie in the tile are inserted here (InsertAllEdges: each thread first chains its pixel's edges by
// level, then CONNECTs each edge with its far end; SkipRedundantEdges: CONNECT-WITH), then the tile's parents and
// the levels of all its edge slots are written to global memory. Edges that cross a tile border are the next stage's.
#ifndef chsATTile_cuh
#define chsATTile_cuh

#include "chsAlphaTreeConnect.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

namespace chs
{
namespace at
{

struct TileShape
{
  unsigned x, y, z;
  __host__ __device__ unsigned
  Pixels() const
  {
    return x * y * z;
  }
};

/** Where tile `tile` starts, for tiles laid out x fastest. */
__device__ __forceinline__ void
TileOrigin(const sl::ImageGraph & g, TileShape s, uint64_t tile, int64_t & ox, int64_t & oy, int64_t & oz)
{
  const uint64_t tx = uint64_t((g.nx + s.x - 1) / s.x), ty = uint64_t((g.ny + s.y - 1) / s.y);
  ox = int64_t(tile % tx) * s.x;
  oy = int64_t((tile / tx) % ty) * s.y;
  oz = int64_t(tile / (tx * ty)) * s.z;
}

/** Whether pixel (x, y, z) and its slot-s neighbour lie in the same tile (the neighbour inside the image). */
__device__ __forceinline__ bool
SameTile(const sl::ImageGraph & g, TileShape s, int64_t x, int64_t y, int64_t z, unsigned slot)
{
  const int64_t qx = x + g.dx[slot], qy = y + g.dy[slot], qz = z + g.dz[slot];
  return qx >= 0 && qy >= 0 && qz >= 0 && qx < g.nx && qy < g.ny && qz < g.nz && qx / s.x == x / s.x &&
         qy / s.y == y / s.y && qz / s.z == z / s.z;
}

/** Shared memory of a tile: parents and levels of its pixels and edge slots, and the count of inserted edges. */
__host__ __device__ constexpr size_t
TileSharedBytes(unsigned pixels, unsigned slots)
{
  return size_t(pixels) * (slots + 1) * 2 * sizeof(uint32_t) + sizeof(unsigned long long);
}

template <typename TPixel, bool kInsertAll>
__global__ void
TileTreeKernel(const TPixel *       pixels,
               sl::ImageGraph       g,
               unsigned             components,
               VectorDistance       distance,
               TileShape            s,
               uint32_t *           parent, // all nodes
               uint32_t *           level,  // edge slots
               unsigned long long * inserted)
{
  extern __shared__ unsigned long long sharedWords[];
  const unsigned                       T = s.Pixels(), K = g.slots, t = threadIdx.x;
  uint32_t *                           sParent   = reinterpret_cast<uint32_t *>(sharedWords + 1);
  uint32_t *                           sLevel    = sParent + T * (K + 1);
  unsigned long long &                 sInserted = sharedWords[0];
  const uint32_t                       n         = uint32_t(g.Pixels());

  int64_t ox, oy, oz;
  TileOrigin(g, s, blockIdx.x, ox, oy, oz);
  const int64_t  x = ox + t % s.x, y = oy + (t / s.x) % s.y, z = oz + t / (s.x * s.y);
  const bool     inside = x < g.nx && y < g.ny && z < g.nz;
  const uint64_t p      = inside ? uint64_t((z * g.ny + y) * g.nx + x) : 0;
  if (t == 0)
    sInserted = 0;

  // Levels of the pixel's edge slots; the pixel and its slots start as singletons.
  sParent[t] = t;
  sLevel[t]  = 0;
  for (unsigned k = 0; k < K; ++k)
  {
    const uint32_t e = T + t * K + k;
    uint32_t       w = kNoEdge;
    if (inside)
    {
      const int64_t q = g.Neighbour(x, y, z, k);
      if (q >= 0)
        w = sl::EdgeCode(pixels + p * components, pixels + uint64_t(q) * components, components, distance);
    }
    sParent[e] = e;
    sLevel[e]  = w;
  }
  if (kInsertAll && inside)
  {
    // The pixel's chain: its in-tile edges sorted by (level, slot), above the pixel (insertion sort, K <= 13).
    uint64_t order[13];
    unsigned count = 0;
    for (unsigned k = 0; k < K; ++k)
    {
      if (!SameTile(g, s, x, y, z, k))
        continue;
      const uint64_t key = (uint64_t(sLevel[T + t * K + k]) << 8) | k;
      unsigned       i   = count++;
      for (; i > 0 && order[i - 1] > key; --i)
        order[i] = order[i - 1];
      order[i] = key;
    }
    uint32_t below = t;
    for (unsigned i = 0; i < count; ++i)
    {
      const uint32_t e = T + t * K + unsigned(order[i] & 0xff);
      sParent[below]   = e;
      below            = e;
    }
  }
  __syncthreads();

  // In-tile edges.
  const SharedTree tree{ sParent, sLevel, T };
  unsigned         mine = 0;
  if (inside)
    for (unsigned k = 0; k < K; ++k)
    {
      if (!SameTile(g, s, x, y, z, k))
        continue;
      const unsigned j = t + unsigned(g.dx[k]) + unsigned(g.dy[k]) * s.x + unsigned(g.dz[k]) * s.x * s.y;
      const uint32_t e = T + t * K + k;
      if (kInsertAll)
      {
        Connect(tree, e, j);
        ++mine;
      }
      else if (ConnectWith(tree, t, j, e))
        ++mine;
    }
  if (mine)
    atomicAdd(&sInserted, (unsigned long long)mine);
  __syncthreads();

  // Global ids of local nodes: pixel u of the tile, or edge slot k of pixel u.
  auto globalId = [&](uint32_t local) -> uint32_t
  {
    const uint32_t u  = local < T ? local : (local - T) / K;
    const int64_t  ux = ox + u % s.x, uy = oy + (u / s.x) % s.y, uz = oz + u / (s.x * s.y);
    const uint32_t pu = uint32_t((uz * g.ny + uy) * g.nx + ux);
    return local < T ? pu : n + pu * K + (local - T - u * K);
  };
  if (inside)
  {
    parent[p] = globalId(sParent[t]);
    for (unsigned k = 0; k < K; ++k)
    {
      const uint32_t e      = T + t * K + k;
      parent[n + p * K + k] = globalId(sParent[e]);
      level[p * K + k]      = sLevel[e];
    }
  }
  if (t == 0 && sInserted)
    atomicAdd(inserted, sInserted);
}

} // namespace at
} // namespace chs

#endif
