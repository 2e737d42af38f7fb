// CUDA connected-components labeling (Chen et al., "An Optimized Union-Find Algorithm for Connected Components
// Labeling Using GPUs"), extended to 8-connectivity in 2D, 6- and 26-connectivity in 3D, to flat zones and to
// volumes of more than 2^32 voxels, followed by a relabeling to ITK's numbering.
//
// Union-find invariant used by every kernel: parent[i] <= i and a root is the smallest raster index of its set.
// Unions link the larger root under the smaller one with atomicMin, so the final root of every component is its
// first voxel in raster order whatever order the threads run in: the result is deterministic by construction.
//
// Kernels:
//  1. LocalMergeKernel: one 32 x TY x TZ tile per block in shared memory. Coarse labeling with the warp: each
//     tile row is one warp, and a ballot finds the start of every run of connected voxels (the paper's row scan);
//     then a shared-memory union-find over the remaining backward neighbours inside the tile (the column scan and
//     local union-find). Writes the global index of each voxel's local root and counts the local roots.
//  2. BoundaryMergeKernel: threads only for voxels on the low faces of tiles; each unites with its neighbours
//     in the tile behind that face. Every successful link removes one root from the count.
//  3. The count is read back and checked against the label type before anything is written; then an inclusive
//     scan of "is a root" gives each root its rank (CUB), and FinalizeKernel gives every voxel its root's label
//     (the paper's final link), with optional per-label statistics.
#ifndef chsConnectedComponents_cuh
#define chsConnectedComponents_cuh

