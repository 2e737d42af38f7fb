// chseg._chseg: the bindings of ConnectedComponents (python/src/chsegBindings.h says what they share).
#include "chsegBindings.h"

#include "chs/ConnectedComponents.h"

namespace chseg
{
namespace
{

nb::dict
Label(const Input &                 input,
      const nb::object &            maskObject,
      const Array &                 labels,
      bool                          fullyConnected,
      bool                          edgeConnected,
      chs::ConnectedComponentMode   mode,
      double                        delta,
      bool                          periodic,
      int64_t                       background,
      bool                          statistics,
      const chs::ExecutionContext & context)
{
  Input        mask;
  const auto * maskPointer = OptionalPtr<uint8_t>(maskObject, mask);
  CheckHost(context, { &input, &labels, maskPointer ? &mask : nullptr });
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ConnectedComponentParameters p;
  p.mode              = mode;
  p.fullyConnected    = fullyConnected;
  p.edgeConnected     = edgeConnected;
  p.delta             = delta;
  p.periodic          = periodic;
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
      count          = chs::LabelConnectedComponents(
        Ptr<TPixel>(input), maskPointer, Ptr<TLabel>(labels), grid, p, statistics ? &stats : nullptr, context, &info);
    });
  nb::dict d = Info(info);
  d["count"] = count;
  if (statistics)
  {
    d["voxel_count"] = ToNumpy(std::move(stats.voxelCount), count);
    d["minimum"]     = ToNumpy(std::move(stats.minimum), count, 3);
    d["maximum"]     = ToNumpy(std::move(stats.maximum), count, 3);
    d["coordinate_sum"] = ToNumpy(std::move(stats.coordinateSum), count, 3);
  }
  return d;
}

nb::dict
LabelStatistics(const Input & labels, uint64_t maximumLabel, const chs::ExecutionContext & context)
{
  CheckHost(context, { &labels });
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ConnectedComponentStatistics stats;
  chs::RunInfo                      info;
  Dispatch(
    labels,
    "a label image",
    [&](auto label)
    {
      using TLabel = decltype(label);
      nb::gil_scoped_release release;
      chs::ComputeLabelStatistics(Ptr<TLabel>(labels), grid, maximumLabel, stats, context, &info);
    },
    Labels{});
  const size_t count  = static_cast<size_t>(maximumLabel) + 1;
  nb::dict     d      = Info(info);
  d["voxel_count"]    = ToNumpy(std::move(stats.voxelCount), count);
  d["minimum"]        = ToNumpy(std::move(stats.minimum), count, 3);
  d["maximum"]        = ToNumpy(std::move(stats.maximum), count, 3);
  d["coordinate_sum"] = ToNumpy(std::move(stats.coordinateSum), count, 3);
  return d;
}

} // namespace

void
BindConnectedComponents(nb::module_ & m)
{
  m.def("label",
        &Label,
        nb::arg("input"),
        nb::arg("mask").none(),
        nb::arg("labels"),
        nb::arg("fully_connected"),
        nb::arg("edge_connected"),
        nb::arg("mode"),
        nb::arg("delta"),
        nb::arg("periodic"),
        nb::arg("background"),
        nb::arg("statistics"),
        nb::arg("context"));
  m.def("label_statistics",
        &LabelStatistics,
        nb::arg("labels"),
        nb::arg("maximum_label"),
        nb::arg("context"));
}

} // namespace chseg
