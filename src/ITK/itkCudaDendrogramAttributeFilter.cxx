/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkCudaDendrogramAttributeFilter.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
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

/** Ids in the width of a run: 32-bit ones as they are (a 32-bit run never has a 64-bit input: the output keeps the
 * input's width); for a 64-bit run the 64-bit ones as they are (`wide`), or the 32-bit ones widened into `widened`. */
const uint32_t *
InWidth(const std::vector<uint32_t> * narrow, const std::vector<uint64_t> *, std::vector<uint32_t> &)
{
  return narrow->data();
}
const uint64_t *
InWidth(const std::vector<uint32_t> * narrow, const std::vector<uint64_t> * wide, std::vector<uint64_t> & widened)
{
  if (wide)
    return wide->data();
  widened.assign(narrow->begin(), narrow->end());
  return widened.data();
}

/** A dendrogram's node and vertex ids in the width TNode of a run. */
template <typename TNode>
struct InputIds
{
  std::vector<TNode> widened[3];
  const TNode *      parent, *u, *v;
  explicit InputIds(const Dendrogram * d)
  {
    const bool wide = d->HasWideNodeIds();
    parent          = wide ? InWidth(nullptr, &d->GetWideParents()->CastToSTLConstContainer(), widened[0])
                           : InWidth(&d->GetParents()->CastToSTLConstContainer(), nullptr, widened[0]);
    u               = wide ? InWidth(nullptr, &d->GetWideEdgeU()->CastToSTLConstContainer(), widened[1])
                           : InWidth(&d->GetEdgeU()->CastToSTLConstContainer(), nullptr, widened[1]);
    v               = wide ? InWidth(nullptr, &d->GetWideEdgeV()->CastToSTLConstContainer(), widened[2])
                           : InWidth(&d->GetEdgeV()->CastToSTLConstContainer(), nullptr, widened[2]);
  }
};

/** RunDendrogram's functor for a dendrogram input: its hierarchy by attribute in either width. */
struct Reweight
{
  const Dendrogram *   input;
  bool                 watershed;
  chs::RegionAttribute attribute;
  double               threshold;

  template <typename TNode>
  chs::DendrogramInputT<TNode>
  In(const InputIds<TNode> & ids) const
  {
    return { input->GetNumberOfVertices(),
             ids.parent,
             input->GetWeights()->CastToSTLConstContainer().data(),
             input->GetEdgeIds()->CastToSTLConstContainer().data(),
             ids.u,
             ids.v };
  }
  template <typename TNode>
  chs::SingleLinkageResult
  operator()(const chs::DendrogramArraysT<TNode> & arrays,
             const chs::ExecutionContext &         context,
             chs::RunInfo &                        info) const
  {
    const InputIds<TNode>              ids(input);
    const chs::DendrogramInputT<TNode> in = In<TNode>(ids);
    return watershed ? chs::WatershedHierarchy(in, attribute, arrays, context, &info)
                     : chs::FilterRegions(in, attribute, threshold, arrays, context, &info);
  }
};

/** RunDendrogram's functor for an alpha-tree input: chs::AlphaTreeFilterRegions (the edge saliency of its image
 * graph, the dendrogram of the saliency-weighted graph, the filter of that dendrogram, in one call), in either width.
 */
struct AlphaTreeRun
{
  const AlphaTree *    tree;
  chs::Grid            grid;
  bool                 fullyConnected;
  chs::RegionAttribute attribute;
  double               threshold;

  template <typename TNode>
  chs::SingleLinkageResult
  operator()(const chs::DendrogramArraysT<TNode> & arrays,
             const chs::ExecutionContext &         context,
             chs::RunInfo &                        info) const
  {
    std::vector<TNode> widened;
    const TNode *      parent = tree->HasWideNodeIds()
                                  ? InWidth(nullptr, &tree->GetWideParents()->CastToSTLConstContainer(), widened)
                                  : InWidth(&tree->GetParents()->CastToSTLConstContainer(), nullptr, widened);
    return chs::AlphaTreeFilterRegions(parent,
                                       tree->GetLevels()->CastToSTLConstContainer().data(),
                                       uint64_t(tree->GetNumberOfNodes()),
                                       grid,
                                       fullyConnected,
                                       attribute,
                                       threshold,
                                       arrays,
                                       context,
                                       &info);
  }
};
} // namespace

CudaDendrogramAttributeFilter::CudaDendrogramAttributeFilter()
{
  this->SetNumberOfRequiredInputs(0); // a dendrogram or an alpha-tree, checked in GenerateData
}

void
CudaDendrogramAttributeFilter::SetAlphaTreeInput(const AlphaTree * tree)
{
  this->ProcessObject::SetNthInput(1, const_cast<AlphaTree *>(tree));
}

const AlphaTree *
CudaDendrogramAttributeFilter::GetAlphaTreeInput() const
{
  return itkDynamicCastInDebugMode<const AlphaTree *>(this->ProcessObject::GetInput(1));
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
  const ImageHierarchy * input = this->GetInput();
  if (!input)
    input = this->GetAlphaTreeInput();
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
  const AlphaTree *  alphaTree = this->GetAlphaTreeInput();
  Dendrogram *       output    = this->GetOutput();
  const bool         watershed = m_Operation == OperationEnum::WatershedHierarchy;
  if (input && alphaTree)
  {
    output->Initialize();
    itkExceptionMacro(<< "Both a dendrogram and an alpha-tree are set: give one input.");
  }
  if (alphaTree && watershed)
  {
    output->Initialize();
    itkExceptionMacro(<< "An alpha-tree input is filtered (FilterRegions); its watershed hierarchy is that of the "
                         "image's dendrogram (CudaImageToSingleLinkageDendrogramFilter).");
  }
  if (!alphaTree && (!input || input->GetNumberOfVertices() == 0))
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
  if (alphaTree)
  {
    this->GenerateFromAlphaTree(alphaTree);
    return;
  }

  // The output keeps the input's id width (or takes 64-bit ids when WideNodeIds asks).
  this->RunDendrogram(
    input->GetNumberOfVertices(), Reweight{ input, watershed, m_Attribute, m_Threshold }, input->HasWideNodeIds());
}

void
CudaDendrogramAttributeFilter::GenerateFromAlphaTree(const AlphaTree * tree)
{
  Dendrogram *   output = this->GetOutput();
  const unsigned d      = tree->GetImageDimension();
  chs::Grid      grid;
  grid.dimension = std::max(d, 2u);
  for (unsigned i = 0; i < d; ++i)
    grid.size[i] = tree->GetImageSize(i);
  const SizeValueType n = tree->GetNumberOfLeaves();
  if (d == 0 || n == 0 || grid.NumberOfVoxels() != n)
  {
    output->Initialize();
    itkExceptionMacro(<< "The alpha-tree has no image geometry for its " << n << " leaves.");
  }
  try
  {
    chs::ImageGraphEdges(grid, m_FullyConnected, nullptr, nullptr, nullptr); // its checks of the image graph's size
  }
  catch (const std::invalid_argument & e)
  {
    output->Initialize();
    itkExceptionMacro(<< "The alpha-tree's image graph: " << e.what());
  }
  const AlphaTreeRun run{ tree, grid, m_FullyConnected, m_Attribute, m_Threshold };
  // The dendrogram keeps the alpha-tree's id width (or takes 64-bit ids when WideNodeIds asks).
  this->RunDendrogram(n, run, tree->HasWideNodeIds());
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
  os << indent << "FullyConnected: " << m_FullyConnected << std::endl;
}

} // namespace itk
