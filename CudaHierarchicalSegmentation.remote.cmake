# The module as a remote module of ITK, written as ITK's Modules/Remote/*.remote.cmake files are: copied into ITK's
# source tree at Modules/Remote/, it is fetched and built with -DModule_CudaHierarchicalSegmentation=ON (nvcc on
# PATH). GIT_TAG names the commit to build; docs/building.md says how this file was checked.
itk_fetch_module(
  CudaHierarchicalSegmentation
  "GPU (CUDA) morphological partitions and hierarchies for 2D images and 3D volumes: connected components, watershed
  and waterfall, alpha-tree, single-linkage dendrograms, Image Foresting Transform, waterpixels; each an ITK filter
  with a CPU reference backend that gives the same result."
  MODULE_COMPLIANCE_LEVEL 2
  GIT_REPOSITORY https://github.com/InsightSoftwareConsortium/ITKCudaHierarchicalSegmentation.git
  GIT_TAG main)
