# Third-party libraries, all from Debian 12 packages (scripts/install-deps).
#
# STRATA_STATIC_DEPS links the C libraries (PCRE2, utf8proc, OpenSSL's crypto)
# and the C++ runtime statically, so one binary built here runs on the GPU
# machine and on hosts without these packages.
option(STRATA_STATIC_DEPS "Link third-party C libraries and libstdc++ statically" OFF)

find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
# Asio and Beast are header-only: no Boost library is linked.
find_package(Boost 1.81 REQUIRED)
if(STRATA_TESTS)
  find_package(GTest REQUIRED)
endif()

if(STRATA_STATIC_DEPS)
  set(OPENSSL_USE_STATIC_LIBS TRUE)
  add_link_options(-static-libstdc++ -static-libgcc)
endif()
find_package(OpenSSL REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)

# strata::pcre2 and strata::utf8proc: the shared or the static library.
function(strata_c_library name pkg_target static_name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  if(STRATA_STATIC_DEPS)
    find_library(${static_name}_PATH NAMES lib${static_name}.a REQUIRED)
    get_target_property(includes ${pkg_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(includes)
      set_target_properties(${name} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${includes}")
    endif()
    set_target_properties(${name} PROPERTIES INTERFACE_LINK_LIBRARIES "${${static_name}_PATH}")
  else()
    set_target_properties(${name} PROPERTIES INTERFACE_LINK_LIBRARIES ${pkg_target})
  endif()
endfunction()
strata_c_library(strata::pcre2 PkgConfig::PCRE2 pcre2-8)
strata_c_library(strata::utf8proc PkgConfig::UTF8PROC utf8proc)

# The T2 tier: io_uring for the slab files, SQLite for their index. Both static
# under STRATA_STATIC_DEPS: the GPU machine has neither's headers nor packages.
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
strata_c_library(strata::uring PkgConfig::URING uring)
strata_c_library(strata::sqlite3 PkgConfig::SQLITE3 sqlite3)
if(STRATA_STATIC_DEPS)
  # libsqlite3.a needs libm and libdl (extension loading) from the C library.
  set_property(TARGET strata::sqlite3 APPEND PROPERTY INTERFACE_LINK_LIBRARIES m dl Threads::Threads)
endif()
# Block checksums: XXH3 from xxhash.h, compiled inline (XXH_INLINE_ALL), so
# only the header is needed.
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
add_library(strata::xxhash INTERFACE IMPORTED GLOBAL)
set_target_properties(strata::xxhash PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIR}")

# libsystemd for sd_notify and socket activation. Debian ships no static
# libsystemd, so it stays shared; a host without it has no systemd to talk to
# and strata serve is then run by hand.
add_library(strata::systemd INTERFACE IMPORTED GLOBAL)
set_target_properties(strata::systemd PROPERTIES INTERFACE_LINK_LIBRARIES PkgConfig::SYSTEMD)

# Boost.Asio + Beast, with the defines every user of them shares.
add_library(strata::asio INTERFACE IMPORTED GLOBAL)
set_target_properties(strata::asio PROPERTIES
  INTERFACE_LINK_LIBRARIES "Boost::headers;Threads::Threads"
  INTERFACE_COMPILE_DEFINITIONS "BOOST_ASIO_NO_DEPRECATED")
