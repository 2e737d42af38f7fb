// Reliability under concurrent and repeated use: every algorithm's filters from several host threads at once (both
// backends, shared and separate CUDA streams, two devices), and every device allocation of every filter made to
// fail in turn. Each workload keeps its own filters and input, as a thread of a Slicer session or a Dask worker would.
#include "itkAlphaTreeCutImageFilter.h"
#include "itkCudaConnectedComponentImageFilter.h"
#include "itkCudaDendrogramAttributeFilter.h"
#include "itkCudaGraphToSingleLinkageDendrogramFilter.h"
#include "itkCudaImageForestingTransformImageFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkCudaWaterfallImageFilter.h"
#include "itkCudaWaterpixelImageFilter.h"
#include "itkCudaWatershedImageFilter.h"
#include "itkDendrogramToLabelImageFilter.h"

#include "Common/chsTestImages.h"
#include "chsConnectedComponents.h"
#include "chsAlphaTree.h"
#include "chsForestingTransform.h"
#include "chsSingleLinkage.h"
#include "chsWatershed.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sys/mman.h>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace
{
using namespace chs_test;
using Backend = itk::CudaSegmentationBackendEnums::Backend;
using U8_2    = itk::Image<unsigned char, 2>;
using U8_3    = itk::Image<unsigned char, 3>;
using F_2     = itk::Image<float, 2>;
using L32_2   = itk::Image<unsigned int, 2>;
using L32_3   = itk::Image<unsigned int, 3>;

/** What a run produced: a 64-bit hash (FNV-1a over 64-bit words) of its labels, and of trees' parents and weights
 * (as bits), with the number of values. Building it allocates nothing, so that the soak measures the library's host
 * memory, not the test's. */
class Fingerprint
{
public:
  void
  Add(uint64_t v)
  {
    m_Hash = (m_Hash ^ v) * 1099511628211ull;
    ++m_Count;
  }
  bool
  operator==(const Fingerprint & o) const
  {
    return m_Hash == o.m_Hash && m_Count == o.m_Count;
  }
  bool
  operator!=(const Fingerprint & o) const
  {
    return !(*this == o);
  }
  friend std::ostream &
  operator<<(std::ostream & os, const Fingerprint & f)
  {
    return os << "hash " << f.m_Hash << " of " << f.m_Count << " values";
  }

private:
  uint64_t m_Hash  = 14695981039346656037ull;
  uint64_t m_Count = 0;
};

template <class TImage>
void
Append(Fingerprint & f, const TImage * image)
{
  const size_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (size_t i = 0; i < n; ++i)
    f.Add(uint64_t(image->GetBufferPointer()[i]));
}

template <class TContainer>
void
AppendValues(Fingerprint & f, const TContainer * c)
{
  for (const auto v : *c)
  {
    uint64_t bits = 0;
    if constexpr (std::is_floating_point<std::decay_t<decltype(v)>>::value)
    {
      const double d = v;
      std::memcpy(&bits, &d, sizeof d);
    }
    else
      bits = uint64_t(v);
    f.Add(bits);
  }
}

/** A smooth float relief (sum of a few sines and noise): many basins, few plateaux. */
F_2::Pointer
Relief(unsigned side, unsigned seed)
{
  auto                                  image = MakeImage<F_2>(Size<F_2>({ side, side }));
  std::mt19937                          rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  const float                           a = 0.05f + 0.1f * u(rng), b = 0.05f + 0.1f * u(rng);
  float *                               p = image->GetBufferPointer();
  for (unsigned y = 0; y < side; ++y)
    for (unsigned x = 0; x < side; ++x)
      p[y * side + x] = 10.f * std::sin(a * x) * std::cos(b * y) + 10.f + u(rng);
  return image;
}

/** One algorithm's filters on one input, kept between runs. run(backend, stream) updates them and returns what they
 * produced; released() says whether the filter whose update failed left no output behind; reset() is what an ITK
 * user does after an exception inside a pipeline of several filters (ProcessObject::ResetPipeline() on the last one:
 * ITK leaves a downstream filter marked as updating when an upstream one throws). */
struct Workload
{
  std::string                                         name;
  std::function<Fingerprint(Backend, std::uintptr_t)> run;
  std::function<bool()>                               released;
  std::function<void()>                               reset = [] {};
  std::vector<itk::ProcessObject *>                   filters; // the module's filters among them (owned by run)
  int                                                 device   = 0;
  double                                              updateMs = 0; // the last run's Update() call

  /** Runs update() (the run's one Update() call) and keeps its time in updateMs. */
  template <class F>
  void
  Timed(F && update)
  {
    const auto start = std::chrono::steady_clock::now();
    update();
    updateMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
};

template <class TFilter>
void
Configure(TFilter * filter, Backend backend, std::uintptr_t stream, int device)
{
  filter->SetBackend(backend);
  filter->SetCudaStream(stream);
  filter->SetDeviceId(device);
  filter->Modified();
}

/** Sets `w` up for a filter whose output is one label image: run() updates it and fingerprints count() and the
 * labels; released() checks the output holds no buffer. */
template <class TFilterPointer, class TCount>
void
LabelFilterWorkload(Workload * w, const TFilterPointer & filter, int device, TCount count)
{
  w->run = [filter, device, w, count](Backend b, std::uintptr_t s)
  {
    Configure(filter.GetPointer(), b, s, device);
    w->Timed([&] { filter->Update(); });
    Fingerprint f;
    f.Add(count());
    Append(f, filter->GetOutput());
    return f;
  };
  w->released = [filter] { return filter->GetOutput()->GetBufferPointer() == nullptr; };
}

/** The k-th of the eight workloads (k in 0..7), on inputs made from `seed`, `scale` times larger along each axis
 * (the graph: scale^2 times more vertices). */
std::shared_ptr<Workload>
MakeWorkload(unsigned k, unsigned seed, int device = 0, unsigned scale = 1)
{
  const unsigned c  = scale;
  auto           w  = std::make_shared<Workload>();
  Workload *     wp = w.get(); // the run functions time their updates into it (it owns them)
  w->device         = device;
  switch (k % 8)
  {
    case 0:
    {
      w->name     = "connected components";
      auto filter = itk::CudaConnectedComponentImageFilter<U8_3, L32_3>::New();
      filter->SetInput(BlobImage<U8_3>(Size<U8_3>({ 40 * c, 36 * c, 32 * c }), 2, 0.5, seed));
      filter->FullyConnectedOn();
      LabelFilterWorkload(wp, filter, device, [filter] { return filter->GetObjectCount(); });
      w->filters = { filter.GetPointer() };
      break;
    }
    case 1:
    {
      w->name     = "watershed";
      auto filter = itk::CudaWatershedImageFilter<F_2, L32_2>::New();
      filter->SetInput(Relief(160 * c, seed));
      LabelFilterWorkload(wp, filter, device, [filter] { return filter->GetObjectCount(); });
      w->filters = { filter.GetPointer() };
      break;
    }
    case 2:
    {
      w->name     = "waterfall";
      auto filter = itk::CudaWaterfallImageFilter<F_2, L32_2>::New();
      filter->SetInput(Relief(128 * c, seed));
      w->run = [filter, device, wp](Backend b, std::uintptr_t s)
      {
        Configure(filter.GetPointer(), b, s, device);
        wp->Timed([&] { filter->Update(); });
        Fingerprint f;
        for (unsigned level = 0; level < filter->GetNumberOfComputedLevels(); ++level)
          Append(f, filter->GetLevel(level));
        return f;
      };
      // After a failed update no level is computed (GetLevel throws) and output 0 holds no buffer.
      w->released = [filter]
      { return filter->GetNumberOfComputedLevels() == 0 && filter->GetOutput()->GetBufferPointer() == nullptr; };
      w->filters = { filter.GetPointer() };
      break;
    }
    case 3:
    {
      w->name   = "alpha-tree";
      auto tree = itk::CudaImageToAlphaTreeFilter<U8_2>::New();
      tree->SetInput(RandomImage<U8_2>(Size<U8_2>({ 150 * c, 120 * c }), 0.9, seed, 12));
      tree->ComputeValueRangesOn();
      auto cut = itk::AlphaTreeCutImageFilter<L32_2>::New();
      cut->SetInput(tree->GetOutput());
      cut->SetAlpha(3);
      cut->SetOmega(8);
      w->run = [tree, cut, device, wp](Backend b, std::uintptr_t s)
      {
        Configure(tree.GetPointer(), b, s, device);
        Configure(cut.GetPointer(), b, s, device);
        wp->Timed([&] { cut->Update(); });
        Fingerprint f;
        AppendValues(f, tree->GetOutput()->GetParents());
        AppendValues(f, tree->GetOutput()->GetLevels());
        Append(f, cut->GetOutput());
        return f;
      };
      // A failure in the tree's update leaves an empty tree (the cut keeps its last output, as ITK's pipeline does);
      // one in the cut's update, no cut.
      w->released = [tree, cut]
      { return tree->GetOutput()->GetNumberOfNodes() == 0 || cut->GetOutput()->GetBufferPointer() == nullptr; };
      w->reset   = [cut] { cut->ResetPipeline(); };
      w->filters = { tree.GetPointer(), cut.GetPointer() };
      break;
    }
    case 4:
    {
      w->name         = "image dendrogram and its watershed hierarchy by dynamics";
      auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<U8_2>::New();
      dendrogram->SetInput(RandomImage<U8_2>(Size<U8_2>({ 140 * c, 130 * c }), 0.95, seed, 40));
      auto hierarchy = itk::CudaDendrogramAttributeFilter::New();
      hierarchy->SetInput(dendrogram->GetOutput());
      hierarchy->SetAttribute(itk::CudaDendrogramAttributeFilter::AttributeEnum::Dynamics);
      auto cut = itk::DendrogramToLabelImageFilter<L32_2>::New();
      cut->SetInput(hierarchy->GetOutput());
      cut->SetNumberOfClusters(20);
      w->run = [dendrogram, hierarchy, cut, device, wp](Backend b, std::uintptr_t s)
      {
        Configure(dendrogram.GetPointer(), b, s, device);
        Configure(hierarchy.GetPointer(), b, s, device);
        cut->Modified();
        wp->Timed([&] { cut->Update(); });
        Fingerprint f;
        AppendValues(f, dendrogram->GetOutput()->GetParents());
        AppendValues(f, dendrogram->GetOutput()->GetWeights());
        AppendValues(f, hierarchy->GetOutput()->GetParents());
        AppendValues(f, hierarchy->GetOutput()->GetWeights());
        Append(f, cut->GetOutput());
        return f;
      };
      // A failure in either update leaves that filter's output empty.
      w->released = [dendrogram, hierarchy]
      {
        auto empty = [](itk::Dendrogram * d) { return d->GetNumberOfNodes() == 0 && d->GetParents()->empty(); };
        return empty(dendrogram->GetOutput()) || empty(hierarchy->GetOutput());
      };
      w->reset   = [cut] { cut->ResetPipeline(); };
      w->filters = { dendrogram.GetPointer(), hierarchy.GetPointer() };
      break;
    }
    case 5:
    {
      w->name               = "graph dendrogram";
      using Graph           = itk::CudaGraphToSingleLinkageDendrogramFilter<float>;
      auto           filter = Graph::New();
      auto           u = Graph::VertexContainerType::New(), v = Graph::VertexContainerType::New();
      auto           weights = Graph::WeightContainerType::New();
      std::mt19937   rng(seed);
      const uint32_t n = 20000 * c * c;
      std::uniform_int_distribution<uint32_t> vertex(0, n - 1);
      std::uniform_real_distribution<float>   weight(0.f, 100.f);
      for (uint32_t e = 0; e < 4 * n; ++e) // a path through every vertex (connected), then random edges
      {
        u->push_back(e < n - 1 ? e : vertex(rng));
        v->push_back(e < n - 1 ? e + 1 : vertex(rng));
        weights->push_back(std::floor(weight(rng))); // ties, resolved by the edge order
      }
      filter->SetEdges(u, v, weights);
      filter->SetNumberOfVertices(n);
      w->run = [filter, device, wp](Backend b, std::uintptr_t s)
      {
        Configure(filter.GetPointer(), b, s, device);
        wp->Timed([&] { filter->Update(); });
        Fingerprint f;
        AppendValues(f, filter->GetOutput()->GetParents());
        AppendValues(f, filter->GetOutput()->GetWeights());
        return f;
      };
      w->released = [filter]
      { return filter->GetOutput()->GetNumberOfNodes() == 0 && filter->GetOutput()->GetParents()->empty(); };
      w->filters = { filter.GetPointer() };
      break;
    }
    case 6:
    {
      w->name     = "waterpixels";
      auto filter = itk::CudaWaterpixelImageFilter<U8_3, L32_3>::New();
      filter->SetInput(RandomImage<U8_3>(Size<U8_3>({ 36 * c, 32 * c, 28 * c }), 0.8, seed, 200));
      filter->SetGridStep(6);
      LabelFilterWorkload(wp, filter, device, [filter] { return filter->GetNumberOfSuperpixels(); });
      w->filters = { filter.GetPointer() };
      break;
    }
    default:
    {
      w->name               = "seeded IFT";
      auto           filter = itk::CudaImageForestingTransformImageFilter<F_2, L32_2>::New();
      const unsigned side   = 150 * c;
      auto           relief = Relief(side, seed);
      auto           seeds  = MakeImage<L32_2>(relief->GetLargestPossibleRegion().GetSize());
      for (unsigned i = 0; i < 12; ++i)
        seeds->GetBufferPointer()[(i * 7919u + seed * 104729u) % (side * side)] = i % 5 + 1;
      filter->SetInput(relief);
      filter->SetSeedImage(seeds);
      w->run = [filter, device, wp](Backend b, std::uintptr_t s)
      {
        Configure(filter.GetPointer(), b, s, device);
        wp->Timed([&] { filter->Update(); });
        Fingerprint f;
        Append(f, filter->GetOutput());
        Append(f, filter->GetCostOutput());
        Append(f, filter->GetPredecessorOutput());
        return f;
      };
      w->released = [filter] { return filter->GetOutput()->GetBufferPointer() == nullptr; };
      w->filters  = { filter.GetPointer() };
      break;
    }
  }
  return w;
}

int
Rounds()
{
  const char * r = std::getenv("CHS_RELIABILITY_ROUNDS");
  return r ? std::max(1, std::atoi(r)) : 100;
}

/** Runs body(thread) on `threads` host threads at once; an exception in a thread fails the test. */
void
OnThreads(unsigned threads, const std::function<void(unsigned)> & body)
{
  std::vector<std::thread> pool;
  std::atomic<unsigned>    failures{ 0 };
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(
      [&, t]
      {
        try
        {
          body(t);
        }
        catch (const std::exception & e)
        {
          ADD_FAILURE() << "thread " << t << ": " << e.what();
          ++failures;
        }
      });
  for (auto & t : pool)
    t.join();
  EXPECT_EQ(failures.load(), 0u);
}

/** Eight threads, each running a different algorithm on its own input, `Rounds()` times; every result equals that
 * workload's single-threaded CPU reference. With a GPU the rounds alternate between the backends. */
TEST(Reliability, EightAlgorithmsOnEightThreadsMatchSingleThreadedRuns)
{
  const bool                             gpu = HasCudaDevice();
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 100 + k));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
    if (gpu)
      ASSERT_EQ(workloads.back()->run(Backend::CUDA, 0), expected.back()) << workloads.back()->name;
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(8);
  OnThreads(8,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
              {
                const Backend b = gpu && (r + t) % 2 == 0 ? Backend::CUDA : Backend::CPU;
                if (workloads[t]->run(b, 0) != expected[t])
                  ++mismatches[t];
              }
            });
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(mismatches[k].load(), 0u) << workloads[k]->name << ": runs that differ of " << rounds;
}

