/* Opening the files the command reads itself (plan files, traces). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

FILE *cli_open_input(const char *path, const char *what)
{
    /* O_NONBLOCK: a FIFO with no writer would block the open; fstat then refuses it (and
     * devices such as /dev/zero, which never end) before any read. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        cli_fail("cannot open %s '%s': %s", what, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    int flags = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        cli_fail("cannot read %s '%s': %s", what, path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        cli_fail("cannot read %s '%s': not a regular file (%s)", what, path,
                 S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a special file");
        close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        cli_fail("cannot read %s '%s': %s", what, path, strerror(errno));
        close(fd);
    }
    return f;
}
