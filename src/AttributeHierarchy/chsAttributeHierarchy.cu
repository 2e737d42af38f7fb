// The CUDA backend of the hierarchies by attribute (include/chs/AttributeHierarchy.h).
// Single-linkage trees of images are deep (a 2048^2 relief's has a path of 600,000 nodes), so no pass walks the tree
// level by level or leaf to root:
// - Children: every non-root node takes a slot of its parent (atomics), then each pair is put in id order.
// - Preorder and subtree sizes from the Euler tour (each non-root node entered and left once; the successor of each
//   visit is local), ranked by pointer jumping (Wyllie, O(log n) rounds on (next, count) words: packed in 64 bits up
//   to 2^30 leaves, 16 bytes from there on and with 64-bit node ids). A subtree is then the preorder range
//   [pre(x), pre(x) + size(x)).
// - Node ids of TNode (32-bit up to 2^31 - 1 leaves, 64-bit up to 2^32 - 1): the parents, children, preorder, sizes,
//   deepest children and chains; the ends and ranks of the tree edges stay 32-bit (64-bit input ends are narrowed on
//   the device, an end out of range kept out of range for the dendrogram check).
// - area = (size + 1) / 2 (a full binary tree); volume = a difference of prefix sums over the preorder of the terms
//   area(y) * (alt(parent(y)) - alt(y)): in double when the weights are whole numbers and n * (max - min) <= 2^53
//   (every partial sum is then an exact double, in any order), otherwise in the exact fixed point of
//   src/AttributeHierarchy/chsExactVolume.h (128 or 256 bits), each volume rounded once.
// - depth = a range minimum of the internal nodes' altitudes, and the corrected attribute of a node at its parent's
//   level = a range maximum of the attribute over the internal nodes below it not at their parent's level (the
//   attributes are increasing, so the maximum over all of them is the maximum over the level's own exits): both from
//   one block sparse table (warp scans inside 32-element blocks, a sparse table over the blocks).
// - Dynamics: the deepest-child chains by pointer jumping.
// - The new weights, the sort by (weight, rank) (CUB radix sort of the weights' ordered codes), then PANDORA and the
//   download as for any dendrogram (FinishOnDevice).
#include "Common/chsCudaCommon.cuh"
#include "AttributeHierarchy/chsAttributeHierarchyBackends.h"
#include "Common/chsDeviceHelpers.cuh"
#include "AttributeHierarchy/chsAttributeHierarchyCheck.h"
#include "AttributeHierarchy/chsAttributeHierarchyKernels.cuh"
#include "Engines/SingleLinkage/chsSingleLinkageDevice.h"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <string>
#include <memory>
#include <vector>

namespace chs
{
namespace ah
{
namespace
{

/** Per preorder position: the altitude of an internal node, infinity for a leaf. */
template <typename TNode>
__global__ void
DepthValueKernel(DeviceTree<TNode> t, const TNode * order, double * value)
{
  CHS_GRID_STRIDE(i, uint64_t(t.root) + 1)
  {
    const TNode y = order[i];
    value[i]      = y < t.n ? INFINITY : t.Altitude(y);
  }
}

/** depth(x): the lowest altitude of an internal node in x's subtree; deepest(x): the internal child of smaller
 * depth, the smaller id on ties. */
template <typename TNode>
__global__ void
DepthKernel(DeviceTree<TNode> t, const TNode * pre, const TNode * size, RangeTable<Min> range, double * depth)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint64_t x = t.n + k;
    depth[k]         = range.Query(pre[x], uint64_t(pre[x]) + size[x]);
  }
}

template <typename TNode>
__global__ void
DeepestKernel(DeviceTree<TNode> t, const double * depth, TNode * deepest)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const TNode c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    const bool  leaf0 = c0 < t.n, leaf1 = c1 < t.n;
    deepest[k] = leaf0 && leaf1 ? None<TNode>() : !leaf0 && (leaf1 || depth[c0 - t.n] <= depth[c1 - t.n]) ? c0 : c1;
  }
}

/** Per preorder position: the attribute of an internal node that is not at its parent's level (the root excluded),
 * else 0. */
