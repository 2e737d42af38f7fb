// The sequential reference of the alpha-tree (include/chs/AlphaTree.h), the paper's algorithm 1: Kruskal over the
// edges sorted by (weight, edge index) with a union-find builds the binary partition tree (the single-linkage
// dendrogram of the image graph, src/Engines/SingleLinkage/chsSingleLinkageCPU.cxx), then canonicalisation removes
// every node whose parent has the same level, and the nodes are renumbered by (level, smallest pixel).
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "Common/chsProgress.h"
#include "chsAlphaTreeRule.h"
#include "Engines/SingleLinkage/chsSingleLinkageCPU.h"
#include "Common/chsPixelChecks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace chs
{

namespace
{

/** The tree of an image of n > 1 pixels with node and pixel ids of TNode: the binary partition tree (Kruskal), then
 * canonicalisation and renumbering. */
template <typename TNode, typename TPixel>
uint64_t
CanonicalTree(const TPixel *              pixels,
              const Grid &                grid,
              const AlphaTreeParameters & parameters,
              const AlphaTreeAllocator &  allocate)
{
  const uint64_t n = grid.NumberOfVoxels();
  // The binary partition tree: node n + r is the minimum spanning tree's edge of rank r.
  const uint64_t      total = 2 * n - 1;
  std::vector<TNode>  parent(total);
  std::vector<double> weight(n - 1);
  {
    // The binary partition tree is the first 70% of the progress, the canonicalisation the rest.
    const detail::CpuSubRange sub(0.0f, 0.7f);
    sl::ImageKruskalCPU(pixels, grid, parameters.graph, DendrogramArraysT<TNode>{ parent.data(), weight.data() });
  }
  detail::CpuPhases progress(3, 0.7f, 1.0f);
  auto              levelOf = [&](uint64_t x) { return x < n ? 0.0 : weight[x - n]; };

  // Canonicalisation, from the root down: top[x] is the highest node of x's run of equal levels.
  std::vector<TNode> top(total);
  progress.Start(0, total);
  for (uint64_t x = total; x-- > n;)
  {
    progress.At(total - x);
    const TNode p = parent[x];
    top[x]        = (p != x && weight[p - n] == weight[x - n]) ? top[p] : TNode(x);
  }
  auto kept = [&](uint64_t x) { return x < n || top[x] == x; };

  // Smallest pixel of every kept node, children before parents (ids grow towards the root).
  std::vector<TNode> smallest(total, std::numeric_limits<TNode>::max());
  progress.Start(1, total);
  for (uint64_t x = 0; x < total; ++x)
  {
    progress.At(x);
    if (!kept(x))
      continue;
    if (x < n)
      smallest[x] = TNode(x);
    if (parent[x] != x)
    {
      const TNode p = top[parent[x]];
      smallest[p]   = std::min(smallest[p], smallest[x]);
    }
  }

  // Renumbering of the internal nodes by (level, smallest pixel).
  std::vector<TNode> internal;
  for (uint64_t x = n; x < total; ++x)
    if (kept(x))
      internal.push_back(TNode(x));
  std::sort(internal.begin(),
            internal.end(),
            [&](TNode a, TNode b)
            {
              const double la = levelOf(a), lb = levelOf(b);
              return la < lb || (la == lb && smallest[a] < smallest[b]);
            });
  smallest.clear();
  smallest.shrink_to_fit();
  std::vector<TNode> id(total);
  std::iota(id.begin(), id.begin() + n, TNode(0));
  for (size_t r = 0; r < internal.size(); ++r)
    id[internal[r]] = TNode(n + r);

  const uint64_t        nodes = n + internal.size();
  const AlphaTreeArrays out   = at::Allocated(allocate, nodes);
  progress.Start(2, total);
  for (uint64_t x = 0; x < total; ++x)
  {
    progress.At(x);
    if (!kept(x))
      continue;
    const TNode me = id[x];
    at::SetParent(out, me, parent[x] == x ? me : id[top[parent[x]]]);
    if (out.level)
      out.level[me] = levelOf(x);
  }
  progress.Done();
  return nodes;
}

} // namespace

template <typename TPixel>
AlphaTreeResult
ImageAlphaTreeCPU(const TPixel *              pixels,
                  const Grid &                grid,
                  const AlphaTreeParameters & parameters,
                  const AlphaTreeAllocator &  allocate)
{
  at::CheckedGraph<TPixel>(grid, parameters, ~uint64_t(0));
  const uint64_t n = grid.NumberOfVoxels();
  if (!allocate)
    throw std::invalid_argument("no allocator for the tree");
  AlphaTreeResult result;
  if (n == 1)
  {
    for (unsigned c = 0; c < parameters.graph.components; ++c)
      if (!(pixels[c] - pixels[c] == TPixel(0)))
        throw std::invalid_argument(NonFinitePixelMessage(0, pixels[c] != pixels[c]));
    return at::SinglePixelTree(allocate);
  }
  // Node ids (2n - 1 before canonicalisation) in 32 bits up to MaximumDendrogramVertices pixels.
  result.nodes = parameters.forceWideNodeIds || n > MaximumDendrogramVertices
                   ? CanonicalTree<uint64_t>(pixels, grid, parameters, allocate)
                   : CanonicalTree<uint32_t>(pixels, grid, parameters, allocate);
  return result;
}

template <typename TNode>
uint64_t
AlphaTreeCutCPU(const TNode *  parent,
                const double * level,
                const double * range,
                uint64_t       leaves,
                uint64_t       nodes,
                double         alpha,
                double         omega,
                TNode *        labels)
{
  at::CheckCut(range, alpha, omega);
  const bool constrained = omega < std::numeric_limits<double>::infinity();
  auto qualifies = [&](uint64_t x) { return x < leaves || (level[x] <= alpha && (!constrained || range[x] <= omega)); };
  // From the root down (parents come after their children): the region of a node is its parent's region when the
  // parent qualifies (a qualifying node's children qualify: levels and ranges grow towards the root).
  detail::CpuPhases  progress(2);
  std::vector<TNode> region(nodes);
  progress.Start(0, nodes);
  for (uint64_t x = nodes; x-- > 0;)
  {
    progress.At(nodes - x);
    region[x] = (parent[x] != x && qualifies(parent[x])) ? region[parent[x]] : TNode(x);
  }
  std::vector<TNode> label(nodes, 0);
  TNode              next = 0;
  progress.Start(1, leaves);
  for (uint64_t p = 0; p < leaves; ++p)
  {
    progress.At(p);
    TNode & l = label[region[p]];
    if (l == 0)
      l = ++next;
    labels[p] = l;
  }
  progress.Done();
  return next;
}

template <typename TNode>
void
AlphaTreeSaliencyCPU(const TNode * parent, const double * level, uint64_t nodes, const Grid & pixels, float * saliency)
{
  const at::SaliencyGrid s(pixels);
  if (nodes < pixels.NumberOfVoxels())
    throw std::invalid_argument("a tree of " + std::to_string(nodes) + " nodes for " +
                                std::to_string(pixels.NumberOfVoxels()) + " pixels");
  // Samples with k odd coordinates, k = 0 .. dimension: the pixels, the merge levels, then the largest neighbours.
  detail::CpuPhases progress(s.dimension + 1);
  for (unsigned k = 0; k <= s.dimension; ++k)
  {
    progress.Start(k, s.samples);
    for (uint64_t i = 0; i < s.samples; ++i)
    {
      progress.At(i);
      uint64_t c[3];
      if (at::OddCoordinates(s, i, c) == k)
        saliency[i] = k == 0 ? 0.0f : at::SaliencySample(s, parent, level, saliency, i, c, k);
    }
  }
  progress.Done();
}

template <typename TNode>
void
AlphaTreeEdgeSaliencyCPU(const TNode *  parent,
                         const double * level,
                         uint64_t       nodes,
                         const TNode *  u,
                         const TNode *  v,
                         uint64_t       count,
                         double *       saliency)
{
  for (uint64_t i = 0; i < count; ++i)
    if (u[i] >= nodes || v[i] >= nodes)
      throw std::invalid_argument("edge " + std::to_string(i) + " joins nodes " + std::to_string(u[i]) + " and " +
                                  std::to_string(v[i]) + "; the tree has " + std::to_string(nodes) + " nodes");
  detail::CpuPhases progress(1);
  progress.Start(0, count);
  for (uint64_t i = 0; i < count; ++i)
  {
    progress.At(i);
    saliency[i] = level[at::CommonAncestor(parent, u[i], v[i])];
  }
  progress.Done();
}

#define CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CPU(TNode)                                                                  \
  template CudaHierarchicalSegmentation_EXPORT uint64_t AlphaTreeCutCPU<TNode>(                                        \
    const TNode *, const double *, const double *, uint64_t, uint64_t, double, double, TNode *);                       \
  template CudaHierarchicalSegmentation_EXPORT void AlphaTreeSaliencyCPU<TNode>(                                       \
    const TNode *, const double *, uint64_t, const Grid &, float *);                                                   \
  template CudaHierarchicalSegmentation_EXPORT void AlphaTreeEdgeSaliencyCPU<TNode>(                                   \
    const TNode *, const double *, uint64_t, const TNode *, const TNode *, uint64_t, double *);                        \
  CHS_INSTANTIATE_ENTRY_ALPHA_TREE_CUT(TNode);                                                                         \
  CHS_INSTANTIATE_ENTRY_ALPHA_TREE_SALIENCY(TNode);                                                                    \
  CHS_INSTANTIATE_ENTRY_ALPHA_TREE_EDGE_SALIENCY(TNode);
CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CPU(uint32_t)
CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CPU(uint64_t)
#undef CHS_INSTANTIATE_ALPHA_TREE_QUERIES_CPU

#define CHS_INSTANTIATE_ALPHA_TREE_CPU(T)                                                                              \
  template CudaHierarchicalSegmentation_EXPORT AlphaTreeResult ImageAlphaTreeCPU<T>(                                   \
    const T *, const Grid &, const AlphaTreeParameters &, const AlphaTreeAllocator &);                                 \
  CHS_INSTANTIATE_ENTRY_IMAGE_ALPHA_TREE(T)
CHS_INSTANTIATE_ALPHA_TREE_CPU(uint8_t);
CHS_INSTANTIATE_ALPHA_TREE_CPU(uint16_t);
CHS_INSTANTIATE_ALPHA_TREE_CPU(int16_t);
CHS_INSTANTIATE_ALPHA_TREE_CPU(float);
#undef CHS_INSTANTIATE_ALPHA_TREE_CPU

} // namespace chs
