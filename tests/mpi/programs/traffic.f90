! A plain Fortran MPI program for the message profiler's Fortran bindings: every rank sends
! `rounds` messages of `nbytes` to its right neighbour (mpi_send, mpi_isend, mpi_sendrecv in
! turn), then one mpi_alltoall of `nbytes` per peer and one mpi_allreduce of one double, a
! barrier between mpi_pcontrol(0) and mpi_pcontrol(1) (left out of a profile), one
! mpi_allgather and one mpi_gather of `nbytes`, and one mpi_ssend of `nbytes` to the right.
! usage: pxq-traffic-f ROUNDS BYTES
program traffic
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, right, left, r, rounds, nbytes, req, rreq
  character(len=32) :: arg
  character, allocatable :: out(:), in(:)
  double precision :: x, y
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, arg)
  read (arg, *) rounds
  call get_command_argument(2, arg)
  read (arg, *) nbytes
  allocate (out(nbytes*nprocs), in(nbytes*nprocs))
  out = 'x'
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  do r = 0, rounds - 1
    if (mod(r, 3) == 2) then
      call mpi_sendrecv(out, nbytes, MPI_BYTE, right, 7, in, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, &
                        MPI_STATUS_IGNORE, ierr)
    else
      call mpi_irecv(in, nbytes, MPI_BYTE, left, 7, MPI_COMM_WORLD, rreq, ierr)
      if (mod(r, 3) == 0) then
        call mpi_send(out, nbytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, ierr)
      else
        call mpi_isend(out, nbytes, MPI_BYTE, right, 7, MPI_COMM_WORLD, req, ierr)
        call mpi_wait(req, MPI_STATUS_IGNORE, ierr)
      end if
      call mpi_wait(rreq, MPI_STATUS_IGNORE, ierr)
    end if
  end do
  call mpi_alltoall(out, nbytes, MPI_BYTE, in, nbytes, MPI_BYTE, MPI_COMM_WORLD, ierr)
  x = 1.0d0
  call mpi_allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_pcontrol(0)
  call mpi_barrier(MPI_COMM_WORLD, ierr)
  call mpi_pcontrol(1)
  call mpi_allgather(out, nbytes, MPI_BYTE, in, nbytes, MPI_BYTE, MPI_COMM_WORLD, ierr)
  call mpi_gather(out, nbytes, MPI_BYTE, in, nbytes, MPI_BYTE, 0, MPI_COMM_WORLD, ierr)
  call mpi_irecv(in, nbytes, MPI_BYTE, left, 8, MPI_COMM_WORLD, rreq, ierr)
  call mpi_ssend(out, nbytes, MPI_BYTE, right, 8, MPI_COMM_WORLD, ierr)
  call mpi_wait(rreq, MPI_STATUS_IGNORE, ierr)
  if (rank == 0) print '(a,i0,a)', 'traffic (Fortran): ', nprocs, ' ranks'
  call mpi_finalize(ierr)
end program traffic
