/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkCudaDendrogramAttributeFilter.h"

#include "chsAlphaTree.h"

#include <algorithm>
#include <cmath>
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
  if (!alphaTree && input->HasWideNodeIds())
  {
    output->Initialize();
    itkExceptionMacro(<< "The input dendrogram has 64-bit node ids; hierarchies by attribute take dendrograms of "
                         "32-bit ones (up to 2^31 - 1 vertices, built without WideNodeIds).");
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

  const SizeValueType        n = input->GetNumberOfVertices();
  const chs::DendrogramInput in{ n,
                                 input->GetParents()->CastToSTLConstContainer().data(),
                                 input->GetWeights()->CastToSTLConstContainer().data(),
                                 input->GetEdgeIds()->CastToSTLConstContainer().data(),
                                 input->GetEdgeU()->CastToSTLConstContainer().data(),
                                 input->GetEdgeV()->CastToSTLConstContainer().data() };
  const AttributeEnum        attribute = m_Attribute;
  const double               threshold = m_Threshold;
  this->RunDendrogram(
    n,
    [&](const chs::DendrogramArrays & arrays, const chs::ExecutionContext & context, chs::RunInfo & run)
    {
      return watershed ? chs::WatershedHierarchyCUDA(in, attribute, arrays, context, &run)
                       : chs::FilterRegionsCUDA(in, attribute, threshold, arrays, context, &run);
    },
    [&](const chs::DendrogramArrays & arrays)
    {
      return watershed ? chs::WatershedHierarchyCPU(in, attribute, arrays)
                       : chs::FilterRegionsCPU(in, attribute, threshold, arrays);
    });
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
  const uint64_t        m = chs::ImageGraphEdges(grid, m_FullyConnected, nullptr, nullptr, nullptr);
  std::vector<uint32_t> u(m), v(m);
  std::vector<uint64_t> ids(m);
  chs::ImageGraphEdges(grid, m_FullyConnected, u.data(), v.data(), ids.data());
  const uint32_t *            parent    = tree->GetParents()->CastToSTLConstContainer().data();
  const double *              level     = tree->GetLevels()->CastToSTLConstContainer().data();
  const uint64_t              nodes     = tree->GetNumberOfNodes();
  const AttributeEnum         attribute = m_Attribute;
  const double                threshold = m_Threshold;
  const uint64_t              edges     = n - 1;
  std::vector<double>         saliency(m);
  std::vector<uint32_t>       pu(2 * n - 1), tu(edges), tv(edges);
  std::vector<double>         tw(edges);
  std::vector<uint64_t>       te(edges);
  const chs::DendrogramArrays bpt{ pu.data(), tw.data(), te.data(), tu.data(), tv.data() };
  const chs::DendrogramInput  in{ n, pu.data(), tw.data(), te.data(), tu.data(), tv.data() };
  auto                        toImageEdges = [&]
  {
    for (uint64_t r = 0; r < edges; ++r)
      te[r] = ids[te[r]]; // the image edge index of each tree edge
  };
  this->RunDendrogram(
    n,
    [&](const chs::DendrogramArrays & arrays, const chs::ExecutionContext & context, chs::RunInfo & info)
    {
      // Progress (and abort) from the last step only, so that it rises through the update.
      chs::ExecutionContext quiet = context;
      quiet.progress              = nullptr;
      chs::AlphaTreeEdgeSaliencyCUDA(parent, level, nodes, u.data(), v.data(), m, saliency.data(), quiet);
      chs::GraphSingleLinkageCUDA(u.data(), v.data(), saliency.data(), m, n, false, bpt, quiet);
      toImageEdges();
      return chs::FilterRegionsCUDA(in, attribute, threshold, arrays, context, &info);
    },
    [&](const chs::DendrogramArrays & arrays)
    {
      {
        const chs::CpuProgressScope quiet([](float) {});
        chs::AlphaTreeEdgeSaliencyCPU(parent, level, nodes, u.data(), v.data(), m, saliency.data());
        chs::GraphSingleLinkageCPU(u.data(), v.data(), saliency.data(), m, n, false, bpt);
      }
      toImageEdges();
      return chs::FilterRegionsCPU(in, attribute, threshold, arrays);
    });
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
