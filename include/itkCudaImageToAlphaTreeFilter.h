/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaImageToAlphaTreeFilter_h
#define itkCudaImageToAlphaTreeFilter_h

#include "itkAlphaTree.h"
#include "itkCudaAlphaTreeEnums.h"
#include "itkCudaSegmentationFilter.h"
#include "itkCudaSingleLinkageEnums.h"
#include "itkProcessObject.h"

namespace itk
{

/** \class CudaImageToAlphaTreeFilter
 * \brief The alpha-tree (quasi-flat zone hierarchy) of an image, on the GPU: partial trees per tile in shared
 * memory, merges across the tile borders with a lock-free CONNECT, then canonicalisation.
 *
 * Neighbours are the face neighbours (4 in 2D, 6 in 3D) or, with FullyConnected, all neighbours (8 / 26). The
 * dissimilarity of two neighbours is |a - b| for scalar pixels (exact for integers, in float for float) and, for
 * vector pixels (itk::Vector, itk::RGBPixel, itk::VectorImage), the L1, L2 (default) or L-infinity norm of the
 * per-component differences in float. The output is an itk::AlphaTree with the input's geometry (see there for the
 * node numbering); the CUDA and CPU backends, both algorithms and every run give the same tree.
 *
 * Pixel components: 8-bit and 16-bit integers and float. Up to 2^31 - 1 pixels (32-bit node ids); 8- and 16-bit
 * scalar images take that many with every connectivity (the level-synchronous construction, which Auto chooses where
 * the others cannot number the image), float and vector images edge slots below 2^33 (edge slots: pixels x 2 in 2D
 * with 4-connectivity, x 4 with 8, x 3 and x 13 in 3D; the spanning-tree construction, which Auto chooses for them).
 *
 * Reference: E. Carlinet, Q. Kaci, N. Blin, "An alpha-tree algorithm for massively parallel architectures".
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TInputImage>
class ITK_TEMPLATE_EXPORT CudaImageToAlphaTreeFilter : public CudaSegmentationFilter<ProcessObject>
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaImageToAlphaTreeFilter);

  using Self         = CudaImageToAlphaTreeFilter;
  using Superclass   = CudaSegmentationFilter<ProcessObject>;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  using InputImageType                         = TInputImage;
  using PixelType                              = typename InputImageType::PixelType;
  using BackendEnum                            = typename Superclass::BackendEnum;
  using VectorDistanceEnum                     = CudaSingleLinkageEnums::VectorDistance;
  using AlgorithmEnum                          = CudaAlphaTreeEnums::Algorithm;
  static constexpr unsigned int ImageDimension = InputImageType::ImageDimension;
  static_assert(ImageDimension == 2 || ImageDimension == 3, "2D and 3D images");

  itkNewMacro(Self);
  chsTypeMacro(CudaImageToAlphaTreeFilter, ProcessObject);

  void
  SetInput(const InputImageType * image);
  const InputImageType *
  GetInput() const;
  AlphaTree *
  GetOutput();

  /** Face connectivity (default) or full connectivity. */
  itkSetMacro(FullyConnected, bool);
  itkGetConstReferenceMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);
  /** Vector pixels: L1, L2 (default) or LInfinity. */
  itkSetEnumMacro(VectorDistance, VectorDistanceEnum);
  itkGetEnumMacro(VectorDistance, VectorDistanceEnum);
  /** CUDA construction: Auto (default), InsertAllEdges, SkipRedundantEdges, SpanningTree or LevelSynchronous (see
   * CudaAlphaTreeEnums); the tree is the same. */
  itkSetEnumMacro(Algorithm, AlgorithmEnum);
  itkGetEnumMacro(Algorithm, AlgorithmEnum);
  /** Whether the output keeps each node's value range (default on; needed by alpha-omega cuts). Computed on the
   * host after the tree, in one pass over the nodes. */
  itkSetMacro(ComputeValueRanges, bool);
  itkGetConstMacro(ComputeValueRanges, bool);
  itkBooleanMacro(ComputeValueRanges);
  /** Whether the output's node ids are 64-bit (AlphaTree::GetWideParents) whatever its size (default off: 32-bit ids
   * up to 2^32 - 1 nodes, 64-bit beyond). Both backends give the same ids either way. */
  itkSetMacro(WideNodeIds, bool);
  itkGetConstMacro(WideNodeIds, bool);
  itkBooleanMacro(WideNodeIds);

  /** CUDA, last update: kernel milliseconds (construction plus canonicalisation), the two parts, the edges inserted
   * before canonicalisation, and the peak device memory in bytes. */
  itkGetConstMacro(ConstructionMilliseconds, double);
  itkGetConstMacro(CanonicalisationMilliseconds, double);
  itkGetConstMacro(NumberOfInsertedEdges, SizeValueType);

  using Superclass::MakeOutput;
  DataObject::Pointer
  MakeOutput(DataObjectPointerArraySizeType idx) override;

protected:
  CudaImageToAlphaTreeFilter();
  ~CudaImageToAlphaTreeFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override;
  void
  GenerateData() override;

private:
  bool               m_FullyConnected{ false };
  VectorDistanceEnum m_VectorDistance{ VectorDistanceEnum::L2 };
  AlgorithmEnum      m_Algorithm{ AlgorithmEnum::Auto };
  bool               m_ComputeValueRanges{ true };
  bool               m_WideNodeIds{ false };
  double             m_ConstructionMilliseconds{ 0.0 };
  double             m_CanonicalisationMilliseconds{ 0.0 };
  SizeValueType      m_NumberOfInsertedEdges{ 0 };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaImageToAlphaTreeFilter.hxx"
#endif

#endif
