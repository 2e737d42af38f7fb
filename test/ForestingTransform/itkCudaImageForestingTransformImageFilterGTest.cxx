// Tests of itk::CudaImageForestingTransformImageFilter and of the chs IFT backends it calls.
// Oracles, independent of both backends: the cost map by its definition (for every threshold t, the pixels that a
// seed reaches by arcs of weight <= t, found by breadth-first search), the hop counts by breadth-first search on
// each plateau of the cost from where it is entered, and hand-made cases with known forests.
#include "itkCudaImageForestingTransformImageFilter.h"
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

TEST(CudaImageForestingTransformImageFilter, PlateauBetweenTwoSeedsSplitsByDistanceThenIndex)
{
  // A row of equal weights between seeds 1 (x = 0) and 2 (x = 6): V = 5 everywhere but at the seeds; x = 1 and
  // x = 5 enter the plateau (D = 0), x = 3 is two steps from both and takes the smaller index, x = 2.
  using W                      = itk::Image<uint8_t, 2>;
  auto weights                 = MakeImage<W>(Size<W>({ 7, 1 }), 5);
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 7, 1 }));
  seeds->GetBufferPointer()[0] = 1;
  seeds->GetBufferPointer()[6] = 2;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<uint8_t, 2>(weights, seeds, b, false, ArcWeight::Target);
    EXPECT_EQ(r.labels, (std::vector<unsigned short>{ 1, 1, 1, 1, 2, 2, 2 }));
    EXPECT_EQ(r.cost, (std::vector<uint32_t>{ 0, 5, 5, 5, 5, 5, 0 }));
    EXPECT_EQ(r.predecessor, (std::vector<int64_t>{ -1, 0, 1, 2, 5, 6, -1 }));
  }
}

TEST(CudaImageForestingTransformImageFilter, PlateauIsSplitFromWhereEachPathEnteredIt)
{
  // Weights 9 9 9 9 9 9 9 2 1 0 with seed 1 at x = 0 and seed 2 at x = 9 (Target arcs). Seed 2 climbs 1, 2 and
  // enters the plateau of 9 at x = 6 with cost 9; seed 1 enters it at x = 1 with cost 9 too. x = 2..3 are nearer
  // x = 1's entry (D = 1, 2), x = 5 nearer x = 6's (D = 1); x = 4 is at D = 3 from x = 1 and D = 2 from x = 6:
  // seed 2's.
  using W               = itk::Image<uint8_t, 2>;
  auto          weights = MakeImage<W>(Size<W>({ 10, 1 }));
  const uint8_t b[]     = { 9, 9, 9, 9, 9, 9, 9, 2, 1, 0 };
  std::copy(b, b + 10, weights->GetBufferPointer());
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 10, 1 }));
  seeds->GetBufferPointer()[0] = 1;
  seeds->GetBufferPointer()[9] = 2;
  for (Backend bk : { Backend::CPU, Backend::CUDA })
  {
    if (bk == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<uint8_t, 2>(weights, seeds, bk, false, ArcWeight::Target);
    EXPECT_EQ(r.labels, (std::vector<unsigned short>{ 1, 1, 1, 1, 2, 2, 2, 2, 2, 2 }));
    EXPECT_EQ(r.cost, (std::vector<uint32_t>{ 0, 9, 9, 9, 9, 9, 9, 2, 1, 0 }));
    EXPECT_EQ(r.predecessor, (std::vector<int64_t>{ -1, 0, 1, 2, 5, 6, 7, 8, 9, -1 }));
  }
}

TEST(CudaImageForestingTransformImageFilter, OneSeedLabelsEveryPixel)
{
  using W      = itk::Image<float, 3>;
  auto weights = SmoothWeights<float, 3>(Size<W>({ 23, 19, 17 }), 100.0, 0, 3);
  auto seeds   = MakeImage<itk::Image<unsigned short, 3>>(weights->GetLargestPossibleRegion().GetSize());
  seeds->GetBufferPointer()[1234] = 7;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    const auto r = RunIFT<float, 3>(weights, seeds, b, true, ArcWeight::Maximum);
    EXPECT_TRUE(std::all_of(r.labels.begin(), r.labels.end(), [](unsigned short l) { return l == 7; }));
  }
}

