/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkCudaDendrogramAttributeFilter.h"

#include <cmath>
#include <vector>

namespace itk
{

namespace
{
const char *
AttributeName(chs::RegionAttribute a)
{
  switch (a)
  {
    case chs::RegionAttribute::Area:
      return "Area";
    case chs::RegionAttribute::Volume:
      return "Volume";
    case chs::RegionAttribute::Height:
      return "Height";
    case chs::RegionAttribute::Dynamics:
      return "Dynamics";
  }
  return "unknown";
}
} // namespace

CudaDendrogramAttributeFilter::CudaDendrogramAttributeFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

void
CudaDendrogramAttributeFilter::SetInput(const Dendrogram * input)
{
  this->ProcessObject::SetNthInput(0, const_cast<Dendrogram *>(input));
}

const Dendrogram *
CudaDendrogramAttributeFilter::GetInput() const
{
  return itkDynamicCastInDebugMode<const Dendrogram *>(this->ProcessObject::GetInput(0));
}

void
CudaDendrogramAttributeFilter::GenerateOutputInformation()
{
  // The output keeps the input's image geometry, known before the update (DendrogramToLabelImageFilter reads it).
  const Dendrogram * input = this->GetInput();
  if (!input)
    return;
  const unsigned             d = input->GetImageDimension();
  std::vector<SizeValueType> size(d);
  std::vector<double>        spacing(d), origin(d), direction(d * d);
  for (unsigned i = 0; i < d; ++i)
  {
    size[i]    = input->GetImageSize(i);
    spacing[i] = input->GetImageSpacing(i);
    origin[i]  = input->GetImageOrigin(i);
    for (unsigned j = 0; j < d; ++j)
      direction[i * d + j] = input->GetImageDirection(i, j);
  }
  this->GetOutput()->SetImageGeometry(d, size.data(), spacing.data(), origin.data(), direction.data());
}

void
CudaDendrogramAttributeFilter::GenerateData()
{
  const Dendrogram * input     = this->GetInput();
  Dendrogram *       output    = this->GetOutput();
  const bool         watershed = m_Operation == OperationEnum::WatershedHierarchy;
  if (!input || input->GetNumberOfVertices() == 0)
  {
    output->Initialize();
    itkExceptionMacro(<< "The input dendrogram is empty.");
  }
  if (watershed && m_Attribute == AttributeEnum::Height)
  {
    output->Initialize();
    itkExceptionMacro(<< "A watershed hierarchy is by Area, Volume or Dynamics, not by Height.");
  }
  if (!watershed && (m_Attribute == AttributeEnum::Dynamics || std::isnan(m_Threshold)))
  {
    output->Initialize();
    itkExceptionMacro(<< "FilterRegions takes Area, Volume or Height and a threshold that is a number (attribute "
                      << AttributeName(m_Attribute) << ", threshold " << m_Threshold << ").");
  }
  this->GenerateOutputInformation();

  const SizeValueType        n = input->GetNumberOfVertices();
  const chs::DendrogramInput in{ n,
                                 input->GetParents()->CastToSTLConstContainer().data(),
                                 input->GetWeights()->CastToSTLConstContainer().data(),
                                 input->GetEdgeIds()->CastToSTLConstContainer().data(),
                                 input->GetEdgeU()->CastToSTLConstContainer().data(),
                                 input->GetEdgeV()->CastToSTLConstContainer().data() };
  const AttributeEnum        attribute = m_Attribute;
  const double               threshold = m_Threshold;
  this->RunDendrogram(
    n,
    [&](const chs::DendrogramArrays & arrays, const chs::ExecutionContext & context, chs::RunInfo & run)
    {
      return watershed ? chs::WatershedHierarchyCUDA(in, attribute, arrays, context, &run)
                       : chs::FilterRegionsCUDA(in, attribute, threshold, arrays, context, &run);
    },
    [&](const chs::DendrogramArrays & arrays)
    {
      return watershed ? chs::WatershedHierarchyCPU(in, attribute, arrays)
                       : chs::FilterRegionsCPU(in, attribute, threshold, arrays);
    });
}

void
CudaDendrogramAttributeFilter::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent
     << "Operation: " << (m_Operation == OperationEnum::WatershedHierarchy ? "WatershedHierarchy" : "FilterRegions")
     << std::endl;
  os << indent << "Attribute: " << AttributeName(m_Attribute) << std::endl;
  os << indent << "Threshold: " << m_Threshold << std::endl;
}

} // namespace itk
