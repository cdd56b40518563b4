// Phase spans for a timeline (pxq run --trace): when $PXQ_TRACE_DIR is set, every timed phase
// is kept with its start and end (MPI_Wtime, the clock the phase timers sum) and the OS thread
// that ran it, and each rank writes them to $PXQ_TRACE_DIR/phases-RANK.json at the end of the
// run. The message profiler writes the rank's MPI calls beside them, on the same clock.
#pragma once

#include <string>

namespace pxq::common::trace {

// Whether spans are kept ($PXQ_TRACE_DIR set and not empty; read once).
bool enabled();
// Keeps one span: `cat` is "phase" for a timed phase, "run" for the run's own stages.
void span(const std::string& name, const char* cat, double t0, double t1);
// Writes this rank's spans; `sync` is the rank's clock just after the barrier that starts the
// timed iterations (the merge aligns the ranks on it). Returns false, with a message on
// stderr, when the file cannot be written; the run itself goes on.
bool write(int rank, double sync);

}  // namespace pxq::common::trace
