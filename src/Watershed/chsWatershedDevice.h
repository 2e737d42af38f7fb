// Internal to the .cu files: the watershed and one waterfall level on pixel codes already on the device
// (src/Watershed/chsWatershed.cuh defines them, the generated chsWatershed_<code>.cu instantiate them,
// src/Watershed/chsWatershed.cu calls them).
#ifndef chsWatershedDevice_h
#define chsWatershedDevice_h

#include "Common/chsCudaCommon.cuh"
#include "chsWatershed.h"

namespace chs
{
namespace ws
{

/** The three 32-bit arrays of a run: b0 and b1 hold n words, b2 n + 4. */
struct Arrays
{
  uint32_t * b0;
  uint32_t * b1;
  uint32_t * b2;
};

/** The watershed of the codes I: labels 1 .. m in a.b1; returns m. */
template <typename C>
uint64_t
WatershedOnDevice(const C *                   I,
                  const Grid &                grid,
                  const WatershedParameters & parameters,
                  const Arrays &              a,
                  int                         device,
                  cudaStream_t                stream,
                  detail::MemoryTracker &     tracker,
                  uint64_t &                  plateauRounds);

/** Watershed lines: the labels in a.b1 with the line pixels set to 0, into a.b2. */
template <typename C>
void
LinesOnDevice(const C * I, const Grid & grid, bool full, const Arrays & a, int device, cudaStream_t stream);

/** One waterfall level: the labels in a.b1 (1 .. count) become the next level's; a.b0[1 .. count] receives each
 * region's new label. Returns the new region count. */
template <typename C>
uint32_t
WaterfallLevelOnDevice(const C *               I,
                       const Grid &            grid,
                       bool                    full,
                       uint32_t                count,
                       const Arrays &          a,
                       int                     device,
                       cudaStream_t            stream,
                       detail::MemoryTracker & tracker);

} // namespace ws
} // namespace chs

#endif
