// chseg._chseg: nanobind bindings of the module's ITK-free API (include/chs/) for NumPy and CuPy arrays, one file per
// algorithm (python/src/chseg<Algorithm>.cxx; chsegBindings.h is what they share). This file defines the module: the
// exceptions, the enums that cross the seam, the device and host-cache functions, and each algorithm's bindings.
#include "chsegBindings.h"

#include "chs/AlphaTree.h"
#include "chs/AttributeHierarchy.h"
#include "chs/ConnectedComponents.h"
#include "chs/ForestingTransform.h"
#include "chs/HostCache.h"
#include "chs/Watershed.h"

#include <new>

namespace chseg
{
namespace
{

/** A NumPy array of `shape` whose storage comes from the host array cache (include/chs/HostCache.h: pages already
 * mapped; page-locked once with `pinned`, so that downloads go straight into it) and goes back to it when the array is
 * freed. Its values are unspecified: the backends write every element. */
template <typename T>
nb::object
HostEmptyOf(const std::vector<size_t> & shape, bool pinned)
{
  using Vector = std::vector<T, chs::DefaultInitAllocator<T>>;
  size_t n     = 1;
  for (size_t s : shape)
    n *= s;
  auto * v = new Vector();
  try
  {
    nb::gil_scoped_release release;
    chs::AcquireHostVector(*v, n, pinned);
  }
  catch (...)
  {
    delete v;
    throw;
  }
  nb::capsule owner(v,
                    [](void * p) noexcept
                    {
                      auto * vector = static_cast<Vector *>(p);
                      chs::ReleaseHostVector(*vector);
                      delete vector;
                    });
  return AsNumpy(nb::ndarray<nb::numpy, T>(v->data(), shape.size(), shape.data(), owner));
}

nb::object
HostEmpty(const std::vector<size_t> & shape, const std::string & dtype, bool pinned)
{
  if (dtype == "uint8")
    return HostEmptyOf<uint8_t>(shape, pinned);
  if (dtype == "uint16")
    return HostEmptyOf<uint16_t>(shape, pinned);
  if (dtype == "uint32")
    return HostEmptyOf<uint32_t>(shape, pinned);
  if (dtype == "uint64")
    return HostEmptyOf<uint64_t>(shape, pinned);
  if (dtype == "int64")
    return HostEmptyOf<int64_t>(shape, pinned);
  if (dtype == "float32")
    return HostEmptyOf<float>(shape, pinned);
  if (dtype == "float64")
    return HostEmptyOf<double>(shape, pinned);
  throw std::invalid_argument("chseg: no cached host arrays of " + dtype);
}

int
DeviceCount()
{
  return chs::CudaDeviceCount();
}

std::string
NoDeviceReason()
{
  std::string why;
  return chs::CudaDeviceCount(&why) > 0 ? std::string() : why;
}

/** The enums of the API as Python enums: a binding takes only their members (the Python layer maps its strings to
 * them in one place, chseg._arrays.choice, whose accepted names are these members' names, lower case, '-' for
 * '_'). */
void
BindEnums(nb::module_ & m)
{
  nb::enum_<chs::Backend>(m, "Backend")
    .value("AUTO", chs::Backend::Auto)
    .value("CUDA", chs::Backend::CUDA)
    .value("CPU", chs::Backend::CPU);
  // Every operation's binding takes the call's context, as the entries of include/chs/ do: the backend (the Python
  // layer resolves 'auto'), the device and the stream (a cudaStream_t as an integer; 0: the legacy default stream).
  nb::class_<chs::ExecutionContext>(m, "ExecutionContext")
    .def(
      "__init__",
      [](chs::ExecutionContext * context, chs::Backend backend, int device, uintptr_t stream)
      {
        new (context) chs::ExecutionContext();
        context->backend = backend;
        context->device  = device;
        context->stream  = reinterpret_cast<void *>(stream);
      },
      nb::arg("backend"),
      nb::arg("device"),
      nb::arg("stream"))
    .def_ro("backend", &chs::ExecutionContext::backend)
    .def_ro("device", &chs::ExecutionContext::device);
  nb::enum_<chs::ConnectedComponentMode>(m, "ConnectedComponentMode")
    .value("BINARY", chs::ConnectedComponentMode::Binary)
    .value("FLAT_ZONES", chs::ConnectedComponentMode::FlatZones)
    .value("NON_ZERO_ZONES", chs::ConnectedComponentMode::NonZeroZones)
    .value("GRAPH", chs::ConnectedComponentMode::Graph);
  nb::enum_<chs::WatershedAlgorithm>(m, "WatershedAlgorithm")
    .value("PRUF", chs::WatershedAlgorithm::PRUF)
    .value("APRUF", chs::WatershedAlgorithm::APRUF)
    .value("PRW", chs::WatershedAlgorithm::PRW);
  nb::enum_<chs::PlateauResolution>(m, "PlateauResolution")
    .value("BALANCED", chs::PlateauResolution::Balanced)
    .value("SYNCHRONOUS", chs::PlateauResolution::Synchronous)
    .value("BLOCK_ASYNCHRONOUS", chs::PlateauResolution::BlockAsynchronous);
  nb::enum_<chs::VectorDistance>(m, "VectorDistance")
    .value("L1", chs::VectorDistance::L1)
    .value("L2", chs::VectorDistance::L2)
    .value("LINF", chs::VectorDistance::LInfinity);
  nb::enum_<chs::AlphaTreeAlgorithm>(m, "AlphaTreeAlgorithm")
    .value("AUTO", chs::AlphaTreeAlgorithm::Auto)
    .value("INSERT_ALL_EDGES", chs::AlphaTreeAlgorithm::InsertAllEdges)
    .value("SKIP_REDUNDANT_EDGES", chs::AlphaTreeAlgorithm::SkipRedundantEdges)
    .value("SPANNING_TREE", chs::AlphaTreeAlgorithm::SpanningTree)
    .value("LEVEL_SYNCHRONOUS", chs::AlphaTreeAlgorithm::LevelSynchronous);
  nb::enum_<chs::ArcWeightFunction>(m, "ArcWeightFunction")
    .value("TARGET", chs::ArcWeightFunction::Target)
    .value("MAXIMUM", chs::ArcWeightFunction::Maximum)
    .value("ABSOLUTE_DIFFERENCE", chs::ArcWeightFunction::AbsoluteDifference);
  nb::enum_<chs::RegionAttribute>(m, "RegionAttribute")
    .value("AREA", chs::RegionAttribute::Area)
    .value("VOLUME", chs::RegionAttribute::Volume)
    .value("HEIGHT", chs::RegionAttribute::Height)
    .value("DYNAMICS", chs::RegionAttribute::Dynamics);
}

} // namespace
} // namespace chseg

