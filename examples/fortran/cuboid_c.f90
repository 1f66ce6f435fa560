! Fortran declarations of cuboid's C interface (cuboid.h), member for member and argument for
! argument: the derived type is laid out as the C struct, pointers are type(c_ptr), int64_t
! arguments are integer(c_int64_t) passed by value.
module cuboid_c
  use, intrinsic :: iso_c_binding
  implicit none
  private
  public :: cuboid_options, cuboid_options_init, cuboid_create, cuboid_destroy, &
            cuboid_last_error, cuboid_dgemm, c_string, f_string
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
