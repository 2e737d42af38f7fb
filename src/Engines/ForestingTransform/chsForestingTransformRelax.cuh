// Image Foresting Transform, stage 1: the keys (V, D) by relaxation rounds (RelaxKernel). A block loads its tile
// and the one-pixel halo around it into shared memory and replaces every key by the smallest offer of its
// neighbours until no key in the tile changes (a Jacobi sweep a step, so that shared memory has no race), then
// writes back what changed. The halo is read at the start of the round and not again: what crosses a tile border
// crosses it in the next round. A round runs only the tiles that changed, or touch a tile that changed, in the
// round before (all of them in the first), and counts the tiles it changed; rounds go on until one changes none.
// Keys only ever decrease and any key read is the key of a real path, so the concurrent reads of another block's
// border in global memory are harmless: the fixed point, and so the result, is the same whatever the timing.
#ifndef chsIFTRelax_cuh
#define chsIFTRelax_cuh

#include "chsForestingTransformCommon.cuh"

namespace chs
{
namespace ift
{

/** Seeds get key (0, 0) (or (handicap, 0), or (B(s), 0)), other pixels, and every pixel outside the mask, kUnreached.
 * Counts the seeds and finds the first pixel with an invalid weight (status[0]: seed count, status[1]: smallest invalid
 * index, n if none); with signBitInvalid, unsigned weights whose top bit is set are invalid (they are the bits of
 * negative signed weights). */
template <typename TW, typename TLabel>
__global__ void
InitializeKernel(const TW *           B,
                 const TLabel *       seeds,
                 const uint8_t *      mask,
                 const uint32_t *     handicap,
                 bool                 weightCost,
                 bool                 signBitInvalid,
                 uint64_t *           K,
                 uint64_t             n,
                 unsigned long long * status)
{
  constexpr unsigned kTopBit = 8 * sizeof(TW) - 1;
  unsigned long long count   = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
  {
    const bool     seed = seeds[i] != 0 && (!mask || mask[i]);
    const uint64_t cost = handicap ? handicap[i] : weightCost ? EncodeOrdered(B[i]) : 0;
    K[i]                = seed ? cost << 32 : kUnreached;
    count += seed;
    bool valid = ValidWeight(B[i]);
    if constexpr (std::is_integral<TW>::value && std::is_unsigned<TW>::value)
      valid = valid && !(signBitInvalid && (B[i] >> kTopBit) != 0);
    if (!valid)
      atomicMin(status + 1, static_cast<unsigned long long>(i));
  }
  for (int o = 16; o > 0; o >>= 1)
    count += __shfl_down_sync(0xffffffffu, count, o);
  if ((threadIdx.x & 31) == 0 && count)
    atomicAdd(status, count);
}

template <ArcWeightFunction F, bool Full, class TileT, typename TW>
__global__ void
__launch_bounds__(TileT::Threads) RelaxKernel(const TW *      B,
                                              const uint8_t * mask,
                                              uint64_t *      K,
                                              Extent          e,
                                              const uint8_t * changedBefore,
                                              uint8_t *       changedNow,
                                              unsigned *      changedTiles,
                                              bool            first)
{
  constexpr int       ZR = TileT::ZR, HX = TileT::HX, HY = TileT::HY;
  __shared__ uint64_t Ks[TileT::Cells];
  __shared__ TW       Bs[TileT::Cells];

  const unsigned tile = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  // Run when this tile or one around it changed in the last round: threads 0..26 look at one tile each.
  bool look = first;
  if (!first && threadIdx.x < 27)
  {
    const int dx = int(threadIdx.x % 3) - 1, dy = int(threadIdx.x / 3 % 3) - 1, dz = int(threadIdx.x / 9) - 1;
    const int bx = int(blockIdx.x) + dx, by = int(blockIdx.y) + dy, bz = int(blockIdx.z) + dz;
    look = bx >= 0 && by >= 0 && bz >= 0 && bx < int(gridDim.x) && by < int(gridDim.y) && bz < int(gridDim.z) &&
           changedBefore[(unsigned(bz) * gridDim.y + unsigned(by)) * gridDim.x + unsigned(bx)] != 0;
  }
  if (!__syncthreads_or(look))
  {
    if (threadIdx.x == 0)
      changedNow[tile] = 0;
    return;
  }

  const int x0 = int(blockIdx.x) * TileT::X - 1, y0 = int(blockIdx.y) * TileT::Y - 1,
            z0 = int(blockIdx.z) * TileT::Z - ZR;
  for (int c = threadIdx.x; c < TileT::Cells; c += TileT::Threads)
  {
    const int      x = x0 + c % HX, y = y0 + c / HX % HY, z = z0 + c / (HX * HY);
    const bool     in = x >= 0 && y >= 0 && z >= 0 && x < int(e.nx) && y < int(e.ny) && z < int(e.nz);
    const uint64_t g  = in ? (uint64_t(z) * e.ny + unsigned(y)) * e.nx + unsigned(x) : 0;
    Ks[c]             = in ? K[g] : kUnreached;
    Bs[c]             = in ? B[g] : TW(0);
  }
  __syncthreads();

  const int tx = threadIdx.x % TileT::X, ty = threadIdx.x / TileT::X % TileT::Y,
            tz     = threadIdx.x / (TileT::X * TileT::Y);
  const int      c = ((tz + ZR) * HY + ty + 1) * HX + tx + 1;
  const unsigned x = unsigned(x0 + 1 + tx), y = unsigned(y0 + 1 + ty), z = unsigned(z0 + ZR + tz);
  // Pixels outside the mask keep kUnreached: they take no offer, and so make none.
  const bool inside = x < e.nx && y < e.ny && z < e.nz && (!mask || mask[(uint64_t(z) * e.ny + y) * e.nx + x]);
  // The arc weights into this pixel do not change: one register each.
  uint32_t w[Full ? (ZR ? 26 : 8) : (ZR ? 6 : 4)];
  {
    const TW bq = Bs[c];
    int      k  = 0;
    ForNeighbours<Full, ZR>([&](int dx, int dy, int dz)
                            { w[k++] = ArcWeight<F>(Bs[c + (dz * HY + dy) * HX + dx], bq); });
  }
  const uint64_t start = Ks[c];
  bool           any;
  do
  {
    const uint64_t mine = Ks[c];
    uint64_t       best = mine;
    int            k    = 0;
    ForNeighbours<Full, ZR>(
      [&](int dx, int dy, int dz)
      {
        const uint64_t kp = Ks[c + (dz * HY + dy) * HX + dx];
        if (kp != kUnreached)
          best = min(best, Offer(kp, w[k]));
        ++k;
      });
    const bool improved = inside && best < mine;
    any                 = __syncthreads_or(improved);
    if (improved)
      Ks[c] = best;
    __syncthreads();
  } while (any);

  const bool changed = inside && Ks[c] != start;
  if (changed)
    K[(uint64_t(z) * e.ny + y) * e.nx + x] = Ks[c];
  const bool tileChanged = __syncthreads_or(changed);
  if (threadIdx.x == 0)
  {
    changedNow[tile] = tileChanged;
    if (tileChanged)
      atomicAdd(changedTiles, 1u);
  }
}

} // namespace ift
} // namespace chs

#endif
