/*
 * The `sandgate run` fast path for write-opens, preloaded (LD_PRELOAD) into
 * every dynamically linked confined program.
 *
 * Each wrapped open issues `openat` itself with SANDGATE_MARKER in the sixth
 * argument register, which `openat` does not use. The seccomp filter lets a
 * marked `openat` through without notifying the supervisor, so the Landlock
 * floor alone decides it. When that refuses a write-open (EACCES, EPERM,
 * EROFS), the same open is issued again without the marker: the filter then
 * hands it to the supervisor exactly as without this library (it asks,
 * performs the write on the program's behalf, refuses a protected path, or
 * reports a file-mode problem).
 *
 * The marker is no secret: a program that forges it only gets Landlock's
 * decision without being asked. Landlock is the boundary, not this file.
 *
 * x86-64 Linux only. No libc: system calls are made directly, and errno is
 * reached through `__errno_location` (glibc and musl both export it), so the
 * library loads into glibc and musl programs alike.
 */

#ifndef SANDGATE_MARKER
#error "SANDGATE_MARKER must be defined by the build"
#endif

#define EXPORT __attribute__((visibility("default")))

#define NR_OPENAT 257
#define NR_CHDIR 80
#define NR_FCHDIR 81
#define NR_GETPID 39
#define NR_GETTID 186
#define NR_TGKILL 234
#define NR_WRITE 1
#define NR_EXIT_GROUP 231

#define AT_FDCWD (-100)
#define O_WRONLY 01
#define O_RDWR 02
#define O_CREAT 0100
#define O_TRUNC 01000
#define O_TMPFILE_BITS 020000000
#define O_DIRECTORY 0200000
#define O_TMPFILE (O_TMPFILE_BITS | O_DIRECTORY)

#define EPERM 1
#define EACCES 13
#define EROFS 30
#define SIGABRT 6

/* Same set as WRITE_OPEN_FLAGS in seccomp.rs: the opens the filter notifies. */
#define WRITE_OPEN_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

/* Weak: a program without libc still loads; it never calls these wrappers. */
extern int *__errno_location(void) __attribute__((weak));