template <typename TNode>
__global__ void
ExitValueKernel(DeviceTree<TNode> t, const TNode * order, const double * attribute, double * value)
{
  CHS_GRID_STRIDE(i, uint64_t(t.root) + 1)
  {
    const TNode y = order[i];
    value[i]      = y < t.n || y == t.root || t.Altitude(y) == t.ParentAltitude(y) ? 0.0 : attribute[y - t.n];
  }
}

/** corrected(x): the attribute at the root and at nodes not at their parent's level, else the largest attribute of
 * the internal nodes below x not at their parent's level. */
template <typename TNode>
__global__ void
CorrectedKernel(DeviceTree<TNode> t,
                const TNode *     pre,
                const TNode *     size,
                const double *    attribute,
                RangeTable<Max>   range,
                double *          corrected)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint64_t x = t.n + k;
    corrected[k]     = x == t.root || t.Altitude(x) != t.ParentAltitude(x)
                         ? attribute[k]
                         : range.Query(uint64_t(pre[x]) + 1, uint64_t(pre[x]) + size[x]);
  }
}

/** height(x) = alt(parent(x)) - depth(x) (the root: its own altitude). */
template <typename TNode>
__global__ void
HeightKernel(DeviceTree<TNode> t, const double * depth, double * height)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  height[k] = t.ParentAltitude(t.n + k) - depth[k];
}

/** link(x): the parent when x is its parent's deepest child, else x. */
template <typename TNode>
__global__ void
DeepestLinkKernel(DeviceTree<TNode> t, const TNode * deepest, TNode * link)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const TNode x = TNode(t.n + k), p = t.parent[x];
    link[k] = x != t.root && deepest[p - t.n] == x ? p : x;
  }
}

template <typename TNode>
__global__ void
JumpKernel(uint64_t n, TNode * link, unsigned * changed)
{
  CHS_GRID_STRIDE(k, n - 1)
  {
    const TNode l = link[k], ll = link[l - n];
    if (ll != l)
    {
      link[k]  = ll;
      *changed = 1;
    }
  }
}

template <typename TNode>
__global__ void
DynamicsKernel(uint64_t n, const TNode * top, const double * height, double * dynamics)
{
  CHS_GRID_STRIDE(k, n - 1)
  dynamics[k] = height[top[k] - n];
}

/** The watershed hierarchy's weight of each tree edge: the smaller corrected value of its node's children. */
template <typename TNode>
__global__ void
WatershedWeightKernel(DeviceTree<TNode> t, const double * corrected, double * w)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const TNode c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    w[k] = fmin(c0 < t.n ? 0.0 : corrected[c0 - t.n], c1 < t.n ? 0.0 : corrected[c1 - t.n]);
  }
}

/** The filter's weight of each tree edge: 0 when a child's attribute is below the threshold, else its altitude. */
template <typename TNode>
__global__ void
FilterWeightKernel(DeviceTree<TNode> t, const double * value, double leafValue, double threshold, double * w)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const TNode  c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    const double a = c0 < t.n ? leafValue : value[c0 - t.n], b = c1 < t.n ? leafValue : value[c1 - t.n];
    w[k] = fmin(a, b) < threshold ? 0.0 : t.weight[k];
  }
}

__global__ void
CodeKernel(uint64_t count, const double * w, unsigned long long * code, uint32_t * rank)
{
  CHS_GRID_STRIDE(r, count)
  {
    code[r] = sl::OrderedCode(w[r]);
    rank[r] = uint32_t(r);
  }
}

/** 64-bit end vertices narrowed to the device's 32-bit ones; an end out of range becomes n (n < 2^32), out of range
 * still, so that the dendrogram check refuses it. */
__global__ void
NarrowEndsKernel(uint64_t count, const uint64_t * in, uint64_t n, uint32_t * out)
{
  CHS_GRID_STRIDE(i, count)
  {
    const uint64_t e = in[i];
    out[i]           = uint32_t(e < n ? e : n);
  }
}

/** The reweighted tree's edges in their new order: ends, input edge (or old rank) and weight. */
__global__ void
GatherKernel(uint64_t         count,
             const uint32_t * order,
             const uint32_t * u,
             const uint32_t * v,
             const uint64_t * edge,
             const double *   w,
             uint32_t *       U,
             uint32_t *       V,
             uint64_t *       E,
             double *         W)
{
  CHS_GRID_STRIDE(r, count)
  {
    const uint32_t s = order[r];
    U[r]             = u[s];
    V[r]             = v[s];
    E[r]             = edge ? edge[s] : s;
    W[r]             = w[s];
  }
}

