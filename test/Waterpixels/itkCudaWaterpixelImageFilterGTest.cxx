// Tests of itk::CudaWaterpixelImageFilter and of the chs waterpixel backends it calls.
// Oracles: the border image recomputed in double from the paper's formulas; with a large compactness on a flat
// image, the Voronoi cells of the grid seeds; seeds known by construction (a flat image's gradient minimum is the
// first pixel of each cell).
#include "itkCudaWaterpixelImageFilter.h"
#include "Waterpixels/chsWaterpixelsBackends.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

namespace
{
using namespace chs_test;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

template <typename TPixel, unsigned D>
struct Waterpixels
{
  std::vector<uint32_t> labels;
  std::vector<float>    border;
  chs::WaterpixelResult result;
};

template <typename TPixel, unsigned D>
Waterpixels<TPixel, D>
RunAPI(const itk::Image<TPixel, D> * image, const chs::WaterpixelParameters & p, Backend backend)
{
  chs::Grid grid;
  grid.dimension = D;
  for (unsigned d = 0; d < D; ++d)
    grid.size[d] = image->GetLargestPossibleRegion().GetSize(d);
  Waterpixels<TPixel, D> w;
  w.labels.resize(grid.NumberOfVoxels());
  w.border.resize(grid.NumberOfVoxels());
  if (backend == Backend::CUDA)
    w.result = chs::WaterpixelsCUDA(
      image->GetBufferPointer(), grid, p, w.labels.data(), w.border.data(), chs::ExecutionContext{});
  else
    w.result = chs::WaterpixelsCPU(image->GetBufferPointer(), grid, p, w.labels.data(), w.border.data());
  return w;
}

chs::WaterpixelParameters
Parameters(std::initializer_list<uint64_t> step, float k, bool minimum = false, bool full = false)
{
  chs::WaterpixelParameters p;
  std::copy(step.begin(), step.end(), p.gridStep);
  p.compactness          = k;
  p.gradientMinimumSeeds = minimum;
  p.fullyConnected       = full;
  return p;
}

template <typename TPixel, unsigned D>
typename itk::Image<TPixel, D>::Pointer
Noise(const itk::Size<D> & size, double scale, int smooth, unsigned seed)
{
  const size_t                     n = NumberOfPixels(size);
  std::vector<double>              v(n);
  std::mt19937                     rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  for (auto & x : v)
    x = g(rng);
  size_t stride = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    for (int pass = 0; pass < smooth; ++pass)
    {
      std::vector<double> out(n);
      for (size_t i = 0; i < n; ++i)
      {
        const size_t c = i / stride % size[d];
        double       s = v[i];
        int          k = 1;
        if (c > 0)
          s += v[i - stride], ++k;
        if (c + 1 < size[d])
          s += v[i + stride], ++k;
        out[i] = s / k;
      }
      v.swap(out);
    }
    stride *= size[d];
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  auto image          = MakeImage<itk::Image<TPixel, D>>(size);
  for (size_t i = 0; i < n; ++i)
    image->GetBufferPointer()[i] = static_cast<TPixel>((v[i] - *lo) / (*hi - *lo) * scale);
  return image;
}

/** The grid seed of cell i of an axis of n pixels in cells of s: the middle of its first and last pixel, rounded
 * down. */
double
Seed(int64_t i, int64_t n, int64_t s)
{
  return double((i * s + std::min(n, (i + 1) * s) - 1) / 2);
}

TEST(CudaWaterpixelImageFilter, BorderImageMatchesTheFormulasInDouble)
{
  using I          = itk::Image<float, 2>;
  const auto size  = Size<I>({ 37, 23 });
  auto       image = Noise<float, 2>(size, 100.0, 2, 5);
  const auto w     = RunAPI<float, 2>(image, Parameters({ 8, 6 }, 3.5f), Backend::CPU);
  const auto at    = [&](int64_t x, int64_t y)
  {
    x = std::clamp<int64_t>(x, 0, 36);
    y = std::clamp<int64_t>(y, 0, 22);
    return double(image->GetBufferPointer()[y * 37 + x]);
  };
  for (int64_t y = 0; y < 23; ++y)
    for (int64_t x = 0; x < 37; ++x)
    {
      double gx = 0, gy = 0;
      for (int k = -1; k <= 1; ++k)
      {
        const double wk = k == 0 ? 2 : 1;
        gx += wk * (at(x + 1, y + k) - at(x - 1, y + k));
        gy += wk * (at(x + k, y + 1) - at(x + k, y - 1));
      }
      const double grad    = std::hypot(gx / 8, gy / 8);
      double       nearest = std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i * 8 < 37; ++i)
        for (int64_t j = 0; j * 6 < 23; ++j)
        {
          const double dx = (x - Seed(i, 37, 8)) / 8, dy = (y - Seed(j, 23, 6)) / 6;
          nearest = std::min(nearest, std::sqrt(dx * dx + dy * dy));
        }
      const double expected = grad + 3.5 * 2 * nearest;
      ASSERT_NEAR(w.border[y * 37 + x], expected, 1e-4 * (1 + expected)) << "pixel (" << x << ", " << y << ")";
    }
}

