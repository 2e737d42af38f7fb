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
      bool                          flatZones,
      int64_t                       background,
      bool                          statistics,
      const chs::ExecutionContext & context)
{
  Input        mask;
  const auto * maskPointer = OptionalPtr<uint8_t>(maskObject, mask);
  CheckHost(context, { &input, &labels, maskPointer ? &mask : nullptr });
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
  }
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
        nb::arg("flat_zones"),
        nb::arg("background"),
        nb::arg("statistics"),
        nb::arg("context"));
}

} // namespace chseg
