// Tests of itk::CudaWatershedImageFilter and itk::CudaWaterfallImageFilter: the basin count against ITK's
// RegionalMinimaImageFilter plus ConnectedComponentImageFilter (an oracle independent of the module), the CUDA
// backend against the CPU reference through the filters, the waterfall's outputs and hierarchy, bad input and
// re-running after a failure.
#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "Common/chsTestImages.h"

#include "itkConnectedComponentImageFilter.h"
#include "itkRegionalMinimaImageFilter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace
{
using namespace chs_test;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

template <typename TImage>
itk::SizeValueType
RegionalMinimaCount(const TImage * image, bool full)
{
  using Mask   = itk::Image<unsigned char, TImage::ImageDimension>;
  using Labels = itk::Image<unsigned int, TImage::ImageDimension>;
  auto minima  = itk::RegionalMinimaImageFilter<TImage, Mask>::New();
  minima->SetInput(image);
  minima->SetFullyConnected(full);
  minima->SetFlatIsMinima(true);
  auto components = itk::ConnectedComponentImageFilter<Mask, Labels>::New();
  components->SetInput(minima->GetOutput());
  components->SetFullyConnected(full);
  components->Update();
  return components->GetObjectCount();
}

template <typename TImage>
std::vector<unsigned int>
Watershed(const TImage * image, Backend backend, bool full, bool lines, itk::SizeValueType * count = nullptr)
{
  using Labels = itk::Image<unsigned int, TImage::ImageDimension>;
  auto filter  = itk::CudaWatershedImageFilter<TImage, Labels>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(full);
  filter->SetMarkWatershedLine(lines);
  filter->SetBackend(backend);
  filter->Update();
  EXPECT_EQ(filter->GetLastBackend(), backend);
  if (count)
    *count = filter->GetObjectCount();
  const auto * out = filter->GetOutput();
  return std::vector<unsigned int>(out->GetBufferPointer(),
                                   out->GetBufferPointer() + out->GetLargestPossibleRegion().GetNumberOfPixels());
}

TEST(CudaWatershedImageFilter, OneBasinPerRegionalMinimumOfITK)
{
  using Image2 = itk::Image<float, 2>;
  using Image3 = itk::Image<short, 3>;
  for (bool full : { false, true })
    for (int levels : { 0, 5 })
    {
      const auto         i2    = Relief<Image2>(Size<Image2>({ 90, 70 }), 3 + levels, levels);
      const auto         i3    = Relief<Image3>(Size<Image3>({ 20, 18, 15 }), 4 + levels, levels ? levels : 200);
      itk::SizeValueType count = 0;
      Watershed(i2.GetPointer(), Backend::CPU, full, false, &count);
      EXPECT_EQ(count, RegionalMinimaCount(i2.GetPointer(), full)) << "2D full " << full << " levels " << levels;
      Watershed(i3.GetPointer(), Backend::CPU, full, false, &count);
      EXPECT_EQ(count, RegionalMinimaCount(i3.GetPointer(), full)) << "3D full " << full << " levels " << levels;
    }
}

TEST(CudaWatershedImageFilter, GpuEqualsCpu)
{
  CHS_REQUIRE_GPU();
  using Image2 = itk::Image<unsigned char, 2>;
  using Image3 = itk::Image<double, 3>;
  for (bool full : { false, true })
    for (bool lines : { false, true })
    {
      const auto         i2 = Relief<Image2>(Size<Image2>({ 301, 170 }), 7, 12);
      const auto         i3 = Relief<Image3>(Size<Image3>({ 40, 33, 27 }), 8, 0);
      itk::SizeValueType a = 0, b = 0;
      EXPECT_EQ(Watershed(i2.GetPointer(), Backend::CUDA, full, lines, &a),
                Watershed(i2.GetPointer(), Backend::CPU, full, lines, &b));
      EXPECT_EQ(a, b);
      EXPECT_EQ(Watershed(i3.GetPointer(), Backend::CUDA, full, lines, &a),
                Watershed(i3.GetPointer(), Backend::CPU, full, lines, &b));
      EXPECT_EQ(a, b);
    }
}

// The filter's output images are page-locked arrays of the host cache: the labels' ranges go to them straight from
// the device, each range numbered while the one before is copied; an output image used as the next filter's input
// goes up the same way. With the transfers overlapped (chs::testing::SetTransferOverlap) and not, the labels equal
// the CPU reference's, for a float image (pageable, staged) and for the labels of the first filter as an input
// (page-locked, plateaus everywhere: step I runs again after the upload).
TEST(CudaWatershedImageFilter, OverlappedTransfersEqualCpu)
{
  CHS_REQUIRE_GPU();
  using Image      = itk::Image<float, 2>;
  using Labels     = itk::Image<unsigned int, 2>;
  const auto image = Relief<Image>(Size<Image>({ 1200, 1100 }), 11, 0);
  for (bool full : { false, true })
  {
    itk::SizeValueType cpuCount  = 0;
    const auto         cpu       = Watershed(image.GetPointer(), Backend::CPU, full, false, &cpuCount);
    auto               reference = itk::CudaWatershedImageFilter<Labels, Labels>::New();
    auto               first     = itk::CudaWatershedImageFilter<Image, Labels>::New();
    first->SetInput(image);
    first->SetFullyConnected(full);
    first->SetBackend(Backend::CPU);
    first->Update();
    reference->SetInput(first->GetOutput());
    reference->SetFullyConnected(full);
    reference->SetBackend(Backend::CPU);
    reference->Update();
    const auto *                    r = reference->GetOutput()->GetBufferPointer();
    const std::vector<unsigned int> cpuOfLabels(r, r + cpu.size());
    for (bool overlap : { true, false, true })
    {
      chs::testing::SetTransferOverlap(overlap);
      auto gpu = itk::CudaWatershedImageFilter<Image, Labels>::New();
      gpu->SetInput(image);
      gpu->SetFullyConnected(full);
      gpu->SetBackend(Backend::CUDA);
      auto second = itk::CudaWatershedImageFilter<Labels, Labels>::New();
      second->SetInput(gpu->GetOutput());
      second->SetFullyConnected(full);
      second->SetBackend(Backend::CUDA);
      second->Update();
      chs::testing::SetTransferOverlap(true);
      const auto * g = gpu->GetOutput()->GetBufferPointer();
      EXPECT_EQ(std::vector<unsigned int>(g, g + cpu.size()), cpu) << "full " << full << " overlap " << overlap;
      EXPECT_EQ(gpu->GetObjectCount(), cpuCount);
      const auto * s = second->GetOutput()->GetBufferPointer();
      EXPECT_EQ(std::vector<unsigned int>(s, s + cpu.size()), cpuOfLabels) << "labels as input, overlap " << overlap;
      EXPECT_EQ(second->GetObjectCount(), reference->GetObjectCount());
    }
  }
}

TEST(CudaWatershedImageFilter, BadInputThenRunsAgain)
{
  using Image                   = itk::Image<float, 2>;
  auto image                    = Relief<Image>(Size<Image>({ 20, 10 }), 1, 0);
  image->GetBufferPointer()[57] = std::nanf("");
  std::vector<Backend> backends{ Backend::CPU };
  if (HasCudaDevice())
    backends.push_back(Backend::CUDA);
  for (Backend backend : backends)
  {
    auto filter = itk::CudaWatershedImageFilter<Image, itk::Image<unsigned int, 2>>::New();
    filter->SetInput(image);
    filter->SetBackend(backend);
    try
    {
      filter->Update();
      FAIL() << "a NaN must be rejected";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("NaN at pixel (17, 2)"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "a failed update leaves no output behind";
    filter->SetReductionRate(0);
    image->GetBufferPointer()[57] = 1.0f;
    image->Modified();
    EXPECT_THROW(filter->Update(), itk::ExceptionObject);
    filter->SetReductionRate(6);
    EXPECT_NO_THROW(filter->Update());
    EXPECT_GT(filter->GetObjectCount(), 0u);
    image->GetBufferPointer()[57] = std::nanf("");
  }
}

template <typename TImage>
struct Levels
{
  std::vector<std::vector<unsigned short>>     labels;
  std::vector<itk::SizeValueType>              counts;
  std::vector<std::vector<itk::SizeValueType>> parents;
};

template <typename TImage>
Levels<TImage>
Waterfall(const TImage * image, Backend backend, bool full, unsigned levels = 0)
{
  using Labels = itk::Image<unsigned short, TImage::ImageDimension>;
  auto filter  = itk::CudaWaterfallImageFilter<TImage, Labels>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(full);
  filter->SetBackend(backend);
  filter->SetNumberOfLevels(levels);
  filter->Update();
  Levels<TImage> r;
  r.counts = filter->GetRegionCounts();
  EXPECT_EQ(filter->GetNumberOfComputedLevels(), r.counts.size());
  EXPECT_EQ(filter->GetNumberOfIndexedOutputs(), r.counts.size());
  const size_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (unsigned k = 0; k < filter->GetNumberOfComputedLevels(); ++k)
  {
    const Labels * level = filter->GetLevel(k);
    EXPECT_EQ(level->GetLargestPossibleRegion(), image->GetLargestPossibleRegion());
    EXPECT_EQ(level->GetSpacing(), image->GetSpacing());
    r.labels.emplace_back(level->GetBufferPointer(), level->GetBufferPointer() + n);
    if (k + 1 < filter->GetNumberOfComputedLevels())
    {
      r.parents.push_back(filter->GetParentLabels(k));
      EXPECT_EQ(filter->GetParentLabel(k, 1), r.parents.back()[0]);
    }
  }
  EXPECT_THROW(filter->GetLevel(filter->GetNumberOfComputedLevels()), itk::ExceptionObject);
  return r;
}

TEST(CudaWaterfallImageFilter, LevelsNestDownToOneRegion)
{
  using Image             = itk::Image<float, 2>;
  auto         image      = Relief<Image>(Size<Image>({ 120, 80 }), 12, 0);
  const double spacing[2] = { 0.5, 2.0 };
  image->SetSpacing(spacing);
  for (bool full : { false, true })
  {
    const auto r = Waterfall(image.GetPointer(), Backend::CPU, full);
    ASSERT_GE(r.counts.size(), 2u);
    EXPECT_EQ(r.counts.back(), 1u);
    const auto watershed = Watershed(image.GetPointer(), Backend::CPU, full, false);
    EXPECT_EQ(r.labels[0], std::vector<unsigned short>(watershed.begin(), watershed.end()));
    for (size_t k = 1; k < r.labels.size(); ++k)
    {
      EXPECT_LT(r.counts[k], r.counts[k - 1]);
      for (size_t p = 0; p < r.labels[k].size(); ++p)
        ASSERT_EQ(r.labels[k][p], r.parents[k - 1][r.labels[k - 1][p] - 1]);
    }
    // Fewer levels: the first ones, and the outputs of the longer update are gone.
    auto filter = itk::CudaWaterfallImageFilter<Image, itk::Image<unsigned short, 2>>::New();
    filter->SetInput(image);
    filter->SetFullyConnected(full);
    filter->SetBackend(Backend::CPU);
    filter->Update();
    filter->SetNumberOfLevels(2);
    filter->Update();
    EXPECT_EQ(filter->GetNumberOfComputedLevels(), 2u);
    EXPECT_EQ(filter->GetNumberOfIndexedOutputs(), 2u);
    EXPECT_EQ(std::vector<unsigned short>(filter->GetLevel(1)->GetBufferPointer(),
                                          filter->GetLevel(1)->GetBufferPointer() + r.labels[1].size()),
              r.labels[1]);
  }
}

TEST(CudaWaterfallImageFilter, GpuEqualsCpu)
{
  CHS_REQUIRE_GPU();
  using Image2 = itk::Image<unsigned short, 2>;
  using Image3 = itk::Image<float, 3>;
  for (bool full : { false, true })
  {
    const auto i2 = Relief<Image2>(Size<Image2>({ 257, 190 }), 31, 0);
    const auto i3 = Relief<Image3>(Size<Image3>({ 35, 30, 25 }), 32, 9);
    const auto c2 = Waterfall(i2.GetPointer(), Backend::CPU, full),
               g2 = Waterfall(i2.GetPointer(), Backend::CUDA, full);
    EXPECT_EQ(g2.labels, c2.labels);
    EXPECT_EQ(g2.counts, c2.counts);
    EXPECT_EQ(g2.parents, c2.parents);
    const auto c3 = Waterfall(i3.GetPointer(), Backend::CPU, full),
               g3 = Waterfall(i3.GetPointer(), Backend::CUDA, full);
    EXPECT_EQ(g3.labels, c3.labels);
    EXPECT_EQ(g3.counts, c3.counts);
  }
}

/** ProduceLevelImages off: one output image, the same region counts and parent labels, and ComputeLevelImage(k)
 * equal to the level image of an update with it on. */
template <typename TImage>
void
CheckHierarchyWithoutLevelImages(const TImage * image, Backend backend, bool full)
{
  using Labels      = itk::Image<unsigned short, TImage::ImageDimension>;
  const auto every  = Waterfall(image, backend, full);
  auto       filter = itk::CudaWaterfallImageFilter<TImage, Labels>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(full);
  filter->SetBackend(backend);
  filter->ProduceLevelImagesOff();
  filter->Update();
  ASSERT_EQ(filter->GetRegionCounts(), every.counts);
  ASSERT_GT(every.counts.size(), 2u);
  EXPECT_EQ(filter->GetNumberOfIndexedOutputs(), 1u);
  EXPECT_THROW(filter->GetLevel(1), itk::ExceptionObject);
  EXPECT_THROW(filter->ComputeLevelImage(filter->GetNumberOfComputedLevels()), itk::ExceptionObject);
  const size_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (unsigned k = 0; k < filter->GetNumberOfComputedLevels(); ++k)
  {
    if (k + 1 < filter->GetNumberOfComputedLevels())
      EXPECT_EQ(filter->GetParentLabels(k), every.parents[k]);
    const auto level = filter->ComputeLevelImage(k);
    EXPECT_EQ(level->GetLargestPossibleRegion(), image->GetLargestPossibleRegion());
    EXPECT_EQ(level->GetSpacing(), image->GetSpacing());
    EXPECT_EQ(std::vector<unsigned short>(level->GetBufferPointer(), level->GetBufferPointer() + n), every.labels[k])
      << "level " << k;
  }
  // On again: every level is an output once more.
  filter->ProduceLevelImagesOn();
  filter->Update();
  EXPECT_EQ(filter->GetNumberOfIndexedOutputs(), every.counts.size());
  EXPECT_EQ(
    std::vector<unsigned short>(filter->GetLevel(2)->GetBufferPointer(), filter->GetLevel(2)->GetBufferPointer() + n),
    every.labels[2]);
}

void
CheckHierarchyWithoutLevelImages(Backend backend)
{
  using Image2  = itk::Image<float, 2>;
  using Image3  = itk::Image<uint8_t, 3>;
  const auto i2 = Relief<Image2>(Size<Image2>({ 301, 170 }), 7, 12);
  const auto i3 = Relief<Image3>(Size<Image3>({ 40, 30, 20 }), 5, 200);
  for (bool full : { false, true })
  {
    CheckHierarchyWithoutLevelImages(i2.GetPointer(), backend, full);
    CheckHierarchyWithoutLevelImages(i3.GetPointer(), backend, full);
  }
}

TEST(CudaWaterfallImageFilter, HierarchyWithoutLevelImagesCpu)
{
  CheckHierarchyWithoutLevelImages(Backend::CPU);
}

TEST(CudaWaterfallImageFilter, HierarchyWithoutLevelImagesGpu)
{
  CHS_REQUIRE_GPU();
  CheckHierarchyWithoutLevelImages(Backend::CUDA);
}

TEST(CudaWaterfallImageFilter, BadInput)
{
  using Image                   = itk::Image<double, 3>;
  auto image                    = Relief<Image>(Size<Image>({ 6, 5, 4 }), 2, 0);
  image->GetBufferPointer()[33] = std::nan("");
  auto filter                   = itk::CudaWaterfallImageFilter<Image, itk::Image<unsigned int, 3>>::New();
  filter->SetInput(image);
  filter->SetBackend(Backend::CPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  EXPECT_EQ(filter->GetNumberOfComputedLevels(), 0u);
  EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr);
}

} // namespace
