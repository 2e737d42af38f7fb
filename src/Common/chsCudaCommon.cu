#include "chsCudaCommon.cuh"
#include "chsHostCache.h"

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#  include <emmintrin.h>
#endif

namespace chs
{
namespace
{
std::atomic<int>      g_FailAllocationCountdown{ 0 };
std::atomic<uint64_t> g_DeviceMemoryLimit{ 0 };
std::atomic<uint64_t> g_HeldBytes{ 0 }; // held by every RawDeviceBuffer of the process
std::atomic<uint64_t> g_LimitBase{ 0 }; // g_HeldBytes when the limit was set
std::atomic<uint64_t> g_DeviceAllocations{ 0 };
std::atomic<uint64_t> g_Overruns{ 0 };
std::mutex            g_OverrunMutex;
std::string           g_LastOverrun;
} // namespace

namespace testing
{
void
FailDeviceAllocationAfter(int n)
{
  g_FailAllocationCountdown.store(n);
}

void
SetDeviceMemoryLimit(uint64_t bytes)
{
  g_LimitBase.store(g_HeldBytes.load());
  g_DeviceMemoryLimit.store(bytes);
}

uint64_t
AvailableDeviceBytes(int device)
{
  detail::DeviceScope scope(device);
  return detail::AvailableDeviceBytes(device);
}

uint64_t
DeviceAllocations()
{
  return g_DeviceAllocations.load();
}

uint64_t
DeviceMemoryOverruns(std::string * last)
{
  std::lock_guard<std::mutex> lock(g_OverrunMutex);
  if (last)
    *last = g_LastOverrun;
  return g_Overruns.load();
}

namespace
{
std::atomic<uint64_t> g_HostTransferBytes{ 0 };
}

uint64_t
HostTransferBytes()
{
  return g_HostTransferBytes.load();
}

uintptr_t
CreateStream(int device)
{
  detail::DeviceScope scope(device);
  cudaStream_t        stream = nullptr;
  CHS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return reinterpret_cast<uintptr_t>(stream);
}

void
DestroyStream(uintptr_t stream)
{
  CHS_CUDA_CHECK(cudaStreamDestroy(reinterpret_cast<cudaStream_t>(stream)));
}
} // namespace testing

int
CudaDeviceCount(std::string * why)
{
  int         count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
  {
    cudaGetLastError();
    if (why)
    {
      *why = std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
    }
    return 0;
  }
  if (count == 0 && why)
  {
    *why = "the CUDA runtime reports no device";
  }
  return count;
}

std::string
CudaDeviceName(int device)
{
  cudaDeviceProp properties{};
  CHS_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

void
CudaDeviceMemoryInfo(int device, uint64_t & freeBytes, uint64_t & totalBytes)
{
  detail::DeviceScope scope(device);
  // Finish pending stream-ordered frees and hand the pool's cached memory back, so that the figure counts only live
  // allocations.
  CHS_CUDA_CHECK(cudaDeviceSynchronize());
  cudaMemPool_t pool;
  CHS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  CHS_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  size_t f = 0, t = 0;
  CHS_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  freeBytes  = f;
  totalBytes = t;
}

namespace detail
{

namespace
{
/** The arrays RegisterHostArray locked: base address -> bytes. */
struct Registry
{
  std::mutex                    mutex;
  std::map<uintptr_t, uint64_t> arrays;
  uint64_t                      bytes = 0; // locked in all
};
Registry &
TheRegistry()
{
  static Registry * registry = new Registry; // never destroyed, like the staging buffers
  return *registry;
}
} // namespace

bool
RegisterHostArray(void * p, uint64_t bytes)
{
  if (p == nullptr || bytes == 0)
    return false;
  const uint64_t              limit = GetHostCacheLimit();
  Registry &                  r     = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.bytes + bytes > limit)
    return false;
  if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) != cudaSuccess)
  {
    cudaGetLastError(); // no driver or device, or no memory to lock: the transfers stage through the pinned buffers
    return false;
  }
  r.arrays[reinterpret_cast<uintptr_t>(p)] = bytes;
  r.bytes += bytes;
  return true;
}

void
UnregisterHostArray(void * p)
{
  if (p == nullptr)
    return;
  Registry &                  r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto                  it = r.arrays.find(reinterpret_cast<uintptr_t>(p));
  if (it == r.arrays.end())
    return;
  cudaHostUnregister(p);
  cudaGetLastError();
  r.bytes -= it->second;
  r.arrays.erase(it);
}

bool
IsRegisteredHostRange(const void * p, uint64_t bytes)
{
  const uintptr_t             a = reinterpret_cast<uintptr_t>(p);
  Registry &                  r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto                        it = r.arrays.upper_bound(a);
  if (it == r.arrays.begin())
    return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second;
}

void
ThrowCudaError(cudaError_t error, const char * call, const char * file, int line)
{
  cudaGetLastError(); // clear a non-sticky error so that the next run starts clean
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ") in " +
                  call + " at " + file + ":" + std::to_string(line));
}

DeviceScope::DeviceScope(int device)
{
  CHS_CUDA_CHECK(cudaGetDevice(&m_Previous));
  CHS_CUDA_CHECK(cudaSetDevice(device));
  // Device memory a run frees stays mapped in the device's stream-ordered memory pool (the driver's default unmaps it
  // at every synchronisation, and mapping it again costs more than many kernels: 3 of the 11 ms of a 4096^2 minimum
  // spanning tree on an H200). CHS_POOL_RELEASE_THRESHOLD=<bytes> sets how much the pool keeps instead (0: the
  // driver's default). Set once per device and process.
  static std::atomic<uint64_t> configured{ 0 };
  const uint64_t               bit = uint64_t(1) << (device & 63);
  if (!(configured.fetch_or(bit) & bit))
  {
    uint64_t threshold = ~uint64_t(0);
    if (const char * keep = std::getenv("CHS_POOL_RELEASE_THRESHOLD"))
      threshold = std::strtoull(keep, nullptr, 10);
    cudaMemPool_t pool;
    CHS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
    CHS_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  }
}

DeviceScope::~DeviceScope()
{
  cudaSetDevice(m_Previous);
}

