#!/bin/sh
# Makes the TensorFlow venv that tools/tfpython runs: Debian's
# /usr/bin/python3 -m venv, then pip install -r tools/requirements-tf.txt
# (TensorFlow's CPU build from PyPI, every package pinned).  About 600 MB;
# a minute or two with a warm pip cache.  Does nothing if it is complete.
#   sh tools/tf-setup.sh        (sh tools/setup-debian.sh --tf calls it)
set -e
here=$(cd "$(dirname "$0")" && pwd)
venv=${PCC_TF_VENV:-$HOME/.cache/pcc/tf-2.21.0}
sh "$here/venv-setup.sh" "$venv" "$here/requirements-tf.txt" tf-setup \
    'import tensorflow as tf; assert tf.__version__ == "2.21.0", tf.__version__' \
    "TensorFlow 2.21.0 (CPU)"
