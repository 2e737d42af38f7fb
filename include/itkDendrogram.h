/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkDendrogram_h
#define itkDendrogram_h

#include "itkHostCachedContainers.h"
#include "itkImageHierarchy.h"
#include "itkObjectFactory.h"
#include "itkVectorContainer.h"
#include "CudaHierarchicalSegmentationExport.h"

#include <array>
#include <vector>
#include <cstdint>

namespace itk
{

/** \class Dendrogram
 * \brief The single-linkage dendrogram of a graph: a binary tree whose leaves are the vertices and whose internal
 * nodes are the edges of the graph's minimum spanning tree.
 *
 * With n vertices, the leaves are the nodes 0 .. n-1 and the internal node n + r stands for the tree edge of rank r,
 * the tree edges being ranked by (weight, edge index) (a total order: the dendrogram is unique). Every node's parent
 * has a larger id (the parents are in topological order) and the root, node 2n-2, is its own parent. Per internal
 * node (indexed by rank): the weight (merge distance, non-decreasing with the rank), the two end vertices of its
 * edge and the edge's index in the input (an image graph's edge index is pixel * K + slot, see
 * CudaImageToSingleLinkageDendrogramFilter). When the vertices are the pixels of an image, the image's geometry is
 * kept so that cuts can be written as label images (DendrogramToLabelImageFilter).
 *
 * The arrays are VectorContainers, reachable from Python as NumPy arrays with
 * itk.array_from_vector_container(dendrogram.GetParents()). Node and vertex ids (parents, end vertices) are 32-bit
 * (GetParents, GetEdgeU, GetEdgeV) for graphs of up to 2^31 - 1 vertices, and 64-bit (GetWideParents, GetWideEdgeU,
 * GetWideEdgeV) for larger ones, up to 2^32 - 1 vertices, or when the building filter was asked for them
 * (HasWideNodeIds tells which).
 *
 * Reference: P. Sao, A. Prokopenko, D. Lebrun-Grandie, "PANDORA: A Parallel Dendrogram Construction Algorithm for
 * Single Linkage Clustering on GPU", ICPP 2024.
 * \ingroup CudaHierarchicalSegmentation
 */
class CudaHierarchicalSegmentation_EXPORT Dendrogram : public ImageHierarchy
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(Dendrogram);

  using Self         = Dendrogram;
  using Superclass   = ImageHierarchy;
  using Pointer      = SmartPointer<Self>;
  using ConstPointer = SmartPointer<const Self>;

  itkNewMacro(Self);
  chsTypeMacro(Dendrogram, ImageHierarchy);

  /** Node ids (parents, end vertices) of up to 2^31 - 1 vertices; cluster labels and node sizes. */
  using IndexContainerType = VectorContainer<IdentifierType, uint32_t>;
  /** Node ids of larger dendrograms (or when asked for). */
  using WideIndexContainerType = VectorContainer<IdentifierType, uint64_t>;
  /** Merge distances, and the linkage matrix. */
  using WeightContainerType = VectorContainer<IdentifierType, double>;
  /** Edge indices of the input. */
  using EdgeContainerType = VectorContainer<IdentifierType, IdentifierType>;

  /** Sizes the arrays for a graph of `numberOfVertices` vertices (1 to 2^32 - 1); their contents, unspecified until
   * then (the storage may come from the module's host array cache, chs/HostCache.h), are then written by a backend,
   * and CheckInvariants() validates them. Node ids are 64-bit when `wideNodeIds` is set or the graph has more than
   * 2^31 - 1 vertices, else 32-bit. */
  void
  Allocate(SizeValueType numberOfVertices, bool wideNodeIds = false);

  /** Throws an ExceptionObject saying what is wrong unless the arrays describe a dendrogram: sizes consistent, every
   * parent after its child, the root last and its own parent, every internal node with two children, weights not
   * NaN and non-decreasing with the rank, end vertices in range. */
  void
  CheckInvariants() const;

  SizeValueType
  GetNumberOfVertices() const
  {
    return m_NumberOfVertices;
  }
  SizeValueType
  GetNumberOfNodes() const
  {
    return m_NumberOfVertices ? 2 * m_NumberOfVertices - 1 : 0;
  }
  /** The root's node id, 2n-2. */
  SizeValueType
  GetRoot() const
  {
    return m_NumberOfVertices ? 2 * m_NumberOfVertices - 2 : 0;
  }

