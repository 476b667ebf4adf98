/**
 * bench_ivf: IVF search through the pool (IndexIVFCCD) against stock FAISS
 * OpenMP, side by side in one process, on the same index and queries.
 *
 *   bench_ivf [--out DIR] [--quick] [--dataset synthetic|fmnist|both]
 *             [--nb N] [--rounds N] [--topology SPEC]
 *
 * Data sets (ivf_data.h): synthetic clustered blobs of uneven sizes with
 * Zipf(1.1)-skewed queries (500K x 128, IVF1024,Flat, nprobe 32) and
 * Fashion-MNIST (60K x 784, IVF256,Flat, nprobe 8, recall@10 against exact
 * search); k = 100. Built indexes are cached under the build directory.
 *
 * Contenders (ivf_contenders.h): stock-pm0, stock-pm1, pool-flat, pool-ccd,
 * and two diagnostics: pool-ccd-nosplit (no list splitting; single client
 * and clients) and pool-ccd-spin (workers that do not park between one
 * client's queries; single client).
 *
 * Scenarios (ivf_scenarios.h): one client sending single queries; 8 client
 * threads sending single queries in a closed loop; one batch. Each is run
 * for `rounds` rounds; inside a round the contenders take turns block by
 * block (8 blocks of queries for single, 4 for clients, the whole batch),
 * starting with another one each block, backwards in odd rounds, so that
 * noise from other work hits them alike; the tables give the median of
 * the rounds.
 *
 * Writes DIR/ivf_<dataset>.json (tables, plots, targets) and prints the
 * tables and targets; scripts/report.sh renders its markdown and plots.
 * Exit status 0
 * (also when targets are missed or answers differ: both are reported),
 * 1 when a data set could not be run, 2 on bad arguments.
 */

#include "common/run_info.h"
#include "ivf_contenders.h"
#include "ivf_data.h"
#include "ivf_options.h"
#include "ivf_report.h"
#include "ivf_scan_cost.h"
#include "ivf_scenarios.h"

#include <faiss/ccd_scheduler/Runtime.h>
#include <faiss/ccd_scheduler/Topology.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#ifndef BENCH_BINARY_DIR
#define BENCH_BINARY_DIR "build"
#endif

namespace bench {
namespace ivf {
namespace {

using faiss::ccd::PolicyKind;
using faiss::ccd::Runtime;
using faiss::ccd::RuntimeOptions;
using faiss::ccd::Topology;

/// kSpinRounds: idle polls before parking in the pool-ccd-spin diagnostic
/// (~0.5 us each: tens of milliseconds, past any gap between two queries of
/// one client; the default is 64).
constexpr int kSpinRounds = 65536;

/// settle: lets the previous contender's idle threads (OpenMP's spinning
/// team, the pool's spinning workers; pool-ccd-spin's spin for some 30 ms)
/// go to sleep before the next one runs.
void settle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

/// Bench: every scenario of one data set for every contender.
class Bench {
   public:
    Bench(const Settings& o,
          const Plan& plan,
          Dataset& ds,
          const std::vector<std::shared_ptr<Runtime>>& pools,
          const Topology& topology)
            : plan_(plan), ds_(ds) {
        const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
        contenders_.push_back(make_stock(ds.index.get(), 0, hw));
        contenders_.push_back(make_stock(ds.index.get(), 1, hw));
        contenders_.push_back(make_stock(ds.index.get(), 0, 1));
        contenders_.push_back(
                make_pool("pool-flat", ds.index.get(), pools[0], true));
        contenders_.push_back(
                make_pool("pool-ccd", ds.index.get(), pools[1], true));
        diagnostics_.push_back(
                make_pool("pool-ccd-nosplit", ds.index.get(), pools[1], false));
        diagnostics_.push_back(make_pool(
                "pool-ccd-spin",
                ds.index.get(),
                pools[2],
                true,
                kSpinRounds));

        r_.run.begin(o.command, o.quick);
        r_.run.topology = topology.describe();
        r_.run.topology_note = topology.note();
        for (int c = 0; c < topology.num_ccds(); c++) {
            r_.max_workers_per_ccd =
                    std::max(r_.max_workers_per_ccd, topology.ccd_size(c));
        }
        r_.dataset = ds.name;
        r_.description = ds.description;
        r_.d = ds.d;
        r_.k = plan.k;
        r_.nb = ds.nb;
        r_.nlist = ds.nlist;
        r_.nprobe = ds.nprobe;
        r_.nq_loaded = ds.nq;
        r_.index_from_cache = ds.index_from_cache;
        r_.cache_file = ds.cache_file;
        r_.build_seconds = ds.build_seconds;
        r_.gt_seconds = ds.gt_seconds;
        r_.lists = ds.lists;
        r_.rounds = plan.rounds;
        r_.single_blocks = plan.single_blocks;
        r_.noisy_share = plan.noisy_share;
        r_.max_reruns = plan.max_reruns;
        r_.rerun_budget_s = plan.rerun_budget_s;
        r_.clients_blocks = plan.clients_blocks;
        r_.nclients = plan.nclients;
        r_.single_nq = std::min(plan.single_nq, ds.nq);
        r_.clients_nq = std::min(plan.clients_nq, ds.nq);
        r_.batch_nq = std::min(plan.batch_nq, ds.nq);
        for (const auto& c : contenders_) {
            r_.contenders.push_back(c->name());
            r_.contender_descriptions.push_back(c->describe());
        }
        for (size_t i = 0; i < diagnostics_.size(); i++) {
            r_.contenders.push_back(diagnostics_[i]->name());
            r_.contender_descriptions.push_back(
                    diagnostics_[i]->describe() +
                    (i == 0 ? " (diagnostic: single client and clients)"
                            : " (diagnostic: single client only)"));
        }
    }

