#pragma once
// The binding's areas, each in its own file, and what they share: nanobind's names and one
// `bind_*` per area for the module (module.cpp) to call in order, since later classes name
// earlier ones in their signatures.

#include <nanobind/nanobind.h>

namespace conveyor_ext {

namespace nb = nanobind;

void bind_errors(nb::module_& m);        // errors.cpp
void bind_datasets(nb::module_& m);      // datasets.cpp
void bind_decode(nb::module_& m);        // decode.cpp
void bind_pixel_transforms(nb::module_& m);  // pixel_transforms.cpp
void bind_transforms(nb::module_& m);    // transforms.cpp
void bind_batches(nb::module_& m);       // batch.cpp
void bind_loader(nb::module_& m);        // loader.cpp
void bind_preprocessor(nb::module_& m);  // preprocessor.cpp
void bind_pixel_ops(nb::module_& m);     // pixel_ops.cpp

}  // namespace conveyor_ext
