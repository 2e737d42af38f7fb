// Watershed, step II: the distances of the non-minimal plateau pixels from the pixels of their plateau that
// descend. SyncStepKernel relaxes every pixel once per launch (PRUFsync); TileKernel relaxes a block's tile in
// shared memory until it no longer changes, then hands its border to the neighbouring tiles at the next launch
// (PRUFbal; with Async, PRUFasync: a distance once set is not corrected).
#ifndef chsWSPlateau_cuh
#define chsWSPlateau_cuh

#include "chsWatershedCommon.cuh"

namespace chs
{
namespace ws
{

/** One synchronous relaxation step: D(p) = min(D(p), min over equal neighbours q of D(q) + 1). Distances only
 * decrease and are always lengths of real paths, so reading a neighbour another thread is updating is harmless and
 * the fixed point (the breadth-first distances) is reached whatever the order. */
template <bool Full, int ZR, typename C, typename P>
__global__ void
SyncStepKernel(const C * I, ShapeT<P> s, uint32_t * D, unsigned * changes)
{
  bool changed = false;
  ForEachPixel(s,
               [&](P p, uint32_t x, uint32_t y, uint32_t z)
               {
                 const uint32_t d = D[p];
                 if (d == 0)
                   return;
                 const C  v    = I[p];
                 uint32_t best = d;
                 ForEachNeighbour<Full, ZR>(s,
                                            x,
                                            y,
                                            z,
                                            p,
                                            [&](P q)
                                            {
                                              if (I[q] == v)
                                              {
                                                const uint32_t dq = D[q];
                                                if (dq != kNoDistance && dq + 1 < best)
                                                  best = dq + 1;
                                              }
                                            });
                 if (best < d)
                 {
                   D[p]    = best;
                   changed = true;
                 }
               });
  CountChange(changed, changes);
}

/** The shared-memory tile of a block: bx x by x bz pixels, one thread each, with a one-pixel halo (none across z in
 * 2D). Cells outside the image have no distance, so they never offer one. */
struct TileShape
{
  uint32_t bx, by, bz;
  __device__ __forceinline__ uint32_t
  HX() const
  {
    return bx + 2;
  }
  __device__ __forceinline__ uint32_t
  HY() const
  {
    return by + 2;
  }
};

/** Relaxes the tile's plateau distances to a fixed point in shared memory. Reads Din, writes Dout: the same buffer
 * for the balanced resolution (monotone, so reading other tiles' fresh values is harmless); two buffers for the
 * asynchronous one, whose result would otherwise depend on which tiles ran first. Tiles without plateau pixels
 * return at once (their distances are all 0 and never change, in both buffers). */
template <bool Full, int ZR, bool Async, typename C, typename P>
__global__ void
TileKernel(const C * I, ShapeT<P> s, TileShape t, const uint32_t * Din, uint32_t * Dout, unsigned * changes)
{
  extern __shared__ uint32_t sD[];
  const uint32_t             hx = t.HX(), hy = t.HY(), hz = t.bz + 2 * ZR, cells = hx * hy * hz;
  C *                        sI  = reinterpret_cast<C *>(sD + cells);
  const uint32_t             tid = threadIdx.x;
  const uint32_t             tx = tid % t.bx, ty = tid / t.bx % t.by, tz = tid / (t.bx * t.by);
  const uint32_t             x0 = blockIdx.x * t.bx, y0 = blockIdx.y * t.by, z0 = blockIdx.z * t.bz;
  const uint32_t             x = x0 + tx, y = y0 + ty, z = z0 + tz;
  const bool                 inside = x < s.nx && y < s.ny && z < s.nz;
  const P                    p      = inside ? x + P(s.nx) * (y + P(s.ny) * z) : 0;
  uint32_t                   mine   = inside ? Din[p] : 0;
  if (!__syncthreads_or(inside && mine != 0))
    return;
  for (uint32_t i = tid; i < cells; i += blockDim.x)
  {
    const uint32_t cx = i % hx, cy = i / hx % hy, cz = i / (hx * hy);
    const int64_t  gx = int64_t(x0) + cx - 1, gy = int64_t(y0) + cy - 1, gz = int64_t(z0) + cz - ZR;
    const bool     in = gx >= 0 && gy >= 0 && gz >= 0 && gx < s.nx && gy < s.ny && gz < s.nz;
    const P        g  = in ? P(gx + int64_t(s.nx) * (gy + int64_t(s.ny) * gz)) : 0;
    sD[i]             = in ? Din[g] : kNoDistance;
    sI[i]             = in ? I[g] : C(0);
  }
  __syncthreads();
  const uint32_t c       = (tx + 1) + hx * ((ty + 1) + hy * (tz + ZR));
  const C        v       = sI[c];
  const bool     plateau = inside && mine != 0;
  bool           any     = false;
  for (;;)
  {
    uint32_t best = mine;
    if (plateau && (!Async || mine == kNoDistance))
      ForNeighbours<Full, ZR>(
        [&](int dx, int dy, int dz)
        {
          const uint32_t cc = c + uint32_t(dx) + hx * (uint32_t(dy) + hy * uint32_t(dz));
          if (sI[cc] == v)
          {
            const uint32_t d = sD[cc];
            if (d != kNoDistance && d + 1 < best)
              best = d + 1;
          }
        });
    const bool changed = best < mine;
    __syncthreads(); // every read of this step is done
    if (changed)
    {
      mine  = best;
      sD[c] = best;
      any   = true;
    }
    if (!__syncthreads_or(changed))
      break;
  }
  if (inside && (Async || any))
    Dout[p] = mine;
  CountChange(any, changes);
}

} // namespace ws
} // namespace chs

#endif
