// The single-linkage CPU reference's image path, shared with the alpha-tree's CPU reference.
#ifndef chsSingleLinkageCPU_h
#define chsSingleLinkageCPU_h

#include "chsSingleLinkage.h"

namespace chs
{
namespace sl
{

/** ImageSingleLinkageCPU's work, with the size check each pixel type needs: for unsigned 8-bit scalar pixels
 * (ByteCodes) the edges are ordered by a counting sort of their codes and numbered in 56 bits, so every connectivity
 * takes up to MaximumDendrogramVertices pixels; other pixels keep fewer than 2^32 edge slots (CheckImageGraph).
 * Instantiated for the alpha-tree's pixel types. */
template <typename TPixel>
void
ImageKruskalCPU(const TPixel *               pixels,
                const Grid &                 grid,
                const ImageGraphParameters & parameters,
                const DendrogramArrays &     out);

} // namespace sl
} // namespace chs

#endif