// ---- The CPU reference against the oracle ------------------------------------------------------------------------

TEST(CudaImageForestingTransformImageFilter, CPUReferenceMatchesBruteForce2D)
{
  unsigned seed = 1;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
      for (int levels : { 2, 4, 50 })
      {
        SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc) << " levels " << levels);
        auto weights = RandomWeights<uint8_t, 2>(Size<itk::Image<uint8_t, 2>>({ 19, 13 }), levels, seed++);
        auto seeds   = Seeds<2>(weights->GetLargestPossibleRegion().GetSize(), 6, 3, seed++);
        ExpectMatchesOracle<uint8_t, 2>(weights, seeds, Backend::CPU, full, arc);
      }
}

TEST(CudaImageForestingTransformImageFilter, CPUReferenceMatchesBruteForce3D)
{
  unsigned seed = 100;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
      for (int levels : { 3, 40 })
      {
        SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc) << " levels " << levels);
        auto weights = RandomWeights<int16_t, 3>(Size<itk::Image<int16_t, 3>>({ 9, 7, 6 }), levels, seed++);
        auto seeds   = Seeds<3>(weights->GetLargestPossibleRegion().GetSize(), 4, 3, seed++);
        ExpectMatchesOracle<int16_t, 3>(weights, seeds, Backend::CPU, full, arc);
      }
}

TEST(CudaImageForestingTransformImageFilter, CPUForestIsConsistentOnLargerImages)
{
  using W2 = itk::Image<float, 2>;
  using W3 = itk::Image<uint16_t, 3>;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      SCOPED_TRACE(::testing::Message() << "full " << full << " arc " << int(arc));
      auto w2 = SmoothWeights<float, 2>(Size<W2>({ 250, 170 }), 100.0, 0, 11);
      auto s2 = Seeds<2>(w2->GetLargestPossibleRegion().GetSize(), 30, 10, 12);
      ExpectConsistentForest(Buffer(w2.GetPointer()),
                             Buffer(s2.GetPointer()),
                             Graph(w2->GetLargestPossibleRegion().GetSize(), full),
                             arc,
                             RunIFT<float, 2>(w2, s2, Backend::CPU, full, arc));
      auto w3 = SmoothWeights<uint16_t, 3>(Size<W3>({ 40, 30, 20 }), 900.0, 6, 13);
      auto s3 = Seeds<3>(w3->GetLargestPossibleRegion().GetSize(), 12, 4, 14);
      ExpectConsistentForest(Buffer(w3.GetPointer()),
                             Buffer(s3.GetPointer()),
                             Graph(w3->GetLargestPossibleRegion().GetSize(), full),
                             arc,
                             RunIFT<uint16_t, 3>(w3, s3, Backend::CPU, full, arc));
    }
}

// ---- GPU against the CPU reference -----------------------------------------------------------------------------

