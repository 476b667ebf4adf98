/**
 * fuzz_common.h: what the fuzz targets share: FUZZ_CHECK, which reports a
 * broken property and aborts (libFuzzer then saves the input), and the
 * decoding of doubles and strings from the input bytes.
 */

#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

/// FUZZ_CHECK: abort with the condition, file and line when it is false.
#define FUZZ_CHECK(cond)                            \
    do {                                            \
        if (!(cond)) {                              \
            std::fprintf(                           \
                    stderr,                         \
                    "%s:%d: property failed: %s\n", \
                    __FILE__,                       \
                    __LINE__,                       \
                    #cond);                         \
            std::abort();                           \
        }                                           \
    } while (false)

namespace fuzz {

/// any_double: a double from the input. A third of the time one of the
/// values that break validation (NaN, infinities, zero of either sign,
/// the smallest and largest, negative one), a third a short decimal
/// (-10.00 .. 1000.00), a third any bit pattern (NaNs with payloads,
/// denormals, huge exponents).
inline double any_double(FuzzedDataProvider& in) {
    static const double special[] = {
            std::numeric_limits<double>::quiet_NaN(),
            std::numeric_limits<double>::infinity(),
            -std::numeric_limits<double>::infinity(),
            0.0,
            -0.0,
            std::numeric_limits<double>::denorm_min(),
            std::numeric_limits<double>::min(),
            std::numeric_limits<double>::max(),
            -std::numeric_limits<double>::max(),
            -1.0,
            1e-300,
            1e300};
    switch (in.ConsumeIntegralInRange<int>(0, 2)) {
        case 0:
            return in.PickValueInArray(special);
        case 1:
            return in.ConsumeIntegralInRange<int>(-1000, 100000) / 100.0;
        default: {
            const uint64_t bits = in.ConsumeIntegral<uint64_t>();
            double d;
            std::memcpy(&d, &bits, sizeof(d));
            return d;
        }
    }
}

/// skip_known: whether to skip an input that `hits` the known bug `name`,
/// one found before and kept under tests/fuzz/crashers/ until it is fixed,
/// so that the fuzzer looks for new ones. FAISS_CCD_FUZZ_KNOWN=name (or
/// "all") runs such inputs anyway, to reproduce the bug.
inline bool skip_known(const char* name, bool hits) {
    const char* run = std::getenv("FAISS_CCD_FUZZ_KNOWN");
    return hits &&
            !(run &&
              (std::strcmp(run, name) == 0 || std::strcmp(run, "all") == 0));
}

/// c_string: a short string from the input, as a C API takes it: up to
/// its first NUL.
inline std::string c_string(FuzzedDataProvider& in, size_t max_length) {
    std::string s = in.ConsumeRandomLengthString(max_length);
    return s.substr(0, s.find('\0'));
}

} // namespace fuzz
