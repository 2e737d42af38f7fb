/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaSingleLinkageDendrogramSource_h
#define itkCudaSingleLinkageDendrogramSource_h

#include "itkCudaSegmentationFilter.h"
#include "chs/SingleLinkage.h"
#include "itkDendrogram.h"
#include "itkProcessObject.h"
#include "CudaHierarchicalSegmentationExport.h"

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

  /** RunDendrogram's functor for an image's pixel graph (either width). */
  template <typename TPixel>
  struct ImageRun
  {
    const TPixel *            pixels;
    chs::Grid                 grid;
    chs::ImageGraphParameters parameters;
    template <typename TNode>
    chs::SingleLinkageResult
    operator()(const chs::DendrogramArraysT<TNode> & arrays,
               const chs::ExecutionContext &         context,
               chs::RunInfo &                        info) const
    {
      return chs::ImageSingleLinkage(pixels, grid, parameters, arrays, context, &info);
    }
  };
  /** RunDendrogram's functor for a graph given as edge arrays (either width). */
  template <typename TWeight>
  struct GraphRun
  {
    const uint32_t * u;
    const uint32_t * v;
    const TWeight *  w;
    uint64_t         edges, vertices;
    bool             tree;
    template <typename TNode>
    chs::SingleLinkageResult
    operator()(const chs::DendrogramArraysT<TNode> & arrays,
               const chs::ExecutionContext &         context,
               chs::RunInfo &                        info) const
    {
      return chs::GraphSingleLinkage(u, v, w, edges, vertices, tree, arrays, context, &info);
    }
  };

  /** Sizes the output for a graph of n vertices, with 64-bit node ids beyond 2^31 - 1 vertices, when WideNodeIds asks
   * or when `wide` is set (the hierarchies by attribute keep their input's width), and runs run(arrays, context, info)
   * into it on the backend that the context names, arrays being chs::DendrogramArraysT of the ids' width (a functor
   * with overloads for both widths), through RunBackend (which empties the output on failure), then checks the CPU
   * dendrogram's invariants (the CUDA backend checks the same invariants on the device, before the download); records
   * what the run measured. Written in C++11, as every header the wrapping parses. */
  template <class FRun>
  void
  RunDendrogram(SizeValueType n, const FRun & run, bool wide = false)
  {
    m_NumberOfContractionLevels = m_NumberOfBoruvkaRounds = 0;
    m_SpanningTreeMilliseconds = m_DendrogramMilliseconds = 0.0;
    const BackendEnum        backend                      = this->ResolveBackend();
    Dendrogram *             output                       = this->GetOutput();
    chs::SingleLinkageResult result;
    if (wide || m_WideNodeIds || n > chs::MaximumDendrogramVertices)
      this->RunInto<uint64_t>(backend, n, true, run, result);
    else
      this->RunInto<uint32_t>(backend, n, false, run, result);
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
  static void
  PointArrays(Dendrogram * output, chs::DendrogramArrays & arrays)
  {
    arrays.parent = output->GetParents()->CastToSTLContainer().data();
    arrays.u      = output->GetEdgeU()->CastToSTLContainer().data();
    arrays.v      = output->GetEdgeV()->CastToSTLContainer().data();
  }
  static void
  PointArrays(Dendrogram * output, chs::DendrogramArraysT<uint64_t> & arrays)
  {
    arrays.parent = output->GetWideParents()->CastToSTLContainer().data();
    arrays.u      = output->GetWideEdgeU()->CastToSTLContainer().data();
    arrays.v      = output->GetWideEdgeV()->CastToSTLContainer().data();
  }

  template <typename TNode, class FRun>
  void
  RunInto(BackendEnum backend, SizeValueType n, bool wide, const FRun & run, chs::SingleLinkageResult & result)
  {
    Dendrogram *                  output = this->GetOutput();
    chs::DendrogramArraysT<TNode> arrays;
    auto                          prepare = [&]
    {
      output->Allocate(n, wide);
      arrays.weight = output->GetWeights()->CastToSTLContainer().data();
      arrays.edge   = output->GetEdgeIds()->CastToSTLContainer().data();
      PointArrays(output, arrays);
    };
    this->RunBackend(backend,
                     [&](const chs::ExecutionContext & context, chs::RunInfo & info)
                     {
                       prepare();
                       result = run(arrays, context, info);
                     },
                     { output });
  }
  unsigned m_NumberOfContractionLevels{ 0 };
  unsigned m_NumberOfBoruvkaRounds{ 0 };
  double   m_SpanningTreeMilliseconds{ 0.0 };
  double   m_DendrogramMilliseconds{ 0.0 };
  bool     m_WideNodeIds{ false };
};

} // namespace itk

#endif