#undef CHS_GRID_STRIDE

enum class Operation
{
  Watershed,
  Filter
};

/** Whether the Euler tour of a tree of n leaves takes WideTour's words: with 64-bit node ids, when asked, and when its
 * 4n - 4 visit ids reach PackedTour's kEnd (from 2^30 + 1 leaves on). */
bool
WideTourFor(uint64_t n, unsigned nodeBytes, bool force)
{
  return force || nodeBytes == sizeof(uint64_t) || 4 * (n - 1) > PackedTour::kEnd;
}

template <class TTour, typename TNode>
void
RankTour(const DeviceTree<TNode> & t,
         TNode *                   pre,
         TNode *                   size,
         TNode *                   order,
         cudaStream_t              stream,
         detail::MemoryTracker &   tracker,
         int                       device)
{
  using Word                        = typename TTour::Word;
  const uint64_t             visits = 2 * uint64_t(t.root);
  detail::DeviceBuffer<Word> a(visits, stream, &tracker), b(visits, stream, &tracker);
  const unsigned             blocks = detail::GridStrideBlocks(visits, kThreads, device);
  TourKernel<TTour><<<detail::GridStrideBlocks(t.root, kThreads, device), kThreads, 0, stream>>>(t, a.get());
  CHS_CUDA_CHECK_LAUNCH("TourKernel");
  Word *in = a.get(), *out = b.get();
  for (uint64_t span = 1; span < visits; span *= 2)
  {
    JumpTourKernel<TTour><<<blocks, kThreads, 0, stream>>>(visits, in, out);
    CHS_CUDA_CHECK_LAUNCH("JumpTourKernel");
    std::swap(in, out);
  }
  PreorderKernel<TTour><<<detail::GridStrideBlocks(uint64_t(t.root) + 1, kThreads, device), kThreads, 0, stream>>>(
    t, in, pre, size, order);
  CHS_CUDA_CHECK_LAUNCH("PreorderKernel");
}

/** Preorder positions, subtree sizes and the nodes in preorder, from the Euler tour ranked by pointer jumping. */
template <typename TNode>
void
Preorder(const DeviceTree<TNode> & t,
         bool                      wideTour,
         TNode *                   pre,
         TNode *                   size,
         TNode *                   order,
         cudaStream_t              stream,
         detail::MemoryTracker &   tracker,
         int                       device)
{
  if (wideTour)
    RankTour<WideTour>(t, pre, size, order, stream, tracker, device);
  else
    RankTour<PackedTour>(t, pre, size, order, stream, tracker, device);
}

/** The block sparse table of `value` (count positions); its arrays live in `storage`. */
template <class TOp>
RangeTable<TOp>
BuildRange(const double *                                               value,
           uint64_t                                                     count,
           std::vector<std::unique_ptr<detail::DeviceBuffer<double>>> & storage,
           cudaStream_t                                                 stream,
           detail::MemoryTracker &                                      tracker,
           int                                                          device)
{
  const uint64_t blocks = (count + kBlock - 1) / kBlock;
  unsigned       levels = 1;
  while ((uint64_t(1) << levels) <= blocks)
    ++levels;
  storage.push_back(std::make_unique<detail::DeviceBuffer<double>>(count, stream, &tracker));
  double * prefix = storage.back()->get();
  storage.push_back(std::make_unique<detail::DeviceBuffer<double>>(count, stream, &tracker));
  double * suffix = storage.back()->get();
  storage.push_back(std::make_unique<detail::DeviceBuffer<double>>(levels * blocks, stream, &tracker));
  double * table = storage.back()->get();
  BlockScanKernel<TOp><<<detail::GridStrideBlocks(blocks * kBlock, kThreads, device), kThreads, 0, stream>>>(
    count, value, prefix, suffix, table);
  CHS_CUDA_CHECK_LAUNCH("BlockScanKernel");
  for (unsigned level = 1; level < levels; ++level)
  {
    SparseLevelKernel<TOp><<<detail::GridStrideBlocks(blocks, kThreads, device), kThreads, 0, stream>>>(
      blocks, table + (level - 1) * blocks, table + level * blocks, uint64_t(1) << (level - 1));
    CHS_CUDA_CHECK_LAUNCH("SparseLevelKernel");
  }
  return RangeTable<TOp>{ value, prefix, suffix, table, blocks };
}

