/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaWaterfallImageFilter_h
#define itkCudaWaterfallImageFilter_h

#include "itkCudaWatershedFilterBase.h"

#include <vector>

namespace itk
{

/** \class CudaWaterfallImageFilter
 * \brief The waterfall hierarchy on the GPU: the watershed (level 0), then coarser and coarser partitions, each
 * region of a level a union of regions of the level before, down to one region.
 *
 * Level k + 1 joins every region of level k to the neighbouring regions across its lowest pass (the smallest
 * max(I(p), I(q)) over neighbouring pixels p inside and q outside the region): where the region, raised to its
 * lowest pass as in Yeghiazaryan et al.'s image reconstruction, overflows. Labels of every level run 1, 2, ... in
 * raster order of each region's first pixel.
 *
 * Output k (GetLevel(k), k < GetNumberOfComputedLevels()) is the label image of level k; level 0 is the watershed of
 * CudaWatershedImageFilter with the same parameters (without lines). NumberOfLevels limits the levels computed (0,
 * the default: until one region is left). GetRegionCounts() gives the regions of each level, and
 * GetParentLabels(k)[r - 1] the label at level k + 1 of region r of level k, so that the hierarchy can be walked
 * without recomputing it. The CUDA backend and the CPU reference give the same levels.
 *
 * With ProduceLevelImages off, an update keeps the hierarchy as level 0's label image (output 0) and the parent
 * labels of every level, and moves only those to the host (one label image instead of one per level: 67 MB instead
 * of 738 MB for the 11 levels of a 4096^2 image with 32-bit labels); ComputeLevelImage(k) then makes the label image
 * of any level k, on the host, from them. With it on (the default), every level is an output as described above.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage, typename TOutputImage>
class ITK_TEMPLATE_EXPORT CudaWaterfallImageFilter : public CudaWatershedFilterBase<TInputImage, TOutputImage>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaWaterfallImageFilter);

  using Self         = CudaWaterfallImageFilter;
  using Superclass   = CudaWatershedFilterBase<TInputImage, TOutputImage>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  static constexpr unsigned int ImageDimension = Superclass::ImageDimension;

  using InputImageType        = TInputImage;
  using OutputImageType       = TOutputImage;
  using InputPixelType        = typename TInputImage::PixelType;
  using OutputPixelType       = typename TOutputImage::PixelType;
  using BackendEnum           = typename Superclass::BackendEnum;
  using AlgorithmEnum         = typename Superclass::AlgorithmEnum;
  using PlateauResolutionEnum = typename Superclass::PlateauResolutionEnum;
  using BlockSizeType         = typename Superclass::BlockSizeType;
  using CountArrayType        = std::vector<SizeValueType>;
  using LabelArrayType        = std::vector<SizeValueType>;

  itkNewMacro(Self);
  chsTypeMacro(CudaWaterfallImageFilter, ImageToImageFilter);

  /** Levels to compute, the watershed included; 0 (default): until one region is left. */
  itkSetMacro(NumberOfLevels, unsigned int);
  itkGetConstMacro(NumberOfLevels, unsigned int);

  /** On (default): every computed level is an output image. Off: only level 0 is; the other levels are kept as
   * parent labels (GetParentLabels) and made on request by ComputeLevelImage. */
  itkSetMacro(ProduceLevelImages, bool);
  itkGetConstMacro(ProduceLevelImages, bool);
  itkBooleanMacro(ProduceLevelImages);

  /** Levels of the last update (outputs 0 .. this - 1 when ProduceLevelImages is on). */
  unsigned int
  GetNumberOfComputedLevels() const
  {
    return static_cast<unsigned int>(m_RegionCounts.size());
  }
  /** The label image of a level of the last update (level 0 only when ProduceLevelImages was off). */
  OutputImageType *
  GetLevel(unsigned int level);
  /** A new label image of a level of the last update, made from level 0 (output 0) and the parent labels, whether or
   * not ProduceLevelImages was on: equal to the level's output image. */
  typename OutputImageType::Pointer
  ComputeLevelImage(unsigned int level) const;
  /** Regions of each level of the last update. */
  const CountArrayType &
  GetRegionCounts() const
  {
    return m_RegionCounts;
  }
  SizeValueType
  GetRegionCount(unsigned int level) const;
  /** GetParentLabels(k)[r - 1]: the label at level k + 1 of region r of level k (k below the last level). */
  const LabelArrayType &
  GetParentLabels(unsigned int level) const;
  SizeValueType
  GetParentLabel(unsigned int level, SizeValueType label) const;

  /** Kernel time of the last CUDA update: the watershed, and all the levels after it, in milliseconds. */
  itkGetConstMacro(WatershedMilliseconds, double);
  itkGetConstMacro(LevelsMilliseconds, double);
  /** True when the last CUDA update ran the levels after level 0 on the region graph of level 0 rather than on the
   * voxels (include/chs/Watershed.h, WaterfallResult; the levels are the same either way). */
  itkGetConstMacro(LevelsOnRegionGraph, bool);

protected:
  CudaWaterfallImageFilter()           = default;
  ~CudaWaterfallImageFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

  void
  GenerateData() override;

private:
  unsigned int                m_NumberOfLevels{ 0 };
  bool                        m_ProduceLevelImages{ true };
  bool                        m_LevelImagesProduced{ true }; // ProduceLevelImages at the last update
  CountArrayType              m_RegionCounts;
  std::vector<LabelArrayType> m_ParentLabels;
  double                      m_WatershedMilliseconds{ 0.0 };
  double                      m_LevelsMilliseconds{ 0.0 };
  bool                        m_LevelsOnRegionGraph{ false };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaWaterfallImageFilter.hxx"
#endif

#endif
