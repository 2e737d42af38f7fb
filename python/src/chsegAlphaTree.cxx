// chseg._chseg: the bindings of AlphaTree (python/src/chsegBindings.h says what they share).
#include "chsegBindings.h"

#include "chs/AlphaTree.h"

namespace chseg
{
namespace
{

/** Builds the tree; `allocate(nodes)` (Python) returns the (parent, level) arrays to write it to. */
nb::dict
AlphaTree(const Input &                 image,
          size_t                        spatial,
          bool                          fullyConnected,
          chs::VectorDistance           distance,
          chs::AlphaTreeAlgorithm       algorithm,
          const nb::callable &          allocate,
          const chs::ExecutionContext & context)
{
  CheckHost(context, { &image });
  const chs::Grid          grid = GridOf(image, spatial);
  chs::AlphaTreeParameters p;
  p.graph                           = GraphParametersOf(image, spatial, fullyConnected, distance);
  p.algorithm                       = algorithm;
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
    if (chs::ResolveBackend(context) == chs::Backend::CPU &&
        (parent.device_type() != nb::device::cpu::value || level.device_type() != nb::device::cpu::value))
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
      r = chs::ImageAlphaTree(Ptr<T>(image), grid, p, allocator, context, &info);
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
AlphaTreeRanges(const Input & parent, const Input & image, size_t pixels)
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
                  { chs::AlphaTreeValueRanges(up, nodes, Ptr<T>(image), pixels, components, range.data()); });
    },
    AlphaTreePixels{});
  return ToNumpy(std::move(range), nodes);
}

/** Leaves under each node (chs::TreeAreas, as itk::AlphaTree::ComputeAreas), alpha-trees and dendrograms. */
nb::object
TreeAreas(const Input & parent, uint64_t leaves)
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
AlphaTreeCut(const Input &                 parent,
             const Input &                 level,
             const nb::object &            rangeObject,
             uint64_t                      leaves,
             double                        alpha,
             double                        omega,
             const Array &                 labels,
             const chs::ExecutionContext & context)
{
  Input          range;
  const double * rangePointer = OptionalPtr<double>(rangeObject, range);
  CheckHost(context, { &parent, &level, &labels, rangePointer ? &range : nullptr });
  if (!SameIdWidth(labels, parent) || level.dtype() != nb::dtype<double>())
    throw std::invalid_argument(
      "chseg: a cut takes uint32 or uint64 parents, float64 levels and labels of the parents' "
      "type");
  chs::RunInfo info;
  uint64_t     regions = 0;
  {
    nb::gil_scoped_release release;
    WithParents(parent,
                [&](auto * up)
                {
                  using TNode = std::remove_const_t<std::remove_pointer_t<decltype(up)>>;
                  regions     = chs::AlphaTreeCut(up,
                                              Ptr<double>(level),
                                              rangePointer,
                                              leaves,
                                              parent.size(),
                                              alpha,
                                              omega,
                                              Ptr<TNode>(labels),
                                              context,
                                              &info);
                });
  }
  nb::dict d = Info(info);
  d["count"] = regions;
  return d;
}

nb::dict
AlphaTreeSaliency(const Input &                 parent,
                  const Input &                 level,
                  const std::vector<uint64_t> & shape,
                  const Array &                 saliency,
                  const chs::ExecutionContext & context)
{
  CheckHost(context, { &parent, &level, &saliency });
  const chs::Grid grid = GridOfShape(shape);
  chs::RunInfo    info;
  {
    nb::gil_scoped_release release;
    WithParents(
      parent,
      [&](auto * up)
      { chs::AlphaTreeSaliency(up, Ptr<double>(level), parent.size(), grid, Ptr<float>(saliency), context, &info); });
  }
  return Info(info);
}

} // namespace

void
BindAlphaTree(nb::module_ & m)
{
  m.def("alpha_tree_ranges", &AlphaTreeRanges, nb::arg("parent"), nb::arg("image"), nb::arg("pixels"));
  m.def("tree_areas", &TreeAreas, nb::arg("parent"), nb::arg("leaves"));
  m.def("alpha_tree",
        &AlphaTree,
        nb::arg("image"),
        nb::arg("spatial"),
        nb::arg("fully_connected"),
        nb::arg("distance"),
        nb::arg("algorithm"),
        nb::arg("allocate"),
        nb::arg("context"));
  m.def("alpha_tree_cut",
        &AlphaTreeCut,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("range").none(),
        nb::arg("leaves"),
        nb::arg("alpha"),
        nb::arg("omega"),
        nb::arg("labels"),
        nb::arg("context"));
  m.def("alpha_tree_saliency",
        &AlphaTreeSaliency,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("shape"),
        nb::arg("saliency"),
        nb::arg("context"));
}

} // namespace chseg
