//===- ReplayMain.cpp - Replays fuzz inputs without libFuzzer -------------===//
//
// A main() for the fuzz targets where libFuzzer is not available (gcc
// builds): every argument is a file, or a directory whose files are read
// in name order, and each is passed once to LLVMFuzzerTestOneInput. This is
// the regression replay of the committed corpora that the sanitized test
// suite runs (ctest -L fuzz); fuzzing itself needs clang (scripts/fuzz.sh).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

static bool isDirectory(const std::string &p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!a.empty() && a[0] == '-')
      continue; // libFuzzer flags (-runs=0, ...) are accepted and ignored
    if (!isDirectory(a)) {
      files.push_back(a);
      continue;
    }
    std::vector<std::string> entries;
    if (DIR *d = opendir(a.c_str())) {
      while (dirent *e = readdir(d))
        if (e->d_name[0] != '.')
          entries.push_back(a + "/" + e->d_name);
      closedir(d);
    }
    std::sort(entries.begin(), entries.end());
    files.insert(files.end(), entries.begin(), entries.end());
  }
  for (const std::string &f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
      return 1;
    }
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
