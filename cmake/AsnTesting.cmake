# asn_test(NAME LABEL [SINGLE_THREADED] [SHARDS N] SOURCES... LIBS ...): one GoogleTest binary,
# its tests registered with ctest under LABEL (unit, service, integration, kernel). Defined at
# the top level so that every folder (tests/, lib/, bench/) can register tests the same way.
# SINGLE_THREADED: the binary never starts a thread (forking a child is fine). Its tests also
# get the label single-threaded, which the ThreadSanitizer stage of scripts/test.sh leaves
# out: a race needs two threads, and TSan would only run them 5-10x slower.
# SHARDS N: where a binary is one ctest test (ASN_CTEST_PER_CASE=OFF), it is N instead, each
# running every Nth case (GoogleTest's sharding), started before the others: for the few
# binaries that take minutes under a sanitizer, so that ctest -j can spread them.
include(GoogleTest)

# Every binary the unit and service tests run. The sanitizer builds of scripts/test.sh run
# only those labels, so they build only this target: not asnd, asnctl, the integration tests
# or the examples.
add_custom_target(asn_unit_service_tests)
# The same without the SINGLE_THREADED binaries: what the ThreadSanitizer build needs.
add_custom_target(asn_threaded_unit_service_tests)

# Each case of binary NAME as a ctest test labelled LABEL (and single-threaded if
# SINGLE_THREADED is true).
function(asn_test_discover name label single_threaded)
  # DISCOVERY_TIMEOUT: listing the tests runs the binary at build time; on a loaded machine
  # (or under a sanitizer) that start can take far longer than CMake's default 5 s.
  gtest_discover_tests(${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 120)
  if(single_threaded)
    # The second label goes on after discovery, from the list of discovered tests: the
    # PROPERTIES of gtest_discover_tests cannot carry a list (CMake 3.25 flattens it).
    set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
    file(WRITE ${labels_file}
         "if(${name}_TESTS)\n"
         "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${label};single-threaded\")\n"
         "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
  endif()
endfunction()

# Test code (test files and their harnesses) is compiled without optimization in every build
# type: its cost is in compiling it (GoogleTest's macros, gRPC's stubs; at -O2 a test file
# takes a third longer to compile than at -O0, and test files are half the build's compile
# time), not in running it. The code under test (the libraries, asnd, asnctl) keeps the
# build type's optimization (issue 30).
function(asn_test_code target)
  target_compile_options(${target} PRIVATE -O0)
endfunction()

function(asn_test name label)
  cmake_parse_arguments(ARG "SINGLE_THREADED" "SHARDS" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  asn_test_code(${name})
  # Never a unity build: a test file is a program of its own, with helpers of the same names
  # as its neighbours' (kS, lock(), ...), and few binaries have more than one file to merge.
  set_target_properties(${name} PROPERTIES UNITY_BUILD OFF)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} asn_test_support GTest::gmock GTest::gtest_main)
  asn_warnings(${name})
  if(NOT ASN_CTEST_PER_CASE)
    # The whole binary as one test: GoogleTest runs its cases in one process and names any
    # that failed.
    set(labels ${label})
    if(ARG_SINGLE_THREADED)
      list(APPEND labels single-threaded)
    endif()
    if(NOT ARG_SHARDS OR ARG_SHARDS LESS 2)
      add_test(NAME ${name} COMMAND ${name})
      set_tests_properties(${name} PROPERTIES LABELS "${labels}")
    else()
      math(EXPR last "${ARG_SHARDS} - 1")
      foreach(shard RANGE ${last})
        add_test(NAME ${name}/${shard} COMMAND ${name})
        set_tests_properties(${name}/${shard} PROPERTIES LABELS "${labels}" COST 1000
          ENVIRONMENT "GTEST_TOTAL_SHARDS=${ARG_SHARDS};GTEST_SHARD_INDEX=${shard}")
      endforeach()
    endif()
  else()
    asn_test_discover(${name} ${label} ${ARG_SINGLE_THREADED})
  endif()
  if(label STREQUAL "unit" OR label STREQUAL "service")
    add_dependencies(asn_unit_service_tests ${name})
    if(NOT ARG_SINGLE_THREADED)
      add_dependencies(asn_threaded_unit_service_tests ${name})
    endif()
  endif()
endfunction()
