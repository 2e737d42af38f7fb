// Device helpers shared by the module's kernels: the lock-free union-find (find with path halving, union by
// atomicMin so that the root of a set is its smallest element whatever the thread order), warp-aggregated appends
// a NaN search, a warp's work queue, and the loop over a pixel's neighbours.
#ifndef chsDeviceHelpers_cuh
#define chsDeviceHelpers_cuh

#include "chsCudaCommon.cuh"
#include "chsPixelChecks.h"

#include <algorithm>

namespace chs
{

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

/** The root of x in a forest of parent pointers that does not change while threads follow it (path halving). The
 * halving stores may be undone by slower threads' stores of other ancestors, so the root is returned, not stored in
 * P: a caller that wrote it into P could find an intermediate ancestor there later. */
__device__ __forceinline__ uint32_t
FollowToRoot(uint32_t * P, uint32_t x)
{
  volatile uint32_t * L = P;
  uint32_t            r = x;
  for (;;)
  {
    const uint32_t p = L[r];
    if (p == r)
      return r;
    const uint32_t gp = L[p];
    if (gp == p)
      return p;
    L[r] = gp;
    r    = gp;
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
      a         = b;
      b         = t;
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

/** Calls f(dx, dy, dz) for every neighbour offset of the connectivity (dz = 0 only when ZR is 0), in a fixed order
 * that unrolls to constants. */
template <bool Full, int ZR, class F>
__device__ __forceinline__ void
ForNeighbours(F && f)
{
#pragma unroll
  for (int dz = -ZR; dz <= ZR; ++dz)
#pragma unroll
    for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
      for (int dx = -1; dx <= 1; ++dx)
      {
        const int m = (dx != 0) + (dy != 0) + (dz != 0);
        if (m == 0 || (!Full && m > 1))
          continue;
        f(dx, dy, dz);
      }
}

/** Calls f(p, x, y, z) for every voxel p = (x, y, z) of o's image, grid-stride, in o's order (detail::VoxelOrder):
 * in cubes of 64^3 voxels, item i of the loop is voxel i mod 2^18 of cube i / 2^18 (a warp's 32 lanes hold 32
 * consecutive voxels of a row), and items outside the image are skipped; in raster order, item i is voxel i. */
template <class F>
__device__ __forceinline__ void
ForEachVoxel(const detail::VoxelOrder & o, F && f)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  if (o.cx == 0)
  {
    const uint64_t n = uint64_t(o.nx) * o.ny * o.nz;
    for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += stride)
    {
      const uint64_t row = i / o.nx, z = row / o.ny;
      f(i, uint32_t(i - row * o.nx), uint32_t(row - z * o.ny), uint32_t(z));
    }
    return;
  }
  const uint64_t items = (uint64_t(o.cx) * o.cy * o.cz) << 18;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < items; i += stride)
  {
    const uint32_t c = uint32_t(i >> 18), w = uint32_t(i) & 0x3ffffu;
    const uint32_t cyz = c / o.cx, cz = cyz / o.cy;
    const uint32_t x = (c - cyz * o.cx) * 64 + (w & 63), y = (cyz - cz * o.cy) * 64 + ((w >> 6) & 63);
    const uint32_t z = cz * 64 + (w >> 12);
    if (x < o.nx && y < o.ny && z < o.nz)
      f((uint64_t(z) * o.ny + y) * o.nx + x, x, y, z);
  }
}

/** Shortens the paths of a forest of pointers over the voxels of an nx x ny x nz image inside each tile of
 * TX x TY x TZ (4096) voxels: every voxel gets the parent of the last voxel of its path that lies in its tile (a root,
 * which points to itself, keeps itself). Pointer jumping in shared memory until nothing changes (at most 12 jumps):
 * finds and path reductions over the result then hop a tile at a time. `root` may be `parent` itself (the last voxel
 * of a path in the tile keeps its parent, so every value read is as it was). */
