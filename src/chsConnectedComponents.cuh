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
//     local union-find). Writes the global index of each voxel's local root and counts the local roots per chunk
//     of 4096 voxels in raster order.
//  2. BoundaryMergeKernel (one launch for all axes): threads only for voxels on the low faces of tiles; each unites
//     with its neighbours in the tile behind that face. Every successful link removes one root from the counts.
//  3. An exclusive scan of the chunk counts (CUB) gives the total, read back and checked against the label type
//     before anything reaches the caller's memory; RootLabelKernel gives each root its rank, and the final link
//     (the paper's) gives every voxel its root's label: FinalizeKernel with per-label statistics, otherwise
//     FinalizeNarrowKernel, which writes the labels in the narrowest unsigned type that holds them (1, 2 or 4
//     bytes) for the download; the host widens them back (detail::CopyToHostWidened).
//  4. NarrowLabelsKernel: the same narrowing after FinalizeKernel (statistics) or FinalizeVectorKernel (more than
//     2^31 voxels with 32-bit indices), written over the parents.
// Binary images with rows of 32 voxels or more (RunNodes) take the same steps on the runs of the tile rows instead
// of the voxels (see kNodesPerRow): BinaryLocalMergeKernel, BinaryBoundaryKernel, NodeRootLabelKernel and
// NodeFinalizeKernel.
#ifndef chsConnectedComponents_cuh
#define chsConnectedComponents_cuh

#include "chsConnectedComponents.h"
#include "chsCudaCommon.cuh"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

namespace chs
{
namespace cc
{

constexpr int kTileX = 32; // one warp per tile row
constexpr int kLocalThreads = 256;
constexpr int kLocalWarps = kLocalThreads / 32;
constexpr int kMaxTileVoxels = 8192; // the binary local merge's 3D tile (32 KiB of shared parents)
constexpr int kBoundaryThreads = 256;
constexpr int kFinalizeThreads = 256;
constexpr int kRootLabelThreads = 256;

/** Image extent in the index type: 32-bit arithmetic (cheap divisions) below 2^32 voxels. */
template <typename I>
struct Extent
{
  I nx, ny, nz;
};

/** A tile is 32 x TY x TZ voxels, one warp per row; the shape is a compile-time constant so that every division by
 * it is a shift. 32 x 32 in 2D and 32 x 8 x 8 in 3D measured best on an H200 (of 32 x {16, 32, 64} and
 * 32 x {2, 4, 8, 16} x {4, 8, 16, 32}). */
template <int TY, int TZ>
struct Tile
{
  static constexpr int Y = TY;
  static constexpr int Z = TZ;
  static constexpr int Rows = TY * TZ;
  static constexpr int Voxels = kTileX * TY * TZ;
  static_assert(Voxels <= kMaxTileVoxels, "tile too large for the shared arrays");
};
using Tile2D = Tile<32, 1>;
using Tile3D = Tile<8, 8>;
/** The binary local merge keeps only an int and a bit a voxel in shared memory, so its 3D tiles can be larger,
 * which halves the voxels on y and z faces: 32 x 16 x 16 measured best on an H200 (of 32 x {8, 16, 32} x {8, 16};
 * 512^3 blobs: 3.43 -> 3.10 ms face, 9.28 -> 7.64 ms full). */
using BinaryTile3D = Tile<16, 16>;
/** And in 2D, 32 x 128: more rows a warp amortise its set-up and fill its queues (4096^2 blobs, H200: 0.245 ms face
 * and 0.263 ms full at 32 x 32; 0.224 / 0.239 at 32 x 64, 0.216 / 0.232 at 32 x 128, 0.215 / 0.235 at 32 x 256). */
using BinaryTile2D = Tile<128, 1>;

/** Roots are counted per chunk of 2^12 consecutive voxels in raster order: +1 for every local root, -1 for every
 * local root linked across a tile face. A scan of the counts numbers the roots and gives their total. Counts have
 * the index type: a 4.6e9-voxel checkerboard has more than 2^32 roots. */
constexpr int kChunkShift = 12;
constexpr int kChunk = 1 << kChunkShift;

template <typename I>
__host__ __device__ constexpr I
Sentinel()
{
  return ~I(0);
}

/** Labels written in place over the parents carry the top bit, so that a root's label is told from a voxel index
 * (indices stay below 2^31, or 2^63, on that path). The sentinel has the bit too but is never a label. */
template <typename I>
__host__ __device__ constexpr I
TagBit()
{
  return I(1) << (8 * sizeof(I) - 1);
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

template <class Op>
struct IsBinaryOp : std::false_type
{};
template <typename T>
struct IsBinaryOp<BinaryOp<T>> : std::true_type
{
  using Pixel = T;
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

/** Where element a of a union-find lives in its parents array: at a (the voxels' and the tiles' union-finds), or
 * elsewhere (SlotMap, the runs' union-find). */
struct Direct
{
  template <typename T>
  __device__ __forceinline__ T
  operator()(T a) const
  {
    return a;
  }
};

/** Find with path halving, on the tile's parents in shared memory (T = int) or the image's in global memory
 * (T = the index type). Reads are volatile: other threads, in global memory other blocks, link roots meanwhile.
 * The halving store is an atomicMin (a fire-and-forget reduction): parents only ever decrease, so a concurrent
 * link is never undone. */
template <typename T, class Map = Direct>
__device__ __forceinline__ T
FindRoot(T * P, T a, Map at = {})
{
  const volatile T * V = P;
  for (;;)
  {
    const T p = V[at(a)];
    if (p == a)
      return a;
    const T gp = V[at(p)];
    if (gp == p)
      return p;
    atomicMin(P + at(a), gp);
    a = gp;
  }
}

/** Links the larger root of a's and b's sets under the smaller. Returns true when this call linked two roots (the
 * number of sets fell by one). */
template <typename T, class Map = Direct>
__device__ __forceinline__ bool
Unite(T * P, T a, T b, T * linked = nullptr, Map at = {})
{
  for (;;)
  {
    a = FindRoot(P, a, at);
    b = FindRoot(P, b, at);
    if (a == b)
      return false;
    if (a < b)
    {
      const T t = a;
      a = b;
      b = t;
    }
    const T old = atomicMin(P + at(a), b);
    if (old == a)
    {
      if (linked)
        *linked = a;
      return true;
    }
    a = old; // a was linked meanwhile: unite its new root instead
  }
}

/** A local-merge thread's lane and warp, its column x and its tile's first row y0 and slice z0. */
template <typename I, class TileT>
struct TileThread
{
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  I   x = I(blockIdx.x) * kTileX + lane;
  I   y0 = I(blockIdx.y) * TileT::Y;
  I   z0 = I(blockIdx.z) * TileT::Z;
};

/** Last step of the general local merge, for one tile row: the first voxel of each run (lane `start`) finds its
 * root in the tile, counts it when it is a root, and the warp hands the root's global index to the rest of the
 * run; inactive voxels get the sentinel. (The binary local merge queues its run starts' lookups instead.) */
template <typename I, class TileT>
__device__ __forceinline__ void
StoreLocalRoots(int * L, I * parent, const Extent<I> & e, I * chunkRoots, int row, int lane, int start, bool active,
                I x, I y0, I z0)
{
  constexpr int TY = TileT::Y;
  const I       y = y0 + row % TY;
  const I       z = z0 + row / TY;
  I             root = Sentinel<I>();
  if (active && lane == start)
  {
    const int t = row * kTileX + lane;
    const int r = FindRoot(L, t);
    const int rrow = r / kTileX;
    root = ((z0 + rrow / TY) * e.ny + (y0 + rrow % TY)) * e.nx + (x - lane + (r % kTileX));
    if (r == t)
      atomicAdd(chunkRoots + (root >> kChunkShift), I(1));
  }
  root = __shfl_sync(0xffffffffu, root, start);
  if (x < e.nx && y < e.ny && z < e.nz)
    parent[(z * e.ny + y) * e.nx + x] = root;
}

template <class Op, bool Full, typename I, class TileT>
__global__ void __launch_bounds__(kLocalThreads)
  LocalMergeKernel(Op op, I * parent, Extent<I> e, I * chunkRoots)
{
  using Class = typename Op::Class;
  constexpr int TY = TileT::Y;
  constexpr int rowStride = kTileX;
  constexpr int sliceStride = kTileX * TY;
  __shared__ int      L[TileT::Voxels];
  __shared__ Class    C[TileT::Voxels];

  const auto [lane, warp, x, y0, z0] = TileThread<I, TileT>();

  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const I    y = y0 + row % TY;
    const I    z = z0 + row / TY;
    const bool inside = x < e.nx && y < e.ny && z < e.nz;
    C[row * kTileX + lane] = inside ? op.Load((z * e.ny + y) * e.nx + x) : Op::Outside();
  }
  __syncthreads();

  // Coarse labeling: every voxel points to the first voxel of its run in the row.
  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const int      t = row * kTileX + lane;
    const bool     link = lane > 0 && Op::Connected(C[t], C[t - 1]);
    const unsigned starts = __ballot_sync(0xffffffffu, !link);
    const unsigned upToLane = starts & (0xffffffffu >> (31 - lane));
    L[t] = row * kTileX + (31 - __clz(upToLane));
  }
  __syncthreads();

  // Local union-find over the backward neighbours not already joined by the runs.
  for (int row = warp; row < TileT::Rows; row += kLocalWarps)
  {
    const int   t = row * kTileX + lane;
    const Class c = C[t];
    if (!Op::Active(c))
      continue;
    const int  ly = row % TY;
    const int  lz = row / TY;
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
    const int      t = row * kTileX + lane;
    const Class    c = C[t];
    const bool     link = lane > 0 && Op::Connected(c, C[t - 1]);
    const unsigned starts = __ballot_sync(0xffffffffu, !link);
    const int      start = 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
    StoreLocalRoots<I, TileT>(L, parent, e, chunkRoots, row, lane, start, Op::Active(c), x, y0, z0);
  }
}

/** Start lane of the run that holds `lane` in a row whose run starts are the bits of `starts`. */
__device__ __forceinline__ int
RunStart(unsigned starts, int lane)
{
  return 31 - __clz(starts & (0xffffffffu >> (31 - lane)));
}

/** The pairs of adjacent runs between a row (foreground bits `m`) and another row (bits `n`) of the 32 columns, one
 * union each: bit b of `a` pairs the run of m that starts at b with the run of n that holds b, or b - 1 when b is
 * background in n (RunPartner); bit b of `c` pairs the run of m that holds b with the run of n that starts at
 * b + 1. Face connectivity: a run pair overlaps on one segment of m & n, found at its first bit (c = 0). Full
 * connectivity: a run of m meets the run of n that holds its first bit or the bit before, and every run of n that
 * starts one bit after a foreground bit of m with a background bit of n under it. */
template <bool Full>
__device__ __forceinline__ void
RunPairs(unsigned m, unsigned n, unsigned & a, unsigned & c)
{
  if (!Full)
  {
    const unsigned overlap = m & n;
    a = overlap & ~(overlap << 1);
    c = 0;
    return;
  }
  a = m & ~(m << 1) & (n | (n << 1));
  c = m & (n >> 1) & ~n;
}

/** The bit of n that bit b of RunPairs' `a` pairs with. */
__device__ __forceinline__ int
RunPartner(unsigned n, int b)
{
  return ((n >> b) & 1u) ? b : b - 1;
}

/** A warp's queue of work items in shared memory, run 32 at a time so that every lane has one: unions are wanted by
 * a few lanes of each row or face segment, and a warp running them where they arise would run mostly idle lanes.
 * Push is called by all lanes; the items of the lanes where `wanted` holds are appended, and whenever 32 are
 * queued each lane takes one and calls `work(item)`. Flush runs what is left (fewer than 32 lanes). */
template <typename T, class Work>
struct WarpQueue
{
  T *  items; // 64 items of this warp
  int  lane;
  int  queued; // the same in every lane
  Work work;

