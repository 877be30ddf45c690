"""pccfile.py — writing a tool's output file as pcc writes its own: the
whole text into a temporary file beside it, renamed over the path only
once it is complete, so a failed write never leaves half a file (a
path that names an existing non-regular file, /dev/null or a pipe, is
written directly; a symbolic link is followed).  Used by torch2gir, tfprofile and torchprof2pcc."""

import os
import stat


def write_text(path, text):
    """Writes text to path; raises OSError (the temporary removed).  A
    symbolic link is followed, as pcc's -o does: the file it names is
    replaced and the link stays."""
    if os.path.islink(path):
        path = os.path.realpath(path)
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        regular = True
    if not regular:
        with open(path, "w") as f:
            f.write(text)
        return
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(text)
        try:
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        except FileNotFoundError:
            pass
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
