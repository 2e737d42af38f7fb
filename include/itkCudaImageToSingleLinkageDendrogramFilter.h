/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageToSingleLinkageDendrogramFilter_h
#define itkCudaImageToSingleLinkageDendrogramFilter_h

#include "itkCudaSingleLinkageDendrogramSource.h"
#include "itkCudaSingleLinkageEnums.h"

namespace itk
{

/** \class CudaImageToSingleLinkageDendrogramFilter
 * \brief The single-linkage dendrogram of an image's pixel graph, on the GPU: Boruvka's minimum spanning tree with
 * a concurrent union-find, then PANDORA (recursive tree contraction and expansion).
 *
 * Vertices are the pixels (raster index, x fastest). Edges join face neighbours (4 in 2D, 6 in 3D) or, with
 * FullyConnected, all neighbours (8 / 26). The weight of an edge is |a - b| for scalar pixels (exact for integers of
 * up to 32 bits, in float for float, rounded to float for double) and, for vector pixels (itk::Vector, itk::RGBPixel,
 * itk::VectorImage), the L1, L2 (default) or L-infinity norm of the per-component differences in float. Edges are
 * ordered by (weight, edge index), with edge index = pixel * K + slot, the K slots being the neighbours after the
 * pixel in raster order by increasing offset (K = 2, 4, 3 or 13); the dendrogram is then unique, and the CUDA and CPU
 * backends return the same one. Its canonical form (Dendrogram::ComputeCanonicalTree) is the image's alpha-tree.
 *
 * The output is an itk::Dendrogram with the input's geometry; DendrogramToLabelImageFilter cuts it into a label
 * image. Images of up to 2^31 - 1 pixels; edge slots (pixels x K) below 2^56 for 8-bit integer pixels, 2^48 for
 * 16-bit ones, 2^33 for float, double and vector pixels, 2^32 for 32-bit integers (from 2^32 slots on the minimum
 * spanning tree numbers edges in the bits its weight codes leave).
 *
 * Reference: P. Sao, A. Prokopenko, D. Lebrun-Grandie, "PANDORA: A Parallel Dendrogram Construction Algorithm for
 * Single Linkage Clustering on GPU", ICPP 2024.
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage>
class ITK_TEMPLATE_EXPORT CudaImageToSingleLinkageDendrogramFilter : public CudaSingleLinkageDendrogramSource
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaImageToSingleLinkageDendrogramFilter);

  using Self         = CudaImageToSingleLinkageDendrogramFilter;
  using Superclass   = CudaSingleLinkageDendrogramSource;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType                         = TInputImage;
  using PixelType                              = typename InputImageType::PixelType;
  using VectorDistanceEnum                     = CudaSingleLinkageEnums::VectorDistance;
  static constexpr unsigned int ImageDimension = InputImageType::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D and 3D images");

  itkNewMacro(Self);
  chsTypeMacro(CudaImageToSingleLinkageDendrogramFilter, CudaSingleLinkageDendrogramSource);

  void
  SetInput(const InputImageType * image);
  const InputImageType *
  GetInput() const;

  /** Face connectivity (default) or full connectivity. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  /** Vector pixels: L1, L2 (default) or LInfinity. */
  itkSetEnumMacro(VectorDistance, VectorDistanceEnum);
  itkGetEnumMacro(VectorDistance, VectorDistanceEnum);

protected:
  CudaImageToSingleLinkageDendrogramFilter();
  ~CudaImageToSingleLinkageDendrogramFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override;
  void
  GenerateData() override;

private:
  bool               m_FullyConnected{ false };
  VectorDistanceEnum m_VectorDistance{ VectorDistanceEnum::L2 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaImageToSingleLinkageDendrogramFilter.hxx"
#endif

#endif
