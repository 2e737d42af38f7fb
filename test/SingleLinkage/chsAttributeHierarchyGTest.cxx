// Tests of the hierarchies by attribute (include/chs/AttributeHierarchy.h): the CPU reference against hand-computed
// hierarchies and identities of the definition (a filter that keeps everything gives the input back, one that keeps
// nothing gives every weight 0), the CUDA backend against the CPU reference run after run, and bad input. Higra is
// the independent oracle of python/tests/test_trees.py (same arrays as its watershed hierarchies and filters).
#include "AttributeHierarchy/chsAttributeHierarchyBackends.h"
#include "Engines/SingleLinkage/chsSingleLinkageBackends.h"
#include "itkCudaDendrogramAttributeFilter.h"
#include "itkCudaImageToAlphaTreeFilter.h"
#include "AlphaTree/chsAlphaTreeBackends.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkDendrogramToLabelImageFilter.h"
#include "itkImage.h"
#include "SingleLinkage/chsDendrogramOracles.h"
#include "Common/chsTestImages.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

namespace
{
using chs::RegionAttribute;

/** A dendrogram's arrays, owned, with node ids of TNode. */
template <typename TNode>
struct TreeT
{
  uint64_t              n = 0;
  std::vector<TNode>    parent, u, v;
  std::vector<double>   weight;
  std::vector<uint64_t> edge;
  bool                  forceWideTour = false;

