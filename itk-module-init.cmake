# Enables CUDA for the module, before ITK processes it (and before the plain build below).
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR
    "CudaHierarchicalSegmentation needs the CUDA toolkit, and no CUDA compiler (nvcc) was found.\n"
    "Install it (NVIDIA's CUDA toolkit 12 or 13, or Debian's nvidia-cuda-toolkit package), put nvcc on PATH, "
    "or pass -DCMAKE_CUDA_COMPILER=/path/to/nvcc.")
endif()
# Default: the common architectures, Turing to Hopper, as machine code, and PTX for the newest only (which the
# driver compiles for newer GPUs; older PTX would only grow the library). CI and development builds set
# CUDAARCHS=90 (or -DCMAKE_CUDA_ARCHITECTURES=90) to compile for one architecture only.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(CMAKE_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90)
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
if(NOT CMAKE_CUDA_STANDARD)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
endif()
