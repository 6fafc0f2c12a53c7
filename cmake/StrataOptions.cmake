# Compiler flags for Strata's own targets (never for third-party code).

# Warnings as errors on our targets only.
function(strata_target_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Werror -Wno-error=deprecated-declarations>)
  # GCC 12 reports out-of-bounds writes inside std::vector::insert when it
  # inlines them at -O3 (GCC bugs 106199, 107138), and overlapping memcpy
  # inside std::string at -O3 (-Wrestrict, GCC bug 105329): warnings, not errors. It
  # also pairs Asio's coroutine-frame operator delete with the wrong new
  # (-Wmismatched-new-delete on awaitable frames, GCC bug 109224): off.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wno-error=stringop-overflow -Wno-error=array-bounds -Wno-error=restrict
                                -Wno-mismatched-new-delete>)
  endif()
endfunction()

if(STRATA_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 15)
    # clang 14 cannot emit UBSan's function-type check in coroutines ("Cannot
    # represent a difference across sections", llvm/llvm-project#49689; fixed in 15).
    add_compile_options(-fno-sanitize=function)
  endif()
endif()

if(STRATA_FUZZ AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "STRATA_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
