/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaSingleLinkageDendrogramSource_h
#define itkCudaSingleLinkageDendrogramSource_h

#include "itkCudaSegmentationFilter.h"
#include "chsSingleLinkage.h"
#include "itkDendrogram.h"
#include "itkProcessObject.h"
#include "CudaHierarchicalSegmentationExport.h"

#include <type_traits>

namespace itk
{

/** \class CudaSingleLinkageDendrogramSource
 * \brief What the single-linkage filters share: an itk::Dendrogram output and what the last update measured of
 * the spanning tree and the dendrogram (the backend properties come from CudaSegmentationFilter). See
 * CudaImageToSingleLinkageDendrogramFilter and CudaGraphToSingleLinkageDendrogramFilter.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT CudaSingleLinkageDendrogramSource
  : public CudaSegmentationFilter<ProcessObject>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaSingleLinkageDendrogramSource);

  using Self         = CudaSingleLinkageDendrogramSource;
  using Superclass   = CudaSegmentationFilter<ProcessObject>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;
  using BackendEnum  = Superclass::BackendEnum;

  chsTypeMacro(CudaSingleLinkageDendrogramSource, ProcessObject);

  Dendrogram *
  GetOutput();

  /** CUDA: PANDORA's contraction levels and Boruvka's rounds (0 when the input was a tree) of the last update; 0 on
   * the CPU. */
  itkGetConstMacro(NumberOfContractionLevels, unsigned);
  itkGetConstMacro(NumberOfBoruvkaRounds, unsigned);
  /** CUDA: the two parts of KernelMilliseconds, the minimum spanning tree (with the sort of the edges) and the
   * dendrogram (PANDORA). */
  itkGetConstMacro(SpanningTreeMilliseconds, double);
  itkGetConstMacro(DendrogramMilliseconds, double);

  /** 64-bit node ids (Dendrogram::HasWideNodeIds) for any graph; off by default: they are 64-bit only beyond 2^31 - 1
   * vertices. The dendrogram is the same. */
  itkSetMacro(WideNodeIds, bool);
  itkGetConstMacro(WideNodeIds, bool);
  itkBooleanMacro(WideNodeIds);

  using Superclass::MakeOutput;
  DataObject::Pointer
  MakeOutput(DataObjectPointerArraySizeType idx) override;

protected:
  CudaSingleLinkageDendrogramSource();
  ~CudaSingleLinkageDendrogramSource() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  /** Sizes the output for a graph of n vertices, with 64-bit node ids beyond 2^31 - 1 vertices or when WideNodeIds
   * asks, and runs cuda(arrays, context, info) or cpu(arrays) into it (arrays: chs::DendrogramArraysT of the ids'
   * width) through RunBackend (which empties the output on failure), then checks the CPU dendrogram's invariants (the
   * CUDA backend checks the same invariants on the device, before the download); records what the run measured. */
  template <class FCuda, class FCpu>
  void
  RunDendrogram(SizeValueType n, FCuda && cuda, FCpu && cpu)
  {
    m_NumberOfContractionLevels = m_NumberOfBoruvkaRounds = 0;
    m_SpanningTreeMilliseconds = m_DendrogramMilliseconds = 0.0;
    const BackendEnum        backend                      = this->ResolveBackend();
    Dendrogram *             output                       = this->GetOutput();
    const bool               wide                         = m_WideNodeIds || n > chs::MaximumDendrogramVertices;
    chs::SingleLinkageResult result;
    const auto               run = [&](auto arrays)
    {
      auto prepare = [&]
      {
        output->Allocate(n, wide);
        arrays.weight = output->GetWeights()->CastToSTLContainer().data();
        arrays.edge   = output->GetEdgeIds()->CastToSTLContainer().data();
        if constexpr (sizeof(*arrays.parent) == sizeof(uint64_t))
        {
          arrays.parent = output->GetWideParents()->CastToSTLContainer().data();
          arrays.u      = output->GetWideEdgeU()->CastToSTLContainer().data();
          arrays.v      = output->GetWideEdgeV()->CastToSTLContainer().data();
        }
        else
        {
          arrays.parent = output->GetParents()->CastToSTLContainer().data();
          arrays.u      = output->GetEdgeU()->CastToSTLContainer().data();
          arrays.v      = output->GetEdgeV()->CastToSTLContainer().data();
        }
      };
      this->RunBackend(
        backend,
        [&](const chs::ExecutionContext & context, chs::RunInfo & info)
        {
          prepare();
          result = cuda(arrays, context, info);
        },
        [&]
        {
          prepare();
          result = cpu(arrays);
        },
        { output });
    };
    // Backends that take 64-bit ids take both widths (the attribute hierarchies take 32-bit ones only).
    if constexpr (std::is_invocable_v<FCpu &, const chs::DendrogramArraysT<uint64_t> &>)
    {
      if (wide)
        run(chs::DendrogramArraysT<uint64_t>());
      else
        run(chs::DendrogramArrays());
    }
    else
    {
      if (wide)
      {
        output->Initialize();
        itkExceptionMacro(<< this->GetNameOfClass() << " writes dendrograms of 32-bit node ids (up to 2^31 - 1 "
                          << "vertices), not of " << n << " vertices" << (m_WideNodeIds ? " with WideNodeIds" : "")
                          << '.');
      }
      run(chs::DendrogramArrays());
    }
    if (backend == BackendEnum::CPU)
    {
      try
      {
        output->CheckInvariants();
      }
      catch (...)
      {
        output->Initialize();
        throw;
      }
    }
    m_NumberOfContractionLevels = result.contractionLevels;
    m_NumberOfBoruvkaRounds     = result.boruvkaRounds;
    m_SpanningTreeMilliseconds  = result.mstMilliseconds;
    m_DendrogramMilliseconds    = result.dendrogramMilliseconds;
  }

private:
  unsigned      m_NumberOfContractionLevels{ 0 };
  unsigned      m_NumberOfBoruvkaRounds{ 0 };
  double        m_SpanningTreeMilliseconds{ 0.0 };
  double        m_DendrogramMilliseconds{ 0.0 };
  bool          m_WideNodeIds{ false };
};

} // namespace itk

#endif
