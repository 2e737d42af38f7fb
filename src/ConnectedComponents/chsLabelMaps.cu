// The label maps (include/chs/ConnectedComponents.h: MapLabels, KeepLabels), the CUDA backend: one gather a voxel.
// A label beyond the table is recorded instead of read; the host checks the record before it downloads anything, so
// bad input leaves the caller's output untouched, as on the CPU reference.
#include "ConnectedComponents/chsConnectedComponentsBackends.h"
#include "ConnectedComponents/chsLabelMapsInstantiate.h"
#include "Common/chsCudaCommon.cuh"

namespace chs
{
namespace
{

constexpr int kMapThreads = 256;

/** beyond[0]: 1 when some label is beyond the table; beyond[1]: the largest such label. */
template <typename TLabel>
__device__ __forceinline__ bool
InTable(TLabel label, uint64_t tableSize, unsigned long long * beyond)
{
  if (static_cast<uint64_t>(label) < tableSize)
    return true;
  atomicMax(beyond + 1, static_cast<unsigned long long>(label));
  beyond[0] = 1;
  return false;
}

template <typename TLabel, typename TOut>
__global__ void
__launch_bounds__(kMapThreads) MapLabelsKernel(const TLabel *       labels,
                                               uint64_t             n,
                                               const TOut *         table,
                                               uint64_t             tableSize,
                                               TOut *               out,
                                               unsigned long long * beyond)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
  {
    const TLabel l = labels[i];
    if (InTable(l, tableSize, beyond))
      out[i] = table[static_cast<uint64_t>(l)];
  }
}

template <typename TPixel, typename TLabel>
__global__ void
__launch_bounds__(kMapThreads) KeepLabelsKernel(const TPixel *       image,
                                                const TLabel *       labels,
                                                uint64_t             n,
                                                const uint8_t *      keep,
                                                uint64_t             tableSize,
                                                TPixel *             out,
                                                unsigned long long * beyond)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
  {
    const TLabel l = labels[i];
    if (InTable(l, tableSize, beyond))
      out[i] = keep[static_cast<uint64_t>(l)] ? image[i] : TPixel(0);
  }
}

/** The shared host side: device buffers of the label image, the table and the output (and the image), the launch,
 * the check and the download. `launch(labels, table, out, image, beyond)` enqueues the kernel. */
template <typename TLabel, typename TTable, typename TOut, typename TImage, class Launch>
void
RunMap(const char *             what,
       const TLabel *           labels,
       const Grid &             grid,
       const TTable *           table,
       uint64_t                 tableSize,
       const TImage *           image,
       TOut *                   out,
       const ExecutionContext & context,
       RunInfo *                info,
       Launch &&                launch)
{
  using detail::DeviceBuffer;
  const uint64_t n = grid.NumberOfVoxels();
  if (n == 0)
    throw std::invalid_argument("chs: the label image has no voxels");
  if (tableSize == 0)
    throw std::invalid_argument("chs: the table is empty");
  const cudaStream_t    stream = static_cast<cudaStream_t>(context.stream);
  detail::DeviceScope   scope(context.device);
  detail::MemoryTracker tracker;
  tracker.what = detail::DescribeRun(what, grid);
  detail::ReserveDeviceMemory(tracker,
                              n * (sizeof(TLabel) + sizeof(TOut) + (image ? sizeof(TImage) : 0)) +
                                tableSize * sizeof(TTable) + 2 * sizeof(unsigned long long),
                              context.device);
  DeviceBuffer<TLabel>             dLabels(n, stream, &tracker);
  DeviceBuffer<TTable>             dTable(tableSize, stream, &tracker);
  DeviceBuffer<TImage>             dImage(image ? n : 0, stream, &tracker);
  DeviceBuffer<TOut>               dOut(n, stream, &tracker);
  DeviceBuffer<unsigned long long> dBeyond(2, stream, &tracker);
  detail::CopyToDevice(dLabels.get(), labels, n * sizeof(TLabel), stream, context);
  detail::CopyToDevice(dTable.get(), table, tableSize * sizeof(TTable), stream, context);
  if (image)
    detail::CopyToDevice(dImage.get(), image, n * sizeof(TImage), stream, context);
  CHS_CUDA_CHECK(cudaMemsetAsync(dBeyond.get(), 0, 2 * sizeof(unsigned long long), stream));
  detail::EventTimer timer(stream);
  timer.Start();
  const unsigned blocks = detail::GridStrideBlocks(n, kMapThreads, context.device);
  launch(blocks, dLabels.get(), dTable.get(), dOut.get(), dImage.get(), dBeyond.get(), stream);
  CHS_CUDA_CHECK_LAUNCH(what);
  timer.Stop();
  unsigned long long beyond[2] = { 0, 0 };
  CHS_CUDA_CHECK(cudaMemcpyAsync(beyond, dBeyond.get(), sizeof(beyond), cudaMemcpyDeviceToHost, stream));
  CHS_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (beyond[0])
    throw LabelBeyondTable(beyond[1], tableSize);
  detail::CopyToHost(out, dOut.get(), n * sizeof(TOut), stream, context);
  if (info)
  {
    info->kernelMilliseconds  = timer.Milliseconds();
    info->peakDeviceBytes     = tracker.peak;
    info->reservedDeviceBytes = tracker.reserved;
  }
}

} // namespace