/** Streams: two threads whose filters share one non-blocking stream, two more with a stream each, and two on the
 * legacy default stream, all at once; every result equals the reference. */
TEST(Reliability, GPUSharedAndSeparateStreams)
{
  CHS_REQUIRE_GPU();
  const std::uintptr_t shared = chs::testing::CreateStream(0), own0 = chs::testing::CreateStream(0),
                       own1                         = chs::testing::CreateStream(0);
  const std::uintptr_t                   streams[6] = { shared, shared, own0, own1, 0, 0 };
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned t = 0; t < 6; ++t)
  {
    // watershed, image dendrogram, seeded IFT, waterfall, graph dendrogram, connected components
    workloads.push_back(MakeWorkload(t * 3 + 1, 200 + t));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(6);
  OnThreads(6,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
                if (workloads[t]->run(Backend::CUDA, streams[t]) != expected[t])
                  ++mismatches[t];
            });
  for (unsigned t = 0; t < 6; ++t)
    EXPECT_EQ(mismatches[t].load(), 0u) << workloads[t]->name << " on stream " << t;
  chs::testing::DestroyStream(shared);
  chs::testing::DestroyStream(own0);
  chs::testing::DestroyStream(own1);
}

/** Two devices at once: the eight algorithms, four threads on device 0 and four on device 1. */
TEST(Reliability, GPUTwoDevicesAtOnce)
{
  CHS_REQUIRE_GPU();
  if (chs::CudaDeviceCount() < 2)
    GTEST_SKIP() << "one CUDA device";
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 300 + k, int(k % 2)));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const int                          rounds = Rounds();
  std::vector<std::atomic<unsigned>> mismatches(8);
  OnThreads(8,
            [&](unsigned t)
            {
              for (int r = 0; r < rounds; ++r)
                if (workloads[t]->run(Backend::CUDA, 0) != expected[t])
                  ++mismatches[t];
            });
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(mismatches[k].load(), 0u) << workloads[k]->name << " on device " << k % 2;
}