TEST(CudaWaterpixelImageFilter, LargeCompactnessOnAFlatImageGivesTheVoronoiCells)
{
  using I         = itk::Image<uint8_t, 2>;
  const auto size = Size<I>({ 95, 61 });
  auto       flat = MakeImage<I>(size, 17);
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    for (bool full : { false, true })
    {
      const auto    w     = RunAPI<uint8_t, 2>(flat, Parameters({ 12, 10 }, 1000.0f, false, full), b);
      const int64_t cx    = (95 + 11) / 12;
      size_t        agree = 0;
      for (int64_t y = 0; y < 61; ++y)
        for (int64_t x = 0; x < 95; ++x)
        {
          // The Voronoi cell of the grid seeds, in the units of each axis' step.
          double   best  = std::numeric_limits<double>::infinity();
          uint32_t label = 0;
          for (int64_t j = 0; j * 10 < 61; ++j)
            for (int64_t i = 0; i < cx; ++i)
            {
              const double dx = (x - Seed(i, 95, 12)) / 12, dy = (y - Seed(j, 61, 10)) / 10;
              const double d = dx * dx + dy * dy;
              if (d < best)
                best = d, label = uint32_t(j * cx + i + 1);
            }
          const uint32_t got = w.labels[y * 95 + x];
          agree += got == label;
          // Pixels near their seed (within a quarter step) are far from every other seed: no tie can reach them.
          const int64_t i = x / 12, j = y / 10;
          if (std::abs(x - Seed(i, 95, 12)) <= 12 / 4.0 && std::abs(y - Seed(j, 61, 10)) <= 10 / 4.0)
            ASSERT_EQ(got, label) << "pixel (" << x << ", " << y << ")";
        }
      EXPECT_GT(agree, size_t(0.9 * 95 * 61)) << "full " << full;
    }
  }
}

TEST(CudaWaterpixelImageFilter, LabelsAreTheCellsConsecutiveFromOne)
{
  using I    = itk::Image<int16_t, 3>;
  auto image = Noise<int16_t, 3>(Size<I>({ 30, 21, 17 }), 3000.0, 2, 8);
  for (bool minimum : { false, true })
  {
    const auto w = RunAPI<int16_t, 3>(image, Parameters({ 7, 5, 6 }, -1.0f, minimum), Backend::CPU);
    EXPECT_EQ(w.result.superpixels, uint64_t(5 * 5 * 3));
    const std::set<uint32_t> labels(w.labels.begin(), w.labels.end());
    EXPECT_EQ(labels.size(), 75u);
    EXPECT_EQ(*labels.begin(), 1u);
    EXPECT_EQ(*labels.rbegin(), 75u);
  }
}