/** How the volumes are summed: Exact when every weight is a whole number of at most 2^52 and n * (max - min) <= 2^53
 * (every volume and every partial sum of volumes is then a whole number that a double holds exactly, whatever the
 * order of the sums); otherwise in the fixed point of `scale`. */
struct VolumePlan
{
  bool        exact = false;
  VolumeScale scale;
};

VolumePlan
PlanVolumes(uint64_t n, const double * weight, cudaStream_t stream, detail::MemoryTracker & tracker, int device)
{
  const uint64_t                           internal = n - 1;
  detail::DeviceBuffer<unsigned long long> flags(4, stream, &tracker);
  const unsigned long long                 initial[4] = { 0, ~0ull, 0, ~0ull };
  CHS_CUDA_CHECK(cudaMemcpyAsync(flags.get(), initial, sizeof(initial), cudaMemcpyHostToDevice, stream));
  WeightRangeKernel<<<detail::GridStrideBlocks(internal, kThreads, device), kThreads, 0, stream>>>(
    internal, weight, flags.get());
  CHS_CUDA_CHECK_LAUNCH("WeightRangeKernel");
  unsigned long long host[4];
  CHS_CUDA_CHECK(cudaMemcpyAsync(host, flags.get(), sizeof(host), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto decode = [](unsigned long long code)
  {
    const unsigned long long bits = (code >> 63) ? (code ^ (1ull << 63)) : ~code;
    double                   d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  };
  const double low = decode(host[1]), high = decode(host[2]);
  VolumePlan   plan;
  plan.exact = host[0] == 0 && double(n) * (high - low) <= 9007199254740992.0;
  if (host[3] != ~0ull)
    plan.scale = ScaleOf(int(host[3]) - kExponentBias, std::max(TopExponent(low), TopExponent(high)));
  return plan;
}

/** The volumes in the fixed point of `scale` (Words 64-bit words): the exact terms over the preorder, their prefix
 * sums in place, each node's difference rounded once. */
template <unsigned Words, typename TNode>
void
FixedVolumes(const DeviceTree<TNode> & t,
             const TNode *             pre,
             const TNode *             size,
             const TNode *             order,
             int                       q,
             double *                  volume,
             cudaStream_t              stream,
             detail::MemoryTracker &   tracker,
             int                       device)
{
  const uint64_t                     nodes = 2 * t.n - 1;
  detail::DeviceBuffer<Fixed<Words>> prefix(nodes + 1, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(prefix.get() + nodes, 0, sizeof(Fixed<Words>), stream));
  FixedTermKernel<<<detail::GridStrideBlocks(nodes, kThreads, device), kThreads, 0, stream>>>(
    t, order, size, q, prefix.get());
  CHS_CUDA_CHECK_LAUNCH("FixedTermKernel");
  size_t bytes = 0;
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(
    nullptr, bytes, prefix.get(), prefix.get(), FixedSum(), Fixed<Words>{}, nodes + 1, stream));
  detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
  CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(
    temp.get(), bytes, prefix.get(), prefix.get(), FixedSum(), Fixed<Words>{}, nodes + 1, stream));
  FixedVolumeKernel<<<detail::GridStrideBlocks(t.n - 1, kThreads, device), kThreads, 0, stream>>>(
    t, pre, size, prefix.get(), q, volume);
  CHS_CUDA_CHECK_LAUNCH("FixedVolumeKernel");
}

/** The device bytes of BuildRange over `count` positions. */
uint64_t
RangeBytes(uint64_t count)
{
  const uint64_t blocks = (count + kBlock - 1) / kBlock;
  unsigned       levels = 1;
  while ((uint64_t(1) << levels) <= blocks)
    ++levels;
  return (2 * count + levels * blocks) * sizeof(double);
}

/** A bound on the device bytes NewWeights allocates with node ids of `nodeBytes` and tour words of `tourBytes`: the
 * Euler tour's two arrays while the preorder is ranked; then what the preorder leaves, the volumes' prefix and scan
 * (the fixed point's, the wider),
 * the depths' range table, depths, deepest links and tops, and the corrected attribute's range table and values
 * (summed, though not all are held at once). */