#include "chsConnectedComponents.h"
#include "chsCudaCommon.cuh"

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace chs
{
namespace cc
{

constexpr int kTileX = 32; // one warp per tile row
constexpr int kLocalThreads = 512;
constexpr int kLocalWarps = kLocalThreads / 32;
constexpr int kMaxTileVoxels = 2048;
constexpr int kBoundaryThreads = 256;
constexpr int kFinalizeThreads = 256;

struct Shape
{
  uint64_t nx, ny, nz;
  int      ty, tz;
  uint64_t tilesX, tilesY, tilesZ;
};

template <typename I>
__host__ __device__ constexpr I
Sentinel()
{
  return ~I(0);
}

/** ITK's ConnectedComponentImageFilter: non-zero and inside the mask is foreground. */
template <typename T>
struct BinaryOp
{
  using Class = uint8_t;
  const T *       input;
  const uint8_t * mask;
  __device__ Class
  Load(uint64_t i) const
  {
    return (input[i] != T(0)) && (mask == nullptr || mask[i] != 0);
  }
  __device__ static Class
  Outside()
  {
    return 0;
  }
  __device__ static bool
  Active(Class c)
  {
    return c != 0;
  }
  __device__ static bool
  Connected(Class a, Class b)
  {
    return a && b;
  }
};

template <typename T>
struct FlatClass
{
  T       value;
  uint8_t inside;
};

/** Flat zones: every voxel inside the mask is active; equal neighbours are connected. */
template <typename T>
struct FlatOp
{
  using Class = FlatClass<T>;
  const T *       input;
  const uint8_t * mask;
  __device__ Class
  Load(uint64_t i) const
  {
    return Class{ input[i], uint8_t(mask == nullptr || mask[i] != 0) };
  }
  __device__ static Class
  Outside()
  {
    return Class{ T(0), 0 };
  }
  __device__ static bool
  Active(Class c)
  {
    return c.inside != 0;
  }
  __device__ static bool
  Connected(Class a, Class b)
  {
    return a.inside && b.inside && a.value == b.value;
  }
};

/** Find with path halving in shared memory (safe for the same reason as FindGlobal below). */
__device__ __forceinline__ int
FindShared(volatile int * L, int a)
{
  for (;;)
  {
    const int p = L[a];
    if (p == a)
      return a;
    const int gp = L[p];
    if (gp == p)
      return p;
    L[a] = gp;
    a = gp;
  }
}

__device__ __forceinline__ void
UniteShared(int * L, int a, int b)
{
  for (;;)
  {
    a = FindShared(L, a);
    b = FindShared(L, b);
    if (a == b)
      return;
    if (a < b)
    {
      const int t = a;
      a = b;
      b = t;
    }
    const int old = atomicMin(L + a, b);
    if (old == a)
      return;
    a = old; // a was linked meanwhile: unite its new root instead
  }
}

/** Find with path halving. Plain stores are safe: they only point a non-root at one of its ancestors, and a
 * concurrent link that such a store overwrites is retried by its own thread from the old parent. */
template <typename I>
__device__ __forceinline__ I
FindGlobal(I * P, I a)
{
  volatile I * V = P; // bypass L1: other blocks link roots while this kernel runs
  for (;;)
  {
    const I p = V[a];
    if (p == a)
      return a;
    const I gp = V[p];
    if (gp == p)
      return p;
    V[a] = gp;
    a = gp;
  }
}

/** Returns true when this call linked two roots (the number of sets fell by one). */
template <typename I>
__device__ __forceinline__ bool
UniteGlobal(I * P, I a, I b)
{
  for (;;)
  {
    a = FindGlobal(P, a);
    b = FindGlobal(P, b);
    if (a == b)
      return false;
    if (a < b)
    {
      const I t = a;
      a = b;
      b = t;
    }
    const I old = atomicMin(P + a, b);
    if (old == a)
      return true;
    a = old;
  }
}

template <class Op, bool Full, typename I>
__global__ void __launch_bounds__(kLocalThreads)
  LocalMergeKernel(Op op, I * parent, Shape s, unsigned long long * rootCount)
{
  using Class = typename Op::Class;
  __shared__ int      L[kMaxTileVoxels];
  __shared__ Class    C[kMaxTileVoxels];
  __shared__ unsigned blockRoots;

  const int      lane = threadIdx.x & 31;
  const int      warp = threadIdx.x >> 5;
  const int      ty = s.ty;
  const int      rows = s.ty * s.tz;
  const int      rowStride = kTileX;
  const int      sliceStride = kTileX * ty;
  const uint64_t tile = blockIdx.x;
  const uint64_t bx = tile % s.tilesX;
  const uint64_t byz = tile / s.tilesX;
  const uint64_t by = byz % s.tilesY;
  const uint64_t bz = byz / s.tilesY;
  const uint64_t x = bx * kTileX + lane;
  if (threadIdx.x == 0)
    blockRoots = 0;

  for (int row = warp; row < rows; row += kLocalWarps)
  {
    const uint64_t y = by * ty + row % ty;
    const uint64_t z = bz * s.tz + row / ty;
    const bool     inside = x < s.nx && y < s.ny && z < s.nz;
    C[row * kTileX + lane] = inside ? op.Load((z * s.ny + y) * s.nx + x) : Op::Outside();
  }
  __syncthreads();

  // Coarse labeling: every voxel points to the first voxel of its run in the row.
  for (int row = warp; row < rows; row += kLocalWarps)
  {
    const int      t = row * kTileX + lane;
    const bool     link = lane > 0 && Op::Connected(C[t], C[t - 1]);
    const unsigned starts = __ballot_sync(0xffffffffu, !link);
    const unsigned upToLane = starts & (0xffffffffu >> (31 - lane));
    L[t] = row * kTileX + (31 - __clz(upToLane));
  }
  __syncthreads();

  // Local union-find over the backward neighbours not already joined by the runs.
  for (int row = warp; row < rows; row += kLocalWarps)
  {
    const int   t = row * kTileX + lane;
    const Class c = C[t];
    if (!Op::Active(c))
      continue;
    const int  ly = row % ty;
    const int  lz = row / ty;
    const bool linkT = lane > 0 && Op::Connected(c, C[t - 1]);
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
          const int qx = lane + dx;
          const int qy = ly + dy;
          const int qz = lz + dz;
          if (qx < 0 || qx >= kTileX || qy < 0 || qy >= ty || qz < 0)
            continue; // across the tile: the boundary kernel
          const int u = t + dx + dy * rowStride + dz * sliceStride;
          if (!Op::Connected(c, C[u]))
            continue;
          // (t, u) follows from (t-1, u-1), which the left neighbour handles with the same offset.
          if (linkT && qx >= 1 && Op::Connected(C[u], C[u - 1]))
            continue;
          if (Full && (dx != 0 || (dz < 0 && dy != 0)))
          {
            // u is a neighbour, in its own row (dz = 0) or plane (dz = -1), of the voxel straight behind t; when
            // that voxel is connected to t, the pair is joined through it (an earlier pair in the tile).
            const int straight = dz < 0 ? t - sliceStride : t - rowStride;
            if (Op::Connected(c, C[straight]))
              continue;
          }
          UniteShared(L, t, u);
        }
      }
    }
  }
  __syncthreads();

  unsigned myRoots = 0;
  for (int row = warp; row < rows; row += kLocalWarps)
  {
    const int      t = row * kTileX + lane;
    const uint64_t y = by * ty + row % ty;
    const uint64_t z = bz * s.tz + row / ty;
    if (!(x < s.nx && y < s.ny && z < s.nz))
      continue;
    const uint64_t g = (z * s.ny + y) * s.nx + x;
    if (!Op::Active(C[t]))
    {
      parent[g] = Sentinel<I>();
      continue;
    }
    const int      r = FindShared(L, t);
    const int      rrow = r / kTileX;
    const uint64_t rx = bx * kTileX + (r % kTileX);
    const uint64_t ry = by * ty + rrow % ty;
    const uint64_t rz = bz * s.tz + rrow / ty;
    parent[g] = static_cast<I>((rz * s.ny + ry) * s.nx + rx);
    myRoots += (r == t);
  }
  if (myRoots)
    atomicAdd(&blockRoots, myRoots);
  __syncthreads();
  if (threadIdx.x == 0 && blockRoots)
    atomicAdd(rootCount, static_cast<unsigned long long>(blockRoots));
}

