// pool-ccd and pool-flat: faiss::ccd::Pool with the ccd or flat_steal policy,
// on the benchmark's topology.
//
//   (a) throughput  one TaskGroup per submitting thread; task i of submitter
//                   t carries MappingId (table t+1, list i mod 1024), so
//                   pool-ccd's dispatcher places tasks by id as IVF scans
//                   would be (pool-flat ignores ids: round-robin).
//   (a) latency     Pool::submit of one task, ids (table 0, list 0, 1, ...).
//   (b) tree        a TaskGroup per inner node, children submitted with
//                   kLocalMappingId (they stay in the parent worker's deque
//                   and are stolen from there); the parent waits in the
//                   group, running other tasks meanwhile.

#include "contender.h"

#include <faiss/ccd_scheduler/Pool.h>
#include <faiss/ccd_scheduler/TaskGroup.h>

namespace bench {

namespace {

using faiss::ccd::kLocalMappingId;
using faiss::ccd::make_mapping_id;
using faiss::ccd::Pool;
using faiss::ccd::TaskGroup;

constexpr uint32_t kListsPerTable = 1024;

void pool_node(Pool& pool, const Tree& tree, uint64_t key, int depth) {
    uint64_t kids[Tree::kMaxChildren];
    const int n = tree.visit(key, depth, kids);
    if (n == 0) {
        return;
    }
    TaskGroup group(pool);
    for (int i = 0; i < n; i++) {
        const uint64_t kid = kids[i];
        group.submit(kLocalMappingId, [&pool, &tree, kid, depth] {
            pool_node(pool, tree, kid, depth + 1);
        });
    }
    group.wait();
}

class PoolContender final : public Contender {
   public:
    PoolContender(
            const faiss::ccd::Topology& topology,
            faiss::ccd::PolicyKind policy,
            bool pin_workers)
            : pool_(topology, policy, options(pin_workers)),
              pinned_(pin_workers) {}

    std::string name() const override {
        return std::string("pool-") + faiss::ccd::policy_name(pool_.policy()) +
                (pinned_ ? "" : "-unpinned");
    }

    std::string describe() const override {
        return "faiss::ccd::Pool, policy " +
                std::string(faiss::ccd::policy_name(pool_.policy())) + ", " +
                std::to_string(pool_.num_workers()) +
                (pinned_ ? " pinned" : " unpinned") +
                " workers; (a) TaskGroup per submitter, ids (t+1, i%1024); "
                "latency Pool::submit; (b) TaskGroup per node, "
                "kLocalMappingId children, nested wait in workers";
    }

    double independent(int submitters, int64_t per_submitter) override {
        return run_submitters(submitters, [&](int t) {
            TaskGroup group(pool_);
            for (int64_t i = 0; i < per_submitter; i++) {
                const uint64_t key = task_key(t, i);
                group.submit(
                        make_mapping_id(
                                uint32_t(t + 1),
                                uint32_t(i % kListsPerTable)),
                        [key] {
                            tiny_task(key);
                        });
            }
            group.wait();
        });
    }

    void submit_probe(Probe* probe) override {
        pool_.submit(make_mapping_id(0, next_list_++), [probe] {
            probe->start();
        });
    }

    void tree(const Tree& tree) override {
        TaskGroup group(pool_);
        group.submit(kLocalMappingId, [this, &tree] {
            pool_node(pool_, tree, tree.root, 0);
        });
        group.wait();
    }

    bool pool_stats(faiss::ccd::PoolStats* out) const override {
        *out = pool_.stats();
        return true;
    }

   private:
    static faiss::ccd::PoolOptions options(bool pin_workers) {
        faiss::ccd::PoolOptions o;
        o.pin_workers = pin_workers;
        return o;
    }

    Pool pool_;
    bool pinned_;
    uint32_t next_list_ = 0;
};

} // namespace

std::unique_ptr<Contender> make_pool_contender(
        const faiss::ccd::Topology& topology,
        faiss::ccd::PolicyKind policy,
        bool pin_workers) {
    return std::make_unique<PoolContender>(topology, policy, pin_workers);
}

} // namespace bench
