// The machinery of the staged host transfers (src/Common/chsTransfers.cu, which alone includes it): the pinned
// staging buffers and their shape, the host worker threads that copy between the caller's memory and a buffer,
// and one staged transfer's DMAs interleaved with those copies. In an anonymous namespace: one translation unit
// owns these singletons.
#ifndef chsStaging_cuh
#define chsStaging_cuh

#include "chsCudaCommon.cuh"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace chs
{
namespace detail
{

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
 * moved 6 to 13 GB/s against 30 to 50 with slices on the H100 machine: bench/results/EndToEnd/staging-4ab2268@ba139af.)
 */
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

} // namespace detail
} // namespace chs

#endif
