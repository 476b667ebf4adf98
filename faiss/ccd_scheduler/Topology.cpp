/**
 * Topology: detection through hwloc, spec parsing, and describe().
 *
 * detect() tries, in this order, and says in note() where it stopped short:
 *   1. one CCD per L3 cache object (Source::hwloc_l3): the L3 is what a CCD
 *      is, and what placement tries to keep each mapping id inside;
 *   2. one CCD per package (Source::hwloc_package), when hwloc knows no L3:
 *      a package is the next coarser domain that still shares memory paths;
 *   3. one CCD holding every CPU the process may run on (Source::flat), when
 *      hwloc cannot load a topology or knows neither: the pool still runs,
 *      it just cannot tell CCDs apart.
 * Only CPUs the process may run on count: hwloc's allowed cpuset (cgroups)
 * intersected with sched_getaffinity() of the calling thread.
 *
 * One worker per core, pinned to the core's first allowed PU (lowest OS
 * index). Hyperthreads of one core share its L1/L2 and execution units, so a
 * second worker there would compete with the first for the very caches
 * placement tries to keep warm (whether SMT would pay for scan-heavy tasks is
 * not measured here). The flat fallback, which knows no cores, takes every
 * allowed PU instead.
 */

#include <faiss/ccd_scheduler/Topology.h>

#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

namespace faiss {
namespace ccd {

namespace {

/// kMaxSpecDim: the largest N, M and N x M accepted in an "NxM" spec.
constexpr int kMaxSpecDim = 4096;
/// kMaxSpecCpu: the largest CPU number accepted in a CPU list; above Linux's
/// largest NR_CPUS, and small enough that a range cannot exhaust memory.
constexpr int kMaxSpecCpu = 65535;

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace((unsigned char)s[b])) {
        b++;
    }
    while (e > b && std::isspace((unsigned char)s[e - 1])) {
        e--;
    }
    return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        size_t pos = s.find(sep, start);
        if (pos == std::string::npos) {
            parts.push_back(s.substr(start));
            return parts;
        }
        parts.push_back(s.substr(start, pos - start));
        start = pos + 1;
    }
}

std::string quote(const std::string& s) {
    return "\"" + s + "\"";
}

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
    throw std::invalid_argument(
            "bad topology spec " + quote(spec) + ": " + why);
}

/// parse_uint: a plain decimal number (digits only, no sign) in [0, max],
/// or -1 when `s` is not one.
int parse_uint(const std::string& s, int max) {
    if (s.empty() || s.size() > 9) {
        return -1;
    }
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') {
            return -1;
        }
        v = v * 10 + (c - '0');
    }
    return v <= max ? v : -1;
}

/// machine_cpu_count: CPUs online on the machine. A spec CPU at or above
/// this count does not exist here, and its worker is left unpinned.
int machine_cpu_count() {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? int(n) : 1;
}

/// affinity_cpus: the CPUs sched_getaffinity() allows the calling thread,
/// ascending; every online CPU when the call fails.
std::vector<int> affinity_cpus() {
    std::vector<int> cpus;
    for (int ncpus = 1024; ncpus <= (1 << 20); ncpus *= 2) {
        cpu_set_t* set = CPU_ALLOC(ncpus);
        if (set == nullptr) {
            break;
        }
        size_t size = CPU_ALLOC_SIZE(ncpus);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            for (int c = 0; c < ncpus; c++) {
                if (CPU_ISSET_S(c, size, set)) {
                    cpus.push_back(c);
                }
            }
            CPU_FREE(set);
            break;
        }
        int err = errno;
        CPU_FREE(set);
        if (err != EINVAL) { // EINVAL: the mask is too small, try larger
            break;
        }
    }
    if (cpus.empty()) {
        for (int c = 0; c < machine_cpu_count(); c++) {
            cpus.push_back(c);
        }
    }
    return cpus;
}

/// count_pinned: how many entries of `groups` are pinned (not -1).
int count_pinned(const std::vector<std::vector<int>>& groups, int* total) {
    int pinned = 0;
    *total = 0;
    for (const auto& g : groups) {
        for (int cpu : g) {
            pinned += cpu >= 0;
            (*total)++;
        }
    }
    return pinned;
}

/// unpinned_note: the note for a spec topology some workers of which float.
std::string unpinned_note(const std::vector<std::vector<int>>& groups) {
    int total = 0;
    int pinned = count_pinned(groups, &total);
    if (pinned == total) {
        return "";
    }
    int n = machine_cpu_count();
    return std::to_string(pinned) + " of " + std::to_string(total) +
            " workers pinned (the machine has " + std::to_string(n) +
            (n == 1 ? " CPU" : " CPUs") + "); the rest float";
}

