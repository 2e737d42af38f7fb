// The hierarchies by attribute's first kernels (src/AttributeHierarchy/chsAttributeHierarchy.cu, which alone includes
// it): the tree as the kernels read it, the children, the Euler tour's preorder and subtree
// sizes, and the block sparse table of range minima and maxima. The file's header comment says how they serve.
#ifndef chsAttributeHierarchyKernels_cuh
#define chsAttributeHierarchyKernels_cuh

#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "AttributeHierarchy/chsExactVolume.h"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

#include <cstdint>
#include <limits>

namespace chs
{
namespace ah
{
namespace
{

constexpr unsigned kThreads = 256;

template <typename TNode>
__host__ __device__ constexpr TNode
None()
{
  return TNode(~TNode(0));
}

#define CHS_GRID_STRIDE(i, count)                                                                                      \
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < (count); i += uint64_t(gridDim.x) * blockDim.x)

/** The tree as the kernels read it: n leaves, internal node x at index x - n of the per-node arrays. */
template <typename TNode>
struct DeviceTree
{
  uint64_t       n;
  TNode          root;
  const TNode *  parent;
  const TNode *  child; // two per internal node, smaller id first
  const double * weight;

  __device__ double
  Altitude(uint64_t x) const
  {
    return x < n ? 0.0 : weight[x - n];
  }
  __device__ double
  ParentAltitude(uint64_t x) const
  {
    return Altitude(parent[x]);
  }
};

template <typename TNode>
__global__ void
ChildrenKernel(uint64_t n, const TNode * parent, uint32_t * count, TNode * child)
{
  CHS_GRID_STRIDE(x, 2 * n - 2)
  {
    const uint64_t k                        = parent[x] - n;
    child[2 * k + atomicAdd(count + k, 1u)] = TNode(x);
  }
}

template <typename TNode>
__global__ void
OrderChildrenKernel(uint64_t internal, TNode * child)
{
  CHS_GRID_STRIDE(k, internal)
  {
    const TNode a = child[2 * k], b = child[2 * k + 1];
    if (a > b)
    {
      child[2 * k]     = b;
      child[2 * k + 1] = a;
    }
  }
}

// --- Preorder and subtree sizes from the Euler tour ----------------------------------------------------------------

/** A visit's word of the Euler tour: its next visit (kEnd after the last) and the count of entering visits from it
 * on. Packed: 32 bits each in one 64-bit word (visit ids below 2^32 - 1: up to 2^30 leaves); Wide: 64 bits each. */
struct PackedTour
{
  using Word                     = unsigned long long;
  static constexpr uint64_t kEnd = 0xffffffffu;
  __device__ static Word
  Make(uint64_t next, uint64_t count)
  {
    return (static_cast<Word>(next) << 32) | count;
  }
  __device__ static uint64_t
  Next(Word w)
  {
    return w >> 32;
  }
  __device__ static uint64_t
  Count(Word w)
  {
    return w & 0xffffffffull;
  }
  /** w followed by its successor v: v's next, both counts. */
  __device__ static Word
  Skip(Word w, Word v)
  {
    return (v & 0xffffffff00000000ull) | ((w + v) & 0xffffffffull);
  }
};
struct WideTour
{
  using Word                     = ulonglong2; // x: next, y: count
  static constexpr uint64_t kEnd = ~0ull;
  __device__ static Word
  Make(uint64_t next, uint64_t count)
  {
    return make_ulonglong2(next, count);
  }
  __device__ static uint64_t
  Next(Word w)
  {
    return w.x;
  }
  __device__ static uint64_t
  Count(Word w)
  {
    return w.y;
  }
  __device__ static Word
  Skip(Word w, Word v)
  {
    return make_ulonglong2(v.x, w.y + v.y);
  }
};

/** The tour visits D(x) = 2x (entering x) and U(x) = 2x + 1 (leaving x) of every non-root node x. */
template <class TTour, typename TNode>
__global__ void
TourKernel(DeviceTree<TNode> t, typename TTour::Word * tour)
{
  CHS_GRID_STRIDE(x, uint64_t(t.root))
  {
    const uint64_t k    = x - t.n;
    const uint64_t down = x >= t.n ? 2 * uint64_t(t.child[2 * k]) : 2 * x + 1;
    const uint64_t p = t.parent[x], pk = p - t.n;
    const uint64_t up = x == t.child[2 * pk] ? 2 * uint64_t(t.child[2 * pk + 1])
                        : p == t.root        ? TTour::kEnd
                                             : 2 * p + 1;
    tour[2 * x]       = TTour::Make(down, 1);
    tour[2 * x + 1]   = TTour::Make(up, 0);
  }
}

/** One round of pointer jumping: each visit adds the count of its successor and skips over it. */
template <class TTour>
__global__ void
JumpTourKernel(uint64_t count, const typename TTour::Word * in, typename TTour::Word * out)
{
  CHS_GRID_STRIDE(e, count)
  {
    const typename TTour::Word w    = in[e];
    const uint64_t             next = TTour::Next(w);
    out[e]                          = next == TTour::kEnd ? w : TTour::Skip(w, in[next]);
  }
}

/** pre(x) and size(x) from the ranked tour (the root: 0 and 2n - 1); order[pre(x)] = x. */
template <class TTour, typename TNode>
__global__ void
PreorderKernel(DeviceTree<TNode> t, const typename TTour::Word * ranked, TNode * pre, TNode * size, TNode * order)
{
  CHS_GRID_STRIDE(x, uint64_t(t.root) + 1)
  {
    uint64_t p = 0, s = uint64_t(t.root) + 1;
    if (x != t.root)
    {
      const uint64_t fromDown = TTour::Count(ranked[2 * x]), fromUp = TTour::Count(ranked[2 * x + 1]);
      p = uint64_t(t.root) + 1 - fromDown;
      s = fromDown - fromUp;
    }
    pre[x]   = TNode(p);
    size[x]  = TNode(s);
    order[p] = TNode(x);
  }
}

/** Per preorder position: the term area(y) * (alt(parent(y)) - alt(y)) of an internal node y, 0 for a leaf. */
template <typename TNode>
__global__ void
VolumeTermKernel(DeviceTree<TNode> t, const TNode * order, const TNode * size, double * term)
{
  CHS_GRID_STRIDE(i, uint64_t(t.root) + 1)
  {
    const TNode y = order[i];
    term[i]       = y < t.n ? 0.0 : double((uint64_t(size[y]) + 1) / 2) * (t.ParentAltitude(y) - t.Altitude(y));
  }
}

template <typename TNode>
__global__ void
AreaVolumeKernel(DeviceTree<TNode> t,
                 const TNode *     pre,
                 const TNode *     size,
                 const double *    prefix,
                 double *          area,
                 double *          volume)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint64_t x = t.n + k;
    area[k]          = double((uint64_t(size[x]) + 1) / 2);
    if (volume)
      volume[k] = prefix[uint64_t(pre[x]) + size[x]] - prefix[pre[x]];
  }
}