  explicit TreeT(uint64_t vertices = 0)
    : n(vertices)
    , parent(vertices ? 2 * vertices - 1 : 0)
    , u(vertices > 1 ? vertices - 1 : 0)
    , v(vertices > 1 ? vertices - 1 : 0)
    , weight(vertices > 1 ? vertices - 1 : 0)
    , edge(vertices > 1 ? vertices - 1 : 0)
  {
  }
  chs::DendrogramArraysT<TNode>
  Out()
  {
    return { parent.data(), weight.data(), edge.data(), u.data(), v.data() };
  }
  chs::DendrogramInputT<TNode>
  In() const
  {
    return { n, parent.data(), weight.data(), edge.data(), u.data(), v.data(), forceWideTour };
  }
  bool
  operator==(const TreeT & o) const
  {
    return n == o.n && parent == o.parent && u == o.u && v == o.v && weight == o.weight && edge == o.edge;
  }
};
using Tree     = TreeT<uint32_t>;
using WideTree = TreeT<uint64_t>;

/** The same dendrogram with 64-bit ids. */
WideTree
Widened(const Tree & t)
{
  WideTree w(t.n);
  w.parent.assign(t.parent.begin(), t.parent.end());
  w.u.assign(t.u.begin(), t.u.end());
  w.v.assign(t.v.begin(), t.v.end());
  w.weight = t.weight;
  w.edge   = t.edge;
  return w;
}

Tree
FromGraph(const chs_test::Graph & g)
{
  Tree t(g.n);
  chs::GraphSingleLinkageCPU(g.u.data(), g.v.data(), g.w.data(), g.u.size(), g.n, false, t.Out());
  return t;
}

/** The path 0 - 1 - 2 - 3 - 4 with edge weights 1, 3, 2, 1: tree edges by rank (0,1) (3,4) (2,3) (1,2); nodes
 * 5 = {0,1} at 1, 6 = {3,4} at 1, 7 = {2,3,4} at 2, 8 = root at 3. */
Tree
Path()
{
  chs_test::Graph g;
  g.n = 5;
  g.Add(0, 1, 1);
  g.Add(1, 2, 3);
  g.Add(2, 3, 2);
  g.Add(3, 4, 1);
  return FromGraph(g);
}

template <typename TNode>
TreeT<TNode>
Watershed(const TreeT<TNode> & in, RegionAttribute a, bool cuda = false)
{
  TreeT<TNode> out(in.n);
  if (cuda)
    chs::WatershedHierarchyCUDA(in.In(), a, out.Out(), chs::ExecutionContext());
  else
    chs::WatershedHierarchyCPU(in.In(), a, out.Out());
  return out;
}

template <typename TNode>
TreeT<TNode>
Filter(const TreeT<TNode> & in, RegionAttribute a, double t, bool cuda = false)
{
  TreeT<TNode> out(in.n);
  if (cuda)
    chs::FilterRegionsCUDA(in.In(), a, t, out.Out(), chs::ExecutionContext());
  else
    chs::FilterRegionsCPU(in.In(), a, t, out.Out());
  return out;
}

template <typename TNode>
std::vector<double>
Attribute(const TreeT<TNode> & in, RegionAttribute a)
{
  std::vector<double> values(2 * in.n - 1);
  chs::DendrogramAttribute(in.In(), a, values.data());
  return values;
}

/** The hand-computed attributes of Path(): areas, volumes (area x height above the node, plus the children's),
 * depths, heights, dynamics (node 5 is the root's deepest child on the tie with node 7, node 6 is node 7's). */
TEST(AttributeHierarchy, AttributesOfAPathByHand)
{
  const Tree t = Path();
  ASSERT_EQ(t.parent, (std::vector<uint32_t>{ 5, 5, 7, 6, 6, 8, 7, 8, 8 }));
  ASSERT_EQ(t.weight, (std::vector<double>{ 1, 1, 2, 3 }));
  EXPECT_EQ(Attribute(t, RegionAttribute::Area), (std::vector<double>{ 1, 1, 1, 1, 1, 2, 2, 3, 5 }));
  EXPECT_EQ(Attribute(t, RegionAttribute::Volume), (std::vector<double>{ 0, 0, 0, 0, 0, 4, 2, 5, 9 }));
  EXPECT_EQ(Attribute(t, RegionAttribute::Height), (std::vector<double>{ 0, 0, 0, 0, 0, 2, 1, 2, 2 }));
  EXPECT_EQ(Attribute(t, RegionAttribute::Dynamics), (std::vector<double>{ 0, 0, 0, 0, 0, 2, 2, 2, 2 }));
}

/** Watershed hierarchies of Path(): the two minima {0,1} and {3,4} merge at the smaller minimum's area (2), volume
 * (4: the region {0,1} filled up to 3) or dynamics (2); every other tree edge weighs 0. The ranks keep their order, so
 * the tree keeps its shape. */
TEST(AttributeHierarchy, WatershedOfAPathByHand)
{
  const Tree t = Path();
  for (const auto & [a, top] : { std::pair<RegionAttribute, double>{ RegionAttribute::Area, 2 },
                                 { RegionAttribute::Volume, 4 },
                                 { RegionAttribute::Dynamics, 2 } })
  {
    const Tree w = Watershed(t, a);
    EXPECT_EQ(w.parent, t.parent);
    EXPECT_EQ(w.weight, (std::vector<double>{ 0, 0, 0, top }));
    EXPECT_EQ(w.edge, t.edge);
    EXPECT_EQ(w.u, t.u);
    EXPECT_EQ(w.v, t.v);
  }
}

/** Area filters of Path(): at 2 only the root's frontier (between {0,1} and {2,3,4}) stays; at 3 none does. */
TEST(AttributeHierarchy, AreaFilterOfAPathByHand)
{
  const Tree t = Path();
  EXPECT_EQ(Filter(t, RegionAttribute::Area, 2).weight, (std::vector<double>{ 0, 0, 0, 3 }));
  EXPECT_EQ(Filter(t, RegionAttribute::Area, 3).weight, (std::vector<double>{ 0, 0, 0, 0 }));
  // Height 1 keeps node 8 (children 5 and 7 of heights 2 and 2) only: every other node has a leaf child (height 0).
  EXPECT_EQ(Filter(t, RegionAttribute::Height, 1).weight, (std::vector<double>{ 0, 0, 0, 3 }));
}

/** A graph with ties, so that the reweighted tree reorders its edges. */
chs_test::Graph
RandomGraph(uint64_t n, int weights, std::mt19937 & rng)
{
  std::uniform_int_distribution<int> w(0, weights);
  auto g = chs_test::MakeTree(n, chs_test::TreeShape::Random, rng, [&](uint64_t) { return double(w(rng)); });
  std::uniform_int_distribution<uint32_t> vertex(0, uint32_t(n - 1));
  for (uint64_t i = 0; i < 2 * n; ++i)
    g.Add(vertex(rng), vertex(rng), double(w(rng)));
  return g;
}

/** The volume of weights that are not whole numbers is the exact sum rounded once: weights W * 2^-40 (W below 2^50),
 * whose volumes summed exactly in 128-bit integers and converted to double (rounded to nearest by the compiler's
 * conversion) are the oracle. The sums in double from the leaves up (Higra's order) differ somewhere: the test can
 * tell the two definitions apart. */
TEST(AttributeHierarchy, VolumeIsTheExactSumRoundedOnce)
{
  std::mt19937                            rng(11);
  std::uniform_int_distribution<uint64_t> draw(0, (uint64_t(1) << 50) - 1);
  chs_test::Graph                         g = RandomGraph(3000, 1, rng);
  for (double & w : g.w)
    w = std::ldexp(double(draw(rng)), -40);
  const Tree                           t      = FromGraph(g);
  const std::vector<double>            volume = Attribute(t, RegionAttribute::Volume);
  const uint64_t                       n      = t.n;
  std::vector<__int128>                exact(n - 1);
  std::vector<double>                  area(n - 1), sequential(n - 1);
  std::vector<uint64_t>                kids(n - 1, 0);
  std::vector<std::array<uint64_t, 2>> child(n - 1);
  for (uint64_t x = 0; x + 1 < 2 * n - 1; ++x)
    child[t.parent[x] - n][kids[t.parent[x] - n]++] = x;
  auto   alt    = [&](uint64_t x) { return x < n ? 0.0 : t.weight[x - n]; };
  size_t differ = 0;
  for (uint64_t k = 0; k + 1 < n; ++k)
  {
    const uint64_t x = n + k, a = std::min(child[k][0], child[k][1]), b = std::max(child[k][0], child[k][1]);
    area[k]          = (a < n ? 1.0 : area[a - n]) + (b < n ? 1.0 : area[b - n]);
    const auto units = [&](uint64_t y) { return __int128(std::ldexp(alt(y), 40)); };
    exact[k] =
      (a < n ? 0 : exact[a - n]) + (b < n ? 0 : exact[b - n]) + __int128(area[k]) * (units(t.parent[x]) - units(x));
    sequential[k] =
      ((a < n ? 0.0 : sequential[a - n]) + (b < n ? 0.0 : sequential[b - n])) + area[k] * (alt(t.parent[x]) - alt(x));
    ASSERT_EQ(volume[x], std::ldexp(double(exact[k]), -40)) << "node " << x;
    differ += sequential[k] != volume[x];
  }
  EXPECT_GT(differ, 0u) << "the input does not tell the exact volumes from the sums in double";
}

/** Identities: a filter whose threshold every region passes gives the input back; one that no frontier passes gives
 * the input's tree with every weight 0 (the ranks keep their order). */
TEST(AttributeHierarchy, FiltersThatKeepAllOrNothing)
{
  std::mt19937 rng(7);
  for (uint64_t n : { 1, 2, 3, 50, 400 })
  {
    const Tree t = FromGraph(RandomGraph(n, 6, rng));
    EXPECT_TRUE(Filter(t, RegionAttribute::Area, 1) == t) << n;
    EXPECT_TRUE(Filter(t, RegionAttribute::Volume, 0) == t) << n;
    const Tree none = Filter(t, RegionAttribute::Area, double(n) + 1);
    EXPECT_EQ(none.parent, t.parent);
    EXPECT_EQ(none.edge, t.edge);
    for (double w : none.weight)
      EXPECT_EQ(w, 0.0);
  }
}

/** The watershed hierarchy is a dendrogram of the same tree edges with weights in order, and by area no merge weighs
 * more than half the vertices (a merge weighs at most the area of the smaller of two disjoint regions). */
TEST(AttributeHierarchy, WatershedKeepsTheTreeEdges)
{
  std::mt19937 rng(11);
  for (uint64_t n : { 2, 3, 64, 500 })
  {
    const Tree t = FromGraph(RandomGraph(n, 9, rng));
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Dynamics })
    {
      const Tree            w = Watershed(t, a);
      std::vector<uint64_t> before(t.edge), after(w.edge);
      std::sort(before.begin(), before.end());
      std::sort(after.begin(), after.end());
      EXPECT_EQ(before, after) << n;
      for (size_t r = 1; r < w.weight.size(); ++r)
        EXPECT_LE(w.weight[r - 1], w.weight[r]);
      if (a == RegionAttribute::Area && n > 1)
        EXPECT_LE(w.weight.back(), double(n / 2));
    }
  }
}

