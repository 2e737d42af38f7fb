// The sequential reference of the waterpixels (include/chs/Waterpixels.h): the border image and the seeds by the
// shared rule (src/Waterpixels/chsWaterpixelRule.h), then the CPU Image Foresting Transform. Compiled without
// floating-point contraction (src/CMakeLists.txt), so that its float operations are the CUDA backend's.
#include "Waterpixels/chsWaterpixelsBackends.h"
#include "Common/chsProgress.h"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Engines/ForestingTransform/chsForestingTransformRule.h"
#include "chsWaterpixelRule.h"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

namespace chs
{
namespace wp
{

/** Checks the input (finite as float) and the label range; returns the cell count and the compactness to use. */
template <typename TPixel, typename TLabel>
std::pair<uint64_t, float>
Prepare(const TPixel * image, const Grid & grid, const WaterpixelParameters & parameters, Axis (&axes)[3])
{
  const uint64_t n = ift::CheckedVoxelCount(grid);
  CheckAxes(grid, parameters, axes);
  float smallest = INFINITY, largest = -INFINITY;
  for (uint64_t i = 0; i < n; ++i)
  {
    const float v = static_cast<float>(image[i]);
    if (!std::isfinite(v))
      throw std::invalid_argument(wp::NonFiniteInputMessage(i, std::isnan(v)));
    smallest = std::min(smallest, v);
    largest  = std::max(largest, v);
  }
  const uint64_t cells = uint64_t(axes[0].Cells()) * axes[1].Cells() * axes[2].Cells();
  if (cells > std::numeric_limits<TLabel>::max())
    throw std::invalid_argument("chs: " + std::to_string(cells) + " waterpixels do not fit the label type (at most " +
                                std::to_string(uint64_t(std::numeric_limits<TLabel>::max())) + ")");
  const float k = parameters.compactness < 0 ? AutomaticCompactness(smallest, largest) : parameters.compactness;
  return { cells, k };
}

} // namespace wp

template <typename TPixel, typename TLabel>
WaterpixelResult
WaterpixelsCPU(const TPixel *               image,
               const Grid &                 grid,
               const WaterpixelParameters & parameters,
               TLabel *                     labels,
               float *                      border)
{
  wp::Axis       axes[3];
  const auto     prepared = wp::Prepare<TPixel, TLabel>(image, grid, parameters, axes);
  const float    k        = prepared.second;
  const uint64_t n        = grid.NumberOfVoxels();
  const int64_t  nx = grid.size[0], ny = grid.size[1], nz = grid.size[2];
  const bool     threeD = grid.dimension == 3;
  const auto     at = [&](int64_t x, int64_t y, int64_t z) { return static_cast<float>(image[(z * ny + y) * nx + x]); };

  // Progress: the border image and the seeds are the first 30%, the IFT the rest.
  detail::CpuPhases  progress(2, 0.0f, 0.3f);
  std::vector<float> B(n), G(parameters.gradientMinimumSeeds ? n : 0);
  progress.Start(0, n);
  for (int64_t z = 0, i = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x, ++i)
      {
        progress.At(uint64_t(i));
        const float g = wp::Gradient(at, x, y, z, nx, ny, nz, threeD);
        B[i]          = rn::Add(g, rn::Mul(k, wp::Distance(axes, x, y, z, threeD)));
        if (!G.empty())
          G[i] = g;
      }

  std::vector<TLabel> seeds(n, 0);
  TLabel              label = 0;
  progress.Start(1, 1);
  for (int64_t cz = 0; cz < axes[2].Cells(); ++cz)
    for (int64_t cy = 0; cy < axes[1].Cells(); ++cy)
      for (int64_t cx = 0; cx < axes[0].Cells(); ++cx)
      {
        ++label;
        int64_t seed = (axes[2].Middle(cz) * ny + axes[1].Middle(cy)) * nx + axes[0].Middle(cx);
        if (parameters.gradientMinimumSeeds)
        {
          float best = INFINITY;
          for (int64_t z = cz * axes[2].s; z < std::min(nz, (cz + 1) * axes[2].s); ++z)
            for (int64_t y = cy * axes[1].s; y < std::min(ny, (cy + 1) * axes[1].s); ++y)
              for (int64_t x = cx * axes[0].s; x < std::min(nx, (cx + 1) * axes[0].s); ++x)
              {
                const int64_t i = (z * ny + y) * nx + x;
                if (G[i] < best) // raster order: the first of equal minima stays
                {
                  best = G[i];
                  seed = i;
                }
              }
        }
        seeds[seed] = label;
      }

  ForestingTransformParameters ift;
  ift.fullyConnected = parameters.fullyConnected;
  ift.arcWeight      = ArcWeightFunction::Target;
  ift.forceWideIndex = parameters.forceWideIndex;
  {
    const detail::CpuSubRange sub(0.3f, 1.0f);
    ImageForestingTransformCPU<float, TLabel>(B.data(), seeds.data(), grid, ift, labels, nullptr, nullptr);
  }
  if (border)
    std::copy(B.begin(), B.end(), border);
  WaterpixelResult result;
  result.superpixels = prepared.first;
  result.compactness = k;
  return result;
}

#define CHS_INSTANTIATE_WP_CPU(TPixel, TLabel)                                                                         \
  template CudaHierarchicalSegmentation_EXPORT WaterpixelResult WaterpixelsCPU<TPixel, TLabel>(                        \
    const TPixel *, const Grid &, const WaterpixelParameters &, TLabel *, float *);                                    \
  CHS_INSTANTIATE_ENTRY_WATERPIXELS(TPixel, TLabel)
#define CHS_INSTANTIATE_WP_CPU_LABELS(TPixel)                                                                          \
  CHS_INSTANTIATE_WP_CPU(TPixel, uint8_t);                                                                             \
  CHS_INSTANTIATE_WP_CPU(TPixel, uint16_t);                                                                            \
  CHS_INSTANTIATE_WP_CPU(TPixel, uint32_t);                                                                            \
  CHS_INSTANTIATE_WP_CPU(TPixel, uint64_t)

CHS_INSTANTIATE_WP_CPU_LABELS(uint8_t);
CHS_INSTANTIATE_WP_CPU_LABELS(int8_t);
CHS_INSTANTIATE_WP_CPU_LABELS(uint16_t);
CHS_INSTANTIATE_WP_CPU_LABELS(int16_t);
CHS_INSTANTIATE_WP_CPU_LABELS(uint32_t);
CHS_INSTANTIATE_WP_CPU_LABELS(int32_t);
CHS_INSTANTIATE_WP_CPU_LABELS(float);
CHS_INSTANTIATE_WP_CPU_LABELS(double);

} // namespace chs
