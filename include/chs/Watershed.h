/*=========================================================================
 *  CudaHierarchicalSegmentation: the watershed (PRUF, APRUF, PRW) and the waterfall hierarchy, ITK-free API.
 *
 *  Three operations, Watershed, MarkerWatershed and Waterfall, each with two implementations of one definition,
 *  chosen by the ExecutionContext's backend (include/chs/Execution.h): the CUDA backend (src/Watershed/, after
 *  Yeghiazaryan, Gabrielyan and Voiculescu, "Parallel Watershed Partitioning: GPU-Based Hierarchical Image
 *  Segmentation") and the sequential CPU reference (src/Watershed/chsWatershedCPU.cxx).
 *
 *  The watershed, exactly (docs/watershed.md). Pixels are ordered by raster index (x fastest);
 *  N(p) is the neighbourhood of the connectivity (4/8 in 2D, 6/26 in 3D). A plateau is a connected set of pixels
 *  of equal value (connected through N).
 *  - Lowest neighbour. low(p) is the neighbour of smallest value; among several, the one of largest raster index
 *    (the paper's rule, its equation 1). p descends when I(low(p)) < I(p).
 *  - Plateau distance. For a pixel p that does not descend, d(p) is the length of the shortest path inside p's
 *    plateau from a pixel of that plateau that descends (d = 0 for pixels that descend). A plateau where no pixel
 *    descends is a minimal plateau (a regional minimum); its pixels have no distance.
 *  - Steepest-descent pointer. A descending pixel points to low(p). A pixel of distance d >= 1 points to the
 *    neighbour of largest raster index on its plateau with distance d - 1: a non-minimal plateau is split between
 *    the basins around it by geodesic distance from where each can drain (the paper's fair split, that its
 *    synchronous and balanced variants compute).
 *  - Basins. Following the pointers from any pixel ends in a minimal plateau; the pixels whose paths end in the same
 *    minimal plateau form one basin. So there is exactly one basin per regional minimum, and every pixel is in one.
 *  - Labels: 1, 2, ... in raster order of each basin's first pixel.
 *  - Watershed lines (optional): a pixel p is set to 0 when a neighbour q is in another basin and I(p) > I(q), or
 *    I(p) = I(q) and p comes after q in raster order. The basin of a regional minimum keeps its minimum.
 *  Floating-point values compare as numbers (-0 equals +0); NaN is rejected. The three algorithms (PRUF, APRUF,
 *  PRW) compute the same partition by different steps; the synchronous and balanced plateau resolutions compute
 *  the distances above, the CPU reference by a breadth-first search. The block-asynchronous resolution does not
 *  correct a distance once set, so its d(p) is the length of some path, not always the shortest: it may split
 *  non-minimal plateaux differently, but finds the same minimal plateaux (the same basins' minima, the same count);
 *  the CPU reference gives the balanced result for it.
 *
 *  The waterfall. Level 0 is the watershed. The lowest pass of a region R of level k is the smallest
 *  max(I(p), I(q)) over neighbouring pixels p in R and q outside it (the paper's step V). Level k + 1 joins every
 *  region of level k to each neighbour across a boundary pair of height equal to its lowest pass, and takes the
 *  connected components of those joins: where the paper raises every basin to its lowest pass and the basin
 *  overflows. Regions of level k + 1 are unions of regions of level k, labelled 1, 2, ... in raster order of their
 *  first pixel. The levels stop at one region or after the requested number.
 *=========================================================================*/
#ifndef chsWatershed_h
#define chsWatershed_h

