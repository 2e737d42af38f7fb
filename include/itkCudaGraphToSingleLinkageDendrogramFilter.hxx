/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaGraphToSingleLinkageDendrogramFilter_hxx
#define itkCudaGraphToSingleLinkageDendrogramFilter_hxx

#include "itkCudaGraphToSingleLinkageDendrogramFilter.h"

#include <algorithm>

namespace itk
{

template <typename TWeight>
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::CudaGraphToSingleLinkageDendrogramFilter()
{
  this->SetNumberOfRequiredInputs(0);
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

  const uint32_t * u    = m_U->CastToSTLConstContainer().data();
  const uint32_t * v    = m_V->CastToSTLConstContainer().data();
  const TWeight *  w    = m_W->CastToSTLConstContainer().data();
  const bool       tree = m_InputIsTree;
  this->RunDendrogram(n, GraphRun<TWeight>{ u, v, w, edges, n, tree });
}

template <typename TWeight>
void
CudaGraphToSingleLinkageDendrogramFilter<TWeight>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Edges: " << (m_U ? m_U->size() : 0) << std::endl;
  os << indent << "NumberOfVertices: " << m_NumberOfVertices << std::endl;
  os << indent << "InputIsTree: " << m_InputIsTree << std::endl;
}

} // namespace itk

#endif
