# asn_test(NAME LABEL SOURCES... LIBS ...): one GoogleTest binary, its tests registered with
# ctest under LABEL (unit, service, integration, kernel). Defined at the top level so that
# every folder (tests/, lib/, bench/) can register tests the same way.
include(GoogleTest)

# Every binary the unit and service tests run. The sanitizer builds of scripts/test.sh run
# only those labels, so they build only this target: not asnd, asnctl, the integration tests
# or the examples.
add_custom_target(asn_unit_service_tests)

function(asn_test name label)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  asn_warnings(${name})
  gtest_discover_tests(${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 60)
  if(label STREQUAL "unit" OR label STREQUAL "service")
    add_dependencies(asn_unit_service_tests ${name})
  endif()
endfunction()
