// The two implementations of include/chs/AlphaTree.h's operations, the CUDA backend and the sequential CPU reference
// (one definition, the same results), and the one entry that runs either as its execution context says. Internal: the
// entries and the tests that set one backend against the other include it; users call the entries.
#ifndef chsAlphaTreeBackends_h
#define chsAlphaTreeBackends_h

#include "chs/AlphaTree.h"
#include "Common/chsBackend.h"

namespace chs
{

template <typename TPixel>
AlphaTreeResult
ImageAlphaTreeCPU(const TPixel *              pixels,
                  const Grid &                grid,
                  const AlphaTreeParameters & parameters,
                  const AlphaTreeAllocator &  allocate);

template <typename TPixel>
AlphaTreeResult
ImageAlphaTreeCUDA(const TPixel *              pixels,
                   const Grid &                grid,
                   const AlphaTreeParameters & parameters,
                   const AlphaTreeAllocator &  allocate,
                   const ExecutionContext &    context,
                   RunInfo *                   info = nullptr);

/** The one entry (include/chs/AlphaTree.h): the backend that `context` names. */
template <typename TPixel>
AlphaTreeResult
ImageAlphaTree(const TPixel *              pixels,
               const Grid &                grid,
               const AlphaTreeParameters & parameters,
               const AlphaTreeAllocator &  allocate,
               const ExecutionContext &    context,
               RunInfo *                   info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return ImageAlphaTreeCUDA(pixels, grid, parameters, allocate, context, info); },
    [&] { return ImageAlphaTreeCPU(pixels, grid, parameters, allocate); });
}
#define CHS_INSTANTIATE_ENTRY_IMAGE_ALPHA_TREE(TPixel)                                                                 \
  template CudaHierarchicalSegmentation_EXPORT AlphaTreeResult ImageAlphaTree<TPixel>(const TPixel *,                  \
                                                                                      const Grid &,                    \
                                                                                      const AlphaTreeParameters &,     \
                                                                                      const AlphaTreeAllocator &,      \
                                                                                      const ExecutionContext &,        \
                                                                                      RunInfo *)

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT uint64_t
AlphaTreeCutCPU(const TNode *  parent,
                const double * level,
                const double * range,
                uint64_t       leaves,
                uint64_t       nodes,
                double         alpha,
                double         omega,
                TNode *        labels);

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT uint64_t
AlphaTreeCutCUDA(const TNode *            parent,
                 const double *           level,
                 const double *           range,
                 uint64_t                 leaves,
                 uint64_t                 nodes,
                 double                   alpha,
                 double                   omega,
                 TNode *                  labels,
                 const ExecutionContext & context,
                 RunInfo *                info = nullptr);

/** The one entry (include/chs/AlphaTree.h): the backend that `context` names. */
template <typename TNode>
uint64_t
AlphaTreeCut(const TNode *            parent,
             const double *           level,
             const double *           range,
             uint64_t                 leaves,
             uint64_t                 nodes,
             double                   alpha,
             double                   omega,
             TNode *                  labels,
             const ExecutionContext & context,
             RunInfo *                info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return AlphaTreeCutCUDA(parent, level, range, leaves, nodes, alpha, omega, labels, context, info); },
    [&] { return AlphaTreeCutCPU(parent, level, range, leaves, nodes, alpha, omega, labels); });
}
#define CHS_INSTANTIATE_ENTRY_ALPHA_TREE_CUT(TNode)                                                                    \
  template CudaHierarchicalSegmentation_EXPORT uint64_t AlphaTreeCut<TNode>(const TNode *,                             \
                                                                            const double *,                            \
                                                                            const double *,                            \
                                                                            uint64_t,                                  \
                                                                            uint64_t,                                  \
                                                                            double,                                    \
                                                                            double,                                    \
                                                                            TNode *,                                   \
                                                                            const ExecutionContext &,                  \
                                                                            RunInfo *)

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeSaliencyCPU(const TNode * parent, const double * level, uint64_t nodes, const Grid & pixels, float * saliency);

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeSaliencyCUDA(const TNode *            parent,
                      const double *           level,
                      uint64_t                 nodes,
                      const Grid &             pixels,
                      float *                  saliency,
                      const ExecutionContext & context,
                      RunInfo *                info = nullptr);

/** The one entry (include/chs/AlphaTree.h): the backend that `context` names. */
template <typename TNode>
void
AlphaTreeSaliency(const TNode *            parent,
                  const double *           level,
                  uint64_t                 nodes,
                  const Grid &             pixels,
                  float *                  saliency,
                  const ExecutionContext & context,
                  RunInfo *                info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return AlphaTreeSaliencyCUDA(parent, level, nodes, pixels, saliency, context, info); },
    [&] { return AlphaTreeSaliencyCPU(parent, level, nodes, pixels, saliency); });
}
#define CHS_INSTANTIATE_ENTRY_ALPHA_TREE_SALIENCY(TNode)                                                               \
  template CudaHierarchicalSegmentation_EXPORT void AlphaTreeSaliency<TNode>(                                          \
    const TNode *, const double *, uint64_t, const Grid &, float *, const ExecutionContext &, RunInfo *)

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeEdgeSaliencyCPU(const TNode *  parent,
                         const double * level,
                         uint64_t       nodes,
                         const TNode *  u,
                         const TNode *  v,
                         uint64_t       count,
                         double *       saliency);

template <typename TNode>
CudaHierarchicalSegmentation_EXPORT void
AlphaTreeEdgeSaliencyCUDA(const TNode *            parent,
                          const double *           level,
                          uint64_t                 nodes,
                          const TNode *            u,
                          const TNode *            v,
                          uint64_t                 count,
                          double *                 saliency,
                          const ExecutionContext & context,
                          RunInfo *                info = nullptr);

/** The one entry (include/chs/AlphaTree.h): the backend that `context` names. */
template <typename TNode>
void
AlphaTreeEdgeSaliency(const TNode *            parent,
                      const double *           level,
                      uint64_t                 nodes,
                      const TNode *            u,
                      const TNode *            v,
                      uint64_t                 count,
                      double *                 saliency,
                      const ExecutionContext & context,
                      RunInfo *                info)
{
  return detail::OnBackend(
    context,
    info,
    [&] { return AlphaTreeEdgeSaliencyCUDA(parent, level, nodes, u, v, count, saliency, context, info); },
    [&] { return AlphaTreeEdgeSaliencyCPU(parent, level, nodes, u, v, count, saliency); });
}
#define CHS_INSTANTIATE_ENTRY_ALPHA_TREE_EDGE_SALIENCY(TNode)                                                          \
  template CudaHierarchicalSegmentation_EXPORT void AlphaTreeEdgeSaliency<TNode>(const TNode *,                        \
                                                                                 const double *,                       \
                                                                                 uint64_t,                             \
                                                                                 const TNode *,                        \
                                                                                 const TNode *,                        \
                                                                                 uint64_t,                             \
                                                                                 double *,                             \
                                                                                 const ExecutionContext &,             \
                                                                                 RunInfo *)

} // namespace chs

#endif
