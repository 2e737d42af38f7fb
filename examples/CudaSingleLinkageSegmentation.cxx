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

const std::string kUsage = std::string(R"(Usage: CudaSingleLinkageSegmentation [options] <input> <output>

Single-linkage clustering of the pixels of a 2D image or 3D volume (any format ITK reads): the dendrogram of the
pixel graph weighted by |a - b| is built on the GPU, then cut into regions: the pixels joined by paths whose steps
all differ by at most --distance (the alpha-connected components), or the --clusters coarsest regions. Writes the
labels as unsigned 32-bit integers, 1..N in raster order.

With --hierarchy area, volume or dynamics the dendrogram is first turned into the watershed hierarchy by that
attribute (Najman, Cousty and Perret; Higra's watershed_hierarchy_by_*), and --distance is then a threshold of the
attribute: the watershed basins whose minima survive an area (volume, dynamics) filter at d.

Options:
  --distance <d>          merge neighbours that differ by at most d (default 0: the flat zones); with --hierarchy,
                          the attribute threshold
  --clusters <k>          instead: cut into exactly k regions (the k - 1 heaviest tree edges removed)
  --hierarchy <name>      altitude (default: the dendrogram itself), area, volume or dynamics
  --min-area <a>          remove the frontiers of regions of fewer than a pixels first (an area filter)
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --overlay <file.png>    also write the region borders over the image (the middle slice of a volume)
)") + chs_example::kCommonUsage;

const std::string kSlicerXml = chs_example::SlicerModuleXml(
  "CUDA Single-Linkage Clustering",
  "Cuts the single-linkage dendrogram of the pixel graph (minimum spanning tree and dendrogram built on the GPU) "
  "into the regions at a distance or into a number of clusters.",
  R"(  <parameters>
    <label>Cut</label>
    <description>Where the dendrogram is cut.</description>
    <double>
      <name>distance</name>
      <longflag>--distance</longflag>
      <label>Distance</label>
      <description>Merge neighbours whose values differ by at most this much; with a hierarchy by area, volume or dynamics, the threshold of that attribute.</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>1000000000000</maximum>
        <step>1</step>
      </constraints>
    </double>
    <integer>
      <name>clusters</name>
      <longflag>--clusters</longflag>
      <label>Number of regions</label>
      <description>When positive, cut into exactly this many regions instead.</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>1000000000</maximum>
        <step>1</step>
      </constraints>
    </integer>
    <string-enumeration>
      <name>hierarchy</name>
      <longflag>--hierarchy</longflag>
      <label>Hierarchy</label>
      <description>altitude: the single-linkage dendrogram; area, volume, dynamics: the watershed hierarchy by that attribute, cut at Distance.</description>
      <default>altitude</default>
      <element>altitude</element>
      <element>area</element>
      <element>volume</element>
      <element>dynamics</element>
    </string-enumeration>
    <integer>
      <name>minArea</name>
      <longflag>--min-area</longflag>
      <label>Smallest region</label>
      <description>When above 1, remove the frontiers of regions of fewer pixels first (an area filter).</description>
      <default>0</default>
      <constraints>
        <minimum>0</minimum>
        <maximum>1000000000</maximum>
        <step>1</step>
      </constraints>
    </integer>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
  </parameters>
)" + chs_example::SlicerImageToLabelMap("regions"));

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
  const std::vector<std::string> positional = chs_example::ParseArguments(
    argc,
    argv,
    kProgram,
    kUsage.c_str(),
    kSlicerXml,
    o.common,
    [&](const std::string & a, const std::function<std::string()> & value)
    {
      if (a == "--distance")
        o.distance = std::stod(value());
      else if (a == "--clusters")
        o.clusters = std::stoul(value());
      else if (a == "--fully-connected")
        o.fullyConnected = true;
      else if (a == "--hierarchy")
      {
        o.hierarchy = value();
        if (o.hierarchy != "altitude" && o.hierarchy != "area" && o.hierarchy != "volume" && o.hierarchy != "dynamics")
          chs_example::Fail(kProgram, "unknown hierarchy '" + o.hierarchy + "' (altitude, area, volume or dynamics)");
      }
      else if (a == "--min-area")
        o.minArea = std::stoul(value());
      else if (a == "--overlay")
        o.overlay = value();
      else
        return false;
      return true;
    });
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
