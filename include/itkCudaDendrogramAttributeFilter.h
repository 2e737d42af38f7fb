/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaDendrogramAttributeFilter_h
#define itkCudaDendrogramAttributeFilter_h

#include "itkAlphaTree.h"
#include "itkCudaSingleLinkageDendrogramSource.h"
#include "chs/AttributeHierarchy.h"

namespace itk
{

/** \class CudaDendrogramAttributeFilter
 * \brief Hierarchies by attribute of a single-linkage dendrogram: the watershed hierarchy by area, volume or dynamics
 * (Najman, Cousty and Perret's algorithm, as Higra's watershed_hierarchy_by_area / _volume / _dynamics), or the
 * dendrogram with the frontiers of regions whose area, volume or height is below a threshold removed (Higra's
 * filter_small_nodes_from_tree and filter_non_relevant_node_from_tree). The definitions and tie rules are in
 * include/chs/AttributeHierarchy.h and docs/single-linkage.md.
 *
 * Input: an itk::Dendrogram (CudaImageToSingleLinkageDendrogramFilter's or CudaGraphToSingleLinkageDendrogramFilter's
 * output). Output: an itk::Dendrogram over the same minimum spanning tree, with the input's image geometry; cut it
 * with DendrogramToLabelImageFilter (a watershed hierarchy by area cut at t: the watershed regions whose minima
 * survive an area filter at t).
 *
 * Or, with SetAlphaTreeInput(), an itk::AlphaTree (CudaImageToAlphaTreeFilter's output; set FullyConnected as it
 * was built): FilterRegions then filters it as Higra filters a tree that is not binary, through the dendrogram of the
 * image graph weighted by the tree's saliency (the level at which each edge's pixels merge). Both inputs may not be
 * set at once.
 *
 * A pipeline on the GPU:
 * \code
 *   auto tree = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
 *   tree->SetInput(gradientOrImage);
 *   auto hierarchy = itk::CudaDendrogramAttributeFilter::New();
 *   hierarchy->SetInput(tree->GetOutput());
 *   hierarchy->SetAttribute(itk::CudaDendrogramAttributeFilter::AttributeEnum::Area);
 *   auto cut = itk::DendrogramToLabelImageFilter<LabelImageType>::New();
 *   cut->SetInput(hierarchy->GetOutput());
 *   cut->SetDistance(500); // the basins whose minima survive an area filter at 500
 * \endcode
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT CudaDendrogramAttributeFilter : public CudaSingleLinkageDendrogramSource
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaDendrogramAttributeFilter);

  using Self         = CudaDendrogramAttributeFilter;
  using Superclass   = CudaSingleLinkageDendrogramSource;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  chsTypeMacro(CudaDendrogramAttributeFilter, CudaSingleLinkageDendrogramSource);

  /** WatershedHierarchy (default): by Area, Volume or Dynamics. FilterRegions: by Area, Volume or Height, at
   * Threshold. */
  enum class OperationEnum : uint8_t
  {
    WatershedHierarchy,
    FilterRegions
  };
  using AttributeEnum = chs::RegionAttribute;

  void
  SetInput(const Dendrogram * input);
  const Dendrogram *
  GetInput() const;
  /** An alpha-tree to filter instead of a dendrogram (FilterRegions only); FullyConnected: its image graph's
   * connectivity (false: 4 / 6 neighbours, true: 8 / 26). */
  void
  SetAlphaTreeInput(const AlphaTree * tree);
  const AlphaTree *
  GetAlphaTreeInput() const;
  itkSetMacro(FullyConnected, bool);
  itkGetConstMacro(FullyConnected, bool);
  itkBooleanMacro(FullyConnected);

  itkSetMacro(Operation, OperationEnum);
  itkGetConstMacro(Operation, OperationEnum);
  itkSetMacro(Attribute, AttributeEnum);
  itkGetConstMacro(Attribute, AttributeEnum);
  itkSetMacro(Threshold, double);
  itkGetConstMacro(Threshold, double);

protected:
  CudaDendrogramAttributeFilter();
  ~CudaDendrogramAttributeFilter() override = default;
  void
  GenerateOutputInformation() override;
  void
  GenerateData() override;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  OperationEnum m_Operation{ OperationEnum::WatershedHierarchy };
  AttributeEnum m_Attribute{ AttributeEnum::Area };
  double        m_Threshold{ 0.0 };
  bool          m_FullyConnected{ false };

  /** The alpha-tree's filter: its edge saliency, the dendrogram of the saliency-weighted image graph, its filter. */
  void
  GenerateFromAlphaTree(const AlphaTree * tree);
};

} // namespace itk

#endif
