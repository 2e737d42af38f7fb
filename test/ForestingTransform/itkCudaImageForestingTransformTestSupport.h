// Tests of itk::CudaImageForestingTransformImageFilter and of the chs IFT backends it calls.
// Oracles, independent of both backends: the cost map by its definition (for every threshold t, the pixels that a
// seed reaches by arcs of weight <= t, found by breadth-first search), the hop counts by breadth-first search on
// each plateau of the cost from where it is entered, and hand-made cases with known forests.
// What the Image Foresting Transform tests share: brute force, inputs, helpers.
#ifndef itkCudaImageForestingTransformTestSupport_h
#define itkCudaImageForestingTransformTestSupport_h

#include "itkCudaImageForestingTransformImageFilter.h"
#include "Engines/ForestingTransform/chsForestingTransformBackends.h"
#include "Common/chsTestImages.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <thread>
#include <limits>
#include <random>
#include <set>
#include <tuple>

namespace
{
using namespace chs_test;
using Backend   = itk::CudaSegmentationBackendEnums::Backend;
using ArcWeight = itk::CudaForestingTransformEnums::ArcWeight;

template <typename TW, unsigned D>
using IFT = itk::CudaImageForestingTransformImageFilter<itk::Image<TW, D>, itk::Image<unsigned short, D>>;

template <typename TW, unsigned D>
struct Result
{
  std::vector<unsigned short>                        labels;
  std::vector<typename chs::ForestingCost<TW>::Type> cost;
  std::vector<int64_t>                               predecessor;
  itk::SizeValueType                                 rounds = 0;
};

template <typename TW, unsigned D>
Result<TW, D>
RunIFT(const itk::Image<TW, D> *             weights,
       const itk::Image<unsigned short, D> * seeds,
       Backend                               backend,
       bool                                  full,
       ArcWeight                             arc)
{
  auto filter = IFT<TW, D>::New();
  filter->SetInput(weights);
  filter->SetSeedImage(seeds);
  filter->SetFullyConnected(full);
  filter->SetArcWeight(arc);
  filter->SetBackend(backend);
  filter->Update();
  EXPECT_EQ(filter->GetLastBackend(), backend);
  const size_t  n = weights->GetLargestPossibleRegion().GetNumberOfPixels();
  Result<TW, D> r;
  r.labels.assign(filter->GetOutput()->GetBufferPointer(), filter->GetOutput()->GetBufferPointer() + n);
  r.cost.assign(filter->GetCostOutput()->GetBufferPointer(), filter->GetCostOutput()->GetBufferPointer() + n);
  r.predecessor.assign(filter->GetPredecessorOutput()->GetBufferPointer(),
                       filter->GetPredecessorOutput()->GetBufferPointer() + n);
  r.rounds = filter->GetNumberOfRounds();
  return r;
}

/** The image as a graph: sizes and the neighbours of a pixel, in raster order. */
struct Graph
{
  int64_t nx, ny, nz;
  bool    full;
  template <unsigned D>
  Graph(const itk::Size<D> & s, bool f)
    : nx(s[0])
    , ny(s[1])
    , nz(D == 3 ? s[D - 1] : 1)
    , full(f)
  {
  }
  int64_t
  N() const
  {
    return nx * ny * nz;
  }
  std::vector<int64_t>
  Neighbours(int64_t q) const
  {
    std::vector<int64_t> out;
    const int64_t        x = q % nx, y = q / nx % ny, z = q / (nx * ny);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
        {
          const int m = (dx != 0) + (dy != 0) + (dz != 0);
          if (m == 0 || (!full && m > 1))
            continue;
          const int64_t px = x + dx, py = y + dy, pz = z + dz;
          if (px < 0 || py < 0 || pz < 0 || px >= nx || py >= ny || pz >= nz)
            continue;
          out.push_back((pz * ny + py) * nx + px);
        }
    return out;
  }
};

/** w(p, q) of integer weights, in 64-bit arithmetic (the oracle's own, not the backends'). */
int64_t
Arc(ArcWeight arc, int64_t bp, int64_t bq)
{
  switch (arc)
  {
    case ArcWeight::Target:
      return bq;
    case ArcWeight::Maximum:
      return std::max(bp, bq);
    default:
      return std::abs(bp - bq);
  }
}

/** The oracle's forest: V by thresholds, D by breadth-first search per plateau, P and L by the stated rule. */
struct Oracle
{
  std::vector<int64_t>  V, D, P;
  std::vector<unsigned> L;
};

template <typename TW>
Oracle
BruteForce(const std::vector<TW> & B, const std::vector<unsigned short> & S, const Graph & g, ArcWeight arc)
{
  const int64_t     n = g.N();
  Oracle            o;
  const int64_t     kNone = std::numeric_limits<int64_t>::max();
  std::set<int64_t> thresholds{ 0 };
  for (int64_t q = 0; q < n; ++q)
    for (int64_t p : g.Neighbours(q))
      thresholds.insert(Arc(arc, B[p], B[q]));
  // V(q): the smallest t such that a seed reaches q by arcs p -> q of weight <= t.
  o.V.assign(n, kNone);
  for (int64_t t : thresholds)
  {
    std::vector<uint8_t> seen(n, 0);
    std::deque<int64_t>  queue;
    for (int64_t q = 0; q < n; ++q)
      if (S[q] != 0)
      {
        seen[q] = 1;
        queue.push_back(q);
      }
    while (!queue.empty())
    {
      const int64_t p = queue.front();
      queue.pop_front();
      if (o.V[p] == kNone)
        o.V[p] = S[p] != 0 ? 0 : t;
      for (int64_t q : g.Neighbours(p))
        if (!seen[q] && Arc(arc, B[p], B[q]) <= t)
        {
          seen[q] = 1;
          queue.push_back(q);
        }
    }
  }
  // D: 0 at the seeds and where a plateau of V is entered from below by an arc of weight V; elsewhere the
  // breadth-first distance inside the plateau, along arcs of weight <= V.
  o.D.assign(n, kNone);
  std::deque<int64_t> queue;
  for (int64_t q = 0; q < n; ++q)
  {
    bool entry = S[q] != 0;
    for (int64_t p : g.Neighbours(q))
      entry = entry || (o.V[p] < o.V[q] && Arc(arc, B[p], B[q]) == o.V[q]);
    if (entry)
    {
      o.D[q] = 0;
      queue.push_back(q);
    }
  }
  while (!queue.empty())
  {
    const int64_t p = queue.front();
    queue.pop_front();
    for (int64_t q : g.Neighbours(p))
      if (o.D[q] == kNone && S[q] == 0 && o.V[q] == o.V[p] && Arc(arc, B[p], B[q]) <= o.V[q])
      {
        o.D[q] = o.D[p] + 1;
        queue.push_back(q);
      }
  }
  // P: the neighbour that gives q its (V, D) with the smallest (V, D, index); L from the root.
  o.P.assign(n, -1);
  for (int64_t q = 0; q < n; ++q)
  {
    if (S[q] != 0)
      continue;
    std::tuple<int64_t, int64_t, int64_t> best{ kNone, kNone, kNone };
    for (int64_t p : g.Neighbours(q))
    {
      const int64_t w     = Arc(arc, B[p], B[q]);
      const bool    gives = (o.D[q] == 0 && o.V[p] < o.V[q] && w == o.V[q]) ||
                         (o.D[q] > 0 && o.V[p] == o.V[q] && o.D[p] == o.D[q] - 1 && w <= o.V[q]);
      if (gives)
        best = std::min(best, std::make_tuple(o.V[p], o.D[p], p));
    }
    o.P[q] = std::get<2>(best);
  }
  o.L.assign(n, 0);
  for (int64_t q = 0; q < n; ++q)
  {
    int64_t r = q;
    for (int64_t steps = 0; o.P[r] >= 0 && steps <= n; ++steps)
      r = o.P[r];
    o.L[q] = S[r];
  }
  return o;
}

template <typename TImage>
std::vector<typename TImage::PixelType>
Buffer(const TImage * image)
{
  const size_t n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  return { image->GetBufferPointer(), image->GetBufferPointer() + n };
}

/** Weights 0..levels-1, uniformly random. */
template <typename TW, unsigned D>
typename itk::Image<TW, D>::Pointer
RandomWeights(const itk::Size<D> & size, int levels, unsigned seed)
{
  auto                               image = MakeImage<itk::Image<TW, D>>(size);
  std::mt19937                       rng(seed);
  std::uniform_int_distribution<int> u(0, levels - 1);
  for (size_t i = 0, n = NumberOfPixels(size); i < n; ++i)
    image->GetBufferPointer()[i] = static_cast<TW>(u(rng));
  return image;
}

/** Smoothed noise scaled to 0..scale, optionally quantised to `levels` values (wide plateaux). */
template <typename TW, unsigned D>
typename itk::Image<TW, D>::Pointer
SmoothWeights(const itk::Size<D> & size, double scale, int levels, unsigned seed)
{
  const size_t                     n = NumberOfPixels(size);
  std::vector<double>              v(n);
  std::mt19937                     rng(seed);
  std::normal_distribution<double> g(0.0, 1.0);
  for (auto & x : v)
    x = g(rng);
  // Three box-filter passes along each axis.
  size_t stride = 1;
  for (unsigned d = 0; d < D; ++d)
  {
    for (int pass = 0; pass < 3; ++pass)
    {
      std::vector<double> out(n);
      for (size_t i = 0; i < n; ++i)
      {
        const size_t c = i / stride % size[d];
        double       s = v[i];
        int          k = 1;
        for (int o = 1; o <= 2; ++o)
        {
          if (c >= size_t(o))
            s += v[i - o * stride], ++k;
          if (c + o < size[d])
            s += v[i + o * stride], ++k;
        }
        out[i] = s / k;
      }
      v.swap(out);
    }
    stride *= size[d];
  }
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  auto image          = MakeImage<itk::Image<TW, D>>(size);
  for (size_t i = 0; i < n; ++i)
  {
    double x = (v[i] - *lo) / (*hi - *lo + 1e-12);
    if (levels > 0)
      x = std::floor(x * levels) / levels;
    image->GetBufferPointer()[i] = static_cast<TW>(x * scale);
  }
  return image;
}

/** `count` seeds at random pixels with labels 1..labels; or, with corner, one seed per label in the first corner. */
template <unsigned D>
typename itk::Image<unsigned short, D>::Pointer
Seeds(const itk::Size<D> & size, int count, int labels, unsigned seed, bool corner = false)
{
  auto                                  image = MakeImage<itk::Image<unsigned short, D>>(size);
  const size_t                          n     = NumberOfPixels(size);
  std::mt19937                          rng(seed);
  std::uniform_int_distribution<size_t> where(0, n - 1);
  std::uniform_int_distribution<int>    label(1, labels);
  for (int s = 0; s < count; ++s)
  {
    const size_t i               = corner ? size_t(s) * (size[0] + 1) % n : where(rng);
    image->GetBufferPointer()[i] = static_cast<unsigned short>(corner ? s % labels + 1 : label(rng));
  }
  return image;
}

/** Checks the forest whatever the backend: roots are exactly the seeds (cost 0, their own label), every other
 * pixel's predecessor is a neighbour with the same label whose cost, raised to the arc weight between them, is the
 * pixel's cost, and the predecessors have no cycle. By induction along each path, the path from every pixel ends at
 * a seed with the pixel's label and its largest arc weight is the pixel's cost. */
template <typename TW, unsigned D>
void
ExpectConsistentForest(const std::vector<TW> &             B,
                       const std::vector<unsigned short> & S,
                       const Graph &                       g,
                       ArcWeight                           arc,
                       const Result<TW, D> &               r)
{
  const int64_t n = g.N();
  for (int64_t q = 0; q < n; ++q)
  {
    ASSERT_EQ(r.predecessor[q] < 0, S[q] != 0) << "pixel " << q;
    if (S[q] != 0)
    {
      ASSERT_EQ(r.labels[q], S[q]) << "seed " << q;
      ASSERT_EQ(double(r.cost[q]), 0.0) << "seed " << q;
      continue;
    }
    const int64_t p  = r.predecessor[q];
    const auto    nb = g.Neighbours(q);
    ASSERT_NE(std::find(nb.begin(), nb.end(), p), nb.end()) << "predecessor of " << q << " is not a neighbour";
    const double bp = double(B[p]), bq = double(B[q]);
    const double w = arc == ArcWeight::Target    ? bq
                     : arc == ArcWeight::Maximum ? std::max(bp, bq)
                                                 : double(TW(bp > bq ? B[p] - B[q] : B[q] - B[p]));
    ASSERT_EQ(double(r.cost[q]), std::max(double(r.cost[p]), w)) << "pixel " << q;
    ASSERT_EQ(r.labels[q], r.labels[p]) << "pixel " << q;
  }
  std::vector<uint8_t> state(n, 0); // 0 unvisited, 1 on the current walk, 2 known to reach a root
  for (int64_t q = 0; q < n; ++q)
  {
    std::vector<int64_t> walk;
    int64_t              a = q;
    while (state[a] == 0 && r.predecessor[a] >= 0)
    {
      state[a] = 1;
      walk.push_back(a);
      a = r.predecessor[a];
    }
    ASSERT_NE(state[a], 1) << "the predecessors of pixel " << q << " form a cycle";
    state[a] = 2;
    for (int64_t b : walk)
      state[b] = 2;
  }
}

template <typename TW, unsigned D>
void
ExpectMatchesOracle(const itk::Image<TW, D> *             weights,
                    const itk::Image<unsigned short, D> * seeds,
                    Backend                               backend,
                    bool                                  full,
                    ArcWeight                             arc)
{
  const Graph g(weights->GetLargestPossibleRegion().GetSize(), full);
  const auto  B = Buffer(weights);
  const auto  S = Buffer(seeds);
  const auto  o = BruteForce(B, S, g, arc);
  const auto  r = RunIFT(weights, seeds, backend, full, arc);
  for (int64_t q = 0; q < g.N(); ++q)
  {
    ASSERT_EQ(int64_t(r.cost[q]), o.V[q]) << "cost of pixel " << q;
    ASSERT_EQ(r.predecessor[q], o.P[q]) << "predecessor of pixel " << q;
    ASSERT_EQ(r.labels[q], o.L[q]) << "label of pixel " << q;
  }
  ExpectConsistentForest(B, S, g, arc, r);
}

template <typename TW, unsigned D>
void
ExpectBackendsAgree(const itk::Image<TW, D> *             weights,
                    const itk::Image<unsigned short, D> * seeds,
                    bool                                  full,
                    ArcWeight                             arc,
                    const char *                          what)
{
  SCOPED_TRACE(what);
  const auto cpu = RunIFT(weights, seeds, Backend::CPU, full, arc);
  for (int run = 0; run < 2; ++run)
  {
    const auto gpu = RunIFT(weights, seeds, Backend::CUDA, full, arc);
    ASSERT_EQ(gpu.cost, cpu.cost) << "run " << run;
    ASSERT_EQ(gpu.predecessor, cpu.predecessor) << "run " << run;
    ASSERT_EQ(gpu.labels, cpu.labels) << "run " << run;
  }
  const Graph g(weights->GetLargestPossibleRegion().GetSize(), full);
  ExpectConsistentForest(Buffer(weights), Buffer(seeds), g, arc, cpu);
}

const ArcWeight kArcs[] = { ArcWeight::Target, ArcWeight::Maximum, ArcWeight::AbsoluteDifference };

// ---- Hand-made cases -------------------------------------------------------------------------------------------

// ---- The CPU reference against the oracle ------------------------------------------------------------------------

// ---- GPU against the CPU reference -----------------------------------------------------------------------------

// ---- Bad input, geometry, limits ------------------------------------------------------------------------------

// ---- 64-bit voxel indices ---------------------------------------------------------------------------------------

/** The transform through the ITK-free API (which has the test hook for the 64-bit path). */
template <typename TW, unsigned D>
Result<TW, D>
RunApi(const itk::Image<TW, D> *             weights,
       const itk::Image<unsigned short, D> * seeds,
       bool                                  gpu,
       bool                                  full,
       ArcWeight                             arc,
       bool                                  wide)
{
  chs::Grid grid;
  grid.dimension  = D;
  const auto size = weights->GetLargestPossibleRegion().GetSize();
  for (unsigned d = 0; d < D; ++d)
    grid.size[d] = size[d];
  chs::ForestingTransformParameters p;
  p.fullyConnected = full;
  p.arcWeight      = arc == ArcWeight::Target    ? chs::ArcWeightFunction::Target
                     : arc == ArcWeight::Maximum ? chs::ArcWeightFunction::Maximum
                                                 : chs::ArcWeightFunction::AbsoluteDifference;
  p.forceWideIndex = wide;
  const size_t  n  = NumberOfPixels(size);
  Result<TW, D> r;
  r.labels.assign(n, 0);
  r.cost.assign(n, 0);
  r.predecessor.assign(n, 0);
  if (gpu)
    chs::ImageForestingTransformCUDA(weights->GetBufferPointer(),
                                     seeds->GetBufferPointer(),
                                     grid,
                                     p,
                                     r.labels.data(),
                                     r.cost.data(),
                                     r.predecessor.data(),
                                     chs::ExecutionContext{});
  else
    chs::ImageForestingTransformCPU(weights->GetBufferPointer(),
                                    seeds->GetBufferPointer(),
                                    grid,
                                    p,
                                    r.labels.data(),
                                    r.cost.data(),
                                    r.predecessor.data());
  return r;
}

template <typename TW, unsigned D>
void
ExpectWidePathAgrees(const itk::Image<TW, D> *             weights,
                     const itk::Image<unsigned short, D> * seeds,
                     bool                                  full,
                     ArcWeight                             arc,
                     const char *                          what)
{
  SCOPED_TRACE(what);
  const auto expected = RunApi(weights, seeds, false, full, arc, false);
  for (bool gpu : { false, true })
  {
    const auto wide = RunApi(weights, seeds, gpu, full, arc, true);
    EXPECT_EQ(wide.labels, expected.labels) << (gpu ? "CUDA" : "CPU");
    EXPECT_EQ(wide.cost, expected.cost) << (gpu ? "CUDA" : "CPU");
    EXPECT_EQ(wide.predecessor, expected.predecessor) << (gpu ? "CUDA" : "CPU");
  }
}

} // namespace

#endif