namespace
{
std::string
Bytes(uint64_t b)
{
  char text[64];
  std::snprintf(text, sizeof(text), "%.2f GB (%llu bytes)", double(b) / 1e9, static_cast<unsigned long long>(b));
  return text;
}
} // namespace

std::string
DescribeRun(const char * name, const Grid & grid)
{
  std::string s = std::string("the ") + name + " of " + std::to_string(grid.size[0]);
  for (unsigned d = 1; d < grid.dimension; ++d)
    s += " x " + std::to_string(grid.size[d]);
  return s + " voxels";
}

uint64_t
AvailableDeviceBytes(int device)
{
  size_t f = 0, t = 0;
  CHS_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  cudaMemPool_t pool;
  CHS_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t reservedBytes = 0, usedBytes = 0;
  CHS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reservedBytes));
  CHS_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &usedBytes));
  uint64_t available = uint64_t(f) + (reservedBytes > usedBytes ? uint64_t(reservedBytes - usedBytes) : 0);
  // With the test hook, the device has `limit` bytes free when it was set: less what the process took since.
  const uint64_t limit = g_DeviceMemoryLimit.load();
  if (!limit)
    return available;
  const uint64_t held = g_HeldBytes.load(), base = g_LimitBase.load(), since = held > base ? held - base : 0;
  return std::min(available, limit > since ? limit - since : 0);
}

void
ReserveDeviceMemory(MemoryTracker & tracker, uint64_t bytes, int device)
{
  tracker.reserved += bytes;
  const uint64_t still = tracker.reserved > tracker.current ? tracker.reserved - tracker.current : 0;
  if (still == 0)
    return;
  // The pool rounds allocations up (to 2 MiB pages for large ones): a run of k arrays may take k x 2 MiB more.
  const uint64_t need      = still + still / 256 + (uint64_t(32) << 20);
  const uint64_t available = AvailableDeviceBytes(device);
  if (need > available)
  {
    tracker.reserved -= bytes;
    throw DeviceMemoryError("chs: " + (tracker.what.empty() ? std::string("the run") : tracker.what) + " needs " +
                            Bytes(need) + " of device memory" +
                            (tracker.current ? " more than the " + Bytes(tracker.current) + " it holds" : "") +
                            "; device " + std::to_string(device) + " has " + Bytes(available) +
                            " free. Use a smaller image (or region), a narrower pixel type, or a device with more "
                            "memory; memory held by other processes or arrays on the device counts against it.");
  }
}

RawDeviceBuffer::RawDeviceBuffer(uint64_t bytes, cudaStream_t stream, MemoryTracker * tracker)
  : m_Bytes(bytes)
  , m_Stream(stream)
  , m_Tracker(tracker)
{
  uint64_t request = std::max<uint64_t>(bytes, 1);
  if (g_FailAllocationCountdown.load() > 0 && g_FailAllocationCountdown.fetch_sub(1) == 1)
  {
    request = uint64_t(1) << 62; // no device has this much: the driver really refuses it
  }
  g_DeviceAllocations.fetch_add(1);
  if (m_Tracker && !m_Tracker->what.empty() && m_Tracker->current + bytes > m_Tracker->reserved)
  {
    std::lock_guard<std::mutex> lock(g_OverrunMutex);
    g_Overruns.fetch_add(1);
    g_LastOverrun = m_Tracker->what + " allocated " + std::to_string(bytes) + " bytes holding " +
                    std::to_string(m_Tracker->current) + " of the " + std::to_string(m_Tracker->reserved) +
                    " it reserved";
  }
  const cudaError_t error = cudaMallocAsync(&m_Pointer, request, stream);
  if (error == cudaErrorMemoryAllocation)
  {
    cudaGetLastError();
    m_Pointer = nullptr;
    throw DeviceMemoryError("chs: CUDA error cudaErrorMemoryAllocation: " +
                            (m_Tracker && !m_Tracker->what.empty() ? m_Tracker->what : std::string("a run")) +
                            " could not allocate " + Bytes(request) + " of device memory" +
                            (m_Tracker ? " (it held " + Bytes(m_Tracker->current) + ")" : std::string()));
  }
  CHS_CUDA_CHECK(error);
  g_HeldBytes.fetch_add(bytes);
  if (m_Tracker)
  {
    m_Tracker->current += bytes;
    m_Tracker->peak = std::max(m_Tracker->peak, m_Tracker->current);
  }
}

RawDeviceBuffer::~RawDeviceBuffer()
{
  if (m_Pointer)
  {
    cudaFreeAsync(m_Pointer, m_Stream);
    g_HeldBytes.fetch_sub(m_Bytes);
  }
  if (m_Tracker)
  {
    m_Tracker->current -= m_Bytes;
  }
}

EventTimer::EventTimer(cudaStream_t stream)
  : m_Stream(stream)
{
  CHS_CUDA_CHECK(cudaEventCreate(&m_Start));
  try
  {
    CHS_CUDA_CHECK(cudaEventCreate(&m_Stop));
  }
  catch (...)
  {
    cudaEventDestroy(m_Start);
    throw;
  }
}

EventTimer::~EventTimer()
{
  cudaEventDestroy(m_Start);
  cudaEventDestroy(m_Stop);
}

void
EventTimer::Start()
{
  CHS_CUDA_CHECK(cudaEventRecord(m_Start, m_Stream));
}

void
EventTimer::Stop()
{
  CHS_CUDA_CHECK(cudaEventRecord(m_Stop, m_Stream));
}

double
EventTimer::Milliseconds()
{
  CHS_CUDA_CHECK(cudaEventSynchronize(m_Stop));
  float ms = 0.f;
  CHS_CUDA_CHECK(cudaEventElapsedTime(&ms, m_Start, m_Stop));
  return ms;
}