/** The k-th voxel on a low tile face (x = 32i, y = TY*j or z = TZ*l, i, j, l >= 1): faces along x first, then y,
 * then z. Returns the axis of the face. */
__device__ __forceinline__ int
FaceVoxel(uint64_t         k,
          const Shape &    s,
          uint64_t         facesX,
          uint64_t         facesY,
          uint64_t         cx,
          uint64_t         cy,
          uint64_t &       x,
          uint64_t &       y,
          uint64_t &       z)
{
  if (k < cx)
  {
    const uint64_t r = k / facesX;
    x = (k % facesX + 1) * kTileX;
    y = r % s.ny;
    z = r / s.ny;
    return 0;
  }
  if (k < cx + cy)
  {
    const uint64_t kk = k - cx;
    const uint64_t r = kk / s.nx;
    x = kk % s.nx;
    y = (r % facesY + 1) * s.ty;
    z = r / facesY;
    return 1;
  }
  const uint64_t kk = k - cx - cy;
  const uint64_t r = kk / s.nx;
  x = kk % s.nx;
  y = r % s.ny;
  z = (r / s.ny + 1) * s.tz;
  return 2;
}

/** Points v, and the root its local merge gave it, straight at the final root of its set. */
template <typename I>
__device__ __forceinline__ void
CompressVoxel(I * P, I v)
{
  const I first = P[v];
  if (first == Sentinel<I>() || first == v)
    return;
  I r = first;
  for (I pr = P[r]; pr != r; pr = P[r])
    r = pr;
  if (first != r)
  {
    P[first] = r;
    P[v] = r;
  }
}

