// The alpha-tree's checks that both backends make (include/chs/AlphaTree.h states the definition).
#ifndef chsAlphaTreeRule_h
#define chsAlphaTreeRule_h

#include "chs/AlphaTree.h"
#include "Engines/SingleLinkage/chsSingleLinkageRule.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace chs
{
namespace at
{

/** Whether a construction numbering pixels and then K edge slots per pixel in 32 bits, one value kept free, has room
 * for the image graph. */
inline bool
SlotIdsFit(const sl::ImageGraph & graph)
{
  return graph.Pixels() * (graph.slots + 1) < (uint64_t(1) << 32) - 1;
}

/** The refusal of an image graph too large for SlotIdsFit: its pixels and edge slots. */
inline std::string
SlotIdsMessage(const sl::ImageGraph & graph)
{
  return "the image has " + std::to_string(graph.Pixels()) + " pixels and " +
         std::to_string(graph.Pixels() * graph.slots) + " edge slots; their sum must stay below 2^32 - 1";
}

/** The image graph of the tree, after the size checks that both backends make (include/chs/AlphaTree.h): at most
 * `maximumPixels` (the CUDA backend: MaximumDendrogramVertices for 32-bit node ids; the CPU reference has no limit of
 * its own), and edge slots below 2^(64 - code bits), the edge indices that the weight codes leave in a 64-bit key
 * (sl::WeightCodeBits: 2^56 for 8-bit integer scalar pixels, 2^48 for 16-bit ones, 2^33 for float weights; the CPU
 * reference sorts such keys, the level-synchronous and spanning-tree constructions number edges so where 32 bits do
 * not hold them). The CUDA backend checks what each of its constructions needs on top. */
template <typename TPixel>
sl::ImageGraph
CheckedGraph(const Grid & grid, const AlphaTreeParameters & parameters, uint64_t maximumPixels)
{
  const sl::ImageGraph graph(grid, parameters.graph.fullyConnected);
  sl::CheckImageGraphPixels(grid, parameters.graph, maximumPixels);
  const unsigned indexBits = 64 - sl::WeightCodeBits<TPixel>(parameters.graph.components);
  if ((graph.Pixels() * graph.slots) >> indexBits)
    throw std::invalid_argument("the image has " + std::to_string(graph.Pixels() * graph.slots) +
                                " edge slots; fewer than 2^" + std::to_string(indexBits) + " are supported");
  return graph;
}

/** The arrays of a tree of `nodes` nodes, from the caller's allocator: exactly one parent array, 32-bit only for
 * trees of at most MaximumNarrowTreeNodes nodes. */
inline AlphaTreeArrays
Allocated(const AlphaTreeAllocator & allocate, uint64_t nodes)
{
  const AlphaTreeArrays out = allocate(nodes);
  if ((out.parent == nullptr) == (out.parent64 == nullptr))
    throw std::invalid_argument(out.parent ? "the allocator gave both a 32-bit and a 64-bit parent array"
                                           : "the allocator gave no parent array for the tree");
  if (out.parent && nodes > MaximumNarrowTreeNodes)
    throw std::invalid_argument(
      "a tree of " + std::to_string(nodes) +
      " nodes needs 64-bit parents (AlphaTreeArrays::parent64); the allocator gave 32-bit ones");
  return out;
}

/** Writes node x's parent p to whichever parent array the allocator gave. */
inline void
SetParent(const AlphaTreeArrays & out, uint64_t x, uint64_t p)
{
  if (out.parent64)
    out.parent64[x] = p;
  else
    out.parent[x] = uint32_t(p);
}

/** The tree of a 1-pixel image: one leaf, its own root. */
inline AlphaTreeResult
SinglePixelTree(const AlphaTreeAllocator & allocate)
{
  const AlphaTreeArrays out = Allocated(allocate, 1);
  SetParent(out, 0, 0);
  if (out.level)
    out.level[0] = 0.0;
  AlphaTreeResult result;
  result.nodes = 1;
  return result;
}

/** The checks of a cut's parameters that both backends make. */
inline void
CheckCut(const double * range, double alpha, double omega)
{
  if (alpha != alpha || omega != omega)
    throw std::invalid_argument("alpha and omega must not be NaN");
  if (omega < std::numeric_limits<double>::infinity() && range == nullptr)
    throw std::invalid_argument("an alpha-omega cut needs the nodes' value ranges");
}

/** The interpixel grid of a saliency map: sizes 2 s - 1 and strides, of samples and of pixels. */
struct SaliencyGrid
{
  uint64_t size[3] = { 1, 1, 1 }, stride[3] = { 1, 1, 1 };
  uint64_t pixels[3] = { 1, 1, 1 }, pixelStride[3] = { 1, 1, 1 };
  unsigned dimension = 2;
  uint64_t samples   = 1;

  explicit SaliencyGrid(const Grid & g)
    : dimension(g.dimension)
  {
    for (unsigned d = 0; d < g.dimension; ++d)
    {
      pixels[d] = g.size[d];
      size[d]   = 2 * g.size[d] - 1;
    }
    for (unsigned d = 1; d < 3; ++d)
    {
      stride[d]      = stride[d - 1] * size[d - 1];
      pixelStride[d] = pixelStride[d - 1] * pixels[d - 1];
    }
    samples = size[0] * size[1] * size[2];
  }
};

/** The lowest common ancestor of nodes a and b: climb the smaller id (parents have larger ids) until the paths meet. */
template <typename TNode>
CHS_HOST_DEVICE TNode
CommonAncestor(const TNode * parent, TNode a, TNode b)
{
  while (a != b)
  {
    if (a < b)
      a = parent[a];
    else
      b = parent[b];
  }
  return a;
}

/** The merge level of pixels a and b. */
template <typename TNode>
CHS_HOST_DEVICE float
MergeLevel(const TNode * parent, const double * level, TNode a, TNode b)
{
  return float(level[CommonAncestor(parent, a, b)]);
}

/** Sample i of the grid: the number of odd coordinates (k), and for k = 1 the two pixels it lies between; for k > 1,
 * the largest of the samples beside it along its odd axes (those have k - 1 odd coordinates). */
CHS_HOST_DEVICE unsigned
OddCoordinates(const SaliencyGrid & s, uint64_t i, uint64_t * c)
{
  c[0]         = i % s.size[0];
  c[1]         = (i / s.size[0]) % s.size[1];
  c[2]         = i / (s.size[0] * s.size[1]);
  unsigned odd = 0;
  for (unsigned d = 0; d < 3; ++d)
    odd += unsigned(c[d] & 1);
  return odd;
}

template <typename TNode>
CHS_HOST_DEVICE float
SaliencySample(const SaliencyGrid & s,
               const TNode *        parent,
               const double *       level,
               const float *        out,
               uint64_t             i,
               const uint64_t *     c,
               unsigned             k)
{
  if (k == 1)
  {
    uint64_t p = 0, q = 0;
    for (unsigned d = 0; d < 3; ++d)
    {
      p += (c[d] / 2) * s.pixelStride[d];
      q += ((c[d] + 1) / 2) * s.pixelStride[d];
    }
    return MergeLevel(parent, level, TNode(p), TNode(q));
  }
  float m = 0.0f;
  for (unsigned d = 0; d < 3; ++d)
    if (c[d] & 1)
    {
      m = out[i - s.stride[d]] > m ? out[i - s.stride[d]] : m;
      m = out[i + s.stride[d]] > m ? out[i + s.stride[d]] : m;
    }
  return m;
}

} // namespace at
} // namespace chs

#endif