namespace
{
/** Pinned staging buffers for host transfers: `slots` buffers of `chunk` bytes, allocated on first use and kept for
 * the life of the process (pinning memory costs far more than one transfer). One transfer at a time uses them; a
 * concurrent one takes the plain path. The shape is the default below unless a test sets another
 * (testing::SetHostStaging), which frees the buffers; the next transfer allocates the new ones. */
constexpr uint64_t kStagingMinimum  = uint64_t(4) << 20;
constexpr unsigned kMaxStagingSlots = 64;
/** At most this many worker threads, whatever the shape asks for. */
constexpr unsigned kMaxHostThreads = 16;

struct StagingShape
{
  /** 4 MiB chunks, 8 slots, 8 workers sharing each chunk, non-temporal stores for downloads: measured best of the
   * shapes tried on the H100 machine (bench/results/EndToEnd/, "The staging buffers' shape": downloads into pageable
   * memory 43-53 GB/s instead of 25-34; the 4096^2 alpha-tree 2 to 7.7 ms faster end to end; the watershed as
   * before, where 16 workers or non-temporal stores for uploads made it 0.2 to 0.4 ms slower). */
  uint64_t chunk   = uint64_t(4) << 20;
  unsigned slots   = 8;
  unsigned workers = 8;
  /** The workers' copies out of the slots into the caller's memory (downloads) and the zeroing of host arrays
   * (ZeroHost) use non-temporal stores, which skip the read for ownership of every destination line. Copies into
   * the slots (uploads) use plain stores: the DMA reads the slot next. */
  bool streaming = true;
};

struct Staging
{
  std::mutex   mutex;
  StagingShape shape;
  char *       slot[kMaxStagingSlots] = {};
  bool         tried                  = false;

  /** Under the mutex: the buffers, or false when pinned memory cannot be had. */
  bool
  Ready()
  {
    if (!tried)
    {
      tried = true;
      for (unsigned i = 0; i < shape.slots; ++i)
      {
        if (cudaHostAlloc(reinterpret_cast<void **>(&slot[i]), shape.chunk, cudaHostAllocPortable) != cudaSuccess)
        {
          cudaGetLastError();
          slot[i] = nullptr;
        }
      }
    }
    return std::all_of(slot, slot + shape.slots, [](char * b) { return b != nullptr; });
  }

  /** Under the mutex: frees the buffers and takes `s` for the next transfer. */
  void
  Reshape(const StagingShape & s)
  {
    for (auto & b : slot)
    {
      if (b)
        cudaFreeHost(b);
      b = nullptr;
    }
    shape = s;
    tried = false;
  }
};

Staging &
TheStaging()
{
  static Staging * staging = new Staging; // never destroyed: it may be used until the process ends
  return *staging;
}

/** Host threads for staged transfers, started on first use and kept (a transfer is too short to start threads
 * for: eight thread starts cost about as much as copying 16 MB). Run hands a job to the first `count` workers (after
 * the previous job has finished); Wait returns when they have all finished it. Used under the staging mutex, so
 * one job at a time.
 *
 * A sleeping thread takes a while to run again once woken (on the GPU machine, waking the workers added 0.3-0.9 ms
 * to a 16 MB upload that takes 0.5 ms in all), so a worker that has finished a job polls for the next one for
 * kSpin before it sleeps, and a run wakes the workers (Prewake) while it allocates device memory and while its
 * kernels run, ahead of its transfers. */
class WorkerPool
{
public:
  static constexpr std::chrono::microseconds kSpin{ 1000 };

  void
  Run(unsigned count, std::function<void(unsigned)> job)
  {
    std::unique_lock<std::mutex> lock(m_Mutex);
    m_Done.wait(lock, [this] { return m_Finished == m_Workers; });
    while (m_Threads.size() < count)
    {
      const unsigned id = static_cast<unsigned>(m_Threads.size());
      m_Threads.emplace_back([this, id] { Loop(id); });
    }
    m_Job      = std::move(job);
    m_Workers  = count;
    m_Finished = 0;
    m_Generation.store(m_Generation.load() + 1);
    m_Start.notify_all();
  }
  void
  Wait()
  {
    std::unique_lock<std::mutex> lock(m_Mutex);
    m_Done.wait(lock, [this] { return m_Finished == m_Workers; });
  }

private:
  void
  Loop(unsigned id)
  {
    uint64_t seen = 0;
    for (;;)
    {
      const auto until = std::chrono::steady_clock::now() + kSpin;
      while (m_Generation.load() == seen && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
      std::function<void(unsigned)> job;
      {
        std::unique_lock<std::mutex> lock(m_Mutex);
        m_Start.wait(lock, [&] { return m_Generation.load() != seen; });
        seen = m_Generation.load();
        if (id >= m_Workers)
          continue;
        job = m_Job;
      }
      job(id);
      std::lock_guard<std::mutex> lock(m_Mutex);
      if (++m_Finished == m_Workers)
        m_Done.notify_all();
    }
  }

  std::mutex                    m_Mutex;
  std::condition_variable       m_Start;
  std::condition_variable       m_Done;
  std::vector<std::thread>      m_Threads; // never joined: the pool lives as long as the process
  std::function<void(unsigned)> m_Job;
  unsigned                      m_Workers  = 0;
  unsigned                      m_Finished = 0;
  std::atomic<uint64_t>         m_Generation{ 0 }; // changed under m_Mutex; read without it while polling
};

WorkerPool &
TheWorkerPool()
{
  static WorkerPool * pool = new WorkerPool; // never destroyed, like the staging buffers
  return *pool;
}

/** The workers of a staged transfer: the caller's host threads (0: the machine's), at most the shape's. */
unsigned
StagingWorkers(unsigned hostThreads, const StagingShape & shape)
{
  const unsigned available = hostThreads ? hostThreads : std::max(1u, std::thread::hardware_concurrency());
  return std::min({ available, shape.workers, kMaxHostThreads });
}

using CopyFunction = void (*)(char *, const char *, uint64_t);

/** The work that a transfer interleaves with its DMAs (CopyToDeviceInStages, CopyToHostInStages). The DMAs run on
 * the device's copy stream, the work on the run's stream `run`; events order them. Uploads: after each DMA is issued,
 * `run` waits for it and `arrived` gets the length of the prefix on the device. Downloads: before a range's DMA is
 * issued, `produce` has enqueued on `run` the work that writes it (ranges of whole elements, at least kRangeBytes and
 * at most kMaxRanges a transfer, the next range's work enqueued ahead of each DMA), and the copy stream waits for
 * that work. */
class Stages
{
public:
  static constexpr uint64_t kRangeBytes = uint64_t(4) << 20;
  static constexpr uint64_t kMaxRanges  = 64;

