// Internal to the .cu files: the watershed and the waterfall's levels on pixel codes already on the device
// (src/Watershed/chsWatershed.cuh defines them, the generated chsWatershed_<code>.cu instantiate them,
// src/Watershed/chsWatershed.cu calls them).
#ifndef chsWatershedDevice_h
#define chsWatershedDevice_h

#include "Common/chsCudaCommon.cuh"
#include "chs/Watershed.h"

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

/** The watershed of the codes I: labels 1 .. m in a.b1; returns m. With `earlyFlatBlocks`, step I and the tile
 * shortcuts of step III ran already, layer by layer as the codes arrived (InitLayers, ShortcutPaths), and counted
 * that many blocks with flat pixels: with none their result stands, else step I runs again over the whole image
 * (the shortcuts changed pointers that step II's plateaus keep). With `number` false, stops with every voxel's root
 * in a.b1 and returns 0: NumberVoxels numbers them. */
template <typename C, typename P>
uint64_t
WatershedOnDevice(const C *                   I,
                  const Grid &                grid,
                  const WatershedParameters & parameters,
                  const ArraysT<P> &          a,
                  int                         device,
                  cudaStream_t                stream,
                  detail::MemoryTracker &     tracker,
                  uint64_t &                  plateauRounds,
                  const unsigned *            earlyFlatBlocks = nullptr,
                  bool                        number          = true);

/** Step I (InitKernel) on the layers [from, to) along the image's last axis (rows of a 2D image, slices of a 3D
 * one), into a.b1 (pointers) and a.b0 (distances), adding the blocks that saw a flat pixel to *flat: the codes of
 * those layers and of the layers next to them must be on the device. */
template <typename C, typename P>
void
InitLayers(const C *          I,
           const Grid &       grid,
           bool               full,
           const ArraysT<P> & a,
           unsigned *         flat,
           uint64_t           from,
           uint64_t           to,
           int                device,
           cudaStream_t       stream);

/** The labels by first pixel of the voxels [begin, end) (src/Watershed/chsWatershedNumbering.cuh), in place of their
 * roots in a.b1; a.b0 takes the first pixels (all ones before the first call), a.b2 the ranks. Called for consecutive
 * ranges from 0 (ranges short of the whole image in raster order only: the first pixel of a voxel's basin is never
 * after it, so a range needs only those before it); after the range that ends at the last voxel, a.b2[n - 1] holds
 * the number of basins. Defined in src/Watershed/chsWatershed.cu. */
template <typename P>
void
NumberVoxels(const ArraysT<P> &      a,
             const Grid &            grid,
             uint64_t                begin,
             uint64_t                end,
             int                     device,
             cudaStream_t            stream,
             detail::MemoryTracker & tracker);

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
