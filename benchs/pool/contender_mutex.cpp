// mutex-queue: the textbook pool of central_queue.h, one worker per
// hardware thread.
//
//   (a) throughput  each submitter submits its tasks and waits on its own
//                   Latch.
//   (a) latency     MutexQueue::submit of one task.
//   (b) tree        no nested waits (a worker blocked in a wait would hold
//                   one of only N threads; with a central queue that
//                   deadlocks): each node submits its children and counts
//                   itself down on one Latch for the whole tree, after
//                   adding its children. Same tasks, same work, but no
//                   join per node, which favours this contender a little.

#include "central_queue.h"
#include "contender.h"

namespace bench {

namespace {

void queue_node(
        MutexQueue& queue,
        Latch& outstanding,
        const Tree& tree,
        uint64_t key,
        int depth) {
    uint64_t kids[Tree::kMaxChildren];
    const int n = tree.visit(key, depth, kids);
    outstanding.add(n);
    for (int i = 0; i < n; i++) {
        const uint64_t kid = kids[i];
        queue.submit([&queue, &outstanding, &tree, kid, depth] {
            queue_node(queue, outstanding, tree, kid, depth + 1);
        });
    }
    outstanding.count_down();
}

class MutexQueueContender final : public Contender {
   public:
    explicit MutexQueueContender(int workers)
            : workers_(workers), queue_(workers) {}

    std::string name() const override {
        return "mutex-queue";
    }

    std::string describe() const override {
        return "std::deque<std::function> + std::mutex + condvar, " +
                std::to_string(workers_) +
                " workers; (a) a Latch per submitter; (b) children submitted "
                "to the queue, one outstanding-node Latch for the tree "
                "(no nested waits)";
    }

    double independent(int submitters, int64_t per_submitter) override {
        return run_submitters(submitters, [&](int t) {
            Latch done(per_submitter);
            for (int64_t i = 0; i < per_submitter; i++) {
                const uint64_t key = task_key(t, i);
                queue_.submit([key, &done] {
                    tiny_task(key);
                    done.count_down();
                });
            }
            done.wait();
        });
    }

    void submit_probe(Probe* probe) override {
        queue_.submit([probe] {
            probe->start();
        });
    }

    void tree(const Tree& tree) override {
        Latch outstanding(1);
        queue_.submit([this, &outstanding, &tree] {
            queue_node(queue_, outstanding, tree, tree.root, 0);
        });
        outstanding.wait();
    }

   private:
    int workers_;
    MutexQueue queue_;
};

} // namespace

std::unique_ptr<Contender> make_mutex_queue_contender(int workers) {
    return std::make_unique<MutexQueueContender>(workers);
}

} // namespace bench
