// Tests of itk::Dendrogram and itk::CudaGraphToSingleLinkageDendrogramFilter: the CPU reference against independent
// oracles (hand-made dendrograms, Prim's tree, the top-down definition, thresholded components), the CUDA backend
// against the CPU reference, the queries, and bad input.
#include "itkCudaGraphToSingleLinkageDendrogramFilter.h"
#include "itkDendrogram.h"
#include "SingleLinkage/chsDendrogramOracles.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace
{
using chs_test::Graph;
using chs_test::TreeShape;
using Filter  = itk::CudaGraphToSingleLinkageDendrogramFilter<double>;
using Backend = itk::CudaSegmentationBackendEnums::Backend;

/** Runs the filter (weights of type TWeight; 64-bit node ids when `wide`); `levels` receives PANDORA's contraction
 * levels. */
template <typename TWeight = double>
itk::Dendrogram::Pointer
Build(const Graph & g, Backend backend, bool tree = false, unsigned * levels = nullptr, bool wide = false)
{
  using Filter = itk::CudaGraphToSingleLinkageDendrogramFilter<TWeight>;
  auto u       = Filter::VertexContainerType::New();
  auto v       = Filter::VertexContainerType::New();
  auto w       = Filter::WeightContainerType::New();
  u->assign(g.u.begin(), g.u.end());
  v->assign(g.v.begin(), g.v.end());
  w->assign(g.w.begin(), g.w.end());
  auto filter = Filter::New();
  filter->SetEdges(u, v, w);
  filter->SetNumberOfVertices(g.n);
  filter->SetInputIsTree(tree);
  filter->SetBackend(backend);
  filter->SetWideNodeIds(wide);
  filter->Update();
  EXPECT_EQ(filter->GetOutput()->HasWideNodeIds(), wide);
  if (levels)
    *levels = filter->GetNumberOfContractionLevels();
  itk::Dendrogram::Pointer d = filter->GetOutput();
  d->DisconnectPipeline();
  return d;
}

/** The GPU dendrogram equals the CPU's, run after run (the last one with 64-bit node ids), and PANDORA stays within
 * ceil(log2(n)) levels. */
void
ExpectGpuEqualsCpu(const Graph & g, bool tree = false, int runs = 2)
{
  const auto cpu = Build(g, Backend::CPU, tree);
  for (int run = 0; run <= runs; ++run)
  {
    unsigned   levels = 0;
    const auto gpu    = Build(g, Backend::CUDA, tree, &levels, run == runs);
    chs_test::ExpectSameDendrogram(gpu, cpu);
    const double bound = g.n > 1 ? std::ceil(std::log2(double(g.n))) : 0.0;
    EXPECT_LE(double(levels), std::max(bound, 1.0)) << "contraction levels, n = " << g.n;
  }
}

Graph
RandomGraph(uint64_t n, uint64_t extra, int weights, std::mt19937 & rng)
{
  std::uniform_int_distribution<int> w(0, weights);
  Graph g = chs_test::MakeTree(n, TreeShape::Random, rng, [&](uint64_t) { return double(w(rng)); });
  std::uniform_int_distribution<uint32_t> vertex(0, uint32_t(n - 1));
  for (uint64_t i = 0; i < extra; ++i)
    g.Add(vertex(rng), vertex(rng), double(w(rng))); // self-loops and parallel edges included
  return g;
}

/** Complete graph of random points in the unit cube, Euclidean weights. */
Graph
PointCloud(uint64_t n, std::mt19937 & rng)
{
  std::uniform_real_distribution<double> c(0.0, 1.0);
  std::vector<std::array<double, 3>>     p(n);
  for (auto & q : p)
    q = { c(rng), c(rng), c(rng) };
  Graph g;
  g.n = n;
  for (uint32_t a = 0; a < n; ++a)
    for (uint32_t b = a + 1; b < n; ++b)
      g.Add(a, b, std::hypot(p[a][0] - p[b][0], p[a][1] - p[b][1], p[a][2] - p[b][2]));
  return g;
}

const TreeShape kShapes[] = { TreeShape::Random,
                              TreeShape::Star,
                              TreeShape::Path,
                              TreeShape::Caterpillar,
                              TreeShape::Balanced };

} // namespace

