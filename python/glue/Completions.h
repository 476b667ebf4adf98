/**
 * Completions: where asynchronous queries report that they are done, for
 * Python's concurrent.futures.Future. Pool workers push (many producers);
 * one Python dispatcher thread pops with next(), without the GIL.
 *
 * Every submitted ticket is counted as outstanding from begin() until its
 * completion is popped, so next() can tell "nothing yet" from "closed and
 * nothing will ever come": after close(), next() drains what is left and
 * then returns kClosed.
 *
 * Callbacks hold the State by shared_ptr, so a Completions object may be
 * destroyed (its Python object collected) with queries in flight.
 *
 * Thread contract: begin(), push() from any thread; next() from one thread
 * at a time; close() from any thread.
 */

#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

namespace faiss {
namespace ccd {
namespace python {

/// Completion: one finished ticket. `ticket` is kTimeout or kClosed
/// when next() has none to give.
struct Completion {
    static constexpr int64_t kTimeout = -1;
    static constexpr int64_t kClosed = -2;
    int64_t ticket = kTimeout;
    bool ok = true;
    std::string error; ///< the exception's message when !ok
};

class Completions {
   public:
    Completions();

    /// next: the next completion, waiting up to `timeout_s` seconds
    /// (< 0: without limit).
    Completion next(double timeout_s);
    /// close: no more tickets will begin; wakes next().
    void close();

    // ---- C++ side only (not wrapped)

    struct State {
        std::mutex mutex;
        std::condition_variable ready;
        std::deque<Completion> done; ///< guarded by mutex
        int64_t outstanding = 0;     ///< guarded by mutex
        bool closed = false;         ///< guarded by mutex

        void begin();
        /// cancel: undo a begin() whose ticket was never submitted.
        void cancel();
        void push(Completion c);
    };
    const std::shared_ptr<State>& state() const {
        return state_;
    }

   private:
    std::shared_ptr<State> state_;
};

} // namespace python
} // namespace ccd
} // namespace faiss