TEST(AttributeHierarchy, BadInput)
{
  const Tree t = Path();
  Tree       out(t.n);
  EXPECT_THROW(chs::WatershedHierarchyCPU(t.In(), RegionAttribute::Height, out.Out()), std::invalid_argument);
  EXPECT_THROW(chs::FilterRegionsCPU(t.In(), RegionAttribute::Dynamics, 1, out.Out()), std::invalid_argument);
  EXPECT_THROW(chs::FilterRegionsCPU(t.In(), RegionAttribute::Area, std::nan(""), out.Out()), std::invalid_argument);
  chs::DendrogramInput none = t.In();
  none.vertices             = 0;
  EXPECT_THROW(chs::WatershedHierarchyCPU(none, RegionAttribute::Area, out.Out()), std::invalid_argument);
  Tree broken      = t;
  broken.parent[2] = 1; // a parent before its child
  EXPECT_THROW(chs::WatershedHierarchyCPU(broken.In(), RegionAttribute::Area, out.Out()), std::invalid_argument);
  broken        = t;
  broken.weight = { 1, 1, 4, 3 }; // node 7 above its parent
  EXPECT_THROW(chs::WatershedHierarchyCPU(broken.In(), RegionAttribute::Area, out.Out()), std::invalid_argument);
  const std::vector<uint32_t> before = out.parent;
  if (chs_test::HasCudaDevice())
  {
    EXPECT_THROW(chs::WatershedHierarchyCUDA(broken.In(), RegionAttribute::Area, out.Out(), chs::ExecutionContext()),
                 std::invalid_argument);
    EXPECT_THROW(chs::FilterRegionsCUDA(t.In(), RegionAttribute::Dynamics, 1, out.Out(), chs::ExecutionContext()),
                 std::invalid_argument);
  }
  EXPECT_EQ(out.parent, before) << "nothing written";
}

/** Images: the dendrogram of a relief with plateaux and ties (8-bit), and of a noisy float image. */
Tree
ImageDendrogram(uint64_t nx, uint64_t ny, bool full, unsigned seed, bool smooth)
{
  std::mt19937                       rng(seed);
  std::uniform_int_distribution<int> noise(0, smooth ? 3 : 255);
  std::vector<uint8_t>               pixels(nx * ny);
  for (uint64_t y = 0; y < ny; ++y)
    for (uint64_t x = 0; x < nx; ++x)
    {
      const double r     = smooth ? 40.0 * (2.0 + std::sin(0.3 * double(x)) + std::cos(0.23 * double(y))) : 0.0;
      pixels[y * nx + x] = uint8_t(std::min(255.0, r + noise(rng)));
    }
  chs::Grid grid;
  grid.size[0] = nx;
  grid.size[1] = ny;
  chs::ImageGraphParameters p;
  p.fullyConnected = full;
  Tree t(nx * ny);
  chs::ImageSingleLinkageCPU(pixels.data(), grid, p, t.Out());
  return t;
}

/** Dendrograms of graphs with ties, of images (plateaux and noise), with weights that are not whole numbers, and a
 * deep chain. */
