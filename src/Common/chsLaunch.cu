// Launch shapes: grid-stride block counts, and the voxel order of the kernels that follow pointers between voxels.
#include "chsCudaCommon.cuh"
#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace chs
{
namespace detail
{

unsigned
GridStrideBlocks(uint64_t items, unsigned threads, int device)
{
  int sms = 0;
  CHS_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint64_t needed = (items + threads - 1) / threads;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min<uint64_t>(needed, uint64_t(sms) * 16)));
}

void
AllowDynamicSharedBytes(const void * kernel, size_t bytes, int device)
{
  static std::mutex                                     mutex;
  static std::map<std::pair<const void *, int>, size_t> allowed; // the limit set so far, per function and device
  const std::lock_guard<std::mutex>                     lock(mutex);
  size_t &                                              most = allowed[{ kernel, device }];
  if (bytes <= most)
    return;
  CHS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  most = bytes;
}

namespace
{
std::atomic<int> g_VoxelOrder{ 0 }; // testing::SetVoxelOrder
} // namespace

VoxelOrder
ChooseVoxelOrder(uint64_t nx, uint64_t ny, uint64_t nz)
{
  VoxelOrder o;
  o.nx              = uint32_t(nx);
  o.ny              = uint32_t(ny);
  o.nz              = uint32_t(nz);
  const int  forced = g_VoxelOrder.load();
  const bool cubes  = forced == 2 || (forced == 0 && nz >= 64 && nx * ny >= (uint64_t(1) << 18));
  if (cubes)
  {
    o.cx = uint32_t((nx + 63) / 64);
    o.cy = uint32_t((ny + 63) / 64);
    o.cz = uint32_t((nz + 63) / 64);
  }
  return o;
}

} // namespace detail

namespace testing
{
void
SetVoxelOrder(int order)
{
  if (order < 0 || order > 2)
    throw std::invalid_argument("chs: SetVoxelOrder takes 0 (the choice by size), 1 (raster order) or 2 (cubes)");
  detail::g_VoxelOrder = order;
}

} // namespace testing

} // namespace chs
