// The single-linkage CPU reference's image path, shared with the alpha-tree's CPU reference.
#ifndef chsSingleLinkageCPU_h
#define chsSingleLinkageCPU_h

#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"

namespace chs
{
namespace sl
{

/** ImageSingleLinkageCPU's work, after its caller's size checks: for integer scalar pixels of 8 or 16 bits
 * (NarrowCodes) the edges are ordered by a counting sort of their codes and numbered in 56 or 48 bits; other pixels
 * by a sort of their keys, numbered in 33 bits (float weights) or 32 (32-bit integers) (CheckedImageEdgeKeys; the
 * alpha-tree's CheckedGraph asks for fewer slots). Node and
 * vertex ids of TNode: 32-bit ones hold up to MaximumDendrogramVertices pixels. Instantiated for the alpha-tree's
 * pixel types, with both id widths. */
template <typename TPixel, typename TNode>
void
ImageKruskalCPU(const TPixel *                   pixels,
                const Grid &                     grid,
                const ImageGraphParameters &     parameters,
                const DendrogramArraysT<TNode> & out);

} // namespace sl
} // namespace chs

#endif
