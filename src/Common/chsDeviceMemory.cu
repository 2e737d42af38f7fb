// The CUDA devices (count, name, memory), the errors of CUDA calls, the device scope, and device memory: each run's
// reservation against what the device has free, the RAII buffers, and their test hooks (include/chs/Execution.h).
#include "chsCudaCommon.cuh"

#include <cstring>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>

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
OldestComputeCapability()
{
#ifdef __CUDA_ARCH_LIST__
  // nvcc's virtual architectures of this translation unit (e.g. 750,800,860,890,900), the core's for every unit.
  constexpr int architectures[] = { __CUDA_ARCH_LIST__ };
  return *std::min_element(std::begin(architectures), std::end(architectures)) / 10;
#else
  return 0;
#endif
}

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
  // Devices older than every architecture built cannot run a kernel of the library: not counted (a device's
  // attributes are read without creating a context on it).
  int usable = 0;
  for (int device = 0; device < count; ++device)
  {
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    {
      cudaGetLastError();
      continue;
    }
    if (testing::DeviceRunsLibraryCode(major * 10 + minor, why, device))
      ++usable;
  }
  return usable;
}

namespace testing
{
bool
DeviceRunsLibraryCode(int computeCapability, std::string * why, int device)
{
  const int oldest = OldestComputeCapability();
  if (computeCapability >= oldest)
    return true;
  if (why)
  {
    *why = "device " + std::to_string(device) + " has compute capability " + std::to_string(computeCapability / 10) +
           "." + std::to_string(computeCapability % 10) +
           ", older than the oldest this build of the library has code for (" + std::to_string(oldest / 10) + "." +
           std::to_string(oldest % 10) + ")";
  }
  return false;
}
} // namespace testing

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

void
ThrowCudaError(cudaError_t error, const char * call, const char * file, int line)
{
  cudaGetLastError(); // clear a non-sticky error so that the next run starts clean
  throw CudaError(std::string("CUDA error ") + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ") in " +
                  call + " at " + file + ":" + std::to_string(line));
}

namespace
{
__global__ void
CopyBytesKernel(unsigned char * to, const unsigned char * from, unsigned bytes)
{
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x)
    to[i] = from[i];
}

/** The calling thread's page-locked, mapped read-back buffer (kept for the thread's life; null if it cannot be had). */
unsigned char *
ReadBackBuffer()
{
  struct Buffer
  {
    unsigned char * host  = nullptr;
    bool            tried = false;
    ~Buffer()
    {
      if (host)
        cudaFreeHost(host);
    }
  };
  thread_local Buffer buffer;
  if (!buffer.tried)
  {
    buffer.tried = true;
    void * p     = nullptr;
    if (cudaHostAlloc(&p, kReadBackBytes, cudaHostAllocPortable | cudaHostAllocMapped) == cudaSuccess)
      buffer.host = static_cast<unsigned char *>(p);
    else
      cudaGetLastError(); // clear it: the memcpy path serves instead
  }
  return buffer.host;
}
} // namespace

void
ReadBackBytes(void * host, const void * device, uint64_t bytes, cudaStream_t stream)
{
  unsigned char * mapped = bytes <= kReadBackBytes ? ReadBackBuffer() : nullptr;
  if (!mapped)
  {
    CHS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
    CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  unsigned char * onDevice = nullptr;
  CHS_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&onDevice), mapped, 0));
  CopyBytesKernel<<<1, 128, 0, stream>>>(onDevice, static_cast<const unsigned char *>(device), unsigned(bytes));
  CHS_CUDA_CHECK(cudaGetLastError());
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(host, mapped, bytes);
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

} // namespace detail

} // namespace chs
