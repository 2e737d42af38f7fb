#include "chsCudaCommon.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

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
/** Pinned staging buffers for host transfers: kSlots buffers of kChunk bytes, allocated on first use and kept for
 * the life of the process (pinning memory costs far more than a transfer of this size). One transfer at a time
 * uses them; a concurrent one takes the plain path. */
/** 8 MiB chunks: on an H200 a chunk's DMA (about 150 us) outlasts its parallel host copy and the thread pool's
 * dispatch, so the link stays busy; smaller chunks measured slower. */
constexpr uint64_t kStagingChunk = uint64_t(8) << 20;
constexpr int      kStagingSlots = 3;
constexpr uint64_t kStagingMinimum = uint64_t(4) << 20;
constexpr uint64_t kCopyPieces = 16;

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

/** Host memcpy of one chunk, split into pieces for the context's parallelFor. */
void
HostCopy(char * dst, const char * src, uint64_t bytes, const ExecutionContext & context)
{
  if (!context.parallelFor || bytes < kCopyPieces * 4096)
  {
    std::memcpy(dst, src, bytes);
    return;
  }
  const uint64_t piece = ((bytes + kCopyPieces - 1) / kCopyPieces + 4095) & ~uint64_t(4095);
  context.parallelFor(kCopyPieces, [&](uint64_t k) {
    const uint64_t begin = std::min(bytes, k * piece);
    const uint64_t end = std::min(bytes, begin + piece);
    if (end > begin)
      std::memcpy(dst + begin, src + begin, end - begin);
  });
}

/** Events of one staged transfer, and a wait for the stream on every way out, so that no DMA into or out of a
 * staging buffer outlives the lock. */
class StagedTransfer
{
public:
  StagedTransfer(cudaStream_t stream)
    : m_Stream(stream)
  {
    for (auto & e : m_Event)
      CHS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  ~StagedTransfer()
  {
    cudaStreamSynchronize(m_Stream);
    for (auto & e : m_Event)
      if (e)
        cudaEventDestroy(e);
  }
  StagedTransfer(const StagedTransfer &) = delete;
  StagedTransfer &
  operator=(const StagedTransfer &) = delete;
  cudaEvent_t m_Event[kStagingSlots] = {};

private:
  cudaStream_t m_Stream;
};
} // namespace

void
CopyToDevice(void * device, const void * host, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context)
{
  Staging &                    staging = TheStaging();
  std::unique_lock<std::mutex> lock(staging.mutex, std::defer_lock);
  if (bytes < kStagingMinimum || !lock.try_lock() || !staging.Ready())
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  StagedTransfer t(stream);
  const uint64_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  for (uint64_t k = 0; k < chunks; ++k)
  {
    const int      s = static_cast<int>(k % kStagingSlots);
    const uint64_t offset = k * kStagingChunk;
    const uint64_t length = std::min(kStagingChunk, bytes - offset);
    if (k >= uint64_t(kStagingSlots))
      CHS_CUDA_CHECK(cudaEventSynchronize(t.m_Event[s])); // the slot's previous DMA has finished
    HostCopy(staging.slot[s], static_cast<const char *>(host) + offset, length, context);
    CHS_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(device) + offset, staging.slot[s], length,
                                   cudaMemcpyHostToDevice, stream));
    CHS_CUDA_CHECK(cudaEventRecord(t.m_Event[s], stream));
  }
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void
CopyToHost(void * host, const void * device, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context)
{
  Staging &                    staging = TheStaging();
  std::unique_lock<std::mutex> lock(staging.mutex, std::defer_lock);
  if (bytes < kStagingMinimum || !lock.try_lock() || !staging.Ready())
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  StagedTransfer t(stream);
  const uint64_t chunks = (bytes + kStagingChunk - 1) / kStagingChunk;
  const auto     issue = [&](uint64_t k) {
    const int      s = static_cast<int>(k % kStagingSlots);
    const uint64_t offset = k * kStagingChunk;
    CHS_CUDA_CHECK(cudaMemcpyAsync(staging.slot[s], static_cast<const char *>(device) + offset,
                                   std::min(kStagingChunk, bytes - offset), cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaEventRecord(t.m_Event[s], stream));
  };
  for (uint64_t k = 0; k < chunks && k < uint64_t(kStagingSlots); ++k)
    issue(k);
  for (uint64_t k = 0; k < chunks; ++k)
  {
    const int      s = static_cast<int>(k % kStagingSlots);
    const uint64_t offset = k * kStagingChunk;
    CHS_CUDA_CHECK(cudaEventSynchronize(t.m_Event[s]));
    HostCopy(static_cast<char *>(host) + offset, staging.slot[s], std::min(kStagingChunk, bytes - offset), context);
    if (k + kStagingSlots < chunks)
      issue(k + kStagingSlots);
  }
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
