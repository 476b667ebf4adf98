/**
 * ForkSafety: a fork() child of a process that searched can search too,
 * in every parallel mode. ForkSafety.cpp says what it takes and why.
 */

#pragma once

namespace faiss {
namespace ccd {

/// make_searches_fork_safe: register what fork() must do for a child's
/// searches (once; later calls do nothing). Called when libfaiss's IVF
/// search and HNSWTables are loaded, so that the registration is linked
/// into every program that searches, static libfaiss included.
void make_searches_fork_safe();

} // namespace ccd
} // namespace faiss
