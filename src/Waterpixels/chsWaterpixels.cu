// CUDA waterpixels (include/chs/Waterpixels.h): the input's range (for the automatic compactness) and NaN check,
// the border image B = |grad I| + k E and the seeds on the GPU, then the CUDA Image Foresting Transform on the
// device (ift::TransformOnDevice), with the float operations of src/Waterpixels/chsWaterpixelRule.h.
#include "Common/chsCudaCommon.cuh"
#include "Waterpixels/chsWaterpixelsBackends.h"
#include "Engines/ForestingTransform/chsForestingTransformDevice.h"
#include "Engines/ForestingTransform/chsForestingTransformRule.h"
#include "chsWaterpixelRule.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

namespace chs
{
namespace wp
{

/** An int whose order is the float's (for atomicMin and atomicMax). */
__device__ __forceinline__ int
OrderedInt(float f)
{
  const int b = __float_as_int(f);
  return b >= 0 ? b : b ^ 0x7fffffff;
}
inline float
FromOrderedInt(int b)
{
  const int bits = b >= 0 ? b : b ^ 0x7fffffff;
  float     f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

/** range[0] = smallest, range[1] = largest input value as float (ordered ints); *firstNaN = the first pixel that is
 * NaN or infinite as a float. */
template <typename TPixel>
__global__ void
RangeKernel(const TPixel * image, uint64_t n, int * range, unsigned long long * firstNaN)
{
  float lo = INFINITY, hi = -INFINITY;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const float v = static_cast<float>(image[i]);
    if (!isfinite(v))
      atomicMin(firstNaN, static_cast<unsigned long long>(i));
    else
    {
      lo = fminf(lo, v);
      hi = fmaxf(hi, v);
    }
  }
  for (int o = 16; o > 0; o >>= 1)
  {
    lo = fminf(lo, __shfl_down_sync(0xffffffffu, lo, o));
    hi = fmaxf(hi, __shfl_down_sync(0xffffffffu, hi, o));
  }
  if ((threadIdx.x & 31) == 0)
  {
    atomicMin(range, OrderedInt(lo));
    atomicMax(range + 1, OrderedInt(hi));
  }
}

/** B = |grad I| + k E, a thread a pixel, rows of the image spread over the grid's y; the distance terms of each
 * axis come from tables made on the host by the same Axis::Term. */
template <typename TPixel, bool ThreeD>
__global__ void
BorderKernel(const TPixel * image, int nx, int ny, int nz, const float * terms, float k, float * B, float * G)
{
  const int  x  = int(blockIdx.x * blockDim.x + threadIdx.x);
  const auto at = [&](int64_t x, int64_t y, int64_t z) { return static_cast<float>(image[(z * ny + y) * nx + x]); };
  if (x >= nx)
    return;
  for (int64_t row = blockIdx.y; row < int64_t(ny) * nz; row += gridDim.y)
  {
    const int   y = int(row % ny), z = int(row / ny);
    const float g   = Gradient(at, x, y, z, nx, ny, nz, ThreeD);
    float       sum = rn::Add(terms[x], terms[nx + y]);
    if (ThreeD)
      sum = rn::Add(sum, terms[nx + ny + z]);
    const int64_t i = row * nx + x;
    B[i]            = rn::Add(g, rn::Mul(k, rn::Mul(2.0f, rn::Sqrt(sum))));
    if (G)
      G[i] = g;
  }
}

/** Cell c (raster order) gets label c + 1 at its centre pixel. */
template <typename TLabel>
__global__ void
CentreSeedKernel(Axis ax, Axis ay, Axis az, TLabel * seeds)
{
  const uint64_t cx = ax.Cells(), cy = ay.Cells(), cells = cx * cy * az.Cells();
  for (uint64_t c = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; c < cells; c += uint64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = int64_t(c % cx), j = int64_t(c / cx % cy), l = int64_t(c / (cx * cy));
    seeds[(uint64_t(az.Middle(l)) * ay.n + ay.Middle(j)) * ax.n + ax.Middle(i)] = static_cast<TLabel>(c + 1);
  }
}

/** A warp a cell: the seed goes to the cell's pixel of smallest gradient, the first in raster order among equals
 * (the smallest (gradient bits, index) pair; gradients are not negative, so their bits order them). */
template <typename TLabel>
__global__ void
MinimumSeedKernel(Axis ax, Axis ay, Axis az, const float * G, TLabel * seeds)
{
  const uint64_t cx = ax.Cells(), cy = ay.Cells(), cells = cx * cy * az.Cells();
  const unsigned lane  = threadIdx.x & 31;
  const uint64_t warps = uint64_t(gridDim.x) * blockDim.x / 32;
  for (uint64_t c = (blockIdx.x * uint64_t(blockDim.x) + threadIdx.x) / 32; c < cells; c += warps)
  {
    const int64_t      i = int64_t(c % cx), j = int64_t(c / cx % cy), l = int64_t(c / (cx * cy));
    const int64_t      x0 = i * ax.s, y0 = j * ay.s, z0 = l * az.s;
    const int64_t      wx = min(ax.n, x0 + ax.s) - x0, wy = min(ay.n, y0 + ay.s) - y0, wz = min(az.n, z0 + az.s) - z0;
    const int64_t      count = wx * wy * wz;
    unsigned long long best  = ~0ull; // (gradient bits << 32 | position in the cell), raster order inside the cell
    for (int64_t t = lane; t < count; t += 32)
    {
      const int64_t x = x0 + t % wx, y = y0 + t / wx % wy, z = z0 + t / (wx * wy);
      const float   g = G[(uint64_t(z) * ay.n + y) * ax.n + x];
      best = min(best, (static_cast<unsigned long long>(__float_as_uint(g)) << 32) | static_cast<uint32_t>(t));
    }
    for (int o = 16; o > 0; o >>= 1)
      best = min(best, __shfl_xor_sync(0xffffffffu, best, o));
    if (lane == 0)
    {
      const int64_t t = int64_t(best & 0xffffffffu);
      const int64_t x = x0 + t % wx, y = y0 + t / wx % wy, z = z0 + t / (wx * wy);
      seeds[(uint64_t(z) * ay.n + y) * ax.n + x] = static_cast<TLabel>(c + 1);
    }
  }
}

} // namespace wp

template <typename TPixel, typename TLabel>
WaterpixelResult
WaterpixelsCUDA(const TPixel *               image,
                const Grid &                 grid,
                const WaterpixelParameters & parameters,
                TLabel *                     labels,
                float *                      border,
                const ExecutionContext &     context,
                RunInfo *                    info)
{
  const uint64_t n = ift::CheckedVoxelCount(grid);
  wp::Axis       axes[3];
  wp::CheckAxes(grid, parameters, axes);
  const uint64_t cells = uint64_t(axes[0].Cells()) * axes[1].Cells() * axes[2].Cells();
  if (cells > std::numeric_limits<TLabel>::max())
    throw std::invalid_argument("chs: " + std::to_string(cells) + " waterpixels do not fit the label type (at most " +
                                std::to_string(uint64_t(std::numeric_limits<TLabel>::max())) + ")");
  // A cell more than 2^32 pixels long would overflow the minimum search's position in the cell.
  if (parameters.gradientMinimumSeeds && uint64_t(axes[0].s) * axes[1].s * axes[2].s >= (uint64_t(1) << 32))
    throw std::invalid_argument("chs: waterpixel cells of 2^32 pixels or more");
  ForestingTransformParameters transform; // the Image Foresting Transform that ends the run
  transform.fullyConnected = parameters.fullyConnected;
  transform.arcWeight      = ArcWeightFunction::Target;
  transform.forceWideIndex = parameters.forceWideIndex;
  detail::DeviceScope   scope(context.device);
  const auto            stream = static_cast<cudaStream_t>(context.stream);
  detail::MemoryTracker tracker;
  {
    // Three phases: the image with the border map B (and the gradient G for minimum seeds); B, G and the seeds once
    // the image is freed; B and the seeds with the Image Foresting Transform's arrays once G is freed.
    const uint64_t g     = parameters.gradientMinimumSeeds ? n * sizeof(float) : 0;
    const uint64_t b     = n * sizeof(float) + (grid.size[0] + grid.size[1] + grid.size[2]) * sizeof(float) + 64;
    const uint64_t seeds = n * sizeof(TLabel);
    const uint64_t index = ift::WideIndex(grid, transform) ? 8 : 4;
    tracker.what         = detail::DescribeRun("waterpixels", grid);
    detail::ReserveDeviceMemory(
      tracker,
      b + std::max(
            { n * sizeof(TPixel) + g, g + seeds, seeds + ift::TransformBytes(grid, sizeof(TLabel), 0, false, index) }),
      context.device);
  }
  auto dImage = std::make_unique<detail::DeviceBuffer<TPixel>>(n, stream, &tracker);
  detail::CopyToDevice(dImage->get(), image, n * sizeof(TPixel), stream, context);
  if (context.progress)
    context.progress(0.1f);

  detail::EventTimer timer(stream);
  timer.Start();
  const unsigned                           blocks = detail::GridStrideBlocks(n, 256, context.device);
  detail::DeviceBuffer<unsigned long long> dNaN(1, stream, &tracker);
  detail::DeviceBuffer<int>                dRange(2, stream, &tracker);
  const int                range0[2] = { std::numeric_limits<int>::max(), std::numeric_limits<int>::min() };
  const unsigned long long none      = n;
  CHS_CUDA_CHECK(cudaMemcpyAsync(dRange.get(), range0, sizeof(range0), cudaMemcpyHostToDevice, stream));
  CHS_CUDA_CHECK(cudaMemcpyAsync(dNaN.get(), &none, sizeof(none), cudaMemcpyHostToDevice, stream));
  wp::RangeKernel<<<blocks, 256, 0, stream>>>(dImage->get(), n, dRange.get(), dNaN.get());
  CHS_CUDA_CHECK_LAUNCH("RangeKernel");
  int                range[2];
  unsigned long long firstNaN = 0;
  CHS_CUDA_CHECK(cudaMemcpyAsync(range, dRange.get(), sizeof(range), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaMemcpyAsync(&firstNaN, dNaN.get(), sizeof(firstNaN), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (firstNaN < n)
  {
    TPixel value{}; // read from the device copy: the caller's array may be device memory
    CHS_CUDA_CHECK(cudaMemcpy(&value, dImage->get() + firstNaN, sizeof(TPixel), cudaMemcpyDeviceToHost));
    const float v = static_cast<float>(value);
    throw std::invalid_argument(wp::NonFiniteInputMessage(firstNaN, v != v));
  }
  const float k = parameters.compactness < 0
                    ? wp::AutomaticCompactness(wp::FromOrderedInt(range[0]), wp::FromOrderedInt(range[1]))
                    : parameters.compactness;

  detail::DeviceBuffer<float>                  dB(n, stream, &tracker);
  std::unique_ptr<detail::DeviceBuffer<float>> dG;
  if (parameters.gradientMinimumSeeds)
    dG = std::make_unique<detail::DeviceBuffer<float>>(n, stream, &tracker);
  float * G = dG ? dG->get() : nullptr;
  // The distance terms of every x, y and z (Axis::Term), computed here with the same float operations as the CPU.
  std::vector<float> terms(grid.size[0] + grid.size[1] + grid.size[2]);
  for (uint64_t d = 0, o = 0; d < 3; o += grid.size[d], ++d)
    for (uint64_t i = 0; i < grid.size[d]; ++i)
      terms[o + i] = axes[d].Term(int64_t(i));
  detail::DeviceBuffer<float> dTerms(terms.size(), stream, &tracker);
  CHS_CUDA_CHECK(
    cudaMemcpyAsync(dTerms.get(), terms.data(), terms.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
  const int  nx = int(grid.size[0]), ny = int(grid.size[1]), nz = int(grid.size[2]);
  const dim3 borderGrid((nx + 255) / 256, unsigned(std::min<int64_t>(int64_t(ny) * nz, 65535)));
  if (grid.dimension == 3)
    wp::BorderKernel<TPixel, true>
      <<<borderGrid, 256, 0, stream>>>(dImage->get(), nx, ny, nz, dTerms.get(), k, dB.get(), G);
  else
    wp::BorderKernel<TPixel, false>
      <<<borderGrid, 256, 0, stream>>>(dImage->get(), nx, ny, nz, dTerms.get(), k, dB.get(), G);
  CHS_CUDA_CHECK_LAUNCH("BorderKernel");
  dImage.reset(); // stream-ordered free: the input is not read after the border kernel
  detail::DeviceBuffer<TLabel> dSeeds(n, stream, &tracker);
  CHS_CUDA_CHECK(cudaMemsetAsync(dSeeds.get(), 0, n * sizeof(TLabel), stream));
  const unsigned cellBlocks =
    detail::GridStrideBlocks(parameters.gradientMinimumSeeds ? cells * 32 : cells, 256, context.device);
  if (parameters.gradientMinimumSeeds)
    wp::MinimumSeedKernel<<<cellBlocks, 256, 0, stream>>>(axes[0], axes[1], axes[2], G, dSeeds.get());
  else
    wp::CentreSeedKernel<<<cellBlocks, 256, 0, stream>>>(axes[0], axes[1], axes[2], dSeeds.get());
  CHS_CUDA_CHECK_LAUNCH("SeedKernel");
  dG.reset();

  const ForestingTransformResult r = ift::TransformOnDevice<float, TLabel>(
    dB.get(), dSeeds.get(), grid, transform, labels, nullptr, nullptr, context, tracker, timer);
  if (border)
    detail::CopyToHost(border, dB.get(), n * sizeof(float), stream, context);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
  WaterpixelResult result;
  result.superpixels = cells;
  result.compactness = k;
  result.rounds      = r.rounds;
  return result;
}

#define CHS_INSTANTIATE_WP_CUDA(TPixel, TLabel)                                                                        \
  template CudaHierarchicalSegmentation_EXPORT WaterpixelResult WaterpixelsCUDA<TPixel, TLabel>(                       \
    const TPixel *,                                                                                                    \
    const Grid &,                                                                                                      \
    const WaterpixelParameters &,                                                                                      \
    TLabel *,                                                                                                          \
    float *,                                                                                                           \
    const ExecutionContext &,                                                                                          \
    RunInfo *)
#define CHS_INSTANTIATE_WP_CUDA_LABELS(TPixel)                                                                         \
  CHS_INSTANTIATE_WP_CUDA(TPixel, uint8_t);                                                                            \
  CHS_INSTANTIATE_WP_CUDA(TPixel, uint16_t);                                                                           \
  CHS_INSTANTIATE_WP_CUDA(TPixel, uint32_t);                                                                           \
  CHS_INSTANTIATE_WP_CUDA(TPixel, uint64_t)

CHS_INSTANTIATE_WP_CUDA_LABELS(uint8_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(int8_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(uint16_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(int16_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(uint32_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(int32_t);
CHS_INSTANTIATE_WP_CUDA_LABELS(float);
CHS_INSTANTIATE_WP_CUDA_LABELS(double);

} // namespace chs