Topology from_nxm(const std::string& spec, const std::string& body) {
    std::string lower = body;
    for (char& c : lower) {
        c = char(std::tolower((unsigned char)c));
    }
    std::vector<std::string> parts = split(lower, 'x');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
        bad_spec(
                spec,
                "bad token " + quote(body) +
                        " (expected \"NxM\": N CCDs of M workers)");
    }
    int dims[2];
    for (int i = 0; i < 2; i++) {
        // report the token as written, not lower-cased
        size_t off = i == 0 ? 0 : parts[0].size() + 1;
        std::string token = body.substr(off, parts[i].size());
        dims[i] = parse_uint(parts[i], kMaxSpecDim);
        if (dims[i] < 1) {
            bad_spec(
                    spec,
                    std::string("bad ") +
                            (i == 0 ? "CCD count " : "worker count ") +
                            quote(token) + " (expected 1.." +
                            std::to_string(kMaxSpecDim) + ")");
        }
    }
    // Each worker is a thread: refuse before anything is allocated.
    if (int64_t(dims[0]) * dims[1] > kMaxSpecDim) {
        bad_spec(
                spec,
                quote(body) + " asks for " +
                        std::to_string(int64_t(dims[0]) * dims[1]) +
                        " workers (at most " + std::to_string(kMaxSpecDim) +
                        " in all)");
    }
    int n_cpus = machine_cpu_count();
    std::vector<std::vector<int>> groups(dims[0]);
    int worker = 0;
    for (auto& g : groups) {
        for (int j = 0; j < dims[1]; j++, worker++) {
            g.push_back(worker < n_cpus ? worker : -1);
        }
    }
    return Topology::from_groups(
            groups,
            Topology::Source::spec,
            unpinned_note(groups));
}

Topology from_cpu_lists(const std::string& spec, const std::string& body) {
    std::vector<std::vector<int>> groups;
    std::set<int> seen;
    int n_cpus = machine_cpu_count();
    std::vector<std::string> group_tokens = split(body, ';');
    for (size_t gi = 0; gi < group_tokens.size(); gi++) {
        std::string group = trim(group_tokens[gi]);
        if (group.empty()) {
            bad_spec(
                    spec,
                    "empty CPU group " + quote(group_tokens[gi]) + " (group " +
                            std::to_string(gi + 1) + ")");
        }
        std::vector<int> cpus;
        for (const std::string& raw : split(group, ',')) {
            std::string item = trim(raw);
            size_t dash = item.find('-');
            int lo, hi;
            if (dash == std::string::npos) {
                lo = hi = parse_uint(item, kMaxSpecCpu);
            } else {
                lo = parse_uint(trim(item.substr(0, dash)), kMaxSpecCpu);
                hi = parse_uint(trim(item.substr(dash + 1)), kMaxSpecCpu);
            }
            if (lo < 0 || hi < 0) {
                bad_spec(
                        spec,
                        "bad token " + quote(item) +
                                " (expected a CPU number 0.." +
                                std::to_string(kMaxSpecCpu) +
                                " or a range \"a-b\")");
            }
            if (lo > hi) {
                bad_spec(spec, "reversed range " + quote(item));
            }
            for (int cpu = lo; cpu <= hi; cpu++) {
                if (!seen.insert(cpu).second) {
                    std::string token = std::to_string(cpu);
                    bad_spec(
                            spec,
                            "CPU " + quote(token) +
                                    (item == token
                                             ? ""
                                             : " (in " + quote(item) + ")") +
                                    " appears twice");
                }
                cpus.push_back(cpu < n_cpus ? cpu : -1);
            }
        }
        groups.push_back(std::move(cpus));
    }
    return Topology::from_groups(
            groups,
            Topology::Source::spec,
            unpinned_note(groups));
}

/// Hwloc: owns an hwloc topology and the bitmaps detect() allocates.
struct HwlocTopologyDeleter {
    void operator()(hwloc_topology* t) const {
        hwloc_topology_destroy(t);
    }
};
struct HwlocBitmapDeleter {
    void operator()(hwloc_bitmap_s* b) const {
        hwloc_bitmap_free(b);
    }
};
using HwlocTopologyPtr = std::unique_ptr<hwloc_topology, HwlocTopologyDeleter>;
using HwlocBitmapPtr = std::unique_ptr<hwloc_bitmap_s, HwlocBitmapDeleter>;