std::vector<Tree>
Inputs()
{
  std::mt19937      rng(3);
  std::vector<Tree> inputs;
  for (uint64_t n : { 1, 2, 3, 17, 1000, 20000 })
    inputs.push_back(FromGraph(RandomGraph(n, 5, rng)));
  inputs.push_back(ImageDendrogram(300, 200, false, 1, true));
  inputs.push_back(ImageDendrogram(300, 200, true, 2, true));
  inputs.push_back(ImageDendrogram(257, 129, false, 3, false));
  // Weights that are not whole numbers: volumes in the 128-bit fixed point; weights spanning more than 94 bits (256
  // bits); weights spanning more than 222 bits (rounded to multiples of 2^(T - 222) first).
  for (int span : { 0, 120, 400 })
  {
    chs_test::Graph                    g = RandomGraph(5000, 40, rng);
    std::uniform_int_distribution<int> exponent(-span, 0);
    for (double & w : g.w)
      w = span ? std::ldexp(w / 3.0 + 0.1, exponent(rng)) : w / 3.0 + 0.1;
    inputs.push_back(FromGraph(g));
  }
  // A deep tree: a ramp's dendrogram is a chain of n - 1 nodes.
  {
    chs_test::Graph g;
    g.n = 30000;
    for (uint32_t i = 0; i + 1 < g.n; ++i)
      g.Add(i, i + 1, double(i / 7));
    inputs.push_back(FromGraph(g));
  }
  return inputs;
}

TEST(AttributeHierarchy, GpuEqualsCpu)
{
  CHS_REQUIRE_GPU();
  for (const Tree & t : Inputs())
  {
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Dynamics })
    {
      const Tree cpu = Watershed(t, a);
      for (int run = 0; run < 2; ++run)
        EXPECT_TRUE(Watershed(t, a, true) == cpu) << "watershed, n = " << t.n << ", attribute " << int(a);
    }
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Height })
    {
      const double threshold = a == RegionAttribute::Area ? 20 : a == RegionAttribute::Volume ? 100 : 3;
      const Tree   cpu       = Filter(t, a, threshold);
      EXPECT_TRUE(Filter(t, a, threshold, true) == cpu) << "filter, n = " << t.n << ", attribute " << int(a);
    }
  }
}

/** 64-bit node ids (dendrograms of more than 2^31 - 1 vertices, forced here on small ones): both backends write the
 * 32-bit run's ids into 64-bit arrays, and the node attributes are the same; the CUDA backend's 16-byte Euler tour
 * (from 2^30 leaves on with 32-bit ids, always with 64-bit ones) forced with 32-bit ids gives the same arrays too. */
TEST(AttributeHierarchy, WideNodeIdsGiveTheSameHierarchies)
{
  const bool gpu = chs_test::HasCudaDevice();
  for (const Tree & t : Inputs())
  {
    const WideTree wide     = Widened(t);
    Tree           wideTour = t;
    wideTour.forceWideTour  = true;
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Dynamics })
    {
      const Tree cpu = Watershed(t, a);
      EXPECT_TRUE(Watershed(wide, a) == Widened(cpu)) << "CPU watershed, n = " << t.n << ", attribute " << int(a);
      if (gpu)
      {
        EXPECT_TRUE(Watershed(wide, a, true) == Widened(cpu)) << "watershed, n = " << t.n << ", attribute " << int(a);
        EXPECT_TRUE(Watershed(wideTour, a, true) == cpu) << "wide tour, n = " << t.n << ", attribute " << int(a);
      }
    }
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Height })
    {
      const double threshold = a == RegionAttribute::Area ? 20 : a == RegionAttribute::Volume ? 100 : 3;
      const Tree   cpu       = Filter(t, a, threshold);
      EXPECT_TRUE(Filter(wide, a, threshold) == Widened(cpu)) << "CPU filter, n = " << t.n << ", attribute " << int(a);
      if (gpu)
      {
        EXPECT_TRUE(Filter(wide, a, threshold, true) == Widened(cpu)) << "filter, n = " << t.n << ", " << int(a);
        EXPECT_TRUE(Filter(wideTour, a, threshold, true) == cpu) << "wide tour filter, n = " << t.n << ", " << int(a);
      }
    }
    for (RegionAttribute a :
         { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Height, RegionAttribute::Dynamics })
      EXPECT_EQ(Attribute(wide, a), Attribute(t, a)) << "n = " << t.n << ", attribute " << int(a);
  }
}

/** 64-bit inputs are checked as 32-bit ones are: an end vertex of 2^32 + 1 (1 if it were cut to 32 bits) or a node
 * id beyond 2^32 is refused, and so is a count of vertices beyond MaximumWideDendrogramVertices; nothing is written. */
TEST(AttributeHierarchy, WideBadInput)
{
  const WideTree t = Widened(Path());
  WideTree       out(t.n);
  WideTree       broken = t;
  broken.u[1]           = (uint64_t(1) << 32) + 1;
  EXPECT_THROW(chs::WatershedHierarchyCPU(broken.In(), RegionAttribute::Area, out.Out()), std::invalid_argument);
  WideTree parent  = t;
  parent.parent[0] = (uint64_t(1) << 32) + 5;
  EXPECT_THROW(chs::FilterRegionsCPU(parent.In(), RegionAttribute::Area, 2, out.Out()), std::invalid_argument);
  chs::DendrogramInputT<uint64_t> huge = t.In();
  huge.vertices                        = chs::MaximumWideDendrogramVertices + 1;
  EXPECT_THROW(chs::WatershedHierarchyCPU(huge, RegionAttribute::Area, out.Out()), std::invalid_argument);
  const std::vector<uint64_t> before = out.parent;
  if (chs_test::HasCudaDevice())
  {
    EXPECT_THROW(chs::WatershedHierarchyCUDA(broken.In(), RegionAttribute::Area, out.Out(), chs::ExecutionContext()),
                 std::invalid_argument);
    EXPECT_THROW(chs::FilterRegionsCUDA(parent.In(), RegionAttribute::Area, 2, out.Out(), chs::ExecutionContext()),
                 std::invalid_argument);
    EXPECT_THROW(chs::WatershedHierarchyCUDA(huge, RegionAttribute::Area, out.Out(), chs::ExecutionContext()),
                 std::invalid_argument);
  }
  EXPECT_EQ(out.parent, before) << "nothing written";
}

} // namespace