  __device__ __forceinline__ void
  Push(bool wanted, const T & item)
  {
    const unsigned want = __ballot_sync(0xffffffffu, wanted);
    if (wanted)
      items[queued + __popc(want & ((1u << lane) - 1u))] = item;
    queued += __popc(want);
    if (queued < 32)
      return;
    __syncwarp();
    const T mine = items[lane];
    T       next{};
    if (lane + 32 < queued)
      next = items[lane + 32];
    __syncwarp();
    if (lane + 32 < queued)
      items[lane] = next;
    queued -= 32;
    work(mine);
    __syncwarp();
  }
  __device__ __forceinline__ void
  Flush()
  {
    __syncwarp();
    if (lane < queued)
      work(items[lane]);
    queued = 0;
    __syncwarp();
  }
};

// ---- Binary images: the union-find on runs -------------------------------------------------------------------
// A binary image is labelled on the runs of its tile rows instead of its voxels. Tile row w (w = r * tilesX + i:
// image row r = z * ny + y, columns 32 i .. 32 i + 31) keeps its foreground as one 32-bit mask, masks[w], and its
// runs are the nodes w * 16 + k, k = 0 .. (number of runs) - 1 in x order (a 32-bit row has at most 16 runs). Node
// order is the raster order of the runs' first voxels, so the union-find invariant (parent <= node, a root is the
// smallest node of its set) again makes the root of a component its first run, and ranking the roots in node order
// numbers the components as ITK does. The parents take 16 slots a tile row (2 bytes a voxel with 32-bit nodes) and
// are read and written once a run, not once a voxel; the 4.6e9-voxel volume's nodes need 64 bits (more than 2^31),
// as its voxels would. The local merge writes a row's parents and then the sentinel, so readers stop there.
// Slots of runs 0-7 of all rows come first, then those of runs 8-15 (SlotMap): most rows have fewer than 8 runs,
// and their parents then fill whole sectors, written and fetched without the other half.
constexpr int kNodesPerRow = 16;
constexpr int kNodeShift = 4;
constexpr int kHalfRow = kNodesPerRow / 2;
static_assert(kNodesPerRow == 1 << kNodeShift, "node ids are w * 16 + k");
/** Roots of the runs' union-find are counted per chunk of 2^14 nodes (1024 tile rows): NodeRootLabelKernel takes
 * a chunk a block, four rows a thread. */
constexpr int kNodeChunkShift = 14;
constexpr int kNodeChunkRows = (1 << kNodeChunkShift) / kNodesPerRow;
constexpr int kNodeRootLabelThreads = 256;
constexpr int kNodeRounds = kNodeChunkRows / kNodeRootLabelThreads;

/** The slot of node w * 16 + k: w * 8 + k for k < 8, half + w * 8 + k - 8 for the others (half = 8 tile rows). */
template <typename I>
struct SlotMap
{
  I half;
  __device__ __forceinline__ I
  operator()(I node) const
  {
    return ((node >> 1) & ~I(kHalfRow - 1)) + (node & I(kHalfRow - 1)) + ((node & I(kHalfRow)) ? half : I(0));
  }
};

/** Ordinal of the run that holds bit b among the runs of mask m (bit b foreground). */
__device__ __forceinline__ int
RunOrdinal(unsigned m, int b)
{
  return __popc(m & ~(m << 1) & (0xffffffffu >> (31 - b))) - 1;
}


/** Stores 8 slots (one or two 32-byte sectors) at p, 32-byte aligned, as 16-byte vectors. */
template <typename I>
__device__ __forceinline__ void
StoreHalfRow(I * p, const I (&v)[kHalfRow])
{
  constexpr int kVectors = kHalfRow * sizeof(I) / 16;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
  {
    uint4 q;
    memcpy(&q, reinterpret_cast<const char *>(v) + 16 * k, 16);
    reinterpret_cast<uint4 *>(p)[k] = q;
  }
}

/** The local merge for binary images (ITK's definition, BinaryOp): every tile row is one 32-bit foreground mask,
 * the nodes of the tile's union-find are the runs of those rows (their first voxels, tile index t), and the unions
 * between two rows are found with bit operations, one per pair of adjacent runs (RunPairs).
 * Each warp loads its rows (row = warp + 8 j) one voxel a lane, and a ballot makes each row's mask, which lane j
 * keeps and writes to `masks`. Each lane then finds its row's unions and run starts with bit operations, and the
 * warp runs them from its queue, 32 at a time. Last, each lane writes its row's nodes' parents: the node of the
 * run's local root (the tile component's first run). */
template <typename TPixel, bool Full, typename I, typename V, class TileT>
__global__ void __launch_bounds__(kLocalThreads)
  BinaryLocalMergeKernel(BinaryOp<TPixel> op, I * slots, I half, unsigned * masks, Extent<I> e, I * chunkRoots)
{
  constexpr int TY = TileT::Y;
  constexpr int TZ = TileT::Z;
  constexpr int kRowsPerWarp = TileT::Rows / kLocalWarps;
  static_assert(kRowsPerWarp * kLocalWarps == TileT::Rows && kRowsPerWarp <= 32, "whole rows per warp");
  __shared__ __align__(16) int L[TileT::Voxels]; // initialised with 16-byte stores
  __shared__ unsigned          F[TileT::Rows];
  __shared__ int               Q[kLocalWarps][64];

  const int  lane = threadIdx.x & 31;
  const int  warp = threadIdx.x >> 5;
  const I    x0 = I(blockIdx.x) * kTileX;
  const I    y0 = I(blockIdx.y) * TY;
  const I    z0 = I(blockIdx.z) * TZ;
  const V    tileBase = (V(z0) * e.ny + y0) * e.nx + x0; // the tile's first voxel (V: the voxel index type)
  const V    plane = V(e.nx) * e.ny;
  const auto rowOffset = [&](int row) { return V(row / TY) * plane + V(row % TY) * e.nx; };
  const auto rowInside = [&](int row) { return y0 + I(row % TY) < e.ny && z0 + I(row / TY) < e.nz; };
  const auto imageRow = [&](int row) { return I(z0 + row / TY) * e.ny + (y0 + row % TY); };
  const auto wordOf = [&](int row) { return imageRow(row) * I(gridDim.x) + blockIdx.x; };
  const auto nodeOf = [&](int t) { // the node of the run that starts at tile index t
    const int row = t / kTileX;
    return (wordOf(row) << kNodeShift) + I(RunOrdinal(F[row], t % kTileX));
  };

  // Every load of the warp's rows is issued before the first is used (bit j: row warp + 8 j).
  const bool xInside = x0 + lane < e.nx;
  unsigned   fgBits = 0, insideRows = 0;
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j)
  {
    const int  row = warp + j * kLocalWarps;
    const bool inside = rowInside(row);
    insideRows |= unsigned(inside) << j;
    fgBits |= unsigned(inside && xInside && op.Load(tileBase + rowOffset(row) + lane)) << j;
  }
  for (int k = threadIdx.x; k < TileT::Voxels / 4; k += kLocalThreads)
    reinterpret_cast<int4 *>(L)[k] = make_int4(4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3);
  unsigned myMask = 0; // lane j: the mask of row warp + 8 j
#pragma unroll
  for (int j = 0; j < kRowsPerWarp; ++j)
  {
    const unsigned m = __ballot_sync(0xffffffffu, (fgBits >> j) & 1u);
    myMask = lane == j ? m : myMask;
  }
  const bool hasRow = lane < kRowsPerWarp;
  const bool myRowInside = hasRow && ((insideRows >> lane) & 1u);
  const int  myRow = warp + lane * kLocalWarps;
  const int  my0 = myRow * kTileX; // tile index of the row's first voxel
  if (hasRow)
    F[myRow] = myMask;
  if (myRowInside) // after the ballots: every lane has read its pixels
    masks[wordOf(myRow)] = myMask;
  __syncthreads();

  // Unions between the runs of this lane's row and the rows behind it in the tile, found one row a lane and run
  // from the warp's queue, 32 at a time (a | b << 16: tile indices): a lane's own unions would leave the lanes with
  // fewer idle (full connectivity, 512^3 blobs: 1.86 ms against 1.71 with a warp a row).
  const unsigned myStarts = myMask & ~(myMask << 1);
  int *          queue = Q[warp];
  {
    auto unite = [&](int item) { Unite(L, item & 0xffff, item >> 16); };
    WarpQueue<int, decltype(unite)> unions{ queue, lane, 0, unite };
    const int  ly = myRow % TY;
    const int  lz = myRow / TY;
    const auto uniteWith = [&](bool behind, int nrow) { // warp-uniform
      const unsigned n = behind ? F[nrow] : 0u;
      const unsigned nStarts = n & ~(n << 1);
      const int      n0 = nrow * kTileX;
      unsigned       a, c;
      RunPairs<Full>(myMask, n, a, c);
      while (__any_sync(0xffffffffu, (a | c) != 0))
      {
        const bool     fromA = a != 0;
        const unsigned bits = fromA ? a : c;
        const int      b = __ffs(bits) - 1;
        const int      q = fromA ? n0 + RunStart(nStarts, RunPartner(n, b)) : n0 + b + 1;
        unions.Push(bits != 0, (my0 + RunStart(myStarts, b)) | (q << 16));
        if (fromA)
          a &= a - 1;
        else
          c &= c - 1;
      }
    };
    uniteWith(hasRow && ly > 0, myRow - 1);
    if (TZ > 1)
    {
      uniteWith(hasRow && lz > 0, myRow - TY);
      if (Full)
      {
        uniteWith(hasRow && lz > 0 && ly > 0, myRow - TY - 1);
        uniteWith(hasRow && lz > 0 && ly + 1 < TY, myRow - TY + 1);
      }
    }
    unions.Flush();
  }
  __syncthreads();

  // Every run start finds its root (queued, 32 at a time) and keeps it as its parent; a root counts itself.
  {
    auto resolve = [&](int t) {
      const int r = FindRoot(L, t);
      atomicMin(L + t, r); // other warps' finds only ever lower a parent to an ancestor
      if (r == t)
        atomicAdd(chunkRoots + (nodeOf(t) >> kNodeChunkShift), I(1));
    };
    WarpQueue<int, decltype(resolve)> roots{ queue, lane, 0, resolve };
    for (unsigned s = hasRow ? myStarts : 0u; __any_sync(0xffffffffu, s != 0); s &= s - 1)
      roots.Push(s != 0, my0 + __ffs(s) - 1);
    roots.Flush();
  }
  __syncthreads(); // every run start holds its root

