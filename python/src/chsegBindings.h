// What every binding of chseg._chseg uses (python/src/chseg*.cxx, one file per algorithm): the array type, the
// dispatch on dtypes, the execution context of a call, the checks of host arrays and grids, and NumPy outputs.
//
// Every function takes its outputs as arrays allocated by the Python layer (python/chseg/), C-contiguous, on the host
// (NumPy) or on a CUDA device (CuPy, through DLPack); the CUDA backends read and write device arrays with
// device-to-device copies, so data on the GPU never crosses the host link. Arguments are checked by the Python
// layer; the library checks them again and throws std::invalid_argument (ValueError here) before writing anything.
// Each binding calls the one entry of its operation (include/chs/), which runs the backend of the call's context;
// the GIL is released while it runs.
#ifndef chsegBindings_h
#define chsegBindings_h

#include "chs/Execution.h"
#include "chs/SingleLinkage.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace chseg
{
namespace nb = nanobind;

/** An array the backend writes (the outputs the Python layer allocates), and one it only reads (the inputs: read-only
 * arrays are taken as they are, without a copy, as NumPy gives them for np.load(mmap_mode="r"), np.broadcast_to or
 * np.asarray of an image). Both C-contiguous, on the host or on a CUDA device. */
using Array = nb::ndarray<nb::c_contig>;
using Input = nb::ndarray<nb::ro, nb::c_contig>;

template <typename... Ts>
struct Types
{
};
using AllPixels       = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t, int64_t, float, double>;
using NoWidePixels    = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, double>;
using ForestWeights   = Types<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float>;
using AlphaTreePixels = Types<uint8_t, uint16_t, int16_t, float>;
using GraphWeights    = Types<float, double>;
using Labels          = Types<uint8_t, uint16_t, uint32_t, uint64_t>;

inline std::string
DtypeName(nb::dlpack::dtype d)
{
  const char * kind = d.code == uint8_t(nb::dlpack::dtype_code::Int)     ? "int"
                      : d.code == uint8_t(nb::dlpack::dtype_code::UInt)  ? "uint"
                      : d.code == uint8_t(nb::dlpack::dtype_code::Float) ? "float"
                                                                         : "other";
  return std::string(kind) + std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

/** Calls f(T{}) for the type T of the list that is the array's dtype. */
template <class A, typename F, typename T, typename... Ts>
void
Dispatch(const A & a, const char * what, F && f, Types<T, Ts...>)
{
  if (a.dtype() == nb::dtype<T>())
  {
    f(T{});
    return;
  }
  if constexpr (sizeof...(Ts) > 0)
    Dispatch(a, what, f, Types<Ts...>{});
  else
    throw std::invalid_argument(std::string("chseg: ") + what + " of type " + DtypeName(a.dtype()) +
                                " is not supported here");
}

/** Calls f(T{}, L{}), with the GIL released, for the pixel type T of `image` (one of TPixels) and the label type L
 * of `labels`. */
template <typename TPixels, typename F>
void
DispatchPixelAndLabel(const Input & image, const char * what, const Array & labels, TPixels pixels, F && f)
{
  Dispatch(
    image,
    what,
    [&](auto pixel)
    {
      Dispatch(
        labels,
        "a label array",
        [&](auto label)
        {
          nb::gil_scoped_release release;
          f(pixel, label);
        },
        Labels{});
    },
    pixels);
}

/** Where an array is, for CheckHost: an input, an output or none (nullptr). */
struct Placed
{
  size_t  size   = 0;
  int32_t device = nb::device::cpu::value;
  Placed(std::nullptr_t) {}
  template <class A>
  Placed(const A * a)
    : size(a ? a->size() : 0)
    , device(a ? a->device_type() : nb::device::cpu::value)
  {
  }
};

/** The CPU backend reads and writes host memory only. */
inline void
CheckHost(const chs::ExecutionContext & context, std::initializer_list<Placed> arrays)
{
  if (chs::ResolveBackend(context) == chs::Backend::CUDA)
    return;
  for (const Placed & a : arrays)
    if (a.size > 0 && a.device != nb::device::cpu::value)
      throw std::invalid_argument("chseg: the cpu backend needs host (NumPy) arrays");
}

/** The grid of the first `spatial` axes of `a` (NumPy order: z, y, x); later axes are components. */
template <class A>
chs::Grid
GridOf(const A & a, size_t spatial)
{
  if (spatial < 1 || spatial > 3 || a.ndim() < spatial)
    throw std::invalid_argument("chseg: images have 1 to 3 spatial axes");
  chs::Grid g;
  g.dimension = static_cast<unsigned>(std::max<size_t>(spatial, 2));
  for (size_t d = 0; d < spatial; ++d)
    g.size[d] = a.shape(spatial - 1 - d);
  return g;
}

inline chs::Grid
GridOfShape(const std::vector<uint64_t> & shape)
{
  if (shape.empty() || shape.size() > 3)
    throw std::invalid_argument("chseg: images have 1 to 3 spatial axes");
  chs::Grid g;
  g.dimension = static_cast<unsigned>(std::max<size_t>(shape.size(), 2));
  for (size_t d = 0; d < shape.size(); ++d)
    g.size[d] = shape[shape.size() - 1 - d];
  return g;
}

/** The elements of an output, and (const) of an input. */
template <typename T>
T *
Ptr(const Array & a)
{
  return static_cast<T *>(a.data());
}
template <typename T>
const T *
Ptr(const Input & a)
{
  return static_cast<const T *>(a.data());
}

/** The elements of an optional input (None: null), kept alive by `keep`. */
template <typename T>
const T *
OptionalPtr(const nb::object & o, Input & keep)
{
  if (o.is_none())
    return nullptr;
  keep = nb::cast<Input>(o);
  return Ptr<T>(keep);
}

/** The elements of an optional output (None: null), kept alive by `keep`. */
template <typename T>
T *
OptionalOutput(const nb::object & o, Array & keep)
{
  if (o.is_none())
    return nullptr;
  keep = nb::cast<Array>(o);
  return Ptr<T>(keep);
}

/** f(parents) with the parents' pointer of their type: 32-bit or 64-bit node ids. */
template <class F>
void
WithParents(const Input & parent, F && f)
{
  if (parent.dtype() == nb::dtype<uint32_t>())
    f(Ptr<uint32_t>(parent));
  else if (parent.dtype() == nb::dtype<uint64_t>())
    f(Ptr<uint64_t>(parent));
  else
    throw std::invalid_argument("chseg: parents must be a uint32 or uint64 array");
}

/** The tree queries on the host index arrays by parent: a parent array the caller changed must still have every
 * parent after its child, inside the array (the root its own parent). */
inline void
CheckParents(const Input & parent)
{
  WithParents(parent,
              [&](auto * up)
              {
                const size_t nodes = parent.size();
                for (size_t x = 0; x < nodes; ++x)
                  if (up[x] != x && (up[x] < x || up[x] >= nodes))
                    throw std::invalid_argument("chseg: parents must come after their children");
              });
}

/** Whether `a` holds the integers of the parents' node id width (uint32 or uint64). */
template <class A>
bool
SameIdWidth(const A & a, const Input & parent)
{
  return a.dtype() == parent.dtype() && (a.dtype() == nb::dtype<uint32_t>() || a.dtype() == nb::dtype<uint64_t>());
}

/** A NumPy array of T with NumPy's own dtype for it: nanobind makes 64-bit integers 'Q' / 'q' (unsigned / signed
 * long long), which equal uint64 / int64 but are other dtype classes on LP64 systems, and libraries that match a
 * dtype's class (Zarr 3) refuse them. A view as "uint64" / "int64" has the canonical class. */
template <typename T>
nb::object
AsNumpy(nb::ndarray<nb::numpy, T> array)
{
  nb::object out = nb::cast(array);
  if constexpr (std::is_integral_v<T> && sizeof(T) == 8)
    out = out.attr("view")(std::is_signed_v<T> ? "int64" : "uint64");
  return out;
}

/** A std::vector moved into a NumPy array that owns it. */
template <typename T>
nb::object
ToNumpy(std::vector<T> && v, size_t rows, size_t columns = 0)
{
  auto *      heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void * p) noexcept { delete static_cast<std::vector<T> *>(p); });
  size_t      shape[2] = { rows, columns };
  return AsNumpy(nb::ndarray<nb::numpy, T>(heap->data(), columns ? 2 : 1, shape, owner));
}

inline nb::dict
Info(const chs::RunInfo & info)
{
  nb::dict d;
  d["kernel_ms"]         = info.kernelMilliseconds;
  d["peak_device_bytes"] = info.peakDeviceBytes;
  return d;
}

template <typename TLabel>
uint64_t
MaximumOf()
{
  return std::numeric_limits<TLabel>::max();
}

/** The image graph of an image whose axes after the first `spatial` are channels (alpha-trees, single linkage). */
inline chs::ImageGraphParameters
GraphParametersOf(const Input & image, size_t spatial, bool fullyConnected, chs::VectorDistance distance)
{
  chs::ImageGraphParameters g;
  g.fullyConnected = fullyConnected;
  g.components     = image.ndim() > spatial ? static_cast<unsigned>(image.shape(spatial)) : 1;
  g.distance       = distance;
  return g;
}

/** The bindings of each algorithm's operations (one file each), called by the module's definition. */
void
BindConnectedComponents(nb::module_ & m);
void
BindWatershed(nb::module_ & m);
void
BindAlphaTree(nb::module_ & m);
void
BindSingleLinkage(nb::module_ & m);
void
BindForestingTransform(nb::module_ & m);

} // namespace chseg

#endif