template <typename TLabel, typename TOut>
void
MapLabelsCUDA(const TLabel *           labels,
              const Grid &             grid,
              const TOut *             table,
              uint64_t                 tableSize,
              TOut *                   out,
              const ExecutionContext & context,
              RunInfo *                info)
{
  RunMap<TLabel, TOut, TOut, uint8_t>("label map",
                                      labels,
                                      grid,
                                      table,
                                      tableSize,
                                      nullptr,
                                      out,
                                      context,
                                      info,
                                      [&](unsigned       blocks,
                                          const TLabel * l,
                                          const TOut *   t,
                                          TOut *         o,
                                          const uint8_t *,
                                          unsigned long long * b,
                                          cudaStream_t         stream) {
                                        MapLabelsKernel<TLabel, TOut><<<blocks, kMapThreads, 0, stream>>>(
                                          l, grid.NumberOfVoxels(), t, tableSize, o, b);
                                      });
}

template <typename TPixel, typename TLabel>
void
KeepLabelsCUDA(const TPixel *           image,
               const TLabel *           labels,
               const Grid &             grid,
               const uint8_t *          keep,
               uint64_t                 tableSize,
               TPixel *                 out,
               const ExecutionContext & context,
               RunInfo *                info)
{
  if (image == nullptr)
    throw std::invalid_argument("chs: KeepLabels needs an image");
  RunMap<TLabel, uint8_t, TPixel, TPixel>("label keep",
                                          labels,
                                          grid,
                                          keep,
                                          tableSize,
                                          image,
                                          out,
                                          context,
                                          info,
                                          [&](unsigned             blocks,
                                              const TLabel *       l,
                                              const uint8_t *      k,
                                              TPixel *             o,
                                              const TPixel *       im,
                                              unsigned long long * b,
                                              cudaStream_t         stream)
                                          {
                                            KeepLabelsKernel<TPixel, TLabel><<<blocks, kMapThreads, 0, stream>>>(
                                              im, l, grid.NumberOfVoxels(), k, tableSize, o, b);
                                          });
}

#define CHS_MAP_LABELS_CUDA(TLabel, TOut)                                                                              \
  template CudaHierarchicalSegmentation_EXPORT void MapLabelsCUDA<TLabel, TOut>(                                       \
    const TLabel *, const Grid &, const TOut *, uint64_t, TOut *, const ExecutionContext &, RunInfo *)
#define CHS_KEEP_LABELS_CUDA(TPixel, TLabel)                                                                           \
  template CudaHierarchicalSegmentation_EXPORT void KeepLabelsCUDA<TPixel, TLabel>(const TPixel *,                     \
                                                                                   const TLabel *,                     \
                                                                                   const Grid &,                       \
                                                                                   const uint8_t *,                    \
                                                                                   uint64_t,                           \
                                                                                   TPixel *,                           \
                                                                                   const ExecutionContext &,           \
                                                                                   RunInfo *)
CHS_FOR_LABEL_MAPS(CHS_MAP_LABELS_CUDA, CHS_KEEP_LABELS_CUDA);

} // namespace chs
