// Tests of itk::CudaImageToSingleLinkageDendrogramFilter and itk::DendrogramToLabelImageFilter: the CPU reference
// against oracles built from the test's own edge list of the pixel graph (Prim, the top-down dendrogram, the
// thresholded components that define the alpha-tree), the CUDA backend against the CPU reference on many images,
// vector pixels, the label-image cut, and bad input; then the ITK-free API's edge keys for images of 2^32 edge slots
// or more (forced on small images, refused sizes, and one such volume when CHS_LARGE_TESTS is set).
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkDendrogramToLabelImageFilter.h"
#include "itkVectorImage.h"
#include "SingleLinkage/chsDendrogramOracles.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <random>

namespace
{
using chs_test::Graph;
using chs_test::MakeImage;
using chs_test::NumberOfPixels;
using chs_test::Size;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

template <typename TImage>
itk::Dendrogram::Pointer
Build(const TImage *                              image,
      bool                                        full,
      Backend                                     backend,
      itk::CudaSingleLinkageEnums::VectorDistance distance = itk::CudaSingleLinkageEnums::VectorDistance::L2)
{
  auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<TImage>::New();
  filter->SetInput(image);
  filter->SetFullyConnected(full);
  filter->SetVectorDistance(distance);
  filter->SetBackend(backend);
  filter->Update();
  if (backend == Backend::CUDA)
  {
    const double n = double(NumberOfPixels(image->GetLargestPossibleRegion().GetSize()));
    EXPECT_LE(double(filter->GetNumberOfContractionLevels()), std::max(1.0, std::ceil(std::log2(n))));
  }
  itk::Dendrogram::Pointer d = filter->GetOutput();
  d->DisconnectPipeline();
  return d;
}

/** The pixel graph of a scalar image as the test builds it: edges to the following neighbours, indexed
 * pixel * K + slot with the slots in increasing (dz, dy, dx) order, weight |a - b|. Edge ids are the graph's indices:
 * the list is in id order, so Prim's (weight, index) order is the definition's (weight, edge id) order. */
template <typename TImage>
Graph
PixelGraph(const TImage * image, bool full, std::vector<uint64_t> & ids)
{
  constexpr unsigned D    = TImage::ImageDimension;
  const auto         size = image->GetLargestPossibleRegion().GetSize();
  const int64_t      nx = size[0], ny = size[1], nz = D == 3 ? int64_t(size[2]) : 1;
  struct Offset
  {
    int64_t dx, dy, dz, raster;
  };
  std::vector<Offset> offsets;
  for (int dz = 0; dz <= (D == 3 ? 1 : 0); ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
      {
        const bool forward = dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0)));
        const int  order   = (dx != 0) + (dy != 0) + (dz != 0);
        if (forward && (full || order == 1))
          offsets.push_back({ dx, dy, dz, (dz * 1000 + dy) * 1000 + dx });
      }
  std::sort(offsets.begin(), offsets.end(), [](const Offset & a, const Offset & b) { return a.raster < b.raster; });
  Graph g;
  g.n            = uint64_t(nx * ny * nz);
  const auto * p = image->GetBufferPointer();
  for (int64_t z = 0; z < nz; ++z)
    for (int64_t y = 0; y < ny; ++y)
      for (int64_t x = 0; x < nx; ++x)
        for (size_t s = 0; s < offsets.size(); ++s)
        {
          const int64_t qx = x + offsets[s].dx, qy = y + offsets[s].dy, qz = z + offsets[s].dz;
          if (qx < 0 || qx >= nx || qy < 0 || qy >= ny || qz >= nz)
            continue;
          const int64_t a = (z * ny + y) * nx + x, b = (qz * ny + qy) * nx + qx;
          // The definition's weight: exact for integers, rounded to float for float and double pixels (for float the
          // double difference is exact, so rounding it once is float's own subtraction).
          const double d = std::fabs(double(p[a]) - double(p[b]));
          g.Add(
            uint32_t(a), uint32_t(b), std::is_floating_point<typename TImage::PixelType>::value ? double(float(d)) : d);
          ids.push_back(uint64_t(a) * offsets.size() + s);
        }
  return g;
}

