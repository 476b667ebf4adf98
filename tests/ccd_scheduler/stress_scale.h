/**
 * stress_scale: the one size knob of the stress tests.
 *
 * FAISS_CCD_STRESS_SCALE (a float, default 1.0) multiplies the item or round
 * count of every stress test, so that sanitizer builds and slow machines run
 * the same tests smaller, e.g.
 *
 *   FAISS_CCD_STRESS_SCALE=0.1 ctest --test-dir build-tsan -L scheduler
 *
 * An unset, empty, unparsable or non-positive value means 1.0.
 */

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

/// stress_scale: the multiplier, read from the environment once.
inline double stress_scale() {
    static const double scale = [] {
        const char* s = std::getenv("FAISS_CCD_STRESS_SCALE");
        if (s == nullptr || *s == '\0') {
            return 1.0;
        }
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        if (end == s || *end != '\0' || !std::isfinite(v) || !(v > 0)) {
            return 1.0;
        }
        return v;
    }();
    return scale;
}

/// scaled: n times stress_scale(), but never below 1000 (or below n when n
/// itself is smaller), so that a tiny scale still runs the races at all.
inline int64_t scaled(int64_t n) {
    const double v = double(n) * stress_scale();
    const int64_t floor = std::min<int64_t>(n, 1000);
    const int64_t s = v >= 9.0e18 ? INT64_MAX : int64_t(v);
    return std::max(floor, s);
}
