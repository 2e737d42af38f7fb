/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaConnectedComponentImageFilter_hxx
#define itkCudaConnectedComponentImageFilter_hxx

#include "itkCudaConnectedComponentImageFilter.h"
#include "itkCudaPixelTypeTraits.h"
#include "itkCudaSegmentationRun.h"
#include "chs/ConnectedComponents.h"

#include "itkImageRegionConstIterator.h"

namespace itk
{

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::CudaConnectedComponentImageFilter()
{
  this->AddOptionalInputName("MaskImage", 1);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GenerateData()
{
  using PixelCanonical = typename CudaCanonicalPixel<InputPixelType>::Type;
  using LabelCanonical = typename CudaCanonicalLabel<OutputPixelType>::Type;

  m_ObjectCount = 0;
  m_VoxelCounts.clear();
  m_BoundingBoxes.clear();

  const InputImageType * input  = this->GetInput();
  const MaskImageType *  mask   = this->GetMaskImage();
  const RegionType       region = input->GetLargestPossibleRegion();
  CheckWholeImage(input, "input", this);
  if (mask && (mask->GetLargestPossibleRegion() != region || mask->GetBufferedRegion() != region))
  {
    itkExceptionMacro(<< "The mask image must cover the input's largest possible region " << region
                      << "; its largest possible region is " << mask->GetLargestPossibleRegion() << '.');
  }

  const chs::Grid grid = CudaGridOf(region);
  const uint64_t  n    = grid.NumberOfVoxels();

  std::vector<uint8_t> maskFlags;
  if (mask)
  {
    maskFlags.resize(n);
    const MaskPixelType * m = mask->GetBufferPointer();
    for (uint64_t i = 0; i < n; ++i)
    {
      maskFlags[i] = m[i] != NumericTraits<MaskPixelType>::ZeroValue();
    }
  }

  chs::ConnectedComponentParameters parameters;
  parameters.mode = m_FlatZones ? chs::ConnectedComponentMode::FlatZones : chs::ConnectedComponentMode::Binary;
  parameters.fullyConnected    = m_FullyConnected;
  parameters.backgroundLabel   = static_cast<int64_t>(m_BackgroundValue);
  parameters.maximumLabel      = static_cast<uint64_t>(NumericTraits<OutputPixelType>::max());
  parameters.computeStatistics = m_ComputeStatistics;
  parameters.delta             = m_DistanceThreshold;
  parameters.periodic          = m_PeriodicBoundary;
  if (!(m_DistanceThreshold >= 0.0))
  {
    itkExceptionMacro(<< "DistanceThreshold must be >= 0, not " << m_DistanceThreshold << '.');
  }

  const BackendEnum backend = this->ResolveBackend();

  this->AllocateCachedOutputs(backend == BackendEnum::CUDA);
  OutputImageType * output      = this->GetOutput();
  const auto *      in          = reinterpret_cast<const PixelCanonical *>(input->GetBufferPointer());
  auto *            out         = reinterpret_cast<LabelCanonical *>(output->GetBufferPointer());
  const uint8_t *   maskPointer = mask ? maskFlags.data() : nullptr;

  chs::ConnectedComponentStatistics statistics;
  uint64_t                          count = 0;
  this->RunBackend(
    backend,
    [&](const chs::ExecutionContext & context, chs::RunInfo & run)
    { count = chs::LabelConnectedComponents(in, maskPointer, out, grid, parameters, &statistics, context, &run); },
    { output });
  m_ObjectCount = count;

  if (m_ComputeStatistics)
  {
    m_VoxelCounts.assign(statistics.voxelCount.begin(), statistics.voxelCount.end());
    m_BoundingBoxes.resize(count);
    m_Centroids.resize(count);
    for (uint64_t k = 0; k < count; ++k)
    {
      IndexType start;
      SizeType  size;
      for (unsigned d = 0; d < ImageDimension; ++d)
      {
        start[d] = region.GetIndex(d) + static_cast<IndexValueType>(statistics.minimum[3 * k + d]);
        size[d]  = statistics.maximum[3 * k + d] - statistics.minimum[3 * k + d] + 1;
      }
      m_BoundingBoxes[k] = RegionType(start, size);
      for (unsigned d = 0; d < ImageDimension; ++d)
      {
        m_Centroids[k][d] =
          static_cast<double>(region.GetIndex(d)) +
          static_cast<double>(statistics.coordinateSum[3 * k + d]) / static_cast<double>(statistics.voxelCount[k]);
      }
    }
  }
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
SizeValueType
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::ObjectIndex(OutputPixelType label) const
{
  if (!m_ComputeStatistics || m_VoxelCounts.size() != m_ObjectCount)
  {
    itkExceptionMacro(<< "No statistics: turn ComputeStatistics on and update the filter first.");
  }
  const auto    l  = static_cast<int64_t>(label);
  const auto    bg = static_cast<int64_t>(m_BackgroundValue);
  const int64_t k  = (bg >= 0 && l > bg) ? l - 1 : l;
  if (label == m_BackgroundValue || k < 0 || static_cast<SizeValueType>(k) >= m_ObjectCount)
  {
    itkExceptionMacro(<< "Label " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(label)
                      << " is not an object label of the last update (" << m_ObjectCount << " objects).");
  }
  return static_cast<SizeValueType>(k);
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
SizeValueType
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GetVoxelCount(OutputPixelType label) const
{
  return m_VoxelCounts[this->ObjectIndex(label)];
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
auto
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GetBoundingBox(OutputPixelType label) const
  -> RegionType
{
  return m_BoundingBoxes[this->ObjectIndex(label)];
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
auto
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::GetCentroid(OutputPixelType label) const
  -> ContinuousIndex<double, ImageDimension>
{
  return m_Centroids[this->ObjectIndex(label)];
}

template <typename TInputImage, typename TOutputImage, typename TMaskImage>
void
CudaConnectedComponentImageFilter<TInputImage, TOutputImage, TMaskImage>::PrintSelf(std::ostream & os,
                                                                                    Indent         indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
  os << indent << "FlatZones: " << m_FlatZones << std::endl;
  os << indent
     << "BackgroundValue: " << static_cast<typename NumericTraits<OutputPixelType>::PrintType>(m_BackgroundValue)
     << std::endl;
  os << indent << "ComputeStatistics: " << m_ComputeStatistics << std::endl;
  os << indent << "DistanceThreshold: " << m_DistanceThreshold << std::endl;
  os << indent << "PeriodicBoundary: " << m_PeriodicBoundary << std::endl;
  os << indent << "ObjectCount: " << m_ObjectCount << std::endl;
}

} // namespace itk

#endif