/** The CPU reference against the oracles on the test's own pixel graph. */
template <typename TImage>
void
ExpectCpuMatchesOracles(const TImage * image, bool full)
{
  std::vector<uint64_t> ids;
  const Graph           g = PixelGraph(image, full, ids);
  const auto            d = Build(image, full, Backend::CPU);
  // Map the graph's edge indices (what the oracle checks) to image edge ids.
  const std::vector<uint64_t> tree = chs_test::PrimTree(g);
  ASSERT_EQ(tree.size() + 1, g.n);
  for (size_t r = 0; r < tree.size(); ++r)
    ASSERT_EQ(d->GetEdgeIds()->at(r), ids[tree[r]]) << "tree edge of rank " << r;
  auto renamed = itk::Dendrogram::New();
  renamed->Allocate(g.n);
  renamed->GetParents()->CastToSTLContainer() = d->GetParents()->CastToSTLConstContainer();
  renamed->GetWeights()->CastToSTLContainer() = d->GetWeights()->CastToSTLConstContainer();
  renamed->GetEdgeU()->CastToSTLContainer()   = d->GetEdgeU()->CastToSTLConstContainer();
  renamed->GetEdgeV()->CastToSTLContainer()   = d->GetEdgeV()->CastToSTLConstContainer();
  for (size_t r = 0; r < tree.size(); ++r)
    (*renamed->GetEdgeIds())[r] = tree[r];
  chs_test::ExpectMatchesOracles(renamed, g);

  // The canonical tree is the alpha-tree: at every level, its partition is the thresholded components.
  auto parents = itk::Dendrogram::IndexContainerType::New();
  auto levels  = itk::Dendrogram::WeightContainerType::New();
  d->ComputeCanonicalTree(parents, levels);
  for (size_t x = g.n; x + 1 < parents->size(); ++x)
    EXPECT_LT(levels->at(x), levels->at(parents->at(x))) << "canonical: no node at its parent's level";
  std::vector<double> distinct(levels->begin() + g.n, levels->end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  for (double alpha : distinct)
  {
    // The component of a pixel at alpha: its highest canonical ancestor of level <= alpha.
    std::vector<uint32_t> top(g.n), label(g.n), number(parents->size(), 0);
    uint32_t              next = 0;
    for (uint32_t v = 0; v < g.n; ++v)
    {
      uint32_t x = v;
      while (parents->at(x) != x && levels->at(parents->at(x)) <= alpha)
        x = parents->at(x);
      if (!number[x])
        number[x] = ++next;
      label[v] = number[x];
    }
    ASSERT_EQ(label, chs_test::ThresholdComponents(g, alpha)) << "alpha " << alpha;
  }
}

template <typename TPixel, unsigned D>
typename itk::Image<TPixel, D>::Pointer
Noise(const itk::Size<D> & size, double lo, double hi, unsigned seed, int smooth = 0)
{
  auto                                   image = MakeImage<itk::Image<TPixel, D>>(size);
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  const size_t                           n = NumberOfPixels(size);
  std::vector<double>                    v(n);
  for (auto & x : v)
    x = u(rng);
  for (int pass = 0; pass < smooth; ++pass) // box blur along x then y: smooth ramps and wide plateaux after rounding
    for (size_t stride : { size_t(1), size_t(size[0]) })
      for (size_t i = stride; i + stride < n; ++i)
        v[i] = (v[i - stride] + v[i] + v[i + stride]) / 3.0;
  for (size_t i = 0; i < n; ++i)
    image->GetBufferPointer()[i] = static_cast<TPixel>(std::is_integral<TPixel>::value ? std::round(v[i]) : v[i]);
  return image;
}

template <typename TImage>
void
ExpectGpuEqualsCpu(
  const TImage *                              image,
  bool                                        full,
  itk::CudaSingleLinkageEnums::VectorDistance distance = itk::CudaSingleLinkageEnums::VectorDistance::L2)
{
  const auto cpu = Build(image, full, Backend::CPU, distance);
  for (int run = 0; run < 2; ++run)
    chs_test::ExpectSameDendrogram(Build(image, full, Backend::CUDA, distance), cpu);
}

} // namespace

TEST(CudaImageToSingleLinkageDendrogramFilter, CpuMatchesOracles2D)
{
  for (bool full : { false, true })
    for (unsigned seed = 0; seed < 3; ++seed)
    {
      SCOPED_TRACE("full " + std::to_string(full) + " seed " + std::to_string(seed));
      ExpectCpuMatchesOracles(Noise<uint8_t, 2>(Size<itk::Image<uint8_t, 2>>({ 13, 9 }), 0, 4, seed).GetPointer(),
                              full);
      ExpectCpuMatchesOracles(Noise<float, 2>(Size<itk::Image<float, 2>>({ 7, 11 }), -5, 5, seed).GetPointer(), full);
      ExpectCpuMatchesOracles(
        Noise<int16_t, 2>(Size<itk::Image<int16_t, 2>>({ 20, 3 }), -300, 300, seed, 2).GetPointer(), full);
    }
}

TEST(CudaImageToSingleLinkageDendrogramFilter, CpuMatchesOracles3D)
{
  for (bool full : { false, true })
    for (unsigned seed = 0; seed < 2; ++seed)
    {
      SCOPED_TRACE("full " + std::to_string(full) + " seed " + std::to_string(seed));
      ExpectCpuMatchesOracles(Noise<uint8_t, 3>(Size<itk::Image<uint8_t, 3>>({ 5, 4, 6 }), 0, 3, seed).GetPointer(),
                              full);
      ExpectCpuMatchesOracles(Noise<double, 3>(Size<itk::Image<double, 3>>({ 4, 6, 3 }), 0, 1, seed).GetPointer(),
                              full);
    }
}

