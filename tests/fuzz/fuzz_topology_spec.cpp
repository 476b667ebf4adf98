/**
 * fuzz_topology_spec: Topology::from_spec, Topology::from_string (with and
 * without FAISS_CCD_TOPOLOGY) and policy_from_name on arbitrary strings.
 *
 * Properties, for the input taken as one string s:
 *  - from_spec(s) either throws std::invalid_argument whose message names
 *    the spec ("bad topology spec \"...\": ..."), or returns a topology
 *    whose invariants hold: at least one CCD, each non-empty; CCD c owns
 *    exactly the workers [first_worker(c), first_worker(c + 1)), starting
 *    at 0 with no gap, so every worker is in exactly one CCD (ccd_of
 *    agrees) and num_workers is the sum of the CCD sizes; a CPU is given
 *    to at most one worker, and only a CPU the machine has (else -1);
 *    source() is spec; describe() starts with the CCD count. Nothing else
 *    may escape (another exception, a crash, a sanitizer report).
 *  - Its canonical spec (CCD c as the CPU range of its worker numbers,
 *    "0-3;4-7") parses to the same shape; so does "NxM" for an even shape
 *    of at most 4096 workers; and when every worker is pinned, its own
 *    CPU lists give the same CPUs back.
 *  - from_string(s) agrees with from_spec(s) unless s is blank or "auto",
 *    which detects (hwloc) and must not throw; with FAISS_CCD_TOPOLOGY=s,
 *    from_string("auto") agrees with from_spec(s) too, its message then
 *    prefixed "FAISS_CCD_TOPOLOGY: ".
 *  - policy_from_name(s) returns a kind only for the names StealPolicy.h
 *    lists (case-insensitive, plus the aliases "flatsteal" and
 *    "roundrobin" the parser also takes), and policy_name() of it parses
 *    back to it; any other name throws std::invalid_argument naming it.
 */

#include <faiss/ccd_scheduler/StealPolicy.h>
#include <faiss/ccd_scheduler/Topology.h>

#include "fuzz_common.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>

using faiss::ccd::PolicyKind;
using faiss::ccd::Topology;