TEST(Dendrogram, HandMadePath)
{
  // a - b - c - d with weights 3, 1, 2: b and c merge first (node 4), then d joins (node 5), then a (node 6).
  Graph g;
  g.n = 4;
  g.Add(0, 1, 3.0);
  g.Add(1, 2, 1.0);
  g.Add(2, 3, 2.0);
  const auto d = Build(g, Backend::CPU);
  EXPECT_EQ(std::vector<uint32_t>(d->GetParents()->begin(), d->GetParents()->end()),
            (std::vector<uint32_t>{ 6, 4, 4, 5, 5, 6, 6 }));
  EXPECT_EQ(std::vector<double>(d->GetWeights()->begin(), d->GetWeights()->end()), (std::vector<double>{ 1, 2, 3 }));
  EXPECT_EQ(std::vector<itk::IdentifierType>(d->GetEdgeIds()->begin(), d->GetEdgeIds()->end()),
            (std::vector<itk::IdentifierType>{ 1, 2, 0 }));
  EXPECT_EQ(d->GetRoot(), 6u);
  EXPECT_EQ(d->GetNodeWeight(5), 2.0);
}

TEST(Dendrogram, HandMadeTreeWithAlphaEdges)
{
  // Two stars joined by their centres: 0 - {1, 2} (weights 1, 2), 3 - {4, 5} (weights 1, 3), centres 0 - 3 at 2.
  // Edges by (weight, index): e0 (0,1,1), e3 (3,4,1), e1 (0,2,2), e2 (0,3,2), e4 (3,5,3).
  // e2 is the lightest edge of neither 0 nor 3: an alpha-edge. Merges: {0,1} (node 6), {3,4} (node 7),
  // {0,1,2} (node 8), {0,1,2,3,4} (node 9), all (node 10).
  Graph g;
  g.n = 6;
  g.Add(0, 1, 1.0);
  g.Add(0, 2, 2.0);
  g.Add(0, 3, 2.0);
  g.Add(3, 4, 1.0);
  g.Add(3, 5, 3.0);
  const auto d = Build(g, Backend::CPU);
  EXPECT_EQ(std::vector<uint32_t>(d->GetParents()->begin(), d->GetParents()->end()),
            (std::vector<uint32_t>{ 6, 6, 8, 7, 7, 10, 8, 9, 9, 10, 10 }));
  if (chs_test::HasCudaDevice())
    chs_test::ExpectSameDendrogram(Build(g, Backend::CUDA), d);

  // Queries: clusters at a distance and by count (labels in vertex order), SciPy's linkage matrix, node sizes.
  auto at1 = d->ComputeClustersAtDistance(1.0);
  EXPECT_EQ(std::vector<uint32_t>(at1->begin(), at1->end()), (std::vector<uint32_t>{ 1, 1, 2, 3, 3, 4 }));
  auto at2 = d->ComputeClustersAtDistance(2.5);
  EXPECT_EQ(std::vector<uint32_t>(at2->begin(), at2->end()), (std::vector<uint32_t>{ 1, 1, 1, 1, 1, 2 }));
  auto three = d->ComputeClusters(3);
  EXPECT_EQ(std::vector<uint32_t>(three->begin(), three->end()), (std::vector<uint32_t>{ 1, 1, 1, 2, 2, 3 }));
  auto one = d->ComputeClusters(1);
  EXPECT_EQ(std::vector<uint32_t>(one->begin(), one->end()), std::vector<uint32_t>(6, 1));
  auto six = d->ComputeClusters(6);
  EXPECT_EQ(std::vector<uint32_t>(six->begin(), six->end()), (std::vector<uint32_t>{ 1, 2, 3, 4, 5, 6 }));
  EXPECT_THROW(d->ComputeClusters(0), itk::ExceptionObject);
  EXPECT_THROW(d->ComputeClusters(7), itk::ExceptionObject);
  auto z = d->ComputeLinkageMatrix();
  EXPECT_EQ(std::vector<double>(z->begin(), z->end()),
            (std::vector<double>{ 0, 1, 1, 2, 3, 4, 1, 2, 2, 6, 2, 3, 7, 8, 2, 5, 5, 9, 3, 6 }));

  // Canonical tree: nodes 8 and 9 share weight 2, so 8 merges into 9. Kept: leaves, 6, 7, 9, 10 -> ids 6, 7, 8, 9.
  auto parents = itk::Dendrogram::IndexContainerType::New();
  auto levels  = itk::Dendrogram::WeightContainerType::New();
  d->ComputeCanonicalTree(parents, levels);
  EXPECT_EQ(std::vector<uint32_t>(parents->begin(), parents->end()),
            (std::vector<uint32_t>{ 6, 6, 8, 7, 7, 9, 8, 8, 9, 9 }));
  EXPECT_EQ(std::vector<double>(levels->begin(), levels->end()), (std::vector<double>{ 0, 0, 0, 0, 0, 0, 1, 1, 2, 3 }));
}