uint64_t
NewWeightsBytes(uint64_t n, unsigned nodeBytes, unsigned tourBytes)
{
  const uint64_t internal = n - 1, nodes = 2 * n - 1, visits = 2 * (2 * n - 2);
  const uint64_t tree = internal * (2 * nodeBytes + sizeof(uint32_t)) + nodes * 3 * nodeBytes;
  const uint64_t held = tree + (nodes + 1) * sizeof(double) + internal * 2 * sizeof(double);
  return std::max(tree + visits * 2 * tourBytes,
                  held + (nodes + 1) * sizeof(Fixed<4>) +
                    detail::ScanScratchBytes(nodes + 1) * (sizeof(Fixed<4>) / sizeof(double)) +
                    4 * sizeof(unsigned long long) + 2 * RangeBytes(nodes) + internal * 2 * sizeof(double) +
                    internal * 2 * nodeBytes + sizeof(unsigned));
}

/** The new weight of every tree edge (by rank) on the device. */
template <typename TNode>
void
NewWeights(uint64_t                n,
           bool                    wideTour,
           const TNode *           dParent,
           const double *          dWeight,
           Operation               operation,
           RegionAttribute         attribute,
           double                  threshold,
           double *                w2,
           cudaStream_t            stream,
           detail::MemoryTracker & tracker,
           int                     device)
{
  const uint64_t                 internal = n - 1, nodes = 2 * n - 1;
  const unsigned                 blocks = detail::GridStrideBlocks(internal, kThreads, device);
  const unsigned                 all    = detail::GridStrideBlocks(nodes, kThreads, device);
  detail::DeviceBuffer<TNode>    child(2 * internal, stream, &tracker);
  detail::DeviceBuffer<uint32_t> count(internal, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, internal * sizeof(uint32_t), stream));
  ChildrenKernel<<<detail::GridStrideBlocks(2 * n - 2, kThreads, device), kThreads, 0, stream>>>(
    n, dParent, count.get(), child.get());
  CHS_CUDA_CHECK_LAUNCH("ChildrenKernel");
  OrderChildrenKernel<<<blocks, kThreads, 0, stream>>>(internal, child.get());
  CHS_CUDA_CHECK_LAUNCH("OrderChildrenKernel");
  const DeviceTree<TNode> t{ n, TNode(2 * n - 2), dParent, child.get(), dWeight };

  detail::DeviceBuffer<TNode> pre(nodes, stream, &tracker), size(nodes, stream, &tracker),
    order(nodes, stream, &tracker);
  Preorder(t, wideTour, pre.get(), size.get(), order.get(), stream, tracker, device);
  std::vector<std::unique_ptr<detail::DeviceBuffer<double>>> storage;
  detail::DeviceBuffer<double> values(nodes + 1, stream, &tracker); // per preorder position, reused
  detail::DeviceBuffer<double> area(internal, stream, &tracker), attributeOf(internal, stream, &tracker);

  // Area and volume.
  double *         value      = area.get();
  const bool       needVolume = attribute == RegionAttribute::Volume;
  const VolumePlan plan       = needVolume ? PlanVolumes(n, dWeight, stream, tracker, device) : VolumePlan();
  double *         prefix     = nullptr;
  if (needVolume && plan.exact)
  {
    // Whole weights: every sum is exact in double; a prefix sum of the terms over the preorder.
    VolumeTermKernel<<<all, kThreads, 0, stream>>>(t, order.get(), size.get(), values.get());
    CHS_CUDA_CHECK_LAUNCH("VolumeTermKernel");
    CHS_CUDA_CHECK(cudaMemsetAsync(values.get() + nodes, 0, sizeof(double), stream));
    storage.push_back(std::make_unique<detail::DeviceBuffer<double>>(nodes + 1, stream, &tracker));
    prefix       = storage.back()->get();
    size_t bytes = 0;
    CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, values.get(), prefix, nodes + 1, stream));
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, values.get(), prefix, nodes + 1, stream));
  }
  AreaVolumeKernel<<<blocks, kThreads, 0, stream>>>(
    t, pre.get(), size.get(), prefix, area.get(), prefix ? attributeOf.get() : nullptr);
  CHS_CUDA_CHECK_LAUNCH("AreaVolumeKernel");
  storage.clear();
  if (needVolume && !plan.exact)
  {
    if (plan.scale.words == 2)
      FixedVolumes<2>(t, pre.get(), size.get(), order.get(), plan.scale.q, attributeOf.get(), stream, tracker, device);
    else
      FixedVolumes<4>(t, pre.get(), size.get(), order.get(), plan.scale.q, attributeOf.get(), stream, tracker, device);
  }
  if (needVolume)
    value = attributeOf.get();

  // Depth, height and dynamics.
  if (attribute == RegionAttribute::Height || attribute == RegionAttribute::Dynamics)
  {
    DepthValueKernel<<<all, kThreads, 0, stream>>>(t, order.get(), values.get());
    CHS_CUDA_CHECK_LAUNCH("DepthValueKernel");
    const RangeTable<Min>        range = BuildRange<Min>(values.get(), nodes, storage, stream, tracker, device);
    detail::DeviceBuffer<double> depth(internal, stream, &tracker);
    DepthKernel<<<blocks, kThreads, 0, stream>>>(t, pre.get(), size.get(), range, depth.get());
    CHS_CUDA_CHECK_LAUNCH("DepthKernel");
    storage.clear();
    HeightKernel<<<blocks, kThreads, 0, stream>>>(t, depth.get(), attributeOf.get());
    CHS_CUDA_CHECK_LAUNCH("HeightKernel");
    value = attributeOf.get();
    if (attribute == RegionAttribute::Dynamics)
    {
      detail::DeviceBuffer<TNode> deepest(internal, stream, &tracker), top(internal, stream, &tracker);
      DeepestKernel<<<blocks, kThreads, 0, stream>>>(t, depth.get(), deepest.get());
      CHS_CUDA_CHECK_LAUNCH("DeepestKernel");
      DeepestLinkKernel<<<blocks, kThreads, 0, stream>>>(t, deepest.get(), top.get());
      CHS_CUDA_CHECK_LAUNCH("DeepestLinkKernel");
      detail::DeviceBuffer<unsigned> changed(1, stream, &tracker);
      for (unsigned more = 1; more;)
      {
        CHS_CUDA_CHECK(cudaMemsetAsync(changed.get(), 0, sizeof(unsigned), stream));
        JumpKernel<<<blocks, kThreads, 0, stream>>>(n, top.get(), changed.get());
        CHS_CUDA_CHECK_LAUNCH("JumpKernel");
        ReadBack(more, changed.get(), stream);
      }
      DynamicsKernel<<<blocks, kThreads, 0, stream>>>(n, top.get(), attributeOf.get(), area.get());
      CHS_CUDA_CHECK_LAUNCH("DynamicsKernel");
      value = area.get(); // the areas are not needed any more: they hold the dynamics now
    }
  }

  if (operation == Operation::Filter)
  {
    FilterWeightKernel<<<blocks, kThreads, 0, stream>>>(
      t, value, attribute == RegionAttribute::Area ? 1.0 : 0.0, threshold, w2);
    CHS_CUDA_CHECK_LAUNCH("FilterWeightKernel");
    return;
  }
  // The corrected attribute, then the smaller corrected value of each node's children.
  ExitValueKernel<<<all, kThreads, 0, stream>>>(t, order.get(), value, values.get());
  CHS_CUDA_CHECK_LAUNCH("ExitValueKernel");
  const RangeTable<Max>        range = BuildRange<Max>(values.get(), nodes, storage, stream, tracker, device);
  detail::DeviceBuffer<double> corrected(internal, stream, &tracker);
  CorrectedKernel<<<blocks, kThreads, 0, stream>>>(t, pre.get(), size.get(), value, range, corrected.get());
  CHS_CUDA_CHECK_LAUNCH("CorrectedKernel");
  WatershedWeightKernel<<<blocks, kThreads, 0, stream>>>(t, corrected.get(), w2);
  CHS_CUDA_CHECK_LAUNCH("WatershedWeightKernel");
}

