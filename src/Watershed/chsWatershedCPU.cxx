// The sequential reference of the watershed and the waterfall (include/chs/Watershed.h states the definition):
// lowest neighbours, a breadth-first search of the plateau distances from the pixels that descend, pointers,
// union-find of the minimal plateaux, numbering by first pixel; the waterfall by lowest passes and union-find of the
// regions. It works on the pixel values themselves, not on the CUDA backend's codes.
#include "Watershed/chsWatershedBackends.h"
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "chsWatershedRule.h"
#include "Common/chsProgress.h"
#include "Engines/ForestingTransform/chsForestingTransformRule.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <queue>
#include <utility>
#include <vector>

namespace chs
{
namespace
{

/** The neighbours of a pixel in increasing raster order. */
class Neighbourhood
{
public:
  Neighbourhood(const Grid & grid, bool full)
    : m_NX(int64_t(grid.size[0]))
    , m_NY(int64_t(grid.size[1]))
    , m_NZ(int64_t(grid.size[2]))
  {
    const int zr = grid.dimension == 3 ? 1 : 0;
    for (int dz = -zr; dz <= zr; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
        {
          const int m = (dx != 0) + (dy != 0) + (dz != 0);
          if (m == 0 || (!full && m > 1))
            continue;
          m_Offsets.push_back({ dx, dy, dz });
        }
  }

  /** Writes the neighbours of p into q (at most 26) and returns their number. */
  int
  Of(uint64_t p, uint64_t * q) const
  {
    const int64_t x = int64_t(p % uint64_t(m_NX)), y = int64_t(p / uint64_t(m_NX) % uint64_t(m_NY)),
                  z = int64_t(p / uint64_t(m_NX * m_NY));
    int count       = 0;
    for (const auto & o : m_Offsets)
    {
      const int64_t a = x + o[0], b = y + o[1], c = z + o[2];
      if (a < 0 || b < 0 || c < 0 || a >= m_NX || b >= m_NY || c >= m_NZ)
        continue;
      q[count++] = uint64_t(a + m_NX * (b + m_NY * c));
    }
    return count;
  }

private:
  int64_t                         m_NX, m_NY, m_NZ;
  std::vector<std::array<int, 3>> m_Offsets;
};

uint64_t
Find(std::vector<uint64_t> & parent, uint64_t a)
{
  while (parent[a] != a)
  {
    parent[a] = parent[parent[a]];
    a         = parent[a];
  }
  return a;
}

void
Unite(std::vector<uint64_t> & parent, uint64_t a, uint64_t b)
{
  a = Find(parent, a);
  b = Find(parent, b);
  if (a != b)
    parent[std::max(a, b)] = std::min(a, b);
}

template <typename T>
void
CheckImage(const T * image, const Grid & grid, uint64_t n)
{
  if constexpr (std::is_floating_point<T>::value)
    for (uint64_t i = 0; i < n; ++i)
      if (image[i] != image[i])
        throw ws::NaNError(grid, i);
}

/** Basin of every pixel, numbered 1, 2, ... by first pixel; returns the basin count. Its six steps are phases 0 to 5
 * of `progress`. */
template <typename T, typename B>
uint64_t
Basins(const T * I, const Grid & grid, bool full, std::vector<B> & basin, detail::CpuPhases & progress)
{
  const uint64_t        n = grid.NumberOfVoxels();
  const Neighbourhood   nb(grid, full);
  uint64_t              q[26];
  constexpr uint64_t    kNone = ~uint64_t(0);
  std::vector<uint64_t> pointer(n, kNone);
  std::vector<uint32_t> distance(n, ws::kNoDistance);
  std::vector<uint64_t> queue;
  // Lowest neighbours: the smallest value, then the largest index.
  progress.Start(0, n);
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    const int k   = nb.Of(p, q);
    uint64_t  low = kNone;
    for (int i = 0; i < k; ++i)
      if (low == kNone || !(I[low] < I[q[i]])) // q ascends: a later equal neighbour wins
        low = q[i];
    if (low != kNone && I[low] < I[p])
    {
      pointer[p]  = low;
      distance[p] = 0;
      queue.push_back(p);
    }
  }
  // Plateau distances: breadth-first from the descending pixels, through equal neighbours.
  progress.Start(1, n);
  for (uint64_t head = 0; head < queue.size(); ++head)
  {
    progress.At(head);
    const uint64_t p = queue[head];
    const int      k = nb.Of(p, q);
    for (int i = 0; i < k; ++i)
      if (distance[q[i]] == ws::kNoDistance && I[q[i]] == I[p])
      {
        if (distance[p] + 1 == ws::kNoDistance)
          throw std::runtime_error("chs: a plateau's shortest descending path reaches 2^32 - 2 pixels at " +
                                   ws::PixelName(grid, q[i]) + ", more than the watershed's 32-bit distances hold");
        distance[q[i]] = distance[p] + 1;
        queue.push_back(q[i]);
      }
  }
  // Pointers of the plateau pixels with a distance: the last neighbour one step closer.
  progress.Start(2, n);
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    if (distance[p] == 0 || distance[p] == ws::kNoDistance)
      continue;
    const int k = nb.Of(p, q);
    for (int i = 0; i < k; ++i)
      if (I[q[i]] == I[p] && distance[q[i]] == distance[p] - 1)
        pointer[p] = q[i];
  }
  // Minimal plateaux: union-find over equal neighbours without a distance.
  std::vector<uint64_t> plateau(n);
  std::iota(plateau.begin(), plateau.end(), uint64_t(0));
  progress.Start(3, n);
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    if (distance[p] != ws::kNoDistance)
      continue;
    const int k = nb.Of(p, q);
    for (int i = 0; i < k; ++i)
      if (q[i] > p && distance[q[i]] == ws::kNoDistance && I[q[i]] == I[p])
        Unite(plateau, p, q[i]);
  }
  // The minimal plateau of every pixel: follow the pointers, remembering the answer along the way.
  std::vector<uint64_t> sink(n, kNone);
  std::vector<uint64_t> path;
  progress.Start(4, n);
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    uint64_t a = p;
    while (sink[a] == kNone && pointer[a] != kNone)
    {
      path.push_back(a);
      a = pointer[a];
    }
    const uint64_t s = sink[a] != kNone ? sink[a] : Find(plateau, a);
    sink[a]          = s;
    for (uint64_t b : path)
      sink[b] = s;
    path.clear();
  }
  // Numbering by first pixel.
  std::vector<B> label(n, 0);
  B              count = 0;
  basin.assign(n, 0);
  progress.Start(5, n);
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    if (label[sink[p]] == 0)
      label[sink[p]] = ++count;
    basin[p] = label[sink[p]];
  }
  return count;
}