TEST(CudaWaterpixelImageFilter, GradientMinimumSeedsOfAFlatImageAreTheCellsFirstPixels)
{
  // A flat image has no gradient, so every cell's minimum is its first pixel, which keeps the cell's label.
  using I   = itk::Image<float, 2>;
  auto flat = MakeImage<I>(Size<I>({ 50, 33 }), 2.0f);
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto w = RunAPI<float, 2>(flat, Parameters({ 9, 8 }, 5.0f, true), b);
    for (int64_t j = 0; j * 8 < 33; ++j)
      for (int64_t i = 0; i * 9 < 50; ++i)
        ASSERT_EQ(w.labels[j * 8 * 50 + i * 9], uint32_t(j * 6 + i + 1)) << "cell " << i << ", " << j;
  }
}

TEST(CudaWaterpixelImageFilter, AutomaticCompactnessIsFourPercentOfTheRange)
{
  using I     = itk::Image<uint8_t, 2>;
  auto image  = Noise<uint8_t, 2>(Size<I>({ 40, 40 }), 255.0, 1, 3);
  auto filter = itk::CudaWaterpixelImageFilter<I, itk::Image<unsigned int, 2>>::New();
  filter->SetInput(image);
  filter->SetBackend(Backend::CPU);
  filter->SetGridStep(8);
  filter->Update();
  const auto [lo, hi] = std::minmax_element(image->GetBufferPointer(), image->GetBufferPointer() + 1600);
  EXPECT_FLOAT_EQ(filter->GetCompactnessUsed(), 0.04f * float(*hi - *lo));
  EXPECT_EQ(filter->GetNumberOfSuperpixels(), 25u);
}

template <typename TPixel, unsigned D>
void
ExpectBackendsAgree(const itk::Image<TPixel, D> * image, const chs::WaterpixelParameters & p, const char * what)
{
  SCOPED_TRACE(what);
  const auto cpu = RunAPI<TPixel, D>(image, p, Backend::CPU);
  for (int run = 0; run < 2; ++run)
  {
    const auto gpu = RunAPI<TPixel, D>(image, p, Backend::CUDA);
    ASSERT_EQ(gpu.result.superpixels, cpu.result.superpixels);
    ASSERT_EQ(gpu.result.compactness, cpu.result.compactness);
    ASSERT_EQ(0, std::memcmp(gpu.border.data(), cpu.border.data(), cpu.border.size() * sizeof(float)))
      << "border images differ, run " << run;
    ASSERT_EQ(gpu.labels, cpu.labels) << "run " << run;
  }
}

TEST(CudaWaterpixelImageFilter, GPUMatchesCPU2D)
{
  CHS_REQUIRE_GPU();
  using I8        = itk::Image<uint8_t, 2>;
  const auto size = Size<I8>({ 333, 211 });
  for (bool full : { false, true })
    for (bool minimum : { false, true })
    {
      const auto p = [&](std::initializer_list<uint64_t> s, float k) { return Parameters(s, k, minimum, full); };
      ExpectBackendsAgree<uint8_t, 2>(Noise<uint8_t, 2>(size, 255.0, 3, 1), p({ 10, 10 }, -1.0f), "uint8, step 10");
      ExpectBackendsAgree<uint8_t, 2>(Noise<uint8_t, 2>(size, 255.0, 1, 2), p({ 5, 7 }, 2.0f), "uint8, step 5 x 7");
      ExpectBackendsAgree<float, 2>(Noise<float, 2>(size, 1.0, 3, 3), p({ 30, 30 }, 0.01f), "float, step 30");
      ExpectBackendsAgree<double, 2>(Noise<double, 2>(size, 4000.0, 2, 4), p({ 20, 13 }, -1.0f), "double");
      ExpectBackendsAgree<uint16_t, 2>(Noise<uint16_t, 2>(size, 60000.0, 4, 5), p({ 16, 16 }, 1000.0f), "uint16");
      ExpectBackendsAgree<uint8_t, 2>(MakeImage<I8>(size, 9), p({ 11, 11 }, 3.0f), "flat");
    }
}