  // Each lane writes its row's nodes' parents, their roots' nodes, and the sentinel after the last: 8 slots at a
  // time (whole sectors), the second 8 only for rows of 8 runs or more.
  if (myRowInside)
  {
    const I  w = wordOf(myRow);
    unsigned s = myStarts;
    for (int h = 0; h < 2; ++h)
    {
      I v[kHalfRow];
#pragma unroll
      for (int k = 0; k < kHalfRow; ++k)
      {
        v[k] = s != 0 ? nodeOf(L[my0 + __ffs(s) - 1]) : Sentinel<I>();
        s &= s - 1;
      }
      StoreHalfRow(slots + (h ? half : I(0)) + w * kHalfRow, v);
      if (__popc(myStarts) < kHalfRow)
        break;
    }
  }
}
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
  const uint3 blockIdx = b.block;
  const dim3  gridDim = b.grid;
  const I     lane = threadIdx.x & 31;
  const I     warpStart = I(blockIdx.x) * blockDim.x + threadIdx.x - lane;
  const I     xStride = I(gridDim.x) * blockDim.x;
  if (Axis == 0)
  {
    // Threads run over the rows (y, z); blockIdx.y over the faces.
    const I rows = e.ny * e.nz;
    for (I face = I(blockIdx.y) + 1; face * kTileX < e.nx; face += gridDim.y)
      for (I row0 = warpStart; row0 < rows; row0 += xStride)
      {
        const bool valid = row0 + lane < rows;
        const I    row = valid ? row0 + lane : row0;
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
BoundaryMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, const FaceBlock & b,
              VoxelPair<I> * queue)
{
  const I    sy = e.nx;
  const I    sz = e.nx * e.ny;
  const I    stride[3] = { 1, sy, sz };
  auto       unite = [&](const VoxelPair<I> & pair) {
    I linked;
    if (Unite<I>(parent, pair.p, pair.q, &linked))
      atomicAdd(chunkRoots + (linked >> kChunkShift), ~I(0)); // minus one
  };
  WarpQueue<VoxelPair<I>, decltype(unite)> unions{ queue, int(threadIdx.x & 31), 0, unite };
  ForFaceVoxels<Axis, TileT, I>(e, b, [&](I x, I y, I z, bool valid) {
    const I    p = (z * e.ny + y) * e.nx + x;
    const auto cp = valid ? op.Load(p) : Op::Outside();
    const bool active = Op::Active(cp);
    // The skip rule walks along j (y on x faces, x on the others); it may lean only on pairs inside a tile.
    constexpr int J = Axis == 0 ? 1 : 0;
    constexpr I   TJ = Axis == 0 ? I(TileT::Y) : I(kTileX);
    const I       pj = J == 1 ? y : x;
    const bool    linkP = active && (pj % TJ) != 0 && Op::Connected(cp, op.Load(p - stride[J]));
    // The voxel straight across the face.
    const I    straight = p - stride[Axis];
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
          bool    wanted = active && !((dx < 0 && x == 0) || (dy < 0 && y == 0) || (dz < 0 && z == 0) ||
                                    (dx > 0 && x + 1 >= e.nx) || (dy > 0 && y + 1 >= e.ny) ||
                                    (dz > 0 && z + 1 >= e.nz));
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
            wanted = Op::Connected(cp, cq) &&
                     !(linkP && (qj % TJ) != 0 && Op::Connected(cq, op.Load(q - stride[J])));
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
__global__ void __launch_bounds__(kBoundaryThreads)
  BoundaryMergeKernel(Op op, I * parent, Extent<I> e, I * chunkRoots, FaceLaunch launch)
{
  const unsigned flat = blockIdx.x;
  const int      axis = flat < launch.first[1] ? 0 : flat < launch.first[2] ? 1 : 2;
  const dim3     g = launch.grid[axis];
  const unsigned local = flat - launch.first[axis];
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

/** The boundary pass of binary images, on the runs (see kNodesPerRow): one thread a tile row (w = r * tilesX + i,
 * row r = z * ny + y, tile column i) instead of one a face voxel, so a warp's few loads cover 1024 voxels and its
 * unions run 32 at a time from the queue. Voxel bit b of row w is node w * 16 + RunOrdinal(masks[w], b).
 * Across a y or z face, the row and each row behind it that it touches (one; three with full connectivity) are
 * joined with one union a pair of adjacent runs, as in the local merge, within the 32 columns; pairs that also
 * cross an x face are the x face's.
 * Across the x face, the row's first voxel p with the voxel s before it, unless the same pair one row up or one
 * slice back inside the same tiles is foreground on both sides (the tiles' own unions and that earlier pair join
 * them). Full connectivity: also p with the other eight voxels in the plane x = 32 i - 1 around s, except, when s
 * is foreground, those in s's tile (joined to s inside it). */
template <bool Full, typename I, class TileT>
__global__ void __launch_bounds__(kBoundaryThreads)
  BinaryBoundaryKernel(const unsigned * masks, I * slots, I half, Extent<I> e, I * chunkRoots)
{
  __shared__ VoxelPair<I> queues[kBoundaryThreads / 32][64];
  const unsigned          lane = threadIdx.x & 31;
  auto                    unite = [&](const VoxelPair<I> & pair) {
    I linked;
    if (Unite<I>(slots, pair.p, pair.q, &linked, SlotMap<I>{ half }))
      atomicAdd(chunkRoots + (linked >> kNodeChunkShift), ~I(0)); // minus one
  };
  WarpQueue<VoxelPair<I>, decltype(unite)> unions{ queues[threadIdx.x >> 5], int(lane), 0, unite };
  const unsigned ny = static_cast<unsigned>(e.ny);
  const unsigned nz = static_cast<unsigned>(e.nz);
  const unsigned tilesX = static_cast<unsigned>((e.nx + kTileX - 1) / kTileX);
  const unsigned words = ny * nz * tilesX; // below 2^31 (ChooseNodePath)
  const auto     node = [](unsigned w, unsigned m, int b) { return (I(w) << kNodeShift) + I(RunOrdinal(m, b)); };
  // The unions between this row (mask m, word wm) and another (mask n, word wn), RunPairs' pairs (n = 0: none).
  // Warp-uniform.
  const auto     pushRuns = [&](unsigned m, unsigned n, unsigned wm, unsigned wn) {
    unsigned a, c;
    RunPairs<Full>(m, n, a, c);
    while (__any_sync(0xffffffffu, (a | c) != 0))
    {
      const bool     fromA = a != 0;
      const unsigned bits = fromA ? a : c;
      const int      b = bits != 0 ? __ffs(bits) - 1 : 0;
      const int      qb = fromA ? RunPartner(n, b) : b + 1;
      unions.Push(bits != 0, VoxelPair<I>{ node(wm, m, b), node(wn, n, qb) });
      if (fromA)
        a &= a - 1;
      else
        c &= c - 1;
    }
  };
  // Warp-uniform loop (the queue needs all lanes); 32-bit row arithmetic.
  for (unsigned w0 = blockIdx.x * blockDim.x + threadIdx.x - lane; w0 < words; w0 += gridDim.x * blockDim.x)
  {
    const unsigned w = w0 + lane;
    const bool     valid = w < words;
    const unsigned r = valid ? w / tilesX : 0;
    const unsigned i = w - r * tilesX;
    const unsigned y = r % ny;
    const unsigned z = r / ny;
    const bool     yInside = y % TileT::Y != 0; // row y - 1 is in the same tiles
    const bool     zInside = z % TileT::Z != 0;
    // The mask of the row dr rows (dy + dz ny) and di tile columns away, and its word.
    const auto     wordAt = [&](int dr, int di) { return w + unsigned(dr * int(tilesX) + di); };
    const auto     maskAt = [&](int dr, int di) { return masks[wordAt(dr, di)]; };
    const unsigned m = valid ? maskAt(0, 0) : 0u;
    if constexpr (!Full)
    {
      // All loads first.
      const int      dz = -int(ny);
      const unsigned left = valid && i > 0 ? maskAt(0, -1) : 0u;
      const unsigned up = valid && y > 0 ? maskAt(-1, 0) : 0u;
      const unsigned upLeft = valid && y > 0 && i > 0 ? maskAt(-1, -1) : 0u;
      const unsigned back = valid && z > 0 ? maskAt(dz, 0) : 0u;
      const unsigned backLeft = valid && z > 0 && i > 0 ? maskAt(dz, -1) : 0u;
      const auto     crosses = [](unsigned a, unsigned leftOfA) { return (a & 1u) && (leftOfA >> 31); };
      const bool     xPair =
        crosses(m, left) && !(yInside && crosses(up, upLeft)) && !(zInside && crosses(back, backLeft));
      unions.Push(xPair, VoxelPair<I>{ node(w, m, 0), node(wordAt(0, -1), left, 31) });
      pushRuns(m, yInside ? 0u : up, w, wordAt(-1, 0));
      pushRuns(m, zInside ? 0u : back, w, wordAt(dz, 0));
    }
    else
    {
      // The plane x = 32 i - 1 around s: masks of rows (y + dy, z + dz), tile column i - 1, in around[(dy + 1) +
      // 3 (dz + 1)] (0 outside the image).
      const bool pActive = valid && i > 0 && (m & 1u);
      unsigned   around[9];
#pragma unroll
      for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy)
        {
          const bool outside = (dy < 0 && y == 0) || (dz < 0 && z == 0) || (dy > 0 && y + 1 >= ny) ||
                               (dz > 0 && z + 1 >= nz);
          around[(dy + 1) + 3 * (dz + 1)] =
            pActive && !outside ? maskAt(dy + dz * int(ny), -1) : 0u;
        }
      const bool     sActive = around[4] >> 31;
      const unsigned up = valid && y > 0 && yInside && sActive ? maskAt(-1, 0) : 0u;
      const unsigned back = valid && z > 0 && zInside && sActive ? maskAt(-int(ny), 0) : 0u;
      // (p, s) follows from the same pair one row up or one slice back when all four voxels are foreground.
      const bool straight = sActive && !((up & 1u) && (around[3] >> 31)) && !((back & 1u) && (around[1] >> 31));
      const bool yLowIn = yInside, yHighIn = (y + 1) % TileT::Y != 0, zLowIn = zInside, zHighIn = (z + 1) % TileT::Z != 0;
#pragma unroll
      for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
        for (int dy = -1; dy <= 1; ++dy)
        {
          const int  k = (dy + 1) + 3 * (dz + 1);
          const bool sameTile =
            (dy == 0 || (dy < 0 ? yLowIn : yHighIn)) && (dz == 0 || (dz < 0 ? zLowIn : zHighIn));
          const bool wanted = k == 4 ? straight : (around[k] >> 31) && !(sActive && sameTile);
          unions.Push(wanted, VoxelPair<I>{ node(w, m, 0), node(wordAt(dy + dz * int(ny), -1), around[k], 31) });
        }
      // Across the y face: rows (y - 1, z + dz); across the z face: rows (y + dy, z - 1).
#pragma unroll
      for (int d = -1; d <= 1; ++d)
      {
        const bool     yRow = valid && m != 0 && !yInside && y > 0 && !(d < 0 && z == 0) && !(d > 0 && z + 1 >= nz);
        pushRuns(m, yRow ? maskAt(d * int(ny) - 1, 0) : 0u, w, wordAt(d * int(ny) - 1, 0));
        const bool     zRow = valid && m != 0 && !zInside && z > 0 && !(d < 0 && y == 0) && !(d > 0 && y + 1 >= ny);
        pushRuns(m, zRow ? maskAt(d - int(ny), 0) : 0u, w, wordAt(d - int(ny), 0));
      }
    }
  }
  unions.Flush();
}
/** Parents first .. first + V - 1 as one 16-byte load (first is a multiple of V, so the load is aligned); past
 * the end of the image, element by element, with the sentinel beyond n. */
template <typename I, int V>
__device__ __forceinline__ void
LoadParents(const I * parent, uint64_t first, uint64_t n, I (&v)[V])
{
  static_assert(V * sizeof(I) == 16, "one 16-byte vector");
  if (first + V <= n)
  {
    const uint4 w = reinterpret_cast<const uint4 *>(parent + first)[0];
    memcpy(v, &w, sizeof(w));
    return;
  }
#pragma unroll
  for (int e = 0; e < V; ++e)
    v[e] = first + e < n ? parent[first + e] : Sentinel<I>();
}

/** Gives every root its label: its rank among the roots in raster order (the chunk's offset, from a scan of the
 * chunk counts, plus the roots before it in the chunk), mapped by ITK's rule: count up from 0 and skip the
 * background. One block a chunk. The chunk is read in kRounds rounds of 16-byte vectors (V parents each,
 * consecutive threads on consecutive vectors, so every load instruction is coalesced), all issued before any is
 * used; the voxel of round j, thread t, element e is base + V * (j * threads + t) + e, so ranking by (j, t, e) is
 * raster order. Warp scans of the per-round counts and one exchange of the warp totals rank every root. */
template <typename I, typename TLabel, bool InPlace>
__global__ void __launch_bounds__(kRootLabelThreads)
  RootLabelKernel(I * parent, const I * chunkOffset, TLabel * labels, uint64_t n, long long background)
{
  constexpr int V = 16 / sizeof(I);
  constexpr int kRounds = kChunk / (kRootLabelThreads * V);
  constexpr int kWarps = kRootLabelThreads / 32;
  static_assert(kRounds * kRootLabelThreads * V == kChunk, "rounds cover the chunk");
  __shared__ unsigned warpTotals[kRounds][kWarps];
  const int      lane = threadIdx.x & 31;
  const int      warp = threadIdx.x >> 5;
  const uint64_t base = uint64_t(blockIdx.x) << kChunkShift;

  unsigned roots[kRounds]; // bit e: element e of this thread's vector in round j is a root
#pragma unroll
  for (int j = 0; j < kRounds; ++j)
  {
    const uint64_t first = base + uint64_t(V) * (j * kRootLabelThreads + threadIdx.x);
    I              v[V];
    LoadParents(parent, first, n, v);
    roots[j] = 0;
#pragma unroll
    for (int e = 0; e < V; ++e)
      roots[j] |= unsigned(v[e] == static_cast<I>(first + e)) << e;
  }
  unsigned before[kRounds]; // roots of this warp before this thread, per round
#pragma unroll
  for (int j = 0; j < kRounds; ++j)
  {
    const unsigned c = __popc(roots[j]);
    unsigned       inclusive = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1)
    {
      const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, d);
      inclusive += lane >= d ? up : 0u;
    }
    before[j] = inclusive - c;
    if (lane == 31)
      warpTotals[j][warp] = inclusive;
  }
  __syncthreads();
  uint64_t rank = chunkOffset[blockIdx.x]; // roots of this chunk before round j
#pragma unroll
  for (int j = 0; j < kRounds; ++j)
  {
    unsigned earlierWarps = 0, all = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
    {
      earlierWarps += w < warp ? warpTotals[j][w] : 0u;
      all += warpTotals[j][w];
    }
    unsigned bits = roots[j];
    unsigned k = 0;
    while (bits)
    {
      const int      e = __ffs(bits) - 1;
      const uint64_t i = base + uint64_t(V) * (j * kRootLabelThreads + threadIdx.x) + e;
      const unsigned long long r = rank + earlierWarps + before[j] + k; // 0-based
      const bool               skip = background >= 0 && r >= static_cast<unsigned long long>(background);
      const TLabel             label = static_cast<TLabel>(skip ? r + 1 : r);
      if (InPlace)
        parent[i] = TagBit<I>() | static_cast<I>(label); // only this thread reads parent[i]
      else
        labels[i] = label;
      bits &= bits - 1;
      ++k;
    }
    rank += all;
  }
}

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

/** Adds voxel i (label `label`) to the per-label voxel counts and bounding boxes. Called by every thread of a warp
 * (the warp primitives need all 32): `foreground` is false for background voxels and for threads past the end. */
template <typename I, typename TLabel>
__device__ __forceinline__ void
AccumulateStatistics(TLabel label, bool foreground, uint64_t i, I nx, I ny, long long background,
                     const StatisticsPointers & stats)
{
  const unsigned long long lab = static_cast<unsigned long long>(label);
  const unsigned long long k = (background >= 0 && lab > static_cast<unsigned long long>(background)) ? lab - 1 : lab;
  const unsigned long long key = foreground ? k : ~0ull;
  const unsigned           peers = __match_any_sync(0xffffffffu, key);
  const unsigned           lane = threadIdx.x & 31;
  if (!foreground)
    return;
  const I        row = static_cast<I>(i) / nx;
  const unsigned x = static_cast<unsigned>(static_cast<I>(i) - row * nx);
  const unsigned y = static_cast<unsigned>(row % ny);
  const unsigned z = static_cast<unsigned>(row / ny);
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

template <typename I, typename TLabel, bool Stats>
__global__ void __launch_bounds__(kFinalizeThreads) FinalizeKernel(const I *          parent,
                                                                   TLabel *           labels,
                                                                   uint64_t           n,
                                                                   I                  nx,
                                                                   I                  ny,
                                                                   long long          background,
                                                                   StatisticsPointers stats)
{
  // Four voxels a thread per step, their first two reads issued before any walk, so that more reads are in flight.
  constexpr int  kItems = 4;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x * kItems;
  // The loop bound is uniform per block so that whole warps take part in the statistics' warp primitives.
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x * kItems; base < n; base += stride)
  {
    I p[kItems], pr[kItems];
#pragma unroll
    for (int k = 0; k < kItems; ++k)
    {
      const uint64_t i = base + uint64_t(k) * blockDim.x + threadIdx.x;
      p[k] = i < n ? parent[i] : Sentinel<I>();
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      pr[k] = p[k] != Sentinel<I>() ? parent[p[k]] : Sentinel<I>();
#pragma unroll
    for (int k = 0; k < kItems; ++k)
    {
      const uint64_t i = base + uint64_t(k) * blockDim.x + threadIdx.x;
      const bool     foreground = p[k] != Sentinel<I>();
      TLabel         label = static_cast<TLabel>(background);
      if (foreground)
      {
        I r = p[k];
        I next = pr[k];
        while (next != r)
        {
          r = next;
          next = parent[r];
        }
        label = labels[r]; // the scan left each root its own label; roots rewrite the same value
      }
      if (i < n)
        labels[i] = label;
      if (Stats)
        AccumulateStatistics<I, TLabel>(label, foreground, i, nx, ny, background, stats);
    }
  }
}

/** The final link without statistics: every thread takes 16-byte vectors of parents (V voxels, grid-stride),
 * follows each to its root and writes the root's label. Fewer instructions a voxel than FinalizeKernel, whose
 * statistics need one voxel a lane. */
template <typename I, typename TLabel>
__global__ void __launch_bounds__(kFinalizeThreads)
  FinalizeVectorKernel(const I * parent, TLabel * labels, uint64_t n, long long background)
{
  constexpr int  V = 16 / sizeof(I);
  const uint64_t vectors = (n + V - 1) / V;
  for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < vectors;
       t += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t first = t * V;
    I              p[V];
    LoadParents(parent, first, n, p);
    I next[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      next[e] = p[e] != Sentinel<I>() ? parent[p[e]] : Sentinel<I>();
    TLabel out[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
    {
      out[e] = static_cast<TLabel>(background);
      if (p[e] != Sentinel<I>())
      {
        I r = p[e];
        I q = next[e];
        while (q != r)
        {
          r = q;
          q = parent[r];
        }
        out[e] = labels[r]; // the root's own label, from RootLabelKernel; roots rewrite the same value
      }
    }
    if (sizeof(TLabel) * V == 16 && first + V <= n)
    {
      uint4 w;
      memcpy(&w, out, sizeof(w));
      reinterpret_cast<uint4 *>(labels + first)[0] = w;
    }
    else
    {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (first + e < n)
          labels[first + e] = out[e];
    }
  }
}

// ---- Narrow copies of the labels for the download ---------------------------------------------------------------
// The link to the host is the slowest part of a run: labels are copied in the narrowest unsigned type that holds
// every label of the run, and widened to the caller's type on the host threads that empty the staging buffers.

/** Bytes a label needs on the way to the host: the narrowest of 1, 2 and 4 (below sizeof(TLabel)) that holds the
 * labels 0..count and the background label; sizeof(TLabel) when none does. */
template <typename TLabel>
__host__ __device__ __forceinline__ unsigned
TransferWidth(unsigned long long count, long long background)
{
  const unsigned long long bg = static_cast<unsigned long long>(static_cast<TLabel>(background));
  const unsigned long long top = count > bg ? count : bg;
  for (unsigned w = 1; w < sizeof(TLabel) && w <= 4; w *= 2)
    if (top < (1ull << (8 * w)))
      return w;
  return static_cast<unsigned>(sizeof(TLabel));
}

template <int Bytes>
struct VectorOfBytes; // an aligned store of Bytes bytes
template <>
struct VectorOfBytes<2>
{
  using Type = unsigned short;
};
template <>
struct VectorOfBytes<4>
{
  using Type = unsigned;
};
template <>
struct VectorOfBytes<8>
{
  using Type = uint2;
};
template <>
struct VectorOfBytes<16>
{
  using Type = uint4;
};

/** Copies the labels into TNarrow: 16-byte vectors of V labels in, V narrow labels out as one store. */
template <typename TLabel, typename TNarrow>
__device__ __forceinline__ void
NarrowLabels(const TLabel * labels, TNarrow * narrow, uint64_t n)
{
  constexpr int  V = 16 / sizeof(TLabel);
  using Store = typename VectorOfBytes<V * sizeof(TNarrow)>::Type;
  const uint64_t vectors = n / V;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t first = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (uint64_t t = first; t < vectors; t += stride)
  {
    const uint4 w = reinterpret_cast<const uint4 *>(labels)[t];
    TLabel      in[V];
    memcpy(in, &w, sizeof(w));
    TNarrow out[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      out[e] = static_cast<TNarrow>(in[e]);
    Store v;
    memcpy(&v, out, sizeof(v));
    reinterpret_cast<Store *>(narrow)[t] = v;
  }
  for (uint64_t i = vectors * V + first; i < n; i += stride)
    narrow[i] = static_cast<TNarrow>(labels[i]);
}

/** Writes the labels in TransferWidth bytes each into `narrow` (the parent array, free after the final link), or
 * nothing when the labels' own type is the narrowest. The count is read on the device, so the kernel is queued
 * behind the final link without waiting for the host. */
template <typename I, typename TLabel>
__global__ void __launch_bounds__(kFinalizeThreads)
  NarrowLabelsKernel(const TLabel * labels, void * narrow, uint64_t n, const I * lastOffset, const I * lastCount,
                     long long background)
{
  const unsigned width =
    TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
  if constexpr (sizeof(TLabel) > 1)
    if (width == 1)
      NarrowLabels(labels, static_cast<uint8_t *>(narrow), n);
  if constexpr (sizeof(TLabel) > 2)
    if (width == 2)
      NarrowLabels(labels, static_cast<uint16_t *>(narrow), n);
  if constexpr (sizeof(TLabel) > 4)
    if (width == 4)
      NarrowLabels(labels, static_cast<uint32_t *>(narrow), n);
}

/** The final link into labels of TNarrow for the voxels [begin, end) (begin a multiple of 16), written to
 * labels[i - begin]: each root holds its tagged label (RootLabelKernel<..., true>), every voxel follows its parents
 * to the first tagged value. 16-byte vectors of V parents in, V labels out as one store. Reads only the parents
 * below `end` (a parent is never above its voxel) and writes none. */
template <typename I, typename TNarrow>
__device__ __forceinline__ void
FinalizeTagged(const I * parent, TNarrow * labels, uint64_t begin, uint64_t end, long long background)
{
  constexpr int V = 16 / sizeof(I);
  constexpr int kStoreBytes = V * sizeof(TNarrow) <= 16 ? V * sizeof(TNarrow) : 16; // 8-byte labels, 4-byte index:
  using Store = typename VectorOfBytes<kStoreBytes>::Type;                         // two stores
  const uint64_t firstVector = begin / V;
  const uint64_t vectors = (end + V - 1) / V;
  for (uint64_t t = firstVector + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < vectors;
       t += uint64_t(gridDim.x) * blockDim.x)
  {
    const uint64_t first = t * V;
    I              p[V];
    LoadParents(parent, first, end, p);
    TNarrow out[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
    {
      I v = p[e];
      if (v != Sentinel<I>())
        while (!(v & TagBit<I>()))
          v = parent[v];
      out[e] = p[e] == Sentinel<I>() ? static_cast<TNarrow>(background) : static_cast<TNarrow>(v & ~TagBit<I>());
    }
    if (first + V <= end)
    {
      constexpr int kStores = V * sizeof(TNarrow) / kStoreBytes;
#pragma unroll
      for (int k = 0; k < kStores; ++k)
      {
        Store w;
        memcpy(&w, reinterpret_cast<const char *>(out) + k * kStoreBytes, sizeof(w));
        reinterpret_cast<Store *>(labels)[(t - firstVector) * kStores + k] = w;
      }
    }
    else
    {
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (first + e < end)
          labels[first + e - begin] = out[e];
    }
  }
}

/** The final link without statistics, straight into the labels' transfer width (TransferWidth, from the count on
 * the device): the labels buffer then holds labels of 1, 2, 4 or sizeof(TLabel) bytes, which the download widens.
 * Writes half or a quarter of the bytes of full-width labels, and needs no narrowing pass. */
template <typename I, typename TLabel>
__global__ void __launch_bounds__(kFinalizeThreads)
  FinalizeNarrowKernel(const I * parent, void * labels, uint64_t n, const I * lastOffset, const I * lastCount,
                       long long background)
{
  const unsigned width =
    TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
  if (width == 1)
    FinalizeTagged(parent, static_cast<uint8_t *>(labels), 0, n, background);
  if constexpr (sizeof(TLabel) >= 2)
    if (width == 2)
      FinalizeTagged(parent, static_cast<uint16_t *>(labels), 0, n, background);
  if constexpr (sizeof(TLabel) >= 4)
    if (width == 4)
      FinalizeTagged(parent, static_cast<uint32_t *>(labels), 0, n, background);
  if constexpr (sizeof(TLabel) >= 8)
    if (width == 8)
      FinalizeTagged(parent, static_cast<uint64_t *>(labels), 0, n, background);
}

template <typename I, typename TNarrow>
__global__ void __launch_bounds__(kFinalizeThreads)
  FinalizeRangeKernel(const I * parent, TNarrow * labels, uint64_t begin, uint64_t end, long long background)
{
  FinalizeTagged(parent, labels, begin, end, background);
}

/** Labels of the voxels [begin, end), `width` bytes each, at `device`. */
struct LabelRange
{
  uint64_t begin, end;
  void *   device;
};

/** Where the in-place path's final link puts the labels without a pass over the parents: ranges of voxels from the
 * top down, each into memory no later range reads. The first range goes into the input buffer (dead after the
 * merge); range j + 1 into the parents of range j (a voxel's path stays below it, so ranges below never read them).
 * Each range holds sizeof(I) / width times fewer voxels than the space it gets, so the ranges grow geometrically:
 * 1, 2 or 3 ranges for 1-, 2- or 4-byte labels of a 1-byte input over 8-byte parents. Empty when a range would
 * be empty (tiny images): the caller then resolves and packs over the parents. */
template <typename I>
std::vector<LabelRange>
PlanLabelRanges(I * parent, void * input, uint64_t inputBytes, uint64_t n, unsigned width)
{
  std::vector<LabelRange> ranges;
  uint64_t                top = n;
  void *                  space = input;
  uint64_t                capacity = inputBytes;
  while (top > 0)
  {
    const uint64_t fits = std::min<uint64_t>(top, capacity / width);
    const uint64_t begin = fits == top ? 0 : (top - fits + 15) / 16 * 16; // vectors of parents stay whole
    if (begin >= top)
      return {};
    ranges.push_back(LabelRange{ begin, top, space });
    space = reinterpret_cast<char *>(parent) + begin * sizeof(I);
    capacity = (top - begin) * sizeof(I);
    top = begin;
  }
  return ranges;
}

template <typename I, typename TLabel>
void
LaunchLabelRanges(const std::vector<LabelRange> & ranges, const I * parent, unsigned width, long long background,
                  unsigned maxBlocks, cudaStream_t stream)
{
  for (const LabelRange & r : ranges)
  {
    const uint64_t vectors = (r.end - r.begin) / (16 / sizeof(I)) + 1;
    const unsigned blocks = static_cast<unsigned>(
      std::min<uint64_t>(maxBlocks, (vectors + kFinalizeThreads - 1) / kFinalizeThreads));
    if (width == 1)
      FinalizeRangeKernel<I, uint8_t><<<blocks, kFinalizeThreads, 0, stream>>>(
        parent, static_cast<uint8_t *>(r.device), r.begin, r.end, background);
    if constexpr (sizeof(TLabel) >= 2)
      if (width == 2)
        FinalizeRangeKernel<I, uint16_t><<<blocks, kFinalizeThreads, 0, stream>>>(
          parent, static_cast<uint16_t *>(r.device), r.begin, r.end, background);
    if constexpr (sizeof(TLabel) >= 4)
      if (width == 4)
        FinalizeRangeKernel<I, uint32_t><<<blocks, kFinalizeThreads, 0, stream>>>(
          parent, static_cast<uint32_t *>(r.device), r.begin, r.end, background);
    CHS_CUDA_CHECK_LAUNCH("FinalizeRangeKernel");
  }
}

// ---- Binary images: numbering the root runs and the final link -------------------------------------------------

/** Loads 8 slots (one or two 32-byte sectors) from p, 32-byte aligned, as 16-byte vectors. */
template <typename I>
__device__ __forceinline__ void
LoadHalfRow(const I * p, I (&v)[kHalfRow])
{
  constexpr int kVectors = kHalfRow * sizeof(I) / 16;
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
  {
    const uint4 q = reinterpret_cast<const uint4 *>(p)[k];
    memcpy(reinterpret_cast<char *>(v) + 16 * k, &q, 16);
  }
}

/** The root bits (bit k: node k is a root) of tile row w from its first 8 slots `v`, reading the other 8 when no
 * sentinel ends the first. */
template <typename I>
__device__ __forceinline__ unsigned
RowRoots(const I * slots, I half, unsigned w, const I (&v)[kHalfRow])
{
  const I  first = I(w) << kNodeShift;
  unsigned roots = 0;
  bool     more = true;
#pragma unroll
  for (int k = 0; k < kHalfRow; ++k)
  {
    more = more && v[k] != Sentinel<I>();
    roots |= unsigned(more && v[k] == first + I(k)) << k;
  }
  if (more) // 8 runs or more
  {
    I u[kHalfRow];
    LoadHalfRow(slots + half + I(w) * kHalfRow, u);
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
    {
      more = more && u[k] != Sentinel<I>();
      roots |= unsigned(more && u[k] == first + I(kHalfRow + k)) << (kHalfRow + k);
    }
  }
  return roots;
}

/** RootLabelKernel for the runs' union-find: one block a chunk of 2^14 nodes (1024 tile rows; in round j, thread t
 * takes row 256 j + t, so ranking by (j, t) is node order, which is raster order). Each thread reads its rows' first
 * 8 slots (a sector; SlotMap) for all rounds before using any, marks the roots up to the sentinel, and warp scans
 * and one exchange of the warp totals rank them; each root's slot takes its label plus `base` (RunNodes). */
template <typename I>
__global__ void __launch_bounds__(kNodeRootLabelThreads)
  NodeRootLabelKernel(I * slots, I half, I base, const I * chunkOffset, unsigned words, long long background)
{
  constexpr int kWarps = kNodeRootLabelThreads / 32;
  __shared__ unsigned warpTotals[kNodeRounds][kWarps];
  const int      lane = threadIdx.x & 31;
  const int      warp = threadIdx.x >> 5;
  const unsigned row0 = blockIdx.x * kNodeChunkRows + threadIdx.x; // this thread's row in round 0
  I              v[kNodeRounds][kHalfRow];
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    const unsigned w = row0 + j * kNodeRootLabelThreads;
    if (w < words)
      LoadHalfRow(slots + I(w) * kHalfRow, v[j]);
  }
  unsigned roots[kNodeRounds], before[kNodeRounds];
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    const unsigned w = row0 + j * kNodeRootLabelThreads;
    roots[j] = w < words ? RowRoots(slots, half, w, v[j]) : 0u;
    const unsigned c = __popc(roots[j]);
    unsigned       inclusive = c;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1)
    {
      const unsigned up = __shfl_up_sync(0xffffffffu, inclusive, d);
      inclusive += lane >= d ? up : 0u;
    }
    before[j] = inclusive - c;
    if (lane == 31)
      warpTotals[j][warp] = inclusive;
  }
  __syncthreads();
  unsigned long long rank = chunkOffset[blockIdx.x]; // roots of this chunk before round j
#pragma unroll
  for (int j = 0; j < kNodeRounds; ++j)
  {
    unsigned earlierWarps = 0, all = 0;
#pragma unroll
    for (int k = 0; k < kWarps; ++k)
    {
      earlierWarps += k < warp ? warpTotals[j][k] : 0u;
      all += warpTotals[j][k];
    }
    unsigned long long r = rank + earlierWarps + before[j];
    const I            first = I(row0 + j * kNodeRootLabelThreads) << kNodeShift;
    for (unsigned bits = roots[j]; bits != 0; bits &= bits - 1, ++r)
    {
      const bool skip = background >= 0 && r >= static_cast<unsigned long long>(background);
      slots[SlotMap<I>{ half }(first + I(__ffs(bits) - 1))] = base + static_cast<I>(skip ? r + 1 : r);
    }
    rank += all;
  }
}

/** Per warp of NodeFinalize: the labels of the runs of its 32 tile rows (padded against bank conflicts). */
template <typename I>
using RunLabels = I[32][kNodesPerRow + 1];

/** The final link of the runs' union-find into labels of TNarrow, with the per-label statistics when Stats. A warp
 * takes a segment of up to 32 tile rows of one image row (one load of their masks). First each lane takes a row and
 * follows its runs' parents to their roots' labels (values from `base` up) (the first 8 slots read before any is followed), keeping the
 * labels in shared memory; then the warp writes the segment's labels a tile row at a time, each lane its voxel's
 * (a coalesced row of 32 labels). */
template <typename I, typename TLabel, typename TNarrow, bool Stats>
__device__ __forceinline__ void
NodeFinalize(const I * slots, I half, I base, const unsigned * masks, TNarrow * labels, const Extent<I> & e,
             long long background, const StatisticsPointers & stats, RunLabels<I> & runLabels)
{
  const int        lane = threadIdx.x & 31;
  const unsigned   tilesX = static_cast<unsigned>((e.nx + kTileX - 1) / kTileX);
  const unsigned   segmentsPerRow = (tilesX + 31) / 32;
  const unsigned   segments = static_cast<unsigned>(e.ny * e.nz) * segmentsPerRow; // below 2^31: tile rows are
  const unsigned   warpsPerBlock = blockDim.x / 32;
  const unsigned   upToLane = 0xffffffffu >> (31 - lane);
  const SlotMap<I> at{ half };
  for (unsigned seg = blockIdx.x * warpsPerBlock + (threadIdx.x >> 5); seg < segments; seg += gridDim.x * warpsPerBlock)
  {
    const unsigned r = seg / segmentsPerRow;
    const unsigned i0 = (seg - r * segmentsPerRow) * 32;
    const unsigned tiles = min(32u, tilesX - i0);
    const unsigned w = r * tilesX + i0 + lane; // this lane's tile row
    const unsigned m = unsigned(lane) < tiles ? masks[w] : 0u;

    // This lane's row: the labels of its runs.
    const unsigned starts = m & ~(m << 1);
    const int      runs = __popc(starts);
    I              v[kHalfRow];
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
      v[k] = k < runs ? slots[I(w) * kHalfRow + k] : base;
#pragma unroll
    for (int k = 0; k < kHalfRow; ++k)
    {
      while (v[k] < base)
        v[k] = slots[at(v[k])];
      runLabels[lane][k] = v[k] - base;
    }
    for (int k = kHalfRow; k < runs; ++k) // rows of more than 8 runs
    {
      I u = slots[half + I(w) * kHalfRow + (k - kHalfRow)];
      while (u < base)
        u = slots[at(u)];
      runLabels[lane][k] = u - base;
    }
    __syncwarp();

    // The segment's labels, a tile row at a time.
    TNarrow *      out = labels + (uint64_t(r) * e.nx + uint64_t(i0) * kTileX);
    const uint64_t voxel0 = uint64_t(r) * e.nx + uint64_t(i0) * kTileX; // for the statistics
    const unsigned columns = static_cast<unsigned>(e.nx) - i0 * kTileX; // from the segment's first voxel on
#pragma unroll 4
    for (unsigned j = 0; j < tiles; ++j)
    {
      const unsigned mj = __shfl_sync(0xffffffffu, m, j);
      const bool     foreground = (mj >> lane) & 1u;
      const TLabel   label = foreground ? static_cast<TLabel>(runLabels[j][__popc(mj & ~(mj << 1) & upToLane) - 1])
                                        : static_cast<TLabel>(background);
      const unsigned x = j * kTileX + lane;
      if (x < columns)
        out[x] = static_cast<TNarrow>(label);
      if (Stats)
        AccumulateStatistics<I, TLabel>(label, foreground, voxel0 + x, e.nx, e.ny, background, stats);
    }
    __syncwarp();
  }
}

/** NodeFinalize in the labels' transfer width (TransferWidth, from the count on the device). */
template <typename I, typename TLabel, bool Stats>
__global__ void __launch_bounds__(kFinalizeThreads)
  NodeFinalizeKernel(const I * slots, I half, I base, const unsigned * masks, void * labels, Extent<I> e,
                     const I * lastOffset, const I * lastCount, long long background, StatisticsPointers stats)
{
  __shared__ RunLabels<I> runLabels[kFinalizeThreads / 32];
  RunLabels<I> &          mine = runLabels[threadIdx.x >> 5];
  const unsigned          width =
    TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
  if (width == 1)
    NodeFinalize<I, TLabel, uint8_t, Stats>(slots, half, base, masks, static_cast<uint8_t *>(labels), e, background,
                                                    stats, mine);
  if constexpr (sizeof(TLabel) >= 2)
    if (width == 2)
      NodeFinalize<I, TLabel, uint16_t, Stats>(slots, half, base, masks, static_cast<uint16_t *>(labels), e,
                                                       background, stats, mine);
  if constexpr (sizeof(TLabel) >= 4)
    if (width == 4)
      NodeFinalize<I, TLabel, uint32_t, Stats>(slots, half, base, masks, static_cast<uint32_t *>(labels), e,
                                                       background, stats, mine);
  if constexpr (sizeof(TLabel) >= 8)
    if (width == 8)
      NodeFinalize<I, TLabel, uint64_t, Stats>(slots, half, base, masks, static_cast<uint64_t *>(labels), e,
                                                       background, stats, mine);
}

// ---- Labels written in place over the parents (labels narrower than the index type) ---------------------------
// The parent array is the only label-sized working buffer: (1) each root takes its tagged label
// (RootLabelKernel<..., true>), (2) every voxel takes its root's tagged label, (3) the index-wide tagged labels are
// packed into label-wide ones from the front of the same buffer, in ranges whose writes land only on elements
// already read.

template <typename I, typename TLabel, bool Stats>
__global__ void __launch_bounds__(kFinalizeThreads)
  ResolveInPlaceKernel(I * parent, uint64_t n, I nx, I ny, long long background, StatisticsPointers stats)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x; base < n; base += stride)
  {
    const uint64_t i = base + threadIdx.x;
    const I        v = i < n ? parent[i] : Sentinel<I>();
    const bool     foreground = v != Sentinel<I>();
    TLabel         label = static_cast<TLabel>(background);
    if (foreground)
    {
      // Up the parents to the first tagged value: the root's label, or the same label already written over a
      // voxel of the path by its own thread (a concurrent reader sees either the old parent or that label).
      I t = v;
      while (!(t & TagBit<I>()))
        t = parent[t];
      label = static_cast<TLabel>(t & ~TagBit<I>());
      if (t != v)
        parent[i] = t;
    }
    if (Stats)
      AccumulateStatistics<I, TLabel>(label, foreground, i, nx, ny, background, stats);
  }
}

template <typename I, typename TLabel>
__global__ void __launch_bounds__(kFinalizeThreads)
  PackLabelsKernel(void * buffer, uint64_t begin, uint64_t end, TLabel background)
{
  const I * tagged = static_cast<const I *>(buffer);
  TLabel *  labels = static_cast<TLabel *>(buffer);
  for (uint64_t i = begin + uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < end;
       i += uint64_t(gridDim.x) * blockDim.x)
  {
    const I v = tagged[i];
    labels[i] = v == Sentinel<I>() ? background : static_cast<TLabel>(v & ~TagBit<I>());
  }
}

/** Packs n index-wide tagged labels into label-wide ones in the same buffer. A range [b, e) writes bytes
 * [b*sizeof(TLabel), e*sizeof(TLabel)) and reads [b*sizeof(I), e*sizeof(I)): with e <= b*sizeof(I)/sizeof(TLabel)
 * the writes fall on elements that earlier launches (stream-ordered) have read. */
template <typename I, typename TLabel>
void
PackLabelsInPlace(void * buffer, uint64_t n, TLabel background, int device, cudaStream_t stream)
{
  static_assert(sizeof(TLabel) < sizeof(I), "packing only narrows");
  constexpr uint64_t ratio = sizeof(I) / sizeof(TLabel);
  const unsigned     maxBlocks = detail::GridStrideBlocks(n, kFinalizeThreads, device);
  for (uint64_t begin = 0, end = 1; begin < n; begin = end, end = std::min<uint64_t>(n, end * ratio))
  {
    const uint64_t len = end - begin;
    const unsigned blocks =
      static_cast<unsigned>(std::min<uint64_t>(maxBlocks, (len + kFinalizeThreads - 1) / kFinalizeThreads));
    PackLabelsKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(buffer, begin, end, background);
    CHS_CUDA_CHECK_LAUNCH("PackLabelsKernel");
  }
}

template <int Axis, class TileT, typename I>
dim3
FaceGrid(const Extent<I> & e)
{
  const auto     cap = [](uint64_t v) { return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(v, 65535))); };
  const uint64_t threads = kBoundaryThreads;
  if (Axis == 0)
    return dim3(static_cast<unsigned>(std::min<uint64_t>((uint64_t(e.ny) * e.nz + threads - 1) / threads, 1u << 20)),
                cap((e.nx - 1) / kTileX), 1);
  if (Axis == 1)
    return dim3(static_cast<unsigned>((e.nx + threads - 1) / threads), cap((e.ny - 1) / TileT::Y), cap(e.nz));
  return dim3(static_cast<unsigned>((e.nx + threads - 1) / threads), cap(e.ny), cap((e.nz - 1) / TileT::Z));
}

