// Tests of itk::CudaImageToAlphaTreeFilter, itk::AlphaTree, itk::AlphaTreeCutImageFilter and
// itk::AlphaTreeSaliencyImageFilter: the cuts against thresholded components of the test's own pixel graph, the
// alpha-omega cut and the saliency map against brute-force definitions, areas, the GPU filter against the CPU
// filter (scalar and vector images), geometry, and bad input.
#include "itkAlphaTreeCutImageFilter.h"
#include "itkAlphaTreeSaliencyImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkRGBPixel.h"
#include "itkVectorImage.h"
#include "AlphaTree/chsAlphaTreeOracles.h"
#include "chs/Execution.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

namespace
{
using chs_test::MakeImage;
using chs_test::Size;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

template <typename T, unsigned D>
typename itk::Image<T, D>::Pointer
Noise(const typename itk::Image<T, D>::SizeType & size, unsigned seed, double levels)
{
  auto                                   image = MakeImage<itk::Image<T, D>>(size);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  T *                                    p = image->GetBufferPointer();
  const size_t                           n = chs_test::NumberOfPixels(size);
  for (size_t i = 0; i < n; ++i)
    p[i] = T(std::floor(u(rng) * levels));
  return image;
}

template <typename TImage>
itk::AlphaTree::Pointer
Build(const TImage * image, bool full, Backend backend)
{
  auto filter = itk::CudaImageToAlphaTreeFilter<TImage>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(full);
  filter->SetBackend(backend);
  filter->Update();
  itk::AlphaTree::Pointer tree = filter->GetOutput();
  tree->DisconnectPipeline();
  return tree;
}

/** Both backends cut the same tree at the same (alpha, omega) into the same labels. */
template <typename L>
void
ExpectSameCutOnBothBackends(const itk::AlphaTree * tree, double alpha, double omega)
{
  auto cpu = itk::AlphaTreeCutImageFilter<L>::New();
  auto gpu = itk::AlphaTreeCutImageFilter<L>::New();
  for (auto * cut : { cpu.GetPointer(), gpu.GetPointer() })
  {
    cut->SetInput(tree);
    cut->SetAlpha(alpha);
    cut->SetOmega(omega);
  }
  cpu->SetBackend(Backend::CPU);
  gpu->SetBackend(Backend::CUDA);
  cpu->Update();
  gpu->Update();
  EXPECT_EQ(gpu->GetLastBackend(), Backend::CUDA);
  EXPECT_EQ(gpu->GetObjectCount(), cpu->GetObjectCount()) << "alpha " << alpha << " omega " << omega;
  const auto   n = tree->GetNumberOfLeaves();
  const auto * a = gpu->GetOutput()->GetBufferPointer();
  const auto * b = cpu->GetOutput()->GetBufferPointer();
  EXPECT_TRUE(std::equal(a, a + n, b)) << "alpha " << alpha << " omega " << omega;
}

template <typename TImage>
std::vector<chs_test::WeightedEdge>
EdgesOf(const TImage * image, bool full)
{
  const auto                              size = image->GetLargestPossibleRegion().GetSize();
  const auto                              n    = chs_test::NumberOfPixels(size);
  std::vector<typename TImage::PixelType> v(image->GetBufferPointer(), image->GetBufferPointer() + n);
  return chs_test::ImageEdges(
    v, int64_t(size[0]), int64_t(size[1]), TImage::ImageDimension == 3 ? int64_t(size[2]) : 1, 1, full, 2);
}

std::vector<uint32_t>
Values(const itk::AlphaTree::IndexContainerType * c)
{
  return c->CastToSTLConstContainer();
}

/** Labels must be consecutive from 1 in raster order of each region's first pixel. */
void
ExpectRasterLabels(const std::vector<uint32_t> & labels)
{
  uint32_t next = 1;
  for (uint32_t l : labels)
  {
    ASSERT_GE(l, 1u);
    ASSERT_LE(l, next);
    if (l == next)
      ++next;
  }
}

} // namespace

