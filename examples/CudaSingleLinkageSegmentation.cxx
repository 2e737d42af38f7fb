// CudaSingleLinkageSegmentation: segments any ITK-readable image by cutting its single-linkage dendrogram, computed
// on the GPU (Boruvka minimum spanning tree of the pixel graph, then PANDORA).
//
//   CudaSingleLinkageSegmentation [options] <input> <output>      run with --help for the options, --xml for 3D Slicer
#include "itkCudaImageToSingleLinkageDendrogramFilter.h"
#include "itkDendrogramToLabelImageFilter.h"
#include "chsExampleCli.h"
#include "chsExampleOverlay.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

namespace
{
const char * kProgram = "CudaSingleLinkageSegmentation";

const char * kUsage = R"(Usage: CudaSingleLinkageSegmentation [options] <input> <output>

Single-linkage clustering of the pixels of a 2D image or 3D volume (any format ITK reads): the dendrogram of the
pixel graph weighted by |a - b| is built on the GPU, then cut into regions: the pixels joined by paths whose steps
all differ by at most --distance (the alpha-connected components), or the --clusters coarsest regions. Writes the
labels as unsigned 32-bit integers, 1..N in raster order.

Options:
  --distance <d>          merge neighbours that differ by at most d (default 0: the flat zones)
  --clusters <k>          instead: cut into exactly k regions (the k - 1 heaviest tree edges removed)
  --fully-connected       8-connectivity in 2D, 26 in 3D (default: 4 / 6)
  --overlay <file.png>    also write the region borders over the image (the middle slice of a volume)
  --backend <name>        auto (default: the GPU when there is one), cuda or cpu (the sequential reference)
  --device <id>           CUDA device (default 0)
  --xml                   print the 3D Slicer command-line module description and exit
  --help                  this text
)";

const std::string kSlicerXml = std::string(R"(<?xml version="1.0" encoding="utf-8"?>
<executable>
  <category>Segmentation.CudaHierarchicalSegmentation</category>
  <title>CUDA Single-Linkage Segmentation</title>
  <description>Cuts the single-linkage dendrogram of the pixel graph (built on the GPU) into regions at a distance or into a number of clusters.</description>
  <version>0.1.0</version>
  <documentation-url>https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation</documentation-url>
  <license>Apache 2.0</license>
  <contributor>CudaHierarchicalSegmentation developers</contributor>
  <parameters>
    <label>Cut</label>
    <double>
      <name>distance</name>
      <longflag>--distance</longflag>
      <label>Distance</label>
      <description>Merge neighbours whose values differ by at most this much.</description>
      <default>0</default>
    </double>
    <integer>
      <name>clusters</name>
      <longflag>--clusters</longflag>
      <label>Number of regions</label>
      <description>When positive, cut into exactly this many regions instead.</description>
      <default>0</default>
    </integer>
    <boolean>
      <name>fullyConnected</name>
      <longflag>--fully-connected</longflag>
      <label>Fully connected</label>
      <description>26-connectivity (8 in 2D) instead of face connectivity.</description>
      <default>false</default>
    </boolean>
)") + chs_example::kSlicerBackendParameters + R"(  </parameters>
)" + chs_example::kSlicerImageToLabelMap + R"(</executable>
)";

struct Options
{
  std::string                                input, output, overlay;
  double                                     distance       = 0.0;
  itk::SizeValueType                         clusters       = 0;
  bool                                       fullyConnected = false;
  itk::CudaSegmentationBackendEnums::Backend backend        = itk::CudaSegmentationBackendEnums::Backend::Auto;
  int                                        device         = 0;
};

template <unsigned D>
void
Run(const Options & o)
{
  using Image  = itk::Image<float, D>;
  using Labels = itk::Image<unsigned int, D>;
  auto reader  = itk::ImageFileReader<Image>::New();
  reader->SetFileName(o.input);
  auto dendrogram = itk::CudaImageToSingleLinkageDendrogramFilter<Image>::New();
  dendrogram->SetInput(reader->GetOutput());
  dendrogram->SetFullyConnected(o.fullyConnected);
  dendrogram->SetBackend(o.backend);
  dendrogram->SetDeviceId(o.device);
  auto cut = itk::DendrogramToLabelImageFilter<Labels>::New();
  cut->SetInput(dendrogram->GetOutput());
  cut->SetDistance(o.distance);
  cut->SetNumberOfClusters(o.clusters);
  reader->Update();
  const auto start = std::chrono::steady_clock::now();
  dendrogram->Update();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  cut->Update();
  auto writer = itk::ImageFileWriter<Labels>::New();
  writer->SetInput(cut->GetOutput());
  writer->SetFileName(o.output);
  writer->UseCompressionOn();
  writer->Update();
  if (!o.overlay.empty())
    chs_example::WriteBorderOverlay(reader->GetOutput(), cut->GetOutput(), o.overlay);
  const bool cuda = dendrogram->GetLastBackend() == itk::CudaSegmentationBackendEnums::Backend::CUDA;
  std::cout << cut->GetObjectCount() << " regions; dendrogram of " << dendrogram->GetOutput()->GetNumberOfVertices()
            << " pixels in " << ms << " ms (" << (cuda ? "CUDA" : "CPU reference") << ") -> " << o.output << '\n';
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
    kUsage,
    kSlicerXml,
    o.backend,
    o.device,
    [&](const std::string & a, const std::function<std::string()> & value)
    {
      if (a == "--distance")
        o.distance = std::stod(value());
      else if (a == "--clusters")
        o.clusters = std::stoul(value());
      else if (a == "--fully-connected")
        o.fullyConnected = true;
      else if (a == "--overlay")
        o.overlay = value();
      else
        return false;
      return true;
    });
  return chs_example::RunOnInputDimension(
    kProgram, positional, o.input, o.output, [&](auto dimension) { Run<decltype(dimension)::value>(o); });
}
