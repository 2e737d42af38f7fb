// chseg._chseg: nanobind bindings of the module's ITK-free API (include/chs*.h) for NumPy and CuPy arrays.
//
// Every function here takes its outputs as arrays allocated by the Python layer (python/chseg/), C-contiguous, on
// the host (NumPy) or on a CUDA device (CuPy, through DLPack); the CUDA backends read and write device arrays with
// device-to-device copies (src/Common/chsCudaCommon.cu, Transfer), so data on the GPU never crosses the host link.
// Arguments are checked by the Python layer; the library checks them again and throws std::invalid_argument
// (ValueError here) before writing anything. The GIL is released while a backend runs.
#include "chsAlphaTree.h"
#include "chsAttributeHierarchy.h"
#include "chsConnectedComponents.h"
#include "chsExecution.h"
#include "chsForestingTransform.h"
#include "chsHostCache.h"
#include "chsSingleLinkage.h"
#include "chsWaterpixels.h"
#include "chsWatershed.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace nb = nanobind;

namespace
{

using Array = nb::ndarray<nb::c_contig>;

template <typename... Ts>
struct Types
{
};
using AllPixels       = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t, float, double>;
using NoWidePixels    = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, double>;
using ForestWeights   = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float>;
using AlphaTreePixels = Types<uint8_t, uint16_t, int16_t, float>;
using GraphWeights    = Types<float, double>;
using Labels          = Types<uint8_t, uint16_t, uint32_t, uint64_t>;

std::string
DtypeName(nb::dlpack::dtype d)
{
  const char * kind = d.code == uint8_t(nb::dlpack::dtype_code::Int)     ? "int"
                      : d.code == uint8_t(nb::dlpack::dtype_code::UInt)  ? "uint"
                      : d.code == uint8_t(nb::dlpack::dtype_code::Float) ? "float"
                                                                         : "other";
  return std::string(kind) + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

/** Calls f(T{}) for the type T of the list that is the array's dtype. */
template <typename F, typename T, typename... Ts>
void
Dispatch(const Array & a, const char * what, F && f, Types<T, Ts...>)
{
  if (a.dtype() == nb::dtype<T>())
  {
    f(T{});
    return;
  }
  if constexpr (sizeof...(Ts) > 0)
    Dispatch(a, what, f, Types<Ts...>{});
  else
    throw std::invalid_argument(std::string("chseg: ") + what + " of type " + DtypeName(a.dtype()) +
                                " is not supported here");
}

/** Calls f(T{}, L{}), with the GIL released, for the pixel type T of `image` (one of TPixels) and the label type L
 * of `labels`. */
template <typename TPixels, typename F>
void
DispatchPixelAndLabel(const Array & image, const char * what, const Array & labels, TPixels pixels, F && f)
{
  Dispatch(
    image,
    what,
    [&](auto pixel)
    {
      Dispatch(
        labels,
        "a label array",
        [&](auto label)
        {
          nb::gil_scoped_release release;
          f(pixel, label);
        },
        Labels{});
    },
    pixels);
}

struct Backend
{
  bool                  cuda = false;
  chs::ExecutionContext context;
};

Backend
MakeBackend(const std::string & backend, int device, uintptr_t stream)
{
  Backend b;
  if (backend == "cuda")
    b.cuda = true;
  else if (backend != "cpu")
    throw std::invalid_argument("chseg: backend must be 'cuda' or 'cpu', not '" + backend + "'");
  b.context.device = device;
  b.context.stream = reinterpret_cast<void *>(stream);
  return b;
}

/** The CPU backend reads and writes host memory only. */
void
CheckHost(const Backend & b, std::initializer_list<const Array *> arrays)
{
  if (b.cuda)
    return;
  for (const Array * a : arrays)
    if (a && a->size() > 0 && a->device_type() != nb::device::cpu::value)
      throw std::invalid_argument("chseg: the cpu backend needs host (NumPy) arrays");
}

/** The grid of the first `spatial` axes of `a` (NumPy order: z, y, x); later axes are components. */
chs::Grid
GridOf(const Array & a, size_t spatial)
{
  if (spatial < 1 || spatial > 3 || a.ndim() < spatial)
    throw std::invalid_argument("chseg: images have 1 to 3 spatial axes");
  chs::Grid g;
  g.dimension = static_cast<unsigned>(std::max<size_t>(spatial, 2));
  for (size_t d = 0; d < spatial; ++d)
    g.size[d] = a.shape(spatial - 1 - d);
  return g;
}

chs::Grid
GridOfShape(const std::vector<uint64_t> & shape)
{
  if (shape.empty() || shape.size() > 3)
    throw std::invalid_argument("chseg: images have 1 to 3 spatial axes");
  chs::Grid g;
  g.dimension = static_cast<unsigned>(std::max<size_t>(shape.size(), 2));
  for (size_t d = 0; d < shape.size(); ++d)
    g.size[d] = shape[shape.size() - 1 - d];
  return g;
}

template <typename T>
T *
Ptr(const Array & a)
{
  return static_cast<T *>(a.data());
}

template <typename T>
T *
OptionalPtr(const nb::object & o, Array & keep)
{
  if (o.is_none())
    return nullptr;
  keep = nb::cast<Array>(o);
  return Ptr<T>(keep);
}

/** f(parents) with the parents' pointer of their type: 32-bit or 64-bit node ids. */
template <class F>
void
WithParents(const Array & parent, F && f)
{
  if (parent.dtype() == nb::dtype<uint32_t>())
    f(Ptr<const uint32_t>(parent));
  else if (parent.dtype() == nb::dtype<uint64_t>())
    f(Ptr<const uint64_t>(parent));
  else
    throw std::invalid_argument("chseg: parents must be a uint32 or uint64 array");
}

/** The tree queries on the host index arrays by parent: a parent array the caller changed must still have every
 * parent after its child, inside the array (the root its own parent). */
void
CheckParents(const Array & parent)
{
  WithParents(parent,
              [&](auto * up)
              {
                const size_t nodes = parent.size();
                for (size_t x = 0; x < nodes; ++x)
                  if (up[x] != x && (up[x] < x || up[x] >= nodes))
                    throw std::invalid_argument("chseg: parents must come after their children");
              });
}

/** Whether `a` holds the integers of the parents' node id width (uint32 or uint64). */
bool
SameIdWidth(const Array & a, const Array & parent)
{
  return a.dtype() == parent.dtype() && (a.dtype() == nb::dtype<uint32_t>() || a.dtype() == nb::dtype<uint64_t>());
}

/** A NumPy array of T with NumPy's own dtype for it: nanobind makes 64-bit integers 'Q' / 'q' (unsigned / signed
 * long long), which equal uint64 / int64 but are other dtype classes on LP64 systems, and libraries that match a
 * dtype's class (Zarr 3) refuse them. A view as "uint64" / "int64" has the canonical class. */
template <typename T>
nb::object
AsNumpy(nb::ndarray<nb::numpy, T> array)
{
  nb::object out = nb::cast(array);
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
    out = out.attr("view")(std::is_signed_v<T> ? "int64" : "uint64");
  return out;
}

/** A std::vector moved into a NumPy array that owns it. */
template <typename T>
nb::object
ToNumpy(std::vector<T> && v, size_t rows, size_t columns = 0)
{
  auto *      heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void * p) noexcept { delete static_cast<std::vector<T> *>(p); });
  size_t      shape[2] = { rows, columns };
  return AsNumpy(nb::ndarray<nb::numpy, T>(heap->data(), columns ? 2 : 1, shape, owner));
}

