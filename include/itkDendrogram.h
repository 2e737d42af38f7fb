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
 * itk.array_from_vector_container(dendrogram.GetParents()).
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

  /** Node ids (parents, end vertices, cluster labels). */
  using IndexContainerType = VectorContainer<IdentifierType, uint32_t>;
  /** Merge distances, and the linkage matrix. */
  using WeightContainerType = VectorContainer<IdentifierType, double>;
  /** Edge indices of the input. */
  using EdgeContainerType = VectorContainer<IdentifierType, IdentifierType>;

  /** Sizes the arrays for a graph of `numberOfVertices` vertices (at least 1); their contents, unspecified until then
   * (the storage may come from the module's host array cache, chsHostCache.h), are then written by a backend, and
   * CheckInvariants() validates them. */
  void
  Allocate(SizeValueType numberOfVertices);

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

  itkGetModifiableObjectMacro(Parents, IndexContainerType);
  itkGetModifiableObjectMacro(Weights, WeightContainerType);
  itkGetModifiableObjectMacro(EdgeU, IndexContainerType);
  itkGetModifiableObjectMacro(EdgeV, IndexContainerType);
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
   * quasi-flat-zone hierarchy) of the image with the same connectivity and dissimilarity. */
  void
  ComputeCanonicalTree(IndexContainerType * parents, WeightContainerType * levels) const;


  /** Empties the arrays (the image geometry stays: it is pipeline information). */
  void
  Initialize() override;

protected:
  Dendrogram();
  ~Dendrogram() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;

private:
  /** Per node: the node whose cluster it belongs to when the `applied` lightest tree edges are merged. */
  IndexContainerType::Pointer
  CutLabels(SizeValueType applied) const;

  SizeValueType                m_NumberOfVertices = 0;
  // Written by the backends: their storage is reused through the host array cache.
  using CachedIndices = HostCachedVectorContainer<IdentifierType, uint32_t>;
  using CachedWeights = HostCachedVectorContainer<IdentifierType, double>;
  using CachedEdges   = HostCachedVectorContainer<IdentifierType, IdentifierType>;
  CachedIndices::Pointer m_Parents;
  CachedWeights::Pointer m_Weights;
  CachedIndices::Pointer m_EdgeU;
  CachedIndices::Pointer m_EdgeV;
  CachedEdges::Pointer   m_EdgeIds;
};

} // namespace itk

#endif
