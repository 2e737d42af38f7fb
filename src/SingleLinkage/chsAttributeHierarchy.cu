// The CUDA backend of the hierarchies by attribute (include/chsAttributeHierarchy.h).
// - Children: every non-root node takes a slot of its parent (atomics), then each pair is put in id order.
// - Bottom-up passes (area, volume, depth and deepest child; the corrected attribute): one thread per leaf walks up;
//   at each node the first child to arrive stops, the second computes the node from both children and goes on, so
//   each node is computed once, after its children, reading them in id order (the CPU reference's order, hence the
//   same doubles). Work O(n); the span is the tree's depth.
// - Dynamics: the deepest-child chains by pointer jumping (O(log depth) rounds).
// - The new weights, the sort by (weight, rank) (CUB radix sort of the weights' ordered codes), then PANDORA and the
//   download as for any dendrogram (FinishOnDevice).
#include "Common/chsCudaCommon.cuh"
#include "Common/chsDeviceHelpers.cuh"
#include "SingleLinkage/chsAttributeHierarchyCheck.h"
#include "SingleLinkage/chsSingleLinkageDevice.h"
#include "SingleLinkage/chsSingleLinkageRule.h"

#include <cub/device/device_radix_sort.cuh>

namespace chs
{
namespace ah
{
namespace
{

constexpr unsigned kThreads = 256;
constexpr uint32_t kNone    = 0xffffffffu;

#define CHS_GRID_STRIDE(i, count)                                                                                     \
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < (count); i += uint64_t(gridDim.x) * blockDim.x)

/** The tree as the kernels read it: n leaves, internal node x at index x - n of the per-node arrays. */
struct DeviceTree
{
  uint64_t         n;
  uint32_t         root;
  const uint32_t * parent;
  const uint32_t * child; // two per internal node, smaller id first
  const double *   weight;

  __device__ double
  Altitude(uint32_t x) const
  {
    return x < n ? 0.0 : weight[x - n];
  }
  __device__ double
  ParentAltitude(uint32_t x) const
  {
    return Altitude(parent[x]);
  }
};

__global__ void
ChildrenKernel(uint64_t n, const uint32_t * parent, uint32_t * count, uint32_t * child)
{
  CHS_GRID_STRIDE(x, 2 * n - 2)
  {
    const uint64_t k = parent[x] - n;
    child[2 * k + atomicAdd(count + k, 1u)] = uint32_t(x);
  }
}

__global__ void
OrderChildrenKernel(uint64_t internal, uint32_t * child)
{
  CHS_GRID_STRIDE(k, internal)
  {
    const uint32_t a = child[2 * k], b = child[2 * k + 1];
    if (a > b)
    {
      child[2 * k]     = b;
      child[2 * k + 1] = a;
    }
  }
}

/** Per internal node: area, volume, depth and deepest child; with `corrected`, the corrected attribute of the area
 * (fuse 0) or the volume (fuse 1) too. */
struct AttributesStep
{
  DeviceTree t;
  double *   area;
  double *   volume;
  double *   depth;
  uint32_t * deepest;
  double *   corrected;
  int        fuse;

  __device__ void
  operator()(uint32_t x) const
  {
    const uint64_t k = x - t.n;
    const uint32_t c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    const bool     leaf0 = c0 < t.n, leaf1 = c1 < t.n;
    const double   a  = __dadd_rn(leaf0 ? 1.0 : __ldcg(area + c0 - t.n), leaf1 ? 1.0 : __ldcg(area + c1 - t.n));
    const double   vc = __dadd_rn(leaf0 ? 0.0 : __ldcg(volume + c0 - t.n), leaf1 ? 0.0 : __ldcg(volume + c1 - t.n));
    const double   own = __dmul_rn(a, t.ParentAltitude(x) - t.Altitude(x));
    const double   v   = __dadd_rn(vc, own);
    area[k]            = a;
    volume[k]          = v;
    if (leaf0 && leaf1)
    {
      depth[k]   = t.Altitude(x);
      deepest[k] = kNone;
    }
    else
    {
      const double   d0 = leaf0 ? 0.0 : __ldcg(depth + c0 - t.n), d1 = leaf1 ? 0.0 : __ldcg(depth + c1 - t.n);
      const bool     first = !leaf0 && (leaf1 || d0 <= d1);
      deepest[k]           = first ? c0 : c1;
      depth[k]             = first ? d0 : d1;
    }
    if (corrected)
      corrected[k] = Corrected(x, k, c0, c1, fuse == 0 ? a : v);
  }

  __device__ double
  Corrected(uint32_t x, uint64_t k, uint32_t c0, uint32_t c1, double value) const
  {
    if (x == t.root || t.Altitude(x) != t.ParentAltitude(x))
      return value;
    return fmax(c0 < t.n ? 0.0 : __ldcg(corrected + c0 - t.n), c1 < t.n ? 0.0 : __ldcg(corrected + c1 - t.n));
  }
};

/** Per internal node: the corrected attribute of `value` (for the dynamics, known only after the top-down pass). */
struct CorrectedStep
{
  DeviceTree     t;
  const double * value;
  double *       corrected;