TEST(Dendrogram, InvariantsRejectBrokenArrays)
{
  Graph g;
  g.n = 3;
  g.Add(0, 1, 1.0);
  g.Add(1, 2, 2.0);
  auto d = Build(g, Backend::CPU);
  EXPECT_NO_THROW(d->CheckInvariants());
  (*d->GetParents())[0] = 0; // a leaf as its own parent
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject);
  d                     = Build(g, Backend::CPU);
  (*d->GetParents())[0] = 4; // three children under the root
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject);
  d                     = Build(g, Backend::CPU);
  (*d->GetWeights())[1] = 0.5; // weights decreasing with the rank
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject);
  d                     = Build(g, Backend::CPU);
  (*d->GetWeights())[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject);
  d = Build(g, Backend::CPU);
  d->GetParents()->pop_back();
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject);
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, CpuMatchesOraclesOnTrees)
{
  std::mt19937 rng(11);
  for (TreeShape shape : kShapes)
    for (uint64_t n : { 1, 2, 3, 5, 17, 64, 200 })
      for (int weights : { 0, 3, 1000000 }) // all equal, many ties, almost no ties
      {
        std::uniform_int_distribution<int> w(0, weights);
        const Graph g = chs_test::MakeTree(n, shape, rng, [&](uint64_t) { return double(w(rng)); });
        SCOPED_TRACE("shape " + std::to_string(int(shape)) + ", n " + std::to_string(n) + ", weights " +
                     std::to_string(weights));
        for (bool wide : { false, true })
          chs_test::ExpectMatchesOracles(Build(g, Backend::CPU, true, nullptr, wide), g);
      }
}

/** A dendrogram of 64-bit node ids answers every query as the 32-bit one does, and the accessors of the other width
 * throw. */
