/*=========================================================================
 *  CudaHierarchicalSegmentation: the construction algorithm property of CudaImageToAlphaTreeFilter.
 *=========================================================================*/
#ifndef itkCudaAlphaTreeEnums_h
#define itkCudaAlphaTreeEnums_h

#include "itkIntTypes.h"
#include "itkMacro.h"

#include <ostream>

namespace itk
{

/** \class CudaAlphaTreeEnums
 * \brief How the CUDA backend of CudaImageToAlphaTreeFilter builds the tree before canonicalising it (the result is
 * the same tree): Auto (default: the fastest measured on the H200: LevelSynchronous for 8-bit scalar images,
 * SpanningTree otherwise), InsertAllEdges (Carlinet, Kaci and
 * Blin's GPU v1: every edge becomes a node, chained per pixel, then merged with the lock-free CONNECT),
 * SkipRedundantEdges (their GPU v2, CONNECT-WITH: edges that join nothing new at their level are not inserted) or
 * SpanningTree (Boruvka's minimum spanning tree and the PANDORA dendrogram of the single-linkage filters, whose work
 * does not grow with the image's dynamic range), or LevelSynchronous (Kruskal's union-find one level at a time, every
 * edge of a level at once: the canonical tree directly; 8-bit and 16-bit integer scalar pixels only, an exception
 * otherwise). The CPU reference ignores it. \ingroup CudaHierarchicalSegmentation
 */
class CudaAlphaTreeEnums
{
public:
  enum class Algorithm : uint8_t
  {
    Auto,
    InsertAllEdges,
    SkipRedundantEdges,
    SpanningTree,
    LevelSynchronous
  };
};

inline std::ostream &
operator<<(std::ostream & out, const CudaAlphaTreeEnums::Algorithm value)
{
  switch (value)
  {
    case CudaAlphaTreeEnums::Algorithm::Auto:
      return out << "itk::CudaAlphaTreeEnums::Algorithm::Auto";
    case CudaAlphaTreeEnums::Algorithm::InsertAllEdges:
      return out << "itk::CudaAlphaTreeEnums::Algorithm::InsertAllEdges";
    case CudaAlphaTreeEnums::Algorithm::SkipRedundantEdges:
      return out << "itk::CudaAlphaTreeEnums::Algorithm::SkipRedundantEdges";
    case CudaAlphaTreeEnums::Algorithm::SpanningTree:
      return out << "itk::CudaAlphaTreeEnums::Algorithm::SpanningTree";
    case CudaAlphaTreeEnums::Algorithm::LevelSynchronous:
      return out << "itk::CudaAlphaTreeEnums::Algorithm::LevelSynchronous";
  }
  return out << "INVALID VALUE FOR itk::CudaAlphaTreeEnums::Algorithm";
}

} // namespace itk

#endif