  Stages(cudaStream_t                                    run,
         unsigned                                        elementBytes,
         const std::function<void(uint64_t)> *           arrived,
         const std::function<void(uint64_t, uint64_t)> * produce)
    : run(run)
    , m_ElementBytes(elementBytes)
    , m_Arrived(arrived)
    , m_Produce(produce)
  {
  }
  ~Stages()
  {
    for (cudaEvent_t e : m_Events)
      cudaEventDestroy(e);
  }
  Stages(const Stages &) = delete;
  Stages &
  operator=(const Stages &) = delete;

  /** The copy stream starts after the work enqueued on `run` so far (the stream-ordered allocation of the device
   * array among it). */
  void
  Begin(cudaStream_t copy)
  {
    CHS_CUDA_CHECK(cudaEventRecord(Event(0), run));
    CHS_CUDA_CHECK(cudaStreamWaitEvent(copy, Event(0), 0));
  }

  /** Upload: `dma` (recorded after the DMA of the prefix of `bytes` bytes) is waited for by `run`. */
  void
  Arrived(cudaEvent_t dma, uint64_t bytes)
  {
    CHS_CUDA_CHECK(cudaStreamWaitEvent(run, dma, 0));
    (*m_Arrived)(bytes);
  }

  /** Download: the device bytes [begin, end) of `total` are about to be copied on `copy`: their range's work, and the
   * next range's, are enqueued on `run`, and `copy` waits for the first. */
  void
  Produced(uint64_t begin, uint64_t end, uint64_t total, cudaStream_t copy)
  {
    if (end <= begin)
      return;
    if (m_Range == 0)
    {
      m_Range = std::max(kRangeBytes, (total + kMaxRanges - 1) / kMaxRanges);
      m_Range = (m_Range + m_ElementBytes - 1) / m_ElementBytes * m_ElementBytes;
    }
    const uint64_t last = (end - 1) / m_Range;
    while (m_Produced <= last + 1 && m_Produced * m_Range < total)
    {
      const uint64_t a = m_Produced * m_Range, b = std::min(total, a + m_Range);
      (*m_Produce)(a / m_ElementBytes, b / m_ElementBytes);
      CHS_CUDA_CHECK(cudaEventRecord(Event(1 + m_Produced), run));
      ++m_Produced;
    }
    for (uint64_t r = begin / m_Range; r <= last; ++r)
      if (r >= m_Waited)
      {
        CHS_CUDA_CHECK(cudaStreamWaitEvent(copy, Event(1 + r), 0));
        m_Waited = r + 1;
      }
  }

  /** Download in one piece: the work of the whole array as one range. */
  void
  ProducedWhole(uint64_t total, cudaStream_t copy)
  {
    if (m_Range == 0)
      m_Range = total;
    Produced(0, total, total, copy);
  }

  const cudaStream_t run;

private:
  cudaEvent_t
  Event(uint64_t i)
  {
    while (m_Events.size() <= i)
    {
      cudaEvent_t e = nullptr;
      CHS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      m_Events.push_back(e);
    }
    return m_Events[i];
  }

