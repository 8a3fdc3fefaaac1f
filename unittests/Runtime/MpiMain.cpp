//===- MpiMain.cpp - GoogleTest main with MPI -----------------------------===//
//
// The runtime tests run with MPI initialized: alone (one rank, as ctest runs
// the unit tests) or under mpirun (the collective tests). Listing tests
// (gtest_discover_tests at build time) does not start MPI.
//
//===----------------------------------------------------------------------===//

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include "gtest/gtest.h"

#include <cstring>

int main(int argc, char **argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i)
    listing |= std::strncmp(argv[i], "--gtest_list_tests", 18) == 0;
  ::testing::InitGoogleTest(&argc, argv);
  if (listing)
    return RUN_ALL_TESTS();
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) { // one report, failures from every rank still count
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
