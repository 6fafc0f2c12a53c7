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
