// Tests of the watershed from markers, with a mask and with a Level (itk::CudaWatershedImageFilter's flooding mode,
// include/chs/Watershed.h MarkerWatershedCPU): labels against ITK's MorphologicalWatershedFromMarkersImageFilter and
// MorphologicalWatershedImageFilter with its Level (oracles independent of the module) on images without ties, basin
// counts against ITK's on images with plateaux, a rectangular mask against the flood of the cropped image, the CUDA
// backend against the CPU reference, bad input and re-running after a failure.
#include "itkCudaWatershedImageFilter.h"
#include "Watershed/chsWatershedBackends.h"
#include "Common/chsTestImages.h"

#include "itkMorphologicalWatershedFromMarkersImageFilter.h"
#include "itkMorphologicalWatershedImageFilter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>

namespace
{
using namespace chs_test;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

/** `count` markers: labels 1 .. count at random pixels, the first three a 3-pixel run along x. */
template <typename TLabels>
typename TLabels::Pointer
RandomMarkers(const typename TLabels::SizeType & size, unsigned count, unsigned seed)
{
  auto                                  markers = MakeImage<TLabels>(size);
  const size_t                          n       = NumberOfPixels(size);
  std::mt19937                          rng(seed);
  std::uniform_int_distribution<size_t> pick(0, n - 4);
  for (unsigned k = 1; k <= count; ++k)
  {
    const size_t p = pick(rng);
    for (size_t r = 0; r < (k == 1 ? 3u : 1u); ++r)
      markers->GetBufferPointer()[p + r] = static_cast<typename TLabels::PixelType>(k);
  }
  return markers;
}

template <typename TImage>
using LabelsOf = itk::Image<unsigned int, TImage::ImageDimension>;
template <typename TImage>
using MaskOf = itk::Image<unsigned char, TImage::ImageDimension>;

template <typename TImage>
std::vector<unsigned int>
Buffer(const TImage * image)
{
  return std::vector<unsigned int>(image->GetBufferPointer(),
                                   image->GetBufferPointer() + image->GetLargestPossibleRegion().GetNumberOfPixels());
}

/** The module's watershed by flooding; `count` gets GetObjectCount(). */
template <typename TImage>
std::vector<unsigned int>
Flood(const TImage *           image,
      const LabelsOf<TImage> * markers,
      const MaskOf<TImage> *   mask,
      double                   level,
      bool                     full,
      Backend                  backend,
      itk::SizeValueType *     count = nullptr)
{
  auto filter = itk::CudaWatershedImageFilter<TImage, LabelsOf<TImage>>::New();
  filter->SetInput(image);
  if (markers)
    filter->SetMarkerImage(markers);
  if (mask)
    filter->SetMaskImage(mask);
  filter->SetLevel(level);
  filter->SetFullyConnected(full);
  filter->SetBackend(backend);
  filter->Update();
  EXPECT_EQ(filter->GetLastBackend(), backend);
  if (count)
    *count = filter->GetObjectCount();
  return Buffer(filter->GetOutput());
}

template <typename TImage>
std::vector<unsigned int>
ItkFromMarkers(const TImage * image, const LabelsOf<TImage> * markers, bool full)
{
  auto filter = itk::MorphologicalWatershedFromMarkersImageFilter<TImage, LabelsOf<TImage>>::New();
  filter->SetInput(image);
  filter->SetMarkerImage(markers);
  filter->SetFullyConnected(full);
  filter->SetMarkWatershedLine(false);
  filter->Update();
  return Buffer(filter->GetOutput());
}

template <typename TImage>
std::vector<unsigned int>
ItkWithLevel(const TImage * image, double level, bool full)
{
  auto filter = itk::MorphologicalWatershedImageFilter<TImage, LabelsOf<TImage>>::New();
  filter->SetInput(image);
  filter->SetLevel(static_cast<typename TImage::PixelType>(level));
  filter->SetFullyConnected(full);
  filter->SetMarkWatershedLine(false);
  filter->Update();
  return Buffer(filter->GetOutput());
}

/** The pixels where two label images differ, as "count (first at index i: a vs b)". */
std::string
Differences(const std::vector<unsigned int> & a, const std::vector<unsigned int> & b)
{
  size_t count = 0, first = a.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i] && count++ == 0)
      first = i;
  if (count == 0 && a.size() == b.size())
    return "0";
  return std::to_string(count) + " (first at " + std::to_string(first) + ": " +
         (first < a.size() ? std::to_string(a[first]) + " vs " + std::to_string(b[first]) : "sizes differ") + ")";
}

