// chseg._chseg: the bindings of SingleLinkage (python/src/chsegBindings.h says what they share).
#include "chsegBindings.h"

#include "chs/AttributeHierarchy.h"
#include "chs/SingleLinkage.h"

namespace chseg
{
namespace
{

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
ImageSingleLinkage(const Input &                 image,
                   size_t                        spatial,
                   bool                          fullyConnected,
                   chs::VectorDistance           distance,
                   const Array &                 parent,
                   const Array &                 weight,
                   const Array &                 edge,
                   const Array &                 u,
                   const Array &                 v,
                   const chs::ExecutionContext & context)
{
  CheckHost(context, { &image, &parent, &weight, &edge, &u, &v });
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
                             r = chs::ImageSingleLinkage(Ptr<T>(image), grid, p, out, context, &info);
                           });
    },
    NoWidePixels{});
  return SingleLinkageInfo(r, info);
}

nb::dict
GraphSingleLinkage(const Input &                 u,
                   const Input &                 v,
                   const Input &                 w,
                   uint64_t                      vertices,
                   bool                          inputIsTree,
                   const Array &                 parent,
                   const Array &                 weight,
                   const Array &                 edge,
                   const Array &                 outU,
                   const Array &                 outV,
                   const chs::ExecutionContext & context)
{
  CheckHost(context, { &u, &v, &w, &parent, &weight, &edge, &outU, &outV });
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
      WithDendrogramArrays(
        parent,
        weight,
        edge,
        outU,
        outV,
        [&](const auto & out)
        {
          nb::gil_scoped_release release;
          r = chs::GraphSingleLinkage(
            Ptr<uint32_t>(u), Ptr<uint32_t>(v), Ptr<T>(w), w.size(), vertices, inputIsTree, out, context, &info);
        });
    },
    GraphWeights{});
  return SingleLinkageInfo(r, info);
}

/** A hierarchy by attribute of a dendrogram (parent, weight, edge, u, v): the watershed hierarchy (`filter` false) or
 * the attribute filter at `threshold`, written to the out arrays. */
nb::dict
AttributeHierarchy(const Input &                 parent,
                   const Input &                 weight,
                   const Input &                 edge,
                   const Input &                 u,
                   const Input &                 v,
                   chs::RegionAttribute          attribute,
                   bool                          filter,
                   double                        threshold,
                   const Array &                 outParent,
                   const Array &                 outWeight,
                   const Array &                 outEdge,
                   const Array &                 outU,
                   const Array &                 outV,
                   const chs::ExecutionContext & context)
{
  CheckHost(context, { &parent, &weight, &edge, &u, &v, &outParent, &outWeight, &outEdge, &outU, &outV });
  const uint64_t n = (parent.size() + 1) / 2; // the backends check that the arrays form a dendrogram
  if (weight.dtype() != nb::dtype<double>() || edge.dtype() != nb::dtype<uint64_t>() || weight.size() + 1 != n ||
      edge.size() + 1 != n || u.size() + 1 != n || v.size() + 1 != n || outParent.dtype() != parent.dtype())
    throw std::invalid_argument("chseg: hierarchies by attribute take a dendrogram of n leaves with 2n - 1 parents "
                                "(uint32 or uint64), n - 1 float64 weights, uint64 edges and ends of the parents' "
                                "type, and write one of the same id type");
  const chs::RegionAttribute a = attribute;
  chs::SingleLinkageResult   r;
  chs::RunInfo               info;
  WithDendrogramArrays(outParent,
                       outWeight,
                       outEdge,
                       outU,
                       outV,
                       [&](const auto & out)
                       {
                         using Node = std::remove_cv_t<std::remove_pointer_t<decltype(out.parent)>>;
                         if (parent.dtype() != nb::dtype<Node>() || u.dtype() != parent.dtype() ||
                             v.dtype() != parent.dtype())
                           throw std::invalid_argument("chseg: a dendrogram's parents and ends are of one type");
                         chs::DendrogramInputT<Node> in;
                         in.vertices = n;
                         in.parent   = Ptr<Node>(parent);
                         in.weight   = Ptr<double>(weight);
                         in.edge     = Ptr<uint64_t>(edge);
                         in.u        = Ptr<Node>(u);
                         in.v        = Ptr<Node>(v);
                         nb::gil_scoped_release release;
                         if (filter)
                           r = chs::FilterRegions(in, a, threshold, out, context, &info);
                         else
                           r = chs::WatershedHierarchy(in, a, out, context, &info);
                       });
  return SingleLinkageInfo(r, info);
}

