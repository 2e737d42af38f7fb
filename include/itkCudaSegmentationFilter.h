/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaSegmentationFilter_h
#define itkCudaSegmentationFilter_h

#include "itkCudaSegmentationRun.h"
#include "itkHostCachedContainers.h"

namespace itk
{

/** \class CudaSegmentationFilter
 * \brief What every filter of the module shares, between its ITK superclass (ImageToImageFilter, ImageSource or
 * ProcessObject) and the filter: where it runs and what its last update measured.
 *
 * Properties: Backend (Auto, CUDA or CPU; CudaSegmentationBackendEnums), DeviceId and CudaStream; after an update,
 * LastBackend (where it ran), KernelMilliseconds and PeakDeviceMemory (the CUDA backend's kernel time and peak
 * device memory; 0 on the CPU).
 *
 * The module's algorithms are global, so every input is requested whole and every output is produced whole
 * (GenerateInputRequestedRegion, EnlargeOutputRequestedRegion). A filter's GenerateData() calls ResolveBackend()
 * before it allocates its outputs (AllocateCachedOutputs: their buffers are reused through the module's host array
 * cache, chs/HostCache.h), then RunBackend() with its CUDA and CPU calls, which releases the given outputs
 * and throws an ExceptionObject naming the backend and the reason when either fails.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TSuperclass>
class ITK_TEMPLATE_EXPORT CudaSegmentationFilter : public TSuperclass
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaSegmentationFilter);

  using Self         = CudaSegmentationFilter;
  using Superclass   = TSuperclass;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using BackendEnum  = CudaSegmentationBackendEnums::Backend;

  chsTypeMacro(CudaSegmentationFilter, TSuperclass);

  /** Auto (default): CUDA when the device exists, else the CPU reference (with a warning); CUDA; CPU. */
  itkSetMacro(Backend, BackendEnum);
  itkGetConstMacro(Backend, BackendEnum);
  /** CUDA device used by the CUDA backend. */
  itkSetMacro(DeviceId, int);
  itkGetConstMacro(DeviceId, int);

  /** The CUDA stream of the CUDA backend's work, as an integer (a cudaStream_t of DeviceId cast to an integer: CuPy's
   * Stream.ptr, PyTorch's Stream.cuda_stream); 0 (default): the legacy default stream. Every copy and kernel of an
   * update goes on it, and an update returns once its own work on it has finished. Filters updated at the same time
   * from several host threads may share a stream (their work then runs in turn) or each have its own (it may
   * overlap); either way each gets its own result. */
  itkSetMacro(CudaStream, unsigned long long);
  itkGetConstMacro(CudaStream, unsigned long long);

  /** The backend of the last successful update. */
  itkGetConstMacro(LastBackend, BackendEnum);
  /** Kernel time of the last CUDA update in milliseconds (0 on the CPU). */
  itkGetConstMacro(KernelMilliseconds, double);
  /** Peak device memory of the last CUDA update in bytes (0 on the CPU). */
  itkGetConstMacro(PeakDeviceMemory, SizeValueType);

protected:
  CudaSegmentationFilter()           = default;
  ~CudaSegmentationFilter() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    os << indent << "Backend: " << m_Backend << std::endl;
    os << indent << "DeviceId: " << m_DeviceId << std::endl;
    os << indent << "CudaStream: " << m_CudaStream << std::endl;
    os << indent << "LastBackend: " << m_LastBackend << std::endl;
    os << indent << "KernelMilliseconds: " << m_KernelMilliseconds << std::endl;
    os << indent << "PeakDeviceMemory: " << m_PeakDeviceMemory << std::endl;
  }

  /** Every input whole. */
  void
  GenerateInputRequestedRegion() override
  {
    Superclass::GenerateInputRequestedRegion();
    for (const auto & input : this->GetInputs())
    {
      if (input)
      {
        input->SetRequestedRegionToLargestPossibleRegion();
      }
    }
  }

  /** Every output whole. */
  void
  EnlargeOutputRequestedRegion(DataObject * output) override
  {
    Superclass::EnlargeOutputRequestedRegion(output);
    for (const auto & out : this->GetOutputs())
    {
      if (out)
      {
        out->SetRequestedRegionToLargestPossibleRegion();
      }
    }
  }

  /** Clears what the last update measured and resolves Backend for DeviceId: the backend this update runs on
   * (throws for CUDA without a device). */
  BackendEnum
  ResolveBackend()
  {
    m_KernelMilliseconds = 0.0;
    m_PeakDeviceMemory   = 0;
    return ResolveCudaSegmentationBackend(m_Backend, m_DeviceId, this->GetNameOfClass());
  }

  /** ImageSource::AllocateOutputs with the module's host array cache (for ImageSource superclasses): every output
   * image is allocated over its requested region, in a HostCachedImageContainer when it is of the output image type
   * or one of TOtherImages (other images the usual way); `pinned` (true for a CUDA update): new buffers are
   * page-locked. */
  template <typename... TOtherImages>
  void
  AllocateCachedOutputs(bool pinned)
  {
    for (const auto & output : this->GetOutputs())
    {
      auto * image = dynamic_cast<ImageBase<TSuperclass::OutputImageDimension> *>(output.GetPointer());
      if (image == nullptr)
        continue;
      image->SetBufferedRegion(image->GetRequestedRegion());
      if (!AllocateIfOneOf<typename TSuperclass::OutputImageType, TOtherImages...>(image, pinned, 0))
        image->Allocate();
    }
  }

  /** Runs run(context, info) with the context of `backend` (from ResolveBackend) through RunOnBackend, which
   * releases `outputs` and throws on failure, and records LastBackend, KernelMilliseconds and PeakDeviceMemory. */
  template <class FRun>
  chs::RunInfo
  RunBackend(BackendEnum backend, FRun && run, std::initializer_list<DataObject *> outputs)
  {
    const chs::RunInfo info = RunOnBackend(this, backend, m_DeviceId, m_CudaStream, std::forward<FRun>(run), outputs);
    m_LastBackend           = backend;
    m_KernelMilliseconds    = info.kernelMilliseconds;
    m_PeakDeviceMemory      = info.peakDeviceBytes;
    return info;
  }

private:
  /** Allocates `image` in the cache when it is a TImage or one of TOthers; false when it is none. (The int / long
   * argument picks this overload while types are left, the one below when none is.) */
  template <typename TImage, typename... TOthers, typename TBase>
  static bool
  AllocateIfOneOf(TBase * image, bool pinned, int)
  {
    if (auto * typed = dynamic_cast<TImage *>(image))
    {
      AllocateHostCached(typed, pinned);
      return true;
    }
    return AllocateIfOneOf<TOthers...>(image, pinned, 0);
  }
  template <typename... TNone, typename TBase>
  static bool
  AllocateIfOneOf(TBase *, bool, long)
  {
    return false;
  }

  BackendEnum        m_Backend{ BackendEnum::Auto };
  BackendEnum        m_LastBackend{ BackendEnum::Auto };
  int                m_DeviceId{ 0 };
  unsigned long long m_CudaStream{ 0 };
  double             m_KernelMilliseconds{ 0.0 };
  SizeValueType      m_PeakDeviceMemory{ 0 };
};

} // namespace itk

#endif