template <int TX, int TY, int TZ, typename P>
__global__ void __launch_bounds__(1024)
  ShortcutKernel(const P * parent, P * root, uint32_t nx, uint32_t ny, uint32_t nz, uint32_t layer0)
{
  constexpr int N = TX * TY * TZ;
  static_assert(N % 1024 == 0 && N <= 32768, "whole voxels a thread, 16-bit local indices");
  __shared__ int16_t next[N]; // local index of the parent inside the tile; itself at a root or where the path leaves
  const int          ox     = int(blockIdx.x) * TX;
  const int          oy     = int(blockIdx.y + (TZ == 1 ? layer0 : 0u)) * TY;
  const int          oz     = int(blockIdx.z + (TZ == 1 ? 0u : layer0)) * TZ;
  const auto         global = [&](int i, uint64_t & g)
  {
    const int x = ox + i % TX, y = oy + i / TX % TY, z = oz + i / (TX * TY);
    g = (uint64_t(z) * ny + unsigned(y)) * nx + unsigned(x);
    return x < int(nx) && y < int(ny) && z < int(nz);
  };
  for (int i = threadIdx.x; i < N; i += 1024)
  {
    uint64_t g;
    int      n = i;
    if (global(i, g))
    {
      const P   p   = parent[g];
      const P   row = p / nx;
      const int px = int(p - row * nx), py = int(row % ny), pz = int(row / ny);
      if (px >= ox && px < ox + TX && py >= oy && py < oy + TY && pz >= oz && pz < oz + TZ)
        n = ((pz - oz) * TY + (py - oy)) * TX + (px - ox);
    }
    next[i] = int16_t(n);
  }
  __syncthreads();
  for (bool changed = true; changed;)
  {
    int16_t jumped[N / 1024];
    bool    moved = false;
#pragma unroll
    for (int j = 0; j < N / 1024; ++j)
    {
      const int i = threadIdx.x + 1024 * j;
      jumped[j]   = next[next[i]];
      moved       = moved || jumped[j] != next[i];
    }
    changed = __syncthreads_or(moved);
#pragma unroll
    for (int j = 0; j < N / 1024; ++j)
      next[threadIdx.x + 1024 * j] = jumped[j];
    __syncthreads();
  }
  for (int i = threadIdx.x; i < N; i += 1024)
  {
    uint64_t g, last;
    if (global(i, g))
    {
      global(next[i], last);
      root[g] = parent[last];
    }
  }
}

/** The layers (rows in 2D, slices in 3D) that a tile of ShortcutPaths spans along the image's last axis. */
inline uint32_t
ShortcutTileLayers(uint32_t nz)
{
  return nz > 1 ? 16 : 64;
}

/** ShortcutKernel over the image: tiles of 16^3 voxels in 3D (nz > 1), of 64 x 64 pixels in 2D; with `layer0` and
 * `layers`, only the tiles of those layers of tiles along the last axis (each ShortcutTileLayers(nz) layers of
 * voxels): a tile reads and writes the pointers of its own voxels only. */
template <typename P>
void
ShortcutPaths(const P *    parent,
              P *          root,
              uint32_t     nx,
              uint32_t     ny,
              uint32_t     nz,
              cudaStream_t stream,
              uint32_t     layer0 = 0,
              uint32_t     layers = ~0u)
{
  const uint32_t t = ShortcutTileLayers(nz), all = ((nz > 1 ? nz : ny) + t - 1) / t;
  if (layer0 >= all)
    return;
  const uint32_t count = std::min(layers, all - layer0);
  if (count == 0)
    return;
  if (nz > 1)
    ShortcutKernel<16, 16, 16>
      <<<dim3((nx + 15) / 16, (ny + 15) / 16, count), 1024, 0, stream>>>(parent, root, nx, ny, nz, layer0);
  else
    ShortcutKernel<64, 64, 1><<<dim3((nx + 63) / 64, count, 1), 1024, 0, stream>>>(parent, root, nx, ny, nz, layer0);
  CHS_CUDA_CHECK_LAUNCH("ShortcutKernel");
}