namespace {

std::string lower(std::string s) {
    for (char& c : s) {
        c = char(std::tolower((unsigned char)c));
    }
    return s;
}

bool is_auto(const std::string& s) {
    std::string t = lower(s);
    t.erase(0, t.find_first_not_of(" \t\n\v\f\r"));
    t.erase(t.find_last_not_of(" \t\n\v\f\r") + 1);
    return t.empty() || t == "auto";
}

void check_invariants(const Topology& t) {
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    FUZZ_CHECK(t.num_ccds() >= 1);
    FUZZ_CHECK(t.first_worker(0) == 0);
    int workers = 0;
    for (int c = 0; c < t.num_ccds(); c++) {
        FUZZ_CHECK(t.ccd_size(c) >= 1);
        FUZZ_CHECK(t.first_worker(c) == workers);
        workers += t.ccd_size(c);
    }
    FUZZ_CHECK(t.num_workers() == workers);
    std::set<int> cpus;
    for (int w = 0; w < t.num_workers(); w++) {
        const int c = t.ccd_of(w);
        FUZZ_CHECK(c >= 0 && c < t.num_ccds());
        FUZZ_CHECK(w >= t.first_worker(c) && w < t.first_worker(c + 1));
        const int cpu = t.cpu_of(w);
        FUZZ_CHECK(cpu >= -1 && cpu < std::max(1L, ncpu));
        FUZZ_CHECK(cpu < 0 || cpus.insert(cpu).second);
    }
    FUZZ_CHECK(t.source() == Topology::Source::spec);
    const std::string d = t.describe();
    FUZZ_CHECK(d.rfind(std::to_string(t.num_ccds()) + " CCD", 0) == 0);
}

bool same_shape(const Topology& a, const Topology& b) {
    if (a.num_ccds() != b.num_ccds()) {
        return false;
    }
    for (int c = 0; c < a.num_ccds(); c++) {
        if (a.ccd_size(c) != b.ccd_size(c)) {
            return false;
        }
    }
    return true;
}

/// cpu_lists: "a-b;c-d;..." of each CCD's entries of `of(worker)`.
template <class Of>
std::string cpu_lists(const Topology& t, Of of) {
    std::string spec;
    for (int c = 0; c < t.num_ccds(); c++) {
        spec += c == 0 ? "" : ";";
        for (int w = t.first_worker(c); w < t.first_worker(c + 1); w++) {
            spec += (w == t.first_worker(c) ? "" : ",") + std::to_string(of(w));
        }
    }
    return spec;
}

void check_respecs(const Topology& t) {
    const Topology canon = Topology::from_spec(cpu_lists(t, [](int w) {
        return w;
    }));
    FUZZ_CHECK(same_shape(t, canon));
    bool even = true, pinned = true;
    for (int c = 0; c < t.num_ccds(); c++) {
        even = even && t.ccd_size(c) == t.ccd_size(0);
    }
    for (int w = 0; w < t.num_workers(); w++) {
        pinned = pinned && t.cpu_of(w) >= 0;
    }
    if (even && t.num_workers() <= 4096) {
        const std::string nxm = std::to_string(t.num_ccds()) + "x" +
                std::to_string(t.ccd_size(0));
        FUZZ_CHECK(same_shape(t, Topology::from_spec(nxm)));
    }
    if (pinned) {
        const Topology again = Topology::from_spec(cpu_lists(t, [&](int w) {
            return t.cpu_of(w);
        }));
        FUZZ_CHECK(same_shape(t, again));
        for (int w = 0; w < t.num_workers(); w++) {
            FUZZ_CHECK(again.cpu_of(w) == t.cpu_of(w));
        }
    }
}

/// Outcome: what a parse gave: a topology or the invalid_argument message.
struct Outcome {
    bool ok = false;
    std::string shape; ///< the canonical spec when ok
    std::string error;
};

template <class Parse>
Outcome parse(Parse p) {
    Outcome o;
    try {
        const Topology t = p();
        o.ok = true;
        o.shape = cpu_lists(t, [&](int w) {
            return t.ccd_of(w);
        });
    } catch (const std::invalid_argument& e) {
        o.error = e.what();
    }
    return o;
}

void check_policy(const std::string& s) {
    static const std::set<std::string> names = {
            "ccd",
            "flat",
            "flat_steal",
            "flatsteal",
            "rr",
            "round_robin",
            "roundrobin"};
    try {
        const PolicyKind kind = faiss::ccd::policy_from_name(s);
        FUZZ_CHECK(names.count(lower(s)) == 1);
        FUZZ_CHECK(
                faiss::ccd::policy_from_name(faiss::ccd::policy_name(kind)) ==
                kind);
    } catch (const std::invalid_argument& e) {
        FUZZ_CHECK(names.count(lower(s)) == 0);
        // what() is a C string: the name up to its first NUL.
        const std::string name = s.substr(0, s.find('\0'));
        FUZZ_CHECK(std::string(e.what()).find(name) != std::string::npos);
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    unsetenv("FAISS_CCD_TOPOLOGY");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string s(reinterpret_cast<const char*>(data), size);

    const Outcome spec = parse([&] {
        const Topology t = Topology::from_spec(s);
        check_invariants(t);
        check_respecs(t);
        return t;
    });
    if (!spec.ok) {
        FUZZ_CHECK(spec.error.rfind("bad topology spec \"", 0) == 0);
    }

    const Outcome str = parse([&] {
        return Topology::from_string(s);
    });
    if (is_auto(s)) {
        FUZZ_CHECK(str.ok);
    } else {
        FUZZ_CHECK(str.ok == spec.ok && str.shape == spec.shape);
    }

    // The environment variable: a C string, so up to the first NUL.
    const std::string env = s.substr(0, s.find('\0'));
    if (!is_auto(env)) {
        setenv("FAISS_CCD_TOPOLOGY", env.c_str(), 1);
        const Outcome via_env = parse([] {
            return Topology::from_string("auto");
        });
        unsetenv("FAISS_CCD_TOPOLOGY");
        const Outcome direct = parse([&] {
            return Topology::from_spec(env);
        });
        FUZZ_CHECK(via_env.ok == direct.ok && via_env.shape == direct.shape);
        FUZZ_CHECK(
                via_env.ok ||
                via_env.error == "FAISS_CCD_TOPOLOGY: " + direct.error);
    }

    check_policy(s);
    return 0;
}
