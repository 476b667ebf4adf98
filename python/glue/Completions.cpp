#include "Completions.h"

#include <chrono>
#include <stdexcept>

namespace faiss {
namespace ccd {
namespace python {

Completions::Completions() : state_(std::make_shared<State>()) {}

void Completions::State::begin() {
    std::lock_guard<std::mutex> lock(mutex);
    if (closed) {
        throw std::runtime_error("submit: the tables have been closed");
    }
    outstanding++;
}

void Completions::State::cancel() {
    {
        std::lock_guard<std::mutex> lock(mutex);
        outstanding--;
    }
    ready.notify_all(); // a closed, now empty state has news for next()
}

void Completions::State::push(Completion c) {
    {
        std::lock_guard<std::mutex> lock(mutex);
        done.push_back(std::move(c));
    }
    ready.notify_one();
}

Completion Completions::next(double timeout_s) {
    State& s = *state_;
    std::unique_lock<std::mutex> lock(s.mutex);
    auto has_news = [&] {
        return !s.done.empty() || (s.closed && s.outstanding == 0);
    };
    if (timeout_s < 0) {
        s.ready.wait(lock, has_news);
    } else if (!s.ready.wait_for(
                       lock,
                       std::chrono::duration<double>(timeout_s),
                       has_news)) {
        return Completion{};
    }
    if (s.done.empty()) {
        Completion closed;
        closed.ticket = Completion::kClosed;
        return closed;
    }
    Completion c = std::move(s.done.front());
    s.done.pop_front();
    s.outstanding--;
    return c;
}

void Completions::close() {
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->closed = true;
    }
    state_->ready.notify_all();
}

} // namespace python
} // namespace ccd
} // namespace faiss
