// Catch2 v2 wraps a failing test's name under a header whose continuation lines are indented past
// the name's first ": "; at the default 80 columns, a ": " past column 77 leaves no width, and the
// reporter loops forever writing the header (surviving SIGTERM: a hung, disk-filling run). No test
// name is near 200 columns.
#define CATCH_CONFIG_CONSOLE_WIDTH 200
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
