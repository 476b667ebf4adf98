#include <faiss/ccd_scheduler/HotColdMapping.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace faiss {
namespace ccd {

namespace {

/// least_loaded: index of the smallest load, lowest index on ties.
int least_loaded(const std::vector<uint64_t>& loads) {
    return int(std::min_element(loads.begin(), loads.end()) - loads.begin());
}

/// hottest_first: item indices by decreasing traffic, equal traffic by
/// increasing index (deterministic). A stable LSD radix sort on 11-bit
/// digits of ~traffic, linear in the items, where a comparison sort was
/// most of a map build.
std::vector<uint32_t> hottest_first(const std::vector<uint64_t>& traffic) {
    const size_t n = traffic.size();
    std::vector<uint32_t> a(n), b(n);
    std::iota(a.begin(), a.end(), 0u);
    uint64_t spread = 0; // bits in which some ~traffic differs from another
    const uint64_t first = n ? ~traffic[0] : 0;
    for (uint64_t t : traffic) {
        spread |= ~t ^ first;
    }
    constexpr int kBits = 11;
    constexpr size_t kBuckets = size_t(1) << kBits;
    std::vector<size_t> count(kBuckets);
    for (int shift = 0; shift < 64 && (spread >> shift) != 0; shift += kBits) {
        std::fill(count.begin(), count.end(), 0);
        for (uint32_t i : a) {
            count[(~traffic[i] >> shift) & (kBuckets - 1)]++;
        }
        size_t sum = 0;
        for (size_t& c : count) {
            const size_t here = c;
            c = sum;
            sum += here;
        }
        for (uint32_t i : a) {
            b[count[(~traffic[i] >> shift) & (kBuckets - 1)]++] = i;
        }
        a.swap(b);
    }
    return a;
}

/// sweep: Algorithm 1, with an optional preference hook deciding the CCD of
/// each hot item given the least-loaded CCD.
template <class ChooseCcd>
std::vector<int>
sweep(const std::vector<uint64_t>& traffic, int num_ccds, ChooseCcd choose) {
    if (num_ccds <= 0) {
        throw std::invalid_argument("mapping: num_ccds must be > 0");
    }
    const size_t n = traffic.size();
    std::vector<int> ccd_of(n, -1);
    if (n == 0) {
        return ccd_of;
    }
    const std::vector<uint32_t> order = hottest_first(traffic);
    const long double total =
            std::accumulate(traffic.begin(), traffic.end(), (long double)0);
    const long double mu = total / num_ccds;
    std::vector<uint64_t> loads(num_ccds, 0);
    size_t lo = 0, hi = n; // remaining items: order[lo, hi)
    while (lo < hi) {
        const size_t hot = order[lo++];
        const int c = choose(hot, loads, mu);
        ccd_of[hot] = c;
        loads[c] += traffic[hot];
        if (lo < hi) {
            const size_t cold = order[hi - 1];
            // Pair the coldest item with the hot one when it fits in what
            // is left of mu on that CCD.
            if ((long double)loads[c] + traffic[cold] <= mu) {
                ccd_of[cold] = c;
                loads[c] += traffic[cold];
                hi--;
            }
        }
    }
    return ccd_of;
}

} // namespace

std::vector<int> map_hot_cold(
        const std::vector<uint64_t>& traffic,
        int num_ccds) {
    return sweep(
            traffic,
            num_ccds,
            [](size_t, const std::vector<uint64_t>& loads, long double) {
                return least_loaded(loads);
            });
}

std::vector<int> map_migration_aware(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& current,
        int num_ccds,
        double slack) {
    if (current.size() != traffic.size()) {
        throw std::invalid_argument(
                "map_migration_aware: current and traffic differ in size");
    }
    return sweep(
            traffic,
            num_ccds,
            [&](size_t item,
                const std::vector<uint64_t>& loads,
                long double mu) {
                const int best = least_loaded(loads);
                const int home = current[item];
                if (home >= 0 && home < num_ccds && home != best &&
                    (long double)loads[home] <= loads[best] + slack * mu) {
                    return home;
                }
                return best;
            });
}

std::vector<uint64_t> ccd_loads(
        const std::vector<uint64_t>& traffic,
        const std::vector<int>& ccd_of_item,
        int num_ccds) {
    std::vector<uint64_t> loads(num_ccds, 0);
    for (size_t i = 0; i < traffic.size(); i++) {
        loads.at(ccd_of_item.at(i)) += traffic[i];
    }
    return loads;
}

double imbalance(const std::vector<uint64_t>& loads) {
    if (loads.empty()) {
        return 1.0;
    }
    long double total = 0;
    uint64_t max_load = 0;
    for (uint64_t l : loads) {
        total += l;
        max_load = std::max(max_load, l);
    }
    if (total == 0) {
        return 1.0;
    }
    return double(max_load / (total / loads.size()));
}

} // namespace ccd
} // namespace faiss
