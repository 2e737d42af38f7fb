// Internal to the .cu files: the watershed and the waterfall's levels on pixel codes already on the device
// (src/Watershed/chsWatershed.cuh defines them, the generated chsWatershed_<code>.cu instantiate them,
// src/Watershed/chsWatershed.cu calls them).
#ifndef chsWatershedDevice_h
#define chsWatershedDevice_h

#include "Common/chsCudaCommon.cuh"
#include "chsWatershed.h"

#include <memory>

namespace chs
{
namespace ws
{

/** The three arrays of a run, of voxel indices P (32-bit below 2^32 - 1 voxels, else 64-bit): b0 and b1 hold n
 * words, b2 n + 4. The plateau distances are 32-bit at the front of b0 (and of b2 for the asynchronous resolution). */
template <typename P>
struct ArraysT
{
  P * b0;
  P * b1;
  P * b2;
};
using Arrays = ArraysT<uint32_t>;

/** The watershed of the codes I: labels 1 .. m in a.b1; returns m. */
template <typename C, typename P>
uint64_t
WatershedOnDevice(const C *                   I,
                  const Grid &                grid,
                  const WatershedParameters & parameters,
                  const ArraysT<P> &          a,
                  int                         device,
                  cudaStream_t                stream,
                  detail::MemoryTracker &     tracker,
                  uint64_t &                  plateauRounds);

/** Watershed lines: the labels in a.b1 with the line pixels set to 0, into a.b2. */
template <typename C, typename P>
void
LinesOnDevice(const C * I, const Grid & grid, bool full, const ArraysT<P> & a, int device, cudaStream_t stream);

/** Where the waterfall's levels run: chosen by the region graph's size (Auto), or forced (tests). */
enum class LevelPath
{
  Auto,
  Pixels,
  RegionGraph
};

/** The waterfall's levels after level 0 (whose labels are in a.b1). */
class LevelEngine
{
public:
  virtual ~LevelEngine() = default;
  /** Computes the next level of the current one's `count` regions; writes each region's new label (regions 1 ..
   * count) into parents (device memory) and returns the new region count. */
  virtual uint32_t
  Next(uint32_t count, uint32_t * parents) = 0;
  /** The current level's labels, one per voxel (device memory). */
  virtual const uint32_t *
  Labels() = 0;
  /** A free array of n words, for narrowing the labels on their way out. */
  virtual uint32_t *
  Spare() const = 0;
  /** True on the region graph. */
  virtual bool
  OnRegionGraph() const = 0;
};

/** The levels after the watershed of the codes I, whose `count` labels are in a.b1 (32-bit region labels in every
 * case; the levels index the voxels with P, as the watershed did). Auto takes the region graph for images of 2^20
 * voxels or more when its edges need no more device memory than the run's pixel arrays (the codes and the three
 * arrays of P), else the pixels. */
template <typename C, typename P>
std::unique_ptr<LevelEngine>
MakeLevelEngine(const C *               I,
                const Grid &            grid,
                bool                    full,
                uint32_t                count,
                const Arrays &          a,
                int                     device,
                cudaStream_t            stream,
                detail::MemoryTracker & tracker,
                LevelPath               path);

} // namespace ws
} // namespace chs

#endif
