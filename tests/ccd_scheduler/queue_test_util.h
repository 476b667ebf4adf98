/**
 * queue_test_util: what the queue stress tests share.
 *
 *  - NodeArray: n distinct TaskNodes numbered 0..n-1, and the way back from
 *    a pointer a queue returned to its number (by address, without
 *    dereferencing it, so a garbage pointer is reported, not followed).
 *  - Sink and exactly_once(): the final check of every stress test. Each
 *    thread collects what it popped or stole in its own Sink; the sinks are
 *    merged after the join and every node must appear exactly once. Nodes
 *    carry a payload the pusher writes and the popper reads, so that
 *    ThreadSanitizer checks the queue's release/acquire pairs too.
 *  - SpinBarrier: starts all threads of a stress test together, so that the
 *    first thread does not finish before the last one has started.
 *  - Backoff: the idle-spin of a test thread. The test machines may have two
 *    cores and a dozen spinning threads; yielding keeps the thread that has
 *    the work running.
 */

#pragma once

#include <faiss/ccd_scheduler/Task.h>
#include <faiss/ccd_scheduler/detail/Futex.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <sstream>
#include <thread>
#include <vector>

namespace ccd_test {

/// IndexedNode: a TaskNode carrying its number. The queues never run it.
struct IndexedNode final : faiss::ccd::TaskNode {
    int64_t index;
    /// payload: plain (non-atomic) data the pushing thread writes just
    /// before the push and the popping thread reads just after the pop, as
    /// with a real task; ThreadSanitizer reports a race on it if the queue
    /// fails to order the two.
    int64_t payload = 0;
    explicit IndexedNode(int64_t i)
            : faiss::ccd::TaskNode(faiss::ccd::kLocalMappingId, nullptr),
              index(i) {}
    void run() override {}
};

/// NodeArray: nodes 0..n-1 in one allocation.
class NodeArray {
   public:
    explicit NodeArray(int64_t n) {
        nodes_.reserve(size_t(n));
        for (int64_t i = 0; i < n; i++) {
            nodes_.emplace_back(i);
        }
    }
    NodeArray(const NodeArray&) = delete;
    NodeArray& operator=(const NodeArray&) = delete;

    int64_t size() const {
        return int64_t(nodes_.size());
    }
    faiss::ccd::TaskNode* at(int64_t i) {
        return &nodes_[size_t(i)];
    }

    /// fill: node i with its payload written, ready to push. Called by the
    /// thread that pushes it.
    faiss::ccd::TaskNode* fill(int64_t i) {
        nodes_[size_t(i)].payload = ~i;
        return &nodes_[size_t(i)];
    }

    /// payload_ok: whether `p`, just popped, is a node of ours whose
    /// payload the popping thread sees as written. Called by that thread.
    bool payload_ok(const faiss::ccd::TaskNode* p) const {
        const int64_t i = index_of(p);
        return i >= 0 && nodes_[size_t(i)].payload == ~i;
    }

    /// index_of: the number of node `p`, or -1 when `p` is not one of ours.
    int64_t index_of(const faiss::ccd::TaskNode* p) const {
        if (nodes_.empty()) {
            return -1;
        }
        const uintptr_t base = reinterpret_cast<uintptr_t>(
                static_cast<const faiss::ccd::TaskNode*>(&nodes_[0]));
        const uintptr_t a = reinterpret_cast<uintptr_t>(p);
        if (a < base || (a - base) % sizeof(IndexedNode) != 0) {
            return -1;
        }
        const uintptr_t i = (a - base) / sizeof(IndexedNode);
        return i < nodes_.size() ? int64_t(i) : -1;
    }

   private:
    std::vector<IndexedNode> nodes_;
};

/// Sink: what one thread popped or stole, in its own vector (no sharing
/// while the test runs), each node's payload checked as it arrives.
struct Sink {
    std::vector<const faiss::ccd::TaskNode*> got;
    int64_t bad_payload = 0;

    void take(const NodeArray& nodes, const faiss::ccd::TaskNode* p) {
        got.push_back(p);
        bad_payload += !nodes.payload_ok(p);
    }
};

/// exactly_once: every node of `nodes` appears exactly once in the union of
/// the sinks, nothing else does, and every payload was seen as written.
inline ::testing::AssertionResult exactly_once(
        const NodeArray& nodes,
        const std::vector<Sink>& sinks) {
    std::vector<int> count(size_t(nodes.size()), 0);
    int64_t foreign = 0, bad_payload = 0;
    for (const Sink& sink : sinks) {
        bad_payload += sink.bad_payload;
        for (const faiss::ccd::TaskNode* p : sink.got) {
            const int64_t i = nodes.index_of(p);
            if (i < 0) {
                foreign++;
            } else {
                count[size_t(i)]++;
            }
        }
    }
    int64_t missing = 0, duplicated = 0;
    std::ostringstream examples;
    int shown = 0;
    for (size_t i = 0; i < count.size(); i++) {
        if (count[i] == 1) {
            continue;
        }
        (count[i] == 0 ? missing : duplicated)++;
        if (shown < 8) {
            examples << " node " << i << " x" << count[i] << ";";
            shown++;
        }
    }
    if (missing == 0 && duplicated == 0 && foreign == 0 && bad_payload == 0) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
            << "of " << nodes.size() << " nodes: " << missing << " missing, "
            << duplicated << " more than once, " << foreign
            << " returned pointers that are not nodes (nullptr included), "
            << bad_payload << " popped with a stale payload;" << examples.str();
}

/// SpinBarrier: a one-shot barrier for `n` threads.
class SpinBarrier {
   public:
    explicit SpinBarrier(int n) : n_(n) {}
    void arrive_and_wait() {
        // acq_rel / acquire: nothing is published through the barrier; the
        // orders only keep the test's reasoning simple.
        arrived_.fetch_add(1, std::memory_order_acq_rel);
        while (arrived_.load(std::memory_order_acquire) < n_) {
            std::this_thread::yield();
        }
    }

   private:
    const int n_;
    std::atomic<int> arrived_{0};
};

/// Backoff: call idle() each time a thread finds nothing to do.
class Backoff {
   public:
    void idle() {
        if (++spins_ % 16 == 0) {
            std::this_thread::yield();
        } else {
            faiss::ccd::detail::cpu_relax();
        }
    }

   private:
    uint32_t spins_ = 0;
};

} // namespace ccd_test
