/**
 * Tests for Topology: spec parsing, detection through hwloc, the environment
 * override and describe().
 */

#include <faiss/ccd_scheduler/Topology.h>

#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using faiss::ccd::Topology;

namespace {

/// machine_cpus: the CPU count a spec pins against, computed as
/// Topology.cpp does.
int machine_cpus() {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? int(n) : 1;
}

/// expected_cpu: the CPU a spec CPU `cpu` is pinned to on this machine.
int expected_cpu(int cpu) {
    return cpu < machine_cpus() ? cpu : -1;
}

/// check_shape: the CCD/worker arrays agree with `sizes`.
void check_shape(const Topology& t, const std::vector<int>& sizes) {
    ASSERT_EQ(t.num_ccds(), int(sizes.size()));
    int w = 0;
    for (int c = 0; c < t.num_ccds(); c++) {
        EXPECT_EQ(t.first_worker(c), w) << "ccd " << c;
        EXPECT_EQ(t.ccd_size(c), sizes[c]) << "ccd " << c;
        for (int i = 0; i < sizes[c]; i++, w++) {
            EXPECT_EQ(t.ccd_of(w), c) << "worker " << w;
        }
    }
    EXPECT_EQ(t.num_workers(), w);
}

/// check_nxm: an "NxM" spec gives N CCDs of M workers, worker i on CPU i
/// where the machine has it.
void check_nxm(const std::string& spec, int n, int m) {
    SCOPED_TRACE(spec);
    Topology t = Topology::from_spec(spec);
    EXPECT_EQ(t.source(), Topology::Source::spec);
    check_shape(t, std::vector<int>(n, m));
    int unpinned = 0;
    for (int w = 0; w < t.num_workers(); w++) {
        EXPECT_EQ(t.cpu_of(w), expected_cpu(w)) << "worker " << w;
        unpinned += t.cpu_of(w) < 0;
    }
    if (unpinned > 0) {
        EXPECT_NE(t.note().find("float"), std::string::npos) << t.note();
        EXPECT_NE(
                t.note().find(std::to_string(machine_cpus()) + " CPU"),
                std::string::npos)
                << t.note();
    } else {
        EXPECT_EQ(t.note(), "");
    }
}

/// expect_bad: `spec` throws invalid_argument naming `token` in quotes.
void expect_bad(const std::string& spec, const std::string& token) {
    SCOPED_TRACE(spec);
    try {
        Topology::from_spec(spec);
        ADD_FAILURE() << "no exception for \"" << spec << "\"";
    } catch (const std::invalid_argument& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("\"" + token + "\""), std::string::npos) << what;
        EXPECT_NE(what.find("\"" + spec + "\""), std::string::npos) << what;
    }
}

/// affinity: the CPUs sched_getaffinity() allows this thread.
std::set<int> affinity() {
    std::set<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &set)) {
                cpus.insert(c);
            }
        }
    }
    return cpus;
}

/// hwloc_l3_count: L3 caches hwloc reports, 0 when it cannot load.
int hwloc_l3_count() {
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) {
        return 0;
    }
    int n = 0;
    if (hwloc_topology_load(topo) == 0) {
        n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_L3CACHE);
    }
    hwloc_topology_destroy(topo);
    return n;
}

/// EnvGuard: sets or unsets FAISS_CCD_TOPOLOGY, restores it on exit.
class EnvGuard {
   public:
    explicit EnvGuard(const char* value) {
        const char* old = std::getenv(kName);
        had_ = old != nullptr;
        if (had_) {
            old_ = old;
        }
        if (value) {
            setenv(kName, value, 1);
        } else {
            unsetenv(kName);
        }
    }
    ~EnvGuard() {
        if (had_) {
            setenv(kName, old_.c_str(), 1);
        } else {
            unsetenv(kName);
        }
    }

   private:
    static constexpr const char* kName = "FAISS_CCD_TOPOLOGY";
    bool had_ = false;
    std::string old_;
};

} // namespace

TEST(TopologySpec, NxM) {
    check_nxm("1x1", 1, 1);
    check_nxm("4x2", 4, 2);
    check_nxm("12x8", 12, 8);
    check_nxm(" 2x3 ", 2, 3);
    check_nxm("\t3X1\n", 3, 1);
}

