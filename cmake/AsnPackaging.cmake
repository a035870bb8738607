# Debian packages with CPack's DEB generator, one package per install component
# (scripts/package.sh; docs/operator-guide.md, "Install"):
#   asn               asnd, asnctl, asnsim, the unit, the
#                     default configuration as a conffile, the udev rule, man pages, docs
#   asn-dkms          asn.ko's source for DKMS, with the register headers pre-generated,
#                     and the modules-load.d entry
#   libasnclient<N>   the client library (N is its SOVERSION)
#   libasnclient-dev  its headers, the .so link and asnclient.pc
# CPack rather than debian/ + dpkg-buildpackage: it packages the tree `build/` already
# built and tested, where dpkg-buildpackage would configure and build everything again in
# its own directory (about 20 minutes on the 2-core CI machine, against the install test's
# budget of 2).
#
# Included last from the top-level CMakeLists.txt, after every target it reads (asnclient's
# SOVERSION names the library package). Files only a package may install (the conffile, the DKMS
# tree, Debian's copyright and changelog) are EXCLUDE_FROM_ALL: `cmake --install build`
# still never touches /etc/asn/asnd.yaml.

set(ASN_DEB_DIR ${PROJECT_SOURCE_DIR}/deploy/debian)
set(ASN_DEB_STAGE ${CMAKE_BINARY_DIR}/deb)
set(ASN_DEB_REVISION 1)
# Set to the real maintainer before the packages leave the project (also the changelog's).
set(ASN_DEB_MAINTAINER "asn maintainers <asn-maintainers@example.org>" CACHE STRING
    "Maintainer of the Debian packages")

# --- asn -------------------------------------------------------------------------------
install(FILES deploy/asnd.yaml DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/asn
        COMPONENT asn EXCLUDE_FROM_ALL)
install(FILES deploy/60-asn.rules DESTINATION lib/udev/rules.d COMPONENT asn)
install(FILES deploy/asn.conf DESTINATION lib/modules-load.d COMPONENT asn-dkms EXCLUDE_FROM_ALL)

# Man pages: troff sources in docs/man, gzipped as Debian wants them.
set(ASN_MAN_PAGES asnd.8 asnctl.8 asnd.yaml.5)
set(asn_man_gz)
foreach(page IN LISTS ASN_MAN_PAGES)
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section "${page}")
  set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND sh -c "gzip -9n -c '${PROJECT_SOURCE_DIR}/docs/man/${page}' > '${gz}'"
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${page}
    COMMENT "Compressing man page ${page}"
    VERBATIM)
  install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT asn)
  list(APPEND asn_man_gz ${gz})
endforeach()
# In every build, so that `cmake --install build` finds them.
add_custom_target(asn_man_pages ALL DEPENDS ${asn_man_gz})

# Debian's copyright and changelog.Debian.gz for every package.
get_target_property(ASN_CLIENT_SOVERSION asnclient SOVERSION)
set(ASN_CLIENT_PACKAGE libasnclient${ASN_CLIENT_SOVERSION})
set(asn_changelogs)
foreach(pkg asn asn-dkms ${ASN_CLIENT_PACKAGE} libasnclient-dev)
  set(PACKAGE ${pkg})
  set(VERSION ${PROJECT_VERSION}-${ASN_DEB_REVISION})
  configure_file(${ASN_DEB_DIR}/changelog.in ${ASN_DEB_STAGE}/${pkg}/changelog @ONLY)
  set(log ${ASN_DEB_STAGE}/${pkg}/changelog.Debian.gz)
  add_custom_command(OUTPUT ${log}
    COMMAND sh -c "gzip -9n -c '${ASN_DEB_STAGE}/${pkg}/changelog' > '${log}'"
    DEPENDS ${ASN_DEB_STAGE}/${pkg}/changelog
    COMMENT "changelog.Debian.gz for ${pkg}"
    VERBATIM)
  list(APPEND asn_changelogs ${log})
endforeach()
foreach(comp_pkg asn:asn asn-dkms:asn-dkms libasnclient:${ASN_CLIENT_PACKAGE}
                 libasnclient-dev:libasnclient-dev)
  string(REPLACE ":" ";" comp_pkg "${comp_pkg}")
  list(GET comp_pkg 0 comp)
  list(GET comp_pkg 1 pkg)
  install(FILES ${ASN_DEB_DIR}/copyright ${ASN_DEB_STAGE}/${pkg}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp} EXCLUDE_FROM_ALL)
endforeach()

# --- asn-dkms: the module source, as DKMS builds it (driver/Makefile with KVER=) --------
set(ASN_DKMS_SRC src/asn-${PROJECT_VERSION})
set(ASN_DKMS_GEN ${ASN_DEB_STAGE}/dkms/generated)
add_custom_command(OUTPUT ${ASN_DKMS_GEN}/asn_regs.h ${ASN_DKMS_GEN}/asn_access.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${ASN_DKMS_GEN}
  COMMAND ${ASN_PYTHON} ${REGMAP_GEN} ${REGMAP_YAML} --c-header ${ASN_DKMS_GEN}/asn_regs.h
  COMMAND ${ASN_PYTHON} ${PROJECT_SOURCE_DIR}/driver/gen_access.py ${REGMAP_YAML}
          ${ASN_DKMS_GEN}/asn_access.h
  DEPENDS ${REGMAP_YAML} ${REGMAP_GEN} ${REGMAP_GEN_SOURCES}
          ${PROJECT_SOURCE_DIR}/driver/gen_access.py
  COMMENT "Generating the driver's register headers for the DKMS tree")
