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
