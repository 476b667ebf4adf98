/**
 * ivf_report_util.h: small helpers shared by ivf_report.cpp and
 * ivf_targets.cpp (internal to bench_ivf).
 */

#pragma once

#include "ivf_report.h"

#include <cstdio>
#include <string>

namespace bench {
namespace ivf {
namespace report_util {

inline const char* const kStock[] = {"stock-pm0", "stock-pm1", "stock-pm0-t1"};
inline const char* const kPools[] = {"pool-ccd", "pool-flat"};

/// Best: the better stock mode's value of one metric in one scenario.
struct Best {
    double value = 0;
    std::string who;
};

inline Best best_stock(
        const DatasetResults& r,
        const std::string& scenario,
        double ScenarioRow::*metric,
        bool higher_is_better) {
    Best b;
    for (const char* s : kStock) {
        const ScenarioRow* row = r.row(scenario, s);
        if (row == nullptr) {
            continue;
        }
        const double v = row->*metric;
        if (b.who.empty() || (higher_is_better ? v > b.value : v < b.value)) {
            b.value = v;
            b.who = s;
        }
    }
    return b;
}

inline double ratio(double a, double b) {
    return b > 0 ? a / b : 0;
}

} // namespace report_util
} // namespace ivf
} // namespace bench