  unsigned                                        m_ElementBytes;
  const std::function<void(uint64_t)> *           m_Arrived;
  const std::function<void(uint64_t, uint64_t)> * m_Produce;
  uint64_t                                        m_Range    = 0;
  uint64_t                                        m_Produced = 0;
  uint64_t                                        m_Waited   = 0;
  std::vector<cudaEvent_t>                        m_Events;
};

/** A non-blocking stream of `device` for the DMAs of transfers with Stages, created on first use and kept. */
cudaStream_t
CopyStream(int device)
{
  static std::mutex                    mutex;
  static std::map<int, cudaStream_t> * streams = new std::map<int, cudaStream_t>; // never destroyed
  std::lock_guard<std::mutex>          lock(mutex);
  cudaStream_t &                       s = (*streams)[device];
  if (!s)
    CHS_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

/** One staged transfer. The calling thread issues the chunks' DMAs in order, each into slot k mod S (S slots), and
 * is the only thread that waits for them (on the slot's event); it publishes how many DMAs have completed.
 * W worker threads each copy their slice of every chunk between the slot and the caller's memory, polling that
 * count. Chunk k's DMA is issued when all workers are done with it (to the device) or with chunk k - S (to the
 * host), and a slot's event is waited for before it is recorded again. Every way out waits for the workers and the
 * stream, so no copy into or out of a slot outlives the lock. (Whole chunks per worker, chunk k by worker k mod W,
 * moved 6 to 13 GB/s against 30 to 50 with slices on the H100 machine: bench/results/EndToEnd/staging-4ab2268/.) */
class StagedTransfer
{
public:
  /** `stream` carries the DMAs; with `stages`, it is the copy stream of the run stream `stages->run`, whose work the
   * hooks interleave with them (Stages). */
  StagedTransfer(const Staging & staging,
                 uint64_t        bytes,
                 cudaStream_t    stream,
                 unsigned        hostThreads,
                 Stages *        stages = nullptr)
    : m_Stages(stages)
    , m_Slots(staging.slot)
    , m_SlotCount(staging.shape.slots)
    , m_Chunk(staging.shape.chunk)
    , m_Bytes(bytes)
    , m_Chunks((bytes + m_Chunk - 1) / m_Chunk)
    , m_Stream(stream)
    , m_Done(new std::atomic<unsigned>[m_Chunks])
    , m_Workers(StagingWorkers(hostThreads, staging.shape))
  {
    for (uint64_t k = 0; k < m_Chunks; ++k)
      m_Done[k].store(0);
    for (unsigned i = 0; i < m_SlotCount; ++i)
      CHS_CUDA_CHECK(cudaEventCreateWithFlags(&m_Event[i], cudaEventDisableTiming));
  }
  ~StagedTransfer()
  {
    m_Failed.store(true);
    if (m_Running)
      TheWorkerPool().Wait();
    cudaStreamSynchronize(m_Stream);
    for (auto & e : m_Event)
      if (e)
        cudaEventDestroy(e);
  }
  StagedTransfer(const StagedTransfer &) = delete;
  StagedTransfer &
  operator=(const StagedTransfer &) = delete;

  /** Plain stores into the slots, which the DMA reads next: from the cache rather than from memory. */
  void
  ToDevice(char * device, const char * host)
  {
    Start(
      [=](uint64_t k, uint64_t begin, uint64_t end)
      {
        if (k >= m_SlotCount && !WaitCompleted(k - m_SlotCount))
          return false; // the slot's previous DMA must have read it
        std::memcpy(Slot(k) + begin, host + Offset(k) + begin, end - begin);
        return true;
      });
    for (uint64_t k = 0; k < m_Chunks; ++k)
    {
      WaitDone(k);
      Issue(k, device + Offset(k), Slot(k), cudaMemcpyHostToDevice);
      if (m_Stages)
        m_Stages->Arrived(m_Event[k % m_SlotCount], Offset(k) + Length(k));
      // The workers' next chunk reuses the slot of chunk k + 1 - S.
      if (k + 1 >= m_SlotCount && k + 1 < m_Chunks)
        Complete(k + 1 - m_SlotCount);
    }
    Finish();
  }

  /** `widen` copies (or widens) a slot's bytes into the caller's memory; byte offsets on the device side scale by
   * `ratio` on the host side. */
  void
  ToHost(char * host, const char * device, unsigned ratio, CopyFunction widen)
  {
    // The first DMAs run while the workers start.
    for (uint64_t k = 0; k < m_Chunks && k < m_SlotCount; ++k)
    {
      if (m_Stages)
        m_Stages->Produced(Offset(k), Offset(k) + Length(k), m_Bytes, m_Stream);
      Issue(k, Slot(k), device + Offset(k), cudaMemcpyDeviceToHost);
    }
    Start(
      [=](uint64_t k, uint64_t begin, uint64_t end)
      {
        if (!WaitCompleted(k))
          return false;
        widen(host + (Offset(k) + begin) * ratio, Slot(k) + begin, end - begin);
        return true;
      });
    for (uint64_t k = 0; k < m_Chunks; ++k)
    {
      Complete(k);
      const uint64_t next = k + m_SlotCount;
      if (next < m_Chunks)
      {
        WaitDone(k);
        if (m_Stages)
          m_Stages->Produced(Offset(next), Offset(next) + Length(next), m_Bytes, m_Stream);
        Issue(next, Slot(next), device + Offset(next), cudaMemcpyDeviceToHost);
      }
    }
    Finish();
  }

private:
  uint64_t
  Offset(uint64_t k) const
  {
    return k * m_Chunk;
  }
  uint64_t
  Length(uint64_t k) const
  {
    return std::min(m_Chunk, m_Bytes - Offset(k));
  }
  char *
  Slot(uint64_t k) const
  {
    return m_Slots[k % m_SlotCount];
  }

  template <class F>
  void
  Start(F copy)
  {
    m_Running = true;
    TheWorkerPool().Run(m_Workers,
                        [this, copy](unsigned w)
                        {
                          for (uint64_t k = 0; k < m_Chunks; ++k)
                          {
                            const uint64_t length = Length(k);
                            const uint64_t slice  = ((length + m_Workers - 1) / m_Workers + 4095) & ~uint64_t(4095);
                            const uint64_t begin  = std::min(length, w * slice);
                            const uint64_t end    = std::min(length, begin + slice);
                            if (!copy(k, begin, end))
                              return;
                            m_Done[k].fetch_add(1);
                          }
                        });
  }

  /** Worker side: chunk k's DMA has completed. False when the transfer is abandoned. */
  bool
  WaitCompleted(uint64_t k)
  {
    while (m_Completed.load() <= k)
    {
      if (m_Failed.load())
        return false;
      std::this_thread::yield();
    }
    return true;
  }

  /** Caller side: waits for chunk k's DMA (issued, in order) and tells the workers. */
  void
  Complete(uint64_t k)
  {
    const cudaError_t error = cudaEventSynchronize(m_Event[k % m_SlotCount]);
    if (error != cudaSuccess)
    {
      m_Failed.store(true);
      Check(error, "cudaEventSynchronize", __FILE__, __LINE__);
    }
    m_Completed.store(k + 1);
  }

  /** Caller side: every worker has copied its slice of chunk k. */
  void
  WaitDone(uint64_t k)
  {
    while (m_Done[k].load() < m_Workers)
    {
      if (m_Failed.load())
        throw CudaError("CUDA error while waiting for a staged host transfer");
      std::this_thread::yield();
    }
  }

  void
  Issue(uint64_t k, void * dst, const void * src, cudaMemcpyKind kind)
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(dst, src, Length(k), kind, m_Stream));
    CHS_CUDA_CHECK(cudaEventRecord(m_Event[k % m_SlotCount], m_Stream));
  }

  void
  Finish()
  {
    TheWorkerPool().Wait();
    m_Running = false;
    if (m_Failed.load())
      throw CudaError("CUDA error in a staged host transfer");
    CHS_CUDA_CHECK(cudaStreamSynchronize(m_Stream));
  }

  Stages *                                 m_Stages;
  char * const *                           m_Slots;
  uint64_t                                 m_SlotCount;
  uint64_t                                 m_Chunk;
  uint64_t                                 m_Bytes;
  uint64_t                                 m_Chunks;
  cudaStream_t                             m_Stream;
  std::unique_ptr<std::atomic<unsigned>[]> m_Done;
  unsigned                                 m_Workers = 1;
  std::atomic<uint64_t>                    m_Completed{ 0 };
  std::atomic<bool>                        m_Failed{ false };
  cudaEvent_t                              m_Event[kMaxStagingSlots] = {};
  bool                                     m_Running                 = false;
};
} // namespace

