// Inputs for the module's tests, generated in code (no files, no network).
#ifndef chsTestImages_h
#define chsTestImages_h

#include "itkImage.h"
#include "itkImageRegionIterator.h"
#include "itkImageRegionConstIterator.h"
#include "chs/Execution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace chs_test
{

/** Runs f(begin, end) over [0, count) on all hardware threads (the large tests' checks). */
template <typename F>
void
ParallelRange(uint64_t count, F && f)
{
  const uint64_t           threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (uint64_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { f(count * t / threads, count * (t + 1) / threads); });
  for (auto & th : pool)
    th.join();
}

/** chs::testing::SetVoxelOrder for a scope (1: raster order, 2: cubes of 64^3 voxels for every image); the choice
 * by size again at its end. */
struct VoxelOrderScope
{
  explicit VoxelOrderScope(int order) { chs::testing::SetVoxelOrder(order); }
  ~VoxelOrderScope() { chs::testing::SetVoxelOrder(0); }
  VoxelOrderScope(const VoxelOrderScope &) = delete;
  VoxelOrderScope &
  operator=(const VoxelOrderScope &) = delete;
};

inline bool
HasCudaDevice()
{
  return chs::CudaDeviceCount() > 0;
}

#define CHS_REQUIRE_GPU()                                                                                              \
  if (!chs_test::HasCudaDevice())                                                                                      \
  GTEST_SKIP() << "no CUDA device"

/** The message of the std::invalid_argument that `run` throws (a size check's refusal, say). */
template <typename F>
std::string
InvalidArgumentMessage(F && run)
{
  try
  {
    run();
  }
  catch (const std::invalid_argument & e)
  {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

template <unsigned D>
size_t
NumberOfPixels(const itk::Size<D> & size)
{
  size_t n = 1;
  for (unsigned d = 0; d < D; ++d)
    n *= size[d];
  return n;
}

template <typename TImage>
typename TImage::Pointer
MakeImage(const typename TImage::SizeType & size, typename TImage::PixelType value = 0)
{
  auto image = TImage::New();
  image->SetRegions(size);
  image->Allocate();
  image->FillBuffer(value);
  return image;
}

template <typename TImage>
typename TImage::SizeType
Size(std::initializer_list<itk::SizeValueType> s)
{
  typename TImage::SizeType size;
  auto                      it = s.begin();
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    size[d] = *it++;
  return size;
}

/** Each pixel is 1..levels (0 with probability 1 - density). */
template <typename TImage>
typename TImage::Pointer
RandomImage(const typename TImage::SizeType & size, double density, unsigned seed, int levels = 1)
{
  auto                                   image = MakeImage<TImage>(size);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int>     level(1, levels);
  for (itk::ImageRegionIterator<TImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    it.Set(u(rng) < density ? static_cast<typename TImage::PixelType>(level(rng)) : 0);
  return image;
}

/** Smoothed noise thresholded at a quantile: blobs of a few pixels' radius, like the benchmark's inputs. */
template <typename TImage>
typename TImage::Pointer
BlobImage(const typename TImage::SizeType & size, int radius, double fraction, unsigned seed)
{
  constexpr unsigned              D = TImage::ImageDimension;
  const size_t                    n = NumberOfPixels(size);
  std::vector<float>              a(n), b(n);
  std::mt19937                    rng(seed);
  std::normal_distribution<float> g;
  for (auto & v : a)
    v = g(rng);
  size_t stride = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    const size_t len = size[d];
    for (size_t i = 0; i < n; ++i)
    {
      const size_t c = (i / stride) % len;
      float        s = 0;
      for (int k = -radius; k <= radius; ++k)
      {
        const int64_t cc = int64_t(c) + k;
        if (cc >= 0 && cc < int64_t(len))
          s += a[i + (cc - int64_t(c)) * int64_t(stride)];
      }
      b[i] = s;
    }
    std::swap(a, b);
    stride *= len;
  }
  std::vector<float> sorted(a);
  std::nth_element(sorted.begin(), sorted.begin() + size_t((1.0 - fraction) * (n - 1)), sorted.end());
  const float threshold = sorted[size_t((1.0 - fraction) * (n - 1))];
  auto        image     = MakeImage<TImage>(size);
  auto *      p         = image->GetBufferPointer();
  for (size_t i = 0; i < n; ++i)
    p[i] = a[i] > threshold ? 1 : 0;
  return image;
}

template <typename TImage>
typename TImage::Pointer
Checkerboard(const typename TImage::SizeType & size)
{
  auto image = MakeImage<TImage>(size);
  for (itk::ImageRegionIterator<TImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    itk::IndexValueType s = 0;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
      s += it.GetIndex()[d];
    it.Set(s % 2 == 0 ? 1 : 0);
  }
  return image;
}

/** A one-pixel-thick square spiral in every slice: one long chain across many tiles. */
template <typename TImage>
typename TImage::Pointer
Spiral(const typename TImage::SizeType & size)
{
  auto          image = MakeImage<TImage>(size);
  const int64_t nx = size[0], ny = size[1];
  const int64_t nz = TImage::ImageDimension == 3 ? int64_t(size[2]) : 1;
  auto *        p  = image->GetBufferPointer();
  for (int64_t z = 0; z < nz; ++z)
  {
    int64_t x0 = 0, y0 = 0, x1 = nx - 1, y1 = ny - 1;
    while (x0 <= x1 && y0 <= y1)
    {
      for (int64_t x = x0; x <= x1; ++x)
        p[(z * ny + y0) * nx + x] = 1;
      for (int64_t y = y0; y <= y1; ++y)
        p[(z * ny + y) * nx + x1] = 1;
      for (int64_t x = x0; x <= x1; ++x)
        p[(z * ny + y1) * nx + x] = 1;
      for (int64_t y = y0 + 2; y <= y1; ++y)
        p[(z * ny + y) * nx + x0] = 1;
      if (x0 + 1 <= x1)
        p[(z * ny + y0 + 2) * nx + x0 + 1] = 1;
      x0 += 2;
      y0 += 2;
      x1 -= 2;
      y1 -= 2;
    }
  }
  return image;
}

/** Brute-force labeling by breadth-first flood fill, numbering objects by their first voxel in raster order. */
template <typename TImage, typename TLabelImage>
typename TLabelImage::Pointer
FloodFillLabels(const TImage *               image,
                bool                         fullyConnected,
                bool                         flatZones,
                const std::vector<uint8_t> * mask,
                uint64_t &                   count)
{
  constexpr unsigned D    = TImage::ImageDimension;
  const auto         size = image->GetLargestPossibleRegion().GetSize();
  const int64_t      nx = size[0], ny = size[1], nz = D == 3 ? int64_t(size[2]) : 1;
  const auto *       p      = image->GetBufferPointer();
  auto               labels = MakeImage<TLabelImage>(size);
  auto *             l      = labels->GetBufferPointer();
  const size_t       n      = NumberOfPixels(size);
  auto               active = [&](size_t i) { return (!mask || (*mask)[i]) && (flatZones || p[i] != 0); };
  count                     = 0;
  std::vector<char> seen(n, 0);
  for (size_t s = 0; s < n; ++s)
  {
    if (seen[s] || !active(s))
      continue;
    ++count;
    std::deque<size_t> queue{ s };
    seen[s] = 1;
    while (!queue.empty())
    {
      const size_t i = queue.front();
      queue.pop_front();
      l[i]            = static_cast<typename TLabelImage::PixelType>(count);
      const int64_t x = i % nx, y = (i / nx) % ny, z = i / (nx * ny);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx)
          {
            const int k = (dx != 0) + (dy != 0) + (dz != 0);
            if (k == 0 || (!fullyConnected && k > 1))
              continue;
            const int64_t qx = x + dx, qy = y + dy, qz = z + dz;
            if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
              continue;
            const size_t q = (qz * ny + qy) * nx + qx;
            if (seen[q] || !active(q) || (flatZones && !(p[q] == p[i])))
              continue;
            seen[q] = 1;
            queue.push_back(q);
          }
    }
  }
  return labels;
}

template <typename TA, typename TB>
::testing::AssertionResult
SameVoxels(const TA * a, const TB * b)
{
  const size_t n = a->GetLargestPossibleRegion().GetNumberOfPixels();
  if (n != b->GetLargestPossibleRegion().GetNumberOfPixels())
    return ::testing::AssertionFailure() << "sizes differ";
  const auto * pa = a->GetBufferPointer();
  const auto * pb = b->GetBufferPointer();
  for (size_t i = 0; i < n; ++i)
    if (static_cast<int64_t>(pa[i]) != static_cast<int64_t>(pb[i]))
      return ::testing::AssertionFailure()
             << "first difference at voxel " << i << ": " << int64_t(pa[i]) << " vs " << int64_t(pb[i]);
  return ::testing::AssertionSuccess();
}

/** Smoothed noise scaled to 0 .. 1000 (continuous: floats without ties), or quantised to `levels` values (plateaux)
 * when non-zero: the watershed tests' relief. */
template <typename TImage>
typename TImage::Pointer
Relief(const typename TImage::SizeType & size, unsigned seed, int levels)
{
  auto                                   image = MakeImage<TImage>(size);
  const size_t                           n     = NumberOfPixels(size);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double>                    a(n), b(n);
  for (auto & v : a)
    v = u(rng);
  size_t stride = 1;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
  {
    for (int pass = 0; pass < 2; ++pass)
    {
      for (size_t p = 0; p < n; ++p)
      {
        const size_t c = p / stride % size[d];
        double       s = a[p], w = 1;
        if (c > 0)
          s += a[p - stride], ++w;
        if (c + 1 < size[d])
          s += a[p + stride], ++w;
        b[p] = s / w;
      }
      a.swap(b);
    }
    stride *= size[d];
  }
  const double lo = *std::min_element(a.begin(), a.end()), hi = *std::max_element(a.begin(), a.end());
  auto *       out = image->GetBufferPointer();
  for (size_t p = 0; p < n; ++p)
  {
    const double t = (a[p] - lo) / (hi - lo);
    out[p]         = levels ? static_cast<typename TImage::PixelType>(std::floor(t * (levels - 1) + 0.5))
                            : static_cast<typename TImage::PixelType>(t * 1000);
  }
  return image;
}

} // namespace chs_test

#endif