/** After the boundary merge, every local root that was linked belongs to a local component with a voxel on one
 * side of a tile face (a union endpoint). Compressing those voxels and their local roots leaves every voxel at
 * most two steps from its root for the final pass. */
template <typename I>
__global__ void __launch_bounds__(kBoundaryThreads)
  CompressKernel(I * parent, Shape s, uint64_t facesX, uint64_t facesY, uint64_t facesZ)
{
  const uint64_t cx = facesX * s.ny * s.nz;
  const uint64_t cy = s.nx * facesY * s.nz;
  const uint64_t cz = s.nx * s.ny * facesZ;
  const uint64_t total = cx + cy + cz;
  for (uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += uint64_t(gridDim.x) * blockDim.x)
  {
    uint64_t  x, y, z;
    const int axis = FaceVoxel(k, s, facesX, facesY, cx, cy, x, y, z);
    const uint64_t p = (z * s.ny + y) * s.nx + x;
    const uint64_t step = axis == 0 ? 1 : axis == 1 ? s.nx : s.nx * s.ny;
    CompressVoxel<I>(parent, static_cast<I>(p));
    CompressVoxel<I>(parent, static_cast<I>(p - step));
  }
}

template <class Op, bool Full, typename I>
__global__ void __launch_bounds__(kBoundaryThreads) BoundaryMergeKernel(Op                   op,
                                                                        I *                  parent,
                                                                        Shape                s,
                                                                        uint64_t             facesX,
                                                                        uint64_t             facesY,
                                                                        uint64_t             facesZ,
                                                                        unsigned long long * rootCount)
{
  __shared__ unsigned blockLinks;
  if (threadIdx.x == 0)
    blockLinks = 0;
  __syncthreads();

  const uint64_t cx = facesX * s.ny * s.nz;
  const uint64_t cy = s.nx * facesY * s.nz;
  const uint64_t cz = s.nx * s.ny * facesZ;
  const uint64_t total = cx + cy + cz;
  const uint64_t sy = s.nx;
  unsigned       links = 0;

  for (uint64_t k = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += uint64_t(gridDim.x) * blockDim.x)
  {
    uint64_t x, y, z;
    const int axis = FaceVoxel(k, s, facesX, facesY, cx, cy, x, y, z);
    const uint64_t p = (z * s.ny + y) * s.nx + x;
    const auto     cp = op.Load(p);
    if (!Op::Active(cp))
      continue;
    // The skip rule walks along j (y on x faces, x on the others); it may lean only on pairs inside a tile.
    const uint64_t pj = axis == 0 ? y : x;
    const uint64_t tj = axis == 0 ? uint64_t(s.ty) : uint64_t(kTileX);
    const uint64_t stj = axis == 0 ? sy : 1;
    const bool     linkP = (pj % tj) != 0 && Op::Connected(cp, op.Load(p - stj));
    // The voxel straight across the face, (sx, sy_, sz_).
    const uint64_t sx = x - (axis == 0), sy_ = y - (axis == 1), sz_ = z - (axis == 2);
    const uint64_t straight = (sz_ * s.ny + sy_) * s.nx + sx;
    const bool     linkStraight = Full && Op::Connected(cp, op.Load(straight));
    const int      lo0 = (Full && axis != 0) ? -1 : 0, hi0 = (Full && axis != 0) ? 1 : 0;
    const int      lo1 = (Full && axis != 1) ? -1 : 0, hi1 = (Full && axis != 1) ? 1 : 0;
    const int      lo2 = (Full && axis != 2) ? -1 : 0, hi2 = (Full && axis != 2) ? 1 : 0;
    for (int dz = (axis == 2 ? -1 : lo2); dz <= (axis == 2 ? -1 : hi2); ++dz)
    {
      for (int dy = (axis == 1 ? -1 : lo1); dy <= (axis == 1 ? -1 : hi1); ++dy)
      {
        for (int dx = (axis == 0 ? -1 : lo0); dx <= (axis == 0 ? -1 : hi0); ++dx)
        {
          const int64_t qx = int64_t(x) + dx, qy = int64_t(y) + dy, qz = int64_t(z) + dz;
          if (qx < 0 || qy < 0 || qz < 0 || qx >= int64_t(s.nx) || qy >= int64_t(s.ny) || qz >= int64_t(s.nz))
            continue;
          const uint64_t q = (uint64_t(qz) * s.ny + uint64_t(qy)) * s.nx + uint64_t(qx);
          const auto     cq = op.Load(q);
          if (!Op::Connected(cp, cq))
            continue;
          const uint64_t qj = axis == 0 ? uint64_t(qy) : uint64_t(qx);
          if (linkP && (qj % tj) != 0 && Op::Connected(cq, op.Load(q - stj)))
            continue; // follows from the same offset one step back along j
          if (Full && linkStraight && q != straight)
          {
            // q neighbours the voxel straight across the face, in that voxel's plane; inside one tile that pair
            // is joined by the local merge, so (p, q) follows from (p, straight).
            const bool sameTile = (qx / kTileX == int64_t(sx / kTileX)) && (qy / s.ty == int64_t(sy_ / s.ty)) &&
                                  (qz / s.tz == int64_t(sz_ / s.tz));
            if (sameTile)
              continue;
          }
          links += UniteGlobal<I>(parent, static_cast<I>(p), static_cast<I>(q));
        }
      }
    }
  }
  if (links)
    atomicAdd(&blockLinks, links);
  __syncthreads();
  if (threadIdx.x == 0 && blockLinks)
    atomicAdd(rootCount, ~static_cast<unsigned long long>(blockLinks) + 1ull); // subtract
}

