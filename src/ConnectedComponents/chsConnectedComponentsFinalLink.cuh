// Connected components, stage 4: the final link. Every voxel takes its root's label: FinalizeKernel (with per-label
// statistics), FinalizeNarrowKernel (labels written in the narrowest width that holds them, for the download),
// NarrowLabelsKernel, the ranges of labels written into freed memory (PlanLabelRanges) and the labels written in
// place over the parents (PackLabelsInPlace).
#ifndef chsCCFinalLink_cuh
#define chsCCFinalLink_cuh

#include "chsConnectedComponentsCommon.cuh"
#include "chsConnectedComponentsRootNumbering.cuh"
#include <vector>

namespace chs
{
namespace cc
{

struct StatisticsPointers
{
  unsigned long long * count   = nullptr;
  unsigned *           minimum = nullptr;
  unsigned *           maximum = nullptr;
  unsigned long long * sum     = nullptr; // coordinate sums, 3 a label
};

/** The sum of v over the lanes of `peers` (the calling lane's group of __match_any_sync), exact in 64 bits. Every
 * lane of the warp calls it, each with its own group. */
__device__ __forceinline__ unsigned long long
PeerSum(unsigned peers, unsigned v)
{
#if __CUDA_ARCH__ >= 800
  // Halves of 16 bits: 32 lanes of them cannot overflow 32 bits.
  const unsigned lo = __reduce_add_sync(peers, v & 0xffffu);
  const unsigned hi = __reduce_add_sync(peers, v >> 16);
  return (static_cast<unsigned long long>(hi) << 16) + lo;
#else
  unsigned long long s = 0;
  for (int l = 0; l < 32; ++l)
  {
    const unsigned w = __shfl_sync(0xffffffffu, v, l);
    if ((peers >> l) & 1u)
      s += w;
  }
  return s;
#endif
}

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
AccumulateStatistics(TLabel                     label,
                     bool                       foreground,
                     uint64_t                   i,
                     I                          nx,
                     I                          ny,
                     long long                  background,
                     const StatisticsPointers & stats)
{
  const unsigned long long lab = static_cast<unsigned long long>(label);
  const unsigned long long k   = (background >= 0 && lab > static_cast<unsigned long long>(background)) ? lab - 1 : lab;
  const unsigned long long key = foreground ? k : ~0ull;
  const unsigned           peers = __match_any_sync(0xffffffffu, key);
  const unsigned           lane  = threadIdx.x & 31;
  if (stats.minimum == nullptr) // the voxel counts alone (uniform across the warp)
  {
    if (foreground && (__ffs(peers) - 1) == int(lane))
      atomicAdd(stats.count + k, static_cast<unsigned long long>(__popc(peers)));
    return;
  }
  const I                  row = static_cast<I>(i) / nx;
  const unsigned           x   = foreground ? static_cast<unsigned>(static_cast<I>(i) - row * nx) : 0u;
  const unsigned           y   = foreground ? static_cast<unsigned>(row % ny) : 0u;
  const unsigned           z   = foreground ? static_cast<unsigned>(row / ny) : 0u;
  const unsigned long long sx  = PeerSum(peers, x);
  const unsigned long long sy  = PeerSum(peers, y);
  const unsigned long long sz  = PeerSum(peers, z);
  if (!foreground)
    return;
  if ((__ffs(peers) - 1) == int(lane))
  {
    atomicAdd(stats.count + k, static_cast<unsigned long long>(__popc(peers)));
    atomicAdd(stats.sum + 3 * k + 0, sx);
    atomicAdd(stats.sum + 3 * k + 1, sy);
    atomicAdd(stats.sum + 3 * k + 2, sz);
  }
  // Only the ends of a run of the same label in one row touch the bounding box.
  const bool first = lane == 0 || !((peers >> (lane - 1)) & 1u) || x == 0;
  const bool last  = lane == 31 || !((peers >> (lane + 1)) & 1u) || x + 1 == nx;
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
__global__ void
__launch_bounds__(kFinalizeThreads) FinalizeKernel(const I *          parent,
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
      p[k]             = i < n ? parent[i] : Sentinel<I>();
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k)
      pr[k] = p[k] != Sentinel<I>() ? parent[p[k]] : Sentinel<I>();
#pragma unroll
    for (int k = 0; k < kItems; ++k)
    {
      const uint64_t i          = base + uint64_t(k) * blockDim.x + threadIdx.x;
      const bool     foreground = p[k] != Sentinel<I>();
      TLabel         label      = static_cast<TLabel>(background);
      if (foreground)
      {
        I r    = p[k];
        I next = pr[k];
        while (next != r)
        {
          r    = next;
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
__global__ void
__launch_bounds__(kFinalizeThreads)
  FinalizeVectorKernel(const I * parent, TLabel * labels, uint64_t n, long long background)
{
  constexpr int  V       = 16 / sizeof(I);
  const uint64_t vectors = (n + V - 1) / V;
  for (uint64_t t = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < vectors; t += uint64_t(gridDim.x) * blockDim.x)
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
  const unsigned long long bg  = static_cast<unsigned long long>(static_cast<TLabel>(background));
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
  constexpr int V        = 16 / sizeof(TLabel);
  using Store            = typename VectorOfBytes<V * sizeof(TNarrow)>::Type;
  const uint64_t vectors = n / V;
  const uint64_t stride  = uint64_t(gridDim.x) * blockDim.x;
  const uint64_t first   = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
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
__global__ void
__launch_bounds__(kFinalizeThreads) NarrowLabelsKernel(const TLabel * labels,
                                                       void *         narrow,
                                                       uint64_t       n,
                                                       const I *      lastOffset,
                                                       const I *      lastCount,
                                                       long long      background)
{
  const unsigned width = TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
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
  constexpr int V            = 16 / sizeof(I);
  constexpr int kStoreBytes  = V * sizeof(TNarrow) <= 16 ? V * sizeof(TNarrow) : 16; // 8-byte labels, 4-byte index:
  using Store                = typename VectorOfBytes<kStoreBytes>::Type;            // two stores
  const uint64_t firstVector = begin / V;
  const uint64_t vectors     = (end + V - 1) / V;
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
__global__ void
__launch_bounds__(kFinalizeThreads) FinalizeNarrowKernel(const I * parent,
                                                         void *    labels,
                                                         uint64_t  n,
                                                         const I * lastOffset,
                                                         const I * lastCount,
                                                         long long background)
{
  const unsigned width = TransferWidth<TLabel>(static_cast<unsigned long long>(*lastOffset) + *lastCount, background);
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
__global__ void
__launch_bounds__(kFinalizeThreads)
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
  uint64_t                top      = n;
  void *                  space    = input;
  uint64_t                capacity = inputBytes;
  while (top > 0)
  {
    const uint64_t fits  = std::min<uint64_t>(top, capacity / width);
    const uint64_t begin = fits == top ? 0 : (top - fits + 15) / 16 * 16; // vectors of parents stay whole
    if (begin >= top)
      return {};
    ranges.push_back(LabelRange{ begin, top, space });
    space    = reinterpret_cast<char *>(parent) + begin * sizeof(I);
    capacity = (top - begin) * sizeof(I);
    top      = begin;
  }
  return ranges;
}

template <typename I, typename TLabel>
void
LaunchLabelRanges(const std::vector<LabelRange> & ranges,
                  const I *                       parent,
                  unsigned                        width,
                  long long                       background,
                  unsigned                        maxBlocks,
                  cudaStream_t                    stream)
{
  for (const LabelRange & r : ranges)
  {
    const uint64_t vectors = (r.end - r.begin) / (16 / sizeof(I)) + 1;
    const unsigned blocks =
      static_cast<unsigned>(std::min<uint64_t>(maxBlocks, (vectors + kFinalizeThreads - 1) / kFinalizeThreads));
    if (width == 1)
      FinalizeRangeKernel<I, uint8_t>
        <<<blocks, kFinalizeThreads, 0, stream>>>(parent, static_cast<uint8_t *>(r.device), r.begin, r.end, background);
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

// ---- Labels written in place over the parents (labels narrower than the index type) ---------------------------
// The parent array is the only label-sized working buffer: (1) each root takes its tagged label
// (RootLabelKernel<..., true>), (2) every voxel takes its root's tagged label, (3) the index-wide tagged labels are
// packed into label-wide ones from the front of the same buffer, in ranges whose writes land only on elements
// already read.

template <typename I, typename TLabel, bool Stats>
__global__ void
__launch_bounds__(kFinalizeThreads)
  ResolveInPlaceKernel(I * parent, uint64_t n, I nx, I ny, long long background, StatisticsPointers stats)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t base = uint64_t(blockIdx.x) * blockDim.x; base < n; base += stride)
  {
    const uint64_t i          = base + threadIdx.x;
    const I        v          = i < n ? parent[i] : Sentinel<I>();
    const bool     foreground = v != Sentinel<I>();
    TLabel         label      = static_cast<TLabel>(background);
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
__global__ void
__launch_bounds__(kFinalizeThreads) PackLabelsKernel(void * buffer, uint64_t begin, uint64_t end, TLabel background)
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
  constexpr uint64_t ratio     = sizeof(I) / sizeof(TLabel);
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

} // namespace cc
} // namespace chs

#endif