TEST(Dendrogram, WideNodeIdsGiveTheSameQueries)
{
  std::mt19937 rng(21);
  for (uint64_t n : { 1, 2, 40, 3000 })
    for (int weights : { 0, 3, 1000000 })
    {
      SCOPED_TRACE("n " + std::to_string(n) + ", weights " + std::to_string(weights));
      const Graph g      = RandomGraph(n, 2 * n, weights, rng);
      const auto  narrow = Build(g, Backend::CPU), wide = Build(g, Backend::CPU, false, nullptr, true);
      chs_test::ExpectSameDendrogram(wide, narrow);
      const auto same = [](const auto * a, const auto * b)
      { return std::equal(a->begin(), a->end(), b->begin(), b->end()); };
      EXPECT_TRUE(same(wide->ComputeNodeSizes().GetPointer(), narrow->ComputeNodeSizes().GetPointer()));
      EXPECT_TRUE(same(wide->ComputeLinkageMatrix().GetPointer(), narrow->ComputeLinkageMatrix().GetPointer()));
      for (uint64_t k : { uint64_t(1), (n + 1) / 2, n })
        EXPECT_TRUE(same(wide->ComputeClusters(k).GetPointer(), narrow->ComputeClusters(k).GetPointer())) << k;
      EXPECT_TRUE(same(wide->ComputeClustersAtDistance(weights / 2.0).GetPointer(),
                       narrow->ComputeClustersAtDistance(weights / 2.0).GetPointer()));
      auto p32 = itk::Dendrogram::IndexContainerType::New(), q32 = itk::Dendrogram::IndexContainerType::New();
      auto p64 = itk::Dendrogram::WideIndexContainerType::New();
      auto l32 = itk::Dendrogram::WeightContainerType::New(), l64 = itk::Dendrogram::WeightContainerType::New(),
           m32 = itk::Dendrogram::WeightContainerType::New();
      narrow->ComputeCanonicalTree(p32, l32);
      wide->ComputeCanonicalTree(p64, l64);
      wide->ComputeCanonicalTree(q32, m32);
      EXPECT_TRUE(same(p64.GetPointer(), p32.GetPointer())) << "canonical parents";
      EXPECT_TRUE(same(q32.GetPointer(), p32.GetPointer())) << "canonical parents of the wide tree, 32-bit";
      EXPECT_TRUE(same(l64.GetPointer(), l32.GetPointer()) && same(m32.GetPointer(), l32.GetPointer()));
      EXPECT_NO_THROW(wide->CheckInvariants());
      EXPECT_THROW(wide->GetParents(), itk::ExceptionObject);
      EXPECT_THROW(wide->GetEdgeU(), itk::ExceptionObject);
      EXPECT_THROW(narrow->GetWideEdgeV(), itk::ExceptionObject);
    }
  // A broken wide dendrogram is refused as a 32-bit one is.
  auto d = itk::Dendrogram::New();
  d->Allocate(3, true);
  d->GetWideParents()->assign({ 3, 3, 4, 4, 3 });
  d->GetWeights()->assign({ 1.0, 2.0 });
  d->GetWideEdgeU()->assign({ 0, 1 });
  d->GetWideEdgeV()->assign({ 1, 2 });
  d->GetEdgeIds()->assign({ 0, 1 });
  EXPECT_THROW(d->CheckInvariants(), itk::ExceptionObject) << "a root that is not its own parent";
  d->GetWideParents()->assign({ 3, 3, 4, 4, 4 });
  EXPECT_NO_THROW(d->CheckInvariants());
  // Up to 2^32 - 1 vertices (the size is checked before anything is allocated).
  EXPECT_THROW(d->Allocate(uint64_t(1) << 32), itk::ExceptionObject);
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, CpuMatchesOraclesOnGraphs)
{
  std::mt19937 rng(12);
  for (uint64_t n : { 2, 9, 50, 300 })
    for (int weights : { 0, 4, 1000000 })
    {
      SCOPED_TRACE("n " + std::to_string(n) + ", weights " + std::to_string(weights));
      const Graph g = RandomGraph(n, 3 * n, weights, rng);
      for (bool wide : { false, true })
        chs_test::ExpectMatchesOracles(Build(g, Backend::CPU, false, nullptr, wide), g);
    }
  for (uint64_t n : { 2, 30, 120 })
  {
    const Graph g = PointCloud(n, rng);
    chs_test::ExpectMatchesOracles(Build(g, Backend::CPU), g);
  }
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, BadInputGetsAClearException)
{
  std::vector<Backend> backends{ Backend::CPU };
  if (chs_test::HasCudaDevice())
    backends.push_back(Backend::CUDA);
  for (Backend b : backends)
  {
    Graph cycle; // 4 vertices, 3 edges, but a triangle and an isolated vertex: not a tree
    cycle.n = 4;
    cycle.Add(0, 1, 1);
    cycle.Add(1, 2, 1);
    cycle.Add(2, 0, 1);
    EXPECT_THROW(Build(cycle, b), itk::ExceptionObject);
    EXPECT_THROW(Build(cycle, b, true), itk::ExceptionObject);
    Graph apart = cycle; // 4 edges on 4 vertices, vertex 3 unreachable: not connected
    apart.Add(0, 1, 2);
    EXPECT_THROW(Build(apart, b), itk::ExceptionObject);
    EXPECT_THROW(Build(apart, b, true), itk::ExceptionObject) << "a tree has n - 1 edges";
    Graph few;
    few.n = 4;
    few.Add(0, 1, 1);
    EXPECT_THROW(Build(few, b), itk::ExceptionObject);
    // The message names the first bad edge.
    auto expectMessage = [&](const Graph & g, const std::string & text)
    {
      try
      {
        Build(g, b);
        ADD_FAILURE() << "accepted; expected: " << text;
      }
      catch (const itk::ExceptionObject & e)
      {
        EXPECT_NE(std::string(e.GetDescription()).find(text), std::string::npos) << e.GetDescription();
      }
    };
    Graph range;
    range.n = 3;
    range.Add(0, 1, 1);
    range.Add(1, 7, 1);
    expectMessage(range, "edge 1 joins vertices 1 and 7");
    Graph nan;
    nan.n = 3;
    nan.Add(0, 1, 1);
    nan.Add(1, 2, std::numeric_limits<double>::quiet_NaN());
    expectMessage(nan, "weight of edge 1 is NaN");
    // After the failures, a valid graph runs on the same backend (the same filter running again after a failure
    // is checked by GpuFailureLeavesNothingAndRunsAgain and the image filter's bad-input test).
    Graph ok;
    ok.n = 2;
    ok.Add(1, 0, 5.0);
    const auto d = Build(ok, b);
    EXPECT_EQ(std::vector<uint32_t>(d->GetParents()->begin(), d->GetParents()->end()),
              (std::vector<uint32_t>{ 2, 2, 2 }));
  }
  auto filter = Filter::New();
  EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "no edges set";
  auto u = Filter::VertexContainerType::New();
  auto w = Filter::WeightContainerType::New();
  u->assign({ 0, 1 });
  w->assign({ 1.0 });
  filter->SetEdges(u, u, w);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "arrays of different lengths";
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, GpuEqualsCpuOnTreesAndGraphs)
{
  CHS_REQUIRE_GPU();
  std::mt19937 rng(13);
  for (TreeShape shape : kShapes)
    for (uint64_t n : { 1, 2, 3, 7, 100, 1000, 65537, 300000 })
      for (int weights : { 0, 5, 1 << 30 })
      {
        std::uniform_int_distribution<int> w(0, weights);
        SCOPED_TRACE("shape " + std::to_string(int(shape)) + ", n " + std::to_string(n) + ", weights " +
                     std::to_string(weights));
        ExpectGpuEqualsCpu(chs_test::MakeTree(n, shape, rng, [&](uint64_t) { return double(w(rng)); }), true);
      }
  // Skewed on purpose: a path whose weights rise along it (one chain), and a star of rising weights.
  for (TreeShape shape : { TreeShape::Path, TreeShape::Star })
    ExpectGpuEqualsCpu(chs_test::MakeTree(
                         200000, shape, rng, [](uint64_t i) { return double(i); }, false),
                       true);
  for (uint64_t n : { 2, 50, 5000, 200000 })
    for (int weights : { 0, 7, 1 << 30 })
      ExpectGpuEqualsCpu(RandomGraph(n, 4 * n, weights, rng));
  ExpectGpuEqualsCpu(PointCloud(600, rng));
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, GpuEqualsCpuOnTensOfMillionsOfEdges)
{
  CHS_REQUIRE_GPU();
  std::mt19937                           rng(14);
  std::uniform_real_distribution<double> w(0.0, 1.0);
  ExpectGpuEqualsCpu(chs_test::MakeTree(20000000, TreeShape::Random, rng, [&](uint64_t) { return w(rng); }), true, 1);
  ExpectGpuEqualsCpu(
    chs_test::MakeTree(20000000, TreeShape::Caterpillar, rng, [](uint64_t i) { return double(i % 1000); }), true, 1);
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, FloatWeights)
{
  std::mt19937                          rng(15);
  std::uniform_real_distribution<float> w(-1.0f, 1.0f);
  const Graph g   = chs_test::MakeTree(5000, TreeShape::Random, rng, [&](uint64_t) { return double(w(rng)); });
  auto        run = [&](Backend b) { return Build<float>(g, b); };
  const auto  cpu = run(Backend::CPU);
  chs_test::ExpectMatchesOracles(cpu, g); // float weights are exact in the double graph
  if (chs_test::HasCudaDevice())
    chs_test::ExpectSameDendrogram(run(Backend::CUDA), cpu);
}