TEST(CudaImageForestingTransformImageFilter, GPUMatchesBruteForce)
{
  CHS_REQUIRE_GPU();
  unsigned seed = 200;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      auto w2 = RandomWeights<uint8_t, 2>(Size<itk::Image<uint8_t, 2>>({ 45, 37 }), 3, seed++);
      ExpectMatchesOracle<uint8_t, 2>(
        w2, Seeds<2>(w2->GetLargestPossibleRegion().GetSize(), 5, 3, seed++), Backend::CUDA, full, arc);
      auto w3 = RandomWeights<uint16_t, 3>(Size<itk::Image<uint16_t, 3>>({ 13, 11, 10 }), 4, seed++);
      ExpectMatchesOracle<uint16_t, 3>(
        w3, Seeds<3>(w3->GetLargestPossibleRegion().GetSize(), 4, 3, seed++), Backend::CUDA, full, arc);
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUMatchesCPU2D)
{
  CHS_REQUIRE_GPU();
  using W8      = itk::Image<uint8_t, 2>;
  using WF      = itk::Image<float, 2>;
  unsigned seed = 300;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto size = Size<W8>({ 301, 197 });
      ExpectBackendsAgree<uint8_t, 2>(
        RandomWeights<uint8_t, 2>(size, 256, seed), Seeds<2>(size, 40, 9, seed + 1), full, arc, "random uint8");
      ExpectBackendsAgree<float, 2>(SmoothWeights<float, 2>(size, 1000.0, 0, seed + 2),
                                    Seeds<2>(size, 40, 9, seed + 3),
                                    full,
                                    arc,
                                    "smoothed noise, float");
      ExpectBackendsAgree<uint8_t, 2>(SmoothWeights<uint8_t, 2>(size, 250.0, 5, seed + 4),
                                      Seeds<2>(size, 30, 30, seed + 5),
                                      full,
                                      arc,
                                      "quantised, wide plateaux");
      ExpectBackendsAgree<uint8_t, 2>(MakeImage<W8>(size, 3), Seeds<2>(size, 25, 25, seed + 6), full, arc, "constant");
      ExpectBackendsAgree<float, 2>(SmoothWeights<float, 2>(Size<WF>({ 700, 90 }), 50.0, 8, seed + 7),
                                    Seeds<2>(Size<WF>({ 700, 90 }), 3, 3, seed + 8, true),
                                    full,
                                    arc,
                                    "seeds in one corner");
      seed += 10;
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUMatchesCPU3D)
{
  CHS_REQUIRE_GPU();
  using W       = itk::Image<int16_t, 3>;
  unsigned seed = 400;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto size = Size<W>({ 37, 29, 23 });
      ExpectBackendsAgree<int16_t, 3>(
        RandomWeights<int16_t, 3>(size, 1000, seed), Seeds<3>(size, 30, 5, seed + 1), full, arc, "random int16");
      ExpectBackendsAgree<float, 3>(SmoothWeights<float, 3>(size, 10.0, 0, seed + 2),
                                    Seeds<3>(size, 20, 20, seed + 3),
                                    full,
                                    arc,
                                    "smoothed noise, float");
      ExpectBackendsAgree<uint32_t, 3>(SmoothWeights<uint32_t, 3>(size, 100000.0, 4, seed + 4),
                                       Seeds<3>(size, 20, 4, seed + 5),
                                       full,
                                       arc,
                                       "quantised uint32");
      ExpectBackendsAgree<uint8_t, 3>(SmoothWeights<uint8_t, 3>(Size<W>({ 90, 20, 18 }), 30.0, 3, seed + 6),
                                      Seeds<3>(Size<W>({ 90, 20, 18 }), 2, 2, seed + 7, true),
                                      full,
                                      arc,
                                      "seeds in one corner");
      seed += 10;
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUCheckerboardAndRamp)
{
  CHS_REQUIRE_GPU();
  using W          = itk::Image<uint16_t, 2>;
  const auto size  = Size<W>({ 130, 66 });
  auto       board = Checkerboard<W>(size);
  auto       ramp  = MakeImage<W>(size);
  for (size_t i = 0; i < NumberOfPixels(size); ++i)
    ramp->GetBufferPointer()[i] = static_cast<uint16_t>(i % size[0]);
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      ExpectBackendsAgree<uint16_t, 2>(board, Seeds<2>(size, 12, 4, 7), full, arc, "checkerboard");
      ExpectBackendsAgree<uint16_t, 2>(ramp, Seeds<2>(size, 12, 4, 8), full, arc, "ramp");
    }
}