/** WatershedCPU with basins numbered in B. */
template <typename B, typename T, typename TLabel>
WatershedResult
Labelled(const T * image, const Grid & grid, const WatershedParameters & parameters, TLabel * labels)
{
  const uint64_t    n = grid.NumberOfVoxels();
  std::vector<B>    basin;
  WatershedResult   result;
  detail::CpuPhases progress(7);
  result.basinCount = Basins(image, grid, parameters.fullyConnected, basin, progress);
  ws::CheckLabelCapacity<TLabel>(result.basinCount);
  progress.Start(6, n);
  if (!parameters.markLines)
  {
    std::copy(basin.begin(), basin.end(), labels);
    progress.Done();
    return result;
  }
  const Neighbourhood nb(grid, parameters.fullyConnected);
  uint64_t            q[26];
  for (uint64_t p = 0; p < n; ++p)
  {
    progress.At(p);
    const int k    = nb.Of(p, q);
    bool      line = false;
    for (int i = 0; i < k && !line; ++i)
      line = basin[q[i]] != basin[p] && (image[q[i]] < image[p] || (image[q[i]] == image[p] && q[i] < p));
    labels[p] = line ? TLabel(0) : TLabel(basin[p]);
  }
  progress.Done();
  return result;
}
} // namespace

template <typename T, typename TLabel>
WatershedResult
WatershedCPU(const T * image, const Grid & grid, const WatershedParameters & parameters, TLabel * labels)
{
  const uint64_t n = ws::CheckedVoxelCount(grid);
  ws::CheckParameters(grid, parameters);
  CheckImage(image, grid, n);
  if (ws::WideIndex(grid, parameters))
    return Labelled<uint64_t>(image, grid, parameters, labels);
  return Labelled<uint32_t>(image, grid, parameters, labels);
}

