// The sequential reference of the single-linkage dendrogram (include/chs/SingleLinkage.h): Kruskal over the edges
// sorted by (weight, edge index), with the bottom-up union-find dendrogram (PANDORA's algorithm 2) run in the same
// pass: each edge that joins two clusters is the next tree edge, and becomes the parent of both clusters' current
// top nodes.
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "Common/chsProgress.h"
#include "chsSingleLinkageRule.h"
#include "chsSingleLinkageCPU.h"
#include "Common/chsPixelChecks.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

namespace chs
{
namespace
{

/** Union-find by size with path halving; each set also remembers its current top dendrogram node. Ids of TNode. */
template <typename TNode>
class Clusters
{
public:
  explicit Clusters(uint64_t n)
    : m_Parent(n)
    , m_Size(n, 1)
    , m_Top(n)
  {
    std::iota(m_Parent.begin(), m_Parent.end(), TNode(0));
    std::iota(m_Top.begin(), m_Top.end(), TNode(0));
  }
  TNode
  Find(TNode a)
  {
    while (m_Parent[a] != a)
    {
      m_Parent[a] = m_Parent[m_Parent[a]];
      a           = m_Parent[a];
    }
    return a;
  }
  /** Joins the clusters of roots a and b under dendrogram node `node`, whose children get it as parent. */
  void
  Join(TNode a, TNode b, TNode node, TNode * parent)
  {
    parent[m_Top[a]] = node;
    parent[m_Top[b]] = node;
    if (m_Size[a] < m_Size[b])
      std::swap(a, b);
    m_Parent[b] = a;
    m_Size[a] += m_Size[b];
    m_Top[a] = node;
  }

private:
  std::vector<TNode> m_Parent, m_Size, m_Top;
};

/** Runs Kruskal over `order` (edges sorted by (weight, index), as ids or as keys) and writes the dendrogram; returns
 * the number of tree edges found (n - 1 when the graph is connected). ends(id, a, b) gives an edge's end vertices,
 * record(rank, id, a, b) stores a tree edge's attributes. */
template <typename TNode, class FEnds, class FRecord>
uint64_t
Kruskal(uint64_t                      n,
        const std::vector<uint64_t> & order,
        TNode *                       parent,
        FEnds &&                      ends,
        FRecord &&                    record,
        detail::CpuPhases &           progress)
{
  Clusters<TNode> clusters(n);
  uint64_t        rank = 0;
  progress.Start(2, order.size());
  for (uint64_t k = 0; k < order.size(); ++k)
  {
    const uint64_t id = order[k];
    progress.At(k);
    if (rank + 1 == n)
      break;
    TNode a, b;
    ends(id, a, b);
    const TNode ra = clusters.Find(a), rb = clusters.Find(b);
    if (ra == rb)
      continue;
    const TNode node = TNode(n + rank);
    clusters.Join(ra, rb, node, parent);
    record(rank, id, a, b);
    ++rank;
  }
  parent[2 * n - 2] = TNode(2 * n - 2);
  progress.Done();
  return rank;
}

} // namespace

namespace sl
{

template <typename TPixel, typename TNode>
void
ImageKruskalCPU(const TPixel *                   pixels,
                const Grid &                     grid,
                const ImageGraphParameters &     parameters,
                const DendrogramArraysT<TNode> & out)
{
  const sl::ImageGraph graph(grid, parameters.fullyConnected);
  const bool           narrow = sl::NarrowCodes<TPixel>(parameters.components);
  const uint64_t       n      = graph.Pixels();
  const unsigned       c      = parameters.components;
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    for (uint64_t i = 0; i < n * c; ++i)
      if (!std::isfinite(pixels[i]))
        throw std::invalid_argument(NonFinitePixelMessage(i / c, std::isnan(pixels[i])));
  }

  // Every edge as (code << shift | edge index): sorting the keys sorts the edges by (weight, index). Codes of 8 or
  // 16 bits: a counting sort (raster order is index order) with 56- or 48-bit edge indices; other codes (31 bits for
  // floats, 32 for 32-bit integers) with 33- or 32-bit edge indices, sorted. Progress: the edges, their sort, Kruskal
  // (one third each).
  const int             codeBits = int(sl::WeightCodeBits<TPixel>(parameters.components));
  const int             shift    = 64 - codeBits;
  const uint64_t        mask     = (uint64_t(1) << shift) - 1;
  detail::CpuPhases     progress(3);
  std::vector<uint64_t> keys;
  auto                  forEachEdge = [&](auto && f)
  {
    uint64_t p = 0;
    for (int64_t z = 0; z < graph.nz; ++z)
      for (int64_t y = 0; y < graph.ny; ++y)
        for (int64_t x = 0; x < graph.nx; ++x, ++p, progress.At(p))
          for (unsigned s = 0; s < graph.slots; ++s)
          {
            const int64_t q = graph.Neighbour(x, y, z, s);
            if (q >= 0)
              f(sl::EdgeCode(pixels + p * c, pixels + uint64_t(q) * c, c, parameters.distance), p * graph.slots + s);
          }
  };
  if (narrow)
  {
    const uint64_t        codes = uint64_t(1) << codeBits;
    std::vector<uint64_t> start(codes + 1, 0);
    progress.Start(0, n);
    forEachEdge([&](uint32_t code, uint64_t) { ++start[code + 1]; });
    for (uint64_t k = 1; k <= codes; ++k)
      start[k] += start[k - 1];
    keys.resize(start[codes]);
    progress.Start(1, n);
    forEachEdge([&](uint32_t code, uint64_t e) { keys[start[code]++] = (uint64_t(code) << shift) | e; });
  }
  else
  {
    keys.reserve(n * graph.slots);
    progress.Start(0, n);
    forEachEdge([&](uint32_t code, uint64_t e) { keys.push_back((uint64_t(code) << shift) | e); });
    progress.Start(1, 1);
    std::sort(keys.begin(), keys.end());
  }

