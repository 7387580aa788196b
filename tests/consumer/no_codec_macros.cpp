// Every public header outside the codec boundary (tests/consumer/CMakeLists.txt) included
// together: none of them may bring in libjpeg's or libpng's C header, nor so their macros.

#include "conveyor_headers_without_codecs.hpp"  // generated

#if defined(JPEG_LIB_VERSION) || defined(JMSG_LENGTH_MAX)
#error "a public header outside the codec boundary includes libjpeg's jpeglib.h"
#endif
#if defined(PNG_LIBPNG_VER) || defined(PNG_H)
#error "a public header outside the codec boundary includes libpng's png.h"
#endif
#if defined(TRUE) || defined(FALSE) || defined(LOCAL) || defined(EXTERN) || defined(JPP)
#error "libjpeg's macros reach a file that includes only headers outside the codec boundary"
#endif

int main() { return 0; }