TEST(CudaImageToAlphaTreeFilter, CutsAreThresholdedComponents)
{
  using I2              = itk::Image<uint8_t, 2>;
  using L2              = itk::Image<uint32_t, 2>;
  const auto      image = Noise<uint8_t, 2>(Size<I2>({ 23, 17 }), 1, 12);
  I2::SpacingType spacing;
  spacing[0] = 0.5;
  spacing[1] = 2.0;
  image->SetSpacing(spacing);
  for (bool full : { false, true })
  {
    const auto tree = Build(image.GetPointer(), full, Backend::CPU);
    EXPECT_NO_THROW(tree->CheckInvariants());
    const auto edges = EdgesOf(image.GetPointer(), full);
    auto       cut   = itk::AlphaTreeCutImageFilter<L2>::New();
    cut->SetInput(tree);
    for (double alpha : { 0.0, 1.0, 2.0, 3.5, 7.0, 11.0 })
    {
      cut->SetAlpha(alpha);
      cut->Update();
      const L2 *            out = cut->GetOutput();
      std::vector<uint32_t> labels(out->GetBufferPointer(), out->GetBufferPointer() + 23 * 17);
      EXPECT_TRUE(chs_test::SamePartition(labels, chs_test::ThresholdComponents(edges, 23 * 17, alpha)))
        << "alpha " << alpha;
      ExpectRasterLabels(labels);
      EXPECT_EQ(cut->GetObjectCount(), *std::max_element(labels.begin(), labels.end()));
      EXPECT_EQ(out->GetSpacing()[1], 2.0);
    }
    // Areas: every leaf 1, the root all pixels, a node the sum of its children.
    const auto areas = tree->ComputeAreas();
    EXPECT_EQ(areas->back(), 23u * 17u);
    std::vector<itk::IdentifierType> sum(tree->GetNumberOfNodes(), 0);
    for (size_t x = 0; x + 1 < sum.size(); ++x)
      sum[(*tree->GetParents())[x]] += (*areas)[x];
    for (size_t x = tree->GetNumberOfLeaves(); x < sum.size(); ++x)
      EXPECT_EQ(sum[x], (*areas)[x]);
  }
}

TEST(CudaImageToAlphaTreeFilter, AlphaOmegaCutMatchesBruteForce)
{
  using I2         = itk::Image<uint8_t, 2>;
  const auto image = Noise<uint8_t, 2>(Size<I2>({ 19, 15 }), 2, 20);
  const auto tree  = Build(image.GetPointer(), false, Backend::CPU);
  ASSERT_TRUE(tree->HasValueRanges());
  const auto       edges = EdgesOf(image.GetPointer(), false);
  const uint64_t   n     = 19 * 15;
  const auto *     v     = image->GetBufferPointer();
  std::set<double> levels{ 0.0 };
  for (const auto & e : edges)
    levels.insert(e.w);
  for (double alpha : { 3.0, 6.0, 19.0 })
    for (double omega : { 0.0, 4.0, 9.0, 30.0 })
    {
      // Brute force: each pixel's largest alpha'-component (alpha' <= alpha) whose value range is at most omega.
      std::vector<int64_t> region(n, -1);
      for (auto it = levels.rbegin(); it != levels.rend(); ++it)
      {
        if (*it > alpha)
          continue;
        const auto       label = chs_test::ThresholdComponents(edges, n, *it);
        std::vector<int> lo(n, 1000), hi(n, -1);
        for (uint64_t p = 0; p < n; ++p)
        {
          lo[label[p]] = std::min(lo[label[p]], int(v[p]));
          hi[label[p]] = std::max(hi[label[p]], int(v[p]));
        }
        for (uint64_t p = 0; p < n; ++p)
          if (region[p] < 0 && hi[label[p]] - lo[label[p]] <= omega)
            region[p] = int64_t(label[p]) + int64_t(n) * int64_t(std::distance(levels.rbegin(), it));
      }
      std::vector<uint32_t> expected(n);
      for (uint64_t p = 0; p < n; ++p)
      {
        ASSERT_GE(region[p], 0) << "the flat zone always qualifies";
        expected[p] = uint32_t(region[p]);
      }
      const auto labels = Values(tree->ComputeLabels(alpha, omega));
      EXPECT_TRUE(chs_test::SamePartition(labels, expected)) << "alpha " << alpha << " omega " << omega;
      ExpectRasterLabels(labels);
    }
}

