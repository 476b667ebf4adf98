// openmp: explicit tasks of the compiler's OpenMP runtime (libgomp with
// GCC).
//
//   (a) throughput  one parallel region of submitters + workers threads:
//                   threads 0..T-1 are the submitters, each creating its
//                   tasks with `omp task` and then `omp taskwait`; the other
//                   threads go straight to the region's closing barrier,
//                   where they run queued tasks. So, like the pools, T
//                   submitters plus `workers` executors; the region's fork
//                   and join are inside the measured time.
//   (a) latency     not measured: an OpenMP task can only be created from
//                   inside a parallel region, by a thread of its team, so
//                   there is no outside submitter to time.
//   (b) tree        `omp task` per child and `omp taskwait` per inner node,
//                   the root task created in `omp single`.
// libgomp runs a task at once, in its creator, when more than 64 x team
// size tasks are queued; that cut-off is part of what is measured.

#include "contender.h"

#include <omp.h>

#include <stdexcept>

namespace bench {

namespace {

void omp_node(const Tree* tree, uint64_t key, int depth) {
    uint64_t kids[Tree::kMaxChildren];
    const int n = tree->visit(key, depth, kids);
    if (n == 0) {
        return;
    }
    for (int i = 0; i < n; i++) {
        const uint64_t kid = kids[i];
#pragma omp task firstprivate(tree, kid, depth)
        omp_node(tree, kid, depth + 1);
    }
#pragma omp taskwait
}

class OpenMPContender final : public Contender {
   public:
    explicit OpenMPContender(int workers) : workers_(workers) {
        omp_set_dynamic(0); // teams of exactly the size asked for
    }

    std::string name() const override {
        return "openmp";
    }

    std::string describe() const override {
        return "OpenMP tasks (" + std::to_string(_OPENMP) +
                "); (a) a parallel region of T submitters + " +
                std::to_string(workers_) +
                " threads, omp task + taskwait per submitter; no latency "
                "probe; (b) omp task per child, taskwait per node, " +
                std::to_string(workers_) + " threads";
    }

    double independent(int submitters, int64_t per_submitter) override {
        const int team = submitters + workers_;
        bool short_team = false;
        const int64_t start = now_ns();
#pragma omp parallel num_threads(team)
        {
            const int t = omp_get_thread_num();
            if (t == 0 && omp_get_num_threads() != team) {
                short_team = true;
            }
            if (t < submitters) {
                for (int64_t i = 0; i < per_submitter; i++) {
                    const uint64_t key = task_key(t, i);
#pragma omp task firstprivate(key)
                    tiny_task(key);
                }
#pragma omp taskwait
            }
        }
        const int64_t end = now_ns();
        if (short_team) {
            throw std::runtime_error("openmp: got a smaller team than asked");
        }
        return double(end - start) * 1e-9;
    }

    bool has_probe() const override {
        return false;
    }
    void submit_probe(Probe* /*probe*/) override {
        throw std::logic_error("openmp has no outside submitter");
    }

    void tree(const Tree& tree) override {
        const Tree* t = &tree;
#pragma omp parallel num_threads(workers_)
#pragma omp single
        {
#pragma omp task firstprivate(t)
            omp_node(t, t->root, 0);
        }
        // The region's closing barrier waits for every task.
    }

   private:
    int workers_;
};

} // namespace

std::unique_ptr<Contender> make_openmp_contender(int workers) {
    return std::make_unique<OpenMPContender>(workers);
}

} // namespace bench