#include "chs/Execution.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace chs
{

/** How steps III and IV run (the partition is the same). */
enum class WatershedAlgorithm
{
  /** Path reduction with RR jumps between global synchronisations, then union-find on minimal plateaux. */
  PRUF,
  /** Every pixel follows its path to the end without synchronisation, then union-find (faster on small images). */
  APRUF,
  /** Path reduction, then the iterated min-label merging of minimal plateaux (the paper's algorithm 2). */
  PRW
};

/** How step II resolves non-minimal plateaux. */
enum class PlateauResolution
{
  /** Block-local relaxation to exact distances (PRUFbal): the defined result, fast. */
  Balanced,
  /** One relaxation step per global synchronisation (PRUFsync): the defined result, slow on long plateaux. */
  Synchronous,
  /** Block-local propagation that never corrects a distance once set (PRUFasync); see the header comment. */
  BlockAsynchronous
};

struct WatershedParameters
{
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool               fullyConnected = false;
  WatershedAlgorithm algorithm      = WatershedAlgorithm::PRUF;
  PlateauResolution  plateaus       = PlateauResolution::Balanced;
  /** RR, the pointer jumps per global synchronisation of PRUF and PRW (1 to 64). */
  unsigned reductionRate = 6;
  /** CUDA thread block of the plateau resolution, x y z; 0 0 0: 16 x 16 in 2D, 8 x 8 x 8 in 3D. At most 1024
   * threads; z is 1 in 2D. */
  unsigned blockSize[3] = { 0, 0, 0 };
  /** Set the watershed-line pixels (see above) to 0. */
  bool markLines = false;
  /** Testing only: 64-bit voxel indices and labels on the device even for small images (the path taken from 2^32 - 1
   * voxels on; the CPU reference then numbers its basins in 64 bits too). */
  bool forceWideIndex = false;
};

struct WatershedResult
{
  /** Number of basins (regional minima). */
  uint64_t basinCount = 0;
  /** CUDA: global rounds of the plateau resolution, the last (unchanged) one included; 0 when no pixel that does not
   * descend has an equal neighbour (step II then has nothing to do and is skipped); CPU: 0. */
  uint64_t plateauRounds = 0;
};

/** The watershed of `image` (any scalar type of up to 64 bits; no NaN) into `labels` (unsigned, 8 to 64 bits), of any
 * number of voxels: from 2^32 - 1 voxels on the CUDA backend takes 64-bit voxel indices (8 bytes a voxel for each of
 * its three arrays instead of 4) and the CPU reference 64-bit basin numbers; the result is the same definition's.
 * Plateau distances are 32-bit: a plateau whose shortest descending path is 2^32 - 2 pixels or longer is refused
 * (the CPU reference throws std::runtime_error; only a maze-shaped plateau of billions of pixels has one).
 * Throws std::invalid_argument for an empty image, 2^32 voxels or more along one axis, a NaN (naming the first such
 * pixel), bad parameters, or more basins than the label type holds, before anything is written. */
template <typename T, typename TLabel>
WatershedResult
Watershed(const T *                   image,
          const Grid &                grid,
          const WatershedParameters & parameters,
          TLabel *                    labels,
          const ExecutionContext &    context = ExecutionContext(),
          RunInfo *                   info    = nullptr);

/** The watershed from markers (ITK's MorphologicalWatershedFromMarkersImageFilter, and
 * MorphologicalWatershedImageFilter with its Level), by flooding, exactly:
 * - Markers. Given: the non-zero pixels of the marker image, each with its label. Not given: the regional minima of
 *   the h-minima transform H = R(min(I + level, top)) of I, the reconstruction by erosion of I + level above I (H = I
 *   for level 0; `top` is the largest value of an integer type, for which I + level is clamped), found with the
 *   connectivity of the run; each connected component of those minima inside the mask is one marker, labelled 1, 2,
 *   ... in raster order of its first pixel (as ITK and scikit-image number theirs). Minima shallower than `level` are
 *   so merged into deeper ones.
 * - Flooding. The Image Foresting Transform (include/chs/ForestingTransform.h) of I from the marker pixels inside the
 *   mask, on the graph of the mask's pixels, where a path costs the largest value of I along it, its marker pixel
 *   included (the arc weight max(I(p), I(q)), and a marker pixel's own cost is I(s) instead of 0): every pixel takes
 *   the label of the marker that its optimum path starts from. Ties are broken by the transform's rule: the hop count
 *   since the path last rose, then the predecessor of smallest key (cost, hop count), then of smallest raster index.
 *   So a pixel joins the marker whose flood reaches it first as the level rises (a marker starts flooding at its own
 *   value, as in ITK's and scikit-image's priority queues); a plateau is split by geodesic distance from where each
 *   flood entered it, where their queues split it in order of arrival.
 * - Pixels outside the mask, and pixels of the mask that no marker reaches, get label 0; marker pixels keep their
 *   label. No marker inside the mask gives label 0 everywhere.
 * This differs from the watershed by steepest descent above (chs::Watershed) on plateaux and at passes;
 * both give one region per regional minimum when level is 0 and no markers or mask are given. */
struct MarkerWatershedParameters
{
  /** false: face neighbours (4 in 2D, 6 in 3D); true: all neighbours (8 in 2D, 26 in 3D). */
  bool fullyConnected = false;
  /** Without markers: the depth below which minima are merged (the h of the h-minima transform); 0, the default,
   * keeps every regional minimum. Must be finite and not negative; a whole number for integer pixel types; 0 when
   * markers are given. */
  double level = 0.0;
  /** Testing only: 64-bit voxel indices in the minima's watershed and in the flood (the path taken from 2^32 - 1
   * voxels on), even for small images. The result is the same. */
  bool forceWideIndex = false;
};

struct MarkerWatershedResult
{
  /** Markers found (without a marker image): the regional minima of the h-minima transform inside the mask. With a
   * marker image: 0. */
  uint64_t markerCount = 0;
  /** Marker pixels inside the mask: the flood's seeds. */
  uint64_t seedCount = 0;
};

/** The watershed from markers of `image` (scalar pixels of up to 32 bits: 8, 16 and 32-bit integers and float; no
 * NaN) into `labels`. `markers` (the label type; null: the minima, see above) and `mask` (one byte a pixel, 0 =
 * outside; null: every pixel) are optional. Any number of voxels, each axis below 2^32 (from 2^32 - 1 voxels on,
 * 64-bit voxel indices). Throws std::invalid_argument for an empty image, 64-bit pixels, a NaN (naming the first such
 * pixel), a bad level, a level with markers, or more markers than the label type holds, before anything is written. */
template <typename T, typename TLabel>
MarkerWatershedResult
MarkerWatershed(const T *                         image,
                const TLabel *                    markers,
                const uint8_t *                   mask,
                const Grid &                      grid,
                const MarkerWatershedParameters & parameters,
                TLabel *                          labels,
                const ExecutionContext &          context = ExecutionContext(),
                RunInfo *                         info    = nullptr);

struct WaterfallParameters
{
  /** The watershed of level 0 (markLines must be false: the levels are partitions). */
  WatershedParameters watershed;
  /** Levels to compute, level 0 included; 0: until one region is left. */
  unsigned numberOfLevels = 0;
};

/** Where the labels of a level go: called once per level, in order, with the level and its region count, before the
 * level is written; returns a buffer of one label per voxel, or null for a level that is not wanted (its labels are
 * then not written, nor copied to the host; the parents of every level are still returned). */
template <typename TLabel>
using WaterfallLevelSink = std::function<TLabel *(unsigned level, uint64_t regionCount)>;

struct WaterfallResult
{
  /** Regions of each level. */
  std::vector<uint64_t> regionCounts;
  /** parents[k][r - 1]: the label at level k + 1 of region r of level k (one vector per level but the last). */
  std::vector<std::vector<uint32_t>> parents;
  /** CUDA: kernel time of the watershed (level 0) and of all the levels after it, in ms; CPU: 0. */
  double watershedMilliseconds = 0.0;
  double levelsMilliseconds    = 0.0;
  /** CUDA: true when the levels after level 0 ran on the region graph of level 0 (the boundaries between its regions,
   * one edge per voxel and other region among its forward neighbours, 12 bytes each for pixels of up to 32 bits,
   * else 16), false when they ran on the voxels. The graph is taken for images of 2^20 voxels or more (below, the
   * voxels took less time) when its edges need no more device memory than the run's voxel arrays (the pixel codes
   * and three voxel indices a voxel); both give the same levels. CPU: false. */
  bool levelsOnRegionGraph = false;
};

/** The waterfall of `image` (defined at the top). Any number of voxels, each axis below 2^32: from
 * 2^32 - 1 voxels on the watershed indexes voxels in 64 bits, as above; the levels number regions in 32 bits, so
 * level 0 must have fewer than 2^32 - 1 regions (std::invalid_argument after the watershed otherwise). */
template <typename T, typename TLabel>
WaterfallResult
Waterfall(const T *                          image,
          const Grid &                       grid,
          const WaterfallParameters &        parameters,
          const WaterfallLevelSink<TLabel> & sink,
          const ExecutionContext &           context = ExecutionContext(),
          RunInfo *                          info    = nullptr);

namespace testing
{
/** Test hook: where the CUDA waterfall runs its levels, for every later run in the process: 0 as its sizes say (the
 * default), 1 on the voxels, 2 on the region graph. */
CudaHierarchicalSegmentation_EXPORT void
SetWaterfallLevelPath(int path);
} // namespace testing

} // namespace chs

#endif