/** Every device allocation of every algorithm's update made to fail in turn: each failure is an ExceptionObject that
 * names the CUDA error, leaves no output buffer and no device memory behind, and the next update succeeds with the
 * reference's result. */
TEST(Reliability, GPUEveryDeviceAllocationFailureOfEveryAlgorithm)
{
  CHS_REQUIRE_GPU();
  for (unsigned k = 0; k < 8; ++k)
  {
    auto              w        = MakeWorkload(k, 400 + k);
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name; // warms up the context and the memory pool
    uint64_t freeBefore = 0, total = 0;
    chs::CudaDeviceMemoryInfo(0, freeBefore, total);
    int failing = 1;
    for (; failing <= 200; ++failing)
    {
      chs::testing::FailDeviceAllocationAfter(failing);
      bool threw = false;
      try
      {
        w->run(Backend::CUDA, 0);
      }
      catch (const itk::ExceptionObject & e)
      {
        threw = true;
        EXPECT_NE(std::string(e.GetDescription()).find("cudaErrorMemoryAllocation"), std::string::npos)
          << w->name << ", allocation " << failing << ": " << e.GetDescription();
        EXPECT_TRUE(w->released()) << w->name << ", allocation " << failing << ": an output kept its buffer";
        w->reset();
      }
      chs::testing::FailDeviceAllocationAfter(0);
      uint64_t freeAfter = 0;
      chs::CudaDeviceMemoryInfo(0, freeAfter, total);
      EXPECT_EQ(freeAfter, freeBefore) << w->name << ", allocation " << failing;
      EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after allocation " << failing << " failed";
      if (!threw) // the update made fewer allocations than `failing`: every one has been made to fail
        break;
    }
    EXPECT_GT(failing, 1) << w->name << ": no allocation was made to fail";
    EXPECT_LE(failing, 200) << w->name << ": more than 200 allocations";
    std::cout << w->name << ": " << failing - 1 << " device allocations, each made to fail in turn\n";
  }
}