nb::dict
Info(const chs::RunInfo & info)
{
  nb::dict d;
  d["kernel_ms"]         = info.kernelMilliseconds;
  d["peak_device_bytes"] = info.peakDeviceBytes;
  return d;
}

template <typename TLabel>
uint64_t
MaximumOf()
{
  return std::numeric_limits<TLabel>::max();
}

// --- connected components ------------------------------------------------------------------------------------------

nb::dict
Label(const Array &       input,
      const nb::object &  maskObject,
      const Array &       labels,
      bool                fullyConnected,
      bool                flatZones,
      int64_t             background,
      bool                statistics,
      const std::string & backend,
      int                 device,
      uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  Array         mask;
  const auto *  maskPointer = OptionalPtr<const uint8_t>(maskObject, mask);
  CheckHost(b, { &input, &labels, maskPointer ? &mask : nullptr });
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ConnectedComponentParameters p;
  p.mode              = flatZones ? chs::ConnectedComponentMode::FlatZones : chs::ConnectedComponentMode::Binary;
  p.fullyConnected    = fullyConnected;
  p.backgroundLabel   = background;
  p.computeStatistics = statistics;
  chs::ConnectedComponentStatistics stats;
  chs::RunInfo                      info;
  uint64_t                          count = 0;
  DispatchPixelAndLabel(
    input,
    "an input",
    labels,
    AllPixels{},
    [&](auto pixel, auto label)
    {
      using TPixel   = decltype(pixel);
      using TLabel   = decltype(label);
      p.maximumLabel = MaximumOf<TLabel>();
      count          = b.cuda
                         ? chs::LabelConnectedComponentsCUDA(Ptr<const TPixel>(input),
                                                    maskPointer,
                                                    Ptr<TLabel>(labels),
                                                    grid,
                                                    p,
                                                    statistics ? &stats : nullptr,
                                                    b.context,
                                                    &info)
                         : chs::LabelConnectedComponentsCPU(
                    Ptr<const TPixel>(input), maskPointer, Ptr<TLabel>(labels), grid, p, statistics ? &stats : nullptr);
    });
  nb::dict d = Info(info);
  d["count"] = count;
  if (statistics)
  {
    d["voxel_count"] = ToNumpy(std::move(stats.voxelCount), count);
    d["minimum"]     = ToNumpy(std::move(stats.minimum), count, 3);
    d["maximum"]     = ToNumpy(std::move(stats.maximum), count, 3);
  }
  return d;
}

// --- watershed and waterfall ---------------------------------------------------------------------------------------

chs::WatershedParameters
WatershedParametersOf(bool fullyConnected, int algorithm, int plateaus, unsigned reductionRate, bool markLines)
{
  chs::WatershedParameters p;
  p.fullyConnected = fullyConnected;
  p.algorithm      = static_cast<chs::WatershedAlgorithm>(algorithm);
  p.plateaus       = static_cast<chs::PlateauResolution>(plateaus);
  p.reductionRate  = reductionRate;
  p.markLines      = markLines;
  return p;
}

nb::dict
Watershed(const Array &       image,
          const Array &       labels,
          bool                fullyConnected,
          int                 algorithm,
          int                 plateaus,
          unsigned            reductionRate,
          bool                markLines,
          const std::string & backend,
          int                 device,
          uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &image, &labels });
  const chs::Grid                grid = GridOf(labels, labels.ndim());
  const chs::WatershedParameters p =
    WatershedParametersOf(fullyConnected, algorithm, plateaus, reductionRate, markLines);
  chs::WatershedResult r;
  chs::RunInfo         info;
  DispatchPixelAndLabel(image,
                        "an input",
                        labels,
                        AllPixels{},
                        [&](auto pixel, auto label)
                        {
                          using T = decltype(pixel);
                          using L = decltype(label);
                          r       = b.cuda
                                      ? chs::WatershedCUDA(Ptr<const T>(image), grid, p, Ptr<L>(labels), b.context, &info)
                                      : chs::WatershedCPU(Ptr<const T>(image), grid, p, Ptr<L>(labels));
                        });
  nb::dict d          = Info(info);
  d["count"]          = r.basinCount;
  d["plateau_rounds"] = r.plateauRounds;
  return d;
}

