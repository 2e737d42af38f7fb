#!/usr/bin/env bash
# The module against ITK 5.4.7 (what `pip install itk` and 3D Slicer 5.10-5.12 are built on), beside Debian's 5.2.1:
# scripts/build-itk.sh builds ITK 5.4.7 once into a cache, then
#  1. the plain build against that ITK build tree (CHS_PLAIN_BUILD: the module's own GoogleTest suites, without
#     ITKTestKernel) into build-itk54/, and ctest;
#  2. the module as an external module of that ITK build tree (ITKModuleExternal, the module's library written into
#     the tree) into build-itk54-ext/, and examples/consumer configured with find_package(ITK COMPONENTS
#     CudaHierarchicalSegmentation), built and run.
# The core is the one build.sh compiled (CHS_PREBUILT_CORE, set by test.sh; else each build compiles its own).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
chs_default_cuda_archs
start=$SECONDS
itk=$(scripts/build-itk.sh)
echo "ITK 5.4.7 ready: $((SECONDS - start)) s" >&2
core=${CHS_PREBUILT_CORE:-}
if [ ! -f build-itk54/build.ninja ]; then
  cmake -S . -B build-itk54 -G Ninja -DCMAKE_BUILD_TYPE=Release -DITK_DIR="$itk" -DCHS_PLAIN_BUILD=ON \
    -DCHS_BUILD_EXAMPLES=OFF -DCHS_BUILD_BENCHMARKS=OFF -DCHS_PREBUILT_CORE="$core" >/dev/null
fi
cmake --build build-itk54 -j "$(nproc)"
ctest --test-dir build-itk54 --output-on-failure -j "$(nproc)"
if [ ! -f build-itk54-ext/build.ninja ]; then
  cmake -S . -B build-itk54-ext -G Ninja -DCMAKE_BUILD_TYPE=Release -DITK_DIR="$itk" -DBUILD_TESTING=OFF \
    -DCHS_PREBUILT_CORE="$core" >/dev/null
fi
cmake --build build-itk54-ext -j "$(nproc)"
rm -rf build-itk54-ext/consumer
cmake -S examples/consumer -B build-itk54-ext/consumer -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHS_CONSUMER_VIA_ITK=ON \
  -DITK_DIR="$itk" >/dev/null
cmake --build build-itk54-ext/consumer >/dev/null
build-itk54-ext/consumer/watershed_and_alpha_tree
echo "the module against ITK 5.4.7, built and tested: $((SECONDS - start)) s" >&2
