// Internal: FftPlan's FFTW engine (fft_fftw.cpp), or, in a build without FFTW, its absence.
#pragma once

#include <memory>

#include "pxq/kernels/fft.hpp"

namespace pxq::kernels {

// FFTW's plans for length n (throws std::invalid_argument in a build without FFTW).
FftwBatchesPtr make_fftw_batches(int n);

// FftPlan::run through FFTW: the B lines of (re, im) transformed into (wre, wim); returns
// true (the result is in the work arrays).
bool run_fftw(const FftwBatches& plans, double* re, double* im, double* wre, double* wim, int lines, FftDirection dir);

}  // namespace pxq::kernels