template <typename T, typename TLabel>
WaterfallResult
WaterfallCPU(const T *                          image,
             const Grid &                       grid,
             const WaterfallParameters &        parameters,
             const WaterfallLevelSink<TLabel> & sink)
{
  const uint64_t n = ws::CheckedVoxelCount(grid);
  ws::CheckWaterfallParameters(grid, parameters);
  CheckImage(image, grid, n);
  std::vector<uint32_t> label;
  // The watershed is the first half of the progress; level k then takes half of what is left. From 2^32 - 1 voxels
  // on the basins are numbered in 64 bits, then narrowed: the levels number regions in 32 bits.
  detail::CpuPhases watershed(6, 0.0f, 0.5f);
  const bool        full = parameters.watershed.fullyConnected;
  uint64_t          regions;
  if (ws::WideIndex(grid, parameters.watershed))
  {
    std::vector<uint64_t> wide;
    regions = Basins(image, grid, full, wide, watershed);
    ws::CheckWaterfallRegions(regions);
    label.resize(n);
    std::transform(wide.begin(), wide.end(), label.begin(), [](uint64_t b) { return uint32_t(b); });
  }
  else
    regions = Basins(image, grid, full, label, watershed);
  ws::CheckLabelCapacity<TLabel>(regions);
  WaterfallResult     result;
  const Neighbourhood nb(grid, parameters.watershed.fullyConnected);
  uint64_t            q[26];
  for (unsigned level = 0;; ++level)
  {
    result.regionCounts.push_back(regions);
    if (TLabel * out = sink(level, regions))
      std::copy(label.begin(), label.end(), out);
    if (regions == 1 || (parameters.numberOfLevels != 0 && level + 1 >= parameters.numberOfLevels))
      break;
    const float       done = 1.0f - 0.5f / float(uint64_t(1) << std::min(level, 20u));
    detail::CpuPhases progress(3, done, done + (1.0f - done) / 2);
    // The lowest pass of every region.
    progress.Start(0, n);
    std::vector<T>    pass(regions + 1);
    std::vector<char> hasPass(regions + 1, 0);
    const auto        lower = [&](uint32_t r, T h)
    {
      if (!hasPass[r] || h < pass[r])
      {
        pass[r]    = h;
        hasPass[r] = 1;
      }
    };
    for (uint64_t p = 0; p < n; ++p)
    {
      progress.At(p);
      const int k = nb.Of(p, q);
      for (int i = 0; i < k; ++i)
        if (q[i] > p && label[q[i]] != label[p])
        {
          const T h = std::max(image[p], image[q[i]]);
          lower(label[p], h);
          lower(label[q[i]], h);
        }
    }
    // Every region joins its neighbours across its lowest pass.
    std::vector<uint64_t> parent(regions + 1);
    std::iota(parent.begin(), parent.end(), uint64_t(0));
    progress.Start(1, n);
    for (uint64_t p = 0; p < n; ++p)
    {
      progress.At(p);
      const int k = nb.Of(p, q);
      for (int i = 0; i < k; ++i)
        if (q[i] > p && label[q[i]] != label[p])
        {
          const T h = std::max(image[p], image[q[i]]);
          if (h == pass[label[p]] || h == pass[label[q[i]]])
            Unite(parent, label[p], label[q[i]]);
        }
    }
    // New labels: the regions of level k are numbered by first pixel, so the smallest label of a union (its root)
    // is its first pixel's; number the roots in order.
    std::vector<uint32_t> next(regions + 1, 0);
    uint32_t              count = 0;
    for (uint64_t r = 1; r <= regions; ++r)
      if (Find(parent, r) == r)
        next[r] = ++count;
    std::vector<uint32_t> map(regions);
    for (uint64_t r = 1; r <= regions; ++r)
      map[r - 1] = next[Find(parent, r)];
    progress.Start(2, n);
    for (uint64_t p = 0; p < n; ++p)
    {
      progress.At(p);
      label[p] = map[label[p] - 1];
    }
    result.parents.push_back(std::move(map));
    regions = count;
  }
  detail::CpuProgress(1.0f);
  return result;
}

