/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkAlphaTree_h
#define itkAlphaTree_h

#include "itkHostCachedContainers.h"
#include "itkImageHierarchy.h"
#include "itkObjectFactory.h"
#include "itkVectorContainer.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace itk
{

/** \class AlphaTree
 * \brief The alpha-tree (quasi-flat zone hierarchy) of an image: the tree of its alpha-connected components.
 *
 * An alpha-connected component is a set of pixels joined by paths of neighbouring pixels whose dissimilarities are
 * at most alpha (see CudaImageToAlphaTreeFilter for the neighbourhoods and dissimilarities). The nodes are the
 * distinct alpha-connected components for all alpha; a node's level is the smallest alpha at which it is one. With n
 * pixels, the leaves are the nodes 0 .. n-1 (the pixels in raster order, level 0); the internal nodes follow, ordered
 * by (level, smallest pixel index in the node), so that every parent comes after its children and the root, the
 * last node, is its own parent. The tree is canonical: every internal node has at least two children and a level
 * above its internal children's. Per node, the value range (the largest difference between two values of one
 * component over the node's pixels) is kept when the building filter computed it, for alpha-omega cuts.
 *
 * The arrays are itk::VectorContainer objects (NumPy arrays in Python through itk.array_from_vector_container).
 * Node ids are 32-bit (GetParents) for trees of up to 2^32 - 1 nodes (images of up to 2^31 - 1 pixels), and 64-bit
 * (GetWideParents) for larger trees or when the building filter was asked for them (HasWideNodeIds tells which).
 * AlphaTreeCutImageFilter cuts the tree into label images and AlphaTreeSaliencyImageFilter draws its saliency map.
 *
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT AlphaTree : public ImageHierarchy
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(AlphaTree);

  using Self         = AlphaTree;
  using Superclass   = ImageHierarchy;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  chsTypeMacro(AlphaTree, ImageHierarchy);

  using IndexContainerType     = VectorContainer<IdentifierType, uint32_t>;
  using WideIndexContainerType = VectorContainer<IdentifierType, uint64_t>;
  using LevelContainerType     = VectorContainer<IdentifierType, double>;
  using AreaContainerType      = VectorContainer<IdentifierType, IdentifierType>;

  /** Sizes the arrays for a tree of n leaves and `numberOfNodes` nodes (n to 2n - 1) for a backend to write (their
   * values are unspecified until then: the storage may come from the module's host array cache, chs/HostCache.h),
   * and drops the value ranges. The parents are 64-bit when `wideNodeIds` is set or the tree has more than
   * 2^32 - 1 nodes, else 32-bit. */
  void
  Allocate(SizeValueType numberOfLeaves, SizeValueType numberOfNodes, bool wideNodeIds = false);

  /** Throws an ExceptionObject when the arrays are not a canonical alpha-tree as described above. */
  void
  CheckInvariants() const;

  itkGetConstMacro(NumberOfLeaves, SizeValueType);
  SizeValueType
  GetNumberOfNodes() const
  {
    return m_WideNodeIds ? m_WideParents->size() : m_Parents->size();
  }
  SizeValueType
  GetRoot() const
  {
    return this->GetNumberOfNodes() == 0 ? 0 : this->GetNumberOfNodes() - 1;
  }
  /** Whether the node ids are 64-bit: the parents are then in GetWideParents, and GetParents throws. */
  bool
  HasWideNodeIds() const
  {
    return m_WideNodeIds;
  }
  /** The parents of a tree of 32-bit node ids; throws an ExceptionObject for a tree of 64-bit ones. */
  IndexContainerType *
  GetModifiableParents();
  IndexContainerType *
  GetParents()
  {
    return this->GetModifiableParents();
  }
  const IndexContainerType *
  GetParents() const;
  /** The parents of a tree of 64-bit node ids; throws an ExceptionObject for a tree of 32-bit ones. */
  WideIndexContainerType *
  GetModifiableWideParents();
  WideIndexContainerType *
  GetWideParents()
  {
    return this->GetModifiableWideParents();
  }
  const WideIndexContainerType *
  GetWideParents() const;
  itkGetModifiableObjectMacro(Levels, LevelContainerType);
  /** Per node value range; empty when the building filter did not compute it. */
  itkGetModifiableObjectMacro(ValueRanges, LevelContainerType);
  bool
  HasValueRanges() const
  {
    return !m_ValueRanges->empty() && m_ValueRanges->size() == this->GetNumberOfNodes();
  }

  /** Number of pixels of every node. */
  AreaContainerType::Pointer
  ComputeAreas() const;

  /** Throws an ExceptionObject when no cut can be made at (alpha, omega): a NaN, or a finite omega without value
   * ranges. */
  void
  CheckCutParameters(double alpha, double omega) const;
  /** A label per pixel (consecutive from 1 in raster order of each region's first pixel) of the largest nodes whose
   * level is at most alpha and, when omega is finite, whose value range is at most omega (Soille's alpha-omega
   * constrained connectivity; a pixel is its own region when even its first ancestor is too wide). With omega
   * infinite these are the alpha-connected components. Throws an ExceptionObject for a cut of 2^32 regions or more
   * (their labels do not fit). */
  IndexContainerType::Pointer
  ComputeLabels(double alpha, double omega = std::numeric_limits<double>::infinity()) const;

  void
  Initialize() override;

protected:
  AlphaTree();
  ~AlphaTree() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  template <typename TNode>
  void
  CheckInvariantsOf(const std::vector<TNode> & parent) const;

  SizeValueType m_NumberOfLeaves = 0;
  bool          m_WideNodeIds    = false;
  // Parents and levels are written by the backends: their storage is reused through the host array cache. One of the
  // two parent containers is in use, the other empty.
  HostCachedVectorContainer<IdentifierType, uint32_t>::Pointer m_Parents;
  HostCachedVectorContainer<IdentifierType, uint64_t>::Pointer m_WideParents;
  HostCachedVectorContainer<IdentifierType, double>::Pointer   m_Levels;
  LevelContainerType::Pointer                                  m_ValueRanges;
};

} // namespace itk

#endif