namespace
{
using ImageType  = itk::Image<unsigned char, 2>;
using AttrFilter = itk::CudaDendrogramAttributeFilter;
using Backend    = itk::CudaSegmentationBackendEnums::Backend;

ImageType::Pointer
Relief(unsigned nx, unsigned ny)
{
  auto                  image = ImageType::New();
  ImageType::RegionType region;
  region.SetSize({ { nx, ny } });
  image->SetRegions(region);
  image->Allocate();
  const double spacing[2] = { 0.5, 2.0 };
  image->SetSpacing(spacing);
  std::mt19937                       rng(5);
  std::uniform_int_distribution<int> noise(0, 3);
  for (unsigned y = 0; y < ny; ++y)
    for (unsigned x = 0; x < nx; ++x)
      image->SetPixel({ { x, y } }, (unsigned char)(60.0 + 30.0 * std::sin(x / 5.0) * std::cos(y / 4.0) + noise(rng)));
  return image;
}

WideTree
FromWideItk(const itk::Dendrogram * d)
{
  WideTree t(d->GetNumberOfVertices());
  t.parent = d->GetWideParents()->CastToSTLConstContainer();
  t.weight = d->GetWeights()->CastToSTLConstContainer();
  t.edge   = d->GetEdgeIds()->CastToSTLConstContainer();
  t.u      = d->GetWideEdgeU()->CastToSTLConstContainer();
  t.v      = d->GetWideEdgeV()->CastToSTLConstContainer();
  return t;
}

Tree
FromItk(const itk::Dendrogram * d)
{
  Tree t(d->GetNumberOfVertices());
  t.parent = d->GetParents()->CastToSTLConstContainer();
  t.weight = d->GetWeights()->CastToSTLConstContainer();
  t.edge   = d->GetEdgeIds()->CastToSTLConstContainer();
  t.u      = d->GetEdgeU()->CastToSTLConstContainer();
  t.v      = d->GetEdgeV()->CastToSTLConstContainer();
  return t;
}

/** The filter in a pipeline (image -> dendrogram -> hierarchy -> cut) gives the ITK-free API's arrays, keeps the
 * image geometry, and its cut at t has no more regions than at any lower t. */
TEST(CudaDendrogramAttributeFilter, PipelineGivesTheApisHierarchy)
{
  const Backend backends[] = { Backend::CPU, Backend::CUDA };
  for (Backend backend : backends)
  {
    if (backend == Backend::CUDA && !chs_test::HasCudaDevice())
      continue;
    auto tree = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
    tree->SetInput(Relief(64, 48));
    tree->SetBackend(backend);
    auto hierarchy = AttrFilter::New();
    hierarchy->SetInput(tree->GetOutput());
    hierarchy->SetBackend(backend);
    using LabelImageType = itk::Image<unsigned int, 2>;
    auto cut             = itk::DendrogramToLabelImageFilter<LabelImageType>::New();
    cut->SetInput(hierarchy->GetOutput());
    for (RegionAttribute a : { RegionAttribute::Area, RegionAttribute::Volume, RegionAttribute::Dynamics })
    {
      hierarchy->SetAttribute(a);
      cut->Update();
      const Tree in = FromItk(tree->GetOutput());
      EXPECT_TRUE(FromItk(hierarchy->GetOutput()) == Watershed(in, a)) << int(a);
      EXPECT_EQ(hierarchy->GetOutput()->GetImageSpacing(1), 2.0);
      EXPECT_EQ(cut->GetOutput()->GetSpacing()[0], 0.5);
      itk::SizeValueType previous = 0;
      for (double t : { 1000.0, 100.0, 10.0, 0.0 })
      {
        cut->SetDistance(t);
        cut->Update();
        const itk::SizeValueType regions = cut->GetObjectCount();
        EXPECT_GE(regions, previous) << "fewer regions at a lower threshold";
        previous = regions;
      }
      EXPECT_GT(previous, 1u);
    }
    hierarchy->SetOperation(AttrFilter::OperationEnum::FilterRegions);
    hierarchy->SetAttribute(RegionAttribute::Area);
    hierarchy->SetThreshold(20);
    hierarchy->Update();
    EXPECT_TRUE(FromItk(hierarchy->GetOutput()) == Filter(FromItk(tree->GetOutput()), RegionAttribute::Area, 20));
  }
}

TEST(CudaDendrogramAttributeFilter, BadInputThrowsAndTheFilterRunsAgain)
{
  auto tree = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
  tree->SetInput(Relief(20, 10));
  tree->SetBackend(Backend::CPU);
  auto hierarchy = AttrFilter::New();
  hierarchy->SetInput(tree->GetOutput());
  hierarchy->SetBackend(Backend::CPU);
  hierarchy->SetAttribute(RegionAttribute::Height);
  EXPECT_THROW(hierarchy->Update(), itk::ExceptionObject);
  EXPECT_EQ(hierarchy->GetOutput()->GetNumberOfVertices(), 0u) << "nothing half-written";
  hierarchy->SetOperation(AttrFilter::OperationEnum::FilterRegions);
  hierarchy->SetThreshold(std::nan(""));
  EXPECT_THROW(hierarchy->Update(), itk::ExceptionObject);
  hierarchy->SetThreshold(4);
  hierarchy->Update();
  EXPECT_EQ(hierarchy->GetOutput()->GetNumberOfVertices(), 200u);
}

/** 64-bit node ids: a dendrogram of 64-bit ids gives a hierarchy of 64-bit ids, and WideNodeIds on the filter gives one
 * from a dendrogram of 32-bit ids; both hold the 32-bit hierarchy's ids, on both backends. */
TEST(CudaDendrogramAttributeFilter, WideNodeIdsGiveTheSameHierarchy)
{
  for (Backend backend : { Backend::CPU, Backend::CUDA })
  {
    if (backend == Backend::CUDA && !chs_test::HasCudaDevice())
      continue;
    auto tree = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
    tree->SetInput(Relief(40, 30));
    tree->SetBackend(backend);
    auto hierarchy = AttrFilter::New();
    hierarchy->SetInput(tree->GetOutput());
    hierarchy->SetBackend(backend);
    for (bool filter : { false, true })
    {
      hierarchy->SetOperation(filter ? AttrFilter::OperationEnum::FilterRegions
                                     : AttrFilter::OperationEnum::WatershedHierarchy);
      hierarchy->SetAttribute(filter ? RegionAttribute::Height : RegionAttribute::Dynamics);
      hierarchy->SetThreshold(3);
      tree->WideNodeIdsOff();
      hierarchy->WideNodeIdsOff();
      hierarchy->Update();
      ASSERT_FALSE(hierarchy->GetOutput()->HasWideNodeIds());
      const WideTree expected = Widened(FromItk(hierarchy->GetOutput()));
      tree->WideNodeIdsOn();
      hierarchy->Update();
      ASSERT_TRUE(hierarchy->GetOutput()->HasWideNodeIds()) << "the output keeps the input's 64-bit ids";
      EXPECT_TRUE(FromWideItk(hierarchy->GetOutput()) == expected) << "filter " << filter;
      tree->WideNodeIdsOff();
      hierarchy->WideNodeIdsOn();
      hierarchy->Update();
      ASSERT_TRUE(hierarchy->GetOutput()->HasWideNodeIds());
      EXPECT_TRUE(FromWideItk(hierarchy->GetOutput()) == expected) << "WideNodeIds, filter " << filter;
    }
  }
}

} // namespace