/** The watershed by flooding from markers (or from the minima of the h-minima transform of height `level`), inside
 * the mask when there is one. `markers` has the labels' dtype. */
nb::dict
MarkerWatershed(const Array &       image,
                const nb::object &  markersObject,
                const nb::object &  maskObject,
                const Array &       labels,
                bool                fullyConnected,
                double              level,
                const std::string & backend,
                int                 device,
                uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  Array         markers, mask;
  const auto *  maskPointer = OptionalPtr<const uint8_t>(maskObject, mask);
  if (!markersObject.is_none())
    markers = nb::cast<Array>(markersObject);
  CheckHost(b, { &image, &labels, maskPointer ? &mask : nullptr, markersObject.is_none() ? nullptr : &markers });
  const chs::Grid                grid = GridOf(labels, labels.ndim());
  chs::MarkerWatershedParameters p;
  p.fullyConnected = fullyConnected;
  p.level          = level;
  chs::MarkerWatershedResult r;
  chs::RunInfo               info;
  DispatchPixelAndLabel(image,
                        "an input",
                        labels,
                        AllPixels{},
                        [&](auto pixel, auto label)
                        {
                          using T     = decltype(pixel);
                          using L     = decltype(label);
                          const L * m = markersObject.is_none() ? nullptr : Ptr<const L>(markers);
                          r           = b.cuda
                                          ? chs::MarkerWatershedCUDA(
                                    Ptr<const T>(image), m, maskPointer, grid, p, Ptr<L>(labels), b.context, &info)
                                          : chs::MarkerWatershedCPU(Ptr<const T>(image), m, maskPointer, grid, p, Ptr<L>(labels));
                        });
  nb::dict d      = Info(info);
  d["count"]      = r.markerCount;
  d["seed_count"] = r.seedCount;
  return d;
}

/** The waterfall, kept as a hierarchy: level 0's labels into `level0`, the parent labels of every level returned. */
nb::dict
Waterfall(const Array &       image,
          const Array &       level0,
          bool                fullyConnected,
          int                 algorithm,
          int                 plateaus,
          unsigned            reductionRate,
          unsigned            levels,
          const std::string & backend,
          int                 device,
          uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &image, &level0 });
  const chs::Grid          grid = GridOf(level0, level0.ndim());
  chs::WaterfallParameters p;
  p.watershed      = WatershedParametersOf(fullyConnected, algorithm, plateaus, reductionRate, false);
  p.numberOfLevels = levels;
  chs::WaterfallResult r;
  chs::RunInfo         info;
  DispatchPixelAndLabel(image,
                        "an input",
                        level0,
                        AllPixels{},
                        [&](auto pixel, auto label)
                        {
                          using T                               = decltype(pixel);
                          using L                               = decltype(label);
                          L * const                        out  = Ptr<L>(level0);
                          const chs::WaterfallLevelSink<L> sink = [out](unsigned level, uint64_t) -> L *
                          { return level == 0 ? out : nullptr; };
                          r = b.cuda ? chs::WaterfallCUDA(Ptr<const T>(image), grid, p, sink, b.context, &info)
                                     : chs::WaterfallCPU(Ptr<const T>(image), grid, p, sink);
                        });
  nb::dict d         = Info(info);
  d["region_counts"] = r.regionCounts;
  nb::list parents;
  for (auto & level : r.parents)
  {
    const size_t size = level.size();
    parents.append(ToNumpy(std::move(level), size));
  }
  d["parents"] = parents;
  return d;
}

// --- alpha-tree ----------------------------------------------------------------------------------------------------

chs::ImageGraphParameters
GraphParametersOf(const Array & image, size_t spatial, bool fullyConnected, int distance)
{
  chs::ImageGraphParameters g;
  g.fullyConnected = fullyConnected;
  g.components     = image.ndim() > spatial ? static_cast<unsigned>(image.shape(spatial)) : 1;
  g.distance       = static_cast<chs::VectorDistance>(distance);
  return g;
}

/** Builds the tree; `allocate(nodes)` (Python) returns the (parent, level) arrays to write it to. */
nb::dict
AlphaTree(const Array &        image,
          size_t               spatial,
          bool                 fullyConnected,
          int                  distance,
          int                  algorithm,
          const nb::callable & allocate,
          const std::string &  backend,
          int                  device,
          uintptr_t            stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &image });
  const chs::Grid          grid = GridOf(image, spatial);
  chs::AlphaTreeParameters p;
  p.graph                           = GraphParametersOf(image, spatial, fullyConnected, distance);
  p.algorithm                       = static_cast<chs::AlphaTreeAlgorithm>(algorithm);
  nb::object              arrays    = nb::none();
  chs::AlphaTreeAllocator allocator = [&](uint64_t nodes)
  {
    nb::gil_scoped_acquire acquire;
    arrays            = allocate(nodes);
    Array      parent = nb::cast<Array>(arrays[0]);
    Array      level  = nb::cast<Array>(arrays[1]);
    const bool wide   = parent.dtype() == nb::dtype<uint64_t>();
    if ((!wide && parent.dtype() != nb::dtype<uint32_t>()) || level.dtype() != nb::dtype<double>() ||
        parent.size() != nodes || level.size() != nodes)
      throw std::invalid_argument("chseg: the tree allocator must return uint32 or uint64 parents and float64 levels");
    if (!b.cuda && (parent.device_type() != nb::device::cpu::value || level.device_type() != nb::device::cpu::value))
      throw std::invalid_argument("chseg: the cpu backend needs host (NumPy) arrays");
    chs::AlphaTreeArrays out;
    if (wide)
      out.parent64 = Ptr<uint64_t>(parent);
    else
      out.parent = Ptr<uint32_t>(parent);
    out.level = Ptr<double>(level);
    return out;
  };
  chs::AlphaTreeResult r;
  chs::RunInfo         info;
  Dispatch(
    image,
    "an input",
    [&](auto pixel)
    {
      using T = decltype(pixel);
      nb::gil_scoped_release release;
      r = b.cuda ? chs::ImageAlphaTreeCUDA(Ptr<const T>(image), grid, p, allocator, b.context, &info)
                 : chs::ImageAlphaTreeCPU(Ptr<const T>(image), grid, p, allocator);
    },
    AlphaTreePixels{});
  nb::dict d  = Info(info);
  d["nodes"]  = r.nodes;
  d["arrays"] = arrays;
  return d;
}

