/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#include "itkDendrogram.h"

#include "chs/SingleLinkage.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace itk
{

Dendrogram::Dendrogram()
  : m_Parents(CachedIndices::New())
  , m_WideParents(CachedWideIndices::New())
  , m_Weights(CachedWeights::New())
  , m_EdgeU(CachedIndices::New())
  , m_EdgeV(CachedIndices::New())
  , m_WideEdgeU(CachedWideIndices::New())
  , m_WideEdgeV(CachedWideIndices::New())
  , m_EdgeIds(CachedEdges::New())
{
}

void
Dendrogram::Allocate(SizeValueType numberOfVertices, bool wideNodeIds)
{
  if (numberOfVertices == 0 || numberOfVertices > chs::MaximumWideDendrogramVertices)
  {
    itkExceptionMacro(<< "A dendrogram has between 1 and 2^32 - 1 vertices, not " << numberOfVertices << '.');
  }
  m_NumberOfVertices        = numberOfVertices;
  m_WideNodeIds             = wideNodeIds || numberOfVertices > chs::MaximumDendrogramVertices;
  const SizeValueType edges = numberOfVertices - 1;
  // The containers of the other width are emptied.
  if (m_WideNodeIds)
  {
    for (auto * c : { m_Parents.GetPointer(), m_EdgeU.GetPointer(), m_EdgeV.GetPointer() })
      c->Release();
    m_WideParents->Allocate(2 * numberOfVertices - 1);
    m_WideEdgeU->Allocate(edges);
    m_WideEdgeV->Allocate(edges);
  }
  else
  {
    for (auto * c : { m_WideParents.GetPointer(), m_WideEdgeU.GetPointer(), m_WideEdgeV.GetPointer() })
      c->Release();
    m_Parents->Allocate(2 * numberOfVertices - 1);
    m_EdgeU->Allocate(edges);
    m_EdgeV->Allocate(edges);
  }
  m_Weights->Allocate(edges);
  m_EdgeIds->Allocate(edges);
  this->Modified();
}

Dendrogram::IndexContainerType *
Dendrogram::Narrow(const CachedIndices::Pointer & c) const
{
  if (m_WideNodeIds)
  {
    itkExceptionMacro(<< "This dendrogram has 64-bit node ids: its parents and edge ends are in GetWideParents(), "
                         "GetWideEdgeU() and GetWideEdgeV().");
  }
  return c.GetPointer();
}

Dendrogram::WideIndexContainerType *
Dendrogram::Wide(const CachedWideIndices::Pointer & c) const
{
  if (!m_WideNodeIds)
  {
    itkExceptionMacro(<< "This dendrogram has 32-bit node ids: its parents and edge ends are in GetParents(), "
                         "GetEdgeU() and GetEdgeV().");
  }
  return c.GetPointer();
}

template <class F>
void
Dendrogram::WithIds(F && f) const
{
  if (m_WideNodeIds)
    f(m_WideParents->CastToSTLConstContainer(),
      m_WideEdgeU->CastToSTLConstContainer(),
      m_WideEdgeV->CastToSTLConstContainer());
  else
    f(m_Parents->CastToSTLConstContainer(), m_EdgeU->CastToSTLConstContainer(), m_EdgeV->CastToSTLConstContainer());
}

void
Dendrogram::Initialize()
{
  Superclass::Initialize();
  m_NumberOfVertices = 0;
  m_WideNodeIds      = false;
  for (auto * c : { m_Parents.GetPointer(), m_EdgeU.GetPointer(), m_EdgeV.GetPointer() })
    c->Release();
  for (auto * c : { m_WideParents.GetPointer(), m_WideEdgeU.GetPointer(), m_WideEdgeV.GetPointer() })
    c->Release();
  m_Weights->Release();
  m_EdgeIds->Release();
}

void
Dendrogram::CheckInvariants() const
{
  WithIds([this](const auto & P, const auto & U, const auto & V) { this->CheckInvariantsOf(P, U, V); });
}

template <typename TNode>
void
Dendrogram::CheckInvariantsOf(const std::vector<TNode> & P,
                              const std::vector<TNode> & U,
                              const std::vector<TNode> & V) const
{
  const SizeValueType n = m_NumberOfVertices;
  std::ostringstream  why;
  if (n == 0)
    why << "it has no vertex";
  else if (P.size() != 2 * n - 1 || m_Weights->size() != n - 1 || U.size() != n - 1 || V.size() != n - 1 ||
           m_EdgeIds->size() != n - 1)
    why << "its arrays do not have 2n-1 parents and n-1 weights, ends and edge ids for n = " << n;
  else
  {
    const SizeValueType  root = 2 * n - 2;
    std::vector<uint8_t> children(2 * n - 1, 0);
    for (SizeValueType x = 0; x < root && why.str().empty(); ++x)
    {
      if (P[x] <= x || P[x] > root || P[x] < n)
        why << "node " << x << " has parent " << P[x] << " (parents are internal nodes after their children)";
      else if (++children[P[x]] > 2)
        why << "node " << P[x] << " has more than two children";
    }
    if (why.str().empty() && P[root] != root)
      why << "the root " << root << " has parent " << P[root] << " instead of itself";
    for (SizeValueType r = 0; r + 1 < n && why.str().empty(); ++r)
    {
      const double w = (*m_Weights)[r];
      if (children[n + r] != 2)
        why << "node " << n + r << " has " << int(children[n + r]) << " children instead of two";
      else if (std::isnan(w))
        why << "the weight of node " << n + r << " is NaN";
      else if (r > 0 && w < (*m_Weights)[r - 1])
        why << "the weight of node " << n + r << " (" << w << ") is below the previous node's (" << (*m_Weights)[r - 1]
            << ")";
      else if (U[r] >= n || V[r] >= n)
        why << "the edge of node " << n + r << " has an end vertex out of range";
    }
  }
  if (!why.str().empty())
  {
    itkExceptionMacro(<< "Not a dendrogram: " << why.str() << '.');
  }
}

double
Dendrogram::GetNodeWeight(SizeValueType node) const
{
  if (node >= this->GetNumberOfNodes())
  {
    itkExceptionMacro(<< "Node " << node << " is out of range (" << this->GetNumberOfNodes() << " nodes).");
  }
  return node < m_NumberOfVertices ? 0.0 : (*m_Weights)[node - m_NumberOfVertices];
}

auto
Dendrogram::ComputeNodeSizes() const -> IndexContainerType::Pointer
{
  // Sizes are at most n, below 2^32.
  auto                sizes = IndexContainerType::New();
  const SizeValueType nodes = this->GetNumberOfNodes();
  sizes->assign(nodes, 0);
  WithIds(
    [&](const auto & P, const auto &, const auto &)
    {
      for (SizeValueType x = 0; x < nodes; ++x)
      {
        if (x < m_NumberOfVertices)
          (*sizes)[x] = 1;
        if (x + 1 < nodes)
          (*sizes)[P[x]] += (*sizes)[x];
      }
    });
  return sizes;
}

auto
Dendrogram::CutLabels(SizeValueType applied) const -> IndexContainerType::Pointer
{
  // Top down (parents have larger ids): a node under an applied parent belongs to the parent's cluster. Applied
  // internal nodes are those of rank below `applied`; their children are lighter, hence applied too. Labels are at
  // most n, below 2^32; the clusters are node ids of the dendrogram's width.
  const SizeValueType n = m_NumberOfVertices, nodes = this->GetNumberOfNodes();
  auto                labels = IndexContainerType::New();
  labels->resize(n);
  WithIds(
    [&](const auto & P, const auto &, const auto &)
    {
      using TNode = typename std::decay_t<decltype(P)>::value_type;
      std::vector<TNode> cluster(nodes);
      for (SizeValueType i = nodes; i-- > 0;)
      {
        const SizeValueType p             = P[i];
        const bool          parentApplied = i + 1 < nodes && p - n < applied;
        cluster[i]                        = parentApplied ? cluster[p] : TNode(i);
      }
      std::vector<uint32_t> number(nodes, 0);
      uint32_t              next = 0;
      for (SizeValueType v = 0; v < n; ++v)
      {
        uint32_t & l = number[cluster[v]];
        if (l == 0)
          l = ++next;
        (*labels)[v] = l;
      }
    });
  return labels;
}

auto
Dendrogram::ComputeClustersAtDistance(double distance) const -> IndexContainerType::Pointer
{
  if (std::isnan(distance))
  {
    itkExceptionMacro(<< "The cut distance is NaN.");
  }
  const SizeValueType applied =
    SizeValueType(std::upper_bound(m_Weights->begin(), m_Weights->end(), distance) - m_Weights->begin());
  return this->CutLabels(applied);
}

auto
Dendrogram::ComputeClusters(SizeValueType numberOfClusters) const -> IndexContainerType::Pointer
{
  if (numberOfClusters < 1 || numberOfClusters > m_NumberOfVertices)
  {
    itkExceptionMacro(<< "The number of clusters must be between 1 and the number of vertices (" << m_NumberOfVertices
                      << "), not " << numberOfClusters << '.');
  }
  return this->CutLabels(m_NumberOfVertices - numberOfClusters);
}

auto
Dendrogram::ComputeLinkageMatrix() const -> WeightContainerType::Pointer
{
  const SizeValueType        n     = m_NumberOfVertices;
  auto                       sizes = this->ComputeNodeSizes();
  std::vector<SizeValueType> first(n > 0 ? n - 1 : 0, ~SizeValueType(0)), second(first);
  WithIds(
    [&](const auto & P, const auto &, const auto &)
    {
      for (SizeValueType x = 0; x + 1 < this->GetNumberOfNodes(); ++x)
      {
        const SizeValueType r                                  = P[x] - n;
        (first[r] == ~SizeValueType(0) ? first[r] : second[r]) = x; // children in increasing order
      }
    });
  auto z = WeightContainerType::New();
  z->resize(4 * first.size());
  for (SizeValueType r = 0; r < first.size(); ++r)
  {
    (*z)[4 * r]     = double(first[r]);
    (*z)[4 * r + 1] = double(second[r]);
    (*z)[4 * r + 2] = (*m_Weights)[r];
    (*z)[4 * r + 3] = double((*sizes)[n + r]);
  }
  return z;
}

void
Dendrogram::ComputeCanonicalTree(IndexContainerType * parents, WeightContainerType * levels) const
{
  this->CanonicalTree(parents, levels);
}

void
Dendrogram::ComputeCanonicalTree(WideIndexContainerType * parents, WeightContainerType * levels) const
{
  this->CanonicalTree(parents, levels);
}

template <typename TOut>
void
Dendrogram::CanonicalTree(TOut * parents, WeightContainerType * levels) const
{
  if (parents == nullptr || levels == nullptr)
  {
    itkExceptionMacro(<< "ComputeCanonicalTree needs a parents and a levels container.");
  }
  using TId                 = typename TOut::Element;
  const SizeValueType n     = m_NumberOfVertices;
  const SizeValueType nodes = this->GetNumberOfNodes();
  WithIds(
    [&](const auto & P, const auto &, const auto &)
    {
      using TNode = typename std::decay_t<decltype(P)>::value_type;
      std::vector<TNode> kept(nodes); // the node each node is merged into
      for (SizeValueType i = nodes; i-- > 0;)
      {
        const SizeValueType p      = P[i];
        const bool          merged = i >= n && i + 1 < nodes && (*m_Weights)[i - n] == (*m_Weights)[p - n];
        kept[i]                    = merged ? kept[p] : TNode(i);
      }
      std::vector<TNode> id(nodes, 0);
      SizeValueType      next = 0;
      for (SizeValueType i = 0; i < nodes; ++i)
        if (kept[i] == i)
          id[i] = TNode(next++);
      if (next - 1 > SizeValueType(std::numeric_limits<TId>::max()))
      {
        itkExceptionMacro(<< "The canonical tree has " << next
                          << " nodes, more than 32-bit ids number: give ComputeCanonicalTree 64-bit parents.");
      }
      parents->assign(next, 0);
      levels->assign(next, 0.0);
      for (SizeValueType i = 0; i < nodes; ++i)
      {
        if (kept[i] != i)
          continue;
        (*parents)[id[i]] = TId(i + 1 < nodes ? id[kept[P[i]]] : id[i]);
        (*levels)[id[i]]  = i < n ? 0.0 : (*m_Weights)[i - n];
      }
    });
}

void
Dendrogram::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "NumberOfVertices: " << m_NumberOfVertices << std::endl;
  os << indent << "WideNodeIds: " << (m_WideNodeIds ? "yes" : "no") << std::endl;
  if (m_NumberOfVertices > 1)
  {
    os << indent << "Weights: " << m_Weights->front() << " .. " << m_Weights->back() << std::endl;
  }
}

} // namespace itk
