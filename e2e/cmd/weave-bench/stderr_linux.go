package main

import (
	"os"
	"syscall"
)

// redirectStderr points file descriptor 2 at f, so that what the in-process servers write to stderr
// directly (etcd's and its clients' zap loggers) lands in the log file, and returns a file on the original
// stderr for the progress output.
func redirectStderr(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(2)
	if err != nil {
		return nil, err
	}
	if err := syscall.Dup3(int(f.Fd()), 2, 0); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/stderr"), nil
}
