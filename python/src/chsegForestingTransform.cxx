// chseg._chseg: the bindings of ForestingTransform (python/src/chsegBindings.h says what they share).
#include "chsegBindings.h"

#include "chs/ForestingTransform.h"
#include "chs/Waterpixels.h"

namespace chseg
{
namespace
{

nb::dict
ForestingTransform(const Input &                 weights,
                   const Input &                 seeds,
                   const Array &                 labels,
                   const nb::object &            costObject,
                   const nb::object &            predecessorObject,
                   bool                          fullyConnected,
                   chs::ArcWeightFunction        arcWeight,
                   uint64_t                      maximumRounds,
                   const chs::ExecutionContext & context)
{
  Array     cost, predecessor;
  void *    costPointer        = OptionalOutput<void>(costObject, cost);
  int64_t * predecessorPointer = OptionalOutput<int64_t>(predecessorObject, predecessor);
  CheckHost(context,
            { &weights, &seeds, &labels, costPointer ? &cost : nullptr, predecessorPointer ? &predecessor : nullptr });
  if (seeds.dtype() != labels.dtype())
    throw std::invalid_argument("chseg: the seeds and the labels must have one type");
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ForestingTransformParameters p;
  p.fullyConnected = fullyConnected;
  p.arcWeight      = arcWeight;
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
                          r       = chs::ImageForestingTransform(Ptr<W>(weights),
                                                           Ptr<L>(seeds),
                                                           grid,
                                                           p,
                                                           Ptr<L>(labels),
                                                           static_cast<C *>(costPointer),
                                                           predecessorPointer,
                                                           context,
                                                           &info);
                        });
  nb::dict d      = Info(info);
  d["seed_count"] = r.seedCount;
  d["rounds"]     = r.rounds;
  return d;
}

nb::dict
Waterpixels(const Input &                 image,
            const Array &                 labels,
            const nb::object &            borderObject,
            const std::vector<uint64_t> & gridStep,
            float                         compactness,
            bool                          gradientMinimumSeeds,
            bool                          fullyConnected,
            const chs::ExecutionContext & context)
{
  Array   border;
  float * borderPointer = OptionalOutput<float>(borderObject, border);
  CheckHost(context, { &image, &labels, borderPointer ? &border : nullptr });
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
                          r = chs::Waterpixels(Ptr<T>(image), grid, p, Ptr<L>(labels), borderPointer, context, &info);
                        });
  nb::dict d       = Info(info);
  d["count"]       = r.superpixels;
  d["compactness"] = r.compactness;
  d["rounds"]      = r.rounds;
  return d;
}

} // namespace

void
BindForestingTransform(nb::module_ & m)
{
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
        nb::arg("context"));
  m.def("waterpixels",
        &Waterpixels,
        nb::arg("image"),
        nb::arg("labels"),
        nb::arg("border").none(),
        nb::arg("grid_step"),
        nb::arg("compactness"),
        nb::arg("gradient_minimum_seeds"),
        nb::arg("fully_connected"),
        nb::arg("context"));
}

} // namespace chseg