/** The device's 32-bit end vertices from the caller's: copied, or (64-bit ends) narrowed through `wide`. */
void
UploadEnds(uint32_t *       dEnds,
           const uint32_t * ends,
           uint64_t         count,
           uint64_t,
           uint64_t *,
           cudaStream_t             stream,
           const ExecutionContext & context,
           int)
{
  detail::CopyToDevice(dEnds, ends, count * sizeof(uint32_t), stream, context);
}
void
UploadEnds(uint32_t *               dEnds,
           const uint64_t *         ends,
           uint64_t                 count,
           uint64_t                 n,
           uint64_t *               wide,
           cudaStream_t             stream,
           const ExecutionContext & context,
           int                      device)
{
  detail::CopyToDevice(wide, ends, count * sizeof(uint64_t), stream, context);
  NarrowEndsKernel<<<detail::GridStrideBlocks(count, kThreads, device), kThreads, 0, stream>>>(count, wide, n, dEnds);
  CHS_CUDA_CHECK_LAUNCH("NarrowEndsKernel");
}

template <typename TNode>
SingleLinkageResult
Run(const DendrogramInputT<TNode> &  in,
    Operation                        operation,
    RegionAttribute                  attribute,
    double                           threshold,
    const DendrogramArraysT<TNode> & out,
    const ExecutionContext &         context,
    RunInfo *                        info)
{
  constexpr unsigned    kNodeBytes = sizeof(TNode);
  constexpr bool        kWideEnds  = sizeof(TNode) == sizeof(uint64_t);
  const uint64_t        n = in.vertices, internal = n - 1, ii = internal ? internal : 1;
  const bool            wideTour = WideTourFor(n, kNodeBytes, in.forceWideTour);
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;
  {
    // The input dendrogram and the new weights to the end; its check, the new weights' work, the sort of the tree
    // edges by their new weights, then PANDORA.
    const uint64_t kept = (2 * n - 1) * kNodeBytes + ii * (2 * sizeof(uint32_t) + 2 * sizeof(double)) +
                          (in.edge && internal ? internal : 1) * sizeof(uint64_t);
    const uint64_t sorted = ii * (2 * sizeof(uint32_t) + sizeof(uint64_t) + sizeof(double));
    tracker.what = std::string(operation == Operation::Filter ? "the attribute filter" : "the watershed hierarchy") +
                   " of a dendrogram of " + std::to_string(n) + " leaves";
    detail::ReserveDeviceMemory(
      tracker,
      kept + std::max({ ii * sizeof(uint32_t) + 4,
                        kWideEnds ? ii * sizeof(uint64_t) : 0,
                        internal ? NewWeightsBytes(n, kNodeBytes, wideTour ? sizeof(ulonglong2) : sizeof(uint64_t)) : 0,
                        sorted + std::max(internal * 2 * (sizeof(unsigned long long) + sizeof(uint32_t)) +
                                            sl::SortPairsScratch(internal, 8),
                                          sl::FinishBytes(n, kNodeBytes)) }),
      device);
  }

  detail::DeviceBuffer<TNode>    dParent(2 * n - 1, stream, &tracker);
  detail::DeviceBuffer<uint32_t> dU(ii, stream, &tracker), dV(ii, stream, &tracker);
  detail::DeviceBuffer<double>   dWeight(ii, stream, &tracker);
  detail::DeviceBuffer<uint64_t> dEdge(in.edge && internal ? internal : 1, stream, &tracker);
  detail::CopyToDevice(dParent.get(), in.parent, (2 * n - 1) * kNodeBytes, stream, context);
  if (internal)
  {
    std::unique_ptr<detail::DeviceBuffer<uint64_t>> wideEnds; // 64-bit ends on their way to 32 bits
    if (kWideEnds)
      wideEnds = std::make_unique<detail::DeviceBuffer<uint64_t>>(internal, stream, &tracker);
    uint64_t * staging = wideEnds ? wideEnds->get() : nullptr;
    UploadEnds(dU.get(), in.u, internal, n, staging, stream, context, device);
    UploadEnds(dV.get(), in.v, internal, n, staging, stream, context, device);
    detail::CopyToDevice(dWeight.get(), in.weight, internal * sizeof(double), stream, context);
    if (in.edge)
      detail::CopyToDevice(dEdge.get(), in.edge, internal * sizeof(uint64_t), stream, context);
  }
  try
  {
    sl::CheckDendrogramOnDevice(n, dParent.get(), dWeight.get(), dU.get(), dV.get(), stream, tracker, device);
  }
  catch (const std::logic_error &)
  {
    throw std::invalid_argument("the input is not a dendrogram: its parents, children, weights or end vertices "
                                "break the invariants of include/chs/SingleLinkage.h");
  }
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer timer(stream);
  timer.Start();
  detail::DeviceBuffer<double> w2(ii, stream, &tracker);
  if (internal)
    NewWeights(
      n, wideTour, dParent.get(), dWeight.get(), operation, attribute, threshold, w2.get(), stream, tracker, device);

  // The tree edges by (new weight, old rank), then PANDORA and the download.
  detail::DeviceBuffer<uint32_t> sU(ii, stream, &tracker), sV(ii, stream, &tracker);
  detail::DeviceBuffer<uint64_t> sEdge(ii, stream, &tracker);
  detail::DeviceBuffer<double>   sWeight(ii, stream, &tracker);
  if (internal)
  {
    const unsigned                           blocks = detail::GridStrideBlocks(internal, kThreads, device);
    detail::DeviceBuffer<unsigned long long> codeA(internal, stream, &tracker), codeB(internal, stream, &tracker);
    detail::DeviceBuffer<uint32_t>           rankA(internal, stream, &tracker), rankB(internal, stream, &tracker);
    CodeKernel<<<blocks, kThreads, 0, stream>>>(internal, w2.get(), codeA.get(), rankA.get());
    CHS_CUDA_CHECK_LAUNCH("CodeKernel");
    cub::DoubleBuffer<unsigned long long> keys(codeA.get(), codeB.get());
    cub::DoubleBuffer<uint32_t>           values(rankA.get(), rankB.get());
    size_t                                bytes = 0;
    CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, values, internal, 0, 64, stream));
    detail::DeviceBuffer<uint8_t> temp(bytes, stream, &tracker);
    CHS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys, values, internal, 0, 64, stream));
    GatherKernel<<<blocks, kThreads, 0, stream>>>(internal,
                                                  values.Current(),
                                                  dU.get(),
                                                  dV.get(),
                                                  in.edge ? dEdge.get() : nullptr,
                                                  w2.get(),
                                                  sU.get(),
                                                  sV.get(),
                                                  sEdge.get(),
                                                  sWeight.get());
    CHS_CUDA_CHECK_LAUNCH("GatherKernel");
  }
  timer.Stop();
  sl::FinishOnDevice(n, sU.get(), sV.get(), sEdge.get(), sWeight.get(), out, timer, result, info, tracker, context);
  return result;
}

} // namespace
} // namespace ah