TEST(CudaImageToSingleLinkageDendrogramFilter, ConstantAndTinyImages)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (chs_test::HasCudaDevice())
    backends.push_back(Backend::CUDA);
  using I2 = itk::Image<uint8_t, 2>;
  for (Backend b : backends)
  {
    // A constant image: one canonical node above the leaves.
    const auto d       = Build(MakeImage<I2>(Size<I2>({ 37, 29 }), 7).GetPointer(), false, b);
    auto       parents = itk::Dendrogram::IndexContainerType::New();
    auto       levels  = itk::Dendrogram::WeightContainerType::New();
    d->ComputeCanonicalTree(parents, levels);
    EXPECT_EQ(parents->size(), 37u * 29u + 1u);
    // One pixel: a single leaf, its own root.
    const auto one = Build(MakeImage<I2>(Size<I2>({ 1, 1 }), 3).GetPointer(), true, b);
    EXPECT_EQ(one->GetNumberOfNodes(), 1u);
    EXPECT_EQ(one->GetParents()->at(0), 0u);
    const auto two =
      Build(MakeImage<itk::Image<float, 3>>(Size<itk::Image<float, 3>>({ 1, 1, 2 }), 1.5f).GetPointer(), true, b);
    EXPECT_EQ(std::vector<uint32_t>(two->GetParents()->begin(), two->GetParents()->end()),
              (std::vector<uint32_t>{ 2, 2, 2 }));
  }
}

TEST(CudaImageToSingleLinkageDendrogramFilter, LabelImageCut)
{
  using I2   = itk::Image<uint8_t, 2>;
  using L2   = itk::Image<unsigned long long, 2>;
  auto image = MakeImage<I2>(Size<I2>({ 6, 4 }), 0);
  for (int y = 0; y < 4; ++y)
    for (int x = 3; x < 6; ++x)
      image->SetPixel({ { x, y } }, 200);
  image->SetPixel({ { 0, 0 } }, 5);
  I2::SpacingType spacing;
  spacing[0] = 0.5;
  spacing[1] = 2.0;
  image->SetSpacing(spacing);
  I2::PointType origin;
  origin[0] = -3;
  origin[1] = 4;
  image->SetOrigin(origin);
  auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<I2>::New();
  dendrogram->SetInput(image);
  dendrogram->SetBackend(Backend::CPU);
  auto cut = itk::DendrogramToLabelImageFilter<L2>::New();
  cut->SetInput(dendrogram->GetOutput());
  cut->SetDistance(10.0);
  cut->Update();
  EXPECT_EQ(cut->GetObjectCount(), 2u);
  EXPECT_EQ(cut->GetOutput()->GetSpacing(), spacing);
  EXPECT_EQ(cut->GetOutput()->GetOrigin(), origin);
  EXPECT_EQ(cut->GetOutput()->GetPixel({ { 0, 0 } }), 1u);
  EXPECT_EQ(cut->GetOutput()->GetPixel({ { 5, 3 } }), 2u);
  cut->SetDistance(0.0);
  cut->Update();
  EXPECT_EQ(cut->GetObjectCount(), 3u) << "the pixel of value 5 is apart below distance 5";
  cut->SetNumberOfClusters(1);
  cut->Update();
  EXPECT_EQ(cut->GetObjectCount(), 1u);
  auto cut3 = itk::DendrogramToLabelImageFilter<itk::Image<unsigned long long, 3>>::New();
  cut3->SetInput(dendrogram->GetOutput());
  EXPECT_THROW(cut3->Update(), itk::ExceptionObject) << "a 2-D dendrogram cut into a 3-D image";
}

/** WideNodeIds: the filter's dendrogram with 64-bit node ids is the 32-bit one, on both backends, and its cuts are
 * the same label images. */