static long syscall6(long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
    long ret;
    register long r10 __asm__("r10") = a4;
    register long r8 __asm__("r8") = a5;
    register long r9 __asm__("r9") = a6;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static int needs_mode(int flags)
{
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

/* The libc convention: -1 and errno for a failure. */
static int result(long ret)
{
    if (ret < 0 && ret > -4096) {
        if (__errno_location)
            *__errno_location() = (int)-ret;
        return -1;
    }
    return (int)ret;
}

/*
 * Directories where Landlock refused to create a file that the supervisor
 * then created (a directory carved around a protected path, or one made
 * during the run): later creations there go to the supervisor directly
 * instead of failing a marked attempt first. An entry only ever sends an
 * open down the ordinary path, which is always correct, so a stale entry or
 * a hash collision costs speed, never behaviour. Keys are hashes of the
 * directory part of the path; relative ones include a generation that
 * chdir/fchdir advance. Lock-free: one 64-bit word per slot.
 */
#define SLOTS 64
static unsigned long refused[SLOTS];
static unsigned long cwd_generation;

/* The key of the directory `path` creates in, or 0 when it has none. */
static unsigned long dir_key(int dirfd, const char *path)
{
    const char *end = path;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            end = p;
    unsigned long hash = 0xcbf29ce484222325UL;
    if (path[0] != '/') {
        if (dirfd != AT_FDCWD)
            return 0; /* descriptor numbers are reused for other directories */
        hash ^= __atomic_load_n(&cwd_generation, __ATOMIC_RELAXED) + 1;
        hash *= 0x100000001b3UL;
    }
    for (const char *p = path; p < end; p++) {
        hash ^= (unsigned char)*p;
        hash *= 0x100000001b3UL;
    }
    return hash ? hash : 1;
}

static int refused_before(unsigned long key)
{
    return key && __atomic_load_n(&refused[key % SLOTS], __ATOMIC_RELAXED) == key;
}

static int open_at(int dirfd, const char *path, int flags, unsigned int mode)
{
    if (!needs_mode(flags))
        mode = 0;
    /* Only a plain creation is refused by where it happens, not by the file. */
    int creates = (flags & O_CREAT) != 0 && (flags & O_TMPFILE) != O_TMPFILE;
    unsigned long key = creates ? dir_key(dirfd, path) : 0;
    long ret;
    if (refused_before(key)) {
        ret = syscall6(NR_OPENAT, dirfd, (long)path, flags, mode, 0, 0);
    } else {
        ret = syscall6(NR_OPENAT, dirfd, (long)path, flags, mode, 0, (long)SANDGATE_MARKER);
        if ((flags & WRITE_OPEN_FLAGS) != 0 && (ret == -EACCES || ret == -EPERM || ret == -EROFS)) {
            /* Landlock refused it: let the supervisor decide, as without the fast path. */
            ret = syscall6(NR_OPENAT, dirfd, (long)path, flags, mode, 0, 0);
            if (ret >= 0 && key)
                __atomic_store_n(&refused[key % SLOTS], key, __ATOMIC_RELAXED);
        }
    }
    return result(ret);
}

/* glibc's fortified opens refuse O_CREAT/O_TMPFILE without a mode: so do these. */
static void invalid_open_call(void)
{
    static const char msg[] = "*** invalid open call: O_CREAT or O_TMPFILE without mode ***: terminated\n";
    syscall6(NR_WRITE, 2, (long)msg, sizeof msg - 1, 0, 0, 0);
    long pid = syscall6(NR_GETPID, 0, 0, 0, 0, 0, 0);
    long tid = syscall6(NR_GETTID, 0, 0, 0, 0, 0, 0);
    syscall6(NR_TGKILL, pid, tid, SIGABRT, 0, 0, 0);
    syscall6(NR_EXIT_GROUP, 127, 0, 0, 0, 0, 0);
    __builtin_unreachable();
}

/*
 * On x86-64 a variadic caller passes `mode` in the same register as a fixed
 * fourth (or third) int argument, so plain definitions read it correctly.
 */

EXPORT int open(const char *path, int flags, unsigned int mode)
{
    return open_at(AT_FDCWD, path, flags, mode);
}

EXPORT int open64(const char *path, int flags, unsigned int mode)
{
    return open_at(AT_FDCWD, path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, unsigned int mode)
{
    return open_at(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, unsigned int mode)
{
    return open_at(dirfd, path, flags, mode);
}

EXPORT int creat(const char *path, unsigned int mode)
{
    return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int creat64(const char *path, unsigned int mode)
{
    return open_at(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode);
}

EXPORT int __open_2(const char *path, int flags)
{
    if (needs_mode(flags))
        invalid_open_call();
    return open_at(AT_FDCWD, path, flags, 0);
}

EXPORT int __open64_2(const char *path, int flags)
{
    if (needs_mode(flags))
        invalid_open_call();
    return open_at(AT_FDCWD, path, flags, 0);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    if (needs_mode(flags))
        invalid_open_call();
    return open_at(dirfd, path, flags, 0);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    if (needs_mode(flags))
        invalid_open_call();
    return open_at(dirfd, path, flags, 0);
}

/* A new working directory gives relative paths a new meaning. */

EXPORT int chdir(const char *path)
{
    long ret = syscall6(NR_CHDIR, (long)path, 0, 0, 0, 0, 0);
    if (ret == 0)
        __atomic_add_fetch(&cwd_generation, 1, __ATOMIC_RELAXED);
    return result(ret);
}

EXPORT int fchdir(int fd)
{
    long ret = syscall6(NR_FCHDIR, fd, 0, 0, 0, 0, 0);
    if (ret == 0)
        __atomic_add_fetch(&cwd_generation, 1, __ATOMIC_RELAXED);
    return result(ret);
}