/** Per node, the largest difference of values inside it (chs::AlphaTreeValueRanges, as
 * itk::CudaImageToAlphaTreeFilter's ComputeValueRanges): what an alpha-omega cut needs. Host arrays. */
nb::object
AlphaTreeRanges(const Array & parent, const Array & image, size_t pixels)
{
  if (parent.device_type() != nb::device::cpu::value || image.device_type() != nb::device::cpu::value)
    throw std::invalid_argument("chseg: value ranges are computed from host arrays");
  CheckParents(parent);
  const size_t        nodes      = parent.size();
  const unsigned      components = static_cast<unsigned>(pixels ? image.size() / pixels : 1);
  std::vector<double> range(nodes);
  Dispatch(
    image,
    "an input",
    [&](auto pixel)
    {
      using T = decltype(pixel);
      nb::gil_scoped_release release;
      WithParents(parent,
                  [&](auto * up)
                  { chs::AlphaTreeValueRanges(up, nodes, Ptr<const T>(image), pixels, components, range.data()); });
    },
    AlphaTreePixels{});
  return ToNumpy(std::move(range), nodes);
}

/** Leaves under each node (chs::TreeAreas, as itk::AlphaTree::ComputeAreas), alpha-trees and dendrograms. */
nb::object
TreeAreas(const Array & parent, uint64_t leaves)
{
  if (parent.device_type() != nb::device::cpu::value)
    throw std::invalid_argument("chseg: node areas are computed from host parents");
  CheckParents(parent);
  std::vector<uint64_t> area(parent.size());
  {
    nb::gil_scoped_release release;
    WithParents(parent, [&](auto * up) { chs::TreeAreas(up, parent.size(), leaves, area.data()); });
  }
  return ToNumpy(std::move(area), parent.size());
}

nb::dict
AlphaTreeCut(const Array &       parent,
             const Array &       level,
             const nb::object &  rangeObject,
             uint64_t            leaves,
             double              alpha,
             double              omega,
             const Array &       labels,
             const std::string & backend,
             int                 device,
             uintptr_t           stream)
{
  const Backend  b = MakeBackend(backend, device, stream);
  Array          range;
  const double * rangePointer = OptionalPtr<const double>(rangeObject, range);
  CheckHost(b, { &parent, &level, &labels, rangePointer ? &range : nullptr });
  if (!SameIdWidth(labels, parent) || level.dtype() != nb::dtype<double>())
    throw std::invalid_argument(
      "chseg: a cut takes uint32 or uint64 parents, float64 levels and labels of the parents' "
      "type");
  chs::RunInfo info;
  uint64_t     regions = 0;
  {
    nb::gil_scoped_release release;
    WithParents(
      parent,
      [&](auto * up)
      {
        using TNode = std::remove_const_t<std::remove_pointer_t<decltype(up)>>;
        regions =
          b.cuda
            ? chs::AlphaTreeCutCUDA(up,
                                    Ptr<const double>(level),
                                    rangePointer,
                                    leaves,
                                    parent.size(),
                                    alpha,
                                    omega,
                                    Ptr<TNode>(labels),
                                    b.context,
                                    &info)
            : chs::AlphaTreeCutCPU(
                up, Ptr<const double>(level), rangePointer, leaves, parent.size(), alpha, omega, Ptr<TNode>(labels));
      });
  }
  nb::dict d = Info(info);
  d["count"] = regions;
  return d;
}

nb::dict
AlphaTreeSaliency(const Array &                 parent,
                  const Array &                 level,
                  const std::vector<uint64_t> & shape,
                  const Array &                 saliency,
                  const std::string &           backend,
                  int                           device,
                  uintptr_t                     stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &parent, &level, &saliency });
  const chs::Grid grid = GridOfShape(shape);
  chs::RunInfo    info;
  {
    nb::gil_scoped_release release;
    WithParents(parent,
                [&](auto * up)
                {
                  if (b.cuda)
                    chs::AlphaTreeSaliencyCUDA(
                      up, Ptr<const double>(level), parent.size(), grid, Ptr<float>(saliency), b.context, &info);
                  else
                    chs::AlphaTreeSaliencyCPU(up, Ptr<const double>(level), parent.size(), grid, Ptr<float>(saliency));
                });
  }
  return Info(info);
}

/** The edges of an image's pixel graph in edge-index order: NumPy (u, v, edge index). */
nb::tuple
ImageGraphEdges(const std::vector<uint64_t> & shape, bool fullyConnected)
{
  const chs::Grid       grid  = GridOfShape(shape);
  const uint64_t        count = chs::ImageGraphEdges(grid, fullyConnected, nullptr, nullptr, nullptr);
  std::vector<uint32_t> u(count), v(count);
  std::vector<uint64_t> edge(count);
  {
    nb::gil_scoped_release release;
    chs::ImageGraphEdges(grid, fullyConnected, u.data(), v.data(), edge.data());
  }
  return nb::make_tuple(ToNumpy(std::move(u), count), ToNumpy(std::move(v), count), ToNumpy(std::move(edge), count));
}

