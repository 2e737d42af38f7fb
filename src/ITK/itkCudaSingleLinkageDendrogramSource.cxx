/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkCudaSingleLinkageDendrogramSource.h"

namespace itk
{

CudaSingleLinkageDendrogramSource::CudaSingleLinkageDendrogramSource()
{
  this->SetNumberOfRequiredOutputs(1);
  this->SetNthOutput(0, this->MakeOutput(0));
}

DataObject::Pointer
CudaSingleLinkageDendrogramSource::MakeOutput(DataObjectPointerArraySizeType)
{
  return Dendrogram::New().GetPointer();
}

Dendrogram *
CudaSingleLinkageDendrogramSource::GetOutput()
{
  return itkDynamicCastInDebugMode<Dendrogram *>(this->ProcessObject::GetOutput(0));
}

void
CudaSingleLinkageDendrogramSource::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfContractionLevels: " << m_NumberOfContractionLevels << std::endl;
  os << indent << "NumberOfBoruvkaRounds: " << m_NumberOfBoruvkaRounds << std::endl;
  os << indent << "WideNodeIds: " << m_WideNodeIds << std::endl;
}

} // namespace itk