  __device__ void
  operator()(uint32_t x) const
  {
    const uint64_t k = x - t.n;
    const uint32_t c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    double         r;
    if (x == t.root || t.Altitude(x) != t.ParentAltitude(x))
      r = value[k];
    else
      r = fmax(c0 < t.n ? 0.0 : __ldcg(corrected + c0 - t.n), c1 < t.n ? 0.0 : __ldcg(corrected + c1 - t.n));
    corrected[k] = r;
  }
};

/** One thread per leaf walks up: the second child to reach a node computes it (its children's values published by
 * the fence before their arrival) and goes on. */
template <class TStep>
__global__ void
BottomUpKernel(DeviceTree t, uint32_t * arrived, TStep step)
{
  CHS_GRID_STRIDE(i, t.n)
  {
    uint32_t x = t.parent[i];
    while (true)
    {
      __threadfence();
      if (atomicAdd(arrived + (x - t.n), 1u) == 0)
        break;
      __threadfence();
      step(x);
      if (x == t.root)
        break;
      x = t.parent[x];
    }
  }
}

/** height(x) = alt(parent(x)) - depth(x) (the root: its own altitude). */
__global__ void
HeightKernel(DeviceTree t, const double * depth, double * height)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  height[k] = t.ParentAltitude(uint32_t(t.n + k)) - depth[k];
}

/** link(x): the parent when x is its parent's deepest child, else x. */
__global__ void
DeepestLinkKernel(DeviceTree t, const uint32_t * deepest, uint32_t * link)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint32_t x = uint32_t(t.n + k), p = t.parent[x];
    link[k]                                 = x != t.root && deepest[p - t.n] == x ? p : x;
  }
}

__global__ void
JumpKernel(uint64_t n, uint32_t * link, unsigned * changed)
{
  CHS_GRID_STRIDE(k, n - 1)
  {
    const uint32_t l = link[k], ll = link[l - n];
    if (ll != l)
    {
      link[k]  = ll;
      *changed = 1;
    }
  }
}

__global__ void
DynamicsKernel(uint64_t n, const uint32_t * top, const double * height, double * dynamics)
{
  CHS_GRID_STRIDE(k, n - 1)
  dynamics[k] = height[top[k] - n];
}

/** The watershed hierarchy's weight of each tree edge: the smaller corrected value of its node's children. */
__global__ void
WatershedWeightKernel(DeviceTree t, const double * corrected, double * w)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint32_t c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    w[k] = fmin(c0 < t.n ? 0.0 : corrected[c0 - t.n], c1 < t.n ? 0.0 : corrected[c1 - t.n]);
  }
}

