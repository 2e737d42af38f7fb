/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageToSingleLinkageDendrogramFilter_hxx
#define itkCudaImageToSingleLinkageDendrogramFilter_hxx

#include "itkImageHierarchyGeometry.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkNumericTraits.h"

namespace itk
{

template <typename TInputImage>
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::CudaImageToSingleLinkageDendrogramFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

template <typename TInputImage>
void
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::SetInput(const InputImageType * image)
{
  this->ProcessObject::SetNthInput(0, const_cast<InputImageType *>(image));
}

template <typename TInputImage>
auto
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::GetInput() const -> const InputImageType *
{
  return itkDynamicCastInDebugMode<const InputImageType *>(this->ProcessObject::GetInput(0));
}

template <typename TInputImage>
void
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::GenerateOutputInformation()
{
  if (this->GetInput())
  {
    CopyImageGeometry(this->GetInput(), this->GetOutput());
  }
}

template <typename TInputImage>
void
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::GenerateData()
{
  using ComponentType = typename NumericTraits<PixelType>::ValueType;
  using Canonical     = typename CudaCanonicalPixel<ComponentType>::Type;
  static_assert(sizeof(Canonical) <= 4 || std::is_floating_point<Canonical>::value,
                "pixel components are integers of up to 32 bits, float or double");

  const InputImageType * input = this->GetInput();
  CheckWholeImage(input, "input", this);
  Dendrogram * output = this->GetOutput();
  CopyImageGeometry(input, output);

  chs::Grid grid;
  grid.dimension = ImageDimension;
  for (unsigned d = 0; d < ImageDimension; ++d)
    grid.size[d] = input->GetLargestPossibleRegion().GetSize(d);
  chs::ImageGraphParameters parameters;
  parameters.fullyConnected = m_FullyConnected;
  parameters.components     = input->GetNumberOfComponentsPerPixel();
  static_assert(int(VectorDistanceEnum::L1) == int(chs::VectorDistance::L1) &&
                  int(VectorDistanceEnum::LInfinity) == int(chs::VectorDistance::LInfinity),
                "the filter's distances map one to one onto the backends'");
  parameters.distance = static_cast<chs::VectorDistance>(m_VectorDistance);

  const auto * pixels = reinterpret_cast<const Canonical *>(input->GetBufferPointer());
  this->RunDendrogram(grid.NumberOfVoxels(), ImageRun<Canonical>{ pixels, grid, parameters });
}

template <typename TInputImage>
void
CudaImageToSingleLinkageDendrogramFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "VectorDistance: " << m_VectorDistance << std::endl;
}

} // namespace itk

#endif
