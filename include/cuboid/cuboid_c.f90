! Fortran declarations of cuboid's C interface (cuboid.h), member for member and argument for
! argument: the derived types are laid out as the C structs, pointers are type(c_ptr), int64_t
! arguments are integer(c_int64_t) passed by value. Installed beside the headers; compile it with
! the application (the CMake package names it in cuboid_FORTRAN_MODULE).
module cuboid_c
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: cuboid_options, cuboid_call_report, cuboid_options_init, cuboid_create, &
            cuboid_destroy, cuboid_last_error, cuboid_last_call, cuboid_speeds, cuboid_sgemm, &
            cuboid_dgemm, cuboid_cgemm, cuboid_zgemm, c_string, f_string
  integer(c_int), parameter, public :: CUBOID_SUCCESS = 0

  type, bind(c) :: cuboid_options
    type(c_ptr) :: processors = c_null_ptr
    type(c_ptr) :: speeds = c_null_ptr
    integer(c_int) :: speed_count = 0
    type(c_ptr) :: speed_cache = c_null_ptr
    type(c_ptr) :: algorithm = c_null_ptr
    type(c_ptr) :: discretization = c_null_ptr
    real(c_double) :: memory_budget_mib = 0
    integer(c_int64_t) :: tile = 0
    real(c_double) :: direct_below_flops = -1
    integer(c_int) :: reproducible = 0
  end type cuboid_options

  type, bind(c) :: cuboid_call_report
    integer(c_int) :: direct = 0
    integer(c_int) :: trial = 0
    real(c_double) :: seconds = 0
    real(c_double) :: calibration_s = 0
    integer(c_int) :: processors = 0
    character(kind=c_char) :: algorithm(32) = c_null_char
    character(kind=c_char) :: processor(32) = c_null_char
    integer(c_int) :: ranks = 1
    character(kind=c_char) :: rank_partition(64) = c_null_char
    real(c_double) :: received_bytes = 0
    real(c_double) :: mpi_polls_while_computing = 0
    integer(c_int) :: pieces_on_calling_thread = 0
  end type cuboid_call_report

  interface
    subroutine cuboid_options_init(options) bind(c, name='cuboid_options_init')
      import :: cuboid_options
      type(cuboid_options), intent(out) :: options
    end subroutine cuboid_options_init

    integer(c_int) function cuboid_create(options, context, error, error_size) &
        bind(c, name='cuboid_create')
      import :: cuboid_options, c_ptr, c_char, c_int, c_int64_t
      type(cuboid_options), intent(in) :: options
      type(c_ptr), intent(out) :: context
      character(kind=c_char), intent(out) :: error(*)
      integer(c_int64_t), value :: error_size
    end function cuboid_create

    subroutine cuboid_destroy(context) bind(c, name='cuboid_destroy')
      import :: c_ptr
      type(c_ptr), value :: context
    end subroutine cuboid_destroy

    type(c_ptr) function cuboid_last_error(context) bind(c, name='cuboid_last_error')
      import :: c_ptr
      type(c_ptr), value :: context
    end function cuboid_last_error

    integer(c_int) function cuboid_dgemm(context, transa, transb, m, n, k, alpha, a, lda, b, &
                                         ldb, beta, c, ldc) bind(c, name='cuboid_dgemm')
      import :: c_ptr, c_char, c_int, c_int64_t, c_double
      type(c_ptr), value :: context
      character(kind=c_char), value :: transa, transb
      integer(c_int64_t), value :: m, n, k, lda, ldb, ldc
      real(c_double), value :: alpha, beta
      real(c_double), intent(in) :: a(lda, *), b(ldb, *)
      real(c_double), intent(inout) :: c(ldc, *)
    end function cuboid_dgemm

    integer(c_int) function cuboid_sgemm(context, transa, transb, m, n, k, alpha, a, lda, b, &
                                         ldb, beta, c, ldc) bind(c, name='cuboid_sgemm')
      import :: c_ptr, c_char, c_int, c_int64_t, c_float
      type(c_ptr), value :: context
      character(kind=c_char), value :: transa, transb
      integer(c_int64_t), value :: m, n, k, lda, ldb, ldc
      real(c_float), value :: alpha, beta
      real(c_float), intent(in) :: a(lda, *), b(ldb, *)
      real(c_float), intent(inout) :: c(ldc, *)
    end function cuboid_sgemm

    ! Complex: alpha and beta by reference, as cuboid.h takes them.
    integer(c_int) function cuboid_zgemm(context, transa, transb, m, n, k, alpha, a, lda, b, &
                                         ldb, beta, c, ldc) bind(c, name='cuboid_zgemm')
      import :: c_ptr, c_char, c_int, c_int64_t, c_double_complex
      type(c_ptr), value :: context
      character(kind=c_char), value :: transa, transb
      integer(c_int64_t), value :: m, n, k, lda, ldb, ldc
      complex(c_double_complex), intent(in) :: alpha, beta
      complex(c_double_complex), intent(in) :: a(lda, *), b(ldb, *)
      complex(c_double_complex), intent(inout) :: c(ldc, *)
    end function cuboid_zgemm

    integer(c_int) function cuboid_cgemm(context, transa, transb, m, n, k, alpha, a, lda, b, &
                                         ldb, beta, c, ldc) bind(c, name='cuboid_cgemm')
      import :: c_ptr, c_char, c_int, c_int64_t, c_float_complex
      type(c_ptr), value :: context
      character(kind=c_char), value :: transa, transb
      integer(c_int64_t), value :: m, n, k, lda, ldb, ldc
      complex(c_float_complex), intent(in) :: alpha, beta
      complex(c_float_complex), intent(in) :: a(lda, *), b(ldb, *)
      complex(c_float_complex), intent(inout) :: c(ldc, *)
    end function cuboid_cgemm

    integer(c_int) function cuboid_speeds(context, type, speeds, capacity) &
        bind(c, name='cuboid_speeds')
      import :: c_ptr, c_char, c_int, c_double
      type(c_ptr), value :: context
      character(kind=c_char), value :: type
      real(c_double), intent(out) :: speeds(*)
      integer(c_int), value :: capacity
    end function cuboid_speeds

    integer(c_int) function cuboid_last_call(context, report) bind(c, name='cuboid_last_call')
      import :: c_ptr, c_int, cuboid_call_report
      type(c_ptr), value :: context
      type(cuboid_call_report), intent(out) :: report
    end function cuboid_last_call
  end interface

contains

  ! A Fortran string as a NUL-terminated C string, in an array the caller keeps alive while C
  ! holds a pointer to it.
  subroutine c_string(text, buffer)
    character(len=*), intent(in) :: text
    character(kind=c_char), intent(out) :: buffer(:)
    integer :: i
    do i = 1, min(len_trim(text), size(buffer) - 1)
      buffer(i) = text(i:i)
    end do
    buffer(min(len_trim(text), size(buffer) - 1) + 1) = c_null_char
  end subroutine c_string

  ! A C string returned by cuboid (e.g. cuboid_last_error) as a Fortran string.
  function f_string(p) result(text)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    text = ''
    if (.not. c_associated(p)) return
    call c_f_pointer(p, chars, [4096])
    n = 0
    do while (n < 4096)
      if (chars(n + 1) == c_null_char) exit
      n = n + 1
      text = text // chars(n)
    end do
  end function f_string

end module cuboid_c
