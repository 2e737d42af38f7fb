// Tests of itk::CudaConnectedComponentImageFilter and of the chs connected-components backends it calls.
// Oracles: ITK's ConnectedComponentImageFilter (binary mode) and a brute-force flood fill (flat zones, stats); the
// object factory against an unchanged ITK pipeline without it.
// What the connected-components tests share: ITK's filter as oracle, inputs, helpers.
#ifndef itkCudaConnectedComponentTestSupport_h
#define itkCudaConnectedComponentTestSupport_h

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkCudaConnectedComponentImageFilterFactory.h"
#include "itkConnectedComponentImageFilter.h"
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "Common/chsTestImages.h"
#include "itkImageRegionConstIteratorWithIndex.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <limits>
#include <map>
#include <thread>

namespace
{
using namespace chs_test;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

template <typename TOut>
struct Labeling
{
  typename TOut::Pointer labels;
  itk::SizeValueType     count;
};

template <typename TIn, typename TOut>
Labeling<TOut>
RunModule(const TIn *              input,
          Backend                  backend,
          bool                     full,
          const TIn *              mask       = nullptr,
          bool                     flat       = false,
          typename TOut::PixelType background = 0)
{
  auto filter = itk::CudaConnectedComponentImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  if (mask)
    filter->SetMaskImage(mask);
  filter->SetFullyConnected(full);
  filter->SetFlatZones(flat);
  filter->SetBackgroundValue(background);
  filter->SetBackend(backend);
  filter->Update();
  EXPECT_EQ(filter->GetLastBackend(), backend);
  return { filter->GetOutput(), filter->GetObjectCount() };
}

template <typename TIn, typename TOut>
Labeling<TOut>
RunITK(const TIn * input, bool full, const TIn * mask = nullptr, typename TOut::PixelType background = 0)
{
  auto filter = itk::ConnectedComponentImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  if (mask)
    filter->SetMaskImage(mask);
  filter->SetFullyConnected(full);
  filter->SetBackgroundValue(background);
  filter->Update();
  return { filter->GetOutput(), filter->GetObjectCount() };
}

/** The module's backend equals ITK's filter voxel for voxel (and run after run on the GPU). */
template <typename TIn, typename TOut>
void
ExpectSameAsITK(const TIn * input, Backend backend, const TIn * mask = nullptr, typename TOut::PixelType bg = 0)
{
  for (bool full : { false, true })
  {
    SCOPED_TRACE(full ? "fully connected" : "face connected");
    const auto expected = RunITK<TIn, TOut>(input, full, mask, bg);
    const int  runs     = backend == Backend::CUDA ? 3 : 1;
    for (int run = 0; run < runs; ++run)
    {
      const auto got = RunModule<TIn, TOut>(input, backend, full, mask, false, bg);
      EXPECT_EQ(got.count, expected.count);
      EXPECT_TRUE(SameVoxels(got.labels.GetPointer(), expected.labels.GetPointer()));
    }
  }
}

using U8_2  = itk::Image<unsigned char, 2>;
using U8_3  = itk::Image<unsigned char, 3>;
using S16_2 = itk::Image<short, 2>;
using F32_3 = itk::Image<float, 3>;
using L32_2 = itk::Image<unsigned int, 2>;
using L32_3 = itk::Image<unsigned int, 3>;
using L16_2 = itk::Image<unsigned short, 2>;
using L64_3 = itk::Image<unsigned long, 3>;

// Sizes around the tile sizes (32 x 32 in 2D, 32 x 8 x 8 in 3D; for binary images labelled on their runs, 32 x 128
// and 32 x 16 x 16) and degenerate shapes. On the GPU, binary images with rows of 32 voxels or more are labelled on
// their runs, narrower ones voxel by voxel.
const std::vector<std::vector<itk::SizeValueType>> kSizes2D = { { 1, 1 },     { 1, 100 },  { 100, 1 },
                                                                { 31, 33 },   { 32, 32 },  { 65, 97 },
                                                                { 257, 129 }, { 260, 75 }, { 64, 100 } };
const std::vector<std::vector<itk::SizeValueType>> kSizes3D = { { 1, 1, 1 },    { 1, 1, 40 },   { 33, 9, 17 },
                                                                { 32, 8, 8 },   { 70, 19, 23 }, { 33, 16, 16 },
                                                                { 31, 17, 33 }, { 68, 35, 37 }, { 100, 17, 33 } };

template <typename TImage, typename TLabel>
void
RandomInputsSameAsITK(Backend backend, const std::vector<std::vector<itk::SizeValueType>> & sizes)
{
  unsigned seed = 1;
  for (const auto & s : sizes)
    for (double density : { 0.05, 0.3, 0.5, 0.6, 0.9 })
    {
      SCOPED_TRACE(::testing::Message() << "size " << s[0] << "x" << s[1] << " density " << density);
      typename TImage::SizeType size;
      for (unsigned d = 0; d < TImage::ImageDimension; ++d)
        size[d] = s[d];
      auto input = RandomImage<TImage>(size, density, seed++, 3);
      ExpectSameAsITK<TImage, TLabel>(input, backend);
    }
}

template <typename TImage, typename TLabel>
void
StructuredInputsSameAsITK(Backend backend)
{
  constexpr unsigned D = TImage::ImageDimension;
  for (const auto size : { D == 2 ? Size<TImage>({ 203, 150 }) : Size<TImage>({ 45, 38, 29 }),
                           D == 2 ? Size<TImage>({ 204, 150 }) : Size<TImage>({ 48, 38, 29 }) }) // 204, 48: row masks
  {
    SCOPED_TRACE(::testing::Message() << "size " << size);
    ExpectSameAsITK<TImage, TLabel>(MakeImage<TImage>(size, 0), backend); // all background
    ExpectSameAsITK<TImage, TLabel>(MakeImage<TImage>(size, 7), backend); // all foreground
    ExpectSameAsITK<TImage, TLabel>(Checkerboard<TImage>(size), backend); // worst case for full connectivity
    ExpectSameAsITK<TImage, TLabel>(Spiral<TImage>(size), backend);       // long chains across tiles
    ExpectSameAsITK<TImage, TLabel>(BlobImage<TImage>(size, 3, 0.5, 11), backend);
    if (D == 3)
    {
      // Single-voxel-thick planes, alternating orientation.
      auto planes = MakeImage<TImage>(size, 0);
      for (itk::ImageRegionIterator<TImage> it(planes, planes->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
      {
        const auto i = it.GetIndex();
        it.Set((i[2] % 4 == 1) || (i[0] % 5 == 2) ? 1 : 0);
      }
      ExpectSameAsITK<TImage, TLabel>(planes, backend);
    }
  }
}

} // namespace

// ---------------------------------------------------------------- CPU reference against ITK's filter

// ---------------------------------------------------------------- flat zones against a flood fill

template <typename TImage, typename TLabel>
void
FlatZonesSameAsFloodFill(Backend backend)
{
  constexpr unsigned D    = TImage::ImageDimension;
  const auto         size = D == 2 ? Size<TImage>({ 97, 66 }) : Size<TImage>({ 35, 20, 17 });
  for (unsigned seed : { 1u, 2u })
    for (bool withMask : { false, true })
      for (bool full : { false, true })
      {
        auto                 input = RandomImage<TImage>(size, 0.7, seed, 2); // values 0, 1, 2
        auto                 mask  = RandomImage<TImage>(size, 0.8, seed + 10);
        std::vector<uint8_t> maskFlags(mask->GetBufferPointer(), mask->GetBufferPointer() + NumberOfPixels(size));
        uint64_t             expectedCount = 0;
        auto                 expected =
          FloodFillLabels<TImage, TLabel>(input, full, true, withMask ? &maskFlags : nullptr, expectedCount);
        const int runs = backend == Backend::CUDA ? 3 : 1;
        for (int run = 0; run < runs; ++run)
        {
          auto got = RunModule<TImage, TLabel>(input, backend, full, withMask ? mask.GetPointer() : nullptr, true);
          EXPECT_EQ(got.count, expectedCount);
          EXPECT_TRUE(SameVoxels(got.labels.GetPointer(), expected.GetPointer()));
        }
      }
}

/** Signed integer images are labelled on the GPU as the unsigned integers of their bits
 * (src/ConnectedComponents/chsConnectedComponentsSigned.cu): negative values are foreground in binary mode and
 * flat zones of their own. Values -2..2, both modes, against ITK and a flood fill. */
template <typename TImage, typename TLabel>
void
SignedImageSameAsITKAndFloodFill(const typename TImage::SizeType & size, unsigned seed)
{
  auto input = RandomImage<TImage>(size, 0.8, seed, 4);
  for (auto p = input->GetBufferPointer(), end = p + NumberOfPixels(size); p != end; ++p)
    *p = static_cast<typename TImage::PixelType>(*p - 2);
  ExpectSameAsITK<TImage, TLabel>(input, Backend::CUDA);
  for (bool full : { false, true })
  {
    uint64_t   expectedCount = 0;
    const auto expected      = FloodFillLabels<TImage, TLabel>(input, full, true, nullptr, expectedCount);
    const auto got           = RunModule<TImage, TLabel>(input, Backend::CUDA, full, nullptr, true);
    EXPECT_EQ(got.count, expectedCount);
    EXPECT_TRUE(SameVoxels(got.labels.GetPointer(), expected.GetPointer()));
  }
}

// ---------------------------------------------------------------- GPU against ITK (and so the CPU reference)

namespace
{
/** `objects` isolated pixels (value 1) on a lattice of step 2, on a background of `background`. */
template <typename TImage>
typename TImage::Pointer
IsolatedPixels(const typename TImage::SizeType & size,
               itk::SizeValueType                objects,
               typename TImage::PixelType        background = 0)
{
  auto                     image  = MakeImage<TImage>(size, background);
  const itk::SizeValueType perRow = (size[0] + 1) / 2;
  for (itk::SizeValueType j = 0; j < objects; ++j)
  {
    typename TImage::IndexType index;
    index[0] = static_cast<itk::IndexValueType>(2 * (j % perRow));
    index[1] = static_cast<itk::IndexValueType>(2 * (j / perRow));
    image->SetPixel(index, 1);
  }
  return image;
}
} // namespace

// ---------------------------------------------------------------- the 64-bit index path on small inputs

// On the voxel-by-voxel path, labels narrower than the union-find index (16/32-bit labels on the 64-bit path, 16-bit
// on the 32-bit path) are written in place: without statistics in ranges of freed memory, with statistics over the
// parents, then packed. Wider ones use a buffer of their own. All against the CPU.
template <typename TLabel>
void
GPUMatchesCPUThroughTheAPI(bool wide, long long background, bool offsetLabels = false)
{
  // Random voxels (over 255 objects) and blobs (fewer: 1-byte transfers); rows of 67, 68 and 128 voxels. Binary
  // images are labelled on their runs where the run slots fit (NodePathFits): 32- and 64-bit labels, and 16-bit ones
  // at 128 voxels; the others voxel by voxel. `wide`: 64-bit indices or runs; `offsetLabels`: the runs' arrangement
  // of the largest volumes (32-bit runs, labels above the run count).
  for (const itk::SizeValueType nx : { 67, 68, 128 })
    for (bool blobs : { false, true })
      for (bool full : { false, true })
        for (bool flat : { false, true })
        {
          const auto size  = Size<U8_3>({ nx, 45, 33 });
          auto       input = blobs ? BlobImage<U8_3>(size, 3, 0.5, 9) : RandomImage<U8_3>(size, 0.55, 21, 2);
          chs::Grid  grid;
          grid.dimension = 3;
          grid.size[0]   = nx;
          grid.size[1]   = 45;
          grid.size[2]   = 33;
          chs::ConnectedComponentParameters p;
          p.fullyConnected    = full;
          p.mode              = flat ? chs::ConnectedComponentMode::FlatZones : chs::ConnectedComponentMode::Binary;
          p.maximumLabel      = std::numeric_limits<TLabel>::max();
          p.backgroundLabel   = background;
          p.computeStatistics = true;
          const size_t                      n = grid.NumberOfVoxels();
          std::vector<TLabel>               cpu(n), gpu(n, TLabel(0x5a));
          chs::ConnectedComponentStatistics cs, gs;
          const uint64_t                    cpuCount =
            chs::LabelConnectedComponentsCPU(input->GetBufferPointer(), nullptr, cpu.data(), grid, p, &cs);
          p.forceWideIndex    = wide;
          p.forceOffsetLabels = offsetLabels;
          // Two runs with statistics, one without (in place: the final link's ranges, not resolve and pack).
          for (int run = 0; run < 3; ++run)
          {
            p.computeStatistics = run < 2;
            std::fill(gpu.begin(), gpu.end(), TLabel(0x5a));
            const uint64_t gpuCount = chs::LabelConnectedComponentsCUDA(
              input->GetBufferPointer(), nullptr, gpu.data(), grid, p, &gs, chs::ExecutionContext{});
            SCOPED_TRACE(::testing::Message()
                         << "nx " << nx << " blobs " << blobs << " wide " << wide << " offset " << offsetLabels
                         << " full " << full << " flat " << flat << " statistics " << p.computeStatistics);
            EXPECT_EQ(cpuCount, gpuCount);
            EXPECT_EQ(cpu, gpu);
            if (p.computeStatistics)
            {
              EXPECT_EQ(cs.voxelCount, gs.voxelCount);
              EXPECT_EQ(cs.minimum, gs.minimum);
              EXPECT_EQ(cs.maximum, gs.maximum);
            }
          }
        }
}

// GPU memory: the input, the labels and one label-sized working buffer, plus the per-4096-voxel root counts and
// the scan's temporary storage. Holds for labels of 16 bits and more below 2^31 voxels, of 32 bits and more above
// (the 64-bit path's parents take 8 bytes a voxel).
template <typename TLabel>
void
PeakMemoryWithinBound(bool wide)
{
  const size_t         nx = 256, ny = 256, nz = 64, n = nx * ny * nz;
  std::vector<uint8_t> input(n);
  for (size_t i = 0; i < n; ++i)
    input[i] = (i * 2654435761u >> 13) % 3 == 0;
  chs::Grid grid;
  grid.dimension = 3;
  grid.size[0]   = nx;
  grid.size[1]   = ny;
  grid.size[2]   = nz;
  chs::ConnectedComponentParameters p;
  p.fullyConnected = true;
  p.maximumLabel   = std::numeric_limits<TLabel>::max();
  p.forceWideIndex = wide;
  std::vector<TLabel> labels(n);
  chs::RunInfo        info;
  chs::LabelConnectedComponentsCUDA(
    input.data(), nullptr, labels.data(), grid, p, nullptr, chs::ExecutionContext{}, &info);
  const size_t index = wide ? 8 : 4;
  const size_t bound = n * (sizeof(uint8_t) + 2 * sizeof(TLabel)) + 2 * (n / 4096) * index + (1u << 16);
  EXPECT_LE(info.peakDeviceBytes, bound) << sizeof(TLabel) << "-byte labels, wide " << wide;
  EXPECT_GE(info.peakDeviceBytes, n * (sizeof(uint8_t) + 1)); // the input, and at least a byte a label
}

// ---------------------------------------------------------------- statistics against a brute-force count

template <typename TImage>
void
StatisticsMatchBruteForce(Backend backend)
{
  using LabelImage         = itk::Image<unsigned int, TImage::ImageDimension>;
  constexpr unsigned D     = TImage::ImageDimension;
  const auto         size  = D == 2 ? Size<TImage>({ 301, 203 }) : Size<TImage>({ 61, 47, 35 });
  auto               input = BlobImage<TImage>(size, 2, 0.45, 17);
  auto               image = MakeImage<TImage>(size);
  // Shift the origin index to check that bounding boxes are in the image's index space.
  typename TImage::IndexType start;
  start.Fill(-3);
  input->SetRegions(typename TImage::RegionType(start, size));
  for (bool full : { false, true })
  {
    auto filter = itk::CudaConnectedComponentImageFilter<TImage, LabelImage>::New();
    filter->SetInput(input);
    filter->SetFullyConnected(full);
    filter->SetBackend(backend);
    filter->ComputeStatisticsOn();
    filter->Update();
    const LabelImage *                                                                    labels = filter->GetOutput();
    std::map<unsigned, itk::SizeValueType>                                                count;
    std::map<unsigned, std::pair<typename TImage::IndexType, typename TImage::IndexType>> box;
    for (itk::ImageRegionConstIteratorWithIndex<LabelImage> it(labels, labels->GetLargestPossibleRegion());
         !it.IsAtEnd();
         ++it)
    {
      const unsigned l = it.Get();
      if (l == 0)
        continue;
      const auto idx = it.GetIndex();
      if (count[l]++ == 0)
        box[l] = std::make_pair(idx, idx);
      for (unsigned d = 0; d < D; ++d)
      {
        box[l].first[d]  = std::min(box[l].first[d], idx[d]);
        box[l].second[d] = std::max(box[l].second[d], idx[d]);
      }
    }
    ASSERT_EQ(count.size(), filter->GetObjectCount());
    ASSERT_EQ(filter->GetVoxelCounts().size(), filter->GetObjectCount());
    ASSERT_GT(filter->GetObjectCount(), 10u);
    for (const auto & c : count)
    {
      EXPECT_EQ(filter->GetVoxelCount(c.first), c.second) << "label " << c.first;
      const auto region = filter->GetBoundingBox(c.first);
      EXPECT_EQ(region.GetIndex(), box[c.first].first) << "label " << c.first;
      for (unsigned d = 0; d < D; ++d)
        EXPECT_EQ(region.GetIndex()[d] + itk::IndexValueType(region.GetSize()[d]) - 1, box[c.first].second[d]);
    }
    EXPECT_THROW(filter->GetVoxelCount(0), itk::ExceptionObject);
    EXPECT_THROW(filter->GetVoxelCount(static_cast<unsigned>(filter->GetObjectCount() + 1)), itk::ExceptionObject);
  }
}

// ---------------------------------------------------------------- pipeline conventions

// ---------------------------------------------------------------- bad input

inline void
ExpectLabelOverflow(Backend backend)
{
  // 450 isolated pixels do not fit unsigned char labels; the message names the count.
  auto input = MakeImage<U8_2>(Size<U8_2>({ 60, 30 }));
  for (itk::ImageRegionIterator<U8_2> it(input, input->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    it.Set(it.GetIndex()[0] % 2 == 0 && it.GetIndex()[1] % 2 == 0);
  auto filter = itk::CudaConnectedComponentImageFilter<U8_2, U8_2>::New();
  filter->SetInput(input);
  filter->SetBackend(backend);
  try
  {
    filter->Update();
    FAIL() << "no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("450 objects"), std::string::npos) << e.GetDescription();
  }
  EXPECT_EQ(filter->GetObjectCount(), 0u);
  EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr); // nothing half-written is left
  // The filter runs again once the input fits.
  input->FillBuffer(0);
  const U8_2::IndexType where = { { 3, 3 } };
  input->SetPixel(where, 1);
  input->Modified();
  filter->Update();
  EXPECT_EQ(filter->GetObjectCount(), 1u);
  EXPECT_EQ(filter->GetOutput()->GetPixel(where), 1);
}

namespace
{
/** An unchanged ITK pipeline: ConnectedComponentImageFilter::New(), as code written for ITK alone calls it. */
template <typename TIn, typename TOut>
std::pair<std::vector<typename TOut::PixelType>, itk::SizeValueType>
ItkPipeline(const TIn * input, const TIn * mask, bool full, typename TOut::PixelType background, std::string & name)
{
  auto filter = itk::ConnectedComponentImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  if (mask)
    filter->SetMaskImage(mask);
  filter->SetFullyConnected(full);
  filter->SetBackgroundValue(background);
  filter->Update();
  name           = filter->GetNameOfClass();
  const auto * o = filter->GetOutput();
  return { std::vector<typename TOut::PixelType>(o->GetBufferPointer(),
                                                 o->GetBufferPointer() + o->GetBufferedRegion().GetNumberOfPixels()),
           filter->GetObjectCount() };
}

template <typename TIn, typename TOut>
void
ExpectFactoryGivesITKsResult(const TIn * input, const TIn * mask, bool full, typename TOut::PixelType background)
{
  std::string name;
  const auto  itkOwn = ItkPipeline<TIn, TOut>(input, mask, full, background, name);
  EXPECT_EQ(name, std::string("ConnectedComponentImageFilter"));
  const auto factory = itk::CudaConnectedComponentImageFilterFactory::RegisterOneFactory();
  const auto cuda    = ItkPipeline<TIn, TOut>(input, mask, full, background, name);
  EXPECT_EQ(name, std::string("CudaConnectedComponentImageFilterOverride"));
  EXPECT_EQ(cuda.second, itkOwn.second) << "full " << full;
  EXPECT_GT(cuda.second, 0u);
  EXPECT_TRUE(cuda.first == itkOwn.first) << "full " << full;
  // Where it ran: the GPU when there is one.
  auto   probe = itk::ConnectedComponentImageFilter<TIn, TOut>::New();
  auto * over  = dynamic_cast<itk::CudaConnectedComponentImageFilterOverride<TIn, TOut> *>(probe.GetPointer());
  ASSERT_NE(over, nullptr);
  probe->SetInput(input);
  probe->Update();
  EXPECT_EQ(over->GetLastBackend(), HasCudaDevice() ? Backend::CUDA : Backend::CPU);
  itk::ObjectFactoryBase::UnRegisterFactory(factory);
  ItkPipeline<TIn, TOut>(input, mask, full, background, name);
  EXPECT_EQ(name, std::string("ConnectedComponentImageFilter")) << "unregistered, ITK's own filter again";
}
} // namespace

#endif
