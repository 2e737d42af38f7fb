# A one-paragraph description (the README has semicolons, which CMake would split into unknown arguments).
set(DOCUMENTATION "GPU (CUDA) implementations of morphological partitions and hierarchies for 2D images and 3D
volumes, each an ITK filter with a CPU reference backend: connected-components labeling first.")

itk_module(CudaHierarchicalSegmentation
  ENABLE_SHARED
  DEPENDS
    ITKCommon
  COMPILE_DEPENDS
    ITKImageFilterBase
  TEST_DEPENDS
    ITKGoogleTest
    ITKConnectedComponents
    ITKMathematicalMorphology
  EXCLUDE_FROM_DEFAULT
  DESCRIPTION
    "${DOCUMENTATION}"
)