TEST(CudaGraphToSingleLinkageDendrogramFilter, GpuFailureLeavesNothingAndRunsAgain)
{
  CHS_REQUIRE_GPU();
  std::mt19937 rng(16);
  const Graph  g   = RandomGraph(1000, 3000, 10, rng);
  const auto   cpu = Build(g, Backend::CPU);
  for (int k = 1; k <= 12; ++k)
  {
    chs::testing::FailDeviceAllocationAfter(k);
    auto u = Filter::VertexContainerType::New();
    auto v = Filter::VertexContainerType::New();
    auto w = Filter::WeightContainerType::New();
    u->assign(g.u.begin(), g.u.end());
    v->assign(g.v.begin(), g.v.end());
    w->assign(g.w.begin(), g.w.end());
    auto filter = Filter::New();
    filter->SetEdges(u, v, w);
    filter->SetBackend(Backend::CUDA);
    EXPECT_THROW(filter->Update(), itk::ExceptionObject) << "allocation " << k;
    chs::testing::FailDeviceAllocationAfter(0);
    EXPECT_EQ(filter->GetOutput()->GetNumberOfVertices(), 0u) << "a failed run leaves an empty dendrogram";
    filter->Modified();
    filter->Update();
    chs_test::ExpectSameDendrogram(filter->GetOutput(), cpu);
  }
}