TEST(CudaImageToSingleLinkageDendrogramFilter, WideNodeIdsGiveTheSameDendrogramAndCuts)
{
  using I2           = itk::Image<uint8_t, 2>;
  using L2           = itk::Image<uint32_t, 2>;
  auto         image = MakeImage<I2>(Size<I2>({ 61, 43 }), 0);
  std::mt19937 rng(7);
  for (auto it = image->GetBufferPointer(); it != image->GetBufferPointer() + 61 * 43; ++it)
    *it = uint8_t(rng() % 12);
  std::vector<Backend> backends{ Backend::CPU };
  if (chs_test::HasCudaDevice())
    backends.push_back(Backend::CUDA);
  for (bool full : { false, true })
  {
    const auto reference = Build(image.GetPointer(), full, Backend::CPU);
    for (Backend backend : backends)
    {
      SCOPED_TRACE(std::string(backend == Backend::CPU ? "CPU" : "CUDA") + (full ? ", 8-connected" : ""));
      auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<I2>::New();
      filter->SetInput(image);
      filter->SetFullyConnected(full);
      filter->SetBackend(backend);
      filter->WideNodeIdsOn();
      filter->Update();
      ASSERT_TRUE(filter->GetOutput()->HasWideNodeIds());
      chs_test::ExpectSameDendrogram(filter->GetOutput(), reference);
      for (double distance : { 0.0, 2.0, 5.0 })
      {
        auto narrowCut = itk::DendrogramToLabelImageFilter<L2>::New(),
             wideCut   = itk::DendrogramToLabelImageFilter<L2>::New();
        narrowCut->SetInput(reference);
        wideCut->SetInput(filter->GetOutput());
        narrowCut->SetDistance(distance);
        wideCut->SetDistance(distance);
        narrowCut->Update();
        wideCut->Update();
        EXPECT_EQ(wideCut->GetObjectCount(), narrowCut->GetObjectCount());
        EXPECT_TRUE(std::equal(wideCut->GetOutput()->GetBufferPointer(),
                               wideCut->GetOutput()->GetBufferPointer() + 61 * 43,
                               narrowCut->GetOutput()->GetBufferPointer()))
          << "cut at " << distance;
      }
      filter->WideNodeIdsOff();
      filter->Update();
      EXPECT_FALSE(filter->GetOutput()->HasWideNodeIds()) << "the filter runs again with 32-bit ids";
      chs_test::ExpectSameDendrogram(filter->GetOutput(), reference);
    }
  }
}