size_t
Distinct(const std::vector<unsigned int> & labels)
{
  std::set<unsigned int> s(labels.begin(), labels.end());
  s.erase(0);
  return s.size();
}

TEST(CudaWatershedFromMarkers, EqualsITKFromMarkersWithoutTies)
{
  using Image2 = itk::Image<float, 2>;
  using Image3 = itk::Image<float, 3>;
  for (bool full : { false, true })
  {
    const auto i2    = Relief<Image2>(Size<Image2>({ 90, 70 }), 11, 0);
    const auto m2    = RandomMarkers<LabelsOf<Image2>>(Size<Image2>({ 90, 70 }), 25, 5);
    const auto i3    = Relief<Image3>(Size<Image3>({ 21, 18, 15 }), 12, 0);
    const auto m3    = RandomMarkers<LabelsOf<Image3>>(Size<Image3>({ 21, 18, 15 }), 30, 6);
    const auto ours2 = Flood(i2.GetPointer(), m2.GetPointer(), nullptr, 0, full, Backend::CPU);
    EXPECT_EQ(Differences(ours2, ItkFromMarkers(i2.GetPointer(), m2.GetPointer(), full)), "0") << "2D, full " << full;
    EXPECT_EQ(Distinct(ours2), 25u);
    EXPECT_EQ(Differences(Flood(i3.GetPointer(), m3.GetPointer(), nullptr, 0, full, Backend::CPU),
                          ItkFromMarkers(i3.GetPointer(), m3.GetPointer(), full)),
              "0")
      << "3D, full " << full;
  }
}

TEST(CudaWatershedFromMarkers, LevelEqualsITKWithoutTies)
{
  using Image2  = itk::Image<float, 2>;
  using Image3  = itk::Image<float, 3>;
  const auto i2 = Relief<Image2>(Size<Image2>({ 120, 90 }), 21, 0);
  const auto i3 = Relief<Image3>(Size<Image3>({ 24, 20, 16 }), 22, 0);
  for (bool full : { false, true })
    for (double level : { 5.0, 40.0, 150.0 })
    {
      itk::SizeValueType count = 0;
      const auto         ours2 = Flood<Image2>(i2.GetPointer(), nullptr, nullptr, level, full, Backend::CPU, &count);
      const auto         itk2  = ItkWithLevel(i2.GetPointer(), level, full);
      EXPECT_EQ(Differences(ours2, itk2), "0") << "2D, full " << full << ", level " << level;
      EXPECT_EQ(count, Distinct(itk2));
      const auto ours3 = Flood<Image3>(i3.GetPointer(), nullptr, nullptr, level, full, Backend::CPU, &count);
      const auto itk3  = ItkWithLevel(i3.GetPointer(), level, full);
      EXPECT_EQ(Differences(ours3, itk3), "0") << "3D, full " << full << ", level " << level;
      EXPECT_EQ(count, Distinct(itk3));
    }
  // A higher level merges minima: never more markers.
  itk::SizeValueType low = 0, high = 0;
  Flood<Image2>(i2.GetPointer(), nullptr, nullptr, 5.0, false, Backend::CPU, &low);
  Flood<Image2>(i2.GetPointer(), nullptr, nullptr, 150.0, false, Backend::CPU, &high);
  EXPECT_LT(high, low);
  EXPECT_GT(high, 0u);
}

