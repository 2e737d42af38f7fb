/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkAlphaTree.h"

#include "chs/AlphaTree.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace itk
{

AlphaTree::AlphaTree()
  : m_Parents(HostCachedVectorContainer<IdentifierType, uint32_t>::New())
  , m_WideParents(HostCachedVectorContainer<IdentifierType, uint64_t>::New())
  , m_Levels(HostCachedVectorContainer<IdentifierType, double>::New())
  , m_ValueRanges(LevelContainerType::New())
{
}

void
AlphaTree::Allocate(SizeValueType numberOfLeaves, SizeValueType numberOfNodes, bool wideNodeIds)
{
  if (numberOfLeaves == 0)
  {
    itkExceptionMacro(<< "An alpha-tree has at least one leaf.");
  }
  if (numberOfNodes < numberOfLeaves || numberOfNodes + 1 > 2 * numberOfLeaves)
  {
    itkExceptionMacro(<< "A tree of " << numberOfLeaves << " leaves has between " << numberOfLeaves << " and "
                      << 2 * numberOfLeaves - 1 << " nodes, not " << numberOfNodes << '.');
  }
  m_NumberOfLeaves = numberOfLeaves;
  m_WideNodeIds    = wideNodeIds || numberOfNodes > chs::MaximumNarrowTreeNodes;
  if (m_WideNodeIds)
  {
    m_Parents->Release();
    m_WideParents->Allocate(numberOfNodes);
  }
  else
  {
    m_WideParents->Release();
    m_Parents->Allocate(numberOfNodes);
  }
  m_Levels->Allocate(numberOfNodes);
  m_ValueRanges->clear();
  this->Modified();
}

AlphaTree::IndexContainerType *
AlphaTree::GetModifiableParents()
{
  if (m_WideNodeIds)
  {
    itkExceptionMacro(<< "This alpha-tree has 64-bit node ids: its parents are in GetWideParents().");
  }
  return m_Parents.GetPointer();
}

const AlphaTree::IndexContainerType *
AlphaTree::GetParents() const
{
  return const_cast<AlphaTree *>(this)->GetModifiableParents();
}

AlphaTree::WideIndexContainerType *
AlphaTree::GetModifiableWideParents()
{
  if (!m_WideNodeIds)
  {
    itkExceptionMacro(<< "This alpha-tree has 32-bit node ids: its parents are in GetParents().");
  }
  return m_WideParents.GetPointer();
}

const AlphaTree::WideIndexContainerType *
AlphaTree::GetWideParents() const
{
  return const_cast<AlphaTree *>(this)->GetModifiableWideParents();
}

void
AlphaTree::Initialize()
{
  Superclass::Initialize();
  m_NumberOfLeaves = 0;
  m_WideNodeIds    = false;
  m_Parents->Release();
  m_WideParents->Release();
  m_Levels->Release();
  m_ValueRanges->clear();
  m_ValueRanges->shrink_to_fit();
}

void
AlphaTree::CheckInvariants() const
{
  if (m_WideNodeIds)
    this->CheckInvariantsOf(m_WideParents->CastToSTLConstContainer());
  else
    this->CheckInvariantsOf(m_Parents->CastToSTLConstContainer());
}

template <typename TNode>
void
AlphaTree::CheckInvariantsOf(const std::vector<TNode> & parent) const
{
  const SizeValueType n = m_NumberOfLeaves, total = parent.size();
  if (n == 0 || total < n || total + 1 > 2 * n || m_Levels->size() != total)
  {
    itkExceptionMacro(<< "Broken alpha-tree: " << total << " parents and " << m_Levels->size() << " levels for " << n
                      << " leaves.");
  }
  const auto &       level = m_Levels->CastToSTLConstContainer();
  std::vector<TNode> children(total, 0);
  if (parent[total - 1] != total - 1)
  {
    itkExceptionMacro(<< "Broken alpha-tree: the last node is not its own parent (the root).");
  }
  for (SizeValueType x = 0; x + 1 < total; ++x)
  {
    const TNode p = parent[x];
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
  auto                areas = AreaContainerType::New();
  const SizeValueType nodes = this->GetNumberOfNodes();
  areas->resize(nodes);
  if (m_WideNodeIds)
    chs::TreeAreas(
      m_WideParents->CastToSTLConstContainer().data(), nodes, m_NumberOfLeaves, areas->CastToSTLContainer().data());
  else
    chs::TreeAreas(
      m_Parents->CastToSTLConstContainer().data(), nodes, m_NumberOfLeaves, areas->CastToSTLContainer().data());
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
  const bool     constrained = !std::isinf(omega);
  auto           labels      = IndexContainerType::New();
  const double * level       = m_Levels->CastToSTLConstContainer().data();
  const double * range       = constrained ? m_ValueRanges->CastToSTLConstContainer().data() : nullptr;
  omega                      = constrained ? omega : std::numeric_limits<double>::infinity();
  labels->resize(m_NumberOfLeaves);
  chs::ExecutionContext onHost; // the cut of a tree held on the host, on the host
  onHost.backend = chs::Backend::CPU;
  if (!m_WideNodeIds)
  {
    chs::AlphaTreeCut(m_Parents->CastToSTLConstContainer().data(),
                      level,
                      range,
                      m_NumberOfLeaves,
                      m_Parents->size(),
                      alpha,
                      omega,
                      labels->CastToSTLContainer().data(),
                      onHost);
    return labels;
  }
  std::vector<uint64_t> wide(m_NumberOfLeaves);
  const uint64_t        count = chs::AlphaTreeCut(m_WideParents->CastToSTLConstContainer().data(),
                                           level,
                                           range,
                                           m_NumberOfLeaves,
                                           m_WideParents->size(),
                                           alpha,
                                           omega,
                                           wide.data(),
                                           onHost);
  if (count > std::numeric_limits<uint32_t>::max())
  {
    itkExceptionMacro(<< "The cut has " << count << " regions; their labels do not fit in 32 bits.");
  }
  std::copy(wide.begin(), wide.end(), labels->CastToSTLContainer().begin());
  return labels;
}

void
AlphaTree::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfLeaves: " << m_NumberOfLeaves << std::endl;
  os << indent << "NumberOfNodes: " << this->GetNumberOfNodes() << std::endl;
  os << indent << "WideNodeIds: " << (m_WideNodeIds ? "yes" : "no") << std::endl;
  os << indent << "ValueRanges: " << (this->HasValueRanges() ? "yes" : "no") << std::endl;
}

} // namespace itk
