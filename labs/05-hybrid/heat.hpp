// Lab 5, the harness's side: a 2-D heat proxy. The N x N grid's interior rows are split among
// the ranks; each rank holds its rows plus one halo row above and below, and a copy of the
// whole conductivity table (every rank reads it all in, as many codes do with their inputs).
#pragma once

#include <cstddef>
#include <vector>

#include "lab_world.hpp"

namespace heat {

struct Grid {
  int n = 0;                    // global grid: n x n, rows 0 and n-1 and columns 0 and n-1 fixed
  int rows = 0;                 // this rank's interior rows
  int first_row = 0;            // the global row of local row 1
  std::vector<double> u, next;  // (rows + 2) x n: local row 0 and rows + 1 are halos
  std::vector<double> kappa;    // n x n: the replicated conductivity table
};

// Relaxes local row r (1..g.rows) of g.u into g.next; returns the largest |change| in it.
// Safe to call from several OpenMP threads for different rows.
double relax_row(Grid& g, int r);

// Exchanges halo rows with the ranks above and below. It calls MPI: one thread only.
void exchange_halos(Grid& g, const lab::World& w);

// Yours (heat_step.cpp):
int thread_level();                         // the MPI thread level your step() needs
double step(Grid& g, const lab::World& w);  // one step; the largest |change| on this rank

}  // namespace heat