namespace
{
/** The reconstruction by erosion of the handicaps h above the codes c (both order-preserving codes): the smallest,
 * over the paths from any pixel s to p, of max(h(s), the largest c along the path after s). Dijkstra with a heap. */
std::vector<uint32_t>
ReconstructionByErosion(const std::vector<uint32_t> & c, std::vector<uint32_t> h, const Grid & grid, bool full)
{
  const uint64_t      n = c.size();
  const Neighbourhood nb(grid, full);
  using Entry = std::pair<uint32_t, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (uint64_t p = 0; p < n; ++p)
    heap.emplace(h[p], p);
  detail::CpuPhases progress(1);
  progress.Start(0, n);
  uint64_t q[26], taken = 0;
  while (!heap.empty())
  {
    const auto [v, p] = heap.top();
    heap.pop();
    if (v != h[p])
      continue;
    progress.At(++taken);
    const int k = nb.Of(p, q);
    for (int i = 0; i < k; ++i)
    {
      const uint32_t offer = std::max(v, c[q[i]]);
      if (offer < h[q[i]])
      {
        h[q[i]] = offer;
        heap.emplace(offer, q[i]);
      }
    }
  }
  return h;
}
} // namespace

template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershedCPU(const T *                         image,
                   const TLabel *                    markers,
                   const uint8_t *                   mask,
                   const Grid &                      grid,
                   const MarkerWatershedParameters & parameters,
                   TLabel *                          labels)
{
  static_assert(std::is_unsigned<TLabel>::value, "labels are passed as unsigned integers");
  ws::CheckMarkerParameters<T>(grid, parameters, markers != nullptr);
  const uint64_t n = grid.NumberOfVoxels();
  CheckImage(image, grid, n);
  MarkerWatershedResult result;
  if constexpr (sizeof(T) <= 4)
  {
    using C = typename ws::Code<T>::Type;
    std::vector<C> codes(n);
    for (uint64_t p = 0; p < n; ++p)
      codes[p] = ws::Encode(image[p]);
    ForestingTransformParameters flood;
    flood.fullyConnected = parameters.fullyConnected;
    flood.arcWeight      = ArcWeightFunction::Maximum;
    flood.forceWideIndex = parameters.forceWideIndex;
    std::vector<TLabel> found;
    if (!markers)
    {
      // The minima of H: the pixels of each basin of H (one per regional minimum) whose value is the basin's lowest.
      std::vector<uint32_t> h(codes.begin(), codes.end());
      {
        detail::CpuSubRange part(0.0f, 0.3f);
        if (parameters.level > 0)
        {
          std::vector<uint32_t> shifted(n);
          for (uint64_t p = 0; p < n; ++p)
            shifted[p] = ws::Encode(ws::Shifted(image[p], parameters.level));
          h = ReconstructionByErosion(h, std::move(shifted), grid, parameters.fullyConnected);
        }
      }
      // The regional minima of H: the pixels of each basin of H (numbered in 32 or 64 bits, as the watershed's)
      // whose value is the basin's lowest.
      std::vector<uint8_t> minimum(n);
      const auto           minima = [&](auto & basin)
      {
        uint64_t basins;
        {
          detail::CpuSubRange part(0.3f, 0.6f);
          detail::CpuPhases   phases(6);
          basins = Basins(h.data(), grid, parameters.fullyConnected, basin, phases);
        }
        std::vector<uint32_t> lowest(basins + 1, ~uint32_t(0));
        for (uint64_t p = 0; p < n; ++p)
          lowest[basin[p]] = std::min(lowest[basin[p]], h[p]);
        for (uint64_t p = 0; p < n; ++p)
          minimum[p] = h[p] == lowest[basin[p]];
      };
      if (ws::WideIndex(grid, parameters))
      {
        std::vector<uint64_t> basin;
        minima(basin);
      }
      else
      {
        std::vector<uint32_t> basin;
        minima(basin);
      }
      ConnectedComponentParameters cc;
      cc.fullyConnected = parameters.fullyConnected;
      cc.maximumLabel   = uint64_t(TLabel(~TLabel(0)));
      found.resize(n);
      detail::CpuSubRange part(0.6f, 0.7f);
      try
      {
        result.markerCount = LabelConnectedComponentsCPU(minimum.data(), mask, found.data(), grid, cc, nullptr);
      }
      catch (const LabelOverflowError & e)
      {
        throw ws::TooManyMarkers(e.objectCount, cc.maximumLabel);
      }
      markers = found.data();
    }
    for (uint64_t p = 0; p < n; ++p)
      result.seedCount += markers[p] != 0 && (!mask || mask[p]);
    detail::CpuSubRange part(markers == found.data() ? 0.7f : 0.0f, 1.0f);
    ift::MaskedTransformCPU(codes.data(), markers, mask, grid, flood, labels);
  }
  return result;
}