TEST(CudaImageForestingTransformImageFilter, GPUSignedWeightsAgreeAndNegativesThrow)
{
  // Signed weights run as the unsigned integers of their bits (src/ForestingTransform/chsForestingTransformSigned.cu):
  // the CPU reference's transform over the whole non-negative range, and the first negative weight (raster order)
  // named as the CPU reference names it, nothing written, the filter running again after.
  CHS_REQUIRE_GPU();
  const itk::Size<2> size = { { 45, 37 } };
  unsigned           seed = 700;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      ExpectBackendsAgree<int8_t, 2>(
        RandomWeights<int8_t, 2>(size, 128, seed), Seeds<2>(size, 20, 5, seed + 1), full, arc, "random int8, 0..127");
      auto w32                      = RandomWeights<int32_t, 2>(size, 1000, seed + 2);
      w32->GetBufferPointer()[100]  = std::numeric_limits<int32_t>::max();
      w32->GetBufferPointer()[1000] = std::numeric_limits<int32_t>::max();
      ExpectBackendsAgree<int32_t, 2>(w32, Seeds<2>(size, 20, 5, seed + 3), full, arc, "int32 with its largest value");
      seed += 10;
    }
  auto weights                             = RandomWeights<int16_t, 2>(size, 50, 17);
  weights->GetBufferPointer()[5 * 45 + 2]  = std::numeric_limits<int16_t>::min();
  weights->GetBufferPointer()[3 * 45 + 40] = -1; // the first in raster order
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    auto filter = IFT<int16_t, 2>::New();
    filter->SetInput(weights);
    filter->SetSeedImage(Seeds<2>(size, 20, 5, 18));
    filter->SetBackend(b);
    try
    {
      filter->Update();
      ADD_FAILURE() << "negative weight: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("(40, 3)"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";
  }
  weights->GetBufferPointer()[5 * 45 + 2]  = 0;
  weights->GetBufferPointer()[3 * 45 + 40] = std::numeric_limits<int16_t>::max();
  weights->Modified();
  ExpectBackendsAgree<int16_t, 2>(weights, Seeds<2>(size, 20, 5, 18), true, ArcWeight::Maximum, "int16 after the fix");
}

// ---- Bad input, geometry, limits ------------------------------------------------------------------------------

TEST(CudaImageForestingTransformImageFilter, BadInputThrowsAndTheFilterRunsAgain)
{
  using W = itk::Image<float, 2>;
  using S = itk::Image<unsigned short, 2>;
  for (Backend b : { Backend::CPU, Backend::CUDA })
  {
    if (b == Backend::CUDA && !HasCudaDevice())
      continue;
    auto weights = MakeImage<W>(Size<W>({ 40, 30 }), 1.0f);
    auto seeds   = MakeImage<S>(Size<S>({ 40, 30 }));
    auto filter  = IFT<float, 2>::New();
    filter->SetInput(weights);
    filter->SetBackend(b);

    filter->SetSeedImage(MakeImage<S>(Size<S>({ 40, 31 })));
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "seed image of another size";

    filter->SetSeedImage(seeds);
    try
    {
      filter->Update();
      ADD_FAILURE() << "no seed: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("no seed"), std::string::npos) << e.GetDescription();
    }
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr) << "nothing half-written";

    seeds->GetBufferPointer()[5] = 3;
    seeds->Modified();
    weights->GetBufferPointer()[2 * 40 + 7] = std::numeric_limits<float>::quiet_NaN();
    weights->Modified();
    try
    {
      filter->Update();
      ADD_FAILURE() << "NaN weight: no exception";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("(7, 2)"), std::string::npos) << e.GetDescription();
    }
    weights->GetBufferPointer()[2 * 40 + 7] = -1.0f;
    weights->Modified();
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "negative weight";

    weights->GetBufferPointer()[2 * 40 + 7] = 1.0f;
    weights->Modified();
    ASSERT_NO_THROW(filter->Update());
    EXPECT_EQ(filter->GetSeedCount(), 1u);
    const auto * l = filter->GetOutput()->GetBufferPointer();
    EXPECT_TRUE(std::all_of(l, l + 1200, [](unsigned short v) { return v == 3; }));
  }
}

