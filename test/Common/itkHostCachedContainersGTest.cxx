// Tests of the host array cache (include/chs/HostCache.h) and of the containers that use it
// (include/itkHostCachedContainers.h): the cache's rules (what is kept, what is taken, the limit), the image
// container through Image::Allocate, and that the filters whose outputs take stale cached storage still write
// every element: the cache is filled with garbage arrays of the outputs' types before each run, and the outputs
// must equal those of a run on fresh storage.
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "itkHostCachedContainers.h"
#include "chs/Execution.h"
#include "chs/HostCache.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace
{
using Backend = itk::CudaSegmentationBackendEnums::Backend;

constexpr uint64_t kMiB = uint64_t(1) << 20;

/** Sets the cache's limit for one test and empties the cache before and after. */
struct CacheScope
{
  explicit CacheScope(uint64_t limit)
    : m_Saved(chs::GetHostCacheLimit())
  {
    chs::ReleaseHostCache();
    chs::SetHostCacheLimit(limit);
  }
  ~CacheScope()
  {
    chs::ReleaseHostCache();
    chs::SetHostCacheLimit(m_Saved);
  }
  uint64_t m_Saved;
};

TEST(HostCache, KeepsLargeArraysAndGivesThemBack)
{
  CacheScope            scope(64 * kMiB);
  std::vector<uint32_t> v;
  chs::AcquireHostVector(v, kMiB); // 4 MiB
  ASSERT_EQ(v.size(), kMiB);
  v[12345]             = 777;
  const uint32_t * old = v.data();
  chs::ReleaseHostVector(v);
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(chs::GetHostCacheBytes(), 4 * kMiB);

  // Another vector of the same type and a suitable size takes the same storage, values as they were.
  std::vector<uint32_t> w;
  chs::AcquireHostVector(w, kMiB - 100);
  EXPECT_EQ(w.data(), old);
  EXPECT_EQ(w.size(), kMiB - 100);
  EXPECT_EQ(w[12345], 777u);
  EXPECT_EQ(chs::GetHostCacheBytes(), 0u);

  // Another element type does not take it.
  chs::ReleaseHostVector(w);
  std::vector<float> f;
  chs::AcquireHostVector(f, kMiB);
  EXPECT_NE(static_cast<const void *>(f.data()), static_cast<const void *>(old));
  EXPECT_EQ(chs::GetHostCacheBytes(), 4 * kMiB);

  // A much smaller request (4 MiB > 2 x 1 MiB + 1 MiB) does not take it either; a small array is not kept.
  std::vector<uint32_t> small;
  chs::AcquireHostVector(small, kMiB / 4);
  EXPECT_NE(small.data(), old);
  std::vector<uint32_t> tiny(1000);
  chs::ReleaseHostVector(tiny);
  EXPECT_EQ(chs::GetHostCacheBytes(), 4 * kMiB);

  chs::ReleaseHostCache();
  EXPECT_EQ(chs::GetHostCacheBytes(), 0u);
}

TEST(HostCache, TakesTheSmallestSuitableArray)
{
  CacheScope           scope(64 * kMiB);
  std::vector<uint8_t> a, b;
  chs::AcquireHostVector(a, 6 * kMiB);
  chs::AcquireHostVector(b, 4 * kMiB);
  const uint8_t *pa = a.data(), *pb = b.data();
  chs::ReleaseHostVector(a);
  chs::ReleaseHostVector(b);
  std::vector<uint8_t> c;
  chs::AcquireHostVector(c, 3 * kMiB); // both suit (at most 7 MiB); the 4 MiB one is smaller
  EXPECT_EQ(c.data(), pb);
  std::vector<uint8_t> d;
  chs::AcquireHostVector(d, 3 * kMiB);
  EXPECT_EQ(d.data(), pa);
  // A vector whose own storage suits keeps it.
  const uint8_t * pd = d.data();
  chs::AcquireHostVector(d, 5 * kMiB);
  EXPECT_EQ(d.data(), pd);
  EXPECT_EQ(d.size(), 5 * kMiB);
}

TEST(HostCache, LimitEvictsTheOldestAndRefusesWhatDoesNotFit)
{
  CacheScope           scope(10 * kMiB);
  std::vector<uint8_t> a, b, c, big;
  chs::AcquireHostVector(a, 4 * kMiB);
  chs::AcquireHostVector(b, 4 * kMiB);
  chs::AcquireHostVector(c, 4 * kMiB);
  chs::AcquireHostVector(big, 11 * kMiB);
  const uint8_t *pb = b.data(), *pc = c.data();
  chs::ReleaseHostVector(a);
  chs::ReleaseHostVector(b);
  EXPECT_EQ(chs::GetHostCacheBytes(), 8 * kMiB);
  chs::ReleaseHostVector(c); // 12 MiB > 10: the oldest (a) goes
  EXPECT_EQ(chs::GetHostCacheBytes(), 8 * kMiB);
  chs::ReleaseHostVector(big); // larger than the limit: freed at once
  EXPECT_EQ(chs::GetHostCacheBytes(), 8 * kMiB);
  std::vector<uint8_t> x, y, z;
  chs::AcquireHostVector(x, 4 * kMiB);
  chs::AcquireHostVector(y, 4 * kMiB);
  EXPECT_TRUE((x.data() == pb && y.data() == pc) || (x.data() == pc && y.data() == pb));
  EXPECT_EQ(chs::GetHostCacheBytes(), 0u);
  chs::ReleaseHostVector(x);
  chs::SetHostCacheLimit(0); // a lower limit evicts at once; 0 keeps nothing
  EXPECT_EQ(chs::GetHostCacheBytes(), 0u);
  chs::ReleaseHostVector(y);
  EXPECT_EQ(chs::GetHostCacheBytes(), 0u);
}

TEST(HostCachedImageContainer, ImagesAllocateThroughTheCache)
{
  CacheScope scope(256 * kMiB);
  using Image = itk::Image<uint32_t, 2>;
  auto make   = [](itk::SizeValueType side)
  {
    auto image = Image::New();
    image->SetRegions(chs_test::Size<Image>({ side, side }));
    itk::AllocateHostCached(image.GetPointer());
    return image;
  };
  auto             a = make(1024); // 4 MiB
  const uint32_t * p = a->GetBufferPointer();
  std::fill(a->GetBufferPointer(), a->GetBufferPointer() + 1024 * 1024, 5u);
  a = nullptr;
  EXPECT_EQ(chs::GetHostCacheBytes(), 4 * kMiB);
  auto b = make(1000);
  EXPECT_EQ(b->GetBufferPointer(), p);
  EXPECT_EQ(b->GetBufferPointer()[999 * 1000], 5u); // uninitialised, as Image::Allocate() leaves it

  // Allocate(true) value-initialises.
  b      = nullptr;
  auto c = Image::New();
  c->SetRegions(chs_test::Size<Image>({ 1024, 1024 }));
  c->SetPixelContainer(itk::HostCachedImageContainer<itk::SizeValueType, uint32_t>::New());
  c->Allocate(true);
  EXPECT_EQ(c->GetBufferPointer(), p);
  EXPECT_EQ(c->GetBufferPointer()[999 * 1000], 0u);

  // Growing the region reallocates (Reserve holds both buffers for a moment); the old buffer goes to the cache.
  c->SetRegions(chs_test::Size<Image>({ 2048, 1024 }));
  c->Allocate();
  EXPECT_NE(c->GetBufferPointer(), p);
  EXPECT_EQ(chs::GetHostCacheBytes(), 4 * kMiB);

  // An imported buffer is left to its owner.
  std::vector<uint32_t> own(2048 * 1024, 9u);
  c->GetPixelContainer()->SetImportPointer(own.data(), own.size(), false);
  c = nullptr;
  EXPECT_EQ(own[1234], 9u);
  EXPECT_EQ(chs::GetHostCacheBytes(), 12 * kMiB);
}

/** Fills the cache with arrays of `elements` garbage values of the vector types the trees' and images' containers
 * use, so that the next outputs take storage whose values are not zero. */
void
PoisonCache(uint64_t elements)
{
  auto poison = [elements](auto tag)
  {
    using V = decltype(tag);
    for (int copy = 0; copy < 3; ++copy)
    {
      V v;
      chs::AcquireHostVector(v, elements);
      std::memset(static_cast<void *>(v.data()), 0xA5 + copy, v.size() * sizeof(typename V::value_type));
      chs::ReleaseHostVector(v);
    }
  };
  poison(std::vector<uint32_t>());
  poison(std::vector<double>());
  poison(std::vector<itk::IdentifierType>());
  poison(std::vector<uint32_t, chs::DefaultInitAllocator<uint32_t>>());
}

template <typename TImage>
typename TImage::Pointer
Noise(itk::SizeValueType w, itk::SizeValueType h, unsigned seed, int levels)
{
  auto image = TImage::New();
  image->SetRegions(chs_test::Size<TImage>({ w, h }));
  image->Allocate();
  std::mt19937 rng(seed);
  for (itk::SizeValueType i = 0; i < w * h; ++i)
    image->GetBufferPointer()[i] = typename TImage::PixelType(rng() % levels);
  return image;
}

/** Runs a new TFilter on `image` on `backend` and keeps its output, disconnected from the filter. */
template <typename TFilter, typename TImage>
auto
UpdateAndKeep(const TImage * image, Backend backend)
{
  auto filter = TFilter::New();
  filter->SetInput(image);
  filter->SetBackend(backend);
  filter->Update();
  itk::SmartPointer<std::remove_pointer_t<decltype(filter->GetOutput())>> output = filter->GetOutput();
  output->DisconnectPipeline();
  return output;
}

void
CheckTreesOnStaleStorage(Backend backend)
{
  CacheScope scope(uint64_t(1) << 30);
  using Image         = itk::Image<uint8_t, 2>;
  const auto image    = Noise<Image>(1024, 600, 11, 40); // 614,400 pixels: every array above the cache's minimum
  const auto elements = uint64_t(2 * 1024 * 600);
  {
    auto runTree = [&] { return UpdateAndKeep<itk::CudaImageToAlphaTreeFilter<Image>>(image.GetPointer(), backend); };
    auto runDendrogram = [&]
    { return UpdateAndKeep<itk::CudaImageToSingleLinkageDendrogramFilter<Image>>(image.GetPointer(), backend); };
    chs::ReleaseHostCache();
    const auto freshTree       = runTree();
    const auto freshDendrogram = runDendrogram();
    PoisonCache(elements);
    uint64_t   cached = chs::GetHostCacheBytes();
    const auto tree   = runTree();
    EXPECT_LT(chs::GetHostCacheBytes(), cached); // the tree took poisoned arrays
    PoisonCache(elements);
    cached                = chs::GetHostCacheBytes();
    const auto dendrogram = runDendrogram();
    EXPECT_LT(chs::GetHostCacheBytes(), cached);
    EXPECT_EQ(tree->GetParents()->CastToSTLConstContainer(), freshTree->GetParents()->CastToSTLConstContainer());
    EXPECT_EQ(tree->GetLevels()->CastToSTLConstContainer(), freshTree->GetLevels()->CastToSTLConstContainer());
    EXPECT_EQ(dendrogram->GetParents()->CastToSTLConstContainer(),
              freshDendrogram->GetParents()->CastToSTLConstContainer());
    EXPECT_EQ(dendrogram->GetWeights()->CastToSTLConstContainer(),
              freshDendrogram->GetWeights()->CastToSTLConstContainer());
    EXPECT_EQ(dendrogram->GetEdgeU()->CastToSTLConstContainer(),
              freshDendrogram->GetEdgeU()->CastToSTLConstContainer());
    EXPECT_EQ(dendrogram->GetEdgeV()->CastToSTLConstContainer(),
              freshDendrogram->GetEdgeV()->CastToSTLConstContainer());
    EXPECT_EQ(dendrogram->GetEdgeIds()->CastToSTLConstContainer(),
              freshDendrogram->GetEdgeIds()->CastToSTLConstContainer());
  }
}

TEST(HostCachedContainers, StaleCachedStorageDoesNotChangeTreesCpu)
{
  CheckTreesOnStaleStorage(Backend::CPU);
}

TEST(HostCachedContainers, StaleCachedStorageDoesNotChangeTreesGpu)
{
  CHS_REQUIRE_GPU();
  CheckTreesOnStaleStorage(Backend::CUDA);
}

// The same through staging buffers of another shape: plain stores (the default's are non-temporal, and so is the
// zeroing of the alpha-tree's leaf levels then), odd slot and worker counts.
TEST(HostCachedContainers, StaleCachedStorageDoesNotChangeTreesGpuPlainStaging)
{
  CHS_REQUIRE_GPU();
  chs::testing::SetHostStaging(uint64_t(1) << 20, 3, 5, false);
  CheckTreesOnStaleStorage(Backend::CUDA);
  chs::testing::SetHostStaging(0, 0, 0, false);
}

void
CheckLabelsOnStaleStorage(Backend backend)
{
  CacheScope scope(uint64_t(1) << 30);
  using Image      = itk::Image<uint8_t, 2>;
  using Labels     = itk::Image<uint32_t, 2>;
  const auto image = Noise<Image>(1024, 600, 12, 200);
  {
    auto run = [&] { return UpdateAndKeep<itk::CudaWatershedImageFilter<Image, Labels>>(image.GetPointer(), backend); };
    chs::ReleaseHostCache();
    const auto fresh = run();
    PoisonCache(1024 * 600);
    const uint64_t cached = chs::GetHostCacheBytes();
    const auto     labels = run();
    EXPECT_LT(chs::GetHostCacheBytes(), cached);
    EXPECT_TRUE(
      std::equal(fresh->GetBufferPointer(), fresh->GetBufferPointer() + 1024 * 600, labels->GetBufferPointer()));
    using Cached = itk::HostCachedImageContainer<itk::SizeValueType, uint32_t>;
    EXPECT_NE(dynamic_cast<Cached *>(labels->GetPixelContainer()), nullptr);
  }
}

TEST(HostCachedContainers, StaleCachedStorageDoesNotChangeLabelImagesCpu)
{
  CheckLabelsOnStaleStorage(Backend::CPU);
}

TEST(HostCachedContainers, StaleCachedStorageDoesNotChangeLabelImagesGpu)
{
  CHS_REQUIRE_GPU();
  CheckLabelsOnStaleStorage(Backend::CUDA);
}

TEST(HostCachedContainers, PinnedOutputsOfCudaUpdatesGpu)
{
  CHS_REQUIRE_GPU();
  CacheScope scope(uint64_t(1) << 30);
  using Image      = itk::Image<uint8_t, 2>;
  using Labels     = itk::Image<uint32_t, 2>;
  const auto image = Noise<Image>(1024, 600, 13, 200);
  const auto n     = uint64_t(1024) * 600;
  auto       run   = [&](Backend backend)
  { return UpdateAndKeep<itk::CudaWatershedImageFilter<Image, Labels>>(image.GetPointer(), backend); };
  const auto cpu = run(Backend::CPU);
  EXPECT_FALSE(chs::detail::IsRegisteredHostRange(cpu->GetBufferPointer(), n * 4)); // CPU outputs are not locked
  auto             gpu = run(Backend::CUDA);
  const uint32_t * p   = gpu->GetBufferPointer();
  EXPECT_TRUE(chs::detail::IsRegisteredHostRange(p, n * 4)); // a new output buffer of a CUDA update is locked
  EXPECT_TRUE(std::equal(cpu->GetBufferPointer(), cpu->GetBufferPointer() + n, p));
  gpu = nullptr; // back to the cache, still locked
  EXPECT_TRUE(chs::detail::IsRegisteredHostRange(p, n * 4));
  std::memset(const_cast<uint32_t *>(p), 0x5A, n * 4);
  const auto again = run(Backend::CUDA); // takes it back: the DMA writes straight into it
  EXPECT_EQ(again->GetBufferPointer(), p);
  EXPECT_TRUE(std::equal(cpu->GetBufferPointer(), cpu->GetBufferPointer() + n, again->GetBufferPointer()));
  const_cast<Labels *>(again.GetPointer())->Initialize();
  chs::ReleaseHostCache(); // freed: unlocked first
  EXPECT_FALSE(chs::detail::IsRegisteredHostRange(p, n * 4));

  // A CPU update's output, given back to the cache unlocked, is locked when a CUDA update takes it.
  auto             fromCpu = run(Backend::CPU);
  const uint32_t * q       = fromCpu->GetBufferPointer();
  EXPECT_FALSE(chs::detail::IsRegisteredHostRange(q, n * 4));
  fromCpu            = nullptr;
  const auto takenBy = run(Backend::CUDA);
  EXPECT_EQ(takenBy->GetBufferPointer(), q);
  EXPECT_TRUE(chs::detail::IsRegisteredHostRange(q, n * 4));
  EXPECT_TRUE(std::equal(cpu->GetBufferPointer(), cpu->GetBufferPointer() + n, q));
  const_cast<Labels *>(takenBy.GetPointer())->Initialize();
  chs::ReleaseHostCache();
  EXPECT_FALSE(chs::detail::IsRegisteredHostRange(q, n * 4));

  // Locked arrays are bounded by the cache's limit: beyond it, outputs stay pageable (and right).
  chs::SetHostCacheLimit(n * 4 / 2);
  const auto unlocked = run(Backend::CUDA);
  EXPECT_FALSE(chs::detail::IsRegisteredHostRange(unlocked->GetBufferPointer(), n * 4));
  EXPECT_TRUE(std::equal(cpu->GetBufferPointer(), cpu->GetBufferPointer() + n, unlocked->GetBufferPointer()));
}

// The staging buffers that copies of pageable host memory go through (src/Common/chsTransfers.cu): their shape is
// the default unless a test or benchmark sets another (chs::testing::SetHostStaging); every shape moves the same
// bytes.
TEST(HostStaging, ShapesOutOfBoundsAreRefused)
{
  const uint64_t kib = 1024;
  EXPECT_THROW(chs::testing::SetHostStaging(0, 4, 8, false), std::invalid_argument);    // no chunk
  EXPECT_THROW(chs::testing::SetHostStaging(1000, 4, 8, false), std::invalid_argument); // not pages
  EXPECT_THROW(chs::testing::SetHostStaging(64 * kib, 0, 8, false), std::invalid_argument);
  EXPECT_THROW(chs::testing::SetHostStaging(64 * kib, 65, 8, false), std::invalid_argument);
  EXPECT_THROW(chs::testing::SetHostStaging(64 * kib, 4, 0, false), std::invalid_argument);
  EXPECT_THROW(chs::testing::SetHostStaging(64 * kib, 4, 17, true), std::invalid_argument);
  EXPECT_NO_THROW(chs::testing::SetHostStaging(64 * kib, 64, 16, true));
  EXPECT_NO_THROW(chs::testing::SetHostStaging(0, 0, 0, false)); // back to the default
}

TEST(HostStaging, EveryShapeMovesTheSameBytesGpu)
{
  CHS_REQUIRE_GPU();
  struct Shape
  {
    uint64_t chunk;
    unsigned slots, workers;
    bool     streaming;
  };
  const uint64_t    kib      = 1024;
  const Shape       shapes[] = { { 0, 0, 0, false },          { 64 * kib, 2, 3, false },   { 64 * kib, 3, 5, true },
                                 { 256 * kib, 16, 8, false }, { 1024 * kib, 4, 16, true }, { 4 * kib, 1, 1, true } };
  const uint64_t    sizes[]  = { 4 * kMiB + 4097, 9 * kMiB + 3 }; // above the staging minimum, not whole chunks
  std::vector<char> source(9 * kMiB + 3 + 16), back(source.size());
  std::mt19937      random(5);
  for (auto & c : source)
    c = char(random());
  for (const Shape & s : shapes)
  {
    chs::testing::SetHostStaging(s.chunk, s.slots, s.workers, s.streaming);
    for (const uint64_t bytes : sizes)
      for (const unsigned offset : { 0u, 1u, 7u }) // host arrays not aligned to 16 bytes either
        for (const unsigned threads : { 0u, 2u })
        {
          std::fill(back.begin(), back.end(), char(0x5A));
          chs::testing::RoundTripHostArray(source.data() + offset, back.data() + (offset ^ 1u), bytes, 0, threads);
          EXPECT_TRUE(
            std::equal(source.begin() + offset, source.begin() + offset + bytes, back.begin() + (offset ^ 1u)))
            << "chunk " << s.chunk << ", slots " << s.slots << ", workers " << s.workers << ", streaming "
            << s.streaming << ": " << bytes << " bytes at offset " << offset << ", threads " << threads;
          // Nothing outside the destination was written.
          EXPECT_EQ(back[(offset ^ 1u) + bytes], char(0x5A));
          if ((offset ^ 1u) > 0)
            EXPECT_EQ(back[(offset ^ 1u) - 1], char(0x5A));
        }
  }
  chs::testing::SetHostStaging(0, 0, 0, false);
}

} // namespace
