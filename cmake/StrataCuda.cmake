# CUDA is optional: AUTO builds the CUDA backend when nvcc is found.
set(STRATA_HAVE_CUDA OFF)
if(NOT STRATA_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Release builds name their targets (scripts/build-release.sh: sm_80,
      # 86, 89, 90, 120). A development build compiles for the GPU it finds,
      # or, with none (CI), only sm_80 PTX: enough to compile every kernel,
      # and the driver can still JIT it on any newer GPU.
      execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE strata_no_gpu
                      OUTPUT_QUIET ERROR_QUIET)
      if(strata_no_gpu EQUAL 0)
        set(CMAKE_CUDA_ARCHITECTURES native)
      else()
        set(CMAKE_CUDA_ARCHITECTURES 80-virtual)
      endif()
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    # CMake 3.25 (Debian 12) does not know nvcc's C++20 flag; nvcc 12+ has it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(STRATA_HAVE_CUDA ON)
  elseif(STRATA_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STRATA_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()
message(STATUS "Strata CUDA backend: ${STRATA_HAVE_CUDA}")
