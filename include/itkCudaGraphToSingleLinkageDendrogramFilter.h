/*=========================================================================
 *  CudaHierarchicalSegmentation
 *=========================================================================*/
#ifndef itkCudaGraphToSingleLinkageDendrogramFilter_h
#define itkCudaGraphToSingleLinkageDendrogramFilter_h

#include "itkCudaSingleLinkageDendrogramSource.h"
#include "itkVectorContainer.h"

namespace itk
{

/** \class CudaGraphToSingleLinkageDendrogramFilter
 * \brief The single-linkage dendrogram of a weighted graph given as edge arrays, on the GPU.
 *
 * Edge i joins vertices u[i] and v[i] with weight w[i] (any sign; NaN rejected). A graph with n - 1 edges on n
 * vertices is taken as a tree (its own minimum spanning tree; it must be connected); a larger connected graph gets
 * its minimum spanning tree first (Boruvka on the GPU). Edges are ordered by (weight, index in the arrays), so the
 * tree and the dendrogram are unique, and the CUDA and CPU backends return the same dendrogram. Then PANDORA builds
 * the dendrogram. Typical inputs: a k-nearest-neighbour graph of points, the mutual-reachability minimum spanning
 * tree of HDBSCAN*, the Euclidean minimum spanning tree of a point cloud computed elsewhere.
 *
 * From Python, the arrays come from NumPy through itk.PyVectorContainer (see docs/using.md).
 *
 * Reference: P. Sao, A. Prokopenko, D. Lebrun-Grandie, "PANDORA: A Parallel Dendrogram Construction Algorithm for
 * Single Linkage Clustering on GPU", ICPP 2024.
 * \ingroup CudaHierarchicalSegmentation
 */
template <typename TWeight>
class ITK_TEMPLATE_EXPORT CudaGraphToSingleLinkageDendrogramFilter : public CudaSingleLinkageDendrogramSource
{
public:
  ITK_DISALLOW_COPY_AND_MOVE(CudaGraphToSingleLinkageDendrogramFilter);
  static_assert(std::is_floating_point<TWeight>::value, "weights are float or double");

  using Self                = CudaGraphToSingleLinkageDendrogramFilter;
  using Superclass          = CudaSingleLinkageDendrogramSource;
  using Pointer             = SmartPointer<Self>;
  using ConstPointer        = SmartPointer<const Self>;
  using WeightType          = TWeight;
  using VertexContainerType = VectorContainer<IdentifierType, uint32_t>;
  using WeightContainerType = VectorContainer<IdentifierType, TWeight>;

  itkNewMacro(Self);
  chsTypeMacro(CudaGraphToSingleLinkageDendrogramFilter, CudaSingleLinkageDendrogramSource);

  /** The edges: three arrays of the same length. They are read at the update, not copied. */
  void
  SetEdges(const VertexContainerType * u, const VertexContainerType * v, const WeightContainerType * w);

  /** Number of vertices; 0 (default): the largest vertex id plus one. */
  itkSetMacro(NumberOfVertices, SizeValueType);
  itkGetConstMacro(NumberOfVertices, SizeValueType);

  /** Promise that the edges form a tree (the update fails if they do not); off: any connected graph. */
  itkSetMacro(InputIsTree, bool);
  itkGetConstMacro(InputIsTree, bool);
  itkBooleanMacro(InputIsTree);

protected:
  CudaGraphToSingleLinkageDendrogramFilter();
  ~CudaGraphToSingleLinkageDendrogramFilter() override = default;
  void
  PrintSelf(std::ostream & os, Indent indent) const override;
  void
  GenerateOutputInformation() override
  {
  }
  void
  GenerateData() override;

private:
  typename VertexContainerType::ConstPointer m_U;
  typename VertexContainerType::ConstPointer m_V;
  typename WeightContainerType::ConstPointer m_W;
  SizeValueType                              m_NumberOfVertices{ 0 };
  bool                                       m_InputIsTree{ false };
};

} // namespace itk

#ifndef ITK_MANUAL_INSTANTIATION
#  include "itkCudaGraphToSingleLinkageDendrogramFilter.hxx"
#endif

#endif