#define CHS_INSTANTIATE_MARKER_WATERSHED_CPU(T, L)                                                                     \
  template CudaHierarchicalSegmentation_EXPORT MarkerWatershedResult MarkerWatershedCPU<T, L>(                         \
    const T *, const L *, const uint8_t *, const Grid &, const MarkerWatershedParameters &, L *);                      \
  CHS_INSTANTIATE_ENTRY_MARKER_WATERSHED(T, L)
#define CHS_INSTANTIATE_WATERSHED_CPU(T, L)                                                                            \
  template CudaHierarchicalSegmentation_EXPORT WatershedResult WatershedCPU<T, L>(                                     \
    const T *, const Grid &, const WatershedParameters &, L *);                                                        \
  template CudaHierarchicalSegmentation_EXPORT WaterfallResult WaterfallCPU<T, L>(                                     \
    const T *, const Grid &, const WaterfallParameters &, const WaterfallLevelSink<L> &);                              \
  CHS_INSTANTIATE_ENTRY_WATERSHED(T, L);                                                                               \
  CHS_INSTANTIATE_ENTRY_WATERFALL(T, L)
#define CHS_INSTANTIATE_WATERSHED_CPU_LABELS(T)                                                                        \
  CHS_INSTANTIATE_MARKER_WATERSHED_CPU(T, uint8_t);                                                                    \
  CHS_INSTANTIATE_MARKER_WATERSHED_CPU(T, uint16_t);                                                                   \
  CHS_INSTANTIATE_MARKER_WATERSHED_CPU(T, uint32_t);                                                                   \
  CHS_INSTANTIATE_MARKER_WATERSHED_CPU(T, uint64_t);                                                                   \
  CHS_INSTANTIATE_WATERSHED_CPU(T, uint8_t);                                                                           \
  CHS_INSTANTIATE_WATERSHED_CPU(T, uint16_t);                                                                          \
  CHS_INSTANTIATE_WATERSHED_CPU(T, uint32_t);                                                                          \
  CHS_INSTANTIATE_WATERSHED_CPU(T, uint64_t)
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(uint8_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(int8_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(uint16_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(int16_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(uint32_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(int32_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(uint64_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(int64_t);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(float);
CHS_INSTANTIATE_WATERSHED_CPU_LABELS(double);

} // namespace chs