    DatasetResults run() {
        const Workload w{
                ds_.queries.data(),
                ds_.d,
                0,
                std::min<size_t>(ds_.nq, 200),
                plan_.k};
        for (const auto& c : contenders_) {
            c->prepare();
            warm_up(*c, w);
        }
        std::vector<Contender*> all;
        for (const auto& c : contenders_) {
            all.push_back(c.get());
        }
        // pool-ccd-nosplit also runs with 8 clients (does the extra tasks
        // of split lists cost throughput?), pool-ccd-spin only alone.
        std::vector<Contender*> clients = all;
        clients.push_back(diagnostics_[0].get());
        std::vector<Contender*> single = clients;
        single.push_back(diagnostics_[1].get());

        scenario("single", single, r_.single_nq);
        scenario("clients", clients, r_.clients_nq);
        scenario("batch", all, r_.batch_nq);

        recall_over_all_queries();
        const auto* ccd = contenders_[3]->ivf_ccd();
        r_.split = analyse_split(
                *ds_.index,
                *ccd,
                r_.single_nq,
                ds_.queries.data(),
                contenders_[3]->pool()->num_workers());
        r_.has_split = true;
        r_.scan_cost = measure_scan_cost(
                *ds_.index,
                *ccd,
                std::min(r_.single_nq, plan_.scan_cost_nq),
                r_.batch_nq,
                ds_.queries.data(),
                plan_.k);
        r_.has_scan_cost = true;
        r_.run.end();
        judge_targets(&r_);
        return std::move(r_);
    }

