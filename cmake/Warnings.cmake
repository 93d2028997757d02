# Project-wide compile options applied to every trainbench target.
function(trainbench_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
  # sqrt() that never sets errno can be vectorised; nothing here reads errno after math calls.
  target_compile_options(${target} PRIVATE -fno-math-errno)
  # GCC 12 reports false -Wrestrict errors inside std::string's operator+ at -O3 (GCC bug 105651).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  # A unity build includes each source in a batch file, so GCC takes a class of one source holding a
  # type of its anonymous namespace for a header's class; within one source that is fine.
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(TRAINBENCH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(TRAINBENCH_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  # Headers are included by their path from the repository root: "engine/layers/dense.h".
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()
