// The sequential reference of the hierarchies by attribute (include/chs/AttributeHierarchy.h): the attributes in one
// pass over the internal nodes in id order (children before parents), the dynamics in one pass from the root down,
// the new tree-edge weights, then the single-linkage dendrogram of the reweighted tree (the graph entry's Kruskal).
#include "AttributeHierarchy/chsAttributeHierarchyBackends.h"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "AttributeHierarchy/chsAttributeHierarchyCheck.h"
#include "AttributeHierarchy/chsExactVolume.h"
#include "chs/AlphaTree.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace chs
{
namespace
{

/** The input's tree with its children (smaller id first) and the attributes of its internal nodes. */
template <typename TNode>
class Tree
{
public:
  explicit Tree(const DendrogramInputT<TNode> & in)
    : m_In(in)
    , m_N(in.vertices)
    , m_Child(2 * (in.vertices - 1), kNone)
  {
    for (uint64_t x = 0; x + 1 < 2 * m_N - 1; ++x)
    {
      const uint64_t k                                   = m_In.parent[x] - m_N;
      m_Child[2 * k + (m_Child[2 * k] == kNone ? 0 : 1)] = TNode(x);
    }
  }

  double
  Altitude(uint64_t x) const
  {
    return x < m_N ? 0.0 : m_In.weight[x - m_N];
  }
  double
  ParentAltitude(uint64_t x) const
  {
    return Altitude(m_In.parent[x]);
  }
  TNode
  Child(uint64_t k, unsigned c) const
  {
    return m_Child[2 * k + c];
  }

  /** area, depth and deepest child of every internal node (index x - n). */
  void
  BottomUp(std::vector<double> & area, std::vector<double> & depth, std::vector<TNode> & deepest) const
  {
    const uint64_t internal = m_N - 1;
    area.assign(internal, 0.0);
    depth.assign(internal, 0.0);
    deepest.assign(internal, kNone);
    for (uint64_t k = 0; k < internal; ++k)
    {
      const uint64_t x  = m_N + k;
      const TNode    c0 = Child(k, 0), c1 = Child(k, 1);
      const bool     leaf0 = c0 < m_N, leaf1 = c1 < m_N;
      area[k] = (leaf0 ? 1.0 : area[c0 - m_N]) + (leaf1 ? 1.0 : area[c1 - m_N]);
      if (leaf0 && leaf1)
        depth[k] = Altitude(x);
      else
      {
        const TNode d = !leaf0 && (leaf1 || depth[c0 - m_N] <= depth[c1 - m_N]) ? c0 : c1;
        deepest[k]    = d;
        depth[k]      = depth[d - m_N];
      }
    }
  }

  /** The volume of every internal node: its exact sum (the children's plus its own term, from the leaves up) in the
   * fixed point of src/AttributeHierarchy/chsExactVolume.h, rounded once. */
  template <unsigned Words>
  std::vector<double>
  Volumes(const std::vector<double> & area, int q) const
  {
    const uint64_t                internal = m_N - 1;
    std::vector<ah::Fixed<Words>> sum(internal);
    std::vector<double>           volume(internal);
    for (uint64_t k = 0; k < internal; ++k)
    {
      const uint64_t   x  = m_N + k;
      const TNode      c0 = Child(k, 0), c1 = Child(k, 1);
      ah::Fixed<Words> s =
        (ah::ToFixed<Words>(ParentAltitude(x), q) - ah::ToFixed<Words>(Altitude(x), q)) * uint64_t(area[k]);
      if (c0 >= m_N)
        s = s + sum[c0 - m_N];
      if (c1 >= m_N)
        s = s + sum[c1 - m_N];
      sum[k]    = s;
      volume[k] = ah::Round(s, q);
    }
    return volume;
  }

  /** The attribute of every internal node (index x - n). */
  std::vector<double>
  Attribute(RegionAttribute attribute) const
  {
    std::vector<double> area, depth;
    std::vector<TNode>  deepest;
    BottomUp(area, depth, deepest);
    if (attribute == RegionAttribute::Area)
      return area;
    if (attribute == RegionAttribute::Volume)
    {
      const ah::VolumeScale scale = ah::ScaleOfWeights(m_In.weight, m_N - 1);
      return scale.words == 2 ? Volumes<2>(area, scale.q) : Volumes<4>(area, scale.q);
    }
    const uint64_t      internal = m_N - 1;
    std::vector<double> height(internal);
    for (uint64_t k = 0; k < internal; ++k)
      height[k] = ParentAltitude(m_N + k) - depth[k];
    if (attribute == RegionAttribute::Height)
      return height;
    // Dynamics: from the root down, a deepest child inherits its parent's value.
    std::vector<double> dynamics(internal);
    const uint64_t      root = 2 * m_N - 2;
    for (uint64_t k = internal; k-- > 0;)
    {
      const uint64_t x = m_N + k, p = m_In.parent[x];
      dynamics[k] = x != root && deepest[p - m_N] == x ? dynamics[p - m_N] : height[k];
    }
    return dynamics;
  }

  /** The attribute of a node, leaves included (area 1, other attributes 0 at the leaves). */
  static double
  Of(const std::vector<double> & internal, uint64_t n, uint64_t x, RegionAttribute attribute)
  {
    if (x >= n)
      return internal[x - n];
    return attribute == RegionAttribute::Area ? 1.0 : 0.0;
  }

private:
  static constexpr TNode          kNone = TNode(~TNode(0));
  const DendrogramInputT<TNode> & m_In;
  const uint64_t                  m_N;
  std::vector<TNode>              m_Child;
};

/** The graph entry's 32-bit end vertices: the input's own, or 64-bit ones narrowed (CheckDendrogramCPU has checked
 * that they are below n, at most MaximumWideDendrogramVertices). */
const uint32_t *
Ends(const uint32_t * ends, uint64_t, std::vector<uint32_t> &)
{
  return ends;
}
const uint32_t *
Ends(const uint64_t * ends, uint64_t count, std::vector<uint32_t> & narrow)
{
  narrow.assign(ends, ends + count);
  return narrow.data();
}

/** The single-linkage dendrogram of the input's tree with the new weights; edges mapped back to the input's. */
template <typename TNode>
SingleLinkageResult
Reweighted(const DendrogramInputT<TNode> &  in,
           const std::vector<double> &      weights,
           const DendrogramArraysT<TNode> & out)
{
  const uint64_t           n = in.vertices, edges = n - 1;
  std::vector<uint64_t>    rank(edges ? edges : 1);
  std::vector<uint32_t>    u32, v32;
  const uint32_t *         u       = Ends(in.u, edges, u32);
  const uint32_t *         v       = Ends(in.v, edges, v32);
  DendrogramArraysT<TNode> inner   = out;
  inner.edge                       = rank.data();
  const SingleLinkageResult result = GraphSingleLinkageCPU(u, v, weights.data(), edges, n, true, inner);
  if (out.edge)
    for (uint64_t r = 0; r < edges; ++r)
      out.edge[r] = in.edge ? in.edge[rank[r]] : rank[r];
  return result;
}

} // namespace

template <typename TNode>
void
DendrogramAttribute(const DendrogramInputT<TNode> & in, RegionAttribute attribute, double * values)
{
  ah::CheckInput(in, "a dendrogram attribute");
  ah::CheckDendrogramCPU(in);
  const Tree<TNode>         tree(in);
  const std::vector<double> internal = tree.Attribute(attribute);
  const uint64_t            n        = in.vertices;
  for (uint64_t x = 0; x < 2 * n - 1; ++x)
    values[x] = x < n ? (attribute == RegionAttribute::Area ? 1.0 : 0.0) : internal[x - n];
}

template <typename TNode>
SingleLinkageResult
WatershedHierarchyCPU(const DendrogramInputT<TNode> &  in,
                      RegionAttribute                  attribute,
                      const DendrogramArraysT<TNode> & out)
{
  ah::CheckWatershedAttribute(attribute);
  ah::CheckInput(in, "a watershed hierarchy");
  ah::CheckDendrogramCPU(in);
  const Tree<TNode>         tree(in);
  const std::vector<double> value    = tree.Attribute(attribute);
  const uint64_t            n        = in.vertices;
  const uint64_t            internal = n - 1;
  const uint64_t            root     = 2 * n - 2;
  std::vector<double>       corrected(internal);
  for (uint64_t k = 0; k < internal; ++k)
  {
    const uint64_t x = n + k;
    if (x == root || tree.Altitude(x) != tree.ParentAltitude(x))
      corrected[k] = value[k];
    else
    {
      const TNode c0 = tree.Child(k, 0), c1 = tree.Child(k, 1);
      corrected[k] = std::max(c0 < n ? 0.0 : corrected[c0 - n], c1 < n ? 0.0 : corrected[c1 - n]);
    }
  }
  std::vector<double> weights(internal);
  for (uint64_t k = 0; k < internal; ++k)
  {
    const TNode c0 = tree.Child(k, 0), c1 = tree.Child(k, 1);
    weights[k] = std::min(c0 < n ? 0.0 : corrected[c0 - n], c1 < n ? 0.0 : corrected[c1 - n]);
  }
  return Reweighted(in, weights, out);
}

template <typename TNode>
SingleLinkageResult
FilterRegionsCPU(const DendrogramInputT<TNode> &  in,
                 RegionAttribute                  attribute,
                 double                           threshold,
                 const DendrogramArraysT<TNode> & out)
{
  ah::CheckFilter(attribute, threshold);
  ah::CheckInput(in, "an attribute filter");
  ah::CheckDendrogramCPU(in);
  const Tree<TNode>         tree(in);
  const std::vector<double> value    = tree.Attribute(attribute);
  const uint64_t            n        = in.vertices;
  const uint64_t            internal = n - 1;
  std::vector<double>       weights(internal);
  for (uint64_t k = 0; k < internal; ++k)
  {
    const double smaller = std::min(Tree<TNode>::Of(value, n, tree.Child(k, 0), attribute),
                                    Tree<TNode>::Of(value, n, tree.Child(k, 1), attribute));
    weights[k]           = smaller < threshold ? 0.0 : in.weight[k];
  }
  return Reweighted(in, weights, out);
}

/** The CPU reference of AlphaTreeFilterRegions: the same entries as the CUDA backend's steps, on host arrays, each
 * on the CPU backend. */
template <typename TNode>
SingleLinkageResult
AlphaTreeFilterRegionsCPU(const TNode *                    parent,
                          const double *                   level,
                          uint64_t                         nodes,
                          const Grid &                     grid,
                          bool                             fullyConnected,
                          RegionAttribute                  attribute,
                          double                           threshold,
                          const DendrogramArraysT<TNode> & out,
                          const ExecutionContext &         caller)
{
  ExecutionContext context = caller; // every step on the CPU, also when Auto fell back here
  context.backend          = Backend::CPU;
  const uint64_t        m  = ImageGraphEdges(grid, fullyConnected, nullptr, nullptr, nullptr);
  const uint64_t        n  = grid.NumberOfVoxels();
  std::vector<uint32_t> u(m), v(m);
  std::vector<uint64_t> ids(m);
  ImageGraphEdges(grid, fullyConnected, u.data(), v.data(), ids.data());
  std::vector<double> saliency(m);
  if constexpr (sizeof(TNode) == sizeof(uint32_t))
    AlphaTreeEdgeSaliency(parent, level, nodes, u.data(), v.data(), m, saliency.data(), context);
  else
  {
    const std::vector<TNode> wu(u.begin(), u.end()), wv(v.begin(), v.end());
    AlphaTreeEdgeSaliency(parent, level, nodes, wu.data(), wv.data(), m, saliency.data(), context);
  }
  const uint64_t        internal = n > 1 ? n - 1 : 0;
  std::vector<TNode>    tParent(2 * n - 1), tU(internal), tV(internal);
  std::vector<double>   tWeight(internal);
  std::vector<uint64_t> tEdge(internal);
  GraphSingleLinkage(u.data(),
                     v.data(),
                     saliency.data(),
                     m,
                     n,
                     false,
                     DendrogramArraysT<TNode>{ tParent.data(), tWeight.data(), tEdge.data(), tU.data(), tV.data() },
                     context);
  for (uint64_t & e : tEdge)
    e = ids[e]; // the image edge index of each tree edge
  DendrogramInputT<TNode> in;
  in.vertices = n;
  in.parent   = tParent.data();
  in.weight   = tWeight.data();
  in.edge     = tEdge.data();
  in.u        = tU.data();
  in.v        = tV.data();
  return FilterRegions(in, attribute, threshold, out, context);
}

#define CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CPU(TNode)                                                                 \
  template CudaHierarchicalSegmentation_EXPORT void DendrogramAttribute<TNode>(                                        \
    const DendrogramInputT<TNode> &, RegionAttribute, double *);                                                       \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult WatershedHierarchyCPU<TNode>(                       \
    const DendrogramInputT<TNode> &, RegionAttribute, const DendrogramArraysT<TNode> &);                               \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult FilterRegionsCPU<TNode>(                            \
    const DendrogramInputT<TNode> &, RegionAttribute, double, const DendrogramArraysT<TNode> &);                       \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult AlphaTreeFilterRegionsCPU<TNode>(                   \
    const TNode *,                                                                                                     \
    const double *,                                                                                                    \
    uint64_t,                                                                                                          \
    const Grid &,                                                                                                      \
    bool,                                                                                                              \
    RegionAttribute,                                                                                                   \
    double,                                                                                                            \
    const DendrogramArraysT<TNode> &,                                                                                  \
    const ExecutionContext &);                                                                                         \
  CHS_INSTANTIATE_ENTRY_WATERSHED_HIERARCHY(TNode);                                                                    \
  CHS_INSTANTIATE_ENTRY_FILTER_REGIONS(TNode);
CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CPU(uint32_t)
CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CPU(uint64_t)
#undef CHS_INSTANTIATE_ATTRIBUTE_HIERARCHY_CPU

} // namespace chs
