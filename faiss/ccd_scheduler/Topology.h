/**
 * Topology: the workers of a pool, the CCD each belongs to, and the CPU each
 * is pinned to.
 *
 * A CCD is a set of cores sharing one L3 cache. `detect()` asks hwloc; a spec
 * string emulates any shape on any machine, for tests and benchmarks.
 *
 * Workers are numbered contiguously CCD by CCD: CCD c owns workers
 * [first_worker(c), first_worker(c) + ccd_size(c)). A topology is an
 * immutable value; copying it is cheap enough to do at pool construction.
 */

#pragma once

#include <string>
#include <vector>

namespace faiss {
namespace ccd {

class Topology {
   public:
    /// Source: where the shape came from.
    enum class Source {
        hwloc_l3,      ///< one CCD per L3 domain, from hwloc
        hwloc_package, ///< no L3 info: one CCD per package, from hwloc
        flat,          ///< no usable hwloc info: one CCD with every CPU
        spec,          ///< from a spec string (API or FAISS_CCD_TOPOLOGY)
    };

    /// detect: one CCD per L3 domain (hwloc); falls back to one CCD per
    /// package, then to one CCD holding every CPU the process may run on, and
    /// says which in note(). Never throws for lack of topology information.
    static Topology detect();

    /// from_spec: "NxM" (N CCDs of M workers, e.g. "4x2") or explicit CPU
    /// lists, one group per CCD separated by ';' ("0-3;4-7", "0,2;1,3").
    /// Worker i of an "NxM" spec is pinned to CPU i when that CPU exists;
    /// workers on CPUs the machine does not have are not pinned.
    /// Throws std::invalid_argument whose message names the bad token.
    static Topology from_spec(const std::string& spec);

    /// from_string: a spec -> from_spec(); "" or "auto" -> the spec in the
    /// FAISS_CCD_TOPOLOGY environment variable when it is set (and not
    /// itself "auto"), else detect(). The one place the variable is read.
    static Topology from_string(const std::string& spec_or_auto);

    int num_ccds() const {
        return int(first_worker_.size()) - 1;
    }
    int num_workers() const {
        return int(ccd_of_.size());
    }
    int ccd_of(int worker) const {
        return ccd_of_[worker];
    }
    /// cpu_of: the CPU worker `worker` is pinned to, or -1 (not pinned).
    int cpu_of(int worker) const {
        return cpu_of_[worker];
    }
    int first_worker(int ccd) const {
        return first_worker_[ccd];
    }
    int ccd_size(int ccd) const {
        return first_worker_[ccd + 1] - first_worker_[ccd];
    }
    Source source() const {
        return source_;
    }
    /// note: one line on a fallback or on unpinned workers; empty otherwise.
    const std::string& note() const {
        return note_;
    }

    /// describe: one readable line, e.g.
    /// "2 CCDs x 1 worker (hwloc L3): ccd0=[cpu0] ccd1=[cpu1]".
    std::string describe() const;

    /// from_groups: the building block of the factories above: one CPU list
    /// per CCD (-1 = not pinned). Throws std::invalid_argument on an empty
    /// topology, an empty group, a CPU below -1 or a CPU given twice.
    static Topology from_groups(
            const std::vector<std::vector<int>>& cpus_per_ccd,
            Source source,
            std::string note = "");

   private:
    Topology() = default;

    std::vector<int> ccd_of_;       ///< per worker
    std::vector<int> cpu_of_;       ///< per worker, -1 = not pinned
    std::vector<int> first_worker_; ///< per CCD, plus one past the end
    Source source_ = Source::flat;
    std::string note_;
};

/// source_name: "hwloc L3", "hwloc package", "flat", "spec".
const char* source_name(Topology::Source source);

} // namespace ccd
} // namespace faiss