TEST(CudaImageForestingTransformImageFilter, OutputsKeepTheInputGeometry)
{
  using W                 = itk::Image<uint8_t, 3>;
  auto         weights    = RandomWeights<uint8_t, 3>(Size<W>({ 6, 5, 4 }), 10, 9);
  const double spacing[3] = { 0.5, 2.0, 3.0 };
  const double origin[3]  = { -1.0, 4.0, 9.0 };
  weights->SetSpacing(spacing);
  weights->SetOrigin(origin);
  auto seeds = Seeds<3>(weights->GetLargestPossibleRegion().GetSize(), 2, 2, 3);
  seeds->SetSpacing(spacing);
  seeds->SetOrigin(origin);
  auto filter = IFT<uint8_t, 3>::New();
  filter->SetInput(weights);
  filter->SetSeedImage(seeds);
  filter->SetBackend(Backend::CPU);
  filter->Update();
  for (const itk::ImageBase<3> * out : { static_cast<const itk::ImageBase<3> *>(filter->GetOutput()),
                                         static_cast<const itk::ImageBase<3> *>(filter->GetCostOutput()),
                                         static_cast<const itk::ImageBase<3> *>(filter->GetPredecessorOutput()) })
  {
    EXPECT_EQ(out->GetSpacing(), weights->GetSpacing());
    EXPECT_EQ(out->GetOrigin(), weights->GetOrigin());
    EXPECT_EQ(out->GetLargestPossibleRegion(), weights->GetLargestPossibleRegion());
  }
}

TEST(CudaImageForestingTransformImageFilter, GPURoundLimitThrows)
{
  CHS_REQUIRE_GPU();
  // One seed in a corner of a 600 x 600 image: the front crosses about 19 tiles each way, far more than 3 rounds.
  using W                      = itk::Image<uint8_t, 2>;
  auto weights                 = RandomWeights<uint8_t, 2>(Size<W>({ 600, 600 }), 200, 5);
  auto seeds                   = MakeImage<itk::Image<unsigned short, 2>>(Size<W>({ 600, 600 }));
  seeds->GetBufferPointer()[0] = 1;
  auto filter                  = IFT<uint8_t, 2>::New();
  filter->SetInput(weights);
  filter->SetSeedImage(seeds);
  filter->SetBackend(Backend::CUDA);
  filter->SetMaximumNumberOfRounds(3); // fewer than a batch of rounds: the limit is exact
  try
  {
    filter->Update();
    ADD_FAILURE() << "no exception at the round limit";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("did not converge within 3 rounds"), std::string::npos)
      << e.GetDescription();
  }
  filter->SetMaximumNumberOfRounds(0);
  ASSERT_NO_THROW(filter->Update());
  EXPECT_GT(filter->GetNumberOfRounds(), 3u);
}

TEST(CudaImageForestingTransformImageFilter, GPUAllocationFailureThrowsAndLeaksNothing)
{
  CHS_REQUIRE_GPU();
  using W             = itk::Image<float, 2>;
  auto     weights    = SmoothWeights<float, 2>(Size<W>({ 256, 256 }), 10.0, 0, 4);
  auto     seeds      = Seeds<2>(weights->GetLargestPossibleRegion().GetSize(), 20, 5, 6);
  uint64_t freeBefore = 0, total = 0, freeAfter = 0;
  chs::CudaDeviceMemoryInfo(0, freeBefore, total);
  for (int k = 1; k <= 8; ++k)
  {
    auto filter = IFT<float, 2>::New();
    filter->SetInput(weights);
    filter->SetSeedImage(seeds);
    filter->SetBackend(Backend::CUDA);
    chs::testing::FailDeviceAllocationAfter(k);
    bool threw = false;
    try
    {
      filter->Update();
    }
    catch (const itk::ExceptionObject &)
    {
      threw = true;
    }
    chs::testing::FailDeviceAllocationAfter(0);
    if (!threw)
      break; // fewer than k allocations
    EXPECT_EQ(filter->GetOutput()->GetBufferPointer(), nullptr);
    ASSERT_NO_THROW(filter->Update()) << "after allocation failure " << k;
  }
  chs::CudaDeviceMemoryInfo(0, freeAfter, total);
  EXPECT_GE(freeAfter + (4u << 20), freeBefore) << "device memory leaked";
}

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

