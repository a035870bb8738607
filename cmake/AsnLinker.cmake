# A faster linker when there is one: mold (scripts/install-deps.sh installs it), else lld.
# GNU ld spends minutes of CPU a build on the test binaries, each of which links gRPC,
# protobuf and asnd_core with their debug info; mold and lld do the same links in a fraction
# of it. ASN_LINKER=default (or bfd, gold, lld, mold) chooses; the default is the first found.
include(CheckLinkerFlag)
set(ASN_LINKER "" CACHE STRING "Linker: mold, lld, bfd, gold or default (empty: mold, else lld)")
if(ASN_LINKER STREQUAL "")
  set(asn_linkers mold lld)
elseif(ASN_LINKER STREQUAL "default")
  set(asn_linkers)
else()
  set(asn_linkers ${ASN_LINKER})
endif()
foreach(ld IN LISTS asn_linkers)
  check_linker_flag(CXX -fuse-ld=${ld} ASN_HAS_LD_${ld})
  if(ASN_HAS_LD_${ld})
    add_link_options(-fuse-ld=${ld})
    message(STATUS "Linker: ${ld}")
    break()
  elseif(NOT ASN_LINKER STREQUAL "")
    message(FATAL_ERROR "ASN_LINKER=${ASN_LINKER}: the compiler cannot link with it")
  endif()
endforeach()