HwlocTopologyPtr load_hwloc() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) {
        return nullptr;
    }
    HwlocTopologyPtr topo(t);
    if (hwloc_topology_load(t) != 0) {
        return nullptr;
    }
    return topo;
}

/// workers_in: one CPU per core among the allowed PUs of `domain`, the
/// core's first PU; a PU hwloc puts in no core counts as a core of its own.
/// The domain's PUs are removed from `unclaimed`.
std::vector<int> workers_in(
        hwloc_topology_t topo,
        hwloc_const_cpuset_t domain,
        hwloc_const_cpuset_t allowed,
        hwloc_cpuset_t unclaimed) {
    std::vector<int> cpus;
    HwlocBitmapPtr left(hwloc_bitmap_alloc());
    if (!left) {
        return cpus;
    }
    hwloc_bitmap_and(left.get(), domain, allowed);
    hwloc_bitmap_andnot(unclaimed, unclaimed, left.get());
    while (!hwloc_bitmap_iszero(left.get())) {
        int pu = hwloc_bitmap_first(left.get());
        cpus.push_back(pu);
        hwloc_obj_t pu_obj = hwloc_get_pu_obj_by_os_index(topo, unsigned(pu));
        hwloc_obj_t core = pu_obj == nullptr
                ? nullptr
                : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu_obj);
        if (core != nullptr && core->cpuset != nullptr) {
            hwloc_bitmap_andnot(left.get(), left.get(), core->cpuset);
        }
        hwloc_bitmap_clr(left.get(), unsigned(pu));
    }
    return cpus;
}

/// domains_of: the workers of every `type` object with allowed CPUs, one
/// group per object in hwloc's logical order; appends to `note` if some
/// allowed CPUs lie in no such object.
std::vector<std::vector<int>> domains_of(
        hwloc_topology_t topo,
        hwloc_obj_type_t type,
        hwloc_const_cpuset_t allowed,
        std::string* note) {
    std::vector<std::vector<int>> groups;
    HwlocBitmapPtr unclaimed(hwloc_bitmap_dup(allowed));
    if (!unclaimed) {
        return groups;
    }
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topo, type, nullptr);
         obj != nullptr;
         obj = hwloc_get_next_obj_by_type(topo, type, obj)) {
        if (obj->cpuset == nullptr) {
            continue;
        }
        std::vector<int> cpus =
                workers_in(topo, obj->cpuset, allowed, unclaimed.get());
        if (!cpus.empty()) {
            groups.push_back(std::move(cpus));
        }
    }
    int orphans = hwloc_bitmap_weight(unclaimed.get());
    if (!groups.empty() && orphans > 0) {
        *note = std::to_string(orphans) + " allowed CPU" +
                (orphans == 1 ? " lies" : "s lie") + " in no " +
                hwloc_obj_type_string(type) + " and get no worker";
    }
    return groups;
}

} // namespace

Topology Topology::detect() {
    std::vector<int> affinity = affinity_cpus();
    std::string flat_why = "hwloc could not load the topology";

    HwlocTopologyPtr topo = load_hwloc();
    HwlocBitmapPtr allowed(topo ? hwloc_bitmap_alloc() : nullptr);
    if (topo && allowed) {
        for (int cpu : affinity) {
            hwloc_bitmap_set(allowed.get(), unsigned(cpu));
        }
        hwloc_bitmap_and(
                allowed.get(),
                allowed.get(),
                hwloc_topology_get_allowed_cpuset(topo.get()));

        std::string note;
        auto groups =
                domains_of(topo.get(), HWLOC_OBJ_L3CACHE, allowed.get(), &note);
        if (!groups.empty()) {
            return from_groups(groups, Source::hwloc_l3, note);
        }
        groups =
                domains_of(topo.get(), HWLOC_OBJ_PACKAGE, allowed.get(), &note);
        if (!groups.empty()) {
            std::string why =
                    "no L3 information from hwloc: one CCD per package";
            return from_groups(
                    groups,
                    Source::hwloc_package,
                    note.empty() ? why : why + "; " + note);
        }
        flat_why = "no L3 or package information from hwloc";
    }
    return from_groups(
            {affinity},
            Source::flat,
            flat_why + ": one CCD with every allowed CPU");
}