/** Copies one value from the device and waits for it. */
template <typename T>
void
ReadBack(T & host, const T * device, cudaStream_t stream)
{
  detail::ReadBackBytes(&host, device, sizeof(T), stream);
}

/** With TInfinite, NaN and infinities are bad (v - v is NaN for both), else NaN only. */
template <bool TInfinite, typename T>
static __global__ void
FindNaNKernel(const T * p, uint64_t count, unsigned long long * first)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    if (TInfinite ? !(p[i] - p[i] == T(0)) : p[i] != p[i])
      atomicMin(first, (unsigned long long)i);
}

/** The first NaN (with `infinite`: the first NaN or infinite value) among `count` values, or count. */
template <typename T>
uint64_t
FirstNaN(const T *               d,
         uint64_t                count,
         cudaStream_t            stream,
         detail::MemoryTracker & tracker,
         int                     device,
         bool                    infinite = false)
{
  detail::DeviceBuffer<unsigned long long> first(1, stream, &tracker);
  const unsigned long long                 none = count;
  CHS_CUDA_CHECK(cudaMemcpyAsync(first.get(), &none, sizeof(none), cudaMemcpyHostToDevice, stream));
  const unsigned blocks = detail::GridStrideBlocks(count, 256, device);
  if (infinite)
    FindNaNKernel<true><<<blocks, 256, 0, stream>>>(d, count, first.get());
  else
    FindNaNKernel<false><<<blocks, 256, 0, stream>>>(d, count, first.get());
  CHS_CUDA_CHECK_LAUNCH("FindNaNKernel");
  unsigned long long host = 0;
  ReadBack(host, first.get(), stream);
  return host;
}

/** Image graphs (alpha-trees, single linkage) weigh edges |a - b|: NaN and infinite pixels are refused (inf - inf is
 * NaN), naming the first such pixel of `n` pixels of `c` components. */
template <typename T>
void
CheckFinitePixels(const T * d, uint64_t n, unsigned c, cudaStream_t stream, detail::MemoryTracker & tracker, int device)
{
  const uint64_t bad = FirstNaN(d, n * c, stream, tracker, device, true);
  if (bad == n * c)
    return;
  T value{};
  CHS_CUDA_CHECK(cudaMemcpyAsync(&value, d + bad, sizeof(T), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  throw std::invalid_argument(NonFinitePixelMessage(bad / c, value != value));
}

/** A slot in an array that the lanes where `keep` holds append to, with one atomic on `count` per warp; lanes
 * that keep nothing get an unspecified value. */
template <typename TCount>
__device__ __forceinline__ TCount
WarpSlot(bool keep, TCount * count)
{
  const unsigned active = __activemask();
  const unsigned want   = __ballot_sync(active, keep);
  if (want == 0)
    return 0;
  const int lane   = threadIdx.x & 31;
  const int leader = __ffs(want) - 1;
  TCount    base   = 0;
  if (lane == leader)
    base = atomicAdd(count, TCount(__popc(want)));
  base = __shfl_sync(active, base, leader);
  return base + __popc(want & ((1u << lane) - 1u));
}

/** atomicCAS on 32-bit or 64-bit ids. */
__device__ __forceinline__ uint32_t
AtomicCasId(uint32_t * p, uint32_t expected, uint32_t desired)
{
  return atomicCAS(p, expected, desired);
}
__device__ __forceinline__ uint64_t
AtomicCasId(uint64_t * p, uint64_t expected, uint64_t desired)
{
  return atomicCAS(reinterpret_cast<unsigned long long *>(p),
                   static_cast<unsigned long long>(expected),
                   static_cast<unsigned long long>(desired));
}

/** Unites the sets of u and v in a union-find (ids of TId, 32 or 64 bits) whose root is the first of its set by
 * `before` (a strict order): the later of the two roots is linked under the earlier by CAS, and a root linked
 * meanwhile by another thread is united again from where it went. Returns the root that was linked, or `none` when u
 * and v were in one set already. */
template <typename T>
struct NotDeduced
{
  using type = T;
};

template <typename TId, typename TFind, typename TBefore>
__device__ __forceinline__ TId
UniteByCas(TId *                          uf,
           typename NotDeduced<TId>::type u,
           typename NotDeduced<TId>::type v,
           typename NotDeduced<TId>::type none,
           TFind                          find,
           TBefore                        before)
{
  for (;;)
  {
    TId       x = find(u);
    const TId y = find(v);
    if (x == y)
      return none;
    if (before(x, y))
    {
      u = x;
      x = y;
    }
    else
      u = y;
    // x: the later root, u: the earlier
    if (AtomicCasId(uf + x, x, u) == x)
      return x;
    v = x; // x was linked meanwhile: unite its set with u's
  }
}

/** Appends `item` to out[*count] for the lanes where `keep` holds, with one atomic per warp. */
template <typename T>
__device__ __forceinline__ void
WarpAppend(bool keep, const T & item, T * out, unsigned long long * count)
{
  const unsigned long long slot = WarpSlot(keep, count);
  if (keep)
    out[slot] = item;
}

/** The sum of `value` over the 32 lanes, in every lane (all lanes call it): one instruction from sm_80, shuffles
 * before (sm_75, the oldest default architecture). */
__device__ __forceinline__ unsigned
WarpSum(unsigned value)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xffffffffu, value);
#else
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
#endif
}

