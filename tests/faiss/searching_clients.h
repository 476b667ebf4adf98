/**
 * searching_clients.h: what the fault tests share: stock's answer for the
 * first queries (reference_search) and client threads that search until
 * stopped, counting the answers that differ from it.
 */

#pragma once

#include <faiss/Index.h>
#include <faiss/IndexIVF.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ivf_test_util.h"

namespace ivf_test {

struct Answer {
    std::vector<float> D;
    std::vector<idx_t> I;
};

inline Answer stock(const faiss::IndexIVF& ivf, idx_t n, idx_t k) {
    Answer a{std::vector<float>(n * k), std::vector<idx_t>(n * k)};
    reference_search(ivf, n, data().queries.data(), k, a.D.data(), a.I.data());
    return a;
}

/// SearchingClients: `count` threads searching the first n queries with
/// `index` until stop(), counting searches and answers unlike `ref`.
struct SearchingClients {
    std::atomic<bool> stopping{false};
    std::atomic<int> searches{0}, wrong{0};
    std::vector<std::thread> threads;

    SearchingClients(
            int count,
            const faiss::Index& index,
            const Answer& ref,
            idx_t n,
            idx_t k) {
        for (int c = 0; c < count; c++) {
            threads.emplace_back([this, &index, &ref, n, k] {
                std::vector<float> D(n * k);
                std::vector<idx_t> I(n * k);
                while (!stopping.load()) {
                    index.search(
                            n,
                            data().queries.data(),
                            k,
                            D.data(),
                            I.data());
                    wrong += D != ref.D || I != ref.I;
                    searches++;
                }
            });
        }
    }
    void stop() {
        stopping = true;
        for (auto& t : threads) {
            t.join();
        }
        threads.clear();
    }
    ~SearchingClients() {
        stop();
    }
};

} // namespace ivf_test
