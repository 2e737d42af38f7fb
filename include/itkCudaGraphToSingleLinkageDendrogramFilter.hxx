/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaGraphToSingleLinkageDendrogramFilter_hxx
#define itkCudaGraphToSingleLinkageDendrogramFilter_hxx

#include "itkCudaGraphToSingleLinkageDendrogramFilter.h"
#include "itkCudaDendrogramRun.h"

#include <algorithm>

namespace itk
{

template <typename TWeight>
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::CudaGraphToSingleLinkageDendrogramFilter()
{
  this->SetNumberOfRequiredInputs(0);
  this->SetNumberOfRequiredOutputs(1);
  this->SetNthOutput(0, this->MakeOutput(0));
}

template <typename TWeight>
DataObject::Pointer
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::MakeOutput(DataObjectPointerArraySizeType)
{
  return Dendrogram::New().GetPointer();
}

template <typename TWeight>
Dendrogram *
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::GetOutput()
{
  return itkDynamicCastInDebugMode<Dendrogram *>(this->ProcessObject::GetOutput(0));
}

template <typename TWeight>
void
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::SetEdges(const VertexContainerType * u,
                                                            const VertexContainerType * v,
                                                            const WeightContainerType * w)
{
  m_U = u;
  m_V = v;
  m_W = w;
  this->Modified();
}

template <typename TWeight>
void
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::GenerateData()
{
  m_NumberOfContractionLevels = 0;
  m_NumberOfBoruvkaRounds = 0;
  m_KernelMilliseconds = m_SpanningTreeMilliseconds = m_DendrogramMilliseconds = 0.0;
  m_PeakDeviceMemory = 0;
  Dendrogram * output = this->GetOutput();
  if (!m_U || !m_V || !m_W)
  {
    output->Initialize();
    itkExceptionMacro(<< "No edges: call SetEdges(u, v, w) first.");
  }
  const SizeValueType edges = m_U->size();
  if (m_V->size() != edges || m_W->size() != edges)
  {
    output->Initialize();
    itkExceptionMacro(<< "The edge arrays differ in length: u has " << edges << ", v " << m_V->size() << " and w "
                      << m_W->size() << " entries.");
  }
  SizeValueType n = m_NumberOfVertices;
  if (n == 0)
  {
    for (SizeValueType i = 0; i < edges; ++i)
      n = std::max<SizeValueType>(n, SizeValueType(std::max((*m_U)[i], (*m_V)[i])) + 1);
    n = std::max<SizeValueType>(n, 1);
  }
  output->SetImageGeometry(0, nullptr, nullptr, nullptr, nullptr);

  const BackendEnum backend = ResolveCudaSegmentationBackend(m_Backend, m_DeviceId, this->GetNameOfClass());
  const uint32_t *  u = m_U->CastToSTLConstContainer().data();
  const uint32_t *  v = m_V->CastToSTLConstContainer().data();
  const TWeight *   w = m_W->CastToSTLConstContainer().data();
  const bool        tree = m_InputIsTree;
  chs::RunInfo      info;
  const auto        result = RunDendrogramBackend(
    this,
    backend,
    m_DeviceId,
    output,
    n,
    info,
    [&](const chs::DendrogramArrays & arrays, const chs::ExecutionContext & context, chs::RunInfo & run) {
      return chs::GraphSingleLinkageCUDA(u, v, w, edges, n, tree, arrays, context, &run);
    },
    [&](const chs::DendrogramArrays & arrays) { return chs::GraphSingleLinkageCPU(u, v, w, edges, n, tree, arrays); });
  m_LastBackend = backend;
  m_NumberOfContractionLevels = result.contractionLevels;
  m_NumberOfBoruvkaRounds = result.boruvkaRounds;
  m_SpanningTreeMilliseconds = result.mstMilliseconds;
  m_DendrogramMilliseconds = result.dendrogramMilliseconds;
  m_KernelMilliseconds = info.kernelMilliseconds;
  m_PeakDeviceMemory = info.peakDeviceBytes;
}

template <typename TWeight>
void
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Edges: " << (m_U ? m_U->size() : 0) << std::endl;
  os << indent << "NumberOfVertices: " << m_NumberOfVertices << std::endl;
  os << indent << "InputIsTree: " << m_InputIsTree << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "DeviceId: " << m_DeviceId << std::endl;
  os << indent << "LastBackend: " << m_LastBackend << std::endl;
  os << indent << "NumberOfContractionLevels: " << m_NumberOfContractionLevels << std::endl;
  os << indent << "KernelMilliseconds: " << m_KernelMilliseconds << std::endl;
}

} // namespace itk

#endif
