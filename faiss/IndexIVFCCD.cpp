#include <faiss/IndexIVFCCD.h>

#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/FaissAssert.h>

#include <memory>

namespace faiss {
namespace ccd {

IndexIVFCCD::IndexIVFCCD(
        IndexIVF* index_in,
        std::shared_ptr<Runtime> runtime,
        uint32_t table_id_in,
        bool own_fields_in)
        : Index(index_in ? index_in->d : 0,
                index_in ? index_in->metric_type : METRIC_L2),
          index(index_in),
          own_fields(own_fields_in),
          table_id(table_id_in),
          runtime_(std::move(runtime)) {
    FAISS_THROW_IF_NOT_MSG(index_in, "IndexIVFCCD: index is null");
    FAISS_THROW_IF_NOT_MSG(runtime_, "IndexIVFCCD: runtime is null");
    FAISS_THROW_IF_NOT_MSG(
            table_id_in != table_of(kLocalMappingId),
            "IndexIVFCCD: table id 0xffffffff is reserved");
    try {
        std::unique_ptr<InvertedListScanner> probe(
                index_in->get_InvertedListScanner(false));
        has_scanner_ = probe != nullptr;
    } catch (const FaissException&) {
        has_scanner_ = false; // the FastScan family
    }
    sync_from_index();
}

IndexIVFCCD::~IndexIVFCCD() {
    if (own_fields) {
        delete index;
    }
}

void IndexIVFCCD::sync_from_index() {
    ntotal = index->ntotal;
    is_trained = index->is_trained;
    metric_type = index->metric_type;
    metric_arg = index->metric_arg;
}

SearchParametersIVFCCD IndexIVFCCD::ccd_params(
        const SearchParameters* params) const {
    SearchParametersIVFCCD p;
    if (auto ccd = dynamic_cast<const SearchParametersIVFCCD*>(params)) {
        p = *ccd;
    } else {
        p.nprobe = index->nprobe;
        p.max_codes = index->max_codes;
        p.split_factor = split_factor;
        p.chunk_factor = chunk_factor;
        p.min_chunk = min_chunk;
        p.list_major_min_batch = list_major_min_batch;
        p.helpers = helpers;
        if (params != nullptr) {
            auto ivf = dynamic_cast<const SearchParametersIVF*>(params);
            FAISS_THROW_IF_NOT_MSG(
                    ivf,
                    "IndexIVFCCD params have incorrect type");
            p.nprobe = ivf->nprobe;
            p.max_codes = ivf->max_codes;
            p.sel = ivf->sel;
            p.quantizer_params = ivf->quantizer_params;
        }
    }
    p.runtime = runtime_.get();
    p.table_id = table_id;
    p.traffic_sink = traffic_sink;
    return p;
}

void IndexIVFCCD::search(
        idx_t n,
        const float* x,
        idx_t k,
        float* distances,
        idx_t* labels,
        const SearchParameters* params) const {
    FAISS_THROW_IF_NOT_MSG(n >= 0, "IndexIVFCCD::search: n must be >= 0");
    FAISS_THROW_IF_NOT_MSG(k > 0, "IndexIVFCCD::search: k must be > 0");
    FAISS_THROW_IF_NOT_MSG(
            n == 0 || (x && distances && labels),
            "IndexIVFCCD::search: null x, distances or labels with n > 0");
    FAISS_THROW_IF_NOT_MSG(
            index->is_trained,
            "IndexIVFCCD::search: index is not trained");
    FAISS_THROW_IF_NOT_FMT(
            index->d == d,
            "IndexIVFCCD::search: wrapped index has d=%d, expected %d",
            int(index->d),
            int(d));
    if (!has_scanner_) {
        // The FastScan family searches on its own (and takes no params).
        index->search(n, x, k, distances, labels, params);
        return;
    }
    const SearchParametersIVFCCD p = ccd_params(params);
    if (n == 0) {
        return;
    }
    index->search(n, x, k, distances, labels, &p);
}

void IndexIVFCCD::range_search(
        idx_t n,
        const float* x,
        float radius,
        RangeSearchResult* result,
        const SearchParameters* params) const {
    FAISS_THROW_IF_NOT_MSG(n >= 0, "IndexIVFCCD::range_search: n must be >= 0");
    FAISS_THROW_IF_NOT_MSG(result, "IndexIVFCCD::range_search: result is null");
    FAISS_THROW_IF_NOT_MSG(
            n == 0 || x,
            "IndexIVFCCD::range_search: null x with n > 0");
    FAISS_THROW_IF_NOT_MSG(
            result->nq == size_t(n),
            "IndexIVFCCD::range_search: result->nq differs from n");
    FAISS_THROW_IF_NOT_MSG(
            index->is_trained,
            "IndexIVFCCD::range_search: index is not trained");
    if (!has_scanner_) {
        index->range_search(n, x, radius, result, params);
        return;
    }
    const SearchParametersIVFCCD p = ccd_params(params);
    index->range_search(n, x, radius, result, &p);
}

void IndexIVFCCD::train(idx_t n, const float* x) {
    index->train(n, x);
    sync_from_index();
}

void IndexIVFCCD::add(idx_t n, const float* x) {
    index->add(n, x);
    sync_from_index();
}

void IndexIVFCCD::add_with_ids(idx_t n, const float* x, const idx_t* xids) {
    index->add_with_ids(n, x, xids);
    sync_from_index();
}

void IndexIVFCCD::reset() {
    index->reset();
    sync_from_index();
}

void IndexIVFCCD::reconstruct(idx_t key, float* recons) const {
    index->reconstruct(key, recons);
}

} // namespace ccd
} // namespace faiss
