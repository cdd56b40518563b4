/* A fault for test harnesses: preloaded into an MPI program (LD_PRELOAD), it corrupts data
 * in flight, as a faulty link or reduction would. Every message of doubles sent with MPI_Send
 * or MPI_Sendrecv, and every MPI_Allreduce result of doubles, has its first value changed by
 * one part in a thousand. A proxy's own verification must then fail (CG's reductions and
 * transposes go through MPI_Send), and a harness running it (the ReFrame test library) must
 * report that failure. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static void corrupt(double* x) { x[0] = x[0] * 1.001 + 1e-3; }

/* A corrupted copy of `count` doubles (the caller's buffer stays as it was); NULL: no memory. */
static double* corrupted_copy(const void* buf, int count) {
  double* copy = malloc((size_t)count * sizeof(double));
  if (copy) {
    memcpy(copy, buf, (size_t)count * sizeof(double));
    corrupt(copy);
  }
  return copy;
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (type != MPI_DOUBLE || count <= 0 || buf == NULL) return PMPI_Send(buf, count, type, dest, tag, comm);
  double* copy = corrupted_copy(buf, count);
  const int rc = PMPI_Send(copy ? copy : buf, count, type, dest, tag, comm);
  free(copy);
  return rc;
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status* status) {
  double* copy = (stype == MPI_DOUBLE && scount > 0 && sbuf != NULL) ? corrupted_copy(sbuf, scount) : NULL;
  const int rc =
      PMPI_Sendrecv(copy ? copy : sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, status);
  free(copy);
  return rc;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  if (rc == MPI_SUCCESS && type == MPI_DOUBLE && count > 0) corrupt((double*)recvbuf);
  return rc;
}
