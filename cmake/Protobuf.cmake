# trainbench_proto_library(<target> <file.proto>...): runs protoc at build time on .proto files
# (paths relative to the repository root) and compiles the result into a static library.
# The generated sources live in the build tree, are built without the project's warning flags
# (protoc's output is not ours to fix), and their headers are included as "<dir>/<name>.pb.h" from
# a SYSTEM include directory, so they cannot trip -Werror in the files that include them.
function(trainbench_proto_library target)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}-generated)
  set(sources "")
  foreach(proto IN LISTS ARGN)
    get_filename_component(dir ${proto} DIRECTORY)
    get_filename_component(name ${proto} NAME_WE)
    set(cc ${out_dir}/${dir}/${name}.pb.cc)
    set(h ${out_dir}/${dir}/${name}.pb.h)
    add_custom_command(
      OUTPUT ${cc} ${h}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
      COMMAND protobuf::protoc --cpp_out=${out_dir} -I ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/${proto}
      DEPENDS ${PROJECT_SOURCE_DIR}/${proto} protobuf::protoc
      COMMENT "Generating C++ from ${proto}"
      VERBATIM)
    list(APPEND sources ${cc})
  endforeach()
  add_library(${target} STATIC ${sources})
  target_include_directories(${target} SYSTEM PUBLIC ${out_dir})
  target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
endfunction()
