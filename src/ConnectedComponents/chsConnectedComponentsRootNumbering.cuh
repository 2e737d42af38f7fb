// Connected components, stage 3: root numbering (RootLabelKernel). After a scan of the chunk counts, every root
// takes its rank among the roots in raster order, mapped to ITK's label numbering.
#ifndef chsCCRootNumbering_cuh
#define chsCCRootNumbering_cuh

#include "chsConnectedComponentsCommon.cuh"

namespace chs
{
namespace cc
{

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
__global__ void
__launch_bounds__(kRootLabelThreads)
  RootLabelKernel(I * parent, const I * chunkOffset, TLabel * labels, uint64_t n, long long background)
{
  constexpr int V       = 16 / sizeof(I);
  constexpr int kRounds = kChunk / (kRootLabelThreads * V);
  constexpr int kWarps  = kRootLabelThreads / 32;
  static_assert(kRounds * kRootLabelThreads * V == kChunk, "rounds cover the chunk");
  __shared__ unsigned warpTotals[kRounds][kWarps];
  const int           lane = threadIdx.x & 31;
  const int           warp = threadIdx.x >> 5;
  const uint64_t      base = uint64_t(blockIdx.x) << kChunkShift;

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
    const unsigned c         = __popc(roots[j]);
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
    unsigned k    = 0;
    while (bits)
    {
      const int                e     = __ffs(bits) - 1;
      const uint64_t           i     = base + uint64_t(V) * (j * kRootLabelThreads + threadIdx.x) + e;
      const unsigned long long r     = rank + earlierWarps + before[j] + k; // 0-based
      const bool               skip  = background >= 0 && r >= static_cast<unsigned long long>(background);
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

} // namespace cc
} // namespace chs

#endif
