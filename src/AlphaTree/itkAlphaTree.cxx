/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkAlphaTree.h"

#include "chsAlphaTree.h"

#include <cmath>
#include <limits>

namespace itk
{

AlphaTree::AlphaTree()
  : m_Parents(HostCachedVectorContainer<IdentifierType, uint32_t>::New())
  , m_Levels(HostCachedVectorContainer<IdentifierType, double>::New())
  , m_ValueRanges(LevelContainerType::New())
{
}

void
AlphaTree::Allocate(SizeValueType numberOfLeaves, SizeValueType numberOfNodes)
{
  if (numberOfLeaves == 0 || numberOfLeaves > (SizeValueType(1) << 31) - 1)
  {
    itkExceptionMacro(<< "An alpha-tree has between 1 and 2^31 - 1 leaves, not " << numberOfLeaves << '.');
  }
  if (numberOfNodes < numberOfLeaves || numberOfNodes + 1 > 2 * numberOfLeaves)
  {
    itkExceptionMacro(<< "A tree of " << numberOfLeaves << " leaves has between " << numberOfLeaves << " and "
                      << 2 * numberOfLeaves - 1 << " nodes, not " << numberOfNodes << '.');
  }
  m_NumberOfLeaves = numberOfLeaves;
  m_Parents->Allocate(numberOfNodes);
  m_Levels->Allocate(numberOfNodes);
  m_ValueRanges->clear();
  this->Modified();
}

void
AlphaTree::Initialize()
{
  Superclass::Initialize();
  m_NumberOfLeaves = 0;
  m_Parents->Release();
  m_Levels->Release();
  m_ValueRanges->clear();
  m_ValueRanges->shrink_to_fit();
}

void
AlphaTree::CheckInvariants() const
{
  const SizeValueType n = m_NumberOfLeaves, total = m_Parents->size();
  if (n == 0 || total < n || total + 1 > 2 * n || m_Levels->size() != total)
  {
    itkExceptionMacro(<< "Broken alpha-tree: " << total << " parents and " << m_Levels->size() << " levels for " << n
                      << " leaves.");
  }
  const auto &          parent = m_Parents->CastToSTLConstContainer();
  const auto &          level  = m_Levels->CastToSTLConstContainer();
  std::vector<uint32_t> children(total, 0);
  if (parent[total - 1] != total - 1)
  {
    itkExceptionMacro(<< "Broken alpha-tree: the last node is not its own parent (the root).");
  }
  for (SizeValueType x = 0; x + 1 < total; ++x)
  {
    const uint32_t p = parent[x];
    if (p <= x || p >= total || p < n)
    {
      itkExceptionMacro(<< "Broken alpha-tree: node " << x << " has parent " << p << '.');
    }
    if (x >= n && !(level[x] < level[p]))
    {
      itkExceptionMacro(<< "Broken alpha-tree: node " << x << " (level " << level[x] << ") is not below its parent "
                        << p << " (level " << level[p] << ").");
    }
    ++children[p];
  }
  for (SizeValueType x = 0; x < total; ++x)
  {
    if (x < n ? level[x] != 0.0 : (children[x] < 2 || std::isnan(level[x])))
    {
      itkExceptionMacro(<< "Broken alpha-tree: node " << x << " has level " << level[x] << " and " << children[x]
                        << " children.");
    }
  }
}

AlphaTree::AreaContainerType::Pointer
AlphaTree::ComputeAreas() const
{
  auto         areas  = AreaContainerType::New();
  const auto & parent = m_Parents->CastToSTLConstContainer();
  areas->resize(parent.size());
  chs::TreeAreas(parent.data(), parent.size(), m_NumberOfLeaves, areas->CastToSTLContainer().data());
  return areas;
}

void
AlphaTree::CheckCutParameters(double alpha, double omega) const
{
  if (!std::isinf(omega) && !this->HasValueRanges())
  {
    itkExceptionMacro(
      << "An alpha-omega cut needs the nodes' value ranges; build the tree with ComputeValueRanges on.");
  }
  if (std::isnan(alpha) || std::isnan(omega))
  {
    itkExceptionMacro(<< "Alpha and omega must not be NaN.");
  }
}

AlphaTree::IndexContainerType::Pointer
AlphaTree::ComputeLabels(double alpha, double omega) const
{
  this->CheckCutParameters(alpha, omega);
  const bool constrained = !std::isinf(omega);
  auto       labels      = IndexContainerType::New();
  labels->resize(m_NumberOfLeaves);
  chs::AlphaTreeCutCPU(m_Parents->CastToSTLConstContainer().data(),
                       m_Levels->CastToSTLConstContainer().data(),
                       constrained ? m_ValueRanges->CastToSTLConstContainer().data() : nullptr,
                       m_NumberOfLeaves,
                       m_Parents->size(),
                       alpha,
                       constrained ? omega : std::numeric_limits<double>::infinity(),
                       labels->CastToSTLContainer().data());
  return labels;
}

void
AlphaTree::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfLeaves: " << m_NumberOfLeaves << std::endl;
  os << indent << "NumberOfNodes: " << m_Parents->size() << std::endl;
  os << indent << "ValueRanges: " << (this->HasValueRanges() ? "yes" : "no") << std::endl;
}

} // namespace itk