/** Every test of the driver: a CUDA run that allocated more device memory than it reserved before allocating (a bug
 * of its bound, chs::detail::ReserveDeviceMemory) is reported with the test's name, and fails the program. */
class OverrunListener : public ::testing::EmptyTestEventListener
{
public:
  void
  OnTestStart(const ::testing::TestInfo &) override
  {
    m_Before = chs::testing::DeviceMemoryOverruns();
  }
  void
  OnTestEnd(const ::testing::TestInfo & info) override
  {
    std::string    last;
    const uint64_t now = chs::testing::DeviceMemoryOverruns(&last);
    if (now != m_Before)
    {
      std::cout << "[ OVERRUN  ] " << info.test_suite_name() << "." << info.name() << ": " << now - m_Before
                << " device allocations above their run's reservation; the last: " << last << std::endl;
      s_Failed = true;
    }
  }
  static bool s_Failed;

private:
  uint64_t m_Before = 0;
};
bool OverrunListener::s_Failed = false;

class OverrunEnvironment : public ::testing::Environment
{
public:
  void
  TearDown() override
  {
    EXPECT_FALSE(OverrunListener::s_Failed) << "device allocations above their run's reservation ([ OVERRUN ] above)";
  }
};

const bool g_OverrunCheck = []
{
  ::testing::UnitTest::GetInstance()->listeners().Append(new OverrunListener);
  ::testing::AddGlobalTestEnvironment(new OverrunEnvironment);
  return true;
}();

/** Host resident memory of the process in bytes (Linux: /proc/self/statm). */
uint64_t
ResidentBytes()
{
  std::ifstream statm("/proc/self/statm");
  uint64_t      size = 0, resident = 0;
  statm >> size >> resident;
  return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

double
Median(std::vector<double> v)
{
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/** The medians of consecutive blocks of `block` values, comma-separated (the soak report's timeline). */
std::string
BlockMedians(const std::vector<double> & v, std::size_t block)
{
  std::ostringstream out;
  for (std::size_t b = 0; b + block <= v.size(); b += block)
    out << (b ? ", " : "") << Median(std::vector<double>(v.begin() + b, v.begin() + b + block));
  return out.str();
}

/** Progress and abort, on both backends (CUDA where there is a device): during an update every module filter of
 * every workload reports rising progress that ends at 1 and passes through values between (at least ten on the CPU
 * references, whose loops report along the way; the CUDA backends report their phases); AbortGenerateData set from
 * the filter's first report between 0 and 1 stops the update with itk::ProcessAborted and releases its output, and
 * the next update gives the result of one that was not aborted. */
TEST(Reliability, ProgressAndAbortOnBothBackends)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (chs::CudaDeviceCount() > 0)
    backends.push_back(Backend::CUDA);
  for (const Backend b : backends)
    for (unsigned k = 0; k < 8; ++k)
    {
      auto              w        = MakeWorkload(k, 900 + k);
      const Fingerprint expected = w->run(b, 0);
      ASSERT_FALSE(w->filters.empty()) << w->name;
      for (itk::ProcessObject * f : w->filters)
      {
        const std::string what =
          w->name + " (" + f->GetNameOfClass() + ", " + (b == Backend::CPU ? "CPU" : "CUDA") + ")";
        std::vector<float> seen;
        const auto         tag =
          f->AddObserver(itk::ProgressEvent(), [&](const itk::EventObject &) { seen.push_back(f->GetProgress()); });
        EXPECT_TRUE(w->run(b, 0) == expected) << what;
        f->RemoveObserver(tag);
        ASSERT_FALSE(seen.empty()) << what;
        EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << what;
        EXPECT_EQ(seen.back(), 1.0f) << what;
        const auto between = std::count_if(seen.begin(), seen.end(), [](float p) { return p > 0.0f && p < 1.0f; });
        EXPECT_GE(between, b == Backend::CPU ? 10 : 1) << what;

        bool       asked    = false;
        const auto abortTag = f->AddObserver(itk::ProgressEvent(),
                                             [&](const itk::EventObject &)
                                             {
                                               const float p = f->GetProgress();
                                               if (!asked && p > 0.0f && p < 1.0f)
                                               {
                                                 asked = true;
                                                 f->AbortGenerateDataOn();
                                               }
                                             });
        EXPECT_THROW(w->run(b, 0), itk::ProcessAborted) << what;
        f->RemoveObserver(abortTag);
        EXPECT_TRUE(asked) << what;
        EXPECT_TRUE(w->released()) << what << ": an output kept its buffer";
        w->reset();
        EXPECT_TRUE(w->run(b, 0) == expected) << what << ": the update after the abort";
      }
    }
}

/** Soak: each algorithm's filters updated CHS_SOAK_RUNS times on the GPU, on inputs 4 times larger along each axis
 * than the other tests' (skipped when it is not set; the GPU machine's run sets 2000). The eight algorithms take turns
 * (round r runs each once), as in a session that uses several filters, and so that each algorithm's windows of 100
 * runs span seconds of the process's life rather than tenths: a soak of one algorithm at a time saw its 100-run
 * medians move in waves of +-20% within a second that nothing in the process explained. After the first 100 rounds,
 * host resident memory and device memory in use (after the pool has handed back what it caches) stay within 1%; each
 * algorithm's last 100 runs' median time of the filters' Update() calls is within 10% of its first 100's; every result
 * equals the first. Writes the figures to CHS_SOAK_REPORT (JSON lines) when it is set. */
TEST(Reliability, GPUSoakEveryAlgorithm)
{
  CHS_REQUIRE_GPU();
  const char * runsText = std::getenv("CHS_SOAK_RUNS");
  if (!runsText)
    GTEST_SKIP() << "set CHS_SOAK_RUNS (the GPU machine's run sets 2000)";
  const int     runs = std::max(300, std::atoi(runsText));
  std::ofstream report;
  if (const char * file = std::getenv("CHS_SOAK_REPORT"))
    report.open(file);
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 500 + k, 0, 4));
    expected.push_back(workloads.back()->run(Backend::CUDA, 0));
  }
  std::vector<std::vector<double>> ms(8);
  std::vector<int>                 mismatches(8, 0);
  uint64_t                         hostStart = 0, deviceFreeStart = 0, deviceFreeEnd = 0, total = 0;
  for (int r = 0; r < runs; ++r)
  {
    if (r == 100)
    {
      hostStart = ResidentBytes();
      chs::CudaDeviceMemoryInfo(0, deviceFreeStart, total);
    }
    for (unsigned k = 0; k < 8; ++k)
    {
      mismatches[k] += workloads[k]->run(Backend::CUDA, 0) != expected[k];
      ms[k].push_back(workloads[k]->updateMs); // the filters' Update() calls, without the fingerprint
    }
  }
  const uint64_t hostEnd = ResidentBytes();
  chs::CudaDeviceMemoryInfo(0, deviceFreeEnd, total);
  const double hostDrift = (double(hostEnd) - double(hostStart)) / double(hostStart);
  // Device memory in use: total - free, after the pool trims.
  const double usedStart = double(total - deviceFreeStart), usedEnd = double(total - deviceFreeEnd);
  const double deviceDrift = (usedEnd - usedStart) / usedStart;
  std::cout << runs << " rounds of the eight algorithms; host RSS " << hostStart << " -> " << hostEnd << " bytes ("
            << 100 * hostDrift << "%), device memory in use " << usedStart << " -> " << usedEnd << " bytes ("
            << 100 * deviceDrift << "%)\n";
  EXPECT_LE(std::abs(hostDrift), 0.01);
  EXPECT_LE(std::abs(deviceDrift), 0.01);
  for (unsigned k = 0; k < 8; ++k)
  {
    const auto & w     = *workloads[k];
    const double first = Median(std::vector<double>(ms[k].begin(), ms[k].begin() + 100));
    const double last  = Median(std::vector<double>(ms[k].end() - 100, ms[k].end()));
    std::cout << w.name << ": median ms first 100 " << first << ", last 100 " << last << '\n';
    if (report)
      report << "{\"algorithm\": \"" << w.name << "\", \"runs\": " << runs << ", \"host_rss_start\": " << hostStart
             << ", \"host_rss_end\": " << hostEnd << ", \"device_used_start\": " << uint64_t(usedStart)
             << ", \"device_used_end\": " << uint64_t(usedEnd) << ", \"median_ms_first_100\": " << first
             << ", \"median_ms_last_100\": " << last << ", \"mismatches\": " << mismatches[k]
             << ", \"median_ms_per_100\": [" << BlockMedians(ms[k], 100) << "]}\n";
    EXPECT_EQ(mismatches[k], 0) << w.name;
    EXPECT_LE(last, 1.1 * first) << w.name;
  }
}

} // namespace

