// tbb: oneTBB with its default thread count.
//
//   (a) throughput  a tbb::task_group per submitting thread. Each outside
//                   thread gets its own implicit arena and runs its own
//                   tasks while it waits, helped by TBB's worker threads
//                   (hardware threads - 1 of them in all): that is how TBB
//                   is meant to be used from outside threads.
//   (a) latency     tbb::task_arena::enqueue into a default arena (as
//                   many slots as hardware threads, one of them reserved
//                   for an outside thread that never joins): TBB's own
//                   worker threads run the probe.
//   (b) tree        a tbb::task_group per inner node; the calling thread
//                   runs the root group (with TBB's workers, `workers`
//                   threads in all).

#include "contender.h"

#include <tbb/task_arena.h>
#include <tbb/task_group.h>
#include <tbb/version.h>

namespace bench {

namespace {

void tbb_node(const Tree& tree, uint64_t key, int depth) {
    uint64_t kids[Tree::kMaxChildren];
    const int n = tree.visit(key, depth, kids);
    if (n == 0) {
        return;
    }
    tbb::task_group group;
    for (int i = 0; i < n; i++) {
        const uint64_t kid = kids[i];
        group.run([&tree, kid, depth] {
            tbb_node(tree, kid, depth + 1);
        });
    }
    group.wait();
}

class TbbContender final : public Contender {
   public:
    explicit TbbContender(int workers)
            : workers_(workers), probe_arena_(workers) {}

    std::string name() const override {
        return "tbb";
    }

    std::string describe() const override {
        return std::string("oneTBB ") + TBB_VERSION_STRING +
                ", default threads; (a) tbb::task_group per submitter; "
                "latency task_arena(" +
                std::to_string(workers_) +
                ")::enqueue; (b) tbb::task_group per node";
    }

    double independent(int submitters, int64_t per_submitter) override {
        return run_submitters(submitters, [&](int t) {
            tbb::task_group group;
            for (int64_t i = 0; i < per_submitter; i++) {
                const uint64_t key = task_key(t, i);
                group.run([key] {
                    tiny_task(key);
                });
            }
            group.wait();
        });
    }

    void submit_probe(Probe* probe) override {
        probe_arena_.enqueue([probe] {
            probe->start();
        });
    }

    void tree(const Tree& tree) override {
        tbb::task_group group;
        group.run([&tree] {
            tbb_node(tree, tree.root, 0);
        });
        group.wait();
    }

   private:
    int workers_;
    tbb::task_arena probe_arena_;
};

} // namespace

std::unique_ptr<Contender> make_tbb_contender(int workers) {
    return std::make_unique<TbbContender>(workers);
}

} // namespace bench