TEST(CudaImageToAlphaTreeFilter, SaliencyMatchesMergeLevels)
{
  using I3         = itk::Image<uint16_t, 3>;
  using F3         = itk::Image<float, 3>;
  const auto image = Noise<uint16_t, 3>(Size<I3>({ 6, 5, 4 }), 3, 50);
  const auto tree  = Build(image.GetPointer(), true, Backend::CPU);
  auto       sal   = itk::AlphaTreeSaliencyImageFilter<F3>::New();
  sal->SetInput(tree);
  sal->Update();
  const F3 * s = sal->GetOutput();
  ASSERT_EQ(s->GetLargestPossibleRegion().GetSize(), Size<F3>({ 11, 9, 7 }));
  EXPECT_EQ(s->GetSpacing()[0], 0.5);
  const auto       edges = EdgesOf(image.GetPointer(), true);
  std::set<double> alphas{ 0.0 };
  for (const auto & e : edges)
    alphas.insert(e.w);
  std::vector<std::vector<uint32_t>> partitions;
  for (double a : alphas)
    partitions.push_back(chs_test::ThresholdComponents(edges, 120, a));
  // Brute force: the smallest alpha at which two face neighbours are in one thresholded component.
  auto mergeLevel = [&](uint32_t p, uint32_t q)
  {
    size_t i = 0;
    for (double a : alphas)
    {
      if (partitions[i][p] == partitions[i][q])
        return a;
      ++i;
    }
    return -1.0;
  };
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 5; ++y)
      for (int x = 0; x < 6; ++x)
      {
        const uint32_t p = uint32_t((z * 5 + y) * 6 + x);
        EXPECT_EQ(s->GetPixel({ { 2 * x, 2 * y, 2 * z } }), 0.0f);
        if (x + 1 < 6)
          EXPECT_EQ(s->GetPixel({ { 2 * x + 1, 2 * y, 2 * z } }), float(mergeLevel(p, p + 1)));
        if (y + 1 < 5)
          EXPECT_EQ(s->GetPixel({ { 2 * x, 2 * y + 1, 2 * z } }), float(mergeLevel(p, p + 6)));
        if (z + 1 < 4)
          EXPECT_EQ(s->GetPixel({ { 2 * x, 2 * y, 2 * z + 1 } }), float(mergeLevel(p, p + 30)));
        if (x + 1 < 6 && y + 1 < 5)
          EXPECT_EQ(s->GetPixel({ { 2 * x + 1, 2 * y + 1, 2 * z } }),
                    std::max({ s->GetPixel({ { 2 * x + 1, 2 * y, 2 * z } }),
                               s->GetPixel({ { 2 * x + 1, 2 * y + 2, 2 * z } }),
                               s->GetPixel({ { 2 * x, 2 * y + 1, 2 * z } }),
                               s->GetPixel({ { 2 * x + 2, 2 * y + 1, 2 * z } }) }));
      }
}

TEST(CudaImageToAlphaTreeFilter, GpuEqualsCpu)
{
  CHS_REQUIRE_GPU();
  using I2  = itk::Image<uint8_t, 2>;
  using S3  = itk::Image<int16_t, 3>;
  using V2  = itk::VectorImage<uint8_t, 2>;
  using R2  = itk::Image<itk::RGBPixel<uint8_t>, 2>;
  auto same = [](const itk::AlphaTree * a, const itk::AlphaTree * b)
  {
    EXPECT_EQ(a->GetParents()->CastToSTLConstContainer(), b->GetParents()->CastToSTLConstContainer());
    EXPECT_EQ(a->GetLevels()->CastToSTLConstContainer(), b->GetLevels()->CastToSTLConstContainer());
    EXPECT_EQ(a->GetValueRanges()->CastToSTLConstContainer(), b->GetValueRanges()->CastToSTLConstContainer());
  };
  const auto i2 = Noise<uint8_t, 2>(Size<I2>({ 257, 131 }), 4, 256);
  const auto s3 = Noise<int16_t, 3>(Size<S3>({ 33, 20, 18 }), 5, 2000);
  for (bool full : { false, true })
  {
    same(Build(i2.GetPointer(), full, Backend::CUDA), Build(i2.GetPointer(), full, Backend::CPU));
    same(Build(s3.GetPointer(), full, Backend::CUDA), Build(s3.GetPointer(), full, Backend::CPU));
  }
  auto vec = V2::New();
  vec->SetRegions(Size<V2>({ 70, 41 }));
  vec->SetNumberOfComponentsPerPixel(4);
  vec->Allocate();
  auto rgb = R2::New();
  rgb->SetRegions(Size<R2>({ 70, 41 }));
  rgb->Allocate();
  std::mt19937 rng(6);
  for (size_t i = 0; i < 70 * 41 * 4; ++i)
    vec->GetBufferPointer()[i] = uint8_t(rng() % 32);
  for (size_t i = 0; i < 70 * 41; ++i)
    rgb->GetBufferPointer()[i].Set(uint8_t(rng() % 64), uint8_t(rng() % 64), uint8_t(rng() % 64));
  same(Build(vec.GetPointer(), true, Backend::CUDA), Build(vec.GetPointer(), true, Backend::CPU));
  same(Build(rgb.GetPointer(), false, Backend::CUDA), Build(rgb.GetPointer(), false, Backend::CPU));
}

