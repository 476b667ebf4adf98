#include "plan.h"

namespace bench {

Plan make_plan(bool quick, int reps) {
    Plan p;
    if (quick) {
        p.tasks_per_submitter = 20000;
        p.throughput_reps = 3;
        p.parked_samples = 100;
        p.spinning_samples = 1000;
        p.tree_targets = {1000000};
        p.tree_reps = {3};
    } else {
        p.tasks_per_submitter = 200000;
        p.throughput_reps = 5;
        p.parked_samples = 1000;
        p.spinning_samples = 5000;
        p.tree_targets = {1000000, 10000000};
        p.tree_reps = {5, 3};
    }
    if (reps > 0) {
        p.throughput_reps = reps;
        for (int& r : p.tree_reps) {
            r = reps;
        }
    }
    return p;
}

} // namespace bench
