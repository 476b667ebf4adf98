/**
 * calibrate_scan: what bench_sim's per-byte costs are, measured on this
 * machine: one core scans vectors of d = 128 against a query, once over
 * data that stays in the caches (l3_ns_per_byte) and once over data far
 * beyond the L3 (dram_ns_per_byte). Prints the JSON to paste into
 * tools/scale_model/calibration.json.
 *
 * The scan is FAISS's own in calibrate_scan_faiss (the fork's IVFFlat
 * InvertedListScanner over inverted lists of bench_ivf's average size,
 * top-100 heaps: the cost bench_ivf pays, the one the model uses), and a
 * plain L2 loop in calibrate_scan_generic / _avx2 (no FAISS needed: what
 * the ISA alone gives, the floor the scanner is compared with).
 *
 * It also describes this machine as a part bench_sim can model ("host",
 * the validation of docs/SIMULATION.md): its L3 domains and their size
 * from sysfs (the kernel's cache topology, as hwloc reads it) and the DRAM
 * bandwidth all its cores get together, measured by one streaming scan
 * per core at once.
 *
 * Built by benchs/CMakeLists.txt: calibrate_scan_generic (-O3, the
 * baseline x86-64 ISA, as Debian's libfaiss is built), calibrate_scan_avx2
 * (-O3 -mavx2 -mfma, as the fork's libfaiss_avx2) and, with the fork,
 * calibrate_scan_faiss.
 *
 *   calibrate_scan_faiss [--small-mb 4] [--large-mb 512] [--seconds 1]
 *                       [--threads N (all cores)] [--quick] [--out DIR]
 *
 * Options through the benchmarks' one parser (common/options.h). The JSON
 * goes to stdout; with --out it is also written to DIR/<program>.json.
 * --quick: 0.1 s per measurement over 64 MB (a smoke run, not a
 * calibration).
 */

#include "common/options.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#ifdef CALIBRATE_WITH_FAISS
#include <faiss/IndexFlat.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/utils/Heap.h>
#include <algorithm>
#include <memory>
#endif

namespace {

constexpr int kDim = 128;

#ifdef CALIBRATE_WITH_FAISS

/// Data: an IVFFlat's inverted lists of `mb` megabytes (kListSize codes
/// each, ids included in the bytes, as bench_sim counts an IVFFlat list),
/// scanned by FAISS's own InvertedListScanner with a top-k heap that
/// restarts every kProbes lists, as a query's does: the cost of the real
/// scan, heap and list hand-over included.
constexpr size_t kListSize = 488; // bench_ivf's synthetic average
constexpr size_t kProbes = 32;    // and its nprobe
constexpr int kTopK = 100;
constexpr size_t kBytesPerVector =
        kDim * sizeof(float) + sizeof(faiss::Index::idx_t);

class Data {
   public:
    explicit Data(double mb)
            : quantizer_(kDim),
              index_(&quantizer_,
                     kDim,
                     std::max<size_t>(
                             1,
                             size_t(mb * (1 << 20)) /
                                     (kListSize * kBytesPerVector))) {
        index_.is_trained = true; // the scanner needs no centroids (L2)
        std::vector<float> x(kListSize * kDim);
        std::vector<faiss::Index::idx_t> ids(kListSize);
        for (size_t l = 0; l < index_.nlist; l++) {
            for (size_t i = 0; i < x.size(); i++) {
                x[i] = float(((l * x.size() + i) * 2654435761u) % 1000) * 1e-3f;
            }
            for (size_t i = 0; i < kListSize; i++) {
                ids[i] = faiss::Index::idx_t(l * kListSize + i);
            }
            index_.invlists->add_entries(
                    l,
                    kListSize,
                    ids.data(),
                    reinterpret_cast<const uint8_t*>(x.data()));
        }
        scanner_.reset(index_.get_InvertedListScanner(false, nullptr));
    }
    size_t bytes() const {
        return index_.nlist * kListSize * kBytesPerVector;
    }
    /// scan: every list once, a fresh heap each kProbes lists; returns the
    /// sum of the heaps' k-th distances (so nothing is dropped).
    float scan(const float* q) {
        float sum = 0;
        std::vector<float> dis(kTopK);
        std::vector<faiss::Index::idx_t> labels(kTopK);
        const faiss::InvertedLists& il = *index_.invlists;
        scanner_->set_query(q);
        for (size_t l = 0; l < index_.nlist; l++) {
            if (l % kProbes == 0) {
                sum += dis[0];
                faiss::maxheap_heapify(kTopK, dis.data(), labels.data());
            }
            scanner_->set_list(faiss::Index::idx_t(l), 0);
            scanner_->scan_codes(
                    il.list_size(l),
                    il.get_codes(l),
                    il.get_ids(l),
                    dis.data(),
                    labels.data(),
                    kTopK);
        }
        return sum + dis[0];
    }