namespace
{
#if defined(__SSE2__)
/** Zero-extends the elements of `v` (type From) to To and writes them to `out` (16-byte aligned) with streaming
 * stores: 16 / sizeof(From) elements, sizeof(To) / sizeof(From) vectors. Streaming stores skip the read for
 * ownership that ordinary stores make of every destination line, which is most of the cost of widening. */
template <typename From, typename To>
inline void
StreamWidened(char * out, __m128i v)
{
  if constexpr (sizeof(From) == sizeof(To))
    _mm_stream_si128(reinterpret_cast<__m128i *>(out), v);
  else
  {
    using Twice =
      std::conditional_t<sizeof(From) == 1, uint16_t, std::conditional_t<sizeof(From) == 2, uint32_t, uint64_t>>;
    const __m128i zero = _mm_setzero_si128();
    __m128i       lo, hi;
    if constexpr (sizeof(From) == 1)
    {
      lo = _mm_unpacklo_epi8(v, zero);
      hi = _mm_unpackhi_epi8(v, zero);
    }
    else if constexpr (sizeof(From) == 2)
    {
      lo = _mm_unpacklo_epi16(v, zero);
      hi = _mm_unpackhi_epi16(v, zero);
    }
    else
    {
      lo = _mm_unpacklo_epi32(v, zero);
      hi = _mm_unpackhi_epi32(v, zero);
    }
    constexpr uint64_t half = 8 * sizeof(To) / sizeof(From); // bytes that each half becomes
    StreamWidened<Twice, To>(out, lo);
    StreamWidened<Twice, To>(out + half, hi);
  }
}
#endif

/** Copies `bytes` bytes of `From` elements into `To` elements (To at least as wide). */
template <typename From, typename To>
void
WidenElements(char * dst, const char * src, uint64_t bytes)
{
  const uint64_t count = bytes / sizeof(From);
  const From *   in    = reinterpret_cast<const From *>(src);
  To *           out   = reinterpret_cast<To *>(dst);
  uint64_t       i     = 0;
#if defined(__SSE2__)
  while (i < count && (reinterpret_cast<uintptr_t>(out + i) & 15) != 0)
  {
    out[i] = in[i];
    ++i;
  }
  constexpr uint64_t kVector = 16 / sizeof(From);
  for (; i + kVector <= count; i += kVector)
    StreamWidened<From, To>(reinterpret_cast<char *>(out + i),
                            _mm_loadu_si128(reinterpret_cast<const __m128i *>(in + i)));
  _mm_sfence(); // the streaming stores are visible before the worker reports the slice done
#endif
  for (; i < count; ++i)
    out[i] = in[i];
}

/** memset to 0 with non-temporal stores where the build has SSE2. */
void
ZeroStreaming(char * p, uint64_t bytes)
{
#if defined(__SSE2__)
  uint64_t i = 0;
  while (i < bytes && (reinterpret_cast<uintptr_t>(p + i) & 15) != 0)
    p[i++] = 0;
  const __m128i zero = _mm_setzero_si128();
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i *>(p + i), zero);
  _mm_sfence();
  for (; i < bytes; ++i)
    p[i] = 0;
#else
  std::memset(p, 0, bytes);
#endif
}

/** The copy out of a slot into the caller's memory: widened, or of equal widths with non-temporal stores where the
 * shape asks for them and the build has SSE2 (WidenElements streams), else memcpy. */
CopyFunction
WidenFor(unsigned hostBytes, unsigned deviceBytes, const StagingShape & shape)
{
  if (hostBytes == deviceBytes)
  {
#if defined(__SSE2__)
    if (shape.streaming)
      return WidenElements<uint8_t, uint8_t>;
#endif
    return [](char * dst, const char * src, uint64_t bytes) { std::memcpy(dst, src, bytes); };
  }
  if (deviceBytes == 1 && hostBytes == 2)
    return WidenElements<uint8_t, uint16_t>;
  if (deviceBytes == 1 && hostBytes == 4)
    return WidenElements<uint8_t, uint32_t>;
  if (deviceBytes == 1 && hostBytes == 8)
    return WidenElements<uint8_t, uint64_t>;
  if (deviceBytes == 2 && hostBytes == 4)
    return WidenElements<uint16_t, uint32_t>;
  if (deviceBytes == 2 && hostBytes == 8)
    return WidenElements<uint16_t, uint64_t>;
  if (deviceBytes == 4 && hostBytes == 8)
    return WidenElements<uint32_t, uint64_t>;
  throw std::invalid_argument("chs: unsupported widening of " + std::to_string(deviceBytes) + "-byte elements to " +
                              std::to_string(hostBytes) + " bytes");
}

/** True for memory that kernels read and write (device or managed memory): a "host" array of a caller that holds its
 * data on the GPU, such as a CuPy array passed through the Python package. */