TEST(CudaWatershedFromMarkers, LevelCountsEqualITKOnPlateaux)
{
  // Quantised images: ties everywhere, so the flood's tie rule and ITK's differ, but the markers (the regional minima
  // of the h-minima transform, with the integer shift clamped at the top of the type) are the same.
  using Image2  = itk::Image<unsigned char, 2>;
  using Image3  = itk::Image<short, 3>;
  const auto i2 = Relief<Image2>(Size<Image2>({ 100, 80 }), 31, 40);
  const auto i3 = Relief<Image3>(Size<Image3>({ 22, 20, 14 }), 32, 300);
  for (bool full : { false, true })
    for (double level : { 1.0, 3.0, 255.0 })
    {
      itk::SizeValueType count = 0;
      const auto         ours2 = Flood<Image2>(i2.GetPointer(), nullptr, nullptr, level, full, Backend::CPU, &count);
      EXPECT_EQ(count, Distinct(ItkWithLevel(i2.GetPointer(), level, full))) << "2D, full " << full << ", " << level;
      EXPECT_EQ(Distinct(ours2), count);
      EXPECT_EQ(std::count(ours2.begin(), ours2.end(), 0u), 0) << "without a mask every pixel is reached";
      Flood<Image3>(i3.GetPointer(), nullptr, nullptr, level, full, Backend::CPU, &count);
      EXPECT_EQ(count, Distinct(ItkWithLevel(i3.GetPointer(), level, full))) << "3D, full " << full << ", " << level;
    }
}

TEST(CudaWatershedFromMarkers, RectangularMaskFloodsTheCroppedImage)
{
  // Restricted to a rectangle, the graph is the cropped image's: the masked flood equals the flood of the crop (ITK's
  // on a tie-free image, the module's own on one with plateaux), and is 0 outside.
  using Image     = itk::Image<float, 2>;
  const auto size = Size<Image>({ 80, 60 });
  const auto crop = Size<Image>({ 37, 29 });
  const int  x0 = 21, y0 = 17;
  for (bool full : { false, true })
    for (int quantised : { 0, 12 })
    {
      const auto image   = Relief<Image>(size, 41 + quantised, quantised);
      const auto markers = RandomMarkers<LabelsOf<Image>>(size, 40, 7);
      auto       mask    = MakeImage<MaskOf<Image>>(size);
      auto       inner   = MakeImage<Image>(crop);
      auto       innerM  = MakeImage<LabelsOf<Image>>(crop);
      for (int y = 0; y < int(crop[1]); ++y)
        for (int x = 0; x < int(crop[0]); ++x)
        {
          const size_t g = size_t(y + y0) * size[0] + size_t(x + x0), l = size_t(y) * crop[0] + size_t(x);
          mask->GetBufferPointer()[g]   = 7;
          inner->GetBufferPointer()[l]  = image->GetBufferPointer()[g];
          innerM->GetBufferPointer()[l] = markers->GetBufferPointer()[g];
        }
      innerM->GetBufferPointer()[0] = 99; // a marker inside the crop whatever the random ones do
      markers->GetBufferPointer()[size_t(y0) * size[0] + size_t(x0)] = 99;
      const auto masked =
        Flood<Image>(image.GetPointer(), markers.GetPointer(), mask.GetPointer(), 0, full, Backend::CPU);
      const auto alone  = Flood<Image>(inner.GetPointer(), innerM.GetPointer(), nullptr, 0, full, Backend::CPU);
      const auto oracle = quantised ? alone : ItkFromMarkers(inner.GetPointer(), innerM.GetPointer(), full);
      for (size_t g = 0; g < masked.size(); ++g)
      {
        const int  x = int(g % size[0]) - x0, y = int(g / size[0]) - y0;
        const bool in = x >= 0 && y >= 0 && x < int(crop[0]) && y < int(crop[1]);
        ASSERT_EQ(masked[g], in ? oracle[size_t(y) * crop[0] + size_t(x)] : 0u)
          << "pixel " << g << ", full " << full << ", quantised " << quantised;
      }
      EXPECT_EQ(alone, oracle);
    }
}

