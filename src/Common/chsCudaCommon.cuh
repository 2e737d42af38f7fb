// Internal to the .cu files: error checks, device selection and RAII device buffers.
#ifndef chsCudaCommon_cuh
#define chsCudaCommon_cuh

#include "chs/Execution.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace chs
{
namespace detail
{

[[noreturn]] void
ThrowCudaError(cudaError_t error, const char * call, const char * file, int line);

inline void
Check(cudaError_t error, const char * call, const char * file, int line)
{
  if (error != cudaSuccess)
  {
    ThrowCudaError(error, call, file, line);
  }
}

#define CHS_CUDA_CHECK(call) ::chs::detail::Check((call), #call, __FILE__, __LINE__)
/** After a kernel launch: launch-configuration errors surface here, execution errors at the next sync. */
#define CHS_CUDA_CHECK_LAUNCH(name) ::chs::detail::Check(cudaGetLastError(), name, __FILE__, __LINE__)

/** Makes a device current for a scope and restores the previous one. */
class DeviceScope
{
public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &
  operator=(const DeviceScope &) = delete;

private:
  int m_Previous = 0;
};

/** Counts the bytes a run holds on the device, for RunInfo::peakDeviceBytes, and the bytes it reserved
 * (ReserveDeviceMemory): a run holds no more than it reserved (checked, see testing::DeviceMemoryOverruns). */
struct MemoryTracker
{
  uint64_t current  = 0;
  uint64_t peak     = 0;
  uint64_t reserved = 0;
  /** What the run is, for the messages ("the watershed of 512 x 512 x 512 voxels"). */
  std::string what;
};

/** Device memory a run can take now: the device's free memory plus what its memory pool holds unused (the memory
 * that earlier runs freed and the pool kept mapped), capped by testing::SetDeviceMemoryLimit. */
uint64_t
AvailableDeviceBytes(int device);

/** Raises the run's reservation by `bytes` and checks, before the run allocates them, that the device can hold what
 * it may still allocate (reserved - current), with a margin for the pool's rounding. Otherwise throws
 * DeviceMemoryError naming the bytes needed and the bytes free; the run then has allocated nothing more. Called with
 * the run's bound before its first allocation, and again with each part whose size depends on the data (object
 * counts, tree sizes) once that size is known. */
void
ReserveDeviceMemory(MemoryTracker & tracker, uint64_t bytes, int device);

/** Copies `bytes` from the device into `host` and waits for them. Up to kReadBackBytes go through a page-locked
 * buffer of the calling thread that a one-block kernel on `stream` writes, without a copy engine: a small copy
 * queued behind a large download that overlaps the run's kernels from another stream would wait for all of it. More
 * bytes, or no such buffer, go by cudaMemcpyAsync. */
constexpr unsigned kReadBackBytes = 4096;
void
ReadBackBytes(void * host, const void * device, uint64_t bytes, cudaStream_t stream);

/** A bound on the scratch memory of a CUB scan, select or reduction over `items` items (CUB's tile states: some
 * 16 bytes a tile of at least 256 items, plus its fixed part). */
constexpr uint64_t
ScanScratchBytes(uint64_t items)
{
  return items / 16 + (uint64_t(64) << 10);
}

/** "the <name> of 512 x 512 x 512 voxels", for MemoryTracker::what. */
std::string
DescribeRun(const char * name, const Grid & grid);

/** Stream-ordered device allocation, freed on scope exit (also on the error path). */
class RawDeviceBuffer
{
public:
  RawDeviceBuffer(uint64_t bytes, cudaStream_t stream, MemoryTracker * tracker);
  ~RawDeviceBuffer();
  RawDeviceBuffer(const RawDeviceBuffer &) = delete;
  RawDeviceBuffer &
  operator=(const RawDeviceBuffer &) = delete;
  void *
  get() const
  {
    return m_Pointer;
  }

private:
  void *          m_Pointer = nullptr;
  uint64_t        m_Bytes   = 0;
  cudaStream_t    m_Stream  = nullptr;
  MemoryTracker * m_Tracker = nullptr;
};

template <typename T>
class DeviceBuffer : public RawDeviceBuffer
{
public:
  DeviceBuffer(uint64_t count, cudaStream_t stream, MemoryTracker * tracker)
    : RawDeviceBuffer(count * sizeof(T), stream, tracker)
  {
  }
  T *
  get() const
  {
    return static_cast<T *>(RawDeviceBuffer::get());
  }
};

/** A pair of events timing the kernels of a run. */
class EventTimer
{
public:
  explicit EventTimer(cudaStream_t stream);
  ~EventTimer();
  EventTimer(const EventTimer &) = delete;
  EventTimer &
  operator=(const EventTimer &) = delete;
  void
  Start();
  void
  Stop();
  /** Synchronises on the stop event. */
  double
  Milliseconds();

private:
  cudaStream_t m_Stream;
  cudaEvent_t  m_Start = nullptr;
  cudaEvent_t  m_Stop  = nullptr;
};

/** Copies `bytes` from host memory to device memory (ToDevice) or back, and returns when the copy is complete.
 * Large copies of pageable memory go through a process-wide set of pinned staging buffers, so that the DMA runs at
 * the link's pinned rate while host threads (ExecutionContext::hostThreads) copy between the staging buffers and
 * the caller's memory; small copies, and copies made while another thread holds the staging buffers, are plain
 * cudaMemcpyAsync calls. */
void
CopyToDevice(void * device, const void * host, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context);
void
CopyToHost(void * host, const void * device, uint64_t bytes, cudaStream_t stream, const ExecutionContext & context);

/** CopyToDevice with work interleaved: each time a longer prefix of the array has been issued to the device,
 * `arrived(bytes)` is called on the calling thread with its length, and the work it enqueues on `stream` runs once
 * that prefix is on the device, while the rest is copied (the DMAs run on another stream of the device). Returns
 * when the copy is complete; the work may still run. Copies that do not stage call `arrived` once, at the end. */
void
CopyToDeviceInStages(void *                                device,
                     const void *                          host,
                     uint64_t                              bytes,
                     cudaStream_t                          stream,
                     const ExecutionContext &              context,
                     const std::function<void(uint64_t)> & arrived);

/** CopyToHostWidened with the work that writes the device array interleaved: `produce(begin, end)` enqueues on
 * `stream` the work that writes elements [begin, end); it is called in order for consecutive ranges that cover the
 * array (at most 64, each at least 4 MiB but the last), each ahead of the DMA that copies it, so that the work of
 * one range runs while the one before is copied. Copies that do not stage call it once, for the whole array, before
 * copying. Returns when the copy is complete. */
void
CopyToHostInStages(void *                                          host,
                   unsigned                                        hostElementBytes,
                   const void *                                    device,
                   unsigned                                        deviceElementBytes,
                   uint64_t                                        elements,
                   cudaStream_t                                    stream,
                   const ExecutionContext &                        context,
                   const std::function<void(uint64_t, uint64_t)> & produce);

/** testing::SetTransferOverlap: whether runs overlap their transfers with their kernels where they can. */
bool
TransferOverlap();

/** Wakes the host threads that a staged transfer of `bytes` would use, without waiting for them, so that they are
 * running when the transfer starts (call it some hundreds of microseconds ahead). Does nothing for small transfers
 * or while another thread holds the staging buffers. */
void
PrewakeHostThreads(uint64_t bytes, const ExecutionContext & context);

/** Copies `elements` unsigned integers of `deviceElementBytes` bytes from the device into unsigned integers of
 * `hostElementBytes` (at least as wide) on the host, zero-extending them on the host threads that empty the staging
 * buffers: a narrow copy of wide labels crosses the link in fewer bytes. */
void
CopyToHostWidened(void *                   host,
                  unsigned                 hostElementBytes,
                  const void *             device,
                  unsigned                 deviceElementBytes,
                  uint64_t                 elements,
                  cudaStream_t             stream,
                  const ExecutionContext & context);

/** Writes `bytes` zero bytes at host address `host`, on the staging buffers' host threads when it is large (one
 * thread writes some 10 GB/s). */
void
ZeroHost(void * host, uint64_t bytes, const ExecutionContext & context);

/** Blocks for a grid-stride loop over `items`, capped to keep every SM busy without oversubscription. */
unsigned
GridStrideBlocks(uint64_t items, unsigned threads, int device);

/** Lets `kernel` launch with `bytes` of dynamic shared memory on `device`. The limit is an attribute of the function,
 * shared by every thread of the process, so it only rises (set under a lock where a call needs more than any before):
 * a call needing less cannot lower it between another thread's setting and that thread's launch (Dask's threaded
 * scheduler builds slabs of different shapes at once, each launch sized by its own shape). */
void
AllowDynamicSharedBytes(const void * kernel, size_t bytes, int device);

template <typename TKernel>
void
AllowDynamicShared(TKernel * kernel, size_t bytes, int device)
{
  AllowDynamicSharedBytes(reinterpret_cast<const void *>(kernel), bytes, device);
}

/** The order in which a grid-stride loop visits the voxels of an nx x ny x nz image (ForEachVoxel in
 * Common/chsDeviceHelpers.cuh). In raster order the threads that run at one time hold a run of consecutive voxels,
 * less than a slice of a large volume, whose neighbours across z lie a slice away: kernels that follow pointers from
 * voxel to voxel (path reductions, finds) then read anywhere within the paths' extent in z around that run, tens of
 * slices, more than the L2 cache holds once a slice has 1024^2 voxels. In cubes of 64^3 voxels (raster order inside a
 * cube, the cubes in raster order) the threads that run at one time cover a few cubes, and the paths from them stay
 * in a region that the cache holds. cx, cy, cz: the cubes along each axis, 0 for raster order. */
struct VoxelOrder
{
  uint32_t nx = 0, ny = 0, nz = 0;
  uint32_t cx = 0, cy = 0, cz = 0;
};

/** Cubes for volumes of at least 64 slices of at least 2^18 voxels (where they were measured faster: bench/results/
 * Watershed/locality-*), else raster order; testing::SetVoxelOrder overrides the choice. */
VoxelOrder
ChooseVoxelOrder(uint64_t nx, uint64_t ny, uint64_t nz);

} // namespace detail
} // namespace chs

#endif
