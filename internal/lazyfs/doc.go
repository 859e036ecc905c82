// Package lazyfs is a test filesystem that forgets what was not synced,
// after LazyFS, the FUSE filesystem Jepsen used to cut power under etcd.
//
// It is a loopback-style FUSE filesystem (github.com/hanwen/go-fuse/v2)
// over a backing directory. The backing directory always holds exactly
// what would survive a power cut:
//
//   - File contents written stay in the filesystem's own page cache
//     until that file is fsynced or fdatasynced; then they are written
//     through to the backing file.
//   - Directory entries of regular files (create, rename, unlink) stay
//     unsynced until their directory is fsynced. A file that is synced
//     but whose name is not has no durable name: it does not survive.
//   - Cut (a power cut) discards everything unsynced. As options it keeps
//     a random subset of the unsynced page writes and tears one page
//     write (a prefix of whole 512-byte sectors reaches the disk).
//
// After Cut every operation fails with EIO, as on a machine whose power
// is gone: kill the processes using the mount, Unmount, and Mount the same
// backing directory again to "reboot". A fresh mount starts with empty
// kernel caches, so nothing a cut discarded can be read back from the
// kernel's page cache.
//
// # What it supports
//
// What bbolt and the store need: read and write (pwrite) through the
// kernel's page cache, shared read-only mmap (direct_io is off; a write is
// written through to the filesystem, which answers page faults from its
// own cache, so a mapping sees what was written), fsync and fdatasync (the
// same here: both make the file's contents and size durable), ftruncate,
// fallocate (mode 0 and KEEP_SIZE), flock and POSIX locks (kept by the
// kernel: the filesystem does not ask for them, so the kernel keeps them
// locally, which is what processes on one machine need), rename, link,
// unlink, readdir, mkdir and rmdir.
//
// # Limits
//
//   - Directories themselves (mkdir, rmdir, renaming a directory) are
//     written through at once: only regular files' entries are lazy.
//   - Metadata other than size (mode, times) is not modelled for loss.
//   - Hard links of files are names like any other; no symlinks or
//     special files (ENOTSUP). Nlink is always 1.
//   - "Durable" means written to the backing directory; lazyfs does not
//     fsync the backing files, since the host does not lose power.
//
// # Layout of the backing directory
//
// The backing tree is the durable tree. Each file's durable contents
// live in .lazyfs/<n> (hidden from the mount), hard-linked to every
// durable name of that file; a directory fsync links or unlinks names.
// Mount removes .lazyfs first, so a file that never got a durable name is
// gone after the next mount, as after a real crash.
//
// # Control from another process
//
// Handler serves POST /cut (?keep=0.5&tear=1&seed=7), POST /hold and GET
// /stats, for a control listener on 127.0.0.1; the command
// internal/lazyfs/cmd/lazyfs mounts a directory, serves them (and POST
// /remount) and cuts on SIGUSR1. Tests in one process use Cut, HoldSyncs,
// Unmount and Mount directly. A process must not map a file of a mount it
// serves itself: a page fault would wait on its own FUSE server, which a
// Go stop-the-world may have stopped (this package's tests map files in a
// child process).
package lazyfs