/** Per preorder position: the exact term area(y) * (alt(parent(y)) - alt(y)) of an internal node y in the fixed
 * point of unit 2^q (src/AttributeHierarchy/chsExactVolume.h), 0 for a leaf. */
template <typename TNode, unsigned Words>
__global__ void
FixedTermKernel(DeviceTree<TNode> t, const TNode * order, const TNode * size, int q, Fixed<Words> * term)
{
  CHS_GRID_STRIDE(i, uint64_t(t.root) + 1)
  {
    const TNode y = order[i];
    term[i]       = y < t.n ? Fixed<Words>{}
                            : (ToFixed<Words>(t.ParentAltitude(y), q) - ToFixed<Words>(t.Altitude(y), q)) *
                          ((uint64_t(size[y]) + 1) / 2);
  }
}

/** volume(x): the exact sum of its subtree's terms (a difference of the terms' prefix sums), rounded once. */
template <typename TNode, unsigned Words>
__global__ void
FixedVolumeKernel(DeviceTree<TNode>    t,
                  const TNode *        pre,
                  const TNode *        size,
                  const Fixed<Words> * prefix,
                  int                  q,
                  double *             volume)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint64_t x = t.n + k;
    volume[k]        = Round(prefix[uint64_t(pre[x]) + size[x]] - prefix[pre[x]], q);
  }
}

/** Whole-number weights, their range and the fixed point's unit: flags[0] set for a weight that is not a whole
 * number or beyond 2^52, flags[1] / flags[2] the smallest / largest ordered code, flags[3] the lowest set bit's
 * exponent over the weights plus kExponentBias (~0 when every weight is 0). */
constexpr int kExponentBias = 4096;