TEST(CudaWatershedFromMarkers, MaskLeavesUnreachablePixelsAtZero)
{
  // Two halves of the mask, separated by a column outside it; markers in the left half only.
  using Image        = itk::Image<unsigned char, 2>;
  const auto size    = Size<Image>({ 30, 20 });
  const auto image   = Relief<Image>(size, 51, 20);
  auto       mask    = MakeImage<MaskOf<Image>>(size, 1);
  auto       markers = MakeImage<LabelsOf<Image>>(size);
  for (size_t y = 0; y < size[1]; ++y)
    mask->GetBufferPointer()[y * size[0] + 14] = 0;
  markers->GetBufferPointer()[3 * size[0] + 2]   = 5;
  markers->GetBufferPointer()[15 * size[0] + 9]  = 8;
  markers->GetBufferPointer()[10 * size[0] + 14] = 9; // outside the mask: ignored
  for (bool full : { false, true })
  {
    const auto out = Flood<Image>(image.GetPointer(), markers.GetPointer(), mask.GetPointer(), 0, full, Backend::CPU);
    for (size_t p = 0; p < out.size(); ++p)
    {
      const size_t x = p % size[0];
      if (x >= 14)
        EXPECT_EQ(out[p], 0u) << p;
      else
        EXPECT_TRUE(out[p] == 5u || out[p] == 8u) << p << ": " << out[p];
    }
    EXPECT_EQ(out[3 * size[0] + 2], 5u);
    EXPECT_EQ(out[15 * size[0] + 9], 8u);
  }
  // No marker inside the mask: every pixel 0.
  auto none                    = MakeImage<LabelsOf<Image>>(size);
  none->GetBufferPointer()[14] = 3;
  const auto out = Flood<Image>(image.GetPointer(), none.GetPointer(), mask.GetPointer(), 0, false, Backend::CPU);
  EXPECT_EQ(std::count(out.begin(), out.end(), 0u), long(out.size()));
}

template <typename TImage>
void
ExpectGpuEqualsCpu(const TImage * image, const LabelsOf<TImage> * markers, const MaskOf<TImage> * mask, double level)
{
  for (bool full : { false, true })
  {
    itk::SizeValueType a = 0, b = 0;
    const auto         cpu = Flood(image, markers, mask, level, full, Backend::CPU, &a);
    for (int run = 0; run < 2; ++run)
    {
      EXPECT_EQ(Flood(image, markers, mask, level, full, Backend::CUDA, &b), cpu)
        << "full " << full << ", level " << level << ", markers " << bool(markers) << ", mask " << bool(mask);
      EXPECT_EQ(a, b);
    }
  }
}