namespace
{
using U8L_2 = itk::Image<unsigned char, 2>;

/** Runs `filter` on backend b and expects an ExceptionObject whose text has `words`; the output holds no buffer. */
template <class TFilterPointer>
void
ExpectLabelTypeRefused(const TFilterPointer & filter, Backend b, const std::string & words)
{
  filter->SetBackend(b);
  try
  {
    filter->Update();
    ADD_FAILURE() << filter->GetNameOfClass() << ": no exception";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(words), std::string::npos) << e.GetDescription();
  }
  EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << filter->GetNameOfClass();
}

/** Label types too small for the regions: every algorithm whose region count depends on the image refuses with the
 * count and the type's limit, on both backends, and leaves no output. (Connected components: its own test.) */
TEST(Reliability, LabelTypesTooSmallAreRefused)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (HasCudaDevice())
    backends.push_back(Backend::CUDA);
  const auto relief = Relief(64, 9); // hundreds of basins
  const auto grey   = RandomImage<U8_2>(Size<U8_2>({ 64, 64 }), 0.9, 9, 200);
  for (const Backend b : backends)
  {
    auto watershed = itk::CudaWatershedImageFilter<F_2, U8L_2>::New();
    watershed->SetInput(relief);
    ExpectLabelTypeRefused(watershed, b, "more than the label type holds (255)");

    auto waterpixels = itk::CudaWaterpixelImageFilter<U8_2, U8L_2>::New();
    waterpixels->SetInput(grey);
    waterpixels->SetGridStep(2); // 1024 cells
    ExpectLabelTypeRefused(waterpixels, b, "1024 waterpixels do not fit the label type (at most 255)");

    auto tree = itk::CudaImageToAlphaTreeFilter<U8_2>::New();
    tree->SetInput(grey);
    tree->SetBackend(b);
    auto cut = itk::AlphaTreeCutImageFilter<U8L_2>::New();
    cut->SetInput(tree->GetOutput());
    cut->SetAlpha(0);
    ExpectLabelTypeRefused(cut, b, "regions do not fit the label type (at most 255)");

    auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<U8_2>::New();
    dendrogram->SetInput(grey);
    dendrogram->SetBackend(b);
    auto clusters = itk::DendrogramToLabelImageFilter<U8L_2>::New();
    clusters->SetInput(dendrogram->GetOutput());
    clusters->SetNumberOfClusters(1000);
    try
    {
      clusters->Update();
      ADD_FAILURE() << "DendrogramToLabelImageFilter: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("1000 clusters do not fit the label type (at most 255)"),
                std::string::npos)
        << e.GetDescription();
    }
  }
}

} // namespace