  /** Whether node and vertex ids are 64-bit: the parents and ends are then in GetWideParents, GetWideEdgeU and
   * GetWideEdgeV, and GetParents, GetEdgeU and GetEdgeV throw. */
  bool
  HasWideNodeIds() const
  {
    return m_WideNodeIds;
  }
  /** The parents and the end vertices of a dendrogram of 32-bit ids; they throw an ExceptionObject for one of 64-bit
   * ids. */
  IndexContainerType *
  GetParents()
  {
    return this->Narrow(m_Parents);
  }
  const IndexContainerType *
  GetParents() const
  {
    return this->Narrow(m_Parents);
  }
  IndexContainerType *
  GetEdgeU()
  {
    return this->Narrow(m_EdgeU);
  }
  const IndexContainerType *
  GetEdgeU() const
  {
    return this->Narrow(m_EdgeU);
  }
  IndexContainerType *
  GetEdgeV()
  {
    return this->Narrow(m_EdgeV);
  }
  const IndexContainerType *
  GetEdgeV() const
  {
    return this->Narrow(m_EdgeV);
  }
  /** The parents and the end vertices of a dendrogram of 64-bit ids; they throw an ExceptionObject for one of 32-bit
   * ids. */
  WideIndexContainerType *
  GetWideParents()
  {
    return this->Wide(m_WideParents);
  }
  const WideIndexContainerType *
  GetWideParents() const
  {
    return this->Wide(m_WideParents);
  }
  WideIndexContainerType *
  GetWideEdgeU()
  {
    return this->Wide(m_WideEdgeU);
  }
  const WideIndexContainerType *
  GetWideEdgeU() const
  {
    return this->Wide(m_WideEdgeU);
  }
  WideIndexContainerType *
  GetWideEdgeV()
  {
    return this->Wide(m_WideEdgeV);
  }
  const WideIndexContainerType *
  GetWideEdgeV() const
  {
    return this->Wide(m_WideEdgeV);
  }
  itkGetModifiableObjectMacro(Weights, WeightContainerType);
  itkGetModifiableObjectMacro(EdgeIds, EdgeContainerType);

  /** The weight of an internal node (node id n + r), or 0 for a leaf. */
  double
  GetNodeWeight(SizeValueType node) const;

  /** Number of vertices (leaves) under every node, in node order. */
  IndexContainerType::Pointer
  ComputeNodeSizes() const;

  /** Flat clusters: the vertices joined by tree edges of weight at most `distance` (SciPy's fcluster with the
   * 'distance' criterion), as a label per vertex, consecutive from 1 in order of each cluster's first vertex. */
  IndexContainerType::Pointer
  ComputeClustersAtDistance(double distance) const;

  /** Flat clusters: the vertices joined by the n - k lightest tree edges (k = numberOfClusters, 1 <= k <= n), labels
   * as above. Exactly k clusters, ties included (the rank order breaks them). */
  IndexContainerType::Pointer
  ComputeClusters(SizeValueType numberOfClusters) const;

  /** SciPy's linkage matrix, row-major, n-1 rows of (smaller child, larger child, distance, size), in node order:
   * row r forms the cluster n + r, as scipy.cluster.hierarchy expects. */
  WeightContainerType::Pointer
  ComputeLinkageMatrix() const;

  /** The canonical tree: every internal node with the weight of its parent merged into the parent. Leaves keep their
   * ids 0 .. n-1, the remaining internal nodes are numbered from n in node order (the root last), and each gets its
   * parent (the root its own) and its level (0 for the leaves). For an image graph this is the alpha-tree (the
   * quasi-flat-zone hierarchy) of the image with the same connectivity and dissimilarity. Into 32-bit parents it
   * throws an ExceptionObject when the canonical tree has more than 2^32 - 1 nodes; 64-bit ones take any. */
  void
  ComputeCanonicalTree(IndexContainerType * parents, WeightContainerType * levels) const;
  void
  ComputeCanonicalTree(WideIndexContainerType * parents, WeightContainerType * levels) const;

  /** Empties the arrays (the image geometry stays: it is pipeline information). */
  void
  Initialize() override;

protected:
  Dendrogram();
  ~Dendrogram() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  // Written by the backends: their storage is reused through the host array cache. Of the parents and the ends, the
  // containers of one width are in use, the others empty.
  using CachedIndices     = HostCachedVectorContainer<IdentifierType, uint32_t>;
  using CachedWideIndices = HostCachedVectorContainer<IdentifierType, uint64_t>;
  using CachedWeights     = HostCachedVectorContainer<IdentifierType, double>;
  using CachedEdges       = HostCachedVectorContainer<IdentifierType, IdentifierType>;

  IndexContainerType *
  Narrow(const CachedIndices::Pointer & c) const;
  WideIndexContainerType *
  Wide(const CachedWideIndices::Pointer & c) const;
  /** Calls f(parents, u, v) with the STL vectors of the width in use. */
  template <class F>
  void
  WithIds(F && f) const;

  /** Per vertex: its cluster's label when the `applied` lightest tree edges are merged. */
  IndexContainerType::Pointer
  CutLabels(SizeValueType applied) const;
  template <typename TOut>
  void
  CanonicalTree(TOut * parents, WeightContainerType * levels) const;
  template <typename TNode>
  void
  CheckInvariantsOf(const std::vector<TNode> & parent,
                    const std::vector<TNode> & u,
                    const std::vector<TNode> & v) const;

  SizeValueType              m_NumberOfVertices = 0;
  bool                       m_WideNodeIds      = false;
  CachedIndices::Pointer     m_Parents;
  CachedWideIndices::Pointer m_WideParents;
  CachedWeights::Pointer     m_Weights;
  CachedIndices::Pointer     m_EdgeU;
  CachedIndices::Pointer     m_EdgeV;
  CachedWideIndices::Pointer m_WideEdgeU;
  CachedWideIndices::Pointer m_WideEdgeV;
  CachedEdges::Pointer       m_EdgeIds;
};

} // namespace itk

#endif
