/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkCudaDendrogramAttributeFilter.h"

#include "chsAlphaTree.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
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

/** A dendrogram's node and vertex ids in the width TNode of a run: its own arrays, or 32-bit ones widened. */
struct InputIds32
{
  const uint32_t *parent, *u, *v;
  explicit InputIds32(const Dendrogram * d)
    : parent(d->GetParents()->CastToSTLConstContainer().data())
    , u(d->GetEdgeU()->CastToSTLConstContainer().data())
    , v(d->GetEdgeV()->CastToSTLConstContainer().data())
  {
  }
};
struct InputIds64
{
  std::vector<uint64_t> widened[3];
  const uint64_t *      parent, *u, *v;
  explicit InputIds64(const Dendrogram * d)
  {
    if (d->HasWideNodeIds())
    {
      parent = d->GetWideParents()->CastToSTLConstContainer().data();
      u      = d->GetWideEdgeU()->CastToSTLConstContainer().data();
      v      = d->GetWideEdgeV()->CastToSTLConstContainer().data();
      return;
    }
    const Dendrogram::IndexContainerType * narrow[3] = { d->GetParents(), d->GetEdgeU(), d->GetEdgeV() };
    for (unsigned i = 0; i < 3; ++i)
      widened[i].assign(narrow[i]->CastToSTLConstContainer().begin(), narrow[i]->CastToSTLConstContainer().end());
    parent = widened[0].data();
    u      = widened[1].data();
    v      = widened[2].data();
  }
};
template <typename TNode>
using InputIds = typename std::conditional<sizeof(TNode) == sizeof(uint32_t), InputIds32, InputIds64>::type;

/** An alpha-tree's parents in the width TNode (the run's width is the tree's, or 64-bit on request). */
const uint32_t *
AlphaParents(const AlphaTree * tree, std::vector<uint32_t> &)
{
  return tree->GetParents()->CastToSTLConstContainer().data();
}
const uint64_t *
AlphaParents(const AlphaTree * tree, std::vector<uint64_t> & widened)
{
  if (tree->HasWideNodeIds())
    return tree->GetWideParents()->CastToSTLConstContainer().data();
  const auto & narrow = tree->GetParents()->CastToSTLConstContainer();
  widened.assign(narrow.begin(), narrow.end());
  return widened.data();
}

const uint32_t *
WidthOf(const std::vector<uint32_t> & ends, std::vector<uint32_t> &)
{
  return ends.data();
}
const uint64_t *
WidthOf(const std::vector<uint32_t> & ends, std::vector<uint64_t> & widened)
{
  widened.assign(ends.begin(), ends.end());
  return widened.data();
}

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
    return watershed ? chs::WatershedHierarchyCUDA(in, attribute, arrays, context, &info)
                     : chs::FilterRegionsCUDA(in, attribute, threshold, arrays, context, &info);
  }
  template <typename TNode>
  chs::SingleLinkageResult
  operator()(const chs::DendrogramArraysT<TNode> & arrays) const
  {
    const InputIds<TNode>              ids(input);
    const chs::DendrogramInputT<TNode> in = In<TNode>(ids);
    return watershed ? chs::WatershedHierarchyCPU(in, attribute, arrays)
                     : chs::FilterRegionsCPU(in, attribute, threshold, arrays);
  }
};

/** RunDendrogram's functor for an alpha-tree input: the edge saliency of its image graph, the dendrogram of the
 * saliency-weighted graph, the filter of that dendrogram, in either width. */
struct AlphaTreeRun
{
  const AlphaTree *     tree;
  std::vector<uint32_t> u, v; // the image graph's edges
  std::vector<uint64_t> ids;  // their image edge indices
  chs::RegionAttribute  attribute;
  double                threshold;

  /** What one run holds: the tree's parents and the edges' ends in its width, the saliency, the binary partition tree
   * of the weighted graph. */
  template <typename TNode>
  struct Work
  {
    std::vector<TNode>    widenedParents, widenedU, widenedV;
    const TNode *         parent, *eu, *ev;
    std::vector<double>   saliency, tw;
    std::vector<TNode>    pu, tu, tv;
    std::vector<uint64_t> te;

    Work(const AlphaTreeRun & run, uint64_t n)
      : saliency(run.u.size())
      , tw(n - 1)
      , pu(2 * n - 1)
      , tu(n - 1)
      , tv(n - 1)
      , te(n - 1)
    {
      parent = AlphaParents(run.tree, widenedParents);
      eu     = WidthOf(run.u, widenedU);
      ev     = WidthOf(run.v, widenedV);
    }
    chs::DendrogramArraysT<TNode>
    Tree()
    {
      return { pu.data(), tw.data(), te.data(), tu.data(), tv.data() };
    }
    chs::DendrogramInputT<TNode>
    Input(const std::vector<uint64_t> & ids)
    {
      for (uint64_t & e : te)
        e = ids[e]; // the image edge index of each tree edge
      return { pu.size() / 2 + 1, pu.data(), tw.data(), te.data(), tu.data(), tv.data() };
    }
  };

  template <typename TNode>
  chs::SingleLinkageResult
  operator()(const chs::DendrogramArraysT<TNode> & arrays,
             const chs::ExecutionContext &         context,
             chs::RunInfo &                        info) const
  {
    const uint64_t n = tree->GetNumberOfLeaves(), m = u.size();
    Work<TNode>    work(*this, n);
    // Progress (and abort) from the last step only, so that it rises through the update.
    chs::ExecutionContext quiet = context;
    quiet.progress              = nullptr;
    chs::AlphaTreeEdgeSaliencyCUDA(work.parent,
                                   tree->GetLevels()->CastToSTLConstContainer().data(),
                                   uint64_t(tree->GetNumberOfNodes()),
                                   work.eu,
                                   work.ev,
                                   m,
                                   work.saliency.data(),
                                   quiet);
    chs::GraphSingleLinkageCUDA(u.data(), v.data(), work.saliency.data(), m, n, false, work.Tree(), quiet);
    return chs::FilterRegionsCUDA(work.Input(ids), attribute, threshold, arrays, context, &info);
  }
  template <typename TNode>
  chs::SingleLinkageResult
  operator()(const chs::DendrogramArraysT<TNode> & arrays) const
  {
    const uint64_t n = tree->GetNumberOfLeaves(), m = u.size();
    Work<TNode>    work(*this, n);
    {
      const chs::CpuProgressScope quiet([](float) {});
      chs::AlphaTreeEdgeSaliencyCPU(work.parent,
                                    tree->GetLevels()->CastToSTLConstContainer().data(),
                                    uint64_t(tree->GetNumberOfNodes()),
                                    work.eu,
                                    work.ev,
                                    m,
                                    work.saliency.data());
      chs::GraphSingleLinkageCPU(u.data(), v.data(), work.saliency.data(), m, n, false, work.Tree());
    }
    return chs::FilterRegionsCPU(work.Input(ids), attribute, threshold, arrays);
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
  AlphaTreeRun run{ tree, {}, {}, {}, m_Attribute, m_Threshold };
  try
  {
    const uint64_t m = chs::ImageGraphEdges(grid, m_FullyConnected, nullptr, nullptr, nullptr);
    run.u.resize(m);
    run.v.resize(m);
    run.ids.resize(m);
    chs::ImageGraphEdges(grid, m_FullyConnected, run.u.data(), run.v.data(), run.ids.data());
  }
  catch (const std::invalid_argument & e)
  {
    output->Initialize();
    itkExceptionMacro(<< "The alpha-tree's image graph: " << e.what());
  }
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
