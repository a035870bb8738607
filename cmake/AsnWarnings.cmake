# Warnings for the project's own targets; generated protobuf/gRPC code gets none of these.
function(asn_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