template <int Axis, class TileT, typename I>
bool
HasFaces(const Extent<I> & e)
{
  return Axis == 0 ? e.nx > kTileX : Axis == 1 ? e.ny > I(TileT::Y) : e.nz > I(TileT::Z);
}

/** The tile grid of an extent; throws past CUDA's grid limits. */
template <class TileT, typename I>
dim3
TileGrid(const Extent<I> & e)
{
  const uint64_t tilesX = (uint64_t(e.nx) + kTileX - 1) / kTileX;
  const uint64_t tilesY = (uint64_t(e.ny) + TileT::Y - 1) / TileT::Y;
  const uint64_t tilesZ = (uint64_t(e.nz) + TileT::Z - 1) / TileT::Z;
  if (tilesX > 0x7fffffffull || tilesY > 65535 || tilesZ > 65535)
    throw std::invalid_argument("chs: image extent beyond the CUDA grid limits (rows > 2097120 in 2D, or more than "
                                "524280 rows or slices in 3D)");
  return dim3{ unsigned(tilesX), unsigned(tilesY), unsigned(tilesZ) };
}

template <class Op, bool Full, typename I, class TileT>
void
LaunchMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, cudaStream_t stream)
{
  LocalMergeKernel<Op, Full, I, TileT><<<TileGrid<TileT>(e), kLocalThreads, 0, stream>>>(op, parent, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("LocalMergeKernel");
  FaceLaunch     launch{};
  const dim3     grids[3] = { FaceGrid<0, TileT>(e), FaceGrid<1, TileT>(e), FaceGrid<2, TileT>(e) };
  const bool     faces[3] = { HasFaces<0, TileT>(e), HasFaces<1, TileT>(e), HasFaces<2, TileT>(e) };
  uint64_t       total = 0;
  for (int a = 0; a < 3; ++a)
  {
    launch.grid[a] = grids[a];
    launch.first[a] = static_cast<unsigned>(total);
    if (faces[a])
      total += uint64_t(grids[a].x) * grids[a].y * grids[a].z;
  }
  if (total == 0)
    return;
  if (total > 0x7fffffffull)
    throw std::invalid_argument("chs: too many tile faces for one boundary launch");
  launch.first[3] = static_cast<unsigned>(total);
  BoundaryMergeKernel<Op, Full, I, TileT><<<static_cast<unsigned>(total), kBoundaryThreads, 0, stream>>>(
    op, parent, e, chunkRoots, launch);
  CHS_CUDA_CHECK_LAUNCH("BoundaryMergeKernel");
}

template <class Op, bool Full, typename I>
void
LaunchMerge(const Op & op, I * parent, const Extent<I> & e, I * chunkRoots, cudaStream_t stream)
{
  if (e.nz == 1)
    LaunchMerge<Op, Full, I, Tile2D>(op, parent, e, chunkRoots, stream);
  else
    LaunchMerge<Op, Full, I, Tile3D>(op, parent, e, chunkRoots, stream);
}

/** The merge of the runs' union-find (binary images, ChooseNodePath): local merge and boundary pass. */
template <typename TPixel, bool Full, typename I, typename V, class TileT>
void
LaunchNodeMerge(const BinaryOp<TPixel> & op, I * slots, unsigned * masks, const Extent<I> & e, I * chunkRoots,
                unsigned words, int device, cudaStream_t stream)
{
  const I half = I(words) * kHalfRow;
  BinaryLocalMergeKernel<TPixel, Full, I, V, TileT>
    <<<TileGrid<TileT>(e), kLocalThreads, 0, stream>>>(op, slots, half, masks, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("BinaryLocalMergeKernel");
  if (!HasFaces<0, TileT>(e) && !HasFaces<1, TileT>(e) && !HasFaces<2, TileT>(e))
    return;
  BinaryBoundaryKernel<Full, I, TileT><<<detail::GridStrideBlocks(words, kBoundaryThreads, device), kBoundaryThreads,
                                         0, stream>>>(masks, slots, half, e, chunkRoots);
  CHS_CUDA_CHECK_LAUNCH("BinaryBoundaryKernel");
}

/** Exclusive scan of the chunks' root counts (CUB), with its temporary storage. */
template <typename I>
void
ScanChunkCounts(const I * counts, I * offsets, uint64_t chunks, cudaStream_t stream, detail::MemoryTracker & tracker)
{
  size_t tempBytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, tempBytes, counts, offsets, chunks, stream));
  detail::DeviceBuffer<uint8_t> temp(tempBytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), tempBytes, counts, offsets, chunks, stream));
}

