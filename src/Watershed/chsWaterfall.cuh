// Waterfall levels on the device, on the pixels: the lowest pass of every region (LowestPassKernel, the paper's step
// V), the joins across lowest passes (JoinKernel, a union-find over the regions), and the new labels
// (RegionRootKernel, RootFlagKernel and a scan of the roots, MapKernel, RelabelKernel); or on the region graph of
// level 0 (the Edge kernels below), which gives the same levels with less work once the regions are large. Region
// labels are 32-bit; voxel indices are of type P (uint32_t, or 64-bit from 2^32 - 1 voxels on).
#ifndef chsWSWaterfall_cuh
#define chsWSWaterfall_cuh

#include "chsWatershedCommon.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

namespace chs
{
namespace ws
{

/** pass(r) = min over neighbouring pixels p in region r and q outside it of max(I(p), I(q)), as a code widened to
 * 32 or 64 bits (W) for the atomics; pass is all ones before. */
template <bool Full, int ZR, typename C, typename W, typename P>
__global__ void
LowestPassKernel(const C * I, ShapeT<P> s, const uint32_t * label, W * pass)
{
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t l   = label[p];
                 const C        v   = I[p];
                 W              own = ~W(0);
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](P q)
                                                  {
                                                    const uint32_t lq = label[q];
                                                    if (lq == l)
                                                      return;
                                                    const C c = I[q];
                                                    const W h = W(c > v ? c : v);
                                                    own       = h < own ? h : own;
                                                    atomicMin(pass + lq, h);
                                                  });
                 if (own != ~W(0))
                   atomicMin(pass + l, own);
               });
}

/** P(r) = r for the regions 0 .. count - 1 (region 0 is unused). */
static __global__ void
IdentityKernel(uint32_t * P, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    P[i] = uint32_t(i);
}

/** Unites the regions of every boundary pair whose height is the lowest pass of one of them. */
template <bool Full, int ZR, typename C, typename W, typename P>
__global__ void
JoinKernel(const C * I, ShapeT<P> s, const uint32_t * label, const W * pass, uint32_t * parent)
{
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t l   = label[p];
                 const C        v   = I[p];
                 const W        own = pass[l];
                 ForEachNeighbour<Full, ZR, true>(s,
                                                  x,
                                                  y,
                                                  z,
                                                  p,
                                                  [&](P q)
                                                  {
                                                    const uint32_t lq = label[q];
                                                    if (lq == l)
                                                      return;
                                                    const C c = I[q];
                                                    const W h = W(c > v ? c : v);
                                                    if (h == own || h == pass[lq])
                                                      Unite<uint32_t>(parent, l, lq);
                                                  });
               });
}

/** P(r) = the root of r (the smallest region of its union). */
static __global__ void
RegionRootKernel(uint32_t * P, uint32_t count)
{
  const volatile uint32_t * V = P;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    uint32_t r = V[i];
    for (;;)
    {
      const uint32_t next = V[r];
      if (next == r)
        break;
      r = next;
    }
    P[i] = r;
  }
}

/** flag(r) = 1 for the roots among regions 1 .. count - 1, else 0. */
static __global__ void
RootFlagKernel(const uint32_t * P, uint32_t count, uint32_t * flag)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    flag[i] = i > 0 && P[i] == uint32_t(i) ? 1u : 0u;
}

/** P(r) = rank(P(r)), the new label of region r (rank: the inclusive count of roots). */
static __global__ void
MapKernel(uint32_t * P, const uint32_t * rank, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    P[i] = rank[P[i]];
}

template <typename P>
__global__ void
RelabelKernel(uint32_t * label, const uint32_t * map, ShapeT<P> s)
{
  ForEachPixel(s, [&](P p, uint32_t, uint32_t, uint32_t) { label[p] = map[label[p]]; });
}

// The levels on the region graph: the boundaries between the regions of level 0, one edge per pixel and other region
// among its forward neighbours, at the lowest height of those pairs (EdgeCountKernel, EdgeWriteKernel). A region's
// lowest pass is the lowest of its edges (EdgePassKernel), and two regions join when an edge between them is at the
// lowest pass of either (EdgeJoinKernel): the pixel kernels' rule, as an edge stands for its pairs' lowest height and
// no pair of a region is below its pass. After each level the edges take the new labels and those inside a region
// are dropped (EdgeMapKernel, then CUB's in-place select), so the levels shrink with the regions.

/** An edge of the region graph: regions a and b (a != b), the lowest height w of the pairs it stands for. */
template <typename W>
struct RegionEdge
{
  uint32_t a, b;
  W        w;
};

/** Forward neighbours of a pixel: 2 and 4 in 2D, 3 and 13 in 3D. */
template <bool Full, int ZR>
constexpr int kForward = ZR ? (Full ? 13 : 3) : (Full ? 4 : 2);

/** The other regions among pixel p's forward neighbours (into r), each with the lowest height of p's pairs with it
 * (into h); returns how many. */
