package rbac

import (
	"os"
	"syscall"
)

// fallocKeepSize is Linux's FALLOC_FL_KEEP_SIZE: allocate without changing
// the file's length.
const fallocKeepSize = 0x1

// allocate allocates n bytes of f from offset off without changing its
// length, so that writes there cannot fail for want of space.
func allocate(f *os.File, off, n int64) error {
	return syscall.Fallocate(int(f.Fd()), fallocKeepSize, off, n)
}
