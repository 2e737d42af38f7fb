// The single-linkage definition in the few functions both backends call (include/chs/SingleLinkage.h states it):
// the image graph's edge slots, the edge weight and its order-preserving code. Compiled by nvcc for the CUDA
// backend and by the host compiler (without contraction) for the CPU reference, so the two cannot drift apart.
#ifndef chsSingleLinkageRule_h
#define chsSingleLinkageRule_h

#include "chs/SingleLinkage.h"
#include "Common/chsHostDevice.h"
#include "Common/chsOrderedCode.h"
#include "Common/chsRoundedFloat.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace chs
{
namespace sl
{

/** The image graph: size, and the K forward neighbours of a pixel (those after it in raster order, by increasing
 * raster offset). Edge index = pixel * K + slot. */
struct ImageGraph
{
  int64_t  nx = 1, ny = 1, nz = 1;
  unsigned slots  = 0;
  int8_t   dx[13] = {}, dy[13] = {}, dz[13] = {};

  ImageGraph() = default;
  ImageGraph(const Grid & grid, bool fullyConnected)
    : nx(int64_t(grid.size[0]))
    , ny(int64_t(grid.size[1]))
    , nz(grid.dimension == 3 ? int64_t(grid.size[2]) : 1)
  {
    const int zs = grid.dimension == 3 ? 1 : 0;
    for (int z = 0; z <= zs; ++z)
      for (int y = -1; y <= 1; ++y)
        for (int x = -1; x <= 1; ++x)
        {
          const bool forward = z > 0 || (z == 0 && y > 0) || (z == 0 && y == 0 && x > 0);
          const int  order   = (x != 0) + (y != 0) + (z != 0);
          if (forward && (fullyConnected || order == 1))
          {
            dx[slots] = int8_t(x);
            dy[slots] = int8_t(y);
            dz[slots] = int8_t(z);
            ++slots;
          }
        }
  }
  CHS_HOST_DEVICE uint64_t
  Pixels() const
  {
    return uint64_t(nx * ny * nz);
  }
  /** The far end of slot s of pixel (x, y, z), or -1 when it lies outside the image. */
  CHS_HOST_DEVICE int64_t
  Neighbour(int64_t x, int64_t y, int64_t z, unsigned s) const
  {
    const int64_t qx = x + dx[s], qy = y + dy[s], qz = z + dz[s];
    if (qx < 0 || qx >= nx || qy < 0 || qy >= ny || qz >= nz)
      return -1;
    return (qz * ny + qy) * nx + qx;
  }
  /** The pixel whose slot s reaches (x, y, z), or -1 when it lies outside the image. */
  CHS_HOST_DEVICE int64_t
  Backward(int64_t x, int64_t y, int64_t z, unsigned s) const
  {
    const int64_t px = x - dx[s], py = y - dy[s], pz = z - dz[s];
    if (px < 0 || px >= nx || py < 0 || py >= ny || pz < 0)
      return -1;
    return (pz * ny + py) * nx + px;
  }
  /** The pixels x in [lo, hi) of row (y, z) whose slot s is an edge (an empty range when the slot leaves the image
   * through y or z). The image graph's edges in edge-index order (ImageGraphEdges) are counted and placed by it. */
  CHS_HOST_DEVICE void
  SlotRange(int64_t y, int64_t z, unsigned s, int64_t & lo, int64_t & hi) const
  {
    const bool inside = y + dy[s] >= 0 && y + dy[s] < ny && z + dz[s] < nz;
    lo                = inside && dx[s] < 0 ? 1 : 0;
    hi                = inside ? nx - (dx[s] > 0 ? 1 : 0) : 0;
  }
  /** The end vertices of edge index e (which must lie inside the image), 32- or 64-bit. */
  template <typename TVertex>
  CHS_HOST_DEVICE void
  Ends(uint64_t e, TVertex & p, TVertex & q) const
  {
    const uint64_t pixel = e / slots;
    const unsigned s     = unsigned(e - pixel * slots);
    const int64_t  x = int64_t(pixel % uint64_t(nx)), rest = int64_t(pixel / uint64_t(nx));
    const int64_t  y = rest % ny, z = rest / ny;
    p = TVertex(pixel);
    q = TVertex(((z + dz[s]) * ny + (y + dy[s])) * nx + (x + dx[s]));
  }
};

/** A tiling of an image into tiles of tx x ty x tz pixels (powers of two), numbered in raster order; a pixel's local
 * index in its tile is (z << (sx + sy)) | (y << sx) | x. The tile stages of the alpha-tree and of the minimum spanning
 * tree use it. */
struct TileLayout
{
  int32_t  tx = 1, ty = 1, tz = 1;
  uint32_t sx = 0, sy = 0;         // log2 of tx and ty
  uint32_t cx = 1, cy = 1, cz = 1; // tiles along each axis
  uint32_t tiles = 1;

  TileLayout() = default;
  TileLayout(const ImageGraph & g, int32_t x, int32_t y, int32_t z)
    : tx(x)
    , ty(y)
    , tz(z)
    , sx(uint32_t(__builtin_ctz(uint32_t(x))))
    , sy(uint32_t(__builtin_ctz(uint32_t(y))))
    , cx(uint32_t((g.nx + x - 1) / x))
    , cy(uint32_t((g.ny + y - 1) / y))
    , cz(uint32_t((g.nz + z - 1) / z))
    , tiles(cx * cy * cz)
  {
  }
  /** Tile t's first pixel (x0, y0, z0) and its extents, smaller than the tile's at the image's far sides. */
  CHS_HOST_DEVICE void
  Box(uint32_t           t,
      const ImageGraph & g,
      int64_t &          x0,
      int64_t &          y0,
      int64_t &          z0,
      int32_t &          ex,
      int32_t &          ey,
      int32_t &          ez) const
  {
    x0 = int64_t(t % cx) * tx;
    y0 = int64_t((t / cx) % cy) * ty;
    z0 = int64_t(t / (cx * cy)) * tz;
    ex = int32_t(g.nx - x0 < tx ? g.nx - x0 : tx);
    ey = int32_t(g.ny - y0 < ty ? g.ny - y0 : ty);
    ez = int32_t(g.nz - z0 < tz ? g.nz - z0 : tz);
  }
};

/** Order-preserving 32-bit code of a non-negative weight: the value for integers, the bits for floats (-0 coded as
 * +0), as the Image Foresting Transform codes its weights. */
CHS_HOST_DEVICE uint32_t
CodeOf(float f)
{
  return EncodeOrdered(f);
}
CHS_HOST_DEVICE uint32_t
CodeOf(uint32_t i)
{
  return i;
}

/** The weight that a code stands for. */
CHS_HOST_DEVICE double
WeightOf(uint32_t code, bool isFloat)
{
  if (!isFloat)
    return double(code);
#if defined(__CUDA_ARCH__)
  return double(__uint_as_float(code));
#else
  float f;
  std::memcpy(&f, &code, sizeof(f));
  return double(f);
#endif
}

/** Whether the image's edge weights are floats (float or double pixels, or vectors) or exact unsigned integers. */
template <typename TPixel>
constexpr bool
FloatWeights(unsigned components)
{
  return std::is_floating_point<TPixel>::value || components > 1;
}

/** |a - b| of one component: exact for integers of up to 32 bits, in float for float, rounded to float for
 * double. */
template <typename TPixel>
CHS_HOST_DEVICE uint32_t
ScalarDifferenceCode(TPixel a, TPixel b)
{
  if constexpr (std::is_floating_point<TPixel>::value)
  {
    const TPixel d = a > b ? a - b : b - a;
    return CodeOf(static_cast<float>(d));
  }
  else
  {
    static_assert(sizeof(TPixel) <= 4, "integer pixels of up to 32 bits");
    const int64_t d = int64_t(a) - int64_t(b);
    return uint32_t(d < 0 ? -d : d);
  }
}

/** The code of the weight between pixels at a and b (`components` interleaved values each). */
template <typename TPixel>
CHS_HOST_DEVICE uint32_t
EdgeCode(const TPixel * a, const TPixel * b, unsigned components, VectorDistance distance)
{
  if (components == 1)
    return ScalarDifferenceCode(a[0], b[0]);
  float acc = 0.0f;
  for (unsigned c = 0; c < components; ++c)
  {
    float d;
    if constexpr (std::is_floating_point<TPixel>::value)
      d = static_cast<float>(a[c] > b[c] ? a[c] - b[c] : b[c] - a[c]);
    else
      d = static_cast<float>(ScalarDifferenceCode(a[c], b[c]));
    if (distance == VectorDistance::L1)
      acc = rn::Add(acc, d);
    else if (distance == VectorDistance::L2)
      acc = rn::Add(acc, rn::Mul(d, d));
    else
      acc = d > acc ? d : acc;
  }
  return CodeOf(distance == VectorDistance::L2 ? rn::Sqrt(acc) : acc);
}

/** Order-preserving unsigned code of a graph weight of any sign (-0 coded as +0; NaN must be rejected before): the
 * bits with the sign bit flipped for non-negative values, all bits flipped for negative ones. */
template <typename T>
CHS_HOST_DEVICE typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type
OrderedCode(T f)
{
  using Bits          = typename std::conditional<sizeof(T) == 4, uint32_t, uint64_t>::type;
  constexpr Bits sign = Bits(1) << (8 * sizeof(T) - 1);
  const T        g    = f == T(0) ? T(0) : f;
  Bits           bits;
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    bits = __float_as_uint(g);
  else
    bits = Bits(__double_as_longlong(g));
#else
  std::memcpy(&bits, &g, sizeof(bits));
#endif
  return (bits & sign) ? ~bits : (bits | sign);
}

/** Whether an image's edge weights are codes of at most 16 bits (integer scalar pixels of 8 or 16 bits): the CPU
 * reference orders their edges by a counting sort, with edge indices of 64 - 8 x sizeof(TPixel) bits. */
template <typename TPixel>
constexpr bool
NarrowCodes(unsigned components)
{
  return std::is_integral<TPixel>::value && sizeof(TPixel) <= 2 && components == 1;
}

/** Bits of an image's weight codes: 8 or 16 for integer scalar pixels of 8 or 16 bits (|a - b| of two of them), 31
 * for float weights (float, double and vector pixels: the bits of a non-negative float, inf included, stay below
 * 2^31), 32 for integer scalar pixels of 32 bits. */
template <typename TPixel>
constexpr unsigned
WeightCodeBits(unsigned components)
{
  return NarrowCodes<TPixel>(components) ? unsigned(8 * sizeof(TPixel)) : FloatWeights<TPixel>(components) ? 31u : 32u;
}

/** The 64-bit keys that order an image graph's edges by (weight, edge index): code << shift | edge index. The
 * minimum spanning tree's device code numbers edges in 32 bits while the image has fewer than 2^32 edge slots
 * (pixels x K), and in the bits that the weight codes leave (64 - WeightCodeBits: 56, 48, 33 or 32) beyond; the CPU
 * reference always in the latter. */
struct EdgeKeys
{
  unsigned shift = 32;

  CHS_HOST_DEVICE uint64_t
  Key(uint32_t code, uint64_t index) const
  {
    return (uint64_t(code) << shift) | index;
  }
  CHS_HOST_DEVICE uint64_t
  Index(uint64_t key) const
  {
    return key & ((uint64_t(1) << shift) - 1);
  }
  CHS_HOST_DEVICE uint32_t
  Code(uint64_t key) const
  {
    return uint32_t(key >> shift);
  }
  /** Whether edge indices may need more than 32 bits. */
  CHS_HOST_DEVICE bool
  Wide() const
  {
    return shift != 32;
  }
};

/** Checks an image graph's pixels: not empty, at least one component, at most `maximumPixels` (by default node ids,
 * 2n - 1, in 32 bits). */
inline void
CheckImageGraphPixels(const Grid &                 grid,
                      const ImageGraphParameters & parameters,
                      uint64_t                     maximumPixels = MaximumDendrogramVertices)
{
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("the image is empty");
  if (parameters.components == 0)
    throw std::invalid_argument("pixels have no component");
  if (n > maximumPixels)
    throw std::invalid_argument("the image has " + std::to_string(n) + " pixels; at most " +
                                std::to_string(maximumPixels) + " are supported");
}

/** Checks an image graph's size: at most `maximumPixels` pixels (by default MaximumDendrogramVertices: node ids,
 * 2n - 1, in 32 bits) and fewer than 2^indexBits edge slots. */
inline void
CheckImageGraph(const Grid &                 grid,
                const ImageGraphParameters & parameters,
                const ImageGraph &           graph,
                unsigned                     indexBits,
                uint64_t                     maximumPixels = MaximumDendrogramVertices)
{
  CheckImageGraphPixels(grid, parameters, maximumPixels);
  const uint64_t n = grid.NumberOfVoxels();
  if ((n * graph.slots) >> indexBits)
    throw std::invalid_argument("the image graph has " + std::to_string(n * graph.slots) + " edge slots (pixels x " +
                                std::to_string(graph.slots) + "); fewer than 2^" + std::to_string(indexBits) +
                                " are supported for these pixels");
}

/** Checks an image graph of TPixel for the dendrogram (CheckImageGraph with the edge indices that its weight codes
 * leave, and at most `maximumPixels` pixels) and returns the key layout of its minimum spanning tree on the device:
 * 32-bit edge indices when they fit, unless `forceWide` (ImageGraphParameters::forceWideEdgeKeys). */
template <typename TPixel>
EdgeKeys
CheckedImageEdgeKeys(const Grid &                 grid,
                     const ImageGraphParameters & parameters,
                     const ImageGraph &           graph,
                     uint64_t                     maximumPixels = MaximumDendrogramVertices)
{
  const unsigned indexBits = 64 - WeightCodeBits<TPixel>(parameters.components);
  CheckImageGraph(grid, parameters, graph, indexBits, maximumPixels);
  const bool narrow = (grid.NumberOfVoxels() * graph.slots) >> 32 == 0 && !parameters.forceWideEdgeKeys;
  return EdgeKeys{ narrow ? 32u : indexBits };
}

/** Checks a graph's sizes, as far as they can be checked without reading the edges: at most `maximumVertices`
 * (MaximumDendrogramVertices for 32-bit node ids, MaximumWideDendrogramVertices for 64-bit ones). */
inline void
CheckGraphSizes(uint64_t edgeCount, uint64_t vertexCount, bool inputIsTree, uint64_t maximumVertices)
{
  if (vertexCount == 0)
    throw std::invalid_argument("the graph has no vertex");
  if (vertexCount > maximumVertices)
    throw std::invalid_argument("the graph has " + std::to_string(vertexCount) + " vertices; at most " +
                                std::to_string(maximumVertices) + " are supported" +
                                (maximumVertices == MaximumDendrogramVertices ? " with 32-bit node ids" : ""));
  if (edgeCount >= (uint64_t(1) << 32) - 1)
    throw std::invalid_argument("the graph has " + std::to_string(edgeCount) +
                                " edges; fewer than 2^32 - 1 are supported");
  if (edgeCount + 1 < vertexCount)
    throw std::invalid_argument("a connected graph on " + std::to_string(vertexCount) + " vertices has at least " +
                                std::to_string(vertexCount - 1) + " edges; this one has " + std::to_string(edgeCount));
  if (inputIsTree && edgeCount + 1 != vertexCount)
    throw std::invalid_argument("a tree on " + std::to_string(vertexCount) + " vertices has " +
                                std::to_string(vertexCount - 1) + " edges; this one has " + std::to_string(edgeCount));
}

/** The most vertices that a dendrogram of TNode node ids takes: MaximumDendrogramVertices for 32-bit ids,
 * MaximumWideDendrogramVertices for 64-bit ones (the CUDA backend's and the graphs' vertex ids stay 32-bit). */
template <typename TNode>
constexpr uint64_t
MaximumVertices()
{
  return sizeof(TNode) == sizeof(uint32_t) ? MaximumDendrogramVertices : MaximumWideDendrogramVertices;
}

inline std::string
NotConnectedMessage(uint64_t components, bool tree)
{
  return std::string(tree ? "the edges do not form a tree: " : "the graph is not connected: ") + "it has " +
         std::to_string(components) + " connected components";
}

} // namespace sl
} // namespace chs

#endif