TEST(CudaWatershedFromMarkers, GpuEqualsCpu)
{
  CHS_REQUIRE_GPU();
  using U2      = itk::Image<unsigned char, 2>;
  using F2      = itk::Image<float, 2>;
  using S3      = itk::Image<short, 3>;
  using I2      = itk::Image<int, 2>;
  const auto u2 = Relief<U2>(Size<U2>({ 301, 170 }), 61, 12);
  const auto f2 = Relief<F2>(Size<F2>({ 257, 190 }), 62, 0);
  const auto s3 = Relief<S3>(Size<S3>({ 40, 33, 27 }), 63, 120);
  const auto i2 = Relief<I2>(Size<I2>({ 150, 140 }), 64, 0);
  auto       m2 = MakeImage<MaskOf<U2>>(Size<U2>({ 301, 170 }));
  for (size_t p = 0; p < NumberOfPixels(Size<U2>({ 301, 170 })); ++p)
  {
    const long dy = long(p / 301) - 85, dx = long(p % 301) - 150;
    m2->GetBufferPointer()[p] = dx * dx + dy * dy < 80 * 80; // a disc
  }
  auto m3 = MakeImage<MaskOf<S3>>(Size<S3>({ 40, 33, 27 }), 1);
  for (size_t p = 0; p < NumberOfPixels(Size<S3>({ 40, 33, 27 })); p += 3)
    m3->GetBufferPointer()[p] = 0;
  const auto k2 = RandomMarkers<LabelsOf<U2>>(Size<U2>({ 301, 170 }), 60, 8);
  const auto k3 = RandomMarkers<LabelsOf<S3>>(Size<S3>({ 40, 33, 27 }), 90, 9);
  for (double level : { 0.0, 1.0, 4.0 })
  {
    ExpectGpuEqualsCpu<U2>(u2.GetPointer(), nullptr, level == 0 ? m2.GetPointer() : nullptr, level);
    ExpectGpuEqualsCpu<S3>(s3.GetPointer(), nullptr, m3.GetPointer(), level * 10);
    ExpectGpuEqualsCpu<F2>(f2.GetPointer(), nullptr, nullptr, level * 25 + 0.5);
    ExpectGpuEqualsCpu<I2>(i2.GetPointer(), nullptr, nullptr, level * 30 + 1);
  }
  ExpectGpuEqualsCpu<U2>(u2.GetPointer(), k2.GetPointer(), nullptr, 0);
  ExpectGpuEqualsCpu<U2>(u2.GetPointer(), k2.GetPointer(), m2.GetPointer(), 0);
  ExpectGpuEqualsCpu<S3>(s3.GetPointer(), k3.GetPointer(), m3.GetPointer(), 0);
  // A flat image: one minimum, one marker.
  const auto flat = MakeImage<U2>(Size<U2>({ 64, 48 }), 9);
  ExpectGpuEqualsCpu<U2>(flat.GetPointer(), nullptr, nullptr, 3);
}

/** The watershed from markers through the ITK-free API (which has the test hook for the 64-bit path). */
template <typename TImage>
std::vector<unsigned int>
FloodApi(const TImage *           image,
         const LabelsOf<TImage> * markers,
         const MaskOf<TImage> *   mask,
         double                   level,
         bool                     gpu,
         bool                     wide)
{
  chs::Grid grid;
  grid.dimension = TImage::ImageDimension;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    grid.size[d] = image->GetLargestPossibleRegion().GetSize(d);
  chs::MarkerWatershedParameters p;
  p.level          = level;
  p.forceWideIndex = wide;
  std::vector<unsigned int> labels(grid.NumberOfVoxels(), 7);
  const unsigned int *      k = markers ? markers->GetBufferPointer() : nullptr;
  const unsigned char *     m = mask ? mask->GetBufferPointer() : nullptr;
  if (gpu)
    chs::MarkerWatershedCUDA(image->GetBufferPointer(), k, m, grid, p, labels.data(), chs::ExecutionContext{});
  else
    chs::MarkerWatershedCPU(image->GetBufferPointer(), k, m, grid, p, labels.data());
  return labels;
}