bool
IsDeviceMemory(const void * p)
{
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess)
  {
    (void)cudaGetLastError(); // not a pointer the runtime knows: host memory
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

template <typename TFrom, typename TTo>
__global__ void
WidenKernel(TTo * out, const TFrom * in, uint64_t n)
{
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

template <typename TFrom>
void
WidenOnDeviceFrom(void * dst, unsigned toBytes, const void * src, uint64_t n, cudaStream_t stream, int device)
{
  const unsigned blocks = GridStrideBlocks(n, 256, device);
  const auto *   in     = static_cast<const TFrom *>(src);
  if (toBytes == 2)
    WidenKernel<<<blocks, 256, 0, stream>>>(static_cast<uint16_t *>(dst), in, n);
  else if (toBytes == 4)
    WidenKernel<<<blocks, 256, 0, stream>>>(static_cast<uint32_t *>(dst), in, n);
  else
    WidenKernel<<<blocks, 256, 0, stream>>>(static_cast<uint64_t *>(dst), in, n);
  CHS_CUDA_CHECK_LAUNCH("WidenKernel");
}

/** CopyToHostWidened into device memory: the zero extension runs on the device. */
void
WidenOnDevice(void *       dst,
              unsigned     hostBytes,
              const void * src,
              unsigned     deviceBytes,
              uint64_t     n,
              cudaStream_t stream,
              int          device)
{
  if (deviceBytes == 1)
    WidenOnDeviceFrom<uint8_t>(dst, hostBytes, src, n, stream, device);
  else if (deviceBytes == 2)
    WidenOnDeviceFrom<uint16_t>(dst, hostBytes, src, n, stream, device);
  else
    WidenOnDeviceFrom<uint32_t>(dst, hostBytes, src, n, stream, device);
}

/** `bytes` are the device-side bytes; to the host, each device element of `deviceBytes` becomes a host element of
 * `hostBytes` (zero-extended). */
/** The DMAs of `bytes` between registered host memory and the device on the copy stream, in pieces of
 * Stages::kRangeBytes with the stages' work between them. */
void
RegisteredInPieces(char * dst, const char * src, uint64_t bytes, cudaMemcpyKind kind, int device, Stages & stages)
{
  const cudaStream_t copy = CopyStream(device);
  stages.Begin(copy);
  // Every way out waits for the DMAs issued (a failure in the stages' work leaves none in flight while the caller
  // frees its device arrays, whose frees are ordered on the run's stream only).
  struct Drain
  {
    cudaStream_t stream;
    ~Drain() { cudaStreamSynchronize(stream); }
  } drain{ copy };
  cudaEvent_t dma = nullptr;
  CHS_CUDA_CHECK(cudaEventCreateWithFlags(&dma, cudaEventDisableTiming));
  const std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)> owned(dma, cudaEventDestroy);
  for (uint64_t a = 0; a < bytes; a += Stages::kRangeBytes)
  {
    const uint64_t b = std::min(bytes, a + Stages::kRangeBytes);
    if (kind == cudaMemcpyDeviceToHost)
      stages.Produced(a, b, bytes, copy);
    CHS_CUDA_CHECK(cudaMemcpyAsync(dst + a, src + a, b - a, kind, copy));
    if (kind == cudaMemcpyHostToDevice)
    {
      CHS_CUDA_CHECK(cudaEventRecord(dma, copy));
      stages.Arrived(dma, b);
    }
  }
  CHS_CUDA_CHECK(cudaStreamSynchronize(copy));
}

/** `bytes` are the device-side bytes; to the host, each device element of `deviceBytes` becomes a host element of
 * `hostBytes` (zero-extended). With `stages`, the transfer interleaves their work (Stages); without them, or on the
 * paths that do not stage, the work runs before the copy (downloads) or after it (uploads). */
void
Transfer(void *                   dst,
         const void *             src,
         uint64_t                 bytes,
         cudaMemcpyKind           kind,
         cudaStream_t             stream,
         const ExecutionContext & context,
         unsigned                 hostBytes   = 1,
         unsigned                 deviceBytes = 1,
         Stages *                 stages      = nullptr)
{
  const unsigned               ratio   = hostBytes / deviceBytes;
  Staging &                    staging = TheStaging();
  std::unique_lock<std::mutex> lock(staging.mutex, std::defer_lock);
  const void *                 host = kind == cudaMemcpyHostToDevice ? src : dst;
  // The paths that copy in one piece: the stages' work all before a download, all after an upload.
  const auto before = [&]
  {
    if (stages && kind == cudaMemcpyDeviceToHost)
      stages->ProducedWhole(bytes, stream);
  };
  const auto after = [&]
  {
    if (stages && kind == cudaMemcpyHostToDevice)
    {
      cudaEvent_t now = nullptr;
      CHS_CUDA_CHECK(cudaEventCreateWithFlags(&now, cudaEventDisableTiming));
      const std::unique_ptr<CUevent_st, cudaError_t (*)(cudaEvent_t)> owned(now, cudaEventDestroy);
      CHS_CUDA_CHECK(cudaEventRecord(now, stream));
      stages->Arrived(now, bytes);
    }
  };
  if (bytes > 0 && IsDeviceMemory(host))
  {
    // The caller's array is on a device already: a device-to-device copy (peer, when on another device).
    before();
    if (ratio == 1)
      CHS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
    else
      WidenOnDevice(dst, hostBytes, src, deviceBytes, bytes / deviceBytes, stream, context.device);
    after();
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  testing::g_HostTransferBytes += bytes;
  if (ratio == 1 && IsRegisteredHostRange(host, bytes))
  {
    // Page-locked already (an array of the host cache): the DMA goes straight to or from it.
    if (stages)
      return RegisteredInPieces(
        static_cast<char *>(dst), static_cast<const char *>(src), bytes, kind, context.device, *stages);
    CHS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  if (bytes < kStagingMinimum || !lock.try_lock() || !staging.Ready())
  {
    const CopyFunction widen = WidenFor(hostBytes, deviceBytes, StagingShape());
    before();
    if (ratio == 1)
    {
      CHS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
      after();
      CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
    std::unique_ptr<char[]> narrow(new char[bytes]);
    CHS_CUDA_CHECK(cudaMemcpyAsync(narrow.get(), src, bytes, kind, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    widen(static_cast<char *>(dst), narrow.get(), bytes);
    return;
  }
  const cudaStream_t copy = stages ? CopyStream(context.device) : stream;
  if (stages)
    stages->Begin(copy);
  StagedTransfer transfer(staging, bytes, copy, context.hostThreads, stages);
  if (kind == cudaMemcpyHostToDevice)
    transfer.ToDevice(static_cast<char *>(dst), static_cast<const char *>(src));
  else
    transfer.ToHost(
      static_cast<char *>(dst), static_cast<const char *>(src), ratio, WidenFor(hostBytes, deviceBytes, staging.shape));
}
} // namespace

void
CopyToDeviceInStages(void *                                device,
                     const void *                          host,
                     uint64_t                              bytes,
                     cudaStream_t                          stream,
                     const ExecutionContext &              context,
                     const std::function<void(uint64_t)> & arrived)
{
  Stages stages(stream, 1, &arrived, nullptr);
  Transfer(device, host, bytes, cudaMemcpyHostToDevice, stream, context, 1, 1, &stages);
}

void
CopyToHostInStages(void *                                          host,
                   unsigned                                        hostElementBytes,
                   const void *                                    device,
                   unsigned                                        deviceElementBytes,
                   uint64_t                                        elements,
                   cudaStream_t                                    stream,
                   const ExecutionContext &                        context,
                   const std::function<void(uint64_t, uint64_t)> & produce)
{
  Stages stages(stream, deviceElementBytes, nullptr, &produce);
  Transfer(host,
           device,
           elements * deviceElementBytes,
           cudaMemcpyDeviceToHost,
           stream,
           context,
           hostElementBytes,
           deviceElementBytes,
           &stages);
}

void
PrewakeHostThreads(uint64_t bytes, const ExecutionContext & context)
{
  if (bytes < kStagingMinimum)
    return;
  std::unique_lock<std::mutex> lock(TheStaging().mutex, std::try_to_lock);
  if (lock.owns_lock()) // else another transfer is running, and this run's will take the direct path
    TheWorkerPool().Run(StagingWorkers(context.hostThreads, TheStaging().shape), [](unsigned) {});
}

void
CopyToDevice(void * device, const void * host, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context)
{
  Transfer(device, host, bytes, cudaMemcpyHostToDevice, stream, context);
}

void
CopyToHost(void * host, const void * device, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context)
{
  Transfer(host, device, bytes, cudaMemcpyDeviceToHost, stream, context);
}

void
CopyToHostWidened(void *                   host,
                  unsigned                 hostElementBytes,
                  const void *             device,
                  unsigned                 deviceElementBytes,
                  uint64_t                 elements,
                  cudaStream_t             stream,
                  const ExecutionContext & context)
{
  Transfer(host,
           device,
           elements * deviceElementBytes,
           cudaMemcpyDeviceToHost,
           stream,
           context,
           hostElementBytes,
           deviceElementBytes);
}

void
ZeroHost(void * host, uint64_t bytes, const ExecutionContext & context)
{
  if (bytes > 0 && IsDeviceMemory(host))
  {
    CHS_CUDA_CHECK(cudaMemsetAsync(host, 0, bytes, nullptr));
    CHS_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    return;
  }
  std::unique_lock<std::mutex> lock(TheStaging().mutex, std::defer_lock);
  if (bytes < kStagingMinimum || !lock.try_lock())
  {
    std::memset(host, 0, bytes);
    return;
  }
  const StagingShape & shape     = TheStaging().shape;
  const unsigned       workers   = StagingWorkers(context.hostThreads, shape);
  const uint64_t       slice     = (bytes + workers - 1) / workers;
  const bool           streaming = shape.streaming;
  WorkerPool &         pool      = TheWorkerPool();
  pool.Run(workers,
           [=](unsigned id)
           {
             const uint64_t a = std::min(bytes, id * slice), b = std::min(bytes, a + slice);
             if (streaming)
               ZeroStreaming(static_cast<char *>(host) + a, b - a);
             else
               std::memset(static_cast<char *>(host) + a, 0, b - a);
           });
  pool.Wait();
}

unsigned
GridStrideBlocks(uint64_t items, unsigned threads, int device)
{
  int sms = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint64_t needed = (items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(needed, uint64_t(sms) * 16)));
}

namespace
{
std::atomic<int>  g_VoxelOrder{ 0 };         // testing::SetVoxelOrder
std::atomic<bool> g_TransferOverlap{ true }; // testing::SetTransferOverlap
} // namespace

bool
TransferOverlap()
{
  return g_TransferOverlap.load();
}

VoxelOrder
ChooseVoxelOrder(uint64_t nx, uint64_t ny, uint64_t nz)
{
  VoxelOrder o;
  o.nx              = uint32_t(nx);
  o.ny              = uint32_t(ny);
  o.nz              = uint32_t(nz);
  const int  forced = g_VoxelOrder.load();
  const bool cubes  = forced == 2 || (forced == 0 && nz >= 64 && nx * ny >= (uint64_t(1) << 18));
  if (cubes)
  {
    o.cx = uint32_t((nx + 63) / 64);
    o.cy = uint32_t((ny + 63) / 64);
    o.cz = uint32_t((nz + 63) / 64);
  }
  return o;
}

} // namespace detail

namespace testing
{
void
SetVoxelOrder(int order)
{
  if (order < 0 || order > 2)
    throw std::invalid_argument("chs: SetVoxelOrder takes 0 (the choice by size), 1 (raster order) or 2 (cubes)");
  detail::g_VoxelOrder = order;
}

void
SetTransferOverlap(bool overlap)
{
  detail::g_TransferOverlap = overlap;
}

void
SetHostStaging(uint64_t chunkBytes, unsigned slots, unsigned workers, bool streamingStores)
{
  detail::StagingShape shape;
  if (chunkBytes || slots || workers)
  {
    if (chunkBytes == 0 || chunkBytes % 4096 != 0 || slots == 0 || slots > detail::kMaxStagingSlots || workers == 0 ||
        workers > detail::kMaxHostThreads)
      throw std::invalid_argument("chs: staging chunks must be a positive multiple of 4096 bytes, slots 1 to " +
                                  std::to_string(detail::kMaxStagingSlots) + ", workers 1 to " +
                                  std::to_string(detail::kMaxHostThreads));
    shape.chunk     = chunkBytes;
    shape.slots     = slots;
    shape.workers   = workers;
    shape.streaming = streamingStores;
  }
  detail::Staging &           staging = detail::TheStaging();
  std::lock_guard<std::mutex> lock(staging.mutex);
  staging.Reshape(shape);
}

void
CopyHostArray(void *       to,
              const void * from,
              uint64_t     bytes,
              bool         toDevice,
              int          device,
              uintptr_t    stream,
              unsigned     hostThreads)
{
  detail::DeviceScope scope(device);
  ExecutionContext    context;
  context.device      = device;
  context.stream      = reinterpret_cast<void *>(stream);
  context.hostThreads = hostThreads;
  const auto s        = reinterpret_cast<cudaStream_t>(stream);
  if (toDevice)
    detail::CopyToDevice(to, from, bytes, s, context);
  else
    detail::CopyToHost(to, from, bytes, s, context);
}

void
RoundTripHostArray(const void * from, void * to, uint64_t bytes, int device, unsigned hostThreads)
{
  detail::DeviceScope           scope(device);
  detail::DeviceBuffer<uint8_t> onDevice(bytes, nullptr, nullptr);
  CHS_CUDA_CHECK(cudaMemset(onDevice.get(), 0, bytes));
  CopyHostArray(onDevice.get(), from, bytes, true, device, 0, hostThreads);
  CopyHostArray(to, onDevice.get(), bytes, false, device, 0, hostThreads);
}
} // namespace testing
} // namespace chs