NB_MODULE(_chseg, m)
{
  using namespace chseg;
  m.doc() = "CudaHierarchicalSegmentation's ITK-free API for NumPy and CuPy arrays (use the chseg package)";
  nb::register_exception_translator(
    [](const std::exception_ptr & p, void *)
    {
      try
      {
        std::rethrow_exception(p);
      }
      catch (const chs::LabelOverflowError & e)
      {
        PyErr_SetString(PyExc_ValueError, e.what());
      }
      catch (const chs::DeviceMemoryError & e)
      {
        PyErr_SetString(PyExc_MemoryError, e.what()); // as CuPy's OutOfMemoryError, a MemoryError
      }
    });
  m.def("device_count", &DeviceCount);
  m.def("no_device_reason", &NoDeviceReason);
  m.def("device_name", &chs::CudaDeviceName);
  m.def("fail_device_allocation_after",
        &chs::testing::FailDeviceAllocationAfter,
        nb::arg("n"),
        "Test hook: the n-th device allocation from now fails (0: off).");
  m.def("set_device_memory_limit",
        &chs::testing::SetDeviceMemoryLimit,
        nb::arg("bytes"),
        "Test hook: the runs see at most this many bytes of device memory free (0: the device's own figure).");
  m.def("host_empty", &HostEmpty, nb::arg("shape"), nb::arg("dtype"), nb::arg("pinned"));
  m.def("host_cache_bytes", &chs::GetHostCacheBytes);
  m.def("get_host_cache_limit", &chs::GetHostCacheLimit);
  m.def("set_host_cache_limit", &chs::SetHostCacheLimit, nb::arg("bytes"));
  m.def("release_host_cache", &chs::ReleaseHostCache);
  m.def("host_transfer_bytes",
        &chs::testing::HostTransferBytes,
        "Test counter: bytes the CUDA backends moved between host memory and a device (device arrays do not count).");
  BindEnums(m);
  BindConnectedComponents(m);
  BindWatershed(m);
  BindAlphaTree(m);
  BindSingleLinkage(m);
  BindForestingTransform(m);
}