// The 64-bit path (forced on small images) on both backends gives the 32-bit path's labels, costs and predecessors:
// every arc weight, both connectivities, 2D and 3D, plateaux and random weights.
TEST(CudaImageForestingTransformImageFilter, GPUWideIndexPathEqualsReference)
{
  CHS_REQUIRE_GPU();
  unsigned seed = 900;
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      using W8        = itk::Image<uint8_t, 2>;
      const auto size = Size<W8>({ 301, 197 });
      ExpectWidePathAgrees<uint8_t, 2>(
        RandomWeights<uint8_t, 2>(size, 256, seed), Seeds<2>(size, 40, 9, seed + 1), full, arc, "random uint8");
      ExpectWidePathAgrees<uint8_t, 2>(SmoothWeights<uint8_t, 2>(size, 250.0, 5, seed + 2),
                                       Seeds<2>(size, 30, 30, seed + 3),
                                       full,
                                       arc,
                                       "quantised, wide plateaux");
      using W3         = itk::Image<float, 3>;
      const auto size3 = Size<W3>({ 37, 29, 23 });
      ExpectWidePathAgrees<float, 3>(SmoothWeights<float, 3>(size3, 10.0, 0, seed + 4),
                                     Seeds<3>(size3, 20, 20, seed + 5),
                                     full,
                                     arc,
                                     "smoothed noise, float, 3D");
      ExpectWidePathAgrees<uint16_t, 3>(
        MakeImage<itk::Image<uint16_t, 3>>(Size<itk::Image<uint16_t, 3>>({ 40, 33, 21 }), 7),
        Seeds<3>(Size<itk::Image<uint16_t, 3>>({ 40, 33, 21 }), 3, 3, seed + 6, true),
        full,
        arc,
        "constant, seeds in one corner, 3D");
      seed += 10;
    }
}

// The finds of the labelling in cubes of 64^3 voxels (forced for every size; by default only volumes of 64 slices of
// 2^18 voxels or more take them) give the reference's labels, costs and predecessors on both index widths: a volume
// whose cubes the image's edges cut along every axis, and a 2D image (one slice of each cube).
TEST(CudaImageForestingTransformImageFilter, GPUCubeVoxelOrderEqualsReference)
{
  CHS_REQUIRE_GPU();
  EXPECT_THROW(chs::testing::SetVoxelOrder(3), std::invalid_argument);
  const chs_test::VoxelOrderScope cubes(2);
  using W3         = itk::Image<float, 3>;
  using W2         = itk::Image<uint8_t, 2>;
  const auto size3 = Size<W3>({ 70, 66, 65 });
  const auto size2 = Size<W2>({ 301, 197 });
  const auto w3    = SmoothWeights<float, 3>(size3, 10.0, 0, 41);
  const auto s3    = Seeds<3>(size3, 60, 20, 42);
  const auto w2    = SmoothWeights<uint8_t, 2>(size2, 250.0, 5, 43);
  const auto s2    = Seeds<2>(size2, 30, 30, 44);
  for (bool full : { false, true })
    for (ArcWeight arc : kArcs)
    {
      const auto expected3 = RunApi<float, 3>(w3, s3, false, full, arc, false);
      const auto expected2 = RunApi<uint8_t, 2>(w2, s2, false, full, arc, false);
      for (bool wide : { false, true })
      {
        const auto r3 = RunApi<float, 3>(w3, s3, true, full, arc, wide);
        EXPECT_EQ(r3.labels, expected3.labels) << "3D full " << full << " wide " << wide;
        EXPECT_EQ(r3.cost, expected3.cost) << "3D full " << full << " wide " << wide;
        EXPECT_EQ(r3.predecessor, expected3.predecessor) << "3D full " << full << " wide " << wide;
        const auto r2 = RunApi<uint8_t, 2>(w2, s2, true, full, arc, wide);
        EXPECT_EQ(r2.labels, expected2.labels) << "2D full " << full << " wide " << wide;
        EXPECT_EQ(r2.predecessor, expected2.predecessor) << "2D full " << full << " wide " << wide;
      }
    }
}