template <bool Full, int ZR, typename C, typename W, typename P>
__device__ __forceinline__ int
Boundaries(const C *         I,
           const ShapeT<P> & s,
           const uint32_t *  label,
           uint64_t          i,
           uint32_t (&r)[kForward<Full, ZR>],
           W (&h)[kForward<Full, ZR>])
{
  if (i >= s.n)
    return 0;
  const P        p   = P(i);
  const P        row = p / s.nx;
  const uint32_t x = uint32_t(p - row * s.nx), y = uint32_t(row % s.ny), z = uint32_t(row / s.ny);
  const uint32_t l = label[p];
  const C        v = I[p];
  int            m = 0;
  ForEachNeighbour<Full, ZR, true>(s,
                                   x,
                                   y,
                                   z,
                                   p,
                                   [&](P q)
                                   {
                                     const uint32_t lq = label[q];
                                     if (lq == l)
                                       return;
                                     const C c  = I[q];
                                     const W hq = W(c > v ? c : v);
                                     for (int j = 0; j < m; ++j)
                                       if (r[j] == lq)
                                       {
                                         h[j] = hq < h[j] ? hq : h[j];
                                         return;
                                       }
                                     r[m] = lq;
                                     h[m] = hq;
                                     ++m;
                                   });
  return m;
}

/** counts(b) = the edges of block b's 256 pixels. */
template <bool Full, int ZR, typename C, typename W, typename P>
__global__ void
EdgeCountKernel(const C * I, ShapeT<P> s, const uint32_t * label, uint64_t * counts)
{
  using Reduce = cub::BlockReduce<uint32_t, 256>;
  __shared__ typename Reduce::TempStorage temp;
  uint32_t                                r[kForward<Full, ZR>];
  W                                       h[kForward<Full, ZR>];
  const uint32_t m     = Boundaries<Full, ZR, C, W, P>(I, s, label, blockIdx.x * 256ull + threadIdx.x, r, h);
  const uint32_t total = Reduce(temp).Sum(m);
  if (threadIdx.x == 0)
    counts[blockIdx.x] = total;
}

/** Writes the edges in raster order of their pixels; ends(b) = the edges of blocks 0 .. b (inclusive sum). */
template <bool Full, int ZR, typename C, typename W, typename P>
__global__ void
EdgeWriteKernel(const C * I, ShapeT<P> s, const uint32_t * label, const uint64_t * ends, RegionEdge<W> * edges)
{
  using Scan = cub::BlockScan<uint32_t, 256>;
  __shared__ typename Scan::TempStorage temp;
  uint32_t                              r[kForward<Full, ZR>];
  W                                     h[kForward<Full, ZR>];
  const uint64_t                        i = blockIdx.x * 256ull + threadIdx.x;
  const uint32_t                        m = Boundaries<Full, ZR, C, W, P>(I, s, label, i, r, h);
  uint32_t                              offset;
  Scan(temp).ExclusiveSum(m, offset);
  RegionEdge<W> * out = edges + (blockIdx.x ? ends[blockIdx.x - 1] : 0) + offset;
  const uint32_t  l   = m ? label[P(i)] : 0;
  for (uint32_t j = 0; j < m; ++j)
    out[j] = RegionEdge<W>{ l, r[j], h[j] };
}

/** pass(r) = the lowest edge of region r; pass is all ones before. */
template <typename W>
__global__ void
EdgePassKernel(const RegionEdge<W> * edges, uint64_t count, W * pass)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const RegionEdge<W> e = edges[i];
    atomicMin(pass + e.a, e.w);
    atomicMin(pass + e.b, e.w);
  }
}

/** Unites the regions of every edge at the lowest pass of one of them. */
template <typename W>
__global__ void
EdgeJoinKernel(const RegionEdge<W> * edges, uint64_t count, const W * pass, uint32_t * P)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const RegionEdge<W> e = edges[i];
    if (e.w == pass[e.a] || e.w == pass[e.b])
      Unite<uint32_t>(P, e.a, e.b);
  }
}

/** The edges take the next level's labels (map: region -> new label). */
template <typename W>
__global__ void
EdgeMapKernel(RegionEdge<W> * edges, uint64_t count, const uint32_t * map)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
  {
    RegionEdge<W> & e = edges[i];
    e.a               = map[e.a];
    e.b               = map[e.b];
  }
}

/** CUB's select: the edges between two regions. */
struct BetweenRegions
{
  template <typename W>
  __device__ __forceinline__ bool
  operator()(const RegionEdge<W> & e) const
  {
    return e.a != e.b;
  }
};

/** M(r) = map(M(r)) for the level-0 regions r: each one's label at the new level. */
static __global__ void
ComposeKernel(uint32_t * M, const uint32_t * map, uint32_t count)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < count; i += uint64_t(gridDim.x) * blockDim.x)
    M[i] = map[M[i]];
}

/** out(p) = M(label(p)): a level's labels from level 0's. */
template <typename P>
__global__ void
LevelLabelsKernel(const uint32_t * label, const uint32_t * M, ShapeT<P> s, uint32_t * out)
{
  ForEachPixel(s, [&](P p, uint32_t, uint32_t, uint32_t) { out[p] = M[label[p]]; });
}

} // namespace ws
} // namespace chs

#endif
