//===- helix.cpp - the helix command-line driver --------------------------===//
//
// Thin: the commands live in lib/Driver (helix/Driver/Driver.h), which the
// C API and the Python package call too.
//
//===----------------------------------------------------------------------===//

#include "helix/Driver/Driver.h"

int main(int argc, char **argv) { return helix::driver::helixMain(argc, argv); }