TEST(TopologySpec, NxMLargestAccepted) {
    Topology t = Topology::from_spec("1x4096");
    EXPECT_EQ(t.num_workers(), 4096);
    EXPECT_EQ(t.cpu_of(4095), expected_cpu(4095));
    // Each dimension within bounds, the product not: refused before any
    // of the 16.7 million workers exists.
    expect_bad("4096x4096", "4096x4096");
    expect_bad("64x65", "64x65");
}

TEST(TopologySpec, CpuLists) {
    {
        Topology t = Topology::from_spec("0-3;4-7");
        EXPECT_EQ(t.source(), Topology::Source::spec);
        check_shape(t, {4, 4});
        for (int w = 0; w < 8; w++) {
            EXPECT_EQ(t.cpu_of(w), expected_cpu(w));
        }
    }
    {
        Topology t = Topology::from_spec("0,2;1,3");
        check_shape(t, {2, 2});
        EXPECT_EQ(t.cpu_of(0), expected_cpu(0));
        EXPECT_EQ(t.cpu_of(1), expected_cpu(2));
        EXPECT_EQ(t.cpu_of(2), expected_cpu(1));
        EXPECT_EQ(t.cpu_of(3), expected_cpu(3));
    }
    {
        Topology t = Topology::from_spec(" 0 - 1 , 5 ; 2 ");
        check_shape(t, {3, 1});
        EXPECT_EQ(t.cpu_of(0), expected_cpu(0));
        EXPECT_EQ(t.cpu_of(1), expected_cpu(1));
        EXPECT_EQ(t.cpu_of(2), expected_cpu(5));
        EXPECT_EQ(t.cpu_of(3), expected_cpu(2));
    }
}

TEST(TopologySpec, CpuBeyondMachineFloats) {
    int n = machine_cpus();
    std::string spec = "0;" + std::to_string(n);
    Topology t = Topology::from_spec(spec);
    check_shape(t, {1, 1});
    EXPECT_EQ(t.cpu_of(0), 0);
    EXPECT_EQ(t.cpu_of(1), -1);
    EXPECT_NE(t.note().find("1 of 2 workers pinned"), std::string::npos)
            << t.note();
}

TEST(TopologySpec, BadSpecsNameTheToken) {
    expect_bad("0x2", "0");
    expect_bad("2x0", "0");
    expect_bad("4x", "4x");
    expect_bad("x2", "x2");
    expect_bad("4x2x1", "4x2x1");
    expect_bad("-1x2", "-1");
    expect_bad("4x2junk", "2junk");
    expect_bad("4097x1", "4097");
    expect_bad("1x99999999999", "99999999999");
    expect_bad("0-3;x", "x");
    expect_bad("0-3;;4", "");
    expect_bad("0-3;", "");
    expect_bad("3-1", "3-1");
    expect_bad("0-3;2", "2");
    expect_bad("0,1,0", "0");
    expect_bad("0,,1", "");
    expect_bad("a-3", "a-3");
    expect_bad("1-", "1-");
    expect_bad("0;1.5", "1.5");
}

TEST(TopologySpec, EmptySpecThrows) {
    EXPECT_THROW(Topology::from_spec(""), std::invalid_argument);
    EXPECT_THROW(Topology::from_spec("   "), std::invalid_argument);
}

TEST(TopologyGroups, Validates) {
    using S = Topology::Source;
    EXPECT_THROW(Topology::from_groups({}, S::spec), std::invalid_argument);
    EXPECT_THROW(
            Topology::from_groups({{0}, {}}, S::spec),
            std::invalid_argument);
    EXPECT_THROW(Topology::from_groups({{-2}}, S::spec), std::invalid_argument);
    EXPECT_THROW(
            Topology::from_groups({{0, 1}, {1}}, S::spec),
            std::invalid_argument);

    Topology t = Topology::from_groups({{5, -1}, {-1}}, S::flat, "why");
    check_shape(t, {2, 1});
    EXPECT_EQ(t.cpu_of(0), 5);
    EXPECT_EQ(t.cpu_of(1), -1);
    EXPECT_EQ(t.cpu_of(2), -1);
    EXPECT_EQ(t.source(), S::flat);
    EXPECT_EQ(t.note(), "why");
}