TEST(CudaImageToSingleLinkageDendrogramFilter, BadInputGetsAClearException)
{
  using F2                   = itk::Image<float, 2>;
  auto                 image = MakeImage<F2>(Size<F2>({ 8, 8 }), 1.0f);
  std::vector<Backend> backends{ Backend::CPU };
  if (chs_test::HasCudaDevice())
    backends.push_back(Backend::CUDA);
  // NaN, and an infinity (an edge between two infinities has no weight |a - b|), are refused alike.
  const std::pair<float, const char *> bad[] = { { std::numeric_limits<float>::quiet_NaN(), "pixel 19 is NaN" },
                                                 { std::numeric_limits<float>::infinity(), "pixel 19 is infinite" } };
  for (Backend b : backends)
    for (const auto & [value, message] : bad)
    {
      image->SetPixel({ { 3, 2 } }, value);
      auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<F2>::New();
      filter->SetInput(image);
      filter->SetBackend(b);
      try
      {
        filter->Update();
        ADD_FAILURE() << "a bad pixel was accepted: " << message;
      }
      catch (const itk::ExceptionObject & e)
      {
        EXPECT_NE(std::string(e.GetDescription()).find(message), std::string::npos) << e.GetDescription();
      }
      EXPECT_EQ(filter->GetOutput()->GetNumberOfVertices(), 0u);
      image->SetPixel({ { 3, 2 } }, 2.0f);
      filter->Update(); // runs again once the input is fixed
      EXPECT_EQ(filter->GetOutput()->GetNumberOfVertices(), 64u);
    }
  auto empty = F2::New();
  empty->SetRegions(Size<F2>({ 0, 4 }));
  empty->Allocate();
  auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<F2>::New();
  filter->SetInput(empty);
  filter->SetBackend(Backend::CPU);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

TEST(CudaImageToSingleLinkageDendrogramFilter, GpuEqualsCpu2D)
{
  CHS_REQUIRE_GPU();
  for (bool full : { false, true })
    for (unsigned seed = 0; seed < 2; ++seed)
    {
      SCOPED_TRACE("full " + std::to_string(full) + " seed " + std::to_string(seed));
      ExpectGpuEqualsCpu(Noise<uint8_t, 2>(itk::Size<2>{ { 257, 131 } }, 0, 255, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<uint8_t, 2>(itk::Size<2>{ { 300, 200 } }, 0, 5, seed, 3).GetPointer(), full); // plateaux
      ExpectGpuEqualsCpu(Noise<uint16_t, 2>(itk::Size<2>{ { 1000, 33 } }, 0, 65535, seed, 2).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<int16_t, 2>(itk::Size<2>{ { 17, 999 } }, -2000, 2000, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<float, 2>(itk::Size<2>{ { 513, 257 } }, -1, 1, seed, 2).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<double, 2>(itk::Size<2>{ { 64, 64 } }, 0, 1e6, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<int32_t, 2>(itk::Size<2>{ { 100, 100 } }, -2e9, 2e9, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(MakeImage<itk::Image<uint8_t, 2>>(itk::Size<2>{ { 1000, 1000 } }, 3).GetPointer(), full);
      ExpectGpuEqualsCpu(chs_test::Checkerboard<itk::Image<uint8_t, 2>>(itk::Size<2>{ { 99, 101 } }).GetPointer(),
                         full);
      ExpectGpuEqualsCpu(Noise<uint8_t, 2>(itk::Size<2>{ { 1, 5000 } }, 0, 255, seed).GetPointer(), full);
    }
  ExpectGpuEqualsCpu(Noise<uint8_t, 2>(itk::Size<2>{ { 2048, 2048 } }, 0, 255, 9, 2).GetPointer(), false);
}

TEST(CudaImageToSingleLinkageDendrogramFilter, GpuEqualsCpu3D)
{
  CHS_REQUIRE_GPU();
  for (bool full : { false, true })
    for (unsigned seed = 0; seed < 2; ++seed)
    {
      SCOPED_TRACE("full " + std::to_string(full) + " seed " + std::to_string(seed));
      ExpectGpuEqualsCpu(Noise<uint8_t, 3>(itk::Size<3>{ { 33, 17, 9 } }, 0, 255, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<uint8_t, 3>(itk::Size<3>{ { 40, 40, 40 } }, 0, 4, seed, 2).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<float, 3>(itk::Size<3>{ { 31, 29, 23 } }, 0, 1, seed).GetPointer(), full);
      ExpectGpuEqualsCpu(Noise<uint16_t, 3>(itk::Size<3>{ { 64, 8, 70 } }, 0, 4000, seed, 1).GetPointer(), full);
      ExpectGpuEqualsCpu(MakeImage<itk::Image<float, 3>>(itk::Size<3>{ { 50, 50, 50 } }, 2.0f).GetPointer(), full);
    }
  ExpectGpuEqualsCpu(Noise<uint8_t, 3>(itk::Size<3>{ { 128, 128, 128 } }, 0, 255, 5, 1).GetPointer(), true);
}

TEST(CudaImageToSingleLinkageDendrogramFilter, VectorPixels)
{
  using V3                                    = itk::Image<itk::Vector<float, 3>, 2>;
  using RGB                                   = itk::VectorImage<uint8_t, 2>;
  auto                                  color = MakeImage<V3>(Size<V3>({ 61, 47 }), V3::PixelType(0.0f));
  std::mt19937                          rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (size_t i = 0; i < 61 * 47; ++i)
    for (int c = 0; c < 3; ++c)
      color->GetBufferPointer()[i][c] = std::round(u(rng) * 4.0f) / 4.0f; // ties across all distances
  auto rgb = RGB::New();
  rgb->SetRegions(Size<RGB>({ 45, 38 }));
  rgb->SetNumberOfComponentsPerPixel(3);
  rgb->Allocate();
  for (size_t i = 0; i < 45 * 38 * 3; ++i)
    rgb->GetBufferPointer()[i] = uint8_t(u(rng) * 255.0f);
  using Distance = itk::CudaSingleLinkageEnums::VectorDistance;
  for (Distance distance : { Distance::L1, Distance::L2, Distance::LInfinity })
  {
    // The CPU reference: cuts equal the thresholded components of the test's own vector distances (L1 and
    // L-infinity of quarters are exact in float).
    if (distance != Distance::L2)
    {
      const auto d = Build(color.GetPointer(), false, Backend::CPU, distance);
      Graph      g;
      g.n = 61 * 47;
      for (int y = 0; y < 47; ++y)
        for (int x = 0; x < 61; ++x)
          for (auto [dx, dy] : { std::pair<int, int>{ 1, 0 }, std::pair<int, int>{ 0, 1 } })
          {
            if (x + dx >= 61 || y + dy >= 47)
              continue;
            const auto & a = color->GetPixel({ { x, y } });
            const auto & b = color->GetPixel({ { x + dx, y + dy } });
            double       w = 0;
            for (int c = 0; c < 3; ++c)
              w = distance == Distance::L1 ? w + std::fabs(a[c] - b[c]) : std::max(w, double(std::fabs(a[c] - b[c])));
            g.Add(uint32_t(y * 61 + x), uint32_t((y + dy) * 61 + x + dx), w);
          }
      for (double t : { 0.0, 0.25, 0.5, 0.75, 1.0 })
      {
        const auto cut = d->ComputeClustersAtDistance(t);
        EXPECT_EQ(std::vector<uint32_t>(cut->begin(), cut->end()), chs_test::ThresholdComponents(g, t)) << t;
      }
    }
    if (chs_test::HasCudaDevice())
      for (bool full : { false, true })
      {
        ExpectGpuEqualsCpu(color.GetPointer(), full, distance);
        ExpectGpuEqualsCpu(rgb.GetPointer(), full, distance);
      }
  }
}

TEST(CudaImageToSingleLinkageDendrogramFilter, GpuFailureLeavesNothingAndRunsAgain)
{
  CHS_REQUIRE_GPU();
  using I2         = itk::Image<uint8_t, 2>;
  const auto image = Noise<uint8_t, 2>(Size<I2>({ 300, 200 }), 0, 20, 4);
  const auto cpu   = Build(image.GetPointer(), false, Backend::CPU);
  for (int k = 1; k <= 25; ++k)
  {
    auto filter = itk::CudaImageToSingleLinkageDendrogramFilter<I2>::New();
    filter->SetInput(image);
    filter->SetBackend(Backend::CUDA);
    chs::testing::FailDeviceAllocationAfter(k);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "allocation " << k;
    chs::testing::FailDeviceAllocationAfter(0);
    EXPECT_EQ(filter->GetOutput()->GetNumberOfVertices(), 0u);
    filter->Modified();
    filter->Update();
    chs_test::ExpectSameDendrogram(filter->GetOutput(), cpu);
  }
}

// The ITK-free API: the edge keys of images of 2^32 edge slots or more (include/chs/SingleLinkage.h).
namespace
{
/** The arrays of one dendrogram of n vertices, as a backend writes them. */
template <typename TNode>
struct ArraysT
{
  std::vector<TNode>    parent, u, v;
  std::vector<double>   weight;
  std::vector<uint64_t> edge;
  explicit ArraysT(uint64_t n)
    : parent(2 * n - 1)
    , u(n - 1)
    , v(n - 1)
    , weight(n - 1)
    , edge(n - 1)
  {
  }
  chs::DendrogramArraysT<TNode>
  Out()
  {
    return { parent.data(), weight.data(), edge.data(), u.data(), v.data() };
  }
  template <typename TOther>
  bool
  operator==(const ArraysT<TOther> & o) const
  {
    const auto same = [](const auto & a, const auto & b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); };
    return same(parent, o.parent) && same(u, o.u) && same(v, o.v) && weight == o.weight && edge == o.edge;
  }
};
using Arrays     = ArraysT<uint32_t>;
using WideArrays = ArraysT<uint64_t>;

chs::Grid
GridOf(int64_t nx, int64_t ny, int64_t nz)
{
  chs::Grid g;
  g.dimension = nz > 1 ? 3 : 2;
  g.size[0]   = uint64_t(nx);
  g.size[1]   = uint64_t(ny);
  g.size[2]   = uint64_t(nz);
  return g;
}

using chs_test::InvalidArgumentMessage;

/** The CUDA dendrogram of an image with 32-bit edge keys and with the wide keys forced (twice), into 32-bit and
 * into 64-bit node ids, equals the CPU reference's of either width. */
template <typename T>
void
ExpectWideKeysGiveTheSameDendrogram(const std::vector<T> &    pixels,
                                    const chs::Grid &         grid,
                                    chs::ImageGraphParameters p,
                                    const std::string &       what)
{
  SCOPED_TRACE(what + (p.fullyConnected ? ", fully connected" : ""));
  const uint64_t n = grid.NumberOfVoxels();
  Arrays         cpu(n);
  WideArrays     cpuWide(n);
  chs::ImageSingleLinkageCPU(pixels.data(), grid, p, cpu.Out());
  chs::ImageSingleLinkageCPU(pixels.data(), grid, p, cpuWide.Out());
  EXPECT_TRUE(cpuWide == cpu) << "CPU, 64-bit node ids";
  for (bool wide : { false, true, true })
  {
    p.forceWideEdgeKeys = wide;
    Arrays     gpu(n);
    WideArrays gpuWide(n);
    chs::ImageSingleLinkageCUDA(pixels.data(), grid, p, gpu.Out(), {});
    chs::ImageSingleLinkageCUDA(pixels.data(), grid, p, gpuWide.Out(), {});
    EXPECT_TRUE(gpu == cpu) << (wide ? "wide" : "32-bit") << " keys";
    EXPECT_TRUE(gpuWide == cpu) << (wide ? "wide" : "32-bit") << " keys, 64-bit node ids";
  }
}

template <typename T>
std::vector<T>
RandomValues(uint64_t count, double lo, double hi, unsigned seed)
{
  std::mt19937                           rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T>                         v(count);
  for (auto & x : v)
    x = static_cast<T>(std::is_integral<T>::value ? std::round(u(rng)) : u(rng));
  return v;
}
} // namespace

TEST(ImageSingleLinkageCUDA, WideEdgeKeysAndNodeIdsGiveTheSameDendrogram)
{
  CHS_REQUIRE_GPU();
  for (bool full : { false, true })
  {
    chs::ImageGraphParameters p;
    p.fullyConnected = full;
    const auto g2 = GridOf(203, 77, 1), g3 = GridOf(37, 21, 19);
    for (const auto & g : { g2, g3, GridOf(1, 1, 1), GridOf(2, 1, 1), GridOf(3, 1, 2) })
    {
      const uint64_t n = g.NumberOfVoxels();
      const auto     d = std::to_string(g.dimension) + "-D";
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<uint8_t>(n, 0, 6, 1), g, p, d + " uint8");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<int8_t>(n, -128, 127, 2), g, p, d + " int8");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<uint16_t>(n, 0, 65535, 3), g, p, d + " uint16");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<int16_t>(n, -40, 40, 4), g, p, d + " int16");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<int32_t>(n, -2e9, 2e9, 5), g, p, d + " int32");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<float>(n, -1, 1, 6), g, p, d + " float");
      ExpectWideKeysGiveTheSameDendrogram(RandomValues<double>(n, -1e300, 1e300, 7), g, p, d + " double (inf weights)");
      auto v = RandomValues<float>(n, 0, 4, 8);
      for (auto & x : v)
        x = std::round(x) / 4.0f; // plateaux: many equal weights, ordered by edge index alone
      ExpectWideKeysGiveTheSameDendrogram(v, g, p, d + " float plateaux");
      chs::ImageGraphParameters rgb = p;
      rgb.components                = 3;
      for (auto distance : { chs::VectorDistance::L1, chs::VectorDistance::L2, chs::VectorDistance::LInfinity })
      {
        rgb.distance = distance;
        ExpectWideKeysGiveTheSameDendrogram(RandomValues<uint8_t>(3 * n, 0, 255, 9), g, rgb, d + " RGB");
      }
    }
  }
}