template <typename TNode>
SingleLinkageResult
WatershedHierarchyCUDA(const DendrogramInputT<TNode> &  in,
                       RegionAttribute                  attribute,
                       const DendrogramArraysT<TNode> & out,
                       const ExecutionContext &         context,
                       RunInfo *                        info)
{
  ah::CheckWatershedAttribute(attribute);
  ah::CheckInput(in, "a watershed hierarchy");
  return ah::Run(in, ah::Operation::Watershed, attribute, 0.0, out, context, info);
}

template <typename TNode>
SingleLinkageResult
FilterRegionsCUDA(const DendrogramInputT<TNode> &  in,
                  RegionAttribute                  attribute,
                  double                           threshold,
                  const DendrogramArraysT<TNode> & out,
                  const ExecutionContext &         context,
                  RunInfo *                        info)
{
  ah::CheckFilter(attribute, threshold);
  ah::CheckInput(in, "an attribute filter");
  return ah::Run(in, ah::Operation::Filter, attribute, threshold, out, context, info);
}

#define CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CUDA(TNode)                                                                \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult WatershedHierarchyCUDA<TNode>(                      \
    const DendrogramInputT<TNode> &,                                                                                   \
    RegionAttribute,                                                                                                   \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *);                                                                                                        \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult FilterRegionsCUDA<TNode>(                           \
    const DendrogramInputT<TNode> &,                                                                                   \
    RegionAttribute,                                                                                                   \
    double,                                                                                                            \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &,                                                                                          \
    RunInfo *);
CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CUDA(uint32_t)
CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CUDA(uint64_t)
#undef CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CUDA

} // namespace chs
