// Reliability under concurrent and repeated use: every algorithm's filters from several host threads at once (both
// backends, shared and separate CUDA streams, two devices), and every device allocation of every filter made to
// fail in turn. Each workload keeps its own filters and input, as a thread of a Slicer session or a Dask worker would.
// What the reliability tests share: the filters' runs and inputs.
#ifndef itkReliabilityTestSupport_h
#define itkReliabilityTestSupport_h

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
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "Watershed/chsWatershedBackends.h"
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

#endif