configure_file(deploy/dkms.conf.in ${ASN_DEB_STAGE}/dkms/dkms.conf @ONLY)
install(FILES driver/asn.h driver/asn_main.c driver/asn_genl.c driver/asn_devlink.c driver/Kbuild driver/Makefile ${ASN_DEB_STAGE}/dkms/dkms.conf
        DESTINATION ${ASN_DKMS_SRC} COMPONENT asn-dkms EXCLUDE_FROM_ALL)
install(FILES driver/include/uapi/asn_genl.h
        DESTINATION ${ASN_DKMS_SRC}/include/uapi COMPONENT asn-dkms EXCLUDE_FROM_ALL)
install(FILES ${ASN_DKMS_GEN}/asn_regs.h ${ASN_DKMS_GEN}/asn_access.h
        DESTINATION ${ASN_DKMS_SRC}/generated COMPONENT asn-dkms EXCLUDE_FROM_ALL)

# What the packages need beyond the programs. In every build (it is small), because a
# component's EXCLUDE_FROM_ALL files are installed when that component is asked for
# (`cmake --install build --component libasnclient`): a fresh tree lacked the changelogs.
add_custom_target(deb-files ALL DEPENDS ${asn_changelogs}
                  ${ASN_DKMS_GEN}/asn_regs.h ${ASN_DKMS_GEN}/asn_access.h)
add_dependencies(deb-files asn_man_pages)

# --- CPack ------------------------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME asn)
set(CPACK_PACKAGE_VENDOR "asn")
set(CPACK_PACKAGE_CONTACT "${ASN_DEB_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# /etc/asn/asnd.yaml is installed by absolute path: install into a DESTDIR, not the host.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL asn asn-dkms libasnclient libasnclient-dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${ASN_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://asn.invalid/")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps finds libasnclient in the build tree, not in an installed package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_BINARY_DIR}/client)

set(CPACK_DEBIAN_ASN_PACKAGE_NAME asn)
set(CPACK_DEBIAN_ASN_PACKAGE_DEPENDS "adduser, init-system-helpers (>= 1.54~)")
set(CPACK_DEBIAN_ASN_PACKAGE_SUGGESTS "asn-dkms")
set(CPACK_DEBIAN_ASN_DESCRIPTION "active storage network switch: daemon asnd and CLI asnctl
asnd is the control plane of an active storage network switch (a NetFPGA board
routing a 2-dilated flattened butterfly fabric with ALDFB adaptive routing,
TDM slot schedules, in-switch parity striping and file locks). This package
holds asnd with its systemd unit and default configuration, the operator CLI
asnctl, the udev rule for the boards and the man pages. Without a board asnd
runs on the emulated board; a real board needs asn-dkms.")
set(CPACK_DEBIAN_ASN_PACKAGE_CONTROL_EXTRA
    ${ASN_DEB_DIR}/asn/conffiles ${ASN_DEB_DIR}/asn/postinst ${ASN_DEB_DIR}/asn/prerm
    ${ASN_DEB_DIR}/asn/postrm)
set(CPACK_DEBIAN_ASN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_NAME asn-dkms)
set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_ARCHITECTURE all)
set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_DEPENDS "dkms (>= 3.0)")
set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_SECTION kernel)
set(CPACK_DEBIAN_ASN-DKMS_DESCRIPTION "active storage network switch: kernel driver asn.ko (DKMS)
asn.ko binds the NetFPGA boards of an asn switch and serves register and table
access and events over the generic netlink family asn, for the kernel
backend of asnd. DKMS builds it for every installed kernel that has its
headers (linux-headers-amd64).")
foreach(script postinst prerm)
  configure_file(${ASN_DEB_DIR}/asn-dkms/${script} ${ASN_DEB_STAGE}/asn-dkms/${script} @ONLY)
endforeach()
set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_CONTROL_EXTRA
    ${ASN_DEB_STAGE}/asn-dkms/postinst ${ASN_DEB_STAGE}/asn-dkms/prerm)
set(CPACK_DEBIAN_ASN-DKMS_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_LIBASNCLIENT_PACKAGE_NAME ${ASN_CLIENT_PACKAGE})
set(CPACK_DEBIAN_LIBASNCLIENT_PACKAGE_SECTION libs)
# An ldconfig trigger, as Debian wants, instead of CPack's ldconfig calls (its postinst and
# postrm, which it writes only when none is given).
set(CPACK_DEBIAN_LIBASNCLIENT_PACKAGE_CONTROL_EXTRA
    ${ASN_DEB_DIR}/libasnclient/triggers ${ASN_DEB_DIR}/libasnclient/postinst
    ${ASN_DEB_DIR}/libasnclient/postrm)
set(CPACK_DEBIAN_LIBASNCLIENT_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# shlibs (and an ldconfig trigger) for the one package with a shared library.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_LIBASNCLIENT_DESCRIPTION "active storage network switch: lock client library
libasnclient takes byte-range file locks from the asn switch daemon asnd, for
parallel file system clients (C++ and C APIs).")

set(CPACK_DEBIAN_LIBASNCLIENT-DEV_PACKAGE_NAME libasnclient-dev)
set(CPACK_DEBIAN_LIBASNCLIENT-DEV_PACKAGE_SECTION libdevel)
# Not libgrpc++-dev nor libprotobuf-dev: the headers include neither, and asnclient.pc no
# longer names them (client/CMakeLists.txt).
set(CPACK_DEBIAN_LIBASNCLIENT-DEV_PACKAGE_DEPENDS
    "${ASN_CLIENT_PACKAGE} (= ${PROJECT_VERSION}-${ASN_DEB_REVISION})")
set(CPACK_DEBIAN_LIBASNCLIENT-DEV_DESCRIPTION "active storage network switch: lock client library (development)
Headers (asn/client/locks.hpp, asn/client/asnclient.h), the shared library
link and the pkg-config file asnclient.pc of libasnclient.")

include(CPack)
