/**
 * calibrate_scan: what bench_sim's per-byte costs are, measured on this
 * machine: one core computes L2 distances from a query to every vector of
 * a float array (the IVFFlat scan kernel's shape, d = 128), once for an
 * array that stays in the caches (l3_ns_per_byte) and once for one far
 * beyond the L3 (dram_ns_per_byte). Prints the JSON to paste into
 * benchs/sim/calibration.json.
 *
 * Built twice by benchs/CMakeLists.txt: calibrate_scan_generic (-O3, the
 * baseline x86-64 ISA, as Debian's libfaiss is built) and
 * calibrate_scan_avx2 (-O3 -mavx2 -mfma, as the fork's libfaiss_avx2).
 *
 *   calibrate_scan_avx2 [--small-mb 4] [--large-mb 512] [--seconds 1]
 */

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kDim = 128;

/// scan: the sum of the squared distances' minimum over all vectors, so
/// the compiler cannot drop the work; vectorised by the compiler.
float scan(const float* x, size_t n, const float* q) {
    float best = 1e30f;
    for (size_t i = 0; i < n; i++) {
        const float* v = x + i * kDim;
        float d = 0;
        // Reassociation allowed, as FAISS's distance kernels allow it
        // (built with -fopenmp-simd).
#pragma omp simd reduction(+ : d)
        for (int j = 0; j < kDim; j++) {
            const float t = v[j] - q[j];
            d += t * t;
        }
        best = d < best ? d : best;
    }
    return best;
}

/// ns_per_byte: repeat scans of `mb` megabytes for about `seconds`.
double ns_per_byte(double mb, double seconds, float* sink) {
    const size_t n = size_t(mb * (1 << 20) / (kDim * sizeof(float)));
    std::vector<float> x(n * kDim);
    for (size_t i = 0; i < x.size(); i++) {
        x[i] = float((i * 2654435761u) % 1000) * 1e-3f;
    }
    std::vector<float> q(kDim, 0.5f);
    *sink += scan(x.data(), n, q.data()); // warm (and fault in) the pages
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    size_t bytes = 0;
    double elapsed = 0;
    do {
        q[0] += 1e-3f;
        *sink += scan(x.data(), n, q.data());
        bytes += n * kDim * sizeof(float);
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    } while (elapsed < seconds);
    return elapsed * 1e9 / double(bytes);
}

} // namespace

int main(int argc, char** argv) {
    double small_mb = 4, large_mb = 512, seconds = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const double v = std::atof(argv[i + 1]);
        if (a == "--small-mb") {
            small_mb = v;
        } else if (a == "--large-mb") {
            large_mb = v;
        } else if (a == "--seconds") {
            seconds = v;
        } else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    float sink = 0;
    const double cached = ns_per_byte(small_mb, seconds, &sink);
    const double dram = ns_per_byte(large_mb, seconds, &sink);
#if defined(__AVX2__)
    const char* isa = "avx2+fma";
#else
    const char* isa = "generic x86-64";
#endif
    std::printf(
            "{\"l3_ns_per_byte\": %.5f, \"dram_ns_per_byte\": %.5f,\n"
            " \"source\": \"calibrate_scan (%s), %.0f MB vs %.0f MB arrays, "
            "d %d\", \"checksum\": %g}\n",
            cached,
            dram,
            isa,
            small_mb,
            large_mb,
            kDim,
            double(sink));
    return 0;
}