/** Adds the warp's values to *count with one atomic (every lane of the warp calls it). */
__device__ __forceinline__ void
WarpAdd(unsigned value, unsigned long long * count)
{
  value = WarpSum(value);
  if ((threadIdx.x & 31u) == 0 && value)
    atomicAdd(count, (unsigned long long)value);
}

/** WarpSlot with one atomic on `count` per block instead of per warp (one counter that every warp of a large grid
 * appends to is a point of contention: 500,000 atomics on one address take about 0.3 ms). Every thread of the block
 * must call it (blockDim.x a multiple of 32); lanes that keep nothing get an unspecified value. */
template <typename TCount>
__device__ __forceinline__ TCount
BlockSlot(bool keep, TCount * count)
{
  __shared__ TCount   sBase;
  __shared__ unsigned sWarp[32];
  const unsigned      lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const unsigned      want = __ballot_sync(0xffffffffu, keep);
  if (lane == 0)
    sWarp[warp] = unsigned(__popc(want));
  __syncthreads();
  if (warp == 0)
  {
    // Warp 0 turns the warps' counts into offsets and reserves the block's slots.
    const unsigned own       = lane < warps ? sWarp[lane] : 0u;
    unsigned       inclusive = own;
    for (int o = 1; o < 32; o <<= 1)
    {
      const unsigned t = __shfl_up_sync(0xffffffffu, inclusive, o);
      if (int(lane) >= o)
        inclusive += t;
    }
    if (lane < warps)
      sWarp[lane] = inclusive - own;
    if (lane == 31)
      sBase = inclusive ? atomicAdd(count, TCount(inclusive)) : TCount(0);
  }
  __syncthreads();
  const TCount slot = sBase + sWarp[warp] + unsigned(__popc(want & ((1u << lane) - 1u)));
  __syncthreads(); // the shared values serve the next call
  return slot;
}

/** Appends `item` where `keep` holds, with BlockSlot: every thread of the block calls it. */
template <typename T>
__device__ __forceinline__ void
BlockAppend(bool keep, const T & item, T * out, unsigned long long * count)
{
  const unsigned long long slot = BlockSlot(keep, count);
  if (keep)
    out[slot] = item;
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

} // namespace chs

#endif