   private:
    /// scenario: every round of one scenario; contenders take turns.
    void scenario(
            const std::string& name,
            const std::vector<Contender*>& cs,
            size_t nq) {
        std::vector<ScenarioRow> rows(cs.size());
        std::vector<Answers> answers(cs.size());
        for (size_t i = 0; i < cs.size(); i++) {
            rows[i].scenario = name;
            rows[i].contender = cs[i]->name();
            answers[i].resize(nq, plan_.k);
        }
        Answers scratch;
        scratch.resize(nq, plan_.k);
        const int blocks = name == "single" ? plan_.single_blocks
                : name == "clients"         ? plan_.clients_blocks
                                            : 1;
        const size_t n = cs.size();
        for (int round = 0; round < plan_.rounds; round++) {
            std::vector<RunResult> res(n);
            for (int b = 0; b < blocks; b++) {
                Workload w{
                        ds_.queries.data(),
                        ds_.d,
                        nq * b / blocks,
                        nq * (b + 1) / blocks,
                        plan_.k};
                // Each block starts with another contender, and odd rounds
                // go backwards: noise bursts hit every contender alike.
                for (size_t j = 0; j < n; j++) {
                    const size_t rot = (j + size_t(b + round)) % n;
                    const size_t i = round % 2 ? n - 1 - rot : rot;
                    Contender& c = *cs[i];
                    Answers* out = round == 0 ? &answers[i] : &scratch;
                    RunResult block;
                    for (int attempt = 0;; attempt++) {
                        c.prepare();
                        settle();
                        if (name == "single") {
                            block = run_single(c, w, out);
                        } else if (name == "clients") {
                            block = run_clients(c, w, plan_.nclients, out);
                        } else {
                            block = run_batch(c, w, out);
                        }
                        if (!too_noisy(block) || attempt >= plan_.max_reruns ||
                            r_.rerun_seconds >= plan_.rerun_budget_s) {
                            break;
                        }
                        fprintf(stderr,
                                "  %s %s %s: others took %.0f%% of the "
                                "machine, measuring the block again\n",
                                ds_.name.c_str(),
                                name.c_str(),
                                c.name().c_str(),
                                100 * block.other_cpu);
                        r_.rerun_seconds += block.seconds;
                        rows[i].reruns++;
                    }
                    res[i].add(block);
                }
            }
            for (size_t i = 0; i < n; i++) {
                res[i].finalize();
                res[i].samples_ms.clear();
                log_run(name, round, cs[i]->name(), res[i]);
                rows[i].rounds.push_back(std::move(res[i]));
            }
        }
        for (size_t i = 0; i < cs.size(); i++) {
            ScenarioRow& row = rows[i];
            row.finalize();
            if (ds_.gt_nq > 0) {
                row.recall_queries = std::min(nq, ds_.gt_nq);
                row.recall10 = recall_at(
                        ds_,
                        10,
                        row.recall_queries,
                        answers[i].labels.data(),
                        plan_.k);
            }
            if (i > 0) { // cs[0] is stock-pm0, the reference
                row.compared = true;
                row.mismatch =
                        compare_answers(answers[0], answers[i], nq, plan_.k);
                if (row.mismatch.distance_queries > 0) {
                    fprintf(stderr,
                            "bench_ivf: %s %s: %zu of %zu queries differ in "
                            "distance from stock-pm0, e.g. %s\n",
                            name.c_str(),
                            row.contender.c_str(),
                            row.mismatch.distance_queries,
                            nq,
                            row.mismatch.examples[0].c_str());
                }
            }
            r_.rows.push_back(std::move(row));
        }
    }

    bool too_noisy(const RunResult& block) const {
        return block.seconds >= plan_.min_judged_s &&
                block.other_cpu > plan_.noisy_share;
    }

    void log_run(
            const std::string& scenario,
            int round,
            const std::string& name,
            const RunResult& res) {
        fprintf(stderr,
                "  %-9s %-7s round %d %-16s %8.1f QPS",
                ds_.name.c_str(),
                scenario.c_str(),
                round,
                name.c_str(),
                res.qps);
        if (res.latency.samples > 0) {
            fprintf(stderr,
                    "  P50 %7.3f  P99 %7.3f  P999 %7.3f ms",
                    res.latency.p50,
                    res.latency.p99,
                    res.latency.p999);
        }
        fprintf(stderr,
                "  cpu %3.0f%%+%2.0f%%",
                100 * res.own_cpu,
                100 * res.other_cpu);
        if (res.has_pool) {
            fprintf(stderr,
                    "  tasks/q %.1f  cross %.0f%%",
                    double(res.pool_delta.tasks_run()) / double(res.queries),
                    100 * res.pool_delta.cross_ccd_steal_ratio());
        }
        fprintf(stderr, "\n");
    }

    /// recall_over_all_queries: stock-pm0 over every query that has ground
    /// truth (Fashion-MNIST: the whole 10K test set), untimed.
    void recall_over_all_queries() {
        if (ds_.gt_nq == 0) {
            return;
        }
        Answers a;
        a.resize(ds_.gt_nq, plan_.k);
        contenders_[0]->prepare();
        contenders_[0]->search(
                idx_t(ds_.gt_nq),
                ds_.queries.data(),
                plan_.k,
                a.distances.data(),
                a.labels.data());
        r_.recall10_all =
                recall_at(ds_, 10, ds_.gt_nq, a.labels.data(), plan_.k);
        r_.recall10_all_queries = ds_.gt_nq;
    }

