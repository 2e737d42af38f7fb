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
      bool                          onlyCounts,
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
  p.onlyVoxelCounts   = onlyCounts;
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
    if (!onlyCounts)
    {
      d["minimum"]        = ToNumpy(std::move(stats.minimum), count, 3);
      d["maximum"]        = ToNumpy(std::move(stats.maximum), count, 3);
      d["coordinate_sum"] = ToNumpy(std::move(stats.coordinateSum), count, 3);
    }
  }
  return d;
}

nb::dict
LabelStatistics(const Input & labels, const chs::ExecutionContext & context)
{
  CheckHost(context, { &labels });
  const chs::Grid                   grid = GridOf(labels, labels.ndim());
  chs::ConnectedComponentStatistics stats;
  chs::RunInfo                      info;
  uint64_t                          largest = 0;
  Dispatch(
    labels,
    "a label image",
    [&](auto label)
    {
      using TLabel = decltype(label);
      nb::gil_scoped_release release;
      largest = chs::ComputeLabelStatistics(Ptr<TLabel>(labels), grid, stats, context, &info);
    },
    Labels{});
  const size_t count  = static_cast<size_t>(largest) + 1;
  nb::dict     d      = Info(info);
  d["voxel_count"]    = ToNumpy(std::move(stats.voxelCount), count);
  d["minimum"]        = ToNumpy(std::move(stats.minimum), count, 3);
  d["maximum"]        = ToNumpy(std::move(stats.maximum), count, 3);
  d["coordinate_sum"] = ToNumpy(std::move(stats.coordinateSum), count, 3);
  return d;
}

/** cc3d's estimate of a multilabel image's provisional labels, which chooses its default output type: the runs of equal
 * non-zero values along the rows of the last (fastest) axis, and the first and last rows holding a non-zero value
 * (-1 when none). With `limit` > 0 the count stops once it reaches the limit (and the rows are then not complete):
 * the callers that only compare the count with a type's range read no further than they must. */
template <typename T>
nb::tuple
RowRuns(const T * v, uint64_t n, uint64_t width, uint64_t limit)
{
  uint64_t count = 0;
  int64_t  first = -1, last = -1;
  {
    nb::gil_scoped_release release;
    const uint64_t         rows = width ? n / width : 0;
    for (uint64_t r = 0; r < rows && (limit == 0 || count < limit); ++r)
    {
      const T * row  = v + r * width;
      uint64_t  runs = row[0] != T(0);
      for (uint64_t x = 1; x < width; ++x)
        runs += row[x] != T(0) && row[x] != row[x - 1];
      if (runs)
      {
        if (first < 0)
          first = int64_t(r);
        last = int64_t(r);
      }
      count += runs;
    }
  }
  return nb::make_tuple(count, first, last);
}

nb::tuple
ProvisionalLabelEstimate(const Input & values, uint64_t limit)
{
  const uint64_t n     = values.size();
  const uint64_t width = values.ndim() ? values.shape(values.ndim() - 1) : 1;
  nb::tuple      out;
  Dispatch(
    values,
    "an image",
    [&](auto v)
    {
      using T = decltype(v);
      out     = RowRuns<T>(Ptr<T>(values), n, width, limit);
    },
    Types<uint8_t, uint16_t, uint32_t, uint64_t, float, double>{});
  return out;
}

void
MapLabels(const Input & labels, const Input & table, const Array & out, const chs::ExecutionContext & context)
{
  CheckHost(context, { &labels, &table, &out });
  if (out.dtype() != table.dtype())
    throw std::invalid_argument("chseg: the output's type differs from the table's");
  const chs::Grid grid = GridOf(labels, labels.ndim());
  Dispatch(
    labels,
    "a label image",
    [&](auto label)
    {
      using TLabel = decltype(label);
      Dispatch(
        table,
        "a label table",
        [&](auto entry)
        {
          using TOut = decltype(entry);
          nb::gil_scoped_release release;
          chs::MapLabels(Ptr<TLabel>(labels), grid, Ptr<TOut>(table), table.size(), Ptr<TOut>(out), context);
        },
        Labels{});
    },
    Labels{});
}

void
KeepLabels(const Input &                 image,
           const Input &                 labels,
           const Input &                 keep,
           const Array &                 out,
           const chs::ExecutionContext & context)
{
  CheckHost(context, { &image, &labels, &keep, &out });
  if (keep.dtype() != nb::dtype<uint8_t>())
    throw std::invalid_argument("chseg: the keep table must be uint8");
  if (out.dtype() != image.dtype())
    throw std::invalid_argument("chseg: the output's type differs from the image's");
  const chs::Grid grid = GridOf(labels, labels.ndim());
  Dispatch(
    image,
    "an image",
    [&](auto pixel)
    {
      using TPixel = decltype(pixel);
      Dispatch(
        labels,
        "a label image",
        [&](auto label)
        {
          using TLabel = decltype(label);
          nb::gil_scoped_release release;
          chs::KeepLabels(
            Ptr<TPixel>(image), Ptr<TLabel>(labels), grid, Ptr<uint8_t>(keep), keep.size(), Ptr<TPixel>(out), context);
        },
        Labels{});
    },
    Types<uint8_t, uint16_t, uint32_t, uint64_t, float, double>{});
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
        nb::arg("only_counts"),
        nb::arg("context"));
  m.def("map_labels", &MapLabels, nb::arg("labels"), nb::arg("table"), nb::arg("out"), nb::arg("context"));
  m.def("keep_labels",
        &KeepLabels,
        nb::arg("image"),
        nb::arg("labels"),
        nb::arg("keep"),
        nb::arg("out"),
        nb::arg("context"));
  m.def("provisional_label_estimate", &ProvisionalLabelEstimate, nb::arg("values"), nb::arg("limit"));
  m.def("label_statistics", &LabelStatistics, nb::arg("labels"), nb::arg("context"));
}

} // namespace chseg
