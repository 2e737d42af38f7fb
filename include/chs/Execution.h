/*=========================================================================
 *  CudaHierarchicalSegmentation: execution context shared by all algorithms.
 *  ITK-free and CUDA-free: parsed by the host compiler, nvcc and CastXML alike.
 *=========================================================================*/
#ifndef chsExecution_h
#define chsExecution_h

#include "CudaHierarchicalSegmentationExport.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

namespace chs
{

/** A dense image of up to three dimensions, x fastest; unused dimensions have size 1. */
struct Grid
{
  uint64_t size[3]   = { 1, 1, 1 };
  unsigned dimension = 2;
  uint64_t
  NumberOfVoxels() const
  {
    return size[0] * size[1] * size[2];
  }
};

/** Which implementation of an operation runs: its CUDA backend, its sequential CPU reference (the same definition,
 * the same results bit for bit), or Auto: CUDA when a CUDA device is usable (CudaDeviceCount() > 0), else the CPU. */
enum class Backend : int
{
  Auto = 0,
  CUDA = 1,
  CPU  = 2
};

/** How and where an operation runs: its backend, and for the CUDA backend the device and stream. Every operation of
 * the API (chs::Watershed, chs::ImageAlphaTree, ...) takes one and runs the backend it names; the stream is a
 * cudaStream_t passed as void* so that no CUDA header reaches the ITK-facing headers. */
struct ExecutionContext
{
  Backend backend = Backend::Auto;
  int     device  = 0;
  void *  stream  = nullptr;
  /** Called with a fraction in [0, 1] at the end of each phase (CUDA: upload, kernels, download; CPU: each phase of
   * the reference and about ten times along its loops, see CpuProgressScope). It may throw (RunAborted) to stop the
   * run there: the backend frees what it holds and the exception reaches its caller. */
  std::function<void(float)> progress;
  /** Host threads for the copies between the caller's memory and the pinned staging buffers that large host
   * transfers go through (an ITK filter passes its MultiThreader's maximum number of threads); 0: the machine's
   * hardware concurrency. At most 8 are used (the staging's default shape). */
  unsigned hostThreads = 0;
};

/** The backend a run with `context` takes: CUDA or CPU (Auto resolved as Backend says; CUDA stays CUDA, and fails in
 * the run with the driver's reason where no device is usable). std::invalid_argument for a value outside the enum. */
CudaHierarchicalSegmentation_EXPORT Backend
ResolveBackend(const ExecutionContext & context);

/** What a CUDA run measured (all zero for a run on the CPU backend): kernel time (device events, from the first kernel
 * to the last; for a run that overlaps its transfers with kernels, testing::SetTransferOverlap, from the end of the
 * upload to the start of the download: the kernels that no transfer hides), and the peak of device memory this run
 * held. */
struct RunInfo
{
  double   kernelMilliseconds = 0.0;
  uint64_t peakDeviceBytes    = 0;
  /** The device memory the run reserved (checked against the free memory) before allocating: its bound, at least
   * peakDeviceBytes. */
  uint64_t reservedDeviceBytes = 0;
};

/** Thrown for every CUDA failure; the message carries the CUDA error name and text. */
class CudaError : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** Thrown before a CUDA run allocates device memory that the device does not have free: the message names the run,
 * the bytes it needs and the bytes free. Nothing of the run is then allocated or written. */
class DeviceMemoryError : public CudaError
{
public:
  using CudaError::CudaError;
};

/** Thrown by a progress callback to stop a run between two of its steps (the ITK filters throw it when
 * AbortGenerateData is set, and turn it into itk::ProcessAborted). */
class RunAborted : public std::runtime_error
{
public:
  using std::runtime_error::runtime_error;
};

/** The progress callback of the CPU references run on this thread while the scope lives (scopes nest; the innermost
 * is called). A CPU reference calls it with a fraction in [0, 1] as each of its phases ends and about ten times along
 * each phase's loop over the voxels, edges or nodes; it may throw (RunAborted) to stop the run there. */
class CudaHierarchicalSegmentation_EXPORT CpuProgressScope
{
public:
  explicit CpuProgressScope(std::function<void(float)> progress);
  ~CpuProgressScope();
  CpuProgressScope(const CpuProgressScope &) = delete;
  CpuProgressScope &
  operator=(const CpuProgressScope &) = delete;

private:
  std::function<void(float)>         m_Progress;
  const std::function<void(float)> * m_Previous;
};

/** Number of usable CUDA devices: those of a compute capability this build has code for (OldestComputeCapability()
 * and newer); 0 without a driver, without a device, with a driver older than the CUDA runtime the library links, or
 * with only older GPUs (never throws). When there is none and `why` is given, it receives the reason: the runtime's
 * message, or which device is too old. */
CudaHierarchicalSegmentation_EXPORT int
CudaDeviceCount(std::string * why = nullptr);

/** The oldest compute capability (major * 10 + minor, e.g. 75 for Turing) the library has device code for: the
 * oldest of nvcc's architectures at its build. A GPU below it cannot run the CUDA backend. */
CudaHierarchicalSegmentation_EXPORT int
OldestComputeCapability();

/** Name of a device, for reports. */
CudaHierarchicalSegmentation_EXPORT std::string
                                    CudaDeviceName(int device);

/** Free and total device memory in bytes, after the device has finished its pending work and its memory pool has
 * handed back the memory it caches. (Runs keep the device memory they free mapped in the pool for the next run, see
 * CHS_POOL_RELEASE_THRESHOLD in docs/using.md; this call releases it.) */
CudaHierarchicalSegmentation_EXPORT void
CudaDeviceMemoryInfo(int device, uint64_t & freeBytes, uint64_t & totalBytes);

namespace testing
{
/** Whether a device of `computeCapability` (major * 10 + minor) can run the library's kernels (at least
 * OldestComputeCapability()); when not and `why` is given, it says so, naming `device`. CudaDeviceCount's check,
 * testable without such a device. */
CudaHierarchicalSegmentation_EXPORT bool
DeviceRunsLibraryCode(int computeCapability, std::string * why = nullptr, int device = 0);

/** Test hook: the n-th device allocation from now (1-based) asks the driver for an impossible size and so
 * really fails; 0 turns it off. Used to test the error path of every filter. */
CudaHierarchicalSegmentation_EXPORT void
FailDeviceAllocationAfter(int n);

/** Test hook: from this call on, the runs see the device as if it had `bytes` free at the call, less what the
 * process's runs have taken since (0: the device's own figure). Used to test the refusals of runs that do not fit,
 * before they allocate and at the parts they size on the way. */
CudaHierarchicalSegmentation_EXPORT void
SetDeviceMemoryLimit(uint64_t bytes);

/** The device memory a run on `device` may take now, as the runs' check sees it (free memory plus what the memory
 * pool holds unused, capped by SetDeviceMemoryLimit); for reports of the check's cost. */
CudaHierarchicalSegmentation_EXPORT uint64_t
AvailableDeviceBytes(int device);

/** Test counters: the device allocations made since the process started, and those that took a run above the
 * device memory it had reserved before allocating (each a bug of that run's bound; the last one is described in
 * `last` when given). */
CudaHierarchicalSegmentation_EXPORT uint64_t
DeviceAllocations();
CudaHierarchicalSegmentation_EXPORT uint64_t
DeviceMemoryOverruns(std::string * last = nullptr);

/** Test helpers: a new non-blocking CUDA stream of `device` as an integer handle (what a filter's CudaStream takes;
 * CuPy and PyTorch streams are non-blocking too), and its destruction. */
CudaHierarchicalSegmentation_EXPORT uintptr_t
CreateStream(int device);
CudaHierarchicalSegmentation_EXPORT void
DestroyStream(uintptr_t stream);

/** Test counter: bytes that the CUDA backends' array transfers have moved between host memory and a device since the
 * process started (copies between a device and a caller's device array, such as a CuPy array's, do not count). */
CudaHierarchicalSegmentation_EXPORT uint64_t
HostTransferBytes();

/** Test and benchmark hook: the order in which the kernels that follow pointers between voxels (the watershed's path
 * reductions and numbering, the Image Foresting Transform's labelling) visit the voxels: 0, the choice by size (cubes
 * of 64^3 voxels for volumes of at least 64 slices of at least 2^18 voxels, else raster order); 1, raster order; 2,
 * cubes for every image. The results do not depend on it; std::invalid_argument for another value. */
CudaHierarchicalSegmentation_EXPORT void
SetVoxelOrder(int order);

/** Test and benchmark hook: whether the runs that can overlap their host transfers with their kernels do (true, the
 * default: the watershed's step I runs on the rows or slices that have arrived while the rest is uploaded, and its
 * labels are numbered a range at a time while the range before is downloaded), or move every array before or after
 * their kernels (false: the baseline, whose RunInfo::kernelMilliseconds counts every kernel). The results do not
 * depend on it. */
CudaHierarchicalSegmentation_EXPORT void
SetTransferOverlap(bool overlap);

/** Test and benchmark hook: the shape of the pinned staging buffers that large copies between pageable host memory
 * and a device go through: `slots` buffers (1 to 64) of `chunkBytes` (a positive multiple of 4096), at most
 * `workers` host threads (1 to 16) each copying its slice of every chunk between the caller's memory and a buffer,
 * into the caller's memory (and when zeroing host arrays) with non-temporal stores (streamingStores) or plain ones
 * (copies into the buffers use plain stores). 0, 0, 0: the default shape (4 MiB, 8 slots, 8
 * workers, non-temporal stores). Frees the current buffers (after a transfer in progress); the next transfer
 * allocates new ones. std::invalid_argument for a shape out of those bounds. */
CudaHierarchicalSegmentation_EXPORT void
SetHostStaging(uint64_t chunkBytes, unsigned slots, unsigned workers, bool streamingStores);

/** Benchmark hook: copies `bytes` from `from` to `to`, host to device memory of `device` (toDevice) or back, on
 * `stream` (0: the default stream), as the CUDA backends copy their arrays: straight for page-locked memory, else
 * through the staging buffers with at most `hostThreads` threads (0: the machine's). Returns when the copy is done. */
CudaHierarchicalSegmentation_EXPORT void
CopyHostArray(void *       to,
              const void * from,
              uint64_t     bytes,
              bool         toDevice,
              int          device,
              uintptr_t    stream,
              unsigned     hostThreads);

/** Test hook: copies `bytes` from host memory at `from` to a new device array of `device` and back to `to` with
 * CopyHostArray (default stream), then frees the device array. */
CudaHierarchicalSegmentation_EXPORT void
RoundTripHostArray(const void * from, void * to, uint64_t bytes, int device, unsigned hostThreads);
} // namespace testing

} // namespace chs

#endif
