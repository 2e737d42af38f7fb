/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWatershedFilterBase_h
#define itkCudaWatershedFilterBase_h

#include "itkImageToImageFilter.h"
#include "itkCudaSegmentationFilter.h"
#include "itkCudaWatershedEnums.h"
#include "chs/Watershed.h"

#include <type_traits>

namespace itk
{

/** \class CudaWatershedFilterBase
 * \brief The watershed's parameters, shared by CudaWatershedImageFilter and CudaWaterfallImageFilter (whose level 0
 * is that watershed).
 *
 * FullyConnected (4/8 in 2D, 6/26 in 3D), Algorithm and PlateauResolution (CudaWatershedEnums; the defaults PRUF
 * and Balanced), ReductionRate (RR: pointer jumps between global synchronisations of PRUF and PRW, 1 to 64; default
 * 6) and the plateau resolution's BlockSize (x, y, z; at most 1024 threads, z = 1 in 2D; 0 0 0, the default: 16x16 in
 * 2D, 8x8x8 in 3D). include/chs/Watershed.h states the definition.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaWatershedFilterBase
  : public CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaWatershedFilterBase);

  using Self         = CudaWatershedFilterBase;
  using Superclass   = CudaSegmentationFilter<ImageToImageFilter<TInputImage, TOutputImage>>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = TInputImage::ImageDimension;

  using InputImageType        = TInputImage;
  using OutputImageType       = TOutputImage;
  using InputPixelType        = typename TInputImage::PixelType;
  using OutputPixelType       = typename TOutputImage::PixelType;
  using AlgorithmEnum         = CudaWatershedEnums::Algorithm;
  using PlateauResolutionEnum = CudaWatershedEnums::PlateauResolution;
  using BlockSizeType         = FixedArray<unsigned int, 3>;

  chsTypeMacro(CudaWatershedFilterBase, CudaSegmentationFilter);

  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D images and 3D volumes are supported");
  static_assert(static_cast<unsigned>(TOutputImage::ImageDimension) == ImageDimension,
                "the label images have the dimension of the input");
  static_assert(std::is_arithmetic<InputPixelType>::value, "the input must be a scalar image");
  static_assert(std::is_integral<OutputPixelType>::value, "the output pixel type must be an integer type");

  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);
  itkSetEnumMacro(Algorithm, AlgorithmEnum);
  itkGetEnumMacro(Algorithm, AlgorithmEnum);
  itkSetEnumMacro(PlateauResolution, PlateauResolutionEnum);
  itkGetEnumMacro(PlateauResolution, PlateauResolutionEnum);
  /** RR: pointer jumps between global synchronisations of PRUF and PRW (1 to 64; default 6). */
  itkSetMacro(ReductionRate, unsigned int);
  itkGetConstMacro(ReductionRate, unsigned int);
  /** CUDA thread block of the plateau resolution (x, y, z; at most 1024 threads, z = 1 in 2D); 0 0 0: the default. */
  itkSetMacro(BlockSize, BlockSizeType);
  itkGetConstReferenceMacro(BlockSize, BlockSizeType);

protected:
  CudaWatershedFilterBase() { m_BlockSize.Fill(0); }
  ~CudaWatershedFilterBase() override = default;

  void
  PrintSelf(std::ostream & os, Indent indent) const override
  {
    Superclass::PrintSelf(os, indent);
    os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
    os << indent << "Algorithm: " << m_Algorithm << std::endl;
    os << indent << "PlateauResolution: " << m_PlateauResolution << std::endl;
    os << indent << "ReductionRate: " << m_ReductionRate << std::endl;
    os << indent << "BlockSize: " << m_BlockSize << std::endl;
  }

  /** The backends' watershed parameters from the properties (markLines: the watershed filter's MarkWatershedLine). */
  chs::WatershedParameters
  MakeWatershedParameters(bool markLines) const
  {
    static_assert(int(CudaWatershedEnums::Algorithm::PRW) == int(chs::WatershedAlgorithm::PRW) &&
                    int(CudaWatershedEnums::PlateauResolution::BlockAsynchronous) ==
                      int(chs::PlateauResolution::BlockAsynchronous),
                  "the filters' enumerations map one to one onto the backends'");
    chs::WatershedParameters p;
    p.fullyConnected = m_FullyConnected;
    p.algorithm      = static_cast<chs::WatershedAlgorithm>(m_Algorithm);
    p.plateaus       = static_cast<chs::PlateauResolution>(m_PlateauResolution);
    p.reductionRate  = m_ReductionRate;
    for (unsigned d = 0; d < 3; ++d)
      p.blockSize[d] = m_BlockSize[d];
    p.markLines = markLines;
    return p;
  }

private:
  bool                  m_FullyConnected{ false };
  AlgorithmEnum         m_Algorithm{ AlgorithmEnum::PRUF };
  PlateauResolutionEnum m_PlateauResolution{ PlateauResolutionEnum::Balanced };
  unsigned int          m_ReductionRate{ 6 };
  BlockSizeType         m_BlockSize;
};

} // namespace itk

#endif