/** Each pixel type's limit on edge slots, checked before any pixel is read (the one-value arrays are never read): the
 * weight code and the edge index share a 64-bit key. */
TEST(ImageSingleLinkage, EdgeSlotLimitsFollowTheWeightCodes)
{
  std::vector<std::function<void(const chs::Grid &, const chs::ImageGraphParameters &)>> backends{
    [](const chs::Grid & g, const chs::ImageGraphParameters & p)
    {
      const std::vector<float> one(3);
      chs::ImageSingleLinkageCPU(one.data(), g, p, Arrays(2).Out());
    }
  };
  if (chs_test::HasCudaDevice())
    backends.push_back(
      [](const chs::Grid & g, const chs::ImageGraphParameters & p)
      {
        const std::vector<float> one(3);
        chs::ImageSingleLinkageCUDA(one.data(), g, p, Arrays(2).Out(), {});
      });
  chs::ImageGraphParameters full;
  full.fullyConnected = true;
  for (const auto & build : backends)
  {
    // Float weights: 2^33 edge slots. 1024 x 1024 x 700, 26-connected: 9,542,041,600 slots.
    std::string what = InvalidArgumentMessage([&] { build(GridOf(1024, 1024, 700), full); });
    EXPECT_NE(what.find("9542041600 edge slots (pixels x 13); fewer than 2^33 are supported"), std::string::npos)
      << what;
    // Vectors too, whatever their components' type.
    chs::ImageGraphParameters rgb = full;
    rgb.components                = 3;
    what                          = InvalidArgumentMessage([&] { build(GridOf(1024, 1024, 700), rgb); });
    EXPECT_NE(what.find("fewer than 2^33 are supported"), std::string::npos) << what;
  }
  // 32-bit integers: 2^32 edge slots. 720 x 720 x 640, 26-connected: 4,313,088,000 slots.
  const std::vector<int32_t> i32(1);
  const std::string          what = InvalidArgumentMessage(
    [&] { chs::ImageSingleLinkageCPU(i32.data(), GridOf(720, 720, 640), full, Arrays(2).Out()); });
  EXPECT_NE(what.find("4313088000 edge slots (pixels x 13); fewer than 2^32 are supported"), std::string::npos) << what;
  // More than MaximumDendrogramVertices pixels, for any pixel type.
  const std::vector<uint8_t> u8(1);
  const std::string          pixels = InvalidArgumentMessage(
    [&] { chs::ImageSingleLinkageCPU(u8.data(), GridOf(65536, 32768, 1), full, Arrays(2).Out()); });
  EXPECT_NE(pixels.find("the image has 2147483648 pixels; at most 2147483647 are supported"), std::string::npos)
    << pixels;
  // 64-bit node ids: the CUDA backend numbers vertices in 32 bits (at most 2^32 - 1 pixels).
  if (chs_test::HasCudaDevice())
  {
    const std::string wide = InvalidArgumentMessage(
      [&] { chs::ImageSingleLinkageCUDA(u8.data(), GridOf(65536, 65536, 1), full, WideArrays(2).Out(), {}); });
    EXPECT_NE(wide.find("the image has 4294967296 pixels; at most 4294967295 are supported"), std::string::npos)
      << wide;
  }
}