  const bool     isFloat = sl::FloatWeights<TPixel>(c);
  const uint64_t found   = Kruskal(
    n,
    keys,
    out.parent,
    [&](uint64_t key, TNode & a, TNode & b) { graph.Ends(key & mask, a, b); },
    [&](uint64_t rank, uint64_t key, TNode a, TNode b)
    {
      if (out.weight)
        out.weight[rank] = sl::WeightOf(uint32_t(key >> shift), isFloat);
      if (out.edge)
        out.edge[rank] = key & mask;
      if (out.u)
        out.u[rank] = a;
      if (out.v)
        out.v[rank] = b;
    },
    progress);
  if (found + 1 != n)
    throw std::logic_error("an image graph is connected, but Kruskal found " + std::to_string(found) + " edges");
}

} // namespace sl

template <typename TPixel, typename TNode>
SingleLinkageResult
ImageSingleLinkageCPU(const TPixel *                   pixels,
                      const Grid &                     grid,
                      const ImageGraphParameters &     parameters,
                      const DendrogramArraysT<TNode> & out)
{
  // 64-bit node ids: no pixel limit of the reference's own (the edge keys' index bits bound the slots).
  sl::CheckedImageEdgeKeys<TPixel>(grid,
                                   parameters,
                                   sl::ImageGraph(grid, parameters.fullyConnected),
                                   sizeof(TNode) == sizeof(uint32_t) ? MaximumDendrogramVertices : UINT64_MAX);
  sl::ImageKruskalCPU(pixels, grid, parameters, out);
  return {};
}

uint64_t
ImageGraphEdges(const Grid & grid, bool fullyConnected, uint32_t * u, uint32_t * v, uint64_t * edge)
{
  const sl::ImageGraph graph(grid, fullyConnected);
  sl::CheckImageGraph(grid, ImageGraphParameters{ fullyConnected }, graph, 32);
  // Rows (y, z): each row's edges counted per slot (a slot's valid x form one range), their offsets summed, then
  // each row written at its offset, pixel by pixel and slot by slot.
  const int64_t rows = graph.ny * graph.nz;
  const auto    row  = [&](int64_t r, uint64_t at, bool write)
  {
    const int64_t y = r % graph.ny, z = r / graph.ny;
    int64_t       lo[13], hi[13], step[13];
    uint64_t      count = 0;
    for (unsigned s = 0; s < graph.slots; ++s)
    {
      graph.SlotRange(y, z, s, lo[s], hi[s]);
      step[s] = (int64_t(graph.dz[s]) * graph.ny + graph.dy[s]) * graph.nx + graph.dx[s];
      count += uint64_t(std::max<int64_t>(0, hi[s] - lo[s]));
    }
    if (!write)
      return count;
    uint64_t p = uint64_t(r) * uint64_t(graph.nx);
    for (int64_t x = 0; x < graph.nx; ++x, ++p)
      for (unsigned s = 0; s < graph.slots; ++s)
        if (x >= lo[s] && x < hi[s])
        {
          u[at]    = uint32_t(p);
          v[at]    = uint32_t(int64_t(p) + step[s]);
          edge[at] = p * graph.slots + s;
          ++at;
        }
    return count;
  };
  // Counting is a few operations a row; the writing is spread over the host's threads.
  std::vector<uint64_t> offset(size_t(rows) + 1, 0);
  for (int64_t r = 0; r < rows; ++r)
    offset[size_t(r) + 1] = offset[size_t(r)] + row(r, 0, false);
  if (u)
  {
    const unsigned threads =
      unsigned(std::max<int64_t>(1, std::min<int64_t>(rows / 64, std::min(16u, std::thread::hardware_concurrency()))));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back(
        [&, t]
        {
          for (int64_t r = rows * t / threads; r < rows * (t + 1) / threads; ++r)
            row(r, offset[size_t(r)], true);
        });
    for (auto & t : pool)
      t.join();
  }
  return offset.back();
}