nb::dict
AlphaTreeEdgeSaliency(const Array &       parent,
                      const Array &       level,
                      const Array &       u,
                      const Array &       v,
                      const Array &       saliency,
                      const std::string & backend,
                      int                 device,
                      uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &parent, &level, &u, &v, &saliency });
  if (!SameIdWidth(u, parent) || !SameIdWidth(v, parent) || level.dtype() != nb::dtype<double>() ||
      saliency.dtype() != nb::dtype<double>() || level.size() != parent.size() || u.size() != v.size() ||
      saliency.size() != u.size())
    throw std::invalid_argument("chseg: edge saliency takes uint32 or uint64 parents, float64 levels, ends of the "
                                "parents' type and a float64 output, the ends and the output of one length");
  chs::RunInfo info;
  {
    nb::gil_scoped_release release;
    WithParents(parent,
                [&](auto * up)
                {
                  using TNode = std::remove_const_t<std::remove_pointer_t<decltype(up)>>;
                  if (b.cuda)
                    chs::AlphaTreeEdgeSaliencyCUDA(up,
                                                   Ptr<const double>(level),
                                                   parent.size(),
                                                   Ptr<const TNode>(u),
                                                   Ptr<const TNode>(v),
                                                   u.size(),
                                                   Ptr<double>(saliency),
                                                   b.context,
                                                   &info);
                  else
                    chs::AlphaTreeEdgeSaliencyCPU(up,
                                                  Ptr<const double>(level),
                                                  parent.size(),
                                                  Ptr<const TNode>(u),
                                                  Ptr<const TNode>(v),
                                                  u.size(),
                                                  Ptr<double>(saliency));
                });
  }
  return Info(info);
}

// --- single linkage ------------------------------------------------------------------------------------------------

template <typename TNode>
chs::DendrogramArraysT<TNode>
DendrogramArraysOf(const Array & parent, const Array & weight, const Array & edge, const Array & u, const Array & v)
{
  chs::DendrogramArraysT<TNode> out;
  out.parent = Ptr<TNode>(parent);
  out.weight = Ptr<double>(weight);
  out.edge   = Ptr<uint64_t>(edge);
  out.u      = Ptr<TNode>(u);
  out.v      = Ptr<TNode>(v);
  return out;
}

/** f(out) with the output arrays of the parents' width: 32-bit or 64-bit node ids (the ends of the same width). */
template <class F>
void
WithDendrogramArrays(const Array & parent,
                     const Array & weight,
                     const Array & edge,
                     const Array & u,
                     const Array & v,
                     F &&          f)
{
  if (u.dtype() != parent.dtype() || v.dtype() != parent.dtype())
    throw std::invalid_argument("chseg: a dendrogram's parents and ends are of one type");
  if (parent.dtype() == nb::dtype<uint64_t>())
    f(DendrogramArraysOf<uint64_t>(parent, weight, edge, u, v));
  else if (parent.dtype() == nb::dtype<uint32_t>())
    f(DendrogramArraysOf<uint32_t>(parent, weight, edge, u, v));
  else
    throw std::invalid_argument("chseg: a dendrogram's parents are uint32 or uint64");
}

nb::dict
SingleLinkageInfo(const chs::SingleLinkageResult & r, const chs::RunInfo & info)
{
  nb::dict d              = Info(info);
  d["boruvka_rounds"]     = r.boruvkaRounds;
  d["contraction_levels"] = r.contractionLevels;
  d["mst_ms"]             = r.mstMilliseconds;
  d["dendrogram_ms"]      = r.dendrogramMilliseconds;
  return d;
}

nb::dict
ImageSingleLinkage(const Array &       image,
                   size_t              spatial,
                   bool                fullyConnected,
                   int                 distance,
                   const Array &       parent,
                   const Array &       weight,
                   const Array &       edge,
                   const Array &       u,
                   const Array &       v,
                   const std::string & backend,
                   int                 device,
                   uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &image, &parent, &weight, &edge, &u, &v });
  const chs::Grid                 grid = GridOf(image, spatial);
  const chs::ImageGraphParameters p    = GraphParametersOf(image, spatial, fullyConnected, distance);
  chs::SingleLinkageResult        r;
  chs::RunInfo                    info;
  Dispatch(
    image,
    "an input",
    [&](auto pixel)
    {
      using T = decltype(pixel);
      WithDendrogramArrays(parent,
                           weight,
                           edge,
                           u,
                           v,
                           [&](const auto & out)
                           {
                             nb::gil_scoped_release release;
                             r = b.cuda
                                   ? chs::ImageSingleLinkageCUDA(Ptr<const T>(image), grid, p, out, b.context, &info)
                                   : chs::ImageSingleLinkageCPU(Ptr<const T>(image), grid, p, out);
                           });
    },
    NoWidePixels{});
  return SingleLinkageInfo(r, info);
}

nb::dict
GraphSingleLinkage(const Array &       u,
                   const Array &       v,
                   const Array &       w,
                   uint64_t            vertices,
                   bool                inputIsTree,
                   const Array &       parent,
                   const Array &       weight,
                   const Array &       edge,
                   const Array &       outU,
                   const Array &       outV,
                   const std::string & backend,
                   int                 device,
                   uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &u, &v, &w, &parent, &weight, &edge, &outU, &outV });
  if (u.dtype() != nb::dtype<uint32_t>() || v.dtype() != nb::dtype<uint32_t>() || u.size() != w.size() ||
      v.size() != w.size())
    throw std::invalid_argument("chseg: u and v must be uint32 arrays as long as the weights");
  chs::SingleLinkageResult r;
  chs::RunInfo             info;
  Dispatch(
    w,
    "an edge weight array",
    [&](auto weightType)
    {
      using T = decltype(weightType);
      WithDendrogramArrays(parent,
                           weight,
                           edge,
                           outU,
                           outV,
                           [&](const auto & out)
                           {
                             nb::gil_scoped_release release;
                             r = b.cuda ? chs::GraphSingleLinkageCUDA(Ptr<const uint32_t>(u),
                                                                      Ptr<const uint32_t>(v),
                                                                      Ptr<const T>(w),
                                                                      w.size(),
                                                                      vertices,
                                                                      inputIsTree,
                                                                      out,
                                                                      b.context,
                                                                      &info)
                                        : chs::GraphSingleLinkageCPU(Ptr<const uint32_t>(u),
                                                                     Ptr<const uint32_t>(v),
                                                                     Ptr<const T>(w),
                                                                     w.size(),
                                                                     vertices,
                                                                     inputIsTree,
                                                                     out);
                           });
    },
    GraphWeights{});
  return SingleLinkageInfo(r, info);
}