namespace
{
/** The image graph's edge list: every edge once, in edge-index order, ends as the image dendrogram records them. */
TEST(ImageGraphEdges, CountsOrderAndEnds)
{
  chs::Grid grid;
  grid.size[0] = 5;
  grid.size[1] = 4;
  EXPECT_EQ(chs::ImageGraphEdges(grid, false, nullptr, nullptr, nullptr), 4u * 4u + 5u * 3u);
  EXPECT_EQ(chs::ImageGraphEdges(grid, true, nullptr, nullptr, nullptr), 4u * 4u + 5u * 3u + 2u * 4u * 3u);
  const uint64_t        m = chs::ImageGraphEdges(grid, true, nullptr, nullptr, nullptr);
  std::vector<uint32_t> u(m), v(m);
  std::vector<uint64_t> e(m);
  chs::ImageGraphEdges(grid, true, u.data(), v.data(), e.data());
  for (uint64_t i = 0; i < m; ++i)
  {
    EXPECT_LT(u[i], v[i]);
    EXPECT_EQ(e[i] / 4, u[i]) << "edge index = pixel * K + slot, K = 4";
    if (i > 0)
      EXPECT_LT(e[i - 1], e[i]);
  }
  const Tree t = ImageDendrogram(5, 4, true, 9, false);
  for (uint64_t r = 0; r + 1 < t.n; ++r)
  {
    const auto it = std::lower_bound(e.begin(), e.end(), t.edge[r]);
    ASSERT_TRUE(it != e.end() && *it == t.edge[r]);
    EXPECT_EQ(u[it - e.begin()], t.u[r]);
    EXPECT_EQ(v[it - e.begin()], t.v[r]);
  }
}

/** Grids of many rows, filled by several threads: the list equals the one written pixel by pixel, slot by slot, with
 * each slot's offset read from its first edge. */
TEST(ImageGraphEdges, ManyRowsEqualThePixelOrder)
{
  for (const auto & [size, full, k] : { std::make_tuple(std::array<int64_t, 3>{ 33, 29, 70 }, false, 3u),
                                        std::make_tuple(std::array<int64_t, 3>{ 33, 29, 70 }, true, 13u),
                                        std::make_tuple(std::array<int64_t, 3>{ 301, 2000, 1 }, true, 4u) })
  {
    chs::Grid grid;
    grid.dimension = size[2] > 1 ? 3 : 2;
    for (int d = 0; d < 3; ++d)
      grid.size[d] = uint64_t(size[d]);
    const uint64_t        m = chs::ImageGraphEdges(grid, full, nullptr, nullptr, nullptr);
    std::vector<uint32_t> u(m), v(m);
    std::vector<uint64_t> e(m);
    ASSERT_EQ(chs::ImageGraphEdges(grid, full, u.data(), v.data(), e.data()), m);
    const auto coordinates = [&](int64_t p) {
      return std::array<int64_t, 3>{ p % size[0], p / size[0] % size[1], p / size[0] / size[1] };
    };
    std::vector<std::array<int64_t, 3>> offset(k);
    std::vector<bool>                   seen(k, false);
    for (uint64_t i = 0; i < m; ++i)
      if (!seen[e[i] % k])
      {
        const auto a = coordinates(u[i]), b = coordinates(v[i]);
        offset[e[i] % k] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
        seen[e[i] % k]   = true;
      }
    std::vector<uint32_t> eu, ev;
    std::vector<uint64_t> ee;
    for (int64_t p = 0; p < size[0] * size[1] * size[2]; ++p)
      for (unsigned s = 0; s < k; ++s)
      {
        ASSERT_TRUE(seen[s]);
        const auto    a = coordinates(p);
        const int64_t x = a[0] + offset[s][0], y = a[1] + offset[s][1], z = a[2] + offset[s][2];
        if (x < 0 || y < 0 || z < 0 || x >= size[0] || y >= size[1] || z >= size[2])
          continue;
        eu.push_back(uint32_t(p));
        ev.push_back(uint32_t((z * size[1] + y) * size[0] + x));
        ee.push_back(uint64_t(p) * k + s);
      }
    EXPECT_EQ(u, eu);
    EXPECT_EQ(v, ev);
    EXPECT_EQ(e, ee);
  }
}
} // namespace