template <typename TWeight, typename TNode>
SingleLinkageResult
GraphSingleLinkageCPU(const uint32_t *                 u,
                      const uint32_t *                 v,
                      const TWeight *                  w,
                      uint64_t                         edgeCount,
                      uint64_t                         vertexCount,
                      bool                             inputIsTree,
                      const DendrogramArraysT<TNode> & out)
{
  static_assert(std::is_floating_point<TWeight>::value, "graph weights are float or double");
  sl::CheckGraphSizes(edgeCount, vertexCount, inputIsTree, sl::MaximumVertices<TNode>());
  for (uint64_t i = 0; i < edgeCount; ++i)
  {
    if (u[i] >= vertexCount || v[i] >= vertexCount)
      throw std::invalid_argument("edge " + std::to_string(i) + " joins vertices " + std::to_string(u[i]) + " and " +
                                  std::to_string(v[i]) + "; vertex ids are below " + std::to_string(vertexCount));
    if (std::isnan(w[i]))
      throw std::invalid_argument("the weight of edge " + std::to_string(i) + " is NaN");
  }
  // Sort (weight code, index) pairs: the order of (weight, index). Progress: the codes, the sort, Kruskal.
  detail::CpuPhases                          progress(3);
  std::vector<std::pair<uint64_t, uint32_t>> sorted(edgeCount);
  progress.Start(0, edgeCount);
  for (uint64_t i = 0; i < edgeCount; ++i)
  {
    progress.At(i);
    sorted[i] = { uint64_t(sl::OrderedCode(w[i])), uint32_t(i) };
  }
  progress.Start(1, 1);
  std::sort(sorted.begin(), sorted.end());
  std::vector<uint64_t> order(edgeCount);
  for (uint64_t i = 0; i < edgeCount; ++i)
    order[i] = sorted[i].second;
  sorted.clear();
  sorted.shrink_to_fit();
  const uint64_t found = Kruskal(
    vertexCount,
    order,
    out.parent,
    [&](uint64_t id, TNode & a, TNode & b)
    {
      a = u[id];
      b = v[id];
    },
    [&](uint64_t rank, uint64_t id, TNode a, TNode b)
    {
      if (out.weight)
        out.weight[rank] = double(w[id]);
      if (out.edge)
        out.edge[rank] = id;
      if (out.u)
        out.u[rank] = a;
      if (out.v)
        out.v[rank] = b;
    },
    progress);
  if (found + 1 != vertexCount)
    throw std::invalid_argument(sl::NotConnectedMessage(vertexCount - found, edgeCount + 1 == vertexCount));
  return {};
}

#define CHS_INSTANTIATE_IMAGE(T)                                                                                       \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult ImageSingleLinkageCPU<T, uint32_t>(                 \
    const T *, const Grid &, const ImageGraphParameters &, const DendrogramArrays &);                                  \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult ImageSingleLinkageCPU<T, uint64_t>(                 \
    const T *, const Grid &, const ImageGraphParameters &, const DendrogramArraysT<uint64_t> &);                       \
  CHS_INSTANTIATE_ENTRY_IMAGE_SINGLE_LINKAGE(T, uint32_t);                                                             \
  CHS_INSTANTIATE_ENTRY_IMAGE_SINGLE_LINKAGE(T, uint64_t);
CHS_INSTANTIATE_IMAGE(uint8_t)
CHS_INSTANTIATE_IMAGE(int8_t)
CHS_INSTANTIATE_IMAGE(uint16_t)
CHS_INSTANTIATE_IMAGE(int16_t)
CHS_INSTANTIATE_IMAGE(uint32_t)
CHS_INSTANTIATE_IMAGE(int32_t)
CHS_INSTANTIATE_IMAGE(float)
CHS_INSTANTIATE_IMAGE(double)
#undef CHS_INSTANTIATE_IMAGE
#define CHS_INSTANTIATE_KRUSKAL(T)                                                                                     \
  template void sl::ImageKruskalCPU<T, uint32_t>(                                                                      \
    const T *, const Grid &, const ImageGraphParameters &, const DendrogramArrays &);                                  \
  template void sl::ImageKruskalCPU<T, uint64_t>(                                                                      \
    const T *, const Grid &, const ImageGraphParameters &, const DendrogramArraysT<uint64_t> &);
CHS_INSTANTIATE_KRUSKAL(uint8_t)
CHS_INSTANTIATE_KRUSKAL(uint16_t)
CHS_INSTANTIATE_KRUSKAL(int16_t)
CHS_INSTANTIATE_KRUSKAL(float)
#undef CHS_INSTANTIATE_KRUSKAL

#define CHS_INSTANTIATE_GRAPH(T, TNode)                                                                                \
  template CudaHierarchicalSegmentation_EXPORT SingleLinkageResult GraphSingleLinkageCPU<T, TNode>(                    \
    const uint32_t *, const uint32_t *, const T *, uint64_t, uint64_t, bool, const DendrogramArraysT<TNode> &);        \
  CHS_INSTANTIATE_ENTRY_GRAPH_SINGLE_LINKAGE(T, TNode);
CHS_INSTANTIATE_GRAPH(float, uint32_t)
CHS_INSTANTIATE_GRAPH(float, uint64_t)
CHS_INSTANTIATE_GRAPH(double, uint32_t)
CHS_INSTANTIATE_GRAPH(double, uint64_t)
#undef CHS_INSTANTIATE_GRAPH

} // namespace chs