__global__ void
WeightRangeKernel(uint64_t count, const double * w, unsigned long long * flags)
{
  // Each thread reduces its weights, then each warp, so that one lane per warp does the atomics.
  unsigned long long low = ~0ull, high = 0, bad = 0, lowBit = ~0ull;
  CHS_GRID_STRIDE(k, count)
  {
    const double             v    = w[k];
    const unsigned long long code = sl::OrderedCode(v);
    bad |= v == floor(v) && fabs(v) <= 4503599627370496.0 ? 0ull : 1ull;
    low         = code < low ? code : low;
    high        = code > high ? code : high;
    const int e = LowExponent(v);
    if (e != kNoExponent && static_cast<unsigned long long>(e + kExponentBias) < lowBit)
      lowBit = static_cast<unsigned long long>(e + kExponentBias);
  }
  for (int o = 16; o > 0; o /= 2)
  {
    const unsigned long long l = __shfl_xor_sync(0xffffffffu, low, o), h = __shfl_xor_sync(0xffffffffu, high, o);
    const unsigned long long b = __shfl_xor_sync(0xffffffffu, lowBit, o);
    bad |= __shfl_xor_sync(0xffffffffu, bad, o);
    low    = l < low ? l : low;
    high   = h > high ? h : high;
    lowBit = b < lowBit ? b : lowBit;
  }
  if ((threadIdx.x & 31) == 0)
  {
    if (bad)
      flags[0] = 1;
    atomicMin(flags + 1, low);
    atomicMax(flags + 2, high);
    atomicMin(flags + 3, lowBit);
  }
}

// --- Range minimum and maximum over the preorder: a block sparse table ---------------------------------------------

constexpr unsigned kBlock = 32;

struct Min
{
  static constexpr double kIdentity = INFINITY;
  __device__ static double
  Op(double a, double b)
  {
    return fmin(a, b);
  }
};
struct Max
{
  static constexpr double kIdentity = 0.0; // the values are attributes, never negative
  __device__ static double
  Op(double a, double b)
  {
    return fmax(a, b);
  }
};

/** One warp per block of 32 positions: the prefix and suffix results inside the block, and the block's result. */
template <class TOp>
__global__ void
BlockScanKernel(uint64_t count, const double * value, double * prefix, double * suffix, double * blocks)
{
  const uint64_t warps = (uint64_t(gridDim.x) * blockDim.x) / 32;
  const unsigned lane  = threadIdx.x & 31;
  for (uint64_t b = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) / 32; b * kBlock < count; b += warps)
  {
    const uint64_t i = b * kBlock + lane;
    const double   v = i < count ? value[i] : TOp::kIdentity;
    double         p = v, q = v;
    for (unsigned o = 1; o < 32; o *= 2)
    {
      const double up = __shfl_up_sync(0xffffffffu, p, o), down = __shfl_down_sync(0xffffffffu, q, o);
      if (lane >= o)
        p = TOp::Op(p, up);
      if (lane + o < 32)
        q = TOp::Op(q, down);
    }
    if (i < count)
    {
      prefix[i] = p;
      suffix[i] = q;
    }
    if (lane == 31)
      blocks[b] = p;
  }
}

/** Level `level` of the sparse table over the blocks from the level below. */
template <class TOp>
__global__ void
SparseLevelKernel(uint64_t blocks, const double * below, double * level, uint64_t half)
{
  CHS_GRID_STRIDE(b, blocks)
  level[b] = b + half < blocks ? TOp::Op(below[b], below[b + half]) : below[b];
}

template <class TOp>
struct RangeTable
{
  const double * value;
  const double * prefix;
  const double * suffix;
  const double * table; // levels of `blocks` entries each
  uint64_t       blocks;

  /** The result over the positions [l, r), r > l. */
  __device__ double
  Query(uint64_t l, uint64_t r) const
  {
    const uint64_t lb = l / kBlock, rb = (r - 1) / kBlock;
    if (lb == rb)
    {
      double result = TOp::kIdentity;
      for (uint64_t i = l; i < r; ++i)
        result = TOp::Op(result, value[i]);
      return result;
    }
    double result = TOp::Op(suffix[l], prefix[r - 1]);
    if (rb - lb > 1)
    {
      const uint64_t span  = rb - lb - 1;
      const unsigned level = 63 - __clzll(static_cast<long long>(span));
      result = TOp::Op(result, TOp::Op(table[level * blocks + lb + 1], table[level * blocks + rb - (1ull << level)]));
    }
    return result;
  }
};

} // namespace
} // namespace ah
} // namespace chs

#endif
