// Transfers between the caller's memory and a device: straight for page-locked and device memory, else through the
// pinned staging buffers and host worker threads, widening elements on the way where asked; their test hooks.
#include "chsCudaCommon.cuh"
#include "chs/HostCache.h"
#include "chsStaging.cuh"
#include <map>
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
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
namespace detail
{
namespace
{
std::atomic<uint64_t> g_HostTransferBytes{ 0 };
std::atomic<bool>     g_TransferOverlap{ true }; // testing::SetTransferOverlap
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
  g_HostTransferBytes += bytes;
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

bool
TransferOverlap()
{
  return g_TransferOverlap.load();
}

} // namespace detail

namespace testing
{
uint64_t
HostTransferBytes()
{
  return detail::g_HostTransferBytes.load();
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
