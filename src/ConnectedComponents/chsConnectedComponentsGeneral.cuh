// Connected components, the general merge: what the tiled merges do not cover (their skips rely on the transitivity
// of equality and on the face and full neighbourhoods). Neighbours within delta, 18-connectivity and periodic
// boundaries: every active voxel unites with each of its backward neighbours (chsConnectedComponentsRules.h, wrapped
// on a torus) in the global union-find whose root is the first voxel of its set, then the roots are counted per
// chunk, and the voxel path's labelling (chsConnectedComponentsStages.cuh) numbers them as it numbers the tiled
// merges' roots. The rules are the CPU reference's (chsConnectedComponentsRules.h), so both give the same labels.
#ifndef chsCCGeneral_cuh
#define chsCCGeneral_cuh

#include "chsConnectedComponentsCommon.cuh"
#include "chsConnectedComponentsRules.h"

namespace chs
{
namespace cc
{

constexpr int kGeneralThreads = 256;

/** The general merge's pixel rule. U is the pixel type, or for signed integers the unsigned type of their width with
 * `bias` the sign bit: a + bias (mod 2^bits) orders and subtracts the bits as the signed values. */
template <typename U>
struct GeneralOp
{
  using D = typename DeltaType<U>::Type;
  const U *       input;
  const uint8_t * mask;
  bool            graph;   // Graph: bit o of a voxel joins it to its o-th backward neighbour
  bool            nonZero; // Binary and NonZeroZones: zero is background
  bool            binary;  // foreground neighbours are connected whatever their values
  bool            exact;   // delta == 0: equality
  D               delta;
  U               bias;

  __device__ bool
  Active(uint64_t i) const
  {
    return (mask == nullptr || mask[i] != 0) && (!nonZero || input[i] != U(0));
  }
  __device__ bool
  Connected(U a, U b, int o) const
  {
    if (graph)
      return GraphJoins<U>(a, o);
    if (binary)
      return true;
    if (exact)
      return a == b;
    if constexpr (std::is_integral<U>::value)
      return WithinDelta<U>(U(a + bias), U(b + bias), delta);
    else
      return WithinDelta<U>(a, b, delta);
  }
};

/** Every voxel its own parent when active, the sentinel otherwise. */
template <typename U, typename I>
__global__ void
__launch_bounds__(kGeneralThreads) GeneralInitKernel(GeneralOp<U> op, I * parent, uint64_t n)
{
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    parent[i] = op.Active(i) ? static_cast<I>(i) : Sentinel<I>();
}

/** Every active voxel unites with its connected backward neighbours (wrapped on a torus when periodic). */
template <typename U, typename I>
__global__ void
__launch_bounds__(kGeneralThreads)
  GeneralMergeKernel(GeneralOp<U> op, I * parent, Extent<I> e, Neighbourhood h, bool periodic)
{
  const uint64_t n      = uint64_t(e.nx) * e.ny * e.nz;
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
  {
    if (parent[i] == Sentinel<I>())
      continue;
    const U       c   = op.input[i];
    const I       row = static_cast<I>(i) / e.nx;
    const int64_t x   = int64_t(static_cast<I>(i) - row * e.nx);
    const int64_t y   = int64_t(row % e.ny);
    const int64_t z   = int64_t(row / e.ny);
    for (int o = 0; o < h.count; ++o)
    {
      const int64_t qx = NeighbourCoordinate(x, h.dx[o], int64_t(e.nx), periodic);
      const int64_t qy = NeighbourCoordinate(y, h.dy[o], int64_t(e.ny), periodic);
      const int64_t qz = NeighbourCoordinate(z, h.dz[o], int64_t(e.nz), periodic);
      if (qx < 0 || qy < 0 || qz < 0)
        continue;
      const uint64_t j = (uint64_t(qz) * e.ny + uint64_t(qy)) * e.nx + uint64_t(qx);
      if (j == i || !op.Active(j) || !op.Connected(c, op.input[j], o))
        continue;
      Unite(parent, static_cast<I>(i), static_cast<I>(j));
    }
  }
}

/** The roots of each chunk of kChunk voxels, counted by one block a chunk (what the tiled merges count as they go). */
template <typename I>
__global__ void
__launch_bounds__(kGeneralThreads) CountRootsKernel(const I * parent, uint64_t n, I * chunkCount)
{
  __shared__ unsigned total;
  if (threadIdx.x == 0)
    total = 0;
  __syncthreads();
  const uint64_t base  = uint64_t(blockIdx.x) << kChunkShift;
  unsigned       roots = 0;
  for (int k = threadIdx.x; k < kChunk; k += kGeneralThreads)
  {
    const uint64_t i = base + k;
    roots += i < n && parent[i] == static_cast<I>(i);
  }
  atomicAdd(&total, roots);
  __syncthreads();
  if (threadIdx.x == 0)
    chunkCount[blockIdx.x] = static_cast<I>(total);
}

/** The general merge: parents in `parent`, root counts in `chunkCount` (chunks of kChunk voxels). */
template <typename U, typename I>
void
LaunchGeneralMerge(const GeneralOp<U> &                 op,
                   I *                                  parent,
                   const Extent<I> &                    e,
                   const Grid &                         grid,
                   const ConnectedComponentParameters & parameters,
                   I *                                  chunkCount,
                   int                                  device,
                   cudaStream_t                         stream)
{
  const uint64_t n      = grid.NumberOfVoxels();
  const unsigned blocks = detail::GridStrideBlocks(n, kGeneralThreads, device);
  GeneralInitKernel<U, I><<<blocks, kGeneralThreads, 0, stream>>>(op, parent, n);
  CHS_CUDA_CHECK_LAUNCH("GeneralInitKernel");
  GeneralMergeKernel<U, I><<<blocks, kGeneralThreads, 0, stream>>>(
    op, parent, e, BackwardNeighbourhood(grid, parameters), parameters.periodic);
  CHS_CUDA_CHECK_LAUNCH("GeneralMergeKernel");
  const uint64_t chunks = (n + kChunk - 1) >> kChunkShift;
  if (chunks > 0x7fffffffull)
    throw std::invalid_argument("chs: image too large for the root count grid");
  CountRootsKernel<I><<<static_cast<unsigned>(chunks), kGeneralThreads, 0, stream>>>(parent, n, chunkCount);
  CHS_CUDA_CHECK_LAUNCH("CountRootsKernel");
}

} // namespace cc
} // namespace chs

#endif
