/*
 * outfile.h - write an output file whole or not at all, safely.
 *
 * Every file gpuplan writes (--svg and any other) goes through
 * outfile_write: the bytes go to a fresh temporary created exclusively
 * (O_CREAT | O_EXCL, so no link is ever followed and no existing file is
 * opened) in the target's own directory, are flushed to disk, and the
 * temporary is then renamed over the target, so a reader sees the old
 * file or the new one, never a part.  Only a regular file is replaced,
 * keeping its permission bits; a symbolic link (even to a regular file),
 * a directory, a FIFO, a socket or a device node is refused untouched --
 * writing through a planted link is how a file elsewhere gets clobbered,
 * and a device or FIFO is not a file to replace.
 *
 * Pure POSIX C, no Lua: the binding (engine/main.c) exposes it to the Lua
 * side as gpuplan.config.write_file.
 */
#ifndef GP_OUTFILE_H
#define GP_OUTFILE_H

#include <stddef.h>

#include "common.h"

/* Write len bytes at data to path (a NUL-terminated file name).  GP_OK
 * when the target now holds exactly those bytes; otherwise GP_EINVAL, the
 * target untouched, no temporary left behind, and err->msg saying why in
 * one line without the path (the caller names it): "it is a symbolic
 * link ...", "it is a directory", "No space left on device", ...  New
 * files get mode 0666 less the umask; a replaced file keeps its mode. */
int outfile_write(const char *path, const void *data, size_t len,
		  gp_error *err);

#endif
