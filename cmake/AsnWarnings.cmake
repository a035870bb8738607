# Warnings for the project's own targets; generated protobuf/gRPC code gets none of these.
function(asn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ warns when a class defined outside the main file has a member of a type from an
    # anonymous namespace, to catch such a class in a header. A unity build includes every
    # .cc into one file, so each class defined in a .cc would warn (issue 30).
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()