template <typename I>
struct IsRoot
{
  const I * parent;
  __host__ __device__ I
  operator()(I i) const
  {
    return parent[i] == i ? I(1) : I(0);
  }
};

/** Rank (1-based, from the scan) to the object label, ITK's rule: count up from 0 and skip the background. */
template <typename TLabel, typename I>
struct RankToLabel
{
  long long background;
  __host__ __device__ TLabel
  operator()(I rank) const
  {
    const unsigned long long k = static_cast<unsigned long long>(rank) - 1ull;
    const bool skip = background >= 0 && k >= static_cast<unsigned long long>(background);
    return static_cast<TLabel>(skip ? k + 1 : k);
  }
};

struct StatisticsPointers
{
  unsigned long long * count = nullptr;
  unsigned *           minimum = nullptr;
  unsigned *           maximum = nullptr;
};

__device__ __forceinline__ void
AtomicMinIfSmaller(unsigned * a, unsigned v)
{
  if (v < *static_cast<volatile unsigned *>(a))
    atomicMin(a, v);
}
__device__ __forceinline__ void
AtomicMaxIfLarger(unsigned * a, unsigned v)
{
  if (v > *static_cast<volatile unsigned *>(a))
    atomicMax(a, v);
}

template <typename I, typename TLabel, bool Stats>
__global__ void __launch_bounds__(kFinalizeThreads) FinalizeKernel(const I *          parent,
                                                                   TLabel *           labels,
                                                                   uint64_t           n,
                                                                   uint64_t           nx,
                                                                   uint64_t           ny,
                                                                   long long          background,
                                                                   StatisticsPointers stats)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  // The loop bound is uniform per block so that whole warps take part in the statistics' warp primitives.
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x; base < n; base += stride)
  {
    const uint64_t i = base + threadIdx.x;
    const bool     valid = i < n;
    const I        p = valid ? parent[i] : Sentinel<I>();
    const bool     foreground = p != Sentinel<I>();
    TLabel         label = static_cast<TLabel>(background);
    if (foreground)
    {
      I r = p;
      I pr = parent[r];
      while (pr != r)
      {
        r = pr;
        pr = parent[r];
      }
      label = labels[r]; // the scan left each root its own label; roots rewrite the same value
    }
    if (valid)
      labels[i] = label;
    if (Stats)
    {
      const unsigned long long lab = static_cast<unsigned long long>(label);
      const unsigned long long k =
        (background >= 0 && lab > static_cast<unsigned long long>(background)) ? lab - 1 : lab;
      const unsigned long long key = foreground ? k : ~0ull;
      const unsigned           peers = __match_any_sync(0xffffffffu, key);
      const unsigned           lane = threadIdx.x & 31;
      if (foreground)
      {
        const unsigned x = static_cast<unsigned>(i % nx);
        const unsigned y = static_cast<unsigned>((i / nx) % ny);
        const unsigned z = static_cast<unsigned>(i / (nx * ny));
        if ((__ffs(peers) - 1) == int(lane))
          atomicAdd(stats.count + k, static_cast<unsigned long long>(__popc(peers)));
        // Only the ends of a run of the same label in one row touch the bounding box.
        const bool first = lane == 0 || !((peers >> (lane - 1)) & 1u) || x == 0;
        const bool last = lane == 31 || !((peers >> (lane + 1)) & 1u) || x + 1 == nx;
        if (first)
        {
          AtomicMinIfSmaller(stats.minimum + 3 * k + 0, x);
          AtomicMinIfSmaller(stats.minimum + 3 * k + 1, y);
          AtomicMinIfSmaller(stats.minimum + 3 * k + 2, z);
          AtomicMaxIfLarger(stats.maximum + 3 * k + 1, y);
          AtomicMaxIfLarger(stats.maximum + 3 * k + 2, z);
        }
        if (last)
          AtomicMaxIfLarger(stats.maximum + 3 * k + 0, x);
      }
    }
  }
}