chs::RegionAttribute
RegionAttributeOf(const std::string & name)
{
  if (name == "area")
    return chs::RegionAttribute::Area;
  if (name == "volume")
    return chs::RegionAttribute::Volume;
  if (name == "height")
    return chs::RegionAttribute::Height;
  if (name == "dynamics")
    return chs::RegionAttribute::Dynamics;
  throw std::invalid_argument("chseg: the attribute is 'area', 'volume', 'height' or 'dynamics', not '" + name + "'");
}

/** A hierarchy by attribute of a dendrogram (parent, weight, edge, u, v): the watershed hierarchy (`filter` false) or
 * the attribute filter at `threshold`, written to the out arrays. */
nb::dict
AttributeHierarchy(const Array &       parent,
                   const Array &       weight,
                   const Array &       edge,
                   const Array &       u,
                   const Array &       v,
                   const std::string & attribute,
                   bool                filter,
                   double              threshold,
                   const Array &       outParent,
                   const Array &       outWeight,
                   const Array &       outEdge,
                   const Array &       outU,
                   const Array &       outV,
                   const std::string & backend,
                   int                 device,
                   uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  CheckHost(b, { &parent, &weight, &edge, &u, &v, &outParent, &outWeight, &outEdge, &outU, &outV });
  const uint64_t n = (parent.size() + 1) / 2; // the backends check that the arrays form a dendrogram
  if (weight.dtype() != nb::dtype<double>() || edge.dtype() != nb::dtype<uint64_t>() || weight.size() + 1 != n ||
      edge.size() + 1 != n || u.size() + 1 != n || v.size() + 1 != n || outParent.dtype() != parent.dtype())
    throw std::invalid_argument("chseg: hierarchies by attribute take a dendrogram of n leaves with 2n - 1 parents "
                                "(uint32 or uint64), n - 1 float64 weights, uint64 edges and ends of the parents' "
                                "type, and write one of the same id type");
  const chs::RegionAttribute a = RegionAttributeOf(attribute);
  chs::SingleLinkageResult   r;
  chs::RunInfo               info;
  WithDendrogramArrays(
    outParent,
    outWeight,
    outEdge,
    outU,
    outV,
    [&](const auto & out)
    {
      using Node = std::remove_cv_t<std::remove_pointer_t<decltype(out.parent)>>;
      if (parent.dtype() != nb::dtype<Node>() || u.dtype() != parent.dtype() || v.dtype() != parent.dtype())
        throw std::invalid_argument("chseg: a dendrogram's parents and ends are of one type");
      chs::DendrogramInputT<Node> in;
      in.vertices = n;
      in.parent   = Ptr<const Node>(parent);
      in.weight   = Ptr<const double>(weight);
      in.edge     = Ptr<const uint64_t>(edge);
      in.u        = Ptr<const Node>(u);
      in.v        = Ptr<const Node>(v);
      nb::gil_scoped_release release;
      if (filter)
        r = b.cuda ? chs::FilterRegionsCUDA(in, a, threshold, out, b.context, &info)
                   : chs::FilterRegionsCPU(in, a, threshold, out);
      else
        r = b.cuda ? chs::WatershedHierarchyCUDA(in, a, out, b.context, &info) : chs::WatershedHierarchyCPU(in, a, out);
    });
  return SingleLinkageInfo(r, info);
}

/** The attribute of every node of a dendrogram (host arrays), a NumPy float64 array. */
nb::object
DendrogramAttribute(const Array &       parent,
                    const Array &       weight,
                    const Array &       u,
                    const Array &       v,
                    const std::string & attribute)
{
  for (const Array * a : { &parent, &weight, &u, &v })
    if (a->device_type() != nb::device::cpu::value)
      throw std::invalid_argument("chseg: node attributes are computed from host arrays");
  CheckParents(parent);
  const uint64_t n = (parent.size() + 1) / 2;
  if (weight.dtype() != nb::dtype<double>() || weight.size() + 1 != n || u.size() + 1 != n || v.size() + 1 != n)
    throw std::invalid_argument("chseg: a dendrogram of n leaves has n - 1 float64 weights and end vertices");
  if (u.dtype() != parent.dtype() || v.dtype() != parent.dtype())
    throw std::invalid_argument("chseg: a dendrogram's parents and ends are of one type");
  std::vector<double>        values(parent.size());
  const chs::RegionAttribute a   = RegionAttributeOf(attribute);
  auto                       run = [&](auto node)
  {
    using Node = decltype(node);
    chs::DendrogramInputT<Node> in;
    in.vertices = n;
    in.parent   = Ptr<const Node>(parent);
    in.weight   = Ptr<const double>(weight);
    in.u        = Ptr<const Node>(u);
    in.v        = Ptr<const Node>(v);
    nb::gil_scoped_release release;
    chs::DendrogramAttributeCPU(in, a, values.data());
  };
  if (parent.dtype() == nb::dtype<uint64_t>())
    run(uint64_t());
  else
    run(uint32_t());
  return ToNumpy(std::move(values), parent.size());
}

// --- Image Foresting Transform and waterpixels ---------------------------------------------------------------------