/** The number of objects, the last offset plus the last count, read back and checked against the label type
 * before anything reaches the caller's memory. (A copy into pageable memory returns only when it is done.) */
template <typename I>
unsigned long long
ReadObjectCount(const I * offsets, const I * counts, uint64_t chunks, uint64_t maximumLabel, cudaStream_t stream)
{
  I last[2] = { 0, 0 };
  CHS_CUDA_CHECK(cudaMemcpyAsync(last, offsets + chunks - 1, sizeof(I), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaMemcpyAsync(last + 1, counts + chunks - 1, sizeof(I), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  const unsigned long long count = static_cast<unsigned long long>(last[0]) + last[1];
  if (count > maximumLabel)
    throw LabelOverflowError(count, maximumLabel);
  return count;
}

/** Device arrays of the per-label statistics (empty without them), cleared for the accumulation. */
struct StatisticsBuffers
{
  detail::DeviceBuffer<unsigned long long> voxels;
  detail::DeviceBuffer<unsigned>           minimum, maximum;
  StatisticsBuffers(uint64_t count, cudaStream_t stream, detail::MemoryTracker & tracker)
    : voxels(count, stream, &tracker)
    , minimum(3 * count, stream, &tracker)
    , maximum(3 * count, stream, &tracker)
  {
    if (count == 0)
      return;
    CHS_CUDA_CHECK(cudaMemsetAsync(voxels.get(), 0, count * sizeof(unsigned long long), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(minimum.get(), 0xff, 3 * count * sizeof(unsigned), stream));
    CHS_CUDA_CHECK(cudaMemsetAsync(maximum.get(), 0, 3 * count * sizeof(unsigned), stream));
  }
  StatisticsPointers
  Pointers() const
  {
    return StatisticsPointers{ voxels.get(), minimum.get(), maximum.get() };
  }
  /** Queues the copies into `statistics` (complete after the next synchronisation of the stream). */
  void
  Download(ConnectedComponentStatistics & statistics, uint64_t count, cudaStream_t stream) const
  {
    statistics.voxelCount.resize(count);
    statistics.minimum.resize(3 * count);
    statistics.maximum.resize(3 * count);
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics.voxelCount.data(), voxels.get(), count * sizeof(uint64_t),
                                   cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics.minimum.data(), minimum.get(), 3 * count * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaMemcpyAsync(statistics.maximum.data(), maximum.get(), 3 * count * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost, stream));
  }
};

inline uint64_t
TileRows(const Grid & grid)
{
  return uint64_t(grid.size[1]) * grid.size[2] * ((grid.size[0] + kTileX - 1) / kTileX);
}

/** Whether a binary image is labelled on its runs (RunNodes), with nodes of `nodeBytes`: rows of at least a tile's
 * 32 voxels (narrower ones would give more node slots than voxels), fewer than 2^31 tile rows, and a peak within the
 * input, the labels and one label-sized buffer. The input is freed after the merge and the labels are allocated
 * after it, so the peak is the slots and the masks plus the larger of the input and the labels. */
inline bool
NodePathFits(const Grid & grid, unsigned pixelBytes, unsigned labelBytes, unsigned nodeBytes)
{
  const uint64_t n = grid.NumberOfVoxels();
  const uint64_t words = TileRows(grid);
  const uint64_t work = words * (kNodesPerRow * nodeBytes + sizeof(unsigned));
  return grid.size[0] >= kTileX && words < (uint64_t(1) << 31) &&
         work <= n * labelBytes + std::min<uint64_t>(n * labelBytes, n * pixelBytes);
}

/** Thrown by RunNodes when the labels do not fit above the node count (32-bit nodes from 2^31 on, LabelBase); the
 * caller runs again with 64-bit nodes. Only an image of more than about 2^31 objects does that. */
struct NodeLabelsDoNotFit
{};

/** Binary images (NodePathFits): the union-find on the tile rows' runs (kNodesPerRow), with nodes of type I and voxel
 * indices of type V. A root's slot takes its label plus `base`: values from `base` up are labels, below it
 * parents. base = 2^31 (2^63) with 32-bit (64-bit) nodes below it; with 32-bit nodes from 2^31 on (`offsetLabels`:
 * volumes of 2^32 voxels and more) base is the node count, which leaves 2^32 - 1 - base labels. The labels are
 * written in their transfer width, into a buffer of sizeof(TLabel) a voxel allocated first where the slots and
 * masks take no more (labelsFirst); otherwise into one allocated after the merge in the place of the input and
 * mask, which are freed then: of the transfer width where the count is read before the final link (statistics,
 * offset labels, 64-bit nodes), else of sizeof(TLabel). (Freeing the input in the timed part where nothing takes
 * its place cost the 4.6e9-voxel volume 5 ms: the memory pool gives freed memory back at the next
 * synchronisation.) */
template <typename TPixel, typename TLabel, typename I, typename V>
uint64_t
RunNodes(const TPixel *                       input,
         const uint8_t *                      mask,
         TLabel *                             labels,
         const Grid &                         grid,
         const ConnectedComponentParameters & parameters,
         ConnectedComponentStatistics *       statistics,
         const ExecutionContext &             context,
         RunInfo *                            info,
         bool                                 offsetLabels)
{
  using detail::DeviceBuffer;
  const uint64_t        n = grid.NumberOfVoxels();
  const cudaStream_t    stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  const auto            progress = [&](float f) {
    if (context.progress)
      context.progress(f);
  };
  detail::MemoryTracker tracker;
  const unsigned        words = static_cast<unsigned>(TileRows(grid));
  const uint64_t        chunks = (uint64_t(words) + kNodeChunkRows - 1) / kNodeChunkRows;
  const I               half = I(words) * kHalfRow;
  const I               base = offsetLabels ? I(uint64_t(words) * kNodesPerRow) : TagBit<I>();
  const bool            wantStats = parameters.computeStatistics && statistics != nullptr;
  const bool            countFirst = wantStats || offsetLabels || sizeof(I) == 8;
  // The labels' buffer comes first, outside the timed kernels, where the slots and masks fit in a label-sized buffer.
  const bool            labelsFirst = uint64_t(words) * (kNodesPerRow * sizeof(I) + sizeof(unsigned)) <= n * sizeof(TLabel);

  detail::PrewakeHostThreads(n * sizeof(TPixel), context); // they start while the device memory is allocated
  auto                   dInput = std::make_unique<DeviceBuffer<TPixel>>(n, stream, &tracker);
  auto                   dMask = std::make_unique<DeviceBuffer<uint8_t>>(mask ? n : 0, stream, &tracker);
  DeviceBuffer<I>        dSlots(uint64_t(words) * kNodesPerRow, stream, &tracker);
  DeviceBuffer<unsigned> dMasks(words, stream, &tracker);
  DeviceBuffer<I>        dChunkCount(chunks, stream, &tracker);
  DeviceBuffer<I>        dChunkOffset(chunks, stream, &tracker);
  std::unique_ptr<detail::RawDeviceBuffer> dLabels;
  if (labelsFirst)
    dLabels = std::make_unique<detail::RawDeviceBuffer>(n * sizeof(TLabel), stream, &tracker);
  detail::CopyToDevice(dInput->get(), input, n * sizeof(TPixel), stream, context);
  if (mask)
    detail::CopyToDevice(dMask->get(), mask, n, stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dChunkCount.get(), 0, chunks * sizeof(I), stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.25f);

  detail::EventTimer timer(stream);
  timer.Start();
  const Extent<I>        e{ static_cast<I>(grid.size[0]), static_cast<I>(grid.size[1]), static_cast<I>(grid.size[2]) };
  const BinaryOp<TPixel> op{ dInput->get(), mask ? dMask->get() : nullptr };
  const auto             merge = [&](auto full, auto tile) {
    LaunchNodeMerge<TPixel, decltype(full)::value, I, V, decltype(tile)>(op, dSlots.get(), dMasks.get(), e,
                                                                          dChunkCount.get(), words, device, stream);
  };
  if (e.nz == 1)
    parameters.fullyConnected ? merge(std::true_type{}, BinaryTile2D{}) : merge(std::false_type{}, BinaryTile2D{});
  else
    parameters.fullyConnected ? merge(std::true_type{}, BinaryTile3D{}) : merge(std::false_type{}, BinaryTile3D{});
  if (!labelsFirst)
  {
    dInput.reset(); // stream-ordered: the memory is free for the labels once the merge is done
    dMask.reset();
  }
  ScanChunkCounts(dChunkCount.get(), dChunkOffset.get(), chunks, stream, tracker);
  unsigned long long count = 0;
  if (countFirst)
  {
    count = ReadObjectCount(dChunkOffset.get(), dChunkCount.get(), chunks, parameters.maximumLabel, stream);
    if (count + 2 > static_cast<unsigned long long>(Sentinel<I>() - base)) // labels up to count + 1 below the sentinel
      throw NodeLabelsDoNotFit{};
  }
  if (!labelsFirst)
    dLabels = std::make_unique<detail::RawDeviceBuffer>(
      n * (countFirst ? TransferWidth<TLabel>(count, parameters.backgroundLabel) : sizeof(TLabel)), stream, &tracker);
  NodeRootLabelKernel<I><<<static_cast<unsigned>(chunks), kNodeRootLabelThreads, 0, stream>>>(
    dSlots.get(), half, base, dChunkOffset.get(), words, parameters.backgroundLabel);
  CHS_CUDA_CHECK_LAUNCH("NodeRootLabelKernel");
  StatisticsBuffers stats(wantStats ? count : 0, stream, tracker);
  const uint64_t    segments = uint64_t(grid.size[1]) * grid.size[2] * ((grid.size[0] + 32 * kTileX - 1) / (32 * kTileX));
  const unsigned    blocks = detail::GridStrideBlocks(segments * 32, kFinalizeThreads, device); // a warp a segment
  const I *         lastOffset = dChunkOffset.get() + chunks - 1;
  const I *         lastCount = dChunkCount.get() + chunks - 1;
  if (wantStats)
    NodeFinalizeKernel<I, TLabel, true><<<blocks, kFinalizeThreads, 0, stream>>>(
      dSlots.get(), half, base, dMasks.get(), dLabels->get(), e, lastOffset, lastCount, parameters.backgroundLabel,
      stats.Pointers());
  else
    NodeFinalizeKernel<I, TLabel, false><<<blocks, kFinalizeThreads, 0, stream>>>(
      dSlots.get(), half, base, dMasks.get(), dLabels->get(), e, lastOffset, lastCount, parameters.backgroundLabel,
      StatisticsPointers{});
  CHS_CUDA_CHECK_LAUNCH("NodeFinalizeKernel");
  timer.Stop();
  detail::PrewakeHostThreads(n * sizeof(TLabel), context); // for the download, while the kernels run
  if (!countFirst)
    count = ReadObjectCount(dChunkOffset.get(), dChunkCount.get(), chunks, parameters.maximumLabel, stream);
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.75f);

  if (wantStats)
    stats.Download(*statistics, count, stream);
  const unsigned width = TransferWidth<TLabel>(count, parameters.backgroundLabel);
  if (width < sizeof(TLabel))
    detail::CopyToHostWidened(labels, sizeof(TLabel), dLabels->get(), width, n, stream, context);
  else
    detail::CopyToHost(labels, dLabels->get(), n * sizeof(TLabel), stream, context);
  progress(1.0f);
  if (info)
  {
    info->kernelMilliseconds = timer.Milliseconds();
    info->peakDeviceBytes = tracker.peak;
  }
  return count;
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

  detail::PrewakeHostThreads(n * sizeof(TPixel), context); // they start while the device memory is allocated
  DeviceBuffer<TPixel> dInput(n, stream, &tracker);
  DeviceBuffer<uint8_t> dMask(mask ? n : 0, stream, &tracker);
  DeviceBuffer<I>       dParent(n, stream, &tracker);
  // Labels narrower than the index type are written in place over the parents (one working buffer instead of
  // two); indices must then leave the top bit free for the tag.
  constexpr bool        narrowLabels = sizeof(TLabel) < sizeof(I);
  const bool            inPlace = narrowLabels && (sizeof(I) == 8 || n <= (uint64_t(1) << 31));
  DeviceBuffer<TLabel>  dLabels(inPlace ? 0 : n, stream, &tracker);
  const uint64_t                   chunks = (n + kChunk - 1) >> kChunkShift;
  DeviceBuffer<I>                  dChunkCount(chunks, stream, &tracker);
  DeviceBuffer<I>                  dChunkOffset(chunks, stream, &tracker);
  detail::CopyToDevice(dInput.get(), input, n * sizeof(TPixel), stream, context);
  if (mask)
    detail::CopyToDevice(dMask.get(), mask, n, stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dChunkCount.get(), 0, chunks * sizeof(I), stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.25f);

  detail::EventTimer timer(stream);
  timer.Start();
  const Extent<I> e{ static_cast<I>(grid.size[0]), static_cast<I>(grid.size[1]), static_cast<I>(grid.size[2]) };
  const uint8_t *  dm = mask ? dMask.get() : nullptr;
  if (parameters.mode == ConnectedComponentMode::Binary)
  {
    const BinaryOp<TPixel> op{ dInput.get(), dm };
    if (parameters.fullyConnected)
      LaunchMerge<BinaryOp<TPixel>, true, I>(op, dParent.get(), e, dChunkCount.get(), stream);
    else
      LaunchMerge<BinaryOp<TPixel>, false, I>(op, dParent.get(), e, dChunkCount.get(), stream);
  }
  else
  {
    const FlatOp<TPixel> op{ dInput.get(), dm };
    if (parameters.fullyConnected)
      LaunchMerge<FlatOp<TPixel>, true, I>(op, dParent.get(), e, dChunkCount.get(), stream);
    else
      LaunchMerge<FlatOp<TPixel>, false, I>(op, dParent.get(), e, dChunkCount.get(), stream);
  }
  ScanChunkCounts(dChunkCount.get(), dChunkOffset.get(), chunks, stream, tracker);
  if (chunks > 0x7fffffffull)
    throw std::invalid_argument("chs: image too large for the root numbering grid");
  // Statistics need the count to size their arrays, so it is read back at once; without them the labels are
  // computed in the device buffers first and the count is read with them, which saves the GPU a wait for a host
  // round trip.
  unsigned long long count = 0;
  const auto         readCount = [&] {
    count = ReadObjectCount(dChunkOffset.get(), dChunkCount.get(), chunks, parameters.maximumLabel, stream);
  };
  const bool wantStats = parameters.computeStatistics && statistics != nullptr;
  if (wantStats || inPlace)
    readCount();
  // In place without statistics, the final link writes the labels in their transfer width into ranges of free
  // memory (PlanLabelRanges); with statistics, or on a tiny image, it resolves over the parents and packs.
  unsigned                width = TransferWidth<TLabel>(count, parameters.backgroundLabel); // once count is read
  std::vector<LabelRange> ranges;
  if (inPlace && !wantStats)
    ranges = PlanLabelRanges<I>(dParent.get(), dInput.get(), n * sizeof(TPixel), n, width);
  // Roots take tagged labels over their parents (the top bit of an index must be free) in place and without
  // statistics; then the final link writes the labels in their transfer width (FinalizeNarrowKernel).
  const bool tagged = inPlace || (!wantStats && (sizeof(I) == 8 || n <= (uint64_t(1) << 31)));
  if (tagged)
    RootLabelKernel<I, TLabel, true><<<static_cast<unsigned>(chunks), kRootLabelThreads, 0, stream>>>(
      dParent.get(), dChunkOffset.get(), nullptr, n, parameters.backgroundLabel);
  else
    RootLabelKernel<I, TLabel, false><<<static_cast<unsigned>(chunks), kRootLabelThreads, 0, stream>>>(
      dParent.get(), dChunkOffset.get(), dLabels.get(), n, parameters.backgroundLabel);
  CHS_CUDA_CHECK_LAUNCH("RootLabelKernel");

  StatisticsBuffers statsBuffers(wantStats ? count : 0, stream, tracker);
  const StatisticsPointers sp = wantStats ? statsBuffers.Pointers() : StatisticsPointers{};
  const unsigned blocks = detail::GridStrideBlocks(n, kFinalizeThreads, device);
  const auto finalize = [&](auto stats) {
    constexpr bool S = decltype(stats)::value;
    if constexpr (narrowLabels)
      if (inPlace)
      {
        if (!ranges.empty())
          LaunchLabelRanges<I, TLabel>(ranges, dParent.get(), width, parameters.backgroundLabel, blocks, stream);
        else
          ResolveInPlaceKernel<I, TLabel, S><<<blocks, kFinalizeThreads, 0, stream>>>(
            dParent.get(), n, e.nx, e.ny, parameters.backgroundLabel, sp);
        return;
      }
    if constexpr (S)
      FinalizeKernel<I, TLabel, S><<<blocks, kFinalizeThreads, 0, stream>>>(
        dParent.get(), dLabels.get(), n, e.nx, e.ny, parameters.backgroundLabel, sp);
    else if (tagged)
      FinalizeNarrowKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(
        dParent.get(), dLabels.get(), n, dChunkOffset.get() + chunks - 1, dChunkCount.get() + chunks - 1,
        parameters.backgroundLabel);
    else
      FinalizeVectorKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(
        dParent.get(), dLabels.get(), n, parameters.backgroundLabel);
  };
  if (wantStats)
    finalize(std::true_type{});
  else
    finalize(std::false_type{});
  CHS_CUDA_CHECK_LAUNCH("FinalizeKernel");
  TLabel * dOut = dLabels.get();
  if constexpr (narrowLabels)
    if (inPlace && ranges.empty())
    {
      PackLabelsInPlace<I, TLabel>(dParent.get(), n, static_cast<TLabel>(parameters.backgroundLabel), device, stream);
      dOut = reinterpret_cast<TLabel *>(dParent.get());
    }
  timer.Stop();
  detail::PrewakeHostThreads(n * sizeof(TLabel), context); // for the download, while the kernels run
  if (!tagged)
  {
    NarrowLabelsKernel<I, TLabel><<<blocks, kFinalizeThreads, 0, stream>>>(
      dLabels.get(), dParent.get(), n, dChunkOffset.get() + chunks - 1, dChunkCount.get() + chunks - 1,
      parameters.backgroundLabel);
    CHS_CUDA_CHECK_LAUNCH("NarrowLabelsKernel");
  }
  if (!wantStats && !inPlace)
  {
    readCount();
    width = TransferWidth<TLabel>(count, parameters.backgroundLabel);
  }
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  progress(0.75f);

  if (wantStats)
    statsBuffers.Download(*statistics, count, stream);
  // Narrow labels are in ranges (in place), in the labels buffer (FinalizeNarrowKernel) or over the parents
  // (NarrowLabelsKernel); packed ones (in place, with statistics) have the labels' own width.
  const void * narrow = tagged ? static_cast<const void *>(dLabels.get()) : static_cast<const void *>(dParent.get());
  if (!ranges.empty())
  {
    for (const LabelRange & r : ranges)
      if (width < sizeof(TLabel))
        detail::CopyToHostWidened(labels + r.begin, sizeof(TLabel), r.device, width, r.end - r.begin, stream, context);
      else
        detail::CopyToHost(labels + r.begin, r.device, (r.end - r.begin) * sizeof(TLabel), stream, context);
  }
  else if (width < sizeof(TLabel) && !inPlace)
    detail::CopyToHostWidened(labels, sizeof(TLabel), narrow, width, n, stream, context);
  else
    detail::CopyToHost(labels, dOut, n * sizeof(TLabel), stream, context);
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
  if (parameters.mode == ConnectedComponentMode::Binary)
  {
    // Nodes: 32-bit below 2^31 (labels above the tag bit), 32-bit with offset labels below 2^32 (the voxel indices
    // are 64-bit there), else 64-bit; forceWideIndex and forceOffsetLabels take the wider ones on small images.
    const uint64_t nodes = cc::TileRows(grid) * cc::kNodesPerRow;
    const bool     wide = nodes > 0xffffffffull - 64 || parameters.forceWideIndex;
    const bool     offset = !wide && (nodes > (uint64_t(1) << 31) - 64 || parameters.forceOffsetLabels);
    const auto     run = [&](auto node, auto voxel, bool offsetLabels) {
      return cc::RunNodes<TPixel, TLabel, decltype(node), decltype(voxel)>(input, mask, labels, grid, parameters,
                                                                           statistics, context, info, offsetLabels);
    };
    if (!wide && cc::NodePathFits(grid, sizeof(TPixel), sizeof(TLabel), 4))
    {
      if (!offset)
        return run(uint32_t{}, uint32_t{}, false);
      try
      {
        return run(uint32_t{}, uint64_t{}, true);
      }
      catch (const cc::NodeLabelsDoNotFit &)
      {} // too many objects for offset labels: 64-bit nodes
    }
    if (cc::NodePathFits(grid, sizeof(TPixel), sizeof(TLabel), 8))
      return run((unsigned long long){}, uint64_t{}, false);
  }
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
