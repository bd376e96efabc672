/* outfile.c - write an output file whole or not at all (outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Names tried for the temporary before giving up: each is random, so a
 * clash (EEXIST) means someone else's file of that name, never ours. */
#define OUT_TRIES 64

/* What a non-regular file is, for the message. */
static const char *kind_of(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	return "not a regular file";
}

/* A 64-bit mix (SplitMix64's finaliser, Steele et al. 2014) of the pid,
 * the time and the attempt: temporary names no other process predicts. */
static unsigned long long mix(unsigned long long x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Open a new temporary "DIR/.BASE.XXXXXXXXXXXX.tmp" beside path, created
 * exclusively; its name into tmp.  Returns the descriptor or -1 (err
 * set). */
static int open_temp(const char *path, char *tmp, size_t tmplen,
		     gp_error *err)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	struct timespec ts;
	unsigned long long seed;
	int i, fd;

	clock_gettime(CLOCK_REALTIME, &ts);
	seed = ((unsigned long long)getpid() << 32) ^
	       (unsigned long long)ts.tv_sec * 1000000007ULL ^
	       (unsigned long long)ts.tv_nsec;
	for (i = 0; i < OUT_TRIES; i++) {
		unsigned long long r = mix(seed + (unsigned long long)i);
		int n = snprintf(tmp, tmplen, "%.*s.%s.%012llx.tmp", dirlen,
				 path, base, r & 0xffffffffffffULL);

		if (n < 0 || (size_t)n >= tmplen) {
			gp_fail(err, "the name is too long");
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST && errno != EINTR) {
			gp_fail(err, "cannot create a file in its directory: "
				"%s", strerror(errno));
			return -1;
		}
	}
	gp_fail(err, "cannot create a temporary file beside it (%d names "
		"taken)", OUT_TRIES);
	return -1;
}

static int write_all(int fd, const char *p, size_t len, gp_error *err)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gp_fail(err, "%s", strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return GP_OK;
}

int outfile_write(const char *path, const void *data, size_t len,
		  gp_error *err)
{
	char tmp[4096 + 64];
	struct stat st;
	int fd, keep_mode = 0;
	mode_t mode = 0;

	if (!path || !*path)
		return gp_fail(err, "the file name is empty");
	if (!data && len > 0)
		return gp_fail(err, "no data");
	if (path[strlen(path) - 1] == '/')
		return gp_fail(err, "it names a directory");
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return gp_fail(err, "it is a symbolic link (output "
				       "files replace a regular file and "
				       "never write through a link; give the "
				       "link's target)");
		if (!S_ISREG(st.st_mode))
			return gp_fail(err, "it is %s, not a regular file",
				       kind_of(st.st_mode));
		keep_mode = 1;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return gp_fail(err, "%s", strerror(errno));
	}
	fd = open_temp(path, tmp, sizeof tmp, err);
	if (fd < 0)
		return GP_EINVAL;
	if (write_all(fd, data, len, err) ||
	    (keep_mode && fchmod(fd, mode) != 0 &&
	     gp_fail(err, "%s", strerror(errno))) ||
	    (fsync(fd) != 0 && errno != EINVAL && errno != EROFS &&
	     gp_fail(err, "%s", strerror(errno)))) {
		close(fd);
		unlink(tmp);
		return GP_EINVAL;
	}
	if (close(fd) != 0) {
		gp_fail(err, "%s", strerror(errno));
		unlink(tmp);
		return GP_EINVAL;
	}
	/* rename replaces the directory entry itself: if a link was put in
	 * place since the check above, the link goes, not its target. */
	if (rename(tmp, path) != 0) {
		gp_fail(err, "%s", strerror(errno));
		unlink(tmp);
		return GP_EINVAL;
	}
	return GP_OK;
}