TEST(CudaWaterpixelImageFilter, GPUMatchesCPU3D)
{
  CHS_REQUIRE_GPU();
  using I         = itk::Image<int16_t, 3>;
  const auto size = Size<I>({ 61, 47, 35 });
  for (bool full : { false, true })
    for (bool minimum : { false, true })
    {
      ExpectBackendsAgree<int16_t, 3>(
        Noise<int16_t, 3>(size, 2000.0, 2, 6), Parameters({ 10, 10, 10 }, -1.0f, minimum, full), "int16, step 10");
      ExpectBackendsAgree<float, 3>(
        Noise<float, 3>(size, 1.0, 1, 7), Parameters({ 6, 9, 4 }, 0.05f, minimum, full), "float, step 6 x 9 x 4");
    }
}

// The transform's 64-bit path (forced on small images) gives the 32-bit path's waterpixels on both backends: 2D and
// 3D, both connectivities, grid-centre and gradient-minimum seeds.
TEST(CudaWaterpixelImageFilter, GPUWideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  using I8         = itk::Image<uint8_t, 2>;
  using I16        = itk::Image<int16_t, 3>;
  const auto image = Noise<uint8_t, 2>(Size<I8>({ 333, 211 }), 255.0, 3, 11);
  const auto cube  = Noise<int16_t, 3>(Size<I16>({ 61, 47, 35 }), 2000.0, 2, 12);
  for (bool full : { false, true })
    for (bool minimum : { false, true })
    {
      auto p2 = Parameters({ 10, 10 }, -1.0f, minimum, full), p3 = Parameters({ 10, 10, 10 }, -1.0f, minimum, full);
      const auto expected2 = RunAPI<uint8_t, 2>(image, p2, Backend::CPU);
      const auto expected3 = RunAPI<int16_t, 3>(cube, p3, Backend::CPU);
      p2.forceWideIndex    = true;
      p3.forceWideIndex    = true;
      for (Backend backend : { Backend::CPU, Backend::CUDA })
      {
        EXPECT_EQ((RunAPI<uint8_t, 2>(image, p2, backend).labels), expected2.labels)
          << "2D full " << full << " minimum " << minimum << " CUDA " << (backend == Backend::CUDA);
        EXPECT_EQ((RunAPI<int16_t, 3>(cube, p3, backend).labels), expected3.labels)
          << "3D full " << full << " minimum " << minimum << " CUDA " << (backend == Backend::CUDA);
      }
    }
}

TEST(CudaWaterpixelImageFilter, BadInputThrowsAndTheFilterRunsAgain)
{
  using I = itk::Image<float, 2>;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    auto image  = Noise<float, 2>(Size<I>({ 64, 48 }), 10.0, 1, 9);
    auto filter = itk::CudaWaterpixelImageFilter<I, itk::Image<unsigned char, 2>>::New();
    filter->SetInput(image);
    filter->SetBackend(b);

    filter->SetGridStep(0);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "grid step 0";
    filter->SetGridStep(2); // 32 x 24 cells: more than an 8-bit label holds
    try
    {
      filter->Update();
      ADD_FAILURE() << "too many cells for the label type: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("768 waterpixels"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";
    filter->SetGridStep(8);
    image->GetBufferPointer()[100] = std::numeric_limits<float>::quiet_NaN();
    image->Modified();
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "NaN input";
    image->GetBufferPointer()[100] = 1.0f;
    image->Modified();
    ASSERT_NO_THROW(filter->Update());
    EXPECT_EQ(filter->GetNumberOfSuperpixels(), 48u);
    EXPECT_EQ(filter->GetLastBackend(), b);
  }
}

} // namespace

