# CUDA source as host C++, for the CPU execution of kernels (CudaEmu.h,
# docs/cuda-on-cpu.md).
#
# include()d: helix_cuda_host_source(<in.cu> <out.cpp>) adds the build rule
# that writes <out.cpp> (relative: in the current binary directory) from
# <in.cu>. Run as a script (cmake -DIN=.. -DOUT=.. -P HostSource.cmake):
# the rewrite itself. Only the two constructs C++ cannot parse change, and
# every line keeps its number (`#line` names the original file, so compiler
# messages and sanitizer reports point into the .cu):
#
#   k<<<grid, block, smem, stream>>>(args)  HELIX_EMU_LAUNCH(k, grid, ...)(args)
#   extern __shared__ T name[];             HELIX_EMU_DYNAMIC_SHARED(T, name);
#
# Anything else CUDA-only (templates launched with explicit arguments,
# __align__ on the dynamic array, ...) is left for the compiler to reject,
# and a `<<<` or `extern __shared__` left over stops the build here.

if(CMAKE_SCRIPT_MODE_FILE)
  file(READ "${IN}" text)
  string(REGEX REPLACE "([A-Za-z_][A-Za-z_0-9]*)<<<([^>]*)>>>"
         "HELIX_EMU_LAUNCH(\\1, \\2)" text "${text}")
  string(REGEX REPLACE
         "extern[ \t]+__shared__[ \t]+([A-Za-z_][A-Za-z_0-9: \t]*[A-Za-z_0-9])[ \t]+([A-Za-z_][A-Za-z_0-9]*)[ \t]*\\[[ \t]*\\][ \t]*;"
         "HELIX_EMU_DYNAMIC_SHARED(\\1, \\2);" text "${text}")
  foreach(left "<<<" "extern __shared__")
    string(FIND "${text}" "${left}" at)
    if(NOT at EQUAL -1)
      string(SUBSTRING "${text}" ${at} 60 near)
      message(FATAL_ERROR "${IN}: cannot rewrite for host C++ near: ${near}")
    endif()
  endforeach()
  file(WRITE "${OUT}.tmp"
       "// Generated from ${IN} by HostSource.cmake: do not edit.\n"
       "#line 1 \"${IN}\"\n${text}")
  file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
  file(REMOVE "${OUT}.tmp")
  return()
endif()

set(HELIX_CUDA_HOST_SOURCE_SCRIPT ${CMAKE_CURRENT_LIST_FILE})
function(helix_cuda_host_source in out)
  get_filename_component(in ${in} ABSOLUTE)
  get_filename_component(out ${out} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${in} -DOUT=${out}
            -P ${HELIX_CUDA_HOST_SOURCE_SCRIPT}
    DEPENDS ${in} ${HELIX_CUDA_HOST_SOURCE_SCRIPT}
    COMMENT "CUDA source as host C++: ${out}")
  # `#pragma unroll` is nvcc's hint; the host compiler ignores it.
  set_source_files_properties(${out} PROPERTIES
    COMPILE_OPTIONS -Wno-unknown-pragmas)
endfunction()
