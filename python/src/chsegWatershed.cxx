// chseg._chseg: the bindings of Watershed (python/src/chsegBindings.h says what they share).
#include "chsegBindings.h"

#include "chs/Watershed.h"

namespace chseg
{
namespace
{

chs::WatershedParameters
WatershedParametersOf(bool                    fullyConnected,
                      chs::WatershedAlgorithm algorithm,
                      chs::PlateauResolution  plateaus,
                      unsigned                reductionRate,
                      bool                    markLines)
{
  chs::WatershedParameters p;
  p.fullyConnected = fullyConnected;
  p.algorithm      = algorithm;
  p.plateaus       = plateaus;
  p.reductionRate  = reductionRate;
  p.markLines      = markLines;
  return p;
}

nb::dict
Watershed(const Input &                 image,
          const Array &                 labels,
          bool                          fullyConnected,
          chs::WatershedAlgorithm       algorithm,
          chs::PlateauResolution        plateaus,
          unsigned                      reductionRate,
          bool                          markLines,
          const chs::ExecutionContext & context)
{
  CheckHost(context, { &image, &labels });
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
                          r       = chs::Watershed(Ptr<T>(image), grid, p, Ptr<L>(labels), context, &info);
                        });
  nb::dict d          = Info(info);
  d["count"]          = r.basinCount;
  d["plateau_rounds"] = r.plateauRounds;
  return d;
}

/** The watershed by flooding from markers (or from the minima of the h-minima transform of height `level`), inside
 * the mask when there is one. `markers` has the labels' dtype. */
nb::dict
MarkerWatershed(const Input &                 image,
                const nb::object &            markersObject,
                const nb::object &            maskObject,
                const Array &                 labels,
                bool                          fullyConnected,
                double                        level,
                const chs::ExecutionContext & context)
{
  Input        markers, mask;
  const auto * maskPointer = OptionalPtr<uint8_t>(maskObject, mask);
  if (!markersObject.is_none())
    markers = nb::cast<Input>(markersObject);
  CheckHost(context, { &image, &labels, maskPointer ? &mask : nullptr, markersObject.is_none() ? nullptr : &markers });
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
                          const L * m = markersObject.is_none() ? nullptr : Ptr<L>(markers);
                          r           = chs::MarkerWatershed(
                            Ptr<T>(image), m, maskPointer, grid, p, Ptr<L>(labels), context, &info);
                        });
  nb::dict d      = Info(info);
  d["count"]      = r.markerCount;
  d["seed_count"] = r.seedCount;
  return d;
}

/** The waterfall, kept as a hierarchy: level 0's labels into `level0`, the parent labels of every level returned. */
nb::dict
Waterfall(const Input &                 image,
          const Array &                 level0,
          bool                          fullyConnected,
          chs::WatershedAlgorithm       algorithm,
          chs::PlateauResolution        plateaus,
          unsigned                      reductionRate,
          unsigned                      levels,
          const chs::ExecutionContext & context)
{
  CheckHost(context, { &image, &level0 });
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
                          r = chs::Waterfall(Ptr<T>(image), grid, p, sink, context, &info);
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

} // namespace

void
BindWatershed(nb::module_ & m)
{
  m.def("watershed",
        &Watershed,
        nb::arg("image"),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("algorithm"),
        nb::arg("plateaus"),
        nb::arg("reduction_rate"),
        nb::arg("mark_lines"),
        nb::arg("context"));
  m.def("marker_watershed",
        &MarkerWatershed,
        nb::arg("image"),
        nb::arg("markers").none(),
        nb::arg("mask").none(),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("level"),
        nb::arg("context"));
  m.def("waterfall",
        &Waterfall,
        nb::arg("image"),
        nb::arg("level0"),
        nb::arg("fully_connected"),
        nb::arg("algorithm"),
        nb::arg("plateaus"),
        nb::arg("reduction_rate"),
        nb::arg("levels"),
        nb::arg("context"));
}

} // namespace chseg