TEST(CudaWaterpixelImageFilter, InfiniteInputIsRefusedOnBothBackends)
{
  // The gradient is computed in float: an infinity, or a double beyond float's range, would make it NaN.
  using D2 = itk::Image<double, 2>;
  using L2 = itk::Image<uint32_t, 2>;
  std::vector<Backend> backends{ Backend::CPU };
  if (HasCudaDevice())
    backends.push_back(Backend::CUDA);
  for (Backend b : backends)
    for (double bad : { std::numeric_limits<double>::infinity(), 1e300 })
    {
      auto image                    = MakeImage<D2>(Size<D2>({ 16, 12 }), 1.0);
      image->GetBufferPointer()[37] = bad;
      auto filter                   = itk::CudaWaterpixelImageFilter<D2, L2>::New();
      filter->SetInput(image);
      filter->SetGridStep(4);
      filter->SetBackend(b);
      try
      {
        filter->Update();
        ADD_FAILURE() << "no exception for an infinite input";
      }
      catch (const itk::ExceptionObject & e)
      {
        EXPECT_NE(std::string(e.GetDescription()).find("infinite value (as float) at pixel index 37"),
                  std::string::npos)
          << e.GetDescription();
      }
      EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";
    }
}

/** A volume above 2^32 voxels (2048 x 2048 x 1025, 8-bit; about 120 GB of device memory on the 64-bit path), when
 * CHS_LARGE_TESTS is set. Its answer follows from the definition (include/chs/Waterpixels.h,
 * include/chs/ForestingTransform.h): grid steps 2048 x 2048 x 205 make five cells, slabs of 205 planes with their seeds
 * at the planes 102 + 205 k; the input is constant in each slab (50 k), so the gradient is 0 except on the two planes
 * on either side of each step (z = 205 k - 1 and 205 k), where it is 25; with compactness 1 the distance term stays
 * below 1.8. A voxel inside a slab is reached from its own seed by a path that never rises above its own weight, and
 * from any other seed only over a wall, so it takes its slab's label. A wall voxel's key is its own weight with 0
 * arcs, offered by its neighbour inside its own slab (lower cost) and not by the wall voxel facing it across the step
 * (equal cost): its predecessor, the offer of smallest key, is that neighbour, and it takes its slab's label too.
 * Labels are the slabs' numbers, 1 to 5. */
TEST(CudaWaterpixelImageFilter, GPUVolumeAbove2To32Voxels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  chs::Grid grid;
  grid.dimension   = 3;
  grid.size[0]     = 2048;
  grid.size[1]     = 2048;
  grid.size[2]     = 1025;
  const uint64_t n = grid.NumberOfVoxels(), plane = grid.size[0] * grid.size[1], slab = 205;
  ASSERT_GT(n, uint64_t(1) << 32);
  std::vector<uint8_t> image(n), labels(n, 0);
  ParallelRange(n,
                [&](uint64_t a, uint64_t b)
                {
                  for (uint64_t i = a; i < b; ++i)
                    image[i] = uint8_t(50 * (i / plane / slab));
                });
  chs::WaterpixelParameters p;
  p.gridStep[0] = 2048;
  p.gridStep[1] = 2048;
  p.gridStep[2] = slab;
  p.compactness = 1.0f;
  chs::RunInfo          info;
  chs::WaterpixelResult r;
  try
  {
    r = chs::WaterpixelsCUDA(image.data(), grid, p, labels.data(), nullptr, chs::ExecutionContext{}, &info);
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << r.superpixels << " superpixels, " << r.rounds << " rounds, " << info.kernelMilliseconds
            << " ms of kernels; peak device memory " << info.peakDeviceBytes << " bytes, reserved "
            << info.reservedDeviceBytes << std::endl;
  EXPECT_EQ(r.superpixels, 5u);
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  std::atomic<uint64_t> wrong{ 0 }, firstWrong{ n };
  ParallelRange(n,
                [&](uint64_t a, uint64_t b)
                {
                  uint64_t count = 0;
                  for (uint64_t i = a; i < b; ++i)
                    if (labels[i] != 1 + i / plane / slab && count++ == 0)
                    {
                      uint64_t f = firstWrong.load();
                      while (i < f && !firstWrong.compare_exchange_weak(f, i))
                      {
                      }
                    }
                  wrong += count;
                });
  EXPECT_EQ(wrong.load(), 0u) << "first at voxel " << firstWrong.load() << " (plane " << firstWrong.load() / plane
                              << ")";
}