/** A run with wide keys that does not fit the device (seen with 8 GiB free) is refused with chs::DeviceMemoryError
 * before it allocates or reads a pixel (the one-value arrays are never read), and the next run goes on. */
TEST(ImageSingleLinkageCUDA, WideRunThatDoesNotFitIsRefusedBeforeAllocating)
{
  CHS_REQUIRE_GPU();
  chs::ImageGraphParameters full;
  full.fullyConnected            = true;
  const auto                 big = GridOf(720, 720, 640); // 4.31e9 edge slots
  const std::vector<uint8_t> u8(1);
  const std::vector<float>   f32(1);
  chs::testing::SetDeviceMemoryLimit(uint64_t(8) << 30);
  const uint64_t allocations = chs::testing::DeviceAllocations();
  for (const auto & run :
       { std::function<void()>([&] { chs::ImageSingleLinkageCUDA(u8.data(), big, full, Arrays(2).Out(), {}); }),
         std::function<void()>([&] { chs::ImageSingleLinkageCUDA(f32.data(), big, full, Arrays(2).Out(), {}); }) })
  {
    try
    {
      run();
      ADD_FAILURE() << "a dendrogram of 331M voxels was built with a one-value array";
    }
    catch (const chs::DeviceMemoryError & e)
    {
      EXPECT_NE(std::string(e.what()).find("the single-linkage dendrogram of 720 x 720 x 640 voxels"),
                std::string::npos)
        << e.what();
    }
  }
  // 2^31 pixels, past the 32-bit node ids: refused by their memory alone.
  try
  {
    chs::ImageSingleLinkageCUDA(u8.data(), GridOf(65536, 32768, 1), full, WideArrays(2).Out(), {});
    ADD_FAILURE() << "a dendrogram of 2^31 pixels was built with a one-value array";
  }
  catch (const chs::DeviceMemoryError & e)
  {
    EXPECT_NE(std::string(e.what()).find("the single-linkage dendrogram of 65536 x 32768 voxels"), std::string::npos)
      << e.what();
  }
  EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << "nothing allocated";
  chs::testing::SetDeviceMemoryLimit(0);
  const auto small = GridOf(40, 30, 20);
  const auto v     = RandomValues<uint8_t>(small.NumberOfVoxels(), 0, 9, 3);
  Arrays     a(small.NumberOfVoxels()), b(small.NumberOfVoxels());
  chs::ImageSingleLinkageCUDA(v.data(), small, full, a.Out(), {});
  chs::ImageSingleLinkageCPU(v.data(), small, full, b.Out());
  EXPECT_TRUE(a == b) << "the run after the refusals";
}