   private:
    faiss::IndexFlatL2 quantizer_;
    faiss::IndexIVFFlat index_;
    std::unique_ptr<faiss::InvertedListScanner> scanner_;
};
const char* kKernel = "FAISS's IVFFlat scanner, top-100";

#else

/// Data: `mb` megabytes of vectors, scanned by a plain loop: the L2
/// distance to every vector (the IVFFlat kernel's shape) and their
/// minimum, vectorised by the compiler.
class Data {
   public:
    explicit Data(double mb)
            : n_(size_t(mb * (1 << 20) / (kDim * sizeof(float)))),
              x_(n_ * kDim) {
        for (size_t i = 0; i < x_.size(); i++) {
            x_[i] = float((i * 2654435761u) % 1000) * 1e-3f;
        }
    }
    size_t bytes() const {
        return n_ * kDim * sizeof(float);
    }
    float scan(const float* q) const {
        float best = 1e30f;
        for (size_t i = 0; i < n_; i++) {
            const float* v = x_.data() + i * kDim;
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

   private:
    size_t n_;
    std::vector<float> x_;
};
const char* kKernel = "a plain L2 loop";

#endif

/// ns_per_byte: repeat scans of `mb` megabytes for about `seconds`.
double ns_per_byte(double mb, double seconds, float* sink) {
    Data data(mb);
    std::vector<float> q(kDim, 0.5f);
    *sink += data.scan(q.data()); // warm (and fault in) the pages
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    size_t bytes = 0;
    double elapsed = 0;
    do {
        q[0] += 1e-3f;
        *sink += data.scan(q.data());
        bytes += data.bytes();
        elapsed = std::chrono::duration<double>(clock::now() - t0).count();
    } while (elapsed < seconds);
    return elapsed * 1e9 / double(bytes);
}

/// all_cores_gbps: `threads` threads each scan their own `mb` array for
/// about `seconds`, at once; their bytes over the wall time.
double all_cores_gbps(int threads, double mb, double seconds, float* sink) {
    std::vector<double> ns(threads);
    std::vector<float> sinks(threads);
    std::vector<std::thread> team;
    for (int t = 0; t < threads; t++) {
        team.emplace_back([&, t] {
            ns[t] = ns_per_byte(mb, seconds, &sinks[t]);
        });
    }
    double gbps = 0;
    for (int t = 0; t < threads; t++) {
        team[t].join();
        *sink += sinks[t];
        gbps += 1.0 / ns[t]; // bytes per ns = GB/s
    }
    return gbps;
}

/// read_line: the first line of a sysfs file, "" if absent.
std::string read_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

/// L3Domains: the machine's L3 caches as the kernel reports them.
struct L3Domains {
    int domains = 0;
    int cpus = 0;
    double mb = 0; ///< per domain
};

L3Domains l3_domains() {
    L3Domains d;
    std::set<std::string> seen;
    for (int cpu = 0;; cpu++) {
        const std::string dir =
                "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache";
        if (read_line(
                    "/sys/devices/system/cpu/cpu" + std::to_string(cpu) +
                    "/topology/core_id")
                    .empty()) {
            break;
        }
        d.cpus++;
        for (int i = 0; i < 8; i++) {
            const std::string idx = dir + "/index" + std::to_string(i);
            if (read_line(idx + "/level") != "3") {
                continue;
            }
            seen.insert(read_line(idx + "/shared_cpu_list"));
            const std::string size = read_line(idx + "/size"); // "32768K"
            double v = std::atof(size.c_str());
            if (size.find('M') != std::string::npos) {
                v *= 1024;
            }
            d.mb = v / 1024;
        }
    }
    d.domains = int(seen.size());
    return d;
}

} // namespace

int main(int argc, char** argv) {
    double small_mb = 4, large_mb = 512, seconds = 1;
    int threads = int(std::thread::hardware_concurrency());
    const std::string program =
            std::filesystem::path(argv[0]).filename().string();
    bench::Options o(program, "bench_sim's per-byte scan costs, measured");
    o.out.clear(); // stdout only, unless --out is given
    o.help_for("out", "also write the JSON to DIR/" + program + ".json");
    o.help_for("quick", "0.1 s per measurement over 64 MB (a smoke run)");
    o.add("small-mb", &small_mb, "MB", "data kept in the caches (4)");
    o.add("large-mb", &large_mb, "MB", "data far beyond the L3 (512)");
    o.add("seconds", &seconds, "S", "per measurement (1)");
    o.add("threads", &threads, "N", "DRAM bandwidth threads (all cores)");
    if (!o.parse(argc, argv)) {
        return o.help_asked() ? 0 : 2;
    }
    if (o.quick) {
        seconds = std::min(seconds, 0.1);
        large_mb = std::min(large_mb, 64.0);
    }
    // The negated test refuses NaN too. The bandwidth step holds
    // threads x large-mb at once.
    if (!(small_mb >= 1 && large_mb > small_mb && seconds > 0 &&
          seconds <= 3600 && threads > 0 &&
          double(threads) * large_mb <= 65536)) {
        std::fprintf(
                stderr,
                "%s: wants 1 <= --small-mb < --large-mb, --threads > 0 with "
                "threads x large-mb <= 65536 MB, 0 < --seconds <= 3600\n",
                program.c_str());
        return 2;
    }
    float sink = 0;
    const double cached = ns_per_byte(small_mb, seconds, &sink);
    const double dram = ns_per_byte(large_mb, seconds, &sink);
    const double gbps = all_cores_gbps(threads, large_mb, seconds, &sink);
    const L3Domains l3 = l3_domains();
    if (l3.domains == 0) {
        std::fprintf(
                stderr,
                "%s: the kernel reports no L3 here (no "
                "/sys/devices/system/cpu/cpu*/cache): the host_* fields are "
                "0; take the part's L3 domains and size from hwloc "
                "(lstopo) instead\n",
                program.c_str());
    }
#if defined(CALIBRATE_WITH_FAISS)
    const char* isa = "the fork's libfaiss";
#elif defined(__AVX2__)
    const char* isa = "avx2+fma";
#else
    const char* isa = "generic x86-64";
#endif
    char json[1024];
    std::snprintf(
            json,
            sizeof(json),
            "{\"l3_ns_per_byte\": %.5f, \"dram_ns_per_byte\": %.5f,\n"
            " \"host_ccds\": %d, \"host_cores_per_ccd\": %d, "
            "\"host_l3_mb\": %.0f, \"host_dram_gbps\": %.2f,\n"
            " \"source\": \"calibrate_scan (%s, %s), %.0f MB vs %.0f MB "
            "arrays, "
            "d %d, %.1f s each; DRAM bandwidth: %d threads at once\", "
            "\"checksum\": %g}\n",
            cached,
            dram,
            l3.domains,
            l3.domains > 0 ? l3.cpus / l3.domains : 0,
            l3.mb,
            gbps,
            kKernel,
            isa,
            small_mb,
            large_mb,
            kDim,
            seconds,
            threads,
            double(sink));
    std::fputs(json, stdout);
    if (!o.out.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(o.out, ec);
        const std::string path = o.out + "/" + program + ".json";
        std::ofstream f(path);
        f << json;
        if (!f.flush()) {
            std::fprintf(
                    stderr,
                    "%s: cannot write %s\n",
                    program.c_str(),
                    path.c_str());
            return 1;
        }
        std::fprintf(stderr, "wrote %s\n", path.c_str());
    }
    return 0;
}