    Plan plan_;
    Dataset& ds_;
    std::vector<std::unique_ptr<Contender>> contenders_;
    /// Diagnostics: pool-ccd without list splitting (single client and
    /// clients), pool-ccd on a pool whose idle workers spin ~1000x longer
    /// before parking (single client only).
    std::vector<std::unique_ptr<Contender>> diagnostics_;
    DatasetResults r_;
};

Dataset load(const std::string& name, const Settings& o, const Plan& plan) {
    const std::string cache =
            std::string(BENCH_BINARY_DIR) + "/bench_ivf_cache";
    if (name == "synthetic") {
        SyntheticSpec s;
        if (o.quick) {
            s.nb = 20000;
            s.d = 32;
            s.nblobs = 128;
            s.nlist = 64;
            s.nprobe = 8;
            s.ntrain = 20000;
            s.nq = 1000;
        }
        if (o.nb > 0) {
            s.nb = o.nb;
        }
        return make_synthetic(s, plan.gt_nq, cache);
    }
    FmnistSpec f;
    if (o.quick) {
        f.nb = 10000;
        f.nq = 1000;
        f.nlist = 64;
    }
    return load_fmnist(f, plan.gt_nq, cache);
}

/// run_dataset: one data set, start to files. False when it could not run.
bool run_dataset(
        const std::string& name,
        const Settings& o,
        const std::vector<std::shared_ptr<Runtime>>& pools,
        const Topology& topology) {
    const Plan plan = make_plan(o, name);
    if (name == "fmnist" &&
        !std::filesystem::exists(
                FmnistSpec().dir + "/t10k-images-idx3-ubyte.gz")) {
        fprintf(stderr,
                "bench_ivf: fmnist skipped: %s/t10k-images-idx3-ubyte.gz "
                "not found (Debian package dataset-fashion-mnist)\n",
                FmnistSpec().dir.c_str());
        return true;
    }
    Dataset ds;
    try {
        ds = load(name, o, plan);
    } catch (const std::exception& e) {
        fprintf(stderr,
                "bench_ivf: %s: cannot load: %s\n",
                name.c_str(),
                e.what());
        return false;
    }
    fprintf(stderr,
            "bench_ivf: %s: %zu x %d, nlist %zu (avg %.0f, max %zu codes), "
            "nprobe %zu, k %d\n",
            ds.name.c_str(),
            ds.nb,
            ds.d,
            ds.nlist,
            ds.lists.avg,
            ds.lists.max,
            ds.nprobe,
            plan.k);
    if (!o.lists_out.empty()) {
        const std::string path = o.lists_out + "/" + name + ".lists";
        try {
            write_lists(ds, path);
        } catch (const std::exception& e) {
            fprintf(stderr, "bench_ivf: %s\n", e.what());
            return false;
        }
        fprintf(stderr, "bench_ivf: wrote %s\n", path.c_str());
        return true;
    }
    DatasetResults r = Bench(o, plan, ds, pools, topology).run();
    const Report report = to_report(r);
    print_report(report);
    return write_report(report, o.out);
}

} // namespace
} // namespace ivf
} // namespace bench

int main(int argc, char** argv) {
    using namespace bench::ivf;
    Settings o;
    bool help = false;
    if (!parse_args(argc, argv, &o, &help)) {
        return help ? 0 : 2;
    }
    // One runtime per policy for the whole run, shared by every client,
    // without a monitor (placement is bench_mapping's subject); the third
    // is the pool-ccd-spin diagnostic: idle workers poll 64K rounds (like
    // libgomp's spin-wait) instead of 64 before they park, so a single
    // client's next query finds them awake.
    std::vector<std::shared_ptr<Runtime>> pools;
    try {
        const std::string spec = o.topology.empty() ? "auto" : o.topology;
        RuntimeOptions options =
                RuntimeOptions().set_topology(spec).set_monitor(false);
        pools.push_back(Runtime::create(
                RuntimeOptions(options).set_policy(PolicyKind::flat_steal)));
        pools.push_back(Runtime::create(options));
        faiss::ccd::PoolOptions spin;
        spin.spin_rounds = kSpinRounds;
        pools.push_back(Runtime::create(options.set_pool(spin)));
    } catch (const std::exception& e) {
        fprintf(stderr, "bench_ivf: --topology: %s\n", e.what());
        return 2;
    }
    const Topology& topology = pools[0]->pool().topology();
    fprintf(stderr, "bench_ivf: topology %s\n", topology.describe().c_str());
    if (!topology.note().empty()) {
        fprintf(stderr, "bench_ivf: %s\n", topology.note().c_str());
    }

    std::vector<std::string> names;
    if (o.dataset == "both" || o.dataset == "synthetic") {
        names.push_back("synthetic");
    }
    if (o.dataset == "both" || o.dataset == "fmnist") {
        names.push_back("fmnist");
    }
    int status = 0;
    for (const std::string& name : names) {
        if (!run_dataset(name, o, pools, topology)) {
            status = 1;
        }
    }
    return status;
}
