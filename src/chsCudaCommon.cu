#include "chsCudaCommon.cuh"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace chs
{
namespace
{
std::atomic<int> g_FailAllocationCountdown{ 0 };
}

namespace testing
{
void
FailDeviceAllocationAfter(int n)
{
  g_FailAllocationCountdown.store(n);
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
  // Finish pending stream-ordered frees so that the figure counts only live allocations.
  CHS_CUDA_CHECK(cudaDeviceSynchronize());
  size_t f = 0, t = 0;
  CHS_CUDA_CHECK(cudaMemGetInfo(&f, &t));
  freeBytes = f;
  totalBytes = t;
}

namespace detail
{

void
ThrowCudaError(cudaError_t error, const char * call, const char * file, int line)
{
  cudaGetLastError(); // clear a non-sticky error so that the next run starts clean
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) +
                  ") in " + call + " at " + file + ":" + std::to_string(line));
}

DeviceScope::DeviceScope(int device)
{
  CHS_CUDA_CHECK(cudaGetDevice(&m_Previous));
  CHS_CUDA_CHECK(cudaSetDevice(device));
}

DeviceScope::~DeviceScope()
{
  cudaSetDevice(m_Previous);
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
  CHS_CUDA_CHECK(cudaMallocAsync(&m_Pointer, request, stream));
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
/** Pinned staging buffers for host transfers: kStagingSlots buffers of kStagingChunk bytes, allocated on first use
 * and kept for the life of the process (pinning memory costs far more than one transfer). One transfer at a time
 * uses them; a concurrent one takes the plain path. 4 MiB chunks and 4 slots measured best on an H200 (of 2, 4 and
 * 8 MiB). */
constexpr uint64_t kStagingChunk = uint64_t(4) << 20;
constexpr int      kStagingSlots = 4;
constexpr uint64_t kStagingMinimum = uint64_t(4) << 20;
/** Eight threads reach the host's copy bandwidth on the GPU machine (16 cores: 0.68 ms for 64 MiB with 8, 0.72 ms
 * with 16). */
constexpr unsigned kMaxHostThreads = 8;

struct Staging
{
  std::mutex mutex;
  char *     slot[kStagingSlots] = {};
  bool       tried = false;

  /** Under the mutex: the buffers, or false when pinned memory cannot be had. */
  bool
  Ready()
  {
    if (!tried)
    {
      tried = true;
      for (auto & b : slot)
      {
        if (cudaHostAlloc(reinterpret_cast<void **>(&b), kStagingChunk, cudaHostAllocPortable) != cudaSuccess)
        {
          cudaGetLastError();
          b = nullptr;
        }
      }
    }
    return std::all_of(std::begin(slot), std::end(slot), [](char * b) { return b != nullptr; });
  }
};

Staging &
TheStaging()
{
  static Staging * staging = new Staging; // never destroyed: it may be used until the process ends
  return *staging;
}

/** Host threads for staged transfers, started on first use and kept (a transfer is too short to start threads
 * for: eight thread starts cost about as much as copying 16 MB). Run hands a job to the first `count` workers;
 * Wait returns when they have all finished it. Used under the staging mutex, so one job at a time. */
class WorkerPool
{
public:
  void
  Run(unsigned count, std::function<void(unsigned)> job)
  {
    std::unique_lock<std::mutex> lock(m_Mutex);
    while (m_Threads.size() < count)
    {
      const unsigned id = static_cast<unsigned>(m_Threads.size());
      m_Threads.emplace_back([this, id] { Loop(id); });
    }
    m_Job = std::move(job);
    m_Workers = count;
    m_Finished = 0;
    ++m_Generation;
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
      std::function<void(unsigned)> job;
      {
        std::unique_lock<std::mutex> lock(m_Mutex);
        m_Start.wait(lock, [&] { return m_Generation != seen; });
        seen = m_Generation;
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
  unsigned                      m_Workers = 0;
  unsigned                      m_Finished = 0;
  uint64_t                      m_Generation = 0;
};

WorkerPool &
TheWorkerPool()
{
  static WorkerPool * pool = new WorkerPool; // never destroyed, like the staging buffers
  return *pool;
}

/** One staged transfer. The calling thread issues the chunks' DMAs in order, each into slot k % kStagingSlots,
 * and records that slot's event; W worker threads each copy their slice of every chunk between the slot and the
 * caller's memory. Chunk k's DMA is issued when all workers are done with it (to the device) or with chunk
 * k - kStagingSlots (to the host); a worker waits for a chunk's event only once that chunk is issued, so a slot's
 * event is never recorded again while a worker still waits on it. Every way out waits for the workers and the
 * stream, so no copy into or out of a slot outlives the lock. */
class StagedTransfer
{
public:
  StagedTransfer(char * const * slots, uint64_t bytes, cudaStream_t stream, unsigned hostThreads)
    : m_Slots(slots)
    , m_Bytes(bytes)
    , m_Chunks((bytes + kStagingChunk - 1) / kStagingChunk)
    , m_Stream(stream)
    , m_Done(new std::atomic<unsigned>[m_Chunks])
  {
    const unsigned available = hostThreads ? hostThreads : std::max(1u, std::thread::hardware_concurrency());
    m_Workers = std::min(available, kMaxHostThreads);
    for (uint64_t k = 0; k < m_Chunks; ++k)
      m_Done[k].store(0);
    for (auto & e : m_Event)
      CHS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
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

  void
  ToDevice(char * device, const char * host)
  {
    Start([=](uint64_t k, uint64_t begin, uint64_t end) {
      if (k >= uint64_t(kStagingSlots) && !WaitIssued(k - kStagingSlots))
        return false; // the slot's previous DMA must have read it
      std::memcpy(Slot(k) + begin, host + Offset(k) + begin, end - begin);
      return true;
    });
    for (uint64_t k = 0; k < m_Chunks; ++k)
    {
      WaitDone(k);
      Issue(k, device + Offset(k), Slot(k), cudaMemcpyHostToDevice);
    }
    Finish();
  }

  void
  ToHost(char * host, const char * device)
  {
    // The first DMAs run while the workers start.
    for (uint64_t k = 0; k < m_Chunks && k < uint64_t(kStagingSlots); ++k)
      Issue(k, Slot(k), device + Offset(k), cudaMemcpyDeviceToHost);
    Start([=](uint64_t k, uint64_t begin, uint64_t end) {
      if (!WaitIssued(k))
        return false;
      std::memcpy(host + Offset(k) + begin, Slot(k) + begin, end - begin);
      return true;
    });
    for (uint64_t k = kStagingSlots; k < m_Chunks; ++k)
    {
      WaitDone(k - kStagingSlots);
      Issue(k, Slot(k), device + Offset(k), cudaMemcpyDeviceToHost);
    }
    Finish();
  }

private:
  uint64_t
  Offset(uint64_t k) const
  {
    return k * kStagingChunk;
  }
  uint64_t
  Length(uint64_t k) const
  {
    return std::min(kStagingChunk, m_Bytes - Offset(k));
  }
  char *
  Slot(uint64_t k) const
  {
    return m_Slots[k % kStagingSlots];
  }

  template <class F>
  void
  Start(F copy)
  {
    m_Running = true;
    TheWorkerPool().Run(m_Workers, [this, copy](unsigned w) {
      for (uint64_t k = 0; k < m_Chunks; ++k)
      {
        const uint64_t length = Length(k);
        const uint64_t slice = ((length + m_Workers - 1) / m_Workers + 4095) & ~uint64_t(4095);
        const uint64_t begin = std::min(length, w * slice);
        const uint64_t end = std::min(length, begin + slice);
        if (!copy(k, begin, end))
          return;
        m_Done[k].fetch_add(1);
      }
    });
  }

  /** Worker side: chunk k's DMA has been issued and has completed. False when the transfer is abandoned. */
  bool
  WaitIssued(uint64_t k)
  {
    while (m_Issued.load() <= k)
    {
      if (m_Failed.load())
        return false;
      std::this_thread::yield();
    }
    if (cudaEventSynchronize(m_Event[k % kStagingSlots]) != cudaSuccess)
    {
      m_Failed.store(true);
      return false;
    }
    return true;
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
    CHS_CUDA_CHECK(cudaEventRecord(m_Event[k % kStagingSlots], m_Stream));
    m_Issued.store(k + 1);
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

  char * const *                         m_Slots;
  uint64_t                               m_Bytes;
  uint64_t                               m_Chunks;
  cudaStream_t                           m_Stream;
  std::unique_ptr<std::atomic<unsigned>[]> m_Done;
  unsigned                               m_Workers = 1;
  std::atomic<uint64_t>                  m_Issued{ 0 };
  std::atomic<bool>                      m_Failed{ false };
  cudaEvent_t                            m_Event[kStagingSlots] = {};
  bool                                   m_Running = false;
};
} // namespace

namespace
{
void
Transfer(void * dst, const void * src, uint64_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
         const ExecutionContext & context)
{
  Staging &                    staging = TheStaging();
  std::unique_lock<std::mutex> lock(staging.mutex, std::defer_lock);
  if (bytes < kStagingMinimum || !lock.try_lock() || !staging.Ready())
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  StagedTransfer transfer(staging.slot, bytes, stream, context.hostThreads);
  if (kind == cudaMemcpyHostToDevice)
    transfer.ToDevice(static_cast<char *>(dst), static_cast<const char *>(src));
  else
    transfer.ToHost(static_cast<char *>(dst), static_cast<const char *>(src));
}
} // namespace

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

unsigned
GridStrideBlocks(uint64_t items, unsigned threads, int device)
{
  int sms = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint64_t needed = (items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(needed, uint64_t(sms) * 16)));
}

} // namespace detail
} // namespace chs
