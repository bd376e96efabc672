/* Output files (outfile.h): whole or not at all, never through a link,
 * only over a regular file, no temporary left behind. */
#define _XOPEN_SOURCE 700 /* mknod, makedev */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static char dir[64];

static const char *at(const char *name)
{
	static char buf[2][256];
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* The whole content of a file, or "" when it cannot be read. */
static const char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "rb");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof buf - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* Entries of the scratch directory (a leftover temporary shows here). */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	gp_error err;
	struct stat st;
	char link[256];
	ssize_t n;

	plan(27);
	umask(022);
	snprintf(dir, sizeof dir, "/tmp/gpuplan-outfile-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}

	/* A new file: the bytes, 0666 less the umask 022 = 0644. */
	ok(outfile_write(at("new.svg"), "one\n", 4, &err) == GP_OK,
	   "a new file is written");
	ok(strcmp(slurp(at("new.svg")), "one\n") == 0, "with exactly the bytes");
	ok(stat(at("new.svg"), &st) == 0 && (st.st_mode & 07777) == 0644,
	   "new file mode is 0666 less the umask");
	is_int(entries(), 1, "no temporary left beside it");

	/* A regular file is replaced and keeps its mode. */
	chmod(at("new.svg"), 0600);
	ok(outfile_write(at("new.svg"), "two\n", 4, &err) == GP_OK,
	   "a regular file is replaced");
	ok(strcmp(slurp(at("new.svg")), "two\n") == 0, "with the new bytes");
	ok(stat(at("new.svg"), &st) == 0 && (st.st_mode & 07777) == 0600,
	   "a replaced file keeps its mode");
	ok(outfile_write(at("empty"), "", 0, &err) == GP_OK &&
	   stat(at("empty"), &st) == 0 && st.st_size == 0,
	   "zero bytes make an empty file");

	/* A symbolic link is refused: neither it nor its target changes. */
	put(at("victim"), "KEEP\n");
	if (symlink(at("victim"), at("link.svg")) != 0)
		perror("symlink");
	ok(outfile_write(at("link.svg"), "svg\n", 4, &err) == GP_EINVAL,
	   "a symbolic link is refused");
	ok(strstr(err.msg, "symbolic link") != NULL, "and the message says so");
	ok(strcmp(slurp(at("victim")), "KEEP\n") == 0,
	   "the link's target is untouched");
	n = readlink(at("link.svg"), link, sizeof link - 1);
	ok(n > 0 && lstat(at("link.svg"), &st) == 0 && S_ISLNK(st.st_mode),
	   "the link itself is still a link");
	/* A dangling link is a link too. */
	if (symlink(at("nowhere"), at("dangling.svg")) != 0)
		perror("symlink");
	ok(outfile_write(at("dangling.svg"), "x", 1, &err) == GP_EINVAL &&
	   access(at("nowhere"), F_OK) != 0,
	   "a dangling link is refused and creates nothing");

	/* Not a regular file: refused before anything is opened. */
	if (mkdir(at("sub"), 0755) != 0)
		perror("mkdir");
	ok(outfile_write(at("sub"), "x", 1, &err) == GP_EINVAL &&
	   strstr(err.msg, "a directory") != NULL, "a directory is refused");
	ok(outfile_write(at("sub/"), "x", 1, &err) == GP_EINVAL,
	   "a name ending in '/' is refused");
	if (mkfifo(at("fifo"), 0644) != 0)
		perror("mkfifo");
	/* Opening a FIFO for writing would block until a reader comes. */
	ok(outfile_write(at("fifo"), "x", 1, &err) == GP_EINVAL &&
	   strstr(err.msg, "FIFO") != NULL, "a FIFO is refused, no hang");
	ok(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode),
	   "the FIFO is still a FIFO");
	/* A device node of our own (a copy of /dev/null's numbers, 1:3), so
	 * that a regression replaces nothing of the system's; making one
	 * needs root, otherwise the pair is skipped. */
	if (mknod(at("dev"), S_IFCHR | 0600, makedev(1, 3)) == 0) {
		ok(outfile_write(at("dev"), "x", 1, &err) == GP_EINVAL &&
		   strstr(err.msg, "character device") != NULL,
		   "a device node is refused");
		ok(lstat(at("dev"), &st) == 0 && S_ISCHR(st.st_mode),
		   "the device node is still a device");
		unlink(at("dev"));
	} else {
		ok(1, "# skip a device node (mknod needs root)");
		ok(1, "# skip");
	}

	/* Where no file can be made: the reason, nothing left behind. */
	ok(outfile_write(at("no/such/dir.svg"), "x", 1, &err) == GP_EINVAL &&
	   strstr(err.msg, "No such file") != NULL,
	   "a missing directory is named by its reason");
	put(at("plain"), "p");
	ok(outfile_write(at("plain/x.svg"), "x", 1, &err) == GP_EINVAL,
	   "a file used as a directory is refused");
	ok(outfile_write("", "x", 1, &err) == GP_EINVAL &&
	   strstr(err.msg, "empty") != NULL, "an empty name is refused");
	ok(outfile_write(NULL, "x", 1, &err) == GP_EINVAL, "NULL is refused");
	/* new.svg, empty, victim, link.svg, dangling.svg, sub, fifo, plain. */
	is_int(entries(), 8, "no temporaries left after the refusals");

	/* A file name without a directory part is written in the working
	 * directory. */
	if (chdir(dir) == 0) {
		ok(outfile_write("here.txt", "h", 1, &err) == GP_OK &&
		   strcmp(slurp("here.txt"), "h") == 0,
		   "a bare name is written in the working directory");
		is_int(entries(), 9, "and only it is added");
	} else {
		ok(0, "chdir");
		ok(0, "chdir");
	}
	/* Large data goes whole: 1 MiB of one byte value. */
	{
		size_t big = 1 << 20;
		char *buf = malloc(big);

		memset(buf, 'z', big);
		ok(buf && outfile_write(at("big"), buf, big, &err) == GP_OK &&
		   stat(at("big"), &st) == 0 && (size_t)st.st_size == big,
		   "1 MiB is written whole");
		free(buf);
	}

	/* Clean up the scratch directory. */
	{
		const char *names[] = {"new.svg", "empty", "victim", "link.svg",
				       "dangling.svg", "fifo", "plain",
				       "here.txt", "big", NULL};
		int i;

		for (i = 0; names[i]; i++)
			unlink(at(names[i]));
		rmdir(at("sub"));
		rmdir(dir);
	}
	return done();
}
