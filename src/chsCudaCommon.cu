#include "chsCudaCommon.cuh"

#include <algorithm>
#include <atomic>

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