nb::dict
ForestingTransform(const Array &       weights,
                   const Array &       seeds,
                   const Array &       labels,
                   const nb::object &  costObject,
                   const nb::object &  predecessorObject,
                   bool                fullyConnected,
                   int                 arcWeight,
                   uint64_t            maximumRounds,
                   const std::string & backend,
                   int                 device,
                   uintptr_t           stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  Array         cost, predecessor;
  void *        costPointer        = OptionalPtr<void>(costObject, cost);
  int64_t *     predecessorPointer = OptionalPtr<int64_t>(predecessorObject, predecessor);
  CheckHost(b,
            { &weights, &seeds, &labels, costPointer ? &cost : nullptr, predecessorPointer ? &predecessor : nullptr });
  if (seeds.dtype() != labels.dtype())
    throw std::invalid_argument("chseg: the seeds and the labels must have one type");
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ForestingTransformParameters p;
  p.fullyConnected = fullyConnected;
  p.arcWeight      = static_cast<chs::ArcWeightFunction>(arcWeight);
  p.maximumRounds  = maximumRounds;
  chs::ForestingTransformResult r;
  chs::RunInfo                  info;
  DispatchPixelAndLabel(weights,
                        "a weight image",
                        labels,
                        ForestWeights{},
                        [&](auto weight, auto label)
                        {
                          using W = decltype(weight);
                          using C = typename chs::ForestingCost<W>::Type;
                          if (costPointer && cost.dtype() != nb::dtype<C>())
                            throw std::invalid_argument("chseg: the cost array has the wrong type");
                          using L = decltype(label);
                          r       = b.cuda ? chs::ImageForestingTransformCUDA(Ptr<const W>(weights),
                                                                        Ptr<const L>(seeds),
                                                                        grid,
                                                                        p,
                                                                        Ptr<L>(labels),
                                                                        static_cast<C *>(costPointer),
                                                                        predecessorPointer,
                                                                        b.context,
                                                                        &info)
                                           : chs::ImageForestingTransformCPU(Ptr<const W>(weights),
                                                                       Ptr<const L>(seeds),
                                                                       grid,
                                                                       p,
                                                                       Ptr<L>(labels),
                                                                       static_cast<C *>(costPointer),
                                                                       predecessorPointer);
                        });
  nb::dict d      = Info(info);
  d["seed_count"] = r.seedCount;
  d["rounds"]     = r.rounds;
  return d;
}

nb::dict
Waterpixels(const Array &                 image,
            const Array &                 labels,
            const nb::object &            borderObject,
            const std::vector<uint64_t> & gridStep,
            float                         compactness,
            bool                          gradientMinimumSeeds,
            bool                          fullyConnected,
            const std::string &           backend,
            int                           device,
            uintptr_t                     stream)
{
  const Backend b = MakeBackend(backend, device, stream);
  Array         border;
  float *       borderPointer = OptionalPtr<float>(borderObject, border);
  CheckHost(b, { &image, &labels, borderPointer ? &border : nullptr });
  const chs::Grid           grid = GridOf(labels, labels.ndim());
  chs::WaterpixelParameters p;
  for (size_t d = 0; d < 3; ++d)
    p.gridStep[d] = d < gridStep.size() ? gridStep[d] : 1;
  p.compactness          = compactness;
  p.gradientMinimumSeeds = gradientMinimumSeeds;
  p.fullyConnected       = fullyConnected;
  chs::WaterpixelResult r;
  chs::RunInfo          info;
  DispatchPixelAndLabel(image,
                        "an input",
                        labels,
                        NoWidePixels{},
                        [&](auto pixel, auto label)
                        {
                          using T = decltype(pixel);
                          using L = decltype(label);
                          r       = b.cuda ? chs::WaterpixelsCUDA(
                                         Ptr<const T>(image), grid, p, Ptr<L>(labels), borderPointer, b.context, &info)
                                           : chs::WaterpixelsCPU(Ptr<const T>(image), grid, p, Ptr<L>(labels), borderPointer);
                        });
  nb::dict d       = Info(info);
  d["count"]       = r.superpixels;
  d["compactness"] = r.compactness;
  d["rounds"]      = r.rounds;
  return d;
}

// --- host outputs from the module's host array cache --------------------------------------------------------------

/** A NumPy array of `shape` whose storage comes from the host array cache (include/chsHostCache.h: pages already
 * mapped; page-locked once with `pinned`, so that downloads go straight into it) and goes back to it when the array is
 * freed. Its values are unspecified: the backends write every element. */
template <typename T>
nb::object
HostEmptyOf(const std::vector<size_t> & shape, bool pinned)
{
  using Vector = std::vector<T, chs::DefaultInitAllocator<T>>;
  size_t n     = 1;
  for (size_t s : shape)
    n *= s;
  auto * v = new Vector();
  try
  {
    nb::gil_scoped_release release;
    chs::AcquireHostVector(*v, n, pinned);
  }
  catch (...)
  {
    delete v;
    throw;
  }
  nb::capsule owner(v,
                    [](void * p) noexcept
                    {
                      auto * vector = static_cast<Vector *>(p);
                      chs::ReleaseHostVector(*vector);
                      delete vector;
                    });
  return AsNumpy(nb::ndarray<nb::numpy, T>(v->data(), shape.size(), shape.data(), owner));
}

nb::object
HostEmpty(const std::vector<size_t> & shape, const std::string & dtype, bool pinned)
{
  if (dtype == "uint8")
    return HostEmptyOf<uint8_t>(shape, pinned);
  if (dtype == "uint16")
    return HostEmptyOf<uint16_t>(shape, pinned);
  if (dtype == "uint32")
    return HostEmptyOf<uint32_t>(shape, pinned);
  if (dtype == "uint64")
    return HostEmptyOf<uint64_t>(shape, pinned);
  if (dtype == "int64")
    return HostEmptyOf<int64_t>(shape, pinned);
  if (dtype == "float32")
    return HostEmptyOf<float>(shape, pinned);
  if (dtype == "float64")
    return HostEmptyOf<double>(shape, pinned);
  throw std::invalid_argument("chseg: no cached host arrays of " + dtype);
}

