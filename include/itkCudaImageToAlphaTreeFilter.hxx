/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageToAlphaTreeFilter_hxx
#define itkCudaImageToAlphaTreeFilter_hxx

#include "itkCudaImageToAlphaTreeFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"
#include "itkImageHierarchyGeometry.h"
#include "itkNumericTraits.h"
#include "chs/AlphaTree.h"

#include <algorithm>
#include <vector>

namespace itk
{

template <typename TInputImage>
CudaImageToAlphaTreeFilter<TInputImage>::CudaImageToAlphaTreeFilter()
{
  this->SetNumberOfRequiredInputs(1);
  this->SetNumberOfRequiredOutputs(1);
  this->SetNthOutput(0, this->MakeOutput(0));
}

template <typename TInputImage>
DataObject::Pointer
CudaImageToAlphaTreeFilter<TInputImage>::MakeOutput(DataObjectPointerArraySizeType)
{
  return AlphaTree::New().GetPointer();
}

template <typename TInputImage>
void
CudaImageToAlphaTreeFilter<TInputImage>::SetInput(const InputImageType * image)
{
  this->ProcessObject::SetNthInput(0, const_cast<InputImageType *>(image));
}

template <typename TInputImage>
auto
CudaImageToAlphaTreeFilter<TInputImage>::GetInput() const -> const InputImageType *
{
  return itkDynamicCastInDebugMode<const InputImageType *>(this->ProcessObject::GetInput(0));
}

template <typename TInputImage>
AlphaTree *
CudaImageToAlphaTreeFilter<TInputImage>::GetOutput()
{
  return itkDynamicCastInDebugMode<AlphaTree *>(this->ProcessObject::GetOutput(0));
}

template <typename TInputImage>
void
CudaImageToAlphaTreeFilter<TInputImage>::GenerateOutputInformation()
{
  if (this->GetInput())
  {
    CopyImageGeometry(this->GetInput(), this->GetOutput());
  }
}

template <typename TInputImage>
void
CudaImageToAlphaTreeFilter<TInputImage>::GenerateData()
{
  using ComponentType = typename NumericTraits<PixelType>::ValueType;
  using Canonical     = typename CudaCanonicalPixel<ComponentType>::Type;
  static_assert(std::is_same<Canonical, uint8_t>::value || std::is_same<Canonical, uint16_t>::value ||
                  std::is_same<Canonical, int16_t>::value || std::is_same<Canonical, float>::value,
                "pixel components are unsigned 8-bit, 16-bit integers, or float");

  m_ConstructionMilliseconds = m_CanonicalisationMilliseconds = 0.0;
  m_NumberOfInsertedEdges                                     = 0;
  const InputImageType * input                                = this->GetInput();
  CheckWholeImage(input, "input", this);
  AlphaTree * output = this->GetOutput();
  CopyImageGeometry(input, output);

  chs::Grid grid;
  grid.dimension = ImageDimension;
  for (unsigned d = 0; d < ImageDimension; ++d)
    grid.size[d] = input->GetLargestPossibleRegion().GetSize(d);
  chs::AlphaTreeParameters parameters;
  parameters.graph.fullyConnected = m_FullyConnected;
  parameters.graph.components     = input->GetNumberOfComponentsPerPixel();
  parameters.graph.distance       = static_cast<chs::VectorDistance>(m_VectorDistance);
  static_assert(int(AlgorithmEnum::Auto) == int(chs::AlphaTreeAlgorithm::Auto) &&
                  int(AlgorithmEnum::InsertAllEdges) == int(chs::AlphaTreeAlgorithm::InsertAllEdges) &&
                  int(AlgorithmEnum::SpanningTree) == int(chs::AlphaTreeAlgorithm::SpanningTree) &&
                  int(AlgorithmEnum::LevelSynchronous) == int(chs::AlphaTreeAlgorithm::LevelSynchronous),
                "the filter's algorithms map one to one onto the backend's");
  parameters.algorithm           = static_cast<chs::AlphaTreeAlgorithm>(m_Algorithm);
  const SizeValueType n          = grid.NumberOfVoxels();
  const unsigned      components = parameters.graph.components;

  const auto *                  pixels  = reinterpret_cast<const Canonical *>(input->GetBufferPointer());
  const BackendEnum             backend = this->ResolveBackend();
  chs::AlphaTreeResult          result;
  const chs::AlphaTreeAllocator allocate = [&](uint64_t nodes)
  {
    output->Allocate(n, nodes, m_WideNodeIds);
    chs::AlphaTreeArrays arrays;
    if (output->HasWideNodeIds())
      arrays.parent64 = output->GetModifiableWideParents()->CastToSTLContainer().data();
    else
      arrays.parent = output->GetModifiableParents()->CastToSTLContainer().data();
    arrays.level = output->GetLevels()->CastToSTLContainer().data();
    return arrays;
  };
  this->RunBackend(backend,
                   [&](const chs::ExecutionContext & context, chs::RunInfo & run)
                   { result = chs::ImageAlphaTree(pixels, grid, parameters, allocate, context, &run); },
                   { output });
  try
  {
    // The CUDA backend checks the tree on the device; the CPU reference's is checked here.
    if (backend == BackendEnum::CPU)
      output->CheckInvariants();
    if (m_ComputeValueRanges)
    {
      const SizeValueType nodes = output->GetNumberOfNodes();
      auto &              range = output->GetValueRanges()->CastToSTLContainer();
      range.resize(nodes);
      if (output->HasWideNodeIds())
        chs::AlphaTreeValueRanges(
          output->GetWideParents()->CastToSTLConstContainer().data(), nodes, pixels, n, components, range.data());
      else
        chs::AlphaTreeValueRanges(
          output->GetParents()->CastToSTLConstContainer().data(), nodes, pixels, n, components, range.data());
    }
  }
  catch (...)
  {
    output->Initialize();
    throw;
  }
  m_ConstructionMilliseconds     = result.buildMilliseconds;
  m_CanonicalisationMilliseconds = result.canonicaliseMilliseconds;
  m_NumberOfInsertedEdges        = result.insertedEdges;
}

template <typename TInputImage>
void
CudaImageToAlphaTreeFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "VectorDistance: " << m_VectorDistance << std::endl;
  os << indent << "Algorithm: " << m_Algorithm << std::endl;
  os << indent << "ComputeValueRanges: " << m_ComputeValueRanges << std::endl;
}

} // namespace itk

#endif