TEST(TopologyDetect, WorkersOnAllowedDistinctCpus) {
    Topology t = Topology::detect();
    ASSERT_GE(t.num_ccds(), 1);
    std::set<int> allowed = affinity();
    std::set<int> used;
    for (int w = 0; w < t.num_workers(); w++) {
        int cpu = t.cpu_of(w);
        EXPECT_TRUE(allowed.count(cpu)) << "worker " << w << " cpu " << cpu;
        EXPECT_TRUE(used.insert(cpu).second) << "cpu " << cpu << " twice";
    }
    for (int c = 0; c < t.num_ccds(); c++) {
        EXPECT_GE(t.ccd_size(c), 1);
    }
    EXPECT_NE(t.source(), Topology::Source::spec);
}

TEST(TopologyDetect, OneCcdPerL3) {
    int n_l3 = hwloc_l3_count();
    if (n_l3 == 0) {
        GTEST_SKIP() << "hwloc reports no L3 cache on this machine";
    }
    Topology t = Topology::detect();
    EXPECT_EQ(t.source(), Topology::Source::hwloc_l3) << t.describe();
    // an L3 holding none of this process's CPUs gets no CCD
    EXPECT_LE(t.num_ccds(), n_l3);
}

TEST(TopologyString, AutoAndEmptyDetect) {
    for (const char* s : {"", "auto", " AUTO ", "Auto"}) {
        Topology t = Topology::from_string(s);
        EXPECT_NE(t.source(), Topology::Source::spec) << "\"" << s << "\"";
    }
    Topology t = Topology::from_string("3x2");
    EXPECT_EQ(t.source(), Topology::Source::spec);
    EXPECT_EQ(t.num_workers(), 6);
    EXPECT_THROW(Topology::from_string("autox"), std::invalid_argument);
}

TEST(TopologyEnv, HonoursVariable) {
    {
        EnvGuard env("4x2");
        Topology t = Topology::from_string("auto");
        EXPECT_EQ(t.source(), Topology::Source::spec);
        check_shape(t, {2, 2, 2, 2});
    }
    {
        EnvGuard env("auto");
        EXPECT_NE(
                Topology::from_string("auto").source(),
                Topology::Source::spec);
    }
    {
        EnvGuard env(nullptr);
        Topology t = Topology::from_string("auto");
        EXPECT_NE(t.source(), Topology::Source::spec);
        EXPECT_GE(t.num_ccds(), 1);
    }
    {
        EnvGuard env("4x2junk");
        try {
            Topology::from_string("auto");
            ADD_FAILURE() << "no exception";
        } catch (const std::invalid_argument& e) {
            std::string what = e.what();
            EXPECT_NE(what.find("FAISS_CCD_TOPOLOGY"), std::string::npos);
            EXPECT_NE(what.find("\"2junk\""), std::string::npos) << what;
        }
    }
}

TEST(TopologyDescribe, Readable) {
    using S = Topology::Source;
    std::string d = Topology::detect().describe();
    EXPECT_FALSE(d.empty());
    EXPECT_NE(d.find("CCD"), std::string::npos) << d;
    EXPECT_EQ(d.find('\n'), std::string::npos) << d;

    EXPECT_EQ(
            Topology::from_groups({{0}, {1}}, S::hwloc_l3).describe(),
            "2 CCDs x 1 worker (hwloc L3): ccd0=[cpu0] ccd1=[cpu1]");
    EXPECT_EQ(
            Topology::from_groups({{0, 1, 2, 3, 8}, {4, -1, -1}}, S::spec, "n")
                    .describe(),
            "2 CCDs, 8 workers (spec): ccd0=[cpu0-3,cpu8] "
            "ccd1=[cpu4,-x2] | n");
    EXPECT_EQ(
            Topology::from_groups({{-1}}, S::flat).describe(),
            "1 CCD x 1 worker (flat): ccd0=[-]");

    std::string big = Topology::from_spec("12x8").describe();
    EXPECT_NE(big.find("12 CCDs x 8 workers (spec)"), std::string::npos);
    EXPECT_NE(big.find("ccd11=["), std::string::npos) << big;
    EXPECT_LT(big.size(), 400u) << big;
}

TEST(TopologySourceName, Names) {
    using S = Topology::Source;
    EXPECT_STREQ(faiss::ccd::source_name(S::hwloc_l3), "hwloc L3");
    EXPECT_STREQ(faiss::ccd::source_name(S::hwloc_package), "hwloc package");
    EXPECT_STREQ(faiss::ccd::source_name(S::flat), "flat");
    EXPECT_STREQ(faiss::ccd::source_name(S::spec), "spec");
}
