/**
 * MappingId: the key of a task, naming the memory the task touches.
 *
 * 64 bits: the table id in the high half, the list number (IVF) or 0 (HNSW)
 * in the low half. The pool maps every id to one CCD, so that all tasks
 * touching the same memory share one L3.
 */

#pragma once

#include <cstdint>

namespace faiss {
namespace ccd {

using MappingId = uint64_t;

/// make_mapping_id: the id of list `list_no` of table `table_id`.
constexpr MappingId make_mapping_id(uint32_t table_id, uint32_t list_no = 0) {
    return (MappingId(table_id) << 32) | MappingId(list_no);
}

/// table_of: the table id of a mapping id (its high half).
constexpr uint32_t table_of(MappingId id) {
    return uint32_t(id >> 32);
}

/// list_of: the list number of a mapping id (its low half).
constexpr uint32_t list_of(MappingId id) {
    return uint32_t(id);
}

/// kLocalMappingId: a task with no data of its own (fork-join, tests).
/// Submitted from a worker it stays on that worker; from any other thread it
/// is placed round-robin. Table id 0xffffffff is reserved for it.
constexpr MappingId kLocalMappingId = ~MappingId(0);

} // namespace ccd
} // namespace faiss
