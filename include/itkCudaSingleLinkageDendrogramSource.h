/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaSingleLinkageDendrogramSource_h
#define itkCudaSingleLinkageDendrogramSource_h

#include "itkCudaDendrogramRun.h"
#include "itkCudaSegmentationBackendEnums.h"
#include "itkDendrogram.h"
#include "itkProcessObject.h"
#include "CudaHierarchicalSegmentationExport.h"

namespace itk
{

/** \class CudaSingleLinkageDendrogramSource
 * \brief What the single-linkage filters share: an itk::Dendrogram output, the backend and device properties, and
 * what the last update measured. See CudaImageToSingleLinkageDendrogramFilter and
 * CudaGraphToSingleLinkageDendrogramFilter.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT CudaSingleLinkageDendrogramSource : public ProcessObject
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaSingleLinkageDendrogramSource);

  using Self         = CudaSingleLinkageDendrogramSource;
  using Superclass   = ProcessObject;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using BackendEnum  = CudaSegmentationBackendEnums::Backend;

  chsTypeMacro(CudaSingleLinkageDendrogramSource, ProcessObject);

  Dendrogram *
  GetOutput();

  /** Auto (default): CUDA when the device exists, else the CPU reference; CUDA; CPU. */
  itkSetMacro(Backend, BackendEnum);
  itkGetConstMacro(Backend, BackendEnum);
  /** CUDA device used by the CUDA backend. */
  itkSetMacro(DeviceId, int);
  itkGetConstMacro(DeviceId, int);

  itkGetConstMacro(LastBackend, BackendEnum);
  /** CUDA: PANDORA's contraction levels and Boruvka's rounds (0 when the input was a tree) of the last update; 0 on
   * the CPU. */
  itkGetConstMacro(NumberOfContractionLevels, unsigned);
  itkGetConstMacro(NumberOfBoruvkaRounds, unsigned);
  /** CUDA: kernel time of the last update in milliseconds, and its two parts: the minimum spanning tree (with the
   * sort of the edges) and the dendrogram (PANDORA). */
  itkGetConstMacro(KernelMilliseconds, double);
  itkGetConstMacro(SpanningTreeMilliseconds, double);
  itkGetConstMacro(DendrogramMilliseconds, double);
  /** CUDA: peak device memory of the last update in bytes. */
  itkGetConstMacro(PeakDeviceMemory, SizeValueType);

  using Superclass::MakeOutput;
  DataObject::Pointer
  MakeOutput(DataObjectPointerArraySizeType idx) override;

protected:
  CudaSingleLinkageDendrogramSource();
  ~CudaSingleLinkageDendrogramSource() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  /** Runs cuda(arrays, context, info) or cpu(arrays) for a graph of n vertices into the output (see
   * RunDendrogramBackend) and records what the run measured. */
  template <class FCuda, class FCpu>
  void
  RunBackend(SizeValueType n, FCuda && cuda, FCpu && cpu)
  {
    m_NumberOfContractionLevels = m_NumberOfBoruvkaRounds = 0;
    m_KernelMilliseconds = m_SpanningTreeMilliseconds = m_DendrogramMilliseconds = 0.0;
    m_PeakDeviceMemory                                                           = 0;
    const BackendEnum backend = ResolveCudaSegmentationBackend(m_Backend, m_DeviceId, this->GetNameOfClass());
    chs::RunInfo      info;
    const auto        result = RunDendrogramBackend(this, backend, m_DeviceId, this->GetOutput(), n, info, cuda, cpu);
    m_LastBackend            = backend;
    m_NumberOfContractionLevels = result.contractionLevels;
    m_NumberOfBoruvkaRounds     = result.boruvkaRounds;
    m_SpanningTreeMilliseconds  = result.mstMilliseconds;
    m_DendrogramMilliseconds    = result.dendrogramMilliseconds;
    m_KernelMilliseconds        = info.kernelMilliseconds;
    m_PeakDeviceMemory          = info.peakDeviceBytes;
  }

private:
  BackendEnum   m_Backend{ BackendEnum::Auto };
  BackendEnum   m_LastBackend{ BackendEnum::Auto };
  int           m_DeviceId{ 0 };
  unsigned      m_NumberOfContractionLevels{ 0 };
  unsigned      m_NumberOfBoruvkaRounds{ 0 };
  double        m_KernelMilliseconds{ 0.0 };
  double        m_SpanningTreeMilliseconds{ 0.0 };
  double        m_DendrogramMilliseconds{ 0.0 };
  SizeValueType m_PeakDeviceMemory{ 0 };
};

} // namespace itk

#endif