/** Tile rows and slices: 32 x 32 in 2D, 32 x 8 x 8 in 3D. CHS_CCL_TILE ("TYxTZ", at most 2048 voxels a tile)
 * overrides them, for tuning on new hardware. */
inline void
TileShape(bool planar, int & ty, int & tz)
{
  ty = planar ? 32 : 8;
  tz = planar ? 1 : 8;
  if (const char * e = std::getenv("CHS_CCL_TILE"))
  {
    int a = 0, b = 0;
    if (std::sscanf(e, "%dx%d", &a, &b) == 2 && a > 0 && b > 0 && kTileX * a * b <= kMaxTileVoxels)
    {
      ty = a;
      tz = planar ? 1 : b;
    }
  }
}

template <class Op, bool Full, typename I>
void
LaunchMerge(const Op & op, I * parent, const Shape & s, unsigned long long * rootCount, cudaStream_t stream, int device)
{
  const uint64_t tiles = s.tilesX * s.tilesY * s.tilesZ;
  if (tiles > 0x7fffffffull)
    throw std::invalid_argument("chs: image too large for the tile grid");
  LocalMergeKernel<Op, Full, I><<<static_cast<unsigned>(tiles), kLocalThreads, 0, stream>>>(op, parent, s, rootCount);
  CHS_CUDA_CHECK_LAUNCH("LocalMergeKernel");
  const uint64_t facesX = (s.nx - 1) / kTileX;
  const uint64_t facesY = (s.ny - 1) / s.ty;
  const uint64_t facesZ = (s.nz - 1) / s.tz;
  const uint64_t total = facesX * s.ny * s.nz + s.nx * facesY * s.nz + s.nx * s.ny * facesZ;
  if (total == 0)
    return;
  const unsigned blocks = detail::GridStrideBlocks(total, kBoundaryThreads, device);
  BoundaryMergeKernel<Op, Full, I>
    <<<blocks, kBoundaryThreads, 0, stream>>>(op, parent, s, facesX, facesY, facesZ, rootCount);
  CHS_CUDA_CHECK_LAUNCH("BoundaryMergeKernel");
  CompressKernel<I><<<blocks, kBoundaryThreads, 0, stream>>>(parent, s, facesX, facesY, facesZ);
  CHS_CUDA_CHECK_LAUNCH("CompressKernel");
}