namespace
{
/** One axis of 2^31 + 1 pixels (a 2^31 + 1 by 1 image), on the GPU, when CHS_LARGE_TESTS is set (50 GB of host
 * memory at the peak on the GPU machine): connected components, the watershed, the waterfall and the seeded IFT
 * label it (every pixel labelled); waterpixels, the alpha-tree and the image dendrogram refuse it with an exception
 * that names their limit of 2^31 - 1 (pixels along an axis, or pixels); none crashes. */
/** Every filter on an image of n = 2^31 + 1 pixels along one axis (`size`; the other axes 1): labelled whole, or
 * refused with the limit named. */
template <unsigned D>
void
OneLongAxis(const itk::Size<D> & size, itk::SizeValueType n)
{
  using U8    = itk::Image<unsigned char, D>;
  using F     = itk::Image<float, D>;
  using L32   = itk::Image<unsigned int, D>;
  auto report = [](const char * what, const std::function<std::string()> & run)
  {
    try
    {
      std::cout << what << ": " << run() << std::endl;
    }
    catch (const itk::ExceptionObject & e)
    {
      const std::string text = e.GetDescription();
      std::cout << what << ": refused: " << text << std::endl;
      // A refusal must name the limit: 2^31 pixels (node ids, axis indices), or the CUDA grid's limit on the rows and
      // slices of a launch (connected components, the watershed's blocks, the IFT's tiles along y and z).
      EXPECT_TRUE(text.find("2^31") != std::string::npos || text.find("at most 2147483647") != std::string::npos ||
                  text.find("beyond the CUDA grid limits") != std::string::npos ||
                  text.find("too large across y or z") != std::string::npos)
        << what << ": " << text;
    }
  };
  auto allLabelled = [](const L32 * labels)
  {
    const auto * p = labels->GetBufferPointer();
    const size_t m = labels->GetLargestPossibleRegion().GetNumberOfPixels();
    return std::count(p, p + m, 0u) == 0;
  };
  {
    auto image = MakeImage<U8>(size, 1);
    for (itk::SizeValueType i = 0; i < n; i += 1000)
      image->GetBufferPointer()[i] = 0;
    report("connected components",
           [&]
           {
             auto f = itk::CudaConnectedComponentImageFilter<U8, L32>::New();
             f->SetInput(image);
             f->SetBackend(Backend::CUDA);
             f->Update();
             EXPECT_EQ(f->GetObjectCount(), (n - 1) / 1000 + ((n - 1) % 1000 ? 1 : 0));
             return std::to_string(f->GetObjectCount()) + " objects";
           });
    report("waterpixels",
           [&]
           {
             auto f = itk::CudaWaterpixelImageFilter<U8, L32>::New();
             f->SetInput(image);
             f->SetGridStep(1 << 20);
             f->SetBackend(Backend::CUDA);
             f->Update();
             EXPECT_TRUE(allLabelled(f->GetOutput()));
             return std::to_string(f->GetNumberOfSuperpixels()) + " waterpixels";
           });
    report("alpha-tree",
           [&]
           {
             auto f = itk::CudaImageToAlphaTreeFilter<U8>::New();
             f->SetInput(image);
             f->SetBackend(Backend::CUDA);
             f->Update();
             return std::to_string(f->GetOutput()->GetNumberOfNodes()) + " nodes";
           });
    report("image dendrogram",
           [&]
           {
             auto f = itk::CudaImageToSingleLinkageDendrogramFilter<U8>::New();
             f->SetInput(image);
             f->SetBackend(Backend::CUDA);
             f->Update();
             return std::to_string(f->GetOutput()->GetNumberOfNodes()) + " nodes";
           });
  }
  {
    auto relief = MakeImage<F>(size);
    for (itk::SizeValueType i = 0; i < n; ++i)
      relief->GetBufferPointer()[i] = float(i % 1024) * float(1023 - i % 1024);
    report("watershed",
           [&]
           {
             auto f = itk::CudaWatershedImageFilter<F, L32>::New();
             f->SetInput(relief);
             f->SetBackend(Backend::CUDA);
             f->Update();
             EXPECT_TRUE(allLabelled(f->GetOutput()));
             return std::to_string(f->GetObjectCount()) + " basins";
           });
    report("waterfall (hierarchy only)",
           [&]
           {
             auto f = itk::CudaWaterfallImageFilter<F, L32>::New();
             f->SetInput(relief);
             f->ProduceLevelImagesOff();
             f->SetBackend(Backend::CUDA);
             f->Update();
             return std::to_string(f->GetNumberOfComputedLevels()) + " levels";
           });
    report("seeded IFT",
           [&]
           {
             auto seeds = MakeImage<L32>(size);
             for (itk::SizeValueType i = 0; i < n; i += 1024) // a seed in every period of the relief: short paths
               seeds->GetBufferPointer()[i] = unsigned(i / 1024 % 1000) + 1;
             auto f = itk::CudaImageForestingTransformImageFilter<F, L32>::New();
             f->SetInput(relief);
             f->SetSeedImage(seeds);
             f->SetBackend(Backend::CUDA);
             f->Update();
             EXPECT_TRUE(allLabelled(f->GetOutput()));
             return std::string("labelled");
           });
  }
}

TEST(Reliability, GPUOneAxisOf2To31Plus1Pixels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const itk::SizeValueType n = (itk::SizeValueType(1) << 31) + 1;
  OneLongAxis<2>(Size<U8_2>({ n, 1 }), n);
}

TEST(Reliability, GPUOneAxisOf2To31Plus1Voxels3D)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  const itk::SizeValueType n = (itk::SizeValueType(1) << 31) + 1;
  std::cout << "along z:" << std::endl;
  OneLongAxis<3>(Size<U8_3>({ 1, 1, n }), n);
  std::cout << "along x:" << std::endl;
  OneLongAxis<3>(Size<U8_3>({ n, 1, 1 }), n);
}

} // namespace

namespace
{
/** The description of the exception `run` throws, empty when it throws none. */
template <class F>
std::string
Refusal(F && run)
{
  try
  {
    run();
  }
  catch (const itk::ExceptionObject & e)
  {
    return e.GetDescription();
  }
  catch (const std::exception & e)
  {
    return e.what();
  }
  return std::string();
}
} // namespace

/** A run that does not fit the device's free memory (the test hook says 1 MiB is free) is refused before it allocates
 * anything, with an exception naming the bytes it needs and the bytes free; the outputs are released and the next
 * update succeeds. The filters whose runs reserve their device memory: connected components, the watershed, the
 * waterfall, waterpixels, the seeded IFT. */
TEST(Reliability, GPURefusedBeforeAllocatingWhenTheDeviceMemoryIsShort)
{
  CHS_REQUIRE_GPU();
  for (const unsigned k : { 0u, 1u, 2u, 6u, 7u })
  {
    auto              w        = MakeWorkload(k, 500 + k);
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name;
    const uint64_t allocations = chs::testing::DeviceAllocations();
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const std::string what = Refusal([&] { w->run(Backend::CUDA, 0); });
    chs::testing::SetDeviceMemoryLimit(0);
    EXPECT_NE(what.find(" needs "), std::string::npos) << w->name << ": " << what;
    EXPECT_NE(what.find(" bytes) of device memory; device 0 has 0.00 GB (1048576 bytes) free"), std::string::npos)
      << w->name << ": " << what;
    EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << w->name << ": allocated before it was refused";
    EXPECT_TRUE(w->released()) << w->name << ": an output kept its buffer";
    w->reset();
    EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after the refusal";
  }
}

/** The reservation bounds the run's peak, and the check uses it: a device with fewer bytes free than the run reserved
 * refuses it, one with twice as many (and the pool's margin) runs it; the watershed from markers finds its minima
 * and floods within its bound. */
