//===- ByteReader.h - Numbers drawn from the tail of a fuzz input -*- C++
//-*-===//
//
// The fuzz targets that take numbers besides text (cost, safetensors) read
// them from the END of the input, so that the front stays text or tensor
// data the mutator can grow. Each number of range R takes the fewest bytes
// that cover R (most significant first, walking backwards), reduced modulo
// R + 1; an exhausted input gives the range's minimum. This is the
// convention of libFuzzer's FuzzedDataProvider for these three calls, so
// the committed corpora decode the same way; having our own keeps the
// targets buildable with gcc (HELIX_FUZZ_REPLAY) and without clang's
// headers.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_FUZZ_BYTEREADER_H
#define HELIX_FUZZ_BYTEREADER_H

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace helix {
namespace fuzz {

class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data_(data), left_(size) {}

  /// An integer in [lo, hi] (lo <= hi).
  template <typename T> T ConsumeIntegralInRange(T lo, T hi) {
    static_assert(std::is_integral<T>::value, "integers only");
    using U = typename std::make_unsigned<T>::type;
    uint64_t range =
        static_cast<uint64_t>(static_cast<U>(hi) - static_cast<U>(lo));
    uint64_t value = 0;
    for (unsigned bits = 0;
         bits < 8 * sizeof(T) && (range >> bits) > 0 && left_ > 0; bits += 8)
      value = (value << 8) | data_[--left_];
    if (range != std::numeric_limits<uint64_t>::max())
      value %= range + 1;
    return static_cast<T>(static_cast<U>(lo) + static_cast<U>(value));
  }

  /// Any value of T.
  template <typename T> T ConsumeIntegral() {
    return ConsumeIntegralInRange(std::numeric_limits<T>::min(),
                                  std::numeric_limits<T>::max());
  }

  bool ConsumeBool() { return (ConsumeIntegral<uint8_t>() & 1) != 0; }

  size_t remaining_bytes() const { return left_; }

private:
  const uint8_t *data_;
  size_t left_;
};

} // namespace fuzz
} // namespace helix

#endif // HELIX_FUZZ_BYTEREADER_H