Topology Topology::from_spec(const std::string& spec) {
    std::string body = trim(spec);
    if (body.empty()) {
        bad_spec(spec, "empty spec (expected \"NxM\" or CPU lists)");
    }
    // "NxM" has an 'x' and no list punctuation; everything else is CPU lists,
    // so "0-3;x" is reported as a bad CPU token rather than a bad "NxM".
    bool has_x = body.find_first_of("xX") != std::string::npos;
    bool has_list = body.find_first_of(";,") != std::string::npos;
    if (has_x && !has_list) {
        return from_nxm(spec, body);
    }
    return from_cpu_lists(spec, body);
}

namespace {

bool is_auto(const std::string& spec) {
    std::string s = trim(spec);
    for (char& c : s) {
        c = char(std::tolower((unsigned char)c));
    }
    return s.empty() || s == "auto";
}

} // namespace

Topology Topology::from_string(const std::string& spec_or_auto) {
    if (!is_auto(spec_or_auto)) {
        return from_spec(spec_or_auto);
    }
    const char* env = std::getenv("FAISS_CCD_TOPOLOGY");
    if (env == nullptr || is_auto(env)) {
        return detect();
    }
    try {
        return from_spec(env);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(
                std::string("FAISS_CCD_TOPOLOGY: ") + e.what());
    }
}

Topology Topology::from_groups(
        const std::vector<std::vector<int>>& cpus_per_ccd,
        Source source,
        std::string note) {
    if (cpus_per_ccd.empty()) {
        throw std::invalid_argument("Topology::from_groups: no CCDs");
    }
    Topology t;
    std::set<int> seen;
    t.first_worker_.push_back(0);
    for (size_t c = 0; c < cpus_per_ccd.size(); c++) {
        const std::vector<int>& group = cpus_per_ccd[c];
        if (group.empty()) {
            throw std::invalid_argument(
                    "Topology::from_groups: CCD " + std::to_string(c) +
                    " has no workers");
        }
        for (int cpu : group) {
            if (cpu < -1) {
                throw std::invalid_argument(
                        "Topology::from_groups: bad CPU " +
                        std::to_string(cpu) + " (expected >= 0, or -1)");
            }
            if (cpu >= 0 && !seen.insert(cpu).second) {
                throw std::invalid_argument(
                        "Topology::from_groups: CPU " + std::to_string(cpu) +
                        " given to two workers");
            }
            t.ccd_of_.push_back(int(c));
            t.cpu_of_.push_back(cpu);
        }
        t.first_worker_.push_back(int(t.ccd_of_.size()));
    }
    t.source_ = source;
    t.note_ = std::move(note);
    return t;
}

namespace {

std::string plural(int n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

/// cpu_list: a CCD's CPUs with runs folded: "cpu0-7", "cpu0,cpu2", and runs
/// of unpinned workers as "-" or "-x6".
std::string cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i + 1;
        if (cpus[i] < 0) {
            while (j < cpus.size() && cpus[j] < 0) {
                j++;
            }
        } else {
            while (j < cpus.size() && cpus[j] == cpus[j - 1] + 1) {
                j++;
            }
        }
        if (!out.empty()) {
            out += ",";
        }
        int run = int(j - i);
        if (cpus[i] < 0) {
            out += run == 1 ? "-" : "-x" + std::to_string(run);
        } else {
            out += "cpu" + std::to_string(cpus[i]);
            if (run > 1) {
                out += "-" + std::to_string(cpus[j - 1]);
            }
        }
        i = j;
    }
    return out;
}

} // namespace

std::string Topology::describe() const {
    bool even = true;
    for (int c = 1; c < num_ccds(); c++) {
        even = even && ccd_size(c) == ccd_size(0);
    }
    std::string out = plural(num_ccds(), "CCD") +
            (even ? " x " + plural(ccd_size(0), "worker")
                  : ", " + plural(num_workers(), "worker")) +
            " (" + source_name(source_) + "):";
    for (int c = 0; c < num_ccds(); c++) {
        std::vector<int> cpus(
                cpu_of_.begin() + first_worker(c),
                cpu_of_.begin() + first_worker(c + 1));
        out += " ccd" + std::to_string(c) + "=[" + cpu_list(cpus) + "]";
    }
    if (!note_.empty()) {
        out += " | " + note_;
    }
    return out;
}

const char* source_name(Topology::Source source) {
    switch (source) {
        case Topology::Source::hwloc_l3:
            return "hwloc L3";
        case Topology::Source::hwloc_package:
            return "hwloc package";
        case Topology::Source::flat:
            return "flat";
        case Topology::Source::spec:
            return "spec";
    }
    return "unknown";
}

} // namespace ccd
} // namespace faiss