namespace
{
/** The alpha-tree input: the filter equals the ITK-free composition (edge saliency, dendrogram of the
 * saliency-weighted graph, its filter); at area 1 nothing is removed and its cuts are the alpha-tree's partitions;
 * the GPU gives the CPU's arrays; the wrong operation and two inputs are refused. */
TEST(CudaDendrogramAttributeFilter, AlphaTreeInput)
{
  using AlphaFilter = itk::CudaImageToAlphaTreeFilter<ImageType>;
  for (bool full : { false, true })
  {
    auto alpha = AlphaFilter::New();
    alpha->SetInput(Relief(37, 29));
    alpha->SetFullyConnected(full);
    alpha->SetBackend(Backend::CPU);
    alpha->Update();
    const itk::AlphaTree * tree      = alpha->GetOutput();
    auto                   hierarchy = AttrFilter::New();
    hierarchy->SetAlphaTreeInput(tree);
    hierarchy->SetFullyConnected(full);
    hierarchy->SetBackend(Backend::CPU);
    hierarchy->SetOperation(AttrFilter::OperationEnum::FilterRegions);
    hierarchy->SetThreshold(12);
    hierarchy->Update();

    // The composition by hand.
    chs::Grid grid;
    grid.size[0]            = 37;
    grid.size[1]            = 29;
    const uint64_t        n = 37 * 29, m = chs::ImageGraphEdges(grid, full, nullptr, nullptr, nullptr);
    std::vector<uint32_t> u(m), v(m);
    std::vector<uint64_t> ids(m);
    chs::ImageGraphEdges(grid, full, u.data(), v.data(), ids.data());
    std::vector<double> saliency(m);
    const auto &        parents = tree->GetParents()->CastToSTLConstContainer();
    chs::AlphaTreeEdgeSaliencyCPU(parents.data(),
                                  tree->GetLevels()->CastToSTLConstContainer().data(),
                                  parents.size(),
                                  u.data(),
                                  v.data(),
                                  m,
                                  saliency.data());
    Tree bpt(n);
    chs::GraphSingleLinkageCPU(u.data(), v.data(), saliency.data(), m, n, false, bpt.Out());
    for (auto & e : bpt.edge)
      e = ids[e];
    EXPECT_TRUE(FromItk(hierarchy->GetOutput()) == Filter(bpt, RegionAttribute::Area, 12)) << full;

    // At area 1 nothing is removed: the cuts are the alpha-tree's partitions.
    hierarchy->SetThreshold(1);
    using LabelImageType = itk::Image<unsigned int, 2>;
    auto cut             = itk::DendrogramToLabelImageFilter<LabelImageType>::New();
    cut->SetInput(hierarchy->GetOutput());
    for (double a : { 0.0, 2.0, 5.0, 11.0 })
    {
      cut->SetDistance(a);
      cut->Update();
      const auto                   labels = tree->ComputeLabels(a);
      const auto *                 ours   = cut->GetOutput()->GetBufferPointer();
      std::map<uint64_t, uint64_t> forward, backward;
      bool                         same = true;
      for (uint64_t p = 0; p < n; ++p)
      {
        same = same && forward.emplace(ours[p], (*labels)[p]).first->second == (*labels)[p];
        same = same && backward.emplace((*labels)[p], ours[p]).first->second == ours[p];
      }
      EXPECT_TRUE(same) << "alpha " << a << ", fully connected " << full;
    }

    if (chs_test::HasCudaDevice())
    {
      hierarchy->SetThreshold(12);
      hierarchy->Update();
      const Tree cpu = FromItk(hierarchy->GetOutput());
      hierarchy->SetBackend(Backend::CUDA);
      hierarchy->Update();
      EXPECT_TRUE(FromItk(hierarchy->GetOutput()) == cpu) << full;
      hierarchy->SetBackend(Backend::CPU);
    }

    // An alpha-tree of 64-bit node ids gives a dendrogram of 64-bit ids holding the same arrays, on both backends.
    hierarchy->SetThreshold(12);
    hierarchy->Update();
    const WideTree expected = Widened(FromItk(hierarchy->GetOutput()));
    alpha->WideNodeIdsOn();
    for (Backend backend : { Backend::CPU, Backend::CUDA })
    {
      if (backend == Backend::CUDA && !chs_test::HasCudaDevice())
        continue;
      hierarchy->SetBackend(backend);
      hierarchy->Update();
      ASSERT_TRUE(tree->HasWideNodeIds() && hierarchy->GetOutput()->HasWideNodeIds());
      EXPECT_TRUE(FromWideItk(hierarchy->GetOutput()) == expected) << full << " " << int(backend);
    }
    alpha->WideNodeIdsOff();
    hierarchy->SetBackend(Backend::CPU);

    hierarchy->SetOperation(AttrFilter::OperationEnum::WatershedHierarchy);
    EXPECT_THROW(hierarchy->Update(), itk::ExceptionObject);
    hierarchy->SetOperation(AttrFilter::OperationEnum::FilterRegions);
    auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<ImageType>::New();
    dendrogram->SetInput(Relief(37, 29));
    dendrogram->SetBackend(Backend::CPU);
    hierarchy->SetInput(dendrogram->GetOutput());
    EXPECT_THROW(hierarchy->Update(), itk::ExceptionObject);
  }
}
/** chs::AlphaTreeFilterRegions, the one call, equals its steps run one by one on the CPU (the image graph, the
 * alpha-tree's saliency on it, the dendrogram of that graph, its filter) for a 3D volume, both connectivities and
 * the three attributes, on both backends and in both id widths. */
TEST(AttributeHierarchy, AlphaTreeFilterRegionsEqualsItsSteps)
{
  using VolumeType              = itk::Image<unsigned char, 3>;
  auto                   volume = VolumeType::New();
  VolumeType::RegionType region;
  region.SetSize({ { 13, 11, 9 } });
  volume->SetRegions(region);
  volume->Allocate();
  std::mt19937                       rng(17);
  std::uniform_int_distribution<int> value(0, 5); // few grey levels: many ties
  for (auto * p = volume->GetBufferPointer(); p != volume->GetBufferPointer() + 13 * 11 * 9; ++p)
    *p = (unsigned char)(value(rng) * 7);
  chs::Grid grid;
  grid.dimension   = 3;
  grid.size[0]     = 13;
  grid.size[1]     = 11;
  grid.size[2]     = 9;
  const uint64_t n = 13 * 11 * 9;
  for (bool full : { false, true })
  {
    auto alpha = itk::CudaImageToAlphaTreeFilter<VolumeType>::New();
    alpha->SetInput(volume);
    alpha->SetFullyConnected(full);
    alpha->SetBackend(Backend::CPU);
    alpha->Update();
    const auto &          parents = alpha->GetOutput()->GetParents()->CastToSTLConstContainer();
    const auto &          levels  = alpha->GetOutput()->GetLevels()->CastToSTLConstContainer();
    const uint64_t        m       = chs::ImageGraphEdges(grid, full, nullptr, nullptr, nullptr);
    std::vector<uint32_t> u(m), v(m);
    std::vector<uint64_t> ids(m);
    chs::ImageGraphEdges(grid, full, u.data(), v.data(), ids.data());
    std::vector<double> saliency(m);
    chs::AlphaTreeEdgeSaliencyCPU(
      parents.data(), levels.data(), parents.size(), u.data(), v.data(), m, saliency.data());
    Tree bpt(n);
    chs::GraphSingleLinkageCPU(u.data(), v.data(), saliency.data(), m, n, false, bpt.Out());
    for (auto & e : bpt.edge)
      e = ids[e];
    const std::vector<uint64_t> wideParents(parents.begin(), parents.end());
    for (auto [attribute, threshold] : { std::pair{ RegionAttribute::Area, 6.0 },
                                         std::pair{ RegionAttribute::Volume, 40.0 },
                                         std::pair{ RegionAttribute::Height, 8.0 } })
    {
      const Tree expected = Filter(bpt, attribute, threshold);
      for (Backend backend : { Backend::CPU, Backend::CUDA })
      {
        if (backend == Backend::CUDA && !chs_test::HasCudaDevice())
          continue;
        chs::ExecutionContext context;
        context.backend = backend == Backend::CUDA ? chs::Backend::CUDA : chs::Backend::CPU;
        Tree got(n);
        chs::AlphaTreeFilterRegions(
          parents.data(), levels.data(), parents.size(), grid, full, attribute, threshold, got.Out(), context);
        EXPECT_TRUE(got == expected) << full << " " << int(attribute) << " " << int(backend);
        WideTree wide(n);
        chs::AlphaTreeFilterRegions(
          wideParents.data(), levels.data(), parents.size(), grid, full, attribute, threshold, wide.Out(), context);
        EXPECT_TRUE(wide == Widened(expected)) << full << " " << int(attribute) << " " << int(backend);
      }
    }
  }
}
} // namespace
