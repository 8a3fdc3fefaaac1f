# helix_add_library(name SOURCES... [DEPENDS targets...] [LINK_LIBS libs...])
#
# A static library of the project, exported in HelixTargets so that another
# project can find_package(Helix) and link it as Helix::<name>.
function(helix_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  add_library(Helix::${name} ALIAS ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${HELIX_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${HELIX_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS})
  endif()
  if(HELIX_SANITIZE)
    # What links an instrumented library links the sanitizer runtime too
    # (in this build and through the installed package).
    target_link_options(${name} INTERFACE
      "$<$<LINK_LANGUAGE:CXX,C>:-fsanitize=${HELIX_SANITIZE_LIST}>")
  endif()
  install(TARGETS ${name} EXPORT HelixTargets
    ARCHIVE DESTINATION lib LIBRARY DESTINATION lib)
endfunction()

# helix_add_tool(name SOURCES... [LINK_LIBS libs...])
function(helix_add_tool name)
  cmake_parse_arguments(ARG "" "" "LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${HELIX_TOOLS_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  install(TARGETS ${name} EXPORT HelixTargets RUNTIME DESTINATION bin)
endfunction()

# helix_test_code_at_o1(target)
#
# A test executable's own files (gtest cases and their naive reference math)
# compile at -O1 in an optimized build: the libraries they test keep -O3,
# and the suites run as fast, while the test files compile in about half
# the time (unittests/Runtime/QuantFormatsTest.cpp: 12 s against 6 s on 2
# cores), which CI's build pays for some 90 files.
function(helix_test_code_at_o1 target)
  target_compile_options(${target} PRIVATE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release,RelWithDebInfo>>:-O1>)
endfunction()

# helix_use_mlir_pch(target)
#
# Compiles the target's C++ with the MLIR headers most of the compiler
# includes precompiled once (HelixMLIRPCH, created by the first call). On 2
# cores with gcc 12 this takes a pass's compile from about 7 s to 4 s (the
# parse of the MLIR headers is most of it), which CI's two builds repeat for
# some 45 files (libraries only: an executable compiles with -fPIE, the
# header with -fPIC). Only targets whose files nearly all include MLIR use it: a
# file without MLIR pays about 1 s to load the header. -Winvalid-pch makes a
# header gcc could not use a warning (an error in CI), never a silent
# re-parse. Off with -DHELIX_PCH=OFF.
option(HELIX_PCH "Precompile the common MLIR headers (gcc, clang)" ON)
set(HELIX_MLIR_PCH_HEADERS
  <mlir/Dialect/Arith/IR/Arith.h>
  <mlir/Dialect/Func/IR/FuncOps.h>
  <mlir/Dialect/Shard/IR/ShardOps.h>
  <mlir/Dialect/Tensor/IR/Tensor.h>
  <mlir/IR/Builders.h>
  <mlir/IR/BuiltinOps.h>)
# Called once, in the top-level directory, so that the header is compiled
# with the flags every helix target shares.
function(helix_add_mlir_pch)
  if(NOT HELIX_PCH)
    return()
  endif()
  set(src ${HELIX_BINARY_DIR}/HelixMLIRPCH.cpp)
  if(NOT EXISTS ${src})
    file(WRITE ${src} "// The precompiled MLIR headers' own translation unit.\n")
  endif()
  add_library(HelixMLIRPCH OBJECT ${src})
  target_precompile_headers(HelixMLIRPCH PRIVATE ${HELIX_MLIR_PCH_HEADERS})
  target_compile_options(HelixMLIRPCH PRIVATE -Winvalid-pch)
endfunction()
function(helix_use_mlir_pch target)
  if(NOT HELIX_PCH)
    return()
  endif()
  target_precompile_headers(${target} REUSE_FROM HelixMLIRPCH)
  target_compile_options(${target} PRIVATE -Winvalid-pch)
endfunction()

# helix_embed_json(<out.inc> <files-var> <glob> <what>): the JSON files
# matching <glob> (data/...) become a C++ include of {"<stem>", R"(<text>)"}
# entries at build time (lib/Cost/EmbedHardware.cmake), so the library needs no
# data files at run time. Sets <files-var> in the caller to the files embedded.
function(helix_embed_json out files_var glob what)
  file(GLOB files CONFIGURE_DEPENDS ${glob})
  set(script ${HELIX_SOURCE_DIR}/lib/Cost/EmbedHardware.cmake)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out} "-DINPUTS=${files}"
            -P ${script}
    DEPENDS ${files} ${script}
    COMMENT "Embedding ${what}"
    VERBATIM)
  set(${files_var} ${files} PARENT_SCOPE)
endfunction()
