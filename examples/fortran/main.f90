! cuboid from Fortran: C <- alpha A B + beta C through cuboid.h (module cuboid_c), checked
! against a naive loop; then one small product in each other type (single, complex, complex
! single), checked exactly, and the last call's report.
!   cuboid-example-fortran [PROCESSORS [M N K]]     e.g. cuboid-example-fortran host,staged
! Prints the time of the first call (which measures the processors' speeds when there is more
! than one and none are cached) and of a second one; stops with code 1 when the product is
! wrong, 2 when cuboid reports an error.
program cuboid_example
  use, intrinsic :: iso_c_binding
  use cuboid_c
  implicit none
  character(len=256) :: arg, processors
  character(kind=c_char), target :: processors_c(257)
  character(kind=c_char) :: message(512)
  integer(c_int64_t) :: m = 512, n = 448, k = 384
  real(c_double), parameter :: alpha = 1.5d0, beta = -0.5d0
  real(c_double), allocatable :: a(:, :), b(:, :), c0(:, :), c(:, :)
  type(cuboid_options) :: options
  type(c_ptr) :: context
  integer(c_int64_t) :: wrong, t0, t1, rate
  real(c_double) :: seconds(2)
  integer :: call_no, i
  type(cuboid_call_report) :: report

  processors = 'host'
  if (command_argument_count() >= 1) call get_command_argument(1, processors)
  if (command_argument_count() >= 4) then
    call get_command_argument(2, arg)
    read (arg, *) m
    call get_command_argument(3, arg)
    read (arg, *) n
    call get_command_argument(4, arg)
    read (arg, *) k
  end if
  if (m <= 0 .or. n <= 0 .or. k <= 0) then
    write (*, '(a)') 'usage: cuboid-example-fortran [PROCESSORS [M N K]] (positive sizes)'
    stop 2
  end if
  allocate (a(m, k), b(k, n), c0(m, n), c(m, n))
  call fill(a, 1_c_int64_t)
  call fill(b, 2_c_int64_t)
  call fill(c0, 3_c_int64_t)

  call cuboid_options_init(options)
  call c_string(processors, processors_c)
  options%processors = c_loc(processors_c)
  if (cuboid_create(options, context, message, int(size(message), c_int64_t)) /= CUBOID_SUCCESS) then
    write (*, '(a, 512a)') 'cuboid-example-fortran: ', (message(i), i = 1, index_of_nul(message) - 1)
    stop 2
  end if
  wrong = 0
  do call_no = 1, 2
    c = c0
    call system_clock(t0, rate)
    if (cuboid_dgemm(context, 'N', 'N', m, n, k, alpha, a, m, b, k, beta, c, m) /= CUBOID_SUCCESS) then
      write (*, '(2a)') 'cuboid-example-fortran: ', f_string(cuboid_last_error(context))
      call cuboid_destroy(context)
      stop 2
    end if
    call system_clock(t1)
    seconds(call_no) = real(t1 - t0, c_double) / real(rate, c_double)
    wrong = wrong + wrong_elements()
  end do
  if (cuboid_last_call(context, report) /= CUBOID_SUCCESS) stop 2
  write (*, '(a, i0, a, f7.4, a)') 'cuboid-example-fortran: last call direct=', report%direct, &
    ', ', report%seconds, ' s'
  wrong = wrong + other_types_wrong()
  call cuboid_destroy(context)
  write (*, '(a, i0, "x", i0, "x", i0, 3a, f7.4, a, f7.4, a, f0.2, a)') &
    'cuboid-example-fortran: ', m, n, k, ' on ', trim(processors), ': first call', seconds(1), &
    ' s, second', seconds(2), ' s (', 2d-9 * real(m, c_double) * real(n, c_double) * &
    real(k, c_double) / seconds(2), ' GFLOP/s)'
  if (wrong > 0) then
    write (*, '(a, i0, a)') 'cuboid-example-fortran: WRONG: ', wrong, &
      ' elements outside the rounding bound'
    stop 1
  end if
  write (*, '(a)') 'cuboid-example-fortran: correct: every element within the rounding bound'