int
DeviceCount()
{
  return chs::CudaDeviceCount();
}

std::string
NoDeviceReason()
{
  std::string why;
  return chs::CudaDeviceCount(&why) > 0 ? std::string() : why;
}

} // namespace

NB_MODULE(_chseg, m)
{
  m.doc() = "CudaHierarchicalSegmentation's ITK-free API for NumPy and CuPy arrays (use the chseg package)";
  nb::register_exception_translator(
    [](const std::exception_ptr & p, void *)
    {
      try
      {
        std::rethrow_exception(p);
      }
      catch (const chs::LabelOverflowError & e)
      {
        PyErr_SetString(PyExc_ValueError, e.what());
      }
      catch (const chs::DeviceMemoryError & e)
      {
        PyErr_SetString(PyExc_MemoryError, e.what()); // as CuPy's OutOfMemoryError, a MemoryError
      }
    });
  m.def("device_count", &DeviceCount);
  m.def("no_device_reason", &NoDeviceReason);
  m.def("device_name", &chs::CudaDeviceName);
  m.def("fail_device_allocation_after",
        &chs::testing::FailDeviceAllocationAfter,
        nb::arg("n"),
        "Test hook: the n-th device allocation from now fails (0: off).");
  m.def("set_device_memory_limit",
        &chs::testing::SetDeviceMemoryLimit,
        nb::arg("bytes"),
        "Test hook: the runs see at most this many bytes of device memory free (0: the device's own figure).");
  m.def("host_empty", &HostEmpty, nb::arg("shape"), nb::arg("dtype"), nb::arg("pinned"));
  m.def("host_cache_bytes", &chs::GetHostCacheBytes);
  m.def("get_host_cache_limit", &chs::GetHostCacheLimit);
  m.def("set_host_cache_limit", &chs::SetHostCacheLimit, nb::arg("bytes"));
  m.def("release_host_cache", &chs::ReleaseHostCache);
  m.def("host_transfer_bytes",
        &chs::testing::HostTransferBytes,
        "Test counter: bytes the CUDA backends moved between host memory and a device (device arrays do not count).");
  m.def("label",
        &Label,
        nb::arg("input"),
        nb::arg("mask").none(),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("flat_zones"),
        nb::arg("background"),
        nb::arg("statistics"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("watershed",
        &Watershed,
        nb::arg("image"),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("algorithm"),
        nb::arg("plateaus"),
        nb::arg("reduction_rate"),
        nb::arg("mark_lines"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("marker_watershed",
        &MarkerWatershed,
        nb::arg("image"),
        nb::arg("markers").none(),
        nb::arg("mask").none(),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("level"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("waterfall",
        &Waterfall,
        nb::arg("image"),
        nb::arg("level0"),
        nb::arg("fully_connected"),
        nb::arg("algorithm"),
        nb::arg("plateaus"),
        nb::arg("reduction_rate"),
        nb::arg("levels"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("alpha_tree",
        &AlphaTree,
        nb::arg("image"),
        nb::arg("spatial"),
        nb::arg("fully_connected"),
        nb::arg("distance"),
        nb::arg("algorithm"),
        nb::arg("allocate"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("alpha_tree_ranges", &AlphaTreeRanges, nb::arg("parent"), nb::arg("image"), nb::arg("pixels"));
  m.def("tree_areas", &TreeAreas, nb::arg("parent"), nb::arg("leaves"));
  m.def("alpha_tree_cut",
        &AlphaTreeCut,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("range").none(),
        nb::arg("leaves"),
        nb::arg("alpha"),
        nb::arg("omega"),
        nb::arg("labels"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("alpha_tree_saliency",
        &AlphaTreeSaliency,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("shape"),
        nb::arg("saliency"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("image_graph_edges", &ImageGraphEdges, nb::arg("shape"), nb::arg("fully_connected"));
  m.def("alpha_tree_edge_saliency",
        &AlphaTreeEdgeSaliency,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("saliency"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("image_single_linkage",
        &ImageSingleLinkage,
        nb::arg("image"),
        nb::arg("spatial"),
        nb::arg("fully_connected"),
        nb::arg("distance"),
        nb::arg("parent"),
        nb::arg("weight"),
        nb::arg("edge"),
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("graph_single_linkage",
        &GraphSingleLinkage,
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("w"),
        nb::arg("vertices"),
        nb::arg("input_is_tree"),
        nb::arg("parent"),
        nb::arg("weight"),
        nb::arg("edge"),
        nb::arg("out_u"),
        nb::arg("out_v"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("attribute_hierarchy",
        &AttributeHierarchy,
        nb::arg("parent"),
        nb::arg("weight"),
        nb::arg("edge"),
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("attribute"),
        nb::arg("filter"),
        nb::arg("threshold"),
        nb::arg("out_parent"),
        nb::arg("out_weight"),
        nb::arg("out_edge"),
        nb::arg("out_u"),
        nb::arg("out_v"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("dendrogram_attribute",
        &DendrogramAttribute,
        nb::arg("parent"),
        nb::arg("weight"),
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("attribute"));
  m.def("foresting_transform",
        &ForestingTransform,
        nb::arg("weights"),
        nb::arg("seeds"),
        nb::arg("labels"),
        nb::arg("cost").none(),
        nb::arg("predecessor").none(),
        nb::arg("fully_connected"),
        nb::arg("arc_weight"),
        nb::arg("maximum_rounds"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
  m.def("waterpixels",
        &Waterpixels,
        nb::arg("image"),
        nb::arg("labels"),
        nb::arg("border").none(),
        nb::arg("grid_step"),
        nb::arg("compactness"),
        nb::arg("gradient_minimum_seeds"),
        nb::arg("fully_connected"),
        nb::arg("backend"),
        nb::arg("device"),
        nb::arg("stream"));
}
