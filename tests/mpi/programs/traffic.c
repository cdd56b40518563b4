/* A plain MPI program, not built with pxq, for the message profiler's tests: every rank
   sends `rounds` messages of `bytes` to its right neighbour (blocking, non-blocking,
   sendrecv and persistent sends in turn), then one MPI_Alltoall of `bytes` per peer, then
   a barrier and an allreduce between MPI_Pcontrol(0) and MPI_Pcontrol(1) (left out of a
   profile), then one message of `bytes` to itself.
   usage: pxq-traffic ROUNDS BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int rounds = argc > 1 ? atoi(argv[1]) : 4;
  const int bytes = argc > 2 ? atoi(argv[2]) : 1024;
  char* out = malloc((size_t)bytes * (size_t)size + 1);
  char* in = malloc((size_t)bytes * (size_t)size + 1);
  memset(out, rank, (size_t)bytes * (size_t)size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Request sreq, rreq, psend;
  MPI_Send_init(out, bytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, &psend);
  for (int r = 0; r < rounds; ++r) {
    if (r % 4 == 2) {
      MPI_Sendrecv(out, bytes, MPI_BYTE, right, 7, in, bytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      continue;
    }
    MPI_Irecv(in, bytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, &rreq);
    if (r % 4 == 0) {
      MPI_Send(out, bytes, MPI_BYTE, right, 7, MPI_COMM_WORLD);
    } else if (r % 4 == 1) {
      MPI_Isend(out, bytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, &sreq);
      MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    } else {
      MPI_Start(&psend);
      MPI_Wait(&psend, MPI_STATUS_IGNORE);
    }
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
  }
  MPI_Request_free(&psend);
  MPI_Alltoall(out, bytes, MPI_BYTE, in, bytes, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Pcontrol(0);
  double x = 1.0, y = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Pcontrol(1);
  MPI_Irecv(in, bytes, MPI_BYTE, rank, 9, MPI_COMM_WORLD, &rreq);
  MPI_Send(out, bytes, MPI_BYTE, rank, 9, MPI_COMM_WORLD);
  MPI_Wait(&rreq, MPI_STATUS_IGNORE);
  if (rank == 0) printf("traffic: %d ranks, %d rounds of %d bytes, one alltoall, one self message (sum %g)\n", size, rounds,
                       bytes, y);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