TEST(Reliability, GPUReservationBoundsThePeakAndDecidesTheRefusal)
{
  CHS_REQUIRE_GPU();
  auto           image = Relief(257, 5);
  chs::Grid      grid;
  const uint64_t n = 257 * 257;
  grid.size[0] = grid.size[1] = 257;
  std::vector<uint32_t>    labels(n), again(n);
  chs::ExecutionContext    context;
  chs::RunInfo             info;
  chs::WatershedParameters p;
  const float *            pixels = image->GetBufferPointer();
  chs::WatershedCUDA(pixels, grid, p, labels.data(), context, &info);
  EXPECT_GT(info.peakDeviceBytes, n * 16);
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  chs::testing::SetDeviceMemoryLimit(info.reservedDeviceBytes);
  EXPECT_THROW(chs::WatershedCUDA(pixels, grid, p, again.data(), context), chs::DeviceMemoryError);
  chs::testing::SetDeviceMemoryLimit(2 * info.reservedDeviceBytes + (uint64_t(64) << 20));
  chs::WatershedCUDA(pixels, grid, p, again.data(), context);
  chs::testing::SetDeviceMemoryLimit(0);
  EXPECT_EQ(again, labels);

  for (const double level : { 0.0, 3.0 })
  {
    chs::MarkerWatershedParameters m;
    m.level = level;
    chs::RunInfo mi;
    chs::MarkerWatershedCUDA<float, uint32_t>(pixels, nullptr, nullptr, grid, m, labels.data(), context, &mi);
    EXPECT_GT(mi.peakDeviceBytes, n * 16) << "level " << level;
    EXPECT_LE(mi.peakDeviceBytes, mi.reservedDeviceBytes) << "level " << level;
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const uint64_t allocations = chs::testing::DeviceAllocations();
    const auto     refused     = [&]
    { chs::MarkerWatershedCUDA<float, uint32_t>(pixels, nullptr, nullptr, grid, m, again.data(), context); };
    EXPECT_THROW(refused(), chs::DeviceMemoryError) << "level " << level;
    chs::testing::SetDeviceMemoryLimit(0);
    EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << "level " << level;
  }
}

/** A volume larger than the device (16384 x 16384 x 4096 voxels, 1.1 TB of 8-bit input) is refused by connected
 * components, whose 64-bit paths accept its size, before anything is read or allocated. */
TEST(Reliability, GPUVolumeLargerThanTheDeviceIsRefused)
{
  CHS_REQUIRE_GPU();
  chs::Grid grid;
  grid.dimension = 3;
  grid.size[0] = grid.size[1] = 16384;
  grid.size[2]                = 4096;
  uint64_t freeBytes = 0, totalBytes = 0;
  chs::CudaDeviceMemoryInfo(0, freeBytes, totalBytes);
  ASSERT_GT(grid.NumberOfVoxels(), totalBytes);
  std::vector<uint8_t>  input(1); // never read: the run is refused first
  std::vector<uint32_t> labels(1);
  const uint64_t        allocations = chs::testing::DeviceAllocations();
  const std::string     what        = Refusal(
    [&]
    {
      chs::LabelConnectedComponentsCUDA<uint8_t, uint32_t>(
        input.data(), nullptr, labels.data(), grid, {}, nullptr, chs::ExecutionContext{}, nullptr);
    });
  EXPECT_NE(what.find("the connected-components labeling of 16384 x 16384 x 4096 voxels needs "), std::string::npos)
    << what;
  EXPECT_NE(what.find(" free"), std::string::npos) << what;
  EXPECT_EQ(chs::testing::DeviceAllocations(), allocations);
}

namespace
{
/** The bytes a refusal's message says the run needs ("needs 0.05 GB (54853904 bytes)"), 0 when it names none. */
uint64_t
NeededBytes(const std::string & what)
{
  const size_t at   = what.find(" needs ");
  const size_t open = at == std::string::npos ? at : what.find(" GB (", at);
  return open == std::string::npos ? 0 : std::stoull(what.substr(open + 5));
}
} // namespace

namespace
{
/** `bytes` of read-only address space that reads as zeros and takes no memory (anonymous, private, not reserved):
 * the inputs and outputs of runs that must be refused before they read them into device memory or write them. A
 * refused run that wrote to one would crash the test. */
class ZeroSpace
{
public:
  explicit ZeroSpace(uint64_t bytes)
    : m_Bytes(bytes)
  {
    void * p = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    m_Data   = p == MAP_FAILED ? nullptr : p;
  }
  ~ZeroSpace()
  {
    if (m_Data)
      munmap(m_Data, m_Bytes);
  }
  ZeroSpace(const ZeroSpace &) = delete;
  ZeroSpace &
  operator=(const ZeroSpace &) = delete;

  template <typename T>
  T *
  As() const
  {
    return static_cast<T *>(m_Data);
  }

private:
  uint64_t m_Bytes = 0;
  void *   m_Data  = nullptr;
};

/** Expects `run` to throw chs::DeviceMemoryError naming more bytes needed than the device has free, and to allocate
 * nothing on the device before it does. */
template <class F>
void
ExpectRefusedAsLargerThanTheDevice(const std::string & name, F && run)
{
  uint64_t freeBytes = 0, totalBytes = 0;
  chs::CudaDeviceMemoryInfo(0, freeBytes, totalBytes);
  const uint64_t allocations = chs::testing::DeviceAllocations();
  try
  {
    run();
    ADD_FAILURE() << name << ": not refused";
  }
  catch (const chs::DeviceMemoryError & e)
  {
    const std::string what = e.what();
    std::cout << name << ": " << what << std::endl;
    EXPECT_GT(NeededBytes(what), totalBytes) << name << ": " << what;
    EXPECT_NE(what.find(" free"), std::string::npos) << name << ": " << what;
  }
  catch (const std::exception & e)
  {
    ADD_FAILURE() << name << ": refused with another exception: " << e.what();
  }
  EXPECT_EQ(chs::testing::DeviceAllocations(), allocations) << name << ": allocated before it was refused";
}
} // namespace

/** Issue 31's bad input: a volume larger than the device, within each algorithm's size limits, is refused by every
 * filter's CUDA backend before it reads the input into device memory or allocates anything, with DeviceMemoryError
 * naming the bytes it needs (more than the device has) and the bytes free; then each filter runs again and gives
 * the CPU reference's result. The inputs and outputs are address space that reads as zeros (ZeroSpace). Waterpixels
 * are not among them: their limit, 2^31 voxels, fits an H200 (28 bytes a voxel). */