template <typename TPixel, typename TLabel, typename I>
uint64_t
Run(const TPixel *                       input,
    const uint8_t *                      mask,
    TLabel *                             labels,
    const Grid &                         grid,
    const ConnectedComponentParameters & parameters,
    ConnectedComponentStatistics *       statistics,
    const ExecutionContext &             context,
    RunInfo *                            info)
{
  using detail::DeviceBuffer;
  const uint64_t       n = grid.NumberOfVoxels();
  const cudaStream_t   stream = static_cast<cudaStream_t>(context.stream);
  const int            device = context.device;
  detail::MemoryTracker tracker;
  auto                 progress = [&](float f) {
    if (context.progress)
      context.progress(f);
  };

  DeviceBuffer<TPixel> dInput(n, stream, &tracker);
  DeviceBuffer<uint8_t> dMask(mask ? n : 0, stream, &tracker);
  DeviceBuffer<I>       dParent(n, stream, &tracker);
  DeviceBuffer<TLabel>  dLabels(n, stream, &tracker);
  DeviceBuffer<unsigned long long> dCount(1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemcpyAsync(dInput.get(), input, n * sizeof(TPixel), cudaMemcpyHostToDevice, stream));
  if (mask)
    CHS_CUDA_CHECK(cudaMemcpyAsync(dMask.get(), mask, n, cudaMemcpyHostToDevice, stream));
  CHS_CUDA_CHECK(cudaMemsetAsync(dCount.get(), 0, sizeof(unsigned long long), stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.25f);

  detail::EventTimer timer(stream);
  timer.Start();
  Shape s{};
  s.nx = grid.size[0];
  s.ny = grid.size[1];
  s.nz = grid.size[2];
  TileShape(s.nz == 1, s.ty, s.tz);
  s.tilesX = (s.nx + kTileX - 1) / kTileX;
  s.tilesY = (s.ny + s.ty - 1) / s.ty;
  s.tilesZ = (s.nz + s.tz - 1) / s.tz;
  const uint8_t * dm = mask ? dMask.get() : nullptr;
  if (parameters.mode == ConnectedComponentMode::Binary)
  {
    const BinaryOp<TPixel> op{ dInput.get(), dm };
    if (parameters.fullyConnected)
      LaunchMerge<BinaryOp<TPixel>, true, I>(op, dParent.get(), s, dCount.get(), stream, device);
    else
      LaunchMerge<BinaryOp<TPixel>, false, I>(op, dParent.get(), s, dCount.get(), stream, device);
  }
  else
  {
    const FlatOp<TPixel> op{ dInput.get(), dm };
    if (parameters.fullyConnected)
      LaunchMerge<FlatOp<TPixel>, true, I>(op, dParent.get(), s, dCount.get(), stream, device);
    else
      LaunchMerge<FlatOp<TPixel>, false, I>(op, dParent.get(), s, dCount.get(), stream, device);
  }
  unsigned long long count = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(&count, dCount.get(), sizeof(count), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (count > parameters.maximumLabel)
    throw LabelOverflowError(count, parameters.maximumLabel);

  auto rootFlags = thrust::make_transform_iterator(thrust::make_counting_iterator<I>(0), IsRoot<I>{ dParent.get() });
  auto rankLabels =
    thrust::make_transform_output_iterator(dLabels.get(), RankToLabel<TLabel, I>{ parameters.backgroundLabel });
  size_t tempBytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, tempBytes, rootFlags, rankLabels, n, stream));
  {
    DeviceBuffer<uint8_t> temp(tempBytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.get(), tempBytes, rootFlags, rankLabels, n, stream));
  }

  const bool                            wantStats = parameters.computeStatistics && statistics != nullptr;
  DeviceBuffer<unsigned long long>      dVoxels(wantStats ? count : 0, stream, &tracker);
  DeviceBuffer<unsigned>                dMin(wantStats ? 3 * count : 0, stream, &tracker);
  DeviceBuffer<unsigned>                dMax(wantStats ? 3 * count : 0, stream, &tracker);
  StatisticsPointers                    sp;
  const unsigned blocks = detail::GridStrideBlocks(n, kFinalizeThreads, device);
  if (wantStats)
  {
    CHS_CUDA_CHECK(cudaMemsetAsync(dVoxels.get(), 0, count * sizeof(unsigned long long), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(dMin.get(), 0xff, 3 * count * sizeof(unsigned), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(dMax.get(), 0, 3 * count * sizeof(unsigned), stream));
    sp = StatisticsPointers{ dVoxels.get(), dMin.get(), dMax.get() };
    FinalizeKernel<I, TLabel, true><<<blocks, kFinalizeThreads, 0, stream>>>(
      dParent.get(), dLabels.get(), n, s.nx, s.ny, parameters.backgroundLabel, sp);
  }
  else
  {
    FinalizeKernel<I, TLabel, false><<<blocks, kFinalizeThreads, 0, stream>>>(
      dParent.get(), dLabels.get(), n, s.nx, s.ny, parameters.backgroundLabel, sp);
  }
  CHS_CUDA_CHECK_LAUNCH("FinalizeKernel");
  timer.Stop();
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.75f);

  if (wantStats)
  {
    statistics->voxelCount.resize(count);
    statistics->minimum.resize(3 * count);
    statistics->maximum.resize(3 * count);
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics->voxelCount.data(), dVoxels.get(), count * sizeof(uint64_t),
                                   cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics->minimum.data(), dMin.get(), 3 * count * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics->maximum.data(), dMax.get(), 3 * count * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
  }
  CHS_CUDA_CHECK(cudaMemcpyAsync(labels, dLabels.get(), n * sizeof(TLabel), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(1.0f);
  if (info)
  {
    info->kernelMilliseconds = timer.Milliseconds();
    info->peakDeviceBytes = tracker.peak;
  }
  return count;
}

} // namespace cc

template <typename TPixel, typename TLabel>
uint64_t
LabelConnectedComponentsCUDA(const TPixel *                       input,
                             const uint8_t *                      mask,
                             TLabel *                             labels,
                             const Grid &                         grid,
                             const ConnectedComponentParameters & parameters,
                             ConnectedComponentStatistics *       statistics,
                             const ExecutionContext &             context,
                             RunInfo *                            info)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the image has no voxels");
  if (grid.size[0] > 0xffffffffull || grid.size[1] > 0xffffffffull || grid.size[2] > 0xffffffffull)
    throw std::invalid_argument("chs: an image dimension exceeds 2^32 - 1 voxels");
  detail::DeviceScope scope(context.device);
  if (n < 0xffffffffull && !parameters.forceWideIndex)
    return cc::Run<TPixel, TLabel, uint32_t>(input, mask, labels, grid, parameters, statistics, context, info);
  return cc::Run<TPixel, TLabel, unsigned long long>(input, mask, labels, grid, parameters, statistics, context,
                                                       info);
}

} // namespace chs

#define CHS_INSTANTIATE_CC_CUDA(TPixel, TLabel)                                                                     \
  template CudaHierarchicalSegmentation_EXPORT uint64_t chs::LabelConnectedComponentsCUDA<TPixel, TLabel>(        \
    const TPixel *, const uint8_t *, TLabel *, const chs::Grid &, const chs::ConnectedComponentParameters &,       \
    chs::ConnectedComponentStatistics *, const chs::ExecutionContext &, chs::RunInfo *)

#endif