contains

  ! sgemm, zgemm and cgemm on 4 x 4: ones times ones (every element 4), and a diagonal of i
  ! times the identity (the diagonal back): exact in every type. Counts the elements off.
  integer(c_int64_t) function other_types_wrong()
    integer, parameter :: s = 4
    real(c_float) :: sa(s, s), sc(s, s)
    complex(c_double_complex) :: za(s, s), zb(s, s), zc(s, s)
    complex(c_float_complex) :: ca(s, s), cb(s, s), cc(s, s)
    integer(c_int64_t), parameter :: s8 = s
    integer :: j
    other_types_wrong = 0
    sa = 1
    sc = 0
    if (cuboid_sgemm(context, 'N', 'N', s8, s8, s8, 1.0, sa, s8, sa, s8, 0.0, sc, s8) &
        /= CUBOID_SUCCESS) stop 2
    other_types_wrong = other_types_wrong + count(sc /= 4.0)
    za = 0
    zb = 0
    ca = 0
    cb = 0
    do j = 1, s
      za(j, j) = (0d0, 1d0)
      zb(j, j) = (1d0, 0d0)
      ca(j, j) = (0.0, 1.0)
      cb(j, j) = (1.0, 0.0)
    end do
    zc = (7d0, 7d0)
    cc = (7.0, 7.0)
    if (cuboid_zgemm(context, 'N', 'N', s8, s8, s8, (1d0, 0d0), za, s8, zb, s8, (0d0, 0d0), zc, &
                     s8) /= CUBOID_SUCCESS) stop 2
    if (cuboid_cgemm(context, 'N', 'N', s8, s8, s8, (1.0, 0.0), ca, s8, cb, s8, (0.0, 0.0), cc, &
                     s8) /= CUBOID_SUCCESS) stop 2
    other_types_wrong = other_types_wrong + count(zc /= za) + count(cc /= ca)
  end function other_types_wrong

  ! Values in [-1, 1] that depend on the position and the seed only: the same matrices every run.
  subroutine fill(x, seed)
    real(c_double), intent(out) :: x(:, :)
    integer(c_int64_t), intent(in) :: seed
    integer(c_int64_t) :: i, j
    do j = 1, size(x, 2, kind=c_int64_t)
      do i = 1, size(x, 1, kind=c_int64_t)
        x(i, j) = sin(0.618d0 * real(7 * i + 13 * j + 101 * seed, c_double))
      end do
    end do
  end subroutine fill

  ! Elements of c off alpha a b + beta c0 (a naive loop) by more than the rounding of either
  ! computation allows: (2k + 2) eps (|alpha| |a||b| + |beta| |c0|).
  integer(c_int64_t) function wrong_elements()
    integer(c_int64_t) :: i, j, l
    real(c_double) :: ab, ab_abs, p, want, bound
    wrong_elements = 0
    do j = 1, n
      do i = 1, m
        ab = 0
        ab_abs = 0
        do l = 1, k
          p = a(i, l) * b(l, j)
          ab = ab + p
          ab_abs = ab_abs + abs(p)
        end do
        want = alpha * ab + beta * c0(i, j)
        bound = real(2 * k + 2, c_double) * epsilon(1d0) * (abs(alpha) * ab_abs + abs(beta * c0(i, j)))
        if (.not. (abs(c(i, j) - want) <= bound)) wrong_elements = wrong_elements + 1
      end do
    end do
  end function wrong_elements

  integer function index_of_nul(chars)
    character(kind=c_char), intent(in) :: chars(:)
    do index_of_nul = 1, size(chars)
      if (chars(index_of_nul) == c_null_char) return
    end do
  end function index_of_nul

end program cuboid_example
