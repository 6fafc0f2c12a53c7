// Crash points: named places on the paths that must survive a crash — the
// disk tier's write, sync and index commit, loads from disk, demotion, the
// engine's step. A test build (STRATA_TESTS, which compiles them in) reads
// STRATA_CRASH_AT=NAME[@N] once and kills the process with SIGKILL the N-th
// time (default: the first) any thread passes NAME, as kill -9 or a power cut
// would: no destructor runs, nothing is flushed. It says so on standard error
// first, so a test knows the crash came from the point it asked for.
//
// A release build (STRATA_TESTS=OFF, `make run`, the package) compiles the
// body out: crash_point() returns at once and reads no environment.
#pragma once

#include <array>
#include <string_view>

namespace strata {

// Every point there is: a name not listed here is refused (the test build
// aborts with a message at the first point passed), so a harness that walks
// this list reaches them all.
inline constexpr std::array<std::string_view, 24> kCrashPoints = {
    // The disk tier's write path (tiering/disk_worker.cpp, disk_store.cpp).
    "disk.slab_created",        // a new slab file's header written, not synced
    "disk.write_in_flight",     // block writes submitted, not completed
    "disk.write_done",          // a block written, before fdatasync
    "disk.before_sync",         // a batch of written blocks, before fdatasync
    "disk.after_sync",          // synced, before the index commit
    "disk.after_index_commit",  // indexed, before the engine is told
    "disk.write_acknowledged",  // the engine told: the blocks are durable
    "disk.reclaim_chosen",      // a full disk's LRU victim chosen, before its row goes
    // The disk tier's loads.
    "disk.load_in_flight",  // block reads submitted, not completed
    "disk.load_read",       // a block read, before its checksum is checked
    "disk.load_verified",   // a block verified, before the engine is told
    "disk.opened",          // start-up: index and slabs opened and checked
    // Inside the index's SQLite transactions (tiering/block_index.cpp).
    "index.insert_begun",          // BEGIN done, no row yet
    "index.insert_row",            // a row inserted, more may follow
    "index.insert_before_commit",  // every row inserted, before COMMIT
    "index.erase_in_transaction",  // rows erased, before COMMIT
    "index.touch_in_transaction",  // last-used times updated, before COMMIT
    "index.closing",               // clean shutdown, before the close checkpoints the WAL
    // The engine and the moves between host memory and disk.
    "engine.block_published",     // a full block in the prefix cache, before write-through
    "tier.write_through_queued",  // a block handed to the disk thread to write through
    "tier.demotion_queued",       // a cold block handed to the disk thread to demote
    "tier.demotion_done",         // a demoted block on disk, before it may be evicted
    "tier.load_published",        // a block loaded from disk, published in the cache
    "engine.step",                // a batch run, its tokens not yet sent
};

// Kills the process here when STRATA_CRASH_AT names `point` and this is its
// N-th pass (test builds only). Any thread; `point` must be in kCrashPoints.
void crash_point(std::string_view point);

}  // namespace strata
