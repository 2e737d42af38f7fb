// CudaSingleLinkageSegmentation: segments any ITK-readable image by cutting its single-linkage dendrogram, computed
// on the GPU (Boruvka minimum spanning tree of the pixel graph, then PANDORA).
//
//   CudaSingleLinkageSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaDendrogramAttributeFilter.h"
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkDendrogramToLabelImageFilter.h"
#include "chsExampleCli.h"
#include "chsSlicerModule.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaSingleLinkageSegmentation";

struct Options
{
  std::string                input, output, overlay;
  double                     distance       = 0.0;
  itk::SizeValueType         clusters       = 0;
  bool                       fullyConnected = false;
  std::string                hierarchy      = "altitude";
  itk::SizeValueType         minArea        = 0;
  chs_example::CommonOptions common;
};

/** The options, declared once: --help, --xml and the parser come from here. */
chs_example::Module
Describe(Options & o)
{
  chs_example::Module m(kProgram,
                        R"(Usage: CudaSingleLinkageSegmentation [options] <input> <output>

Single-linkage clustering of the pixels of a 2D image or 3D volume (any format ITK reads): the dendrogram of the
pixel graph weighted by |a - b| is built on the GPU, then cut into regions: the pixels joined by paths whose steps
all differ by at most --distance (the alpha-connected components), or the --clusters coarsest regions. Writes the
labels as unsigned 32-bit integers, 1..N in raster order.

With --hierarchy area, volume or dynamics the dendrogram is first turned into the watershed hierarchy by that
attribute (Najman, Cousty and Perret; Higra's watershed_hierarchy_by_*), and --distance is then a threshold of the
attribute: the watershed basins whose minima survive an area (volume, dynamics) filter at d.
)",
                        "CUDA Single-Linkage Clustering",
                        "Cuts the single-linkage dendrogram of the pixel graph (minimum spanning tree and dendrogram "
                        "built on the GPU) into the regions at a distance or into a number of clusters.");
  m.Group("Cut", "Where the dendrogram is cut.");
  m.Add(chs_example::Number("--distance",
                            "<d>",
                            o.distance,
                            "merge neighbours that differ by at most d (default 0: the flat zones); with --hierarchy, "
                            "the attribute threshold")
          .Slicer("distance",
                  "Distance",
                  "Merge neighbours whose values differ by at most this much; with a hierarchy by area, volume or "
                  "dynamics, the threshold of that attribute.")
          .Range("0", "1000000000000", "1"));
  m.Add(
    chs_example::Number(
      "--clusters", "<k>", o.clusters, "instead: cut into exactly k regions (the k - 1 heaviest tree edges removed)")
      .Slicer("clusters", "Number of regions", "When positive, cut into exactly this many regions instead.")
      .Range("0", "1000000000", "1"));
  m.Add(chs_example::Choice("--hierarchy",
                            "<name>",
                            o.hierarchy,
                            { "altitude", "area", "volume", "dynamics" },
                            "hierarchy",
                            "altitude (default: the dendrogram itself), area, volume or dynamics")
          .Slicer("hierarchy",
                  "Hierarchy",
                  "altitude: the single-linkage dendrogram; area, volume, dynamics: the watershed hierarchy by that "
                  "attribute, cut at Distance."));
  m.Add(
    chs_example::Number(
      "--min-area", "<a>", o.minArea, "remove the frontiers of regions of fewer than a pixels first (an area filter)")
      .Slicer("minArea",
              "Smallest region",
              "When above 1, remove the frontiers of regions of fewer pixels first (an area filter).")
      .Range("0", "1000000000", "1"));
  m.Add(chs_example::Switch("--fully-connected", o.fullyConnected, "8-connectivity in 2D, 26 in 3D (default: 4 / 6)")
          .Slicer("fullyConnected", "Fully connected", "26-connectivity (8 in 2D) instead of face connectivity."));
  m.Add(chs_example::Path("--overlay",
                          "<file.png>",
                          o.overlay,
                          "also write the region borders over the image (the middle slice of a volume)"));
  chs_example::AddImageToLabelMap(m, "regions", o.common);
  m.AddExecution(o.common);
  return m;
}

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  chs_example::SlicerProgress progress(kProgram, "Single-linkage clustering of " + o.input);
  auto                        reader = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  progress.Watch(reader, 0.0f, 0.1f);
  auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<Image>::New();
  dendrogram->SetInput(reader->GetOutput());
  dendrogram->SetFullyConnected(o.fullyConnected);
  o.common.Apply(dendrogram.GetPointer());
  // The hierarchy to cut: the dendrogram, its watershed hierarchy by an attribute, then the area filter.
  using Attributes             = itk::CudaDendrogramAttributeFilter;
  itk::Dendrogram * hierarchy  = dendrogram->GetOutput();
  auto              watershed  = Attributes::New();
  auto              areaFilter = Attributes::New();
  if (o.hierarchy != "altitude")
  {
    watershed->SetInput(hierarchy);
    watershed->SetAttribute(o.hierarchy == "area"     ? Attributes::AttributeEnum::Area
                            : o.hierarchy == "volume" ? Attributes::AttributeEnum::Volume
                                                      : Attributes::AttributeEnum::Dynamics);
    o.common.Apply(watershed.GetPointer());
    hierarchy = watershed->GetOutput();
  }
  if (o.minArea > 1)
  {
    areaFilter->SetInput(hierarchy);
    areaFilter->SetOperation(Attributes::OperationEnum::FilterRegions);
    areaFilter->SetThreshold(double(o.minArea));
    o.common.Apply(areaFilter.GetPointer());
    hierarchy = areaFilter->GetOutput();
  }
  auto cut = itk::DendrogramToLabelImageFilter<Labels>::New();
  cut->SetInput(hierarchy);
  cut->SetDistance(o.distance);
  cut->SetNumberOfClusters(o.clusters);
  progress.Watch(dendrogram, 0.1f, 0.8f);
  progress.Watch(cut, 0.8f, 0.9f);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  dendrogram->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cut->Update();
  chs_example::WriteLabelOutputs(cut->GetOutput(), o.output, o.common, cut->GetObjectCount(), "Region", progress);
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), cut->GetOutput(), chs_example::Output(o.overlay));
  std::cout << cut->GetObjectCount() << " regions; dendrogram of " << dendrogram->GetOutput()->GetNumberOfVertices()
            << " pixels in " << ms << " ms (" << chs_example::RanOn(dendrogram.GetPointer()) << ") -> " << o.output
            << '\n';
  progress.Finish();
}

} // namespace

int
main(int argc, char ** argv)
{
  Options                        o;
  const std::vector<std::string> positional = Describe(o).Parse(argc, argv);
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