// A volume above 2^32 voxels (2048 x 2048 x 1025, 8-bit weights and labels; about 86 GB of device memory), when
// CHS_LARGE_TESTS is set. Its answer follows from the definition: the weights are 1 everywhere, the seeds fill the
// planes z = 100 (label 1) and z = 900 (label 2), the arc weight is the maximum, face neighbours. Every other voxel
// then costs 1, reached by a path that rises once, next to a seed plane, and runs straight along z: its label is
// the nearer plane's, and half way between them (z = 500: 400 arcs from both) the predecessor of smaller index, the
// one below, gives label 1.
TEST(CudaImageForestingTransformImageFilter, GPUVolumeAbove2To32Voxels)
{
  CHS_REQUIRE_GPU();
  if (!std::getenv("CHS_LARGE_TESTS"))
    GTEST_SKIP() << "set CHS_LARGE_TESTS (the GPU machine's run does)";
  chs::Grid grid;
  grid.dimension   = 3;
  grid.size[0]     = 2048;
  grid.size[1]     = 2048;
  grid.size[2]     = 1025;
  const uint64_t n = grid.NumberOfVoxels(), plane = grid.size[0] * grid.size[1];
  ASSERT_GT(n, uint64_t(1) << 32);
  std::vector<uint8_t> weights(n, 1), seeds(n, 0), labels(n, 0);
  std::fill(seeds.begin() + 100 * plane, seeds.begin() + 101 * plane, uint8_t(1));
  std::fill(seeds.begin() + 900 * plane, seeds.begin() + 901 * plane, uint8_t(2));
  std::vector<uint32_t>             cost(n, 7);
  chs::ForestingTransformParameters p;
  p.arcWeight = chs::ArcWeightFunction::Maximum;
  chs::RunInfo                  info;
  chs::ForestingTransformResult r;
  try
  {
    r = chs::ImageForestingTransformCUDA(
      weights.data(), seeds.data(), grid, p, labels.data(), cost.data(), nullptr, chs::ExecutionContext{}, &info);
  }
  catch (const chs::DeviceMemoryError & e)
  {
    GTEST_SKIP() << e.what();
  }
  std::cout << r.rounds << " rounds, " << info.kernelMilliseconds << " ms of kernels; peak device memory "
            << info.peakDeviceBytes << " bytes, reserved " << info.reservedDeviceBytes << std::endl;
  EXPECT_EQ(r.seedCount, 2 * plane);
  EXPECT_LE(info.peakDeviceBytes, info.reservedDeviceBytes);
  std::atomic<uint64_t> wrongLabel{ 0 }, wrongCost{ 0 };
  ParallelRange(n,
                [&](uint64_t a, uint64_t b)
                {
                  uint64_t label = 0, costs = 0;
                  for (uint64_t i = a; i < b; ++i)
                  {
                    const uint64_t z    = i / plane;
                    const bool     seed = z == 100 || z == 900;
                    label += labels[i] != (z <= 500 ? 1 : 2);
                    costs += cost[i] != (seed ? 0u : 1u);
                  }
                  wrongLabel += label;
                  wrongCost += costs;
                });
  EXPECT_EQ(wrongLabel.load(), 0u);
  EXPECT_EQ(wrongCost.load(), 0u);
}

} // namespace