/** The attribute filter of an alpha-tree (parents, float64 levels) over an image of `shape`: the single-linkage
 * dendrogram of its saliency on the image graph, filtered, in one call (chs::AlphaTreeFilterRegions), written to the
 * out arrays (the tree's id width). */
nb::dict
AlphaTreeFilter(const Input &                 parent,
                const Input &                 level,
                const std::vector<uint64_t> & shape,
                bool                          fullyConnected,
                chs::RegionAttribute          attribute,
                double                        threshold,
                const Array &                 outParent,
                const Array &                 outWeight,
                const Array &                 outEdge,
                const Array &                 outU,
                const Array &                 outV,
                const chs::ExecutionContext & context)
{
  CheckHost(context, { &parent, &level, &outParent, &outWeight, &outEdge, &outU, &outV });
  if (parent.device_type() == nb::device::cpu::value)
    CheckParents(parent); // a host scan; device parents are the tree's own (the saliency kernel checks the ends)
  const chs::Grid grid = GridOfShape(shape);
  if (level.dtype() != nb::dtype<double>() || level.size() != parent.size() || outParent.dtype() != parent.dtype() ||
      outParent.size() != 2 * grid.NumberOfVoxels() - 1)
    throw std::invalid_argument("chseg: the alpha-tree filter takes uint32 or uint64 parents, float64 levels of the "
                                "same length, and writes a dendrogram of the image's pixels with the parents' type");
  const chs::RegionAttribute a = attribute;
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
      nb::gil_scoped_release release;
      r = chs::AlphaTreeFilterRegions(
        Ptr<Node>(parent), Ptr<double>(level), parent.size(), grid, fullyConnected, a, threshold, out, context, &info);
    });
  return SingleLinkageInfo(r, info);
}

/** The attribute of every node of a dendrogram (host arrays), a NumPy float64 array. */
nb::object
DendrogramAttribute(const Input &        parent,
                    const Input &        weight,
                    const Input &        u,
                    const Input &        v,
                    chs::RegionAttribute attribute)
{
  for (const Input * a : { &parent, &weight, &u, &v })
    if (a->device_type() != nb::device::cpu::value)
      throw std::invalid_argument("chseg: node attributes are computed from host arrays");
  CheckParents(parent);
  const uint64_t n = (parent.size() + 1) / 2;
  if (weight.dtype() != nb::dtype<double>() || weight.size() + 1 != n || u.size() + 1 != n || v.size() + 1 != n)
    throw std::invalid_argument("chseg: a dendrogram of n leaves has n - 1 float64 weights and end vertices");
  if (u.dtype() != parent.dtype() || v.dtype() != parent.dtype())
    throw std::invalid_argument("chseg: a dendrogram's parents and ends are of one type");
  std::vector<double>        values(parent.size());
  const chs::RegionAttribute a   = attribute;
  auto                       run = [&](auto node)
  {
    using Node = decltype(node);
    chs::DendrogramInputT<Node> in;
    in.vertices = n;
    in.parent   = Ptr<Node>(parent);
    in.weight   = Ptr<double>(weight);
    in.u        = Ptr<Node>(u);
    in.v        = Ptr<Node>(v);
    nb::gil_scoped_release release;
    chs::DendrogramAttribute(in, a, values.data());
  };
  if (parent.dtype() == nb::dtype<uint64_t>())
    run(uint64_t());
  else
    run(uint32_t());
  return ToNumpy(std::move(values), parent.size());
}

} // namespace

void
BindSingleLinkage(nb::module_ & m)
{
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
        nb::arg("context"));
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
        nb::arg("context"));
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
        nb::arg("context"));
  m.def("alpha_tree_filter",
        &AlphaTreeFilter,
        nb::arg("parent"),
        nb::arg("level"),
        nb::arg("shape"),
        nb::arg("fully_connected"),
        nb::arg("attribute"),
        nb::arg("threshold"),
        nb::arg("out_parent"),
        nb::arg("out_weight"),
        nb::arg("out_edge"),
        nb::arg("out_u"),
        nb::arg("out_v"),
        nb::arg("context"));
  m.def("dendrogram_attribute",
        &DendrogramAttribute,
        nb::arg("parent"),
        nb::arg("weight"),
        nb::arg("u"),
        nb::arg("v"),
        nb::arg("attribute"));
}

} // namespace chseg