/** The filter's weight of each tree edge: 0 when a child's attribute is below the threshold, else its altitude. */
__global__ void
FilterWeightKernel(DeviceTree t, const double * value, double leafValue, double threshold, double * w)
{
  CHS_GRID_STRIDE(k, t.n - 1)
  {
    const uint32_t c0 = t.child[2 * k], c1 = t.child[2 * k + 1];
    const double   a = c0 < t.n ? leafValue : value[c0 - t.n], b = c1 < t.n ? leafValue : value[c1 - t.n];
    w[k]             = fmin(a, b) < threshold ? 0.0 : t.weight[k];
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

SingleLinkageResult
Run(const DendrogramInput &  in,
    Operation                operation,
    RegionAttribute          attribute,
    double                   threshold,
    const DendrogramArrays & out,
    const ExecutionContext & context,
    RunInfo *                info)
{
  const uint64_t        n = in.vertices, internal = n - 1, ii = internal ? internal : 1;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  const int             device = context.device;
  detail::MemoryTracker tracker;
  SingleLinkageResult   result;

  detail::DeviceBuffer<uint32_t> dParent(2 * n - 1, stream, &tracker), dU(ii, stream, &tracker),
    dV(ii, stream, &tracker);
  detail::DeviceBuffer<double>   dWeight(ii, stream, &tracker);
  detail::DeviceBuffer<uint64_t> dEdge(in.edge && internal ? internal : 1, stream, &tracker);
  detail::CopyToDevice(dParent.get(), in.parent, (2 * n - 1) * sizeof(uint32_t), stream, context);
  if (internal)
  {
    detail::CopyToDevice(dU.get(), in.u, internal * sizeof(uint32_t), stream, context);
    detail::CopyToDevice(dV.get(), in.v, internal * sizeof(uint32_t), stream, context);
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
                                "break the invariants of include/chsSingleLinkage.h");
  }
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer timer(stream);
  timer.Start();
  detail::DeviceBuffer<double>   w2(ii, stream, &tracker);
  if (internal)
  {
    const unsigned blocks = detail::GridStrideBlocks(internal, kThreads, device);
    const unsigned leaves = detail::GridStrideBlocks(n, kThreads, device);
    detail::DeviceBuffer<uint32_t> child(2 * internal, stream, &tracker), count(internal, stream, &tracker);
    CHS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, internal * sizeof(uint32_t), stream));
    ChildrenKernel<<<detail::GridStrideBlocks(2 * n - 2, kThreads, device), kThreads, 0, stream>>>(
      n, dParent.get(), count.get(), child.get());
    CHS_CUDA_CHECK_LAUNCH("ChildrenKernel");
    OrderChildrenKernel<<<blocks, kThreads, 0, stream>>>(internal, child.get());
    CHS_CUDA_CHECK_LAUNCH("OrderChildrenKernel");
    const DeviceTree t{ n, uint32_t(2 * n - 2), dParent.get(), child.get(), dWeight.get() };

    detail::DeviceBuffer<double>   area(internal, stream, &tracker), volume(internal, stream, &tracker),
      depth(internal, stream, &tracker), corrected(internal, stream, &tracker);
    detail::DeviceBuffer<uint32_t> deepest(internal, stream, &tracker);
    const bool fuse = operation == Operation::Watershed && attribute != RegionAttribute::Dynamics;
    CHS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, internal * sizeof(uint32_t), stream)); // arrivals
    BottomUpKernel<<<leaves, kThreads, 0, stream>>>(
      t,
      count.get(),
      AttributesStep{ t, area.get(), volume.get(), depth.get(), deepest.get(), fuse ? corrected.get() : nullptr,
                      attribute == RegionAttribute::Area ? 0 : 1 });
    CHS_CUDA_CHECK_LAUNCH("BottomUpKernel<AttributesStep>");

    const double * value = attribute == RegionAttribute::Area ? area.get() : volume.get();
    detail::DeviceBuffer<double> height(attribute == RegionAttribute::Height || attribute == RegionAttribute::Dynamics
                                          ? internal
                                          : 1,
                                        stream,
                                        &tracker);
    if (attribute == RegionAttribute::Height || attribute == RegionAttribute::Dynamics)
    {
      HeightKernel<<<blocks, kThreads, 0, stream>>>(t, depth.get(), height.get());
      CHS_CUDA_CHECK_LAUNCH("HeightKernel");
      value = height.get();
    }
    if (attribute == RegionAttribute::Dynamics)
    {
      detail::DeviceBuffer<uint32_t> top(internal, stream, &tracker);
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
      DynamicsKernel<<<blocks, kThreads, 0, stream>>>(n, top.get(), height.get(), area.get());
      CHS_CUDA_CHECK_LAUNCH("DynamicsKernel");
      value = area.get(); // the areas are not needed any more: they hold the dynamics now
      CHS_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, internal * sizeof(uint32_t), stream));
      BottomUpKernel<<<leaves, kThreads, 0, stream>>>(t, count.get(), CorrectedStep{ t, value, corrected.get() });
      CHS_CUDA_CHECK_LAUNCH("BottomUpKernel<CorrectedStep>");
    }
    if (operation == Operation::Watershed)
      WatershedWeightKernel<<<blocks, kThreads, 0, stream>>>(t, corrected.get(), w2.get());
    else
      FilterWeightKernel<<<blocks, kThreads, 0, stream>>>(
        t, value, attribute == RegionAttribute::Area ? 1.0 : 0.0, threshold, w2.get());
    CHS_CUDA_CHECK_LAUNCH("WeightKernel");
  }

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
    GatherKernel<<<blocks, kThreads, 0, stream>>>(internal, values.Current(), dU.get(), dV.get(),
                                                   in.edge ? dEdge.get() : nullptr, w2.get(), sU.get(), sV.get(),
                                                   sEdge.get(), sWeight.get());
    CHS_CUDA_CHECK_LAUNCH("GatherKernel");
  }
  timer.Stop();
  sl::FinishOnDevice(n, sU.get(), sV.get(), sEdge.get(), sWeight.get(), out, timer, result, info, tracker, context);
  return result;
}

} // namespace
} // namespace ah

SingleLinkageResult
WatershedHierarchyCUDA(const DendrogramInput &  in,
                       RegionAttribute          attribute,
                       const DendrogramArrays & out,
                       const ExecutionContext & context,
                       RunInfo *                info)
{
  ah::CheckWatershedAttribute(attribute);
  ah::CheckInput(in, "a watershed hierarchy");
  return ah::Run(in, ah::Operation::Watershed, attribute, 0.0, out, context, info);
}

SingleLinkageResult
FilterRegionsCUDA(const DendrogramInput &  in,
                  RegionAttribute          attribute,
                  double                   threshold,
                  const DendrogramArrays & out,
                  const ExecutionContext & context,
                  RunInfo *                info)
{
  ah::CheckFilter(attribute, threshold);
  ah::CheckInput(in, "an attribute filter");
  return ah::Run(in, ah::Operation::Filter, attribute, threshold, out, context, info);
}

} // namespace chs