/** 720 x 720 x 640 uint8 voxels, 26-connected: 331,776,000 voxels and 4,313,088,000 edge slots, more than 32-bit edge
 * indices number: the CUDA dendrogram (wide keys) equals the CPU reference's, when CHS_LARGE_TESTS is set. */
TEST(ImageSingleLinkageCUDA, VolumeBeyond32BitEdgeIds)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  using Clock      = std::chrono::steady_clock;
  const auto     g = GridOf(720, 720, 640);
  const uint64_t n = g.NumberOfVoxels();
  // Smooth noise: long ramps and plateaux, as in a CT volume, in 64 grey levels.
  std::vector<uint8_t> v(n);
  std::mt19937         rng(17);
  for (uint64_t i = 0; i < n; ++i)
    v[i] = uint8_t((i % 720) / 40 + (i / 720 % 720) / 60 + (i / (720 * 720)) / 80 + rng() % 8);
  chs::ImageGraphParameters p;
  p.fullyConnected = true;
  Arrays       gpu(n);
  chs::RunInfo info;
  const auto   t0 = Clock::now();
  try
  {
    chs::ImageSingleLinkageCUDA(v.data(), g, p, gpu.Out(), {}, &info);
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << "CUDA " << std::chrono::duration<double>(Clock::now() - t0).count() << " s (kernels "
            << info.kernelMilliseconds << " ms, peak device memory " << info.peakDeviceBytes << " bytes, reserved "
            << info.reservedDeviceBytes << ")" << std::endl;
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  const auto t1 = Clock::now();
  Arrays     cpu(n);
  chs::ImageSingleLinkageCPU(v.data(), g, p, cpu.Out());
  std::cout << "CPU reference " << std::chrono::duration<double>(Clock::now() - t1).count() << " s" << std::endl;
  // The first difference only: the arrays hold hundreds of millions of entries.
  const auto at = [](const auto & a, const auto & b)
  { return std::mismatch(a.begin(), a.end(), b.begin()).first - a.begin(); };
  EXPECT_EQ(size_t(at(gpu.parent, cpu.parent)), gpu.parent.size()) << "parents differ";
  EXPECT_EQ(size_t(at(gpu.edge, cpu.edge)), gpu.edge.size()) << "edge ids differ";
  EXPECT_EQ(size_t(at(gpu.weight, cpu.weight)), gpu.weight.size()) << "weights differ";
  EXPECT_EQ(size_t(at(gpu.u, cpu.u)), gpu.u.size()) << "first ends differ";
  EXPECT_EQ(size_t(at(gpu.v, cpu.v)), gpu.v.size()) << "second ends differ";
  EXPECT_GE(*std::max_element(gpu.edge.begin(), gpu.edge.end()), uint64_t(1) << 32) << "a tree edge beyond 2^32";
}
