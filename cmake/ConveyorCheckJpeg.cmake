# libjpeg's header and library must be one version: a header from one prefix and a library from
# another (an older libjpeg on CMAKE_PREFIX_PATH, say) build, then fail at the first image with
# "Wrong JPEG library version: library is 62, caller expects 80". Here a program creates a
# decompressor as the headers do (jpeg_create_decompress passes the header's JPEG_LIB_VERSION and
# struct size, which the library checks) and says what the library answered; a mismatch stops the
# configuration, naming both files. Skipped when cross-compiling (the program cannot run here).
include_guard(GLOBAL)
include(CheckCXXSourceRuns)

function(conveyor_check_jpeg)
  if(CMAKE_CROSSCOMPILING)
    return()
  endif()
  set(CMAKE_REQUIRED_INCLUDES ${JPEG_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_LIBRARIES ${JPEG_LIBRARIES})
  set(CMAKE_REQUIRED_QUIET ON)
  # A cached result would survive a change of JPEG_INCLUDE_DIR: key it on both paths.
  string(MD5 key "${JPEG_INCLUDE_DIRS};${JPEG_LIBRARIES}")
  check_cxx_source_runs([=[
#include <csetjmp>
#include <cstdio>
extern "C" {
#include <jpeglib.h>
}
static std::jmp_buf failed;
static void on_error(j_common_ptr c) { (*c->err->output_message)(c); std::longjmp(failed, 1); }
int main(void) {
  struct jpeg_decompress_struct d;
  struct jpeg_error_mgr e;
  d.err = jpeg_std_error(&e);
  e.error_exit = on_error;
  if (setjmp(failed)) return 1;
  jpeg_create_decompress(&d);
  jpeg_destroy_decompress(&d);
  return 0;
}
]=] CONVEYOR_JPEG_MATCHES_${key})
  if(NOT CONVEYOR_JPEG_MATCHES_${key})
    message(FATAL_ERROR "conveyor: libjpeg's header and library disagree: jpeglib.h from ${JPEG_INCLUDE_DIRS} "
                        "and the library ${JPEG_LIBRARIES} are different versions (the first image would fail "
                        "with \"Wrong JPEG library version\"). Point JPEG_INCLUDE_DIR and JPEG_LIBRARY at one "
                        "installation (Debian: libjpeg62-turbo-dev), or remove the other from CMAKE_PREFIX_PATH.")
  endif()
endfunction()

conveyor_check_jpeg()