TEST(Reliability, GPUEveryFilterRefusesAVolumeLargerThanTheDevice)
{
  CHS_REQUIRE_GPU();
  std::vector<std::shared_ptr<Workload>> workloads;
  std::vector<Fingerprint>               expected;
  for (unsigned k = 0; k < 8; ++k)
  {
    workloads.push_back(MakeWorkload(k, 700 + k));
    expected.push_back(workloads.back()->run(Backend::CPU, 0));
  }
  const chs::ExecutionContext context;

  // 2048 x 2048 x 4096 uint8 voxels (1.7e10, the 64-bit paths; 12 to 24 bytes a voxel and more).
  chs::Grid volume;
  volume.dimension = 3;
  volume.size[0] = volume.size[1] = 2048;
  volume.size[2]                  = 4096;
  const uint64_t n                = volume.NumberOfVoxels();
  {
    const ZeroSpace image(n), labels(n * sizeof(uint32_t)), seeds(n * sizeof(uint32_t));
    ASSERT_NE(image.As<uint8_t>(), nullptr);
    ASSERT_NE(labels.As<uint32_t>(), nullptr);
    ExpectRefusedAsLargerThanTheDevice(
      "watershed",
      [&]
      { chs::WatershedCUDA(image.As<uint8_t>(), volume, chs::WatershedParameters{}, labels.As<uint32_t>(), context); });
    ExpectRefusedAsLargerThanTheDevice(
      "waterfall",
      [&]
      {
        const chs::WaterfallLevelSink<uint32_t> sink = [&](unsigned, uint64_t) { return labels.As<uint32_t>(); };
        chs::WaterfallCUDA(image.As<uint8_t>(), volume, chs::WaterfallParameters{}, sink, context);
      });
    ExpectRefusedAsLargerThanTheDevice("watershed from markers (the minima as markers)",
                                       [&]
                                       {
                                         chs::MarkerWatershedCUDA<uint8_t, uint32_t>(image.As<uint8_t>(),
                                                                                     nullptr,
                                                                                     nullptr,
                                                                                     volume,
                                                                                     chs::MarkerWatershedParameters{},
                                                                                     labels.As<uint32_t>(),
                                                                                     context);
                                       });
    ExpectRefusedAsLargerThanTheDevice("Image Foresting Transform",
                                       [&]
                                       {
                                         chs::ImageForestingTransformCUDA<uint8_t, uint32_t>(
                                           image.As<uint8_t>(),
                                           seeds.As<uint32_t>(),
                                           volume,
                                           chs::ForestingTransformParameters{},
                                           labels.As<uint32_t>(),
                                           nullptr,
                                           nullptr,
                                           context);
                                       });
  }
  {
    // The alpha-tree: 1290^3 uint8 voxels (2.15e9, below the node ids' 2^31 - 1), 26-connected (93 bytes a voxel).
    chs::Grid cube;
    cube.dimension = 3;
    cube.size[0] = cube.size[1] = cube.size[2] = 1290;
    const ZeroSpace          image(cube.NumberOfVoxels());
    chs::AlphaTreeParameters p;
    p.graph.fullyConnected = true;
    ExpectRefusedAsLargerThanTheDevice("alpha-tree",
                                       [&]
                                       {
                                         chs::ImageAlphaTreeCUDA<uint8_t>(
                                           image.As<uint8_t>(),
                                           cube,
                                           p,
                                           [](uint64_t) -> chs::AlphaTreeArrays
                                           { throw std::logic_error("the tree's arrays were asked for"); },
                                           context);
                                       });
  }
  {
    // The image dendrogram: 40000^2 uint8 pixels (1.6e9, 3.2e9 edge slots; 126 bytes a pixel).
    chs::Grid plane;
    plane.dimension = 2;
    plane.size[0] = plane.size[1] = 40000;
    plane.size[2]                 = 1;
    const ZeroSpace image(plane.NumberOfVoxels());
    ExpectRefusedAsLargerThanTheDevice(
      "image dendrogram",
      [&]
      {
        chs::ImageSingleLinkageCUDA<uint8_t>(
          image.As<uint8_t>(), plane, chs::ImageGraphParameters{}, chs::DendrogramArrays{}, context);
      });
    // The graph dendrogram: 4e9 float-weighted edges on 1e9 vertices (28 bytes an edge kept, and the sort's).
    const uint64_t  m = 4000000000ull;
    const ZeroSpace ends(m * sizeof(uint32_t)), weights(m * sizeof(float));
    ExpectRefusedAsLargerThanTheDevice("graph dendrogram",
                                       [&]
                                       {
                                         chs::GraphSingleLinkageCUDA<float>(ends.As<uint32_t>(),
                                                                            ends.As<uint32_t>(),
                                                                            weights.As<float>(),
                                                                            m,
                                                                            1000000000ull,
                                                                            false,
                                                                            chs::DendrogramArrays{},
                                                                            context);
                                       });
  }
  for (unsigned k = 0; k < 8; ++k)
    EXPECT_EQ(workloads[k]->run(Backend::CUDA, 0), expected[k]) << workloads[k]->name << ", after the refusals";
}

/** A device exactly as large as a run's check before allocating asks for (the test hook): the run then either fits or
 * is refused at a part it sizes on the way (the waterfall's parent table, connected components' statistics, Boruvka's
 * later rounds of the image and graph dendrograms), with DeviceMemoryError naming what it holds; never another error,
 * nothing left on the device, and the next update gives the reference's result. */
TEST(Reliability, GPURefusedAtThePartsSizedOnTheWay)
{
  CHS_REQUIRE_GPU();
  unsigned staged = 0; // refusals at a part sized on the way (the message names what the run holds)
  for (const unsigned k : { 0u, 2u, 4u, 5u })
  {
    auto w = MakeWorkload(k, 600 + k);
    if (k == 0)
      dynamic_cast<itk::CudaConnectedComponentImageFilter<U8_3, L32_3> *>(w->filters.front())->ComputeStatisticsOn();
    const Fingerprint expected = w->run(Backend::CPU, 0);
    ASSERT_EQ(w->run(Backend::CUDA, 0), expected) << w->name;
    uint64_t freeBefore = 0, total = 0;
    chs::CudaDeviceMemoryInfo(0, freeBefore, total);
    chs::testing::SetDeviceMemoryLimit(uint64_t(1) << 20);
    const uint64_t first = NeededBytes(Refusal([&] { w->run(Backend::CUDA, 0); }));
    chs::testing::SetDeviceMemoryLimit(0);
    ASSERT_GT(first, uint64_t(1) << 20) << w->name;
    w->reset();
    chs::testing::SetDeviceMemoryLimit(first);
    const std::string what = Refusal([&] { w->run(Backend::CUDA, 0); });
    chs::testing::SetDeviceMemoryLimit(0);
    std::cout << w->name << ": a device of " << first << " bytes: " << (what.empty() ? "fits" : what) << std::endl;
    staged += what.find(" it holds; device 0 has ") != std::string::npos;
    if (!what.empty())
    {
      EXPECT_NE(what.find(" of device memory"), std::string::npos) << w->name << ": " << what;
      EXPECT_EQ(what.find("could not allocate"), std::string::npos) << w->name << ": " << what;
      EXPECT_TRUE(w->released()) << w->name;
      w->reset();
    }
    uint64_t freeAfter = 0;
    chs::CudaDeviceMemoryInfo(0, freeAfter, total);
    EXPECT_EQ(freeAfter, freeBefore) << w->name;
    EXPECT_EQ(w->run(Backend::CUDA, 0), expected) << w->name << ", after the refusal";
  }
  EXPECT_GT(staged, 0u) << "no run was refused at a part sized on the way";
}