TEST(CudaImageToAlphaTreeFilter, CutOnGpuEqualsCutOnCpu)
{
  CHS_REQUIRE_GPU();
  using I2         = itk::Image<uint8_t, 2>;
  using U3         = itk::Image<uint16_t, 3>;
  using F2         = itk::Image<float, 2>;
  using L2         = itk::Image<uint32_t, 2>;
  using L3         = itk::Image<uint32_t, 3>;
  const double inf = std::numeric_limits<double>::infinity();
  for (bool full : { false, true })
  {
    const auto i2 = Noise<uint8_t, 2>(Size<I2>({ 301, 203 }), 11, 24);
    const auto t2 = Build(i2.GetPointer(), full, Backend::CPU);
    for (double alpha : { 0.0, 1.0, 3.0, 7.5, 23.0, 1e9 })
      for (double omega : { inf, 0.0, 2.0, 9.0 })
        ExpectSameCutOnBothBackends<L2>(t2.GetPointer(), alpha, omega);
    const auto u3 = Noise<uint16_t, 3>(Size<U3>({ 37, 29, 23 }), 12, 3000);
    const auto t3 = Build(u3.GetPointer(), full, Backend::CPU);
    for (double alpha : { 0.0, 50.0, 800.0, 3000.0 })
      for (double omega : { inf, 400.0 })
        ExpectSameCutOnBothBackends<L3>(t3.GetPointer(), alpha, omega);
  }
  const auto f2 = Noise<float, 2>(Size<F2>({ 97, 61 }), 13, 1.0);
  const auto tf = Build(f2.GetPointer(), false, Backend::CPU);
  for (double alpha : { 0.0, 0.01, 0.2, 1.0 })
    ExpectSameCutOnBothBackends<L2>(tf.GetPointer(), alpha, inf);
  // A constant image (one node above the leaves) and a 1-pixel image.
  const auto flat = MakeImage<I2>(Size<I2>({ 40, 33 }), uint8_t(9));
  ExpectSameCutOnBothBackends<L2>(Build(flat.GetPointer(), true, Backend::CPU).GetPointer(), 0.0, inf);
  const auto one = MakeImage<I2>(Size<I2>({ 1, 1 }), uint8_t(3));
  ExpectSameCutOnBothBackends<L2>(Build(one.GetPointer(), false, Backend::CPU).GetPointer(), 5.0, inf);
}

TEST(CudaImageToAlphaTreeFilter, SaliencyOnGpuEqualsSaliencyOnCpu)
{
  CHS_REQUIRE_GPU();
  using I2  = itk::Image<uint8_t, 2>;
  using U3  = itk::Image<uint16_t, 3>;
  using F2  = itk::Image<float, 2>;
  auto same = [](const itk::AlphaTree * tree, auto tag)
  {
    using S  = typename decltype(tag)::ObjectType;
    auto cpu = itk::AlphaTreeSaliencyImageFilter<S>::New();
    auto gpu = itk::AlphaTreeSaliencyImageFilter<S>::New();
    cpu->SetInput(tree);
    gpu->SetInput(tree);
    cpu->SetBackend(Backend::CPU);
    gpu->SetBackend(Backend::CUDA);
    cpu->Update();
    gpu->Update();
    EXPECT_EQ(gpu->GetLastBackend(), Backend::CUDA);
    const auto n = gpu->GetOutput()->GetLargestPossibleRegion().GetNumberOfPixels();
    EXPECT_TRUE(std::equal(gpu->GetOutput()->GetBufferPointer(),
                           gpu->GetOutput()->GetBufferPointer() + n,
                           cpu->GetOutput()->GetBufferPointer()));
  };
  using S2 = itk::Image<float, 2>;
  using S3 = itk::Image<float, 3>;
  for (bool full : { false, true })
  {
    const auto i2 = Noise<uint8_t, 2>(Size<I2>({ 211, 157 }), 21, 40);
    same(Build(i2.GetPointer(), full, Backend::CPU).GetPointer(), S2::Pointer());
    const auto u3 = Noise<uint16_t, 3>(Size<U3>({ 29, 23, 19 }), 22, 5000);
    same(Build(u3.GetPointer(), full, Backend::CPU).GetPointer(), S3::Pointer());
  }
  const auto f2 = Noise<float, 2>(Size<F2>({ 64, 1 }), 23, 1.0);
  same(Build(f2.GetPointer(), false, Backend::CPU).GetPointer(), S2::Pointer());
  const auto one = MakeImage<I2>(Size<I2>({ 1, 1 }), uint8_t(3));
  same(Build(one.GetPointer(), false, Backend::CPU).GetPointer(), S2::Pointer());
}