// The 64-bit path (forced on small images) on both backends gives the 32-bit path's labels: minima with and without
// a level, given markers, masks, 2D and 3D.
TEST(CudaWatershedFromMarkers, GPUWideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  using U2      = itk::Image<unsigned char, 2>;
  using S3      = itk::Image<short, 3>;
  const auto u2 = Relief<U2>(Size<U2>({ 301, 170 }), 71, 12);
  const auto s3 = Relief<S3>(Size<S3>({ 40, 33, 27 }), 72, 120);
  auto       m3 = MakeImage<MaskOf<S3>>(Size<S3>({ 40, 33, 27 }), 1);
  for (size_t p = 0; p < NumberOfPixels(Size<S3>({ 40, 33, 27 })); p += 3)
    m3->GetBufferPointer()[p] = 0;
  const auto k2     = RandomMarkers<LabelsOf<U2>>(Size<U2>({ 301, 170 }), 60, 18);
  const auto k3     = RandomMarkers<LabelsOf<S3>>(Size<S3>({ 40, 33, 27 }), 90, 19);
  const auto expect = [&](const auto * image, const auto * markers, const auto * mask, double level, const char * what)
  {
    const auto expected = FloodApi(image, markers, mask, level, false, false);
    EXPECT_EQ(FloodApi(image, markers, mask, level, false, true), expected) << what << ", CPU";
    EXPECT_EQ(FloodApi(image, markers, mask, level, true, true), expected) << what << ", CUDA";
  };
  for (double level : { 0.0, 4.0 })
  {
    expect(u2.GetPointer(), (const LabelsOf<U2> *)nullptr, (const MaskOf<U2> *)nullptr, level, "2D minima");
    expect(s3.GetPointer(), (const LabelsOf<S3> *)nullptr, m3.GetPointer(), level * 10, "3D minima in a mask");
  }
  expect(u2.GetPointer(), k2.GetPointer(), (const MaskOf<U2> *)nullptr, 0, "2D markers");
  expect(s3.GetPointer(), k3.GetPointer(), m3.GetPointer(), 0, "3D markers in a mask");
}

TEST(CudaWatershedFromMarkers, BadInputThenRunsAgain)
{
  using Image                  = itk::Image<short, 2>;
  using Wide                   = itk::Image<double, 2>;
  const auto           image   = Relief<Image>(Size<Image>({ 20, 10 }), 71, 50);
  const auto           markers = RandomMarkers<LabelsOf<Image>>(Size<Image>({ 20, 10 }), 4, 3);
  std::vector<Backend> backends{ Backend::CPU };
  if (HasCudaDevice())
    backends.push_back(Backend::CUDA);
  const auto expectError = [](auto & filter, const char * words)
  {
    try
    {
      filter->Update();
      ADD_FAILURE() << "expected an error with \"" << words << "\"";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(words), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "a failed update leaves no output behind";
  };
  for (Backend backend : backends)
  {
    auto filter = itk::CudaWatershedImageFilter<Image, LabelsOf<Image>>::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    filter->SetLevel(-1);
    expectError(filter, "level must be finite and not negative");
    filter->SetLevel(2.5);
    expectError(filter, "whole number");
    filter->SetLevel(2);
    filter->SetMarkerImage(markers);
    expectError(filter, "must be 0 when a marker image is given");
    filter->SetLevel(0);
    filter->SetMarkWatershedLine(true);
    expectError(filter, "MarkWatershedLine is not available");
    filter->SetMarkWatershedLine(false);
    auto small = MakeImage<MaskOf<Image>>(Size<Image>({ 20, 9 }), 1);
    filter->SetMaskImage(small);
    expectError(filter, "mask image must cover");
    filter->SetMaskImage(MakeImage<MaskOf<Image>>(Size<Image>({ 20, 10 }), 1));
    EXPECT_NO_THROW(filter->Update());
    EXPECT_EQ(filter->GetSeedCount(), 6u);
    EXPECT_EQ(Distinct(Buffer(filter->GetOutput())), 4u);

    auto wide = itk::CudaWatershedImageFilter<Wide, LabelsOf<Wide>>::New();
    wide->SetInput(MakeImage<Wide>(Size<Wide>({ 8, 8 }), 1.0));
    wide->SetBackend(backend);
    wide->SetLevel(1);
    expectError(wide, "pixels of up to 32 bits");
    wide->SetLevel(0);
    EXPECT_NO_THROW(wide->Update()) << "the watershed by steepest descent takes 64-bit pixels";
  }
}

} // namespace