TEST(CudaImageToAlphaTreeFilter, BadInput)
{
  using F2                     = itk::Image<float, 2>;
  using L2                     = itk::Image<uint16_t, 2>;
  using L3                     = itk::Image<uint16_t, 3>;
  auto image                   = MakeImage<F2>(Size<F2>({ 5, 4 }), 1.0f);
  image->GetBufferPointer()[7] = std::numeric_limits<float>::quiet_NaN();
  auto filter                  = itk::CudaImageToAlphaTreeFilter<F2>::New();
  filter->SetInput(image);
  filter->SetBackend(Backend::CPU);
  try
  {
    filter->Update();
    ADD_FAILURE() << "no exception for a NaN pixel";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
  EXPECT_EQ(filter->GetOutput()->GetNumberOfNodes(), 0u) << "nothing half-written";
  image->GetBufferPointer()[7] = 2.0f;
  image->Modified();
  filter->Update();
  EXPECT_NO_THROW(filter->GetOutput()->CheckInvariants());

  // A cut of another dimension, and an alpha-omega cut without value ranges.
  auto cut3 = itk::AlphaTreeCutImageFilter<L3>::New();
  cut3->SetInput(filter->GetOutput());
  EXPECT_THROW(cut3->Update(), itk::ExceptionObject);
  filter->ComputeValueRangesOff();
  filter->Update();
  auto cut = itk::AlphaTreeCutImageFilter<L2>::New();
  cut->SetInput(filter->GetOutput());
  cut->SetOmega(3.0);
  EXPECT_THROW(cut->Update(), itk::ExceptionObject);
  cut->SetOmega(std::numeric_limits<double>::infinity());
  cut->Update();
  EXPECT_EQ(cut->GetObjectCount(), 2u) << "pixels 1 and 2: the 2 is its own component at alpha 0";

  // A broken tree is named.
  auto broken = itk::AlphaTree::New();
  broken->Allocate(3, 4);
  auto & parent = broken->GetParents()->CastToSTLContainer();
  parent        = { 3, 3, 2, 3 };
  EXPECT_THROW(broken->CheckInvariants(), itk::ExceptionObject);
}

TEST(CudaImageToAlphaTreeFilter, GpuFailureLeavesNothingAndRunsAgain)
{
  CHS_REQUIRE_GPU();
  using I2            = itk::Image<uint8_t, 2>;
  const auto image    = Noise<uint8_t, 2>(Size<I2>({ 300, 200 }), 7, 30);
  const auto cpu      = Build(image.GetPointer(), false, Backend::CPU);
  int        failures = 0;
  for (int k = 1; k <= 40; ++k)
  {
    auto filter = itk::CudaImageToAlphaTreeFilter<I2>::New();
    filter->SetInput(image);
    filter->SetBackend(Backend::CUDA);
    chs::testing::FailDeviceAllocationAfter(k);
    bool threw = false;
    try
    {
      filter->Update();
    }
    catch (const itk::ExceptionObject &)
    {
      threw = true;
    }
    chs::testing::FailDeviceAllocationAfter(0);
    if (!threw)
      break; // every allocation has been made to fail once
    ++failures;
    EXPECT_EQ(filter->GetOutput()->GetNumberOfNodes(), 0u);
    filter->Modified();
    filter->Update();
    EXPECT_EQ(filter->GetOutput()->GetParents()->CastToSTLConstContainer(),
              cpu->GetParents()->CastToSTLConstContainer());
  }
  EXPECT_GE(failures, 10) << "the run makes at least 10 device allocations";

  // The cut: a failed device allocation leaves an empty label image, and the cut runs again.
  using L2       = itk::Image<uint32_t, 2>;
  auto reference = itk::AlphaTreeCutImageFilter<L2>::New();
  reference->SetInput(cpu);
  reference->SetAlpha(4.0);
  reference->SetBackend(Backend::CPU);
  reference->Update();
  int cutFailures = 0;
  for (int k = 1; k <= 20; ++k)
  {
    auto cut = itk::AlphaTreeCutImageFilter<L2>::New();
    cut->SetInput(cpu);
    cut->SetAlpha(4.0);
    cut->SetBackend(Backend::CUDA);
    chs::testing::FailDeviceAllocationAfter(k);
    bool threw = false;
    try
    {
      cut->Update();
    }
    catch (const itk::ExceptionObject &)
    {
      threw = true;
    }
    chs::testing::FailDeviceAllocationAfter(0);
    if (!threw)
      break;
    ++cutFailures;
    EXPECT_EQ(cut->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";
    cut->Modified();
    cut->Update();
    EXPECT_TRUE(std::equal(cut->GetOutput()->GetBufferPointer(),
                           cut->GetOutput()->GetBufferPointer() + 300 * 200,
                           reference->GetOutput()->GetBufferPointer()));
  }
  EXPECT_GE(cutFailures, 5) << "the cut makes at least 5 device allocations";
}

TEST(CudaImageToAlphaTreeFilter, InfinitePixelsAreRefusedOnBothBackends)
{
  // |inf - inf| is NaN: an edge between two infinite pixels has no weight, so infinities are refused like NaN.
  using F2 = itk::Image<float, 2>;
  std::vector<Backend> backends{ Backend::CPU };
  if (chs_test::HasCudaDevice())
    backends.push_back(Backend::CUDA);
  for (Backend b : backends)
    for (float bad : { std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity() })
    {
      auto image                    = MakeImage<F2>(Size<F2>({ 5, 4 }), 1.0f);
      image->GetBufferPointer()[11] = bad;
      image->GetBufferPointer()[12] = bad;
      auto filter                   = itk::CudaImageToAlphaTreeFilter<F2>::New();
      filter->SetInput(image);
      filter->SetBackend(b);
      try
      {
        filter->Update();
        ADD_FAILURE() << "no exception for an infinite pixel";
      }
      catch (const itk::ExceptionObject & e)
      {
        EXPECT_NE(std::string(e.what()).find("pixel 11 is infinite"), std::string::npos) << e.what();
      }
      EXPECT_EQ(filter->GetOutput()->GetNumberOfNodes(), 0u) << "nothing half-written";
    }
}

namespace
{
/** The tree of `image` with 64-bit node ids (AlphaTree::GetWideParents) against the same tree with 32-bit ones:
 * parents, levels, ranges, areas, labels, and the cut and saliency filters on both backends. */
template <typename TImage>
void
ExpectWideNodeIdsGiveTheSame(const TImage * image, bool full, bool gpu)
{
  const auto narrow = Build(image, full, Backend::CPU);
  EXPECT_FALSE(narrow->HasWideNodeIds());
  EXPECT_THROW(narrow->GetWideParents(), itk::ExceptionObject);
  std::vector<Backend> backends{ Backend::CPU };
  if (gpu)
    backends.push_back(Backend::CUDA);
  for (const Backend backend : backends)
  {
    auto filter = itk::CudaImageToAlphaTreeFilter<TImage>::New();
    filter->SetInput(image);
    filter->SetFullyConnected(full);
    filter->SetBackend(backend);
    filter->WideNodeIdsOn();
    filter->Update();
    const itk::AlphaTree * wide = filter->GetOutput();
    ASSERT_TRUE(wide->HasWideNodeIds());
    EXPECT_THROW(wide->GetParents(), itk::ExceptionObject);
    const auto & parents = narrow->GetParents()->CastToSTLConstContainer();
    EXPECT_EQ(wide->GetWideParents()->CastToSTLConstContainer(), std::vector<uint64_t>(parents.begin(), parents.end()));
    EXPECT_EQ(wide->GetNumberOfNodes(), narrow->GetNumberOfNodes());
    EXPECT_EQ(wide->GetLevels()->CastToSTLConstContainer(), narrow->GetLevels()->CastToSTLConstContainer());
    EXPECT_EQ(wide->GetValueRanges()->CastToSTLConstContainer(), narrow->GetValueRanges()->CastToSTLConstContainer());
    EXPECT_NO_THROW(wide->CheckInvariants());
    EXPECT_EQ(wide->ComputeAreas()->CastToSTLConstContainer(), narrow->ComputeAreas()->CastToSTLConstContainer());
    const double top = narrow->GetLevels()->CastToSTLConstContainer().back();
    for (const double alpha : { 0.0, 1.0, top / 3, top })
    {
      EXPECT_EQ(wide->ComputeLabels(alpha)->CastToSTLConstContainer(),
                narrow->ComputeLabels(alpha)->CastToSTLConstContainer());
      EXPECT_EQ(wide->ComputeLabels(alpha, top / 2)->CastToSTLConstContainer(),
                narrow->ComputeLabels(alpha, top / 2)->CastToSTLConstContainer());
      for (const Backend cutBackend : backends)
        for (const double omega : { std::numeric_limits<double>::infinity(), top / 2 })
        {
          auto cut32     = itk::AlphaTreeCutImageFilter<itk::Image<uint32_t, TImage::ImageDimension>>::New();
          auto cut64     = itk::AlphaTreeCutImageFilter<itk::Image<itk::SizeValueType, TImage::ImageDimension>>::New();
          auto cutNarrow = itk::AlphaTreeCutImageFilter<itk::Image<uint32_t, TImage::ImageDimension>>::New();
          auto set       = [&](auto & f, const itk::AlphaTree * tree)
          {
            f->SetInput(tree);
            f->SetBackend(cutBackend);
            f->SetAlpha(alpha);
            f->SetOmega(omega);
          };
          set(cut32, wide);
          set(cut64, wide);
          set(cutNarrow, narrow.GetPointer());
          cut32->Update();
          cut64->Update();
          cutNarrow->Update();
          const auto   n        = narrow->GetNumberOfLeaves();
          const auto * expected = cutNarrow->GetOutput()->GetBufferPointer();
          EXPECT_EQ(cut32->GetObjectCount(), cutNarrow->GetObjectCount());
          EXPECT_EQ(cut64->GetObjectCount(), cutNarrow->GetObjectCount());
          EXPECT_TRUE(std::equal(expected, expected + n, cut32->GetOutput()->GetBufferPointer()))
            << "alpha " << alpha << ", omega " << omega;
          EXPECT_TRUE(std::equal(expected, expected + n, cut64->GetOutput()->GetBufferPointer()))
            << "alpha " << alpha << ", omega " << omega;
        }
    }
    for (const Backend mapBackend : backends)
    {
      using S        = itk::Image<float, TImage::ImageDimension>;
      auto mapWide   = itk::AlphaTreeSaliencyImageFilter<S>::New();
      auto mapNarrow = itk::AlphaTreeSaliencyImageFilter<S>::New();
      mapWide->SetInput(wide);
      mapNarrow->SetInput(narrow);
      mapWide->SetBackend(mapBackend);
      mapNarrow->SetBackend(mapBackend);
      mapWide->Update();
      mapNarrow->Update();
      const auto   samples  = mapNarrow->GetOutput()->GetLargestPossibleRegion().GetNumberOfPixels();
      const auto * expected = mapNarrow->GetOutput()->GetBufferPointer();
      EXPECT_TRUE(std::equal(expected, expected + samples, mapWide->GetOutput()->GetBufferPointer()));
    }
  }
}
} // namespace

TEST(CudaImageToAlphaTreeFilter, WideNodeIdsGiveTheSameTreeCutsAndSaliency)
{
  const bool gpu = chs_test::HasCudaDevice();
  using I2       = itk::Image<uint8_t, 2>;
  using U3       = itk::Image<uint16_t, 3>;
  using F2       = itk::Image<float, 2>;
  for (bool full : { false, true })
  {
    const auto i2 = Noise<uint8_t, 2>(Size<I2>({ 41, 37 }), 31, 30);
    ExpectWideNodeIdsGiveTheSame(i2.GetPointer(), full, gpu);
    const auto u3 = Noise<uint16_t, 3>(Size<U3>({ 11, 9, 7 }), 32, 900);
    ExpectWideNodeIdsGiveTheSame(u3.GetPointer(), full, gpu);
    const auto f2 = Noise<float, 2>(Size<F2>({ 23, 19 }), 33, 6.0);
    ExpectWideNodeIdsGiveTheSame(f2.GetPointer(), full, gpu);
  }
}
