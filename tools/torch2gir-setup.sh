#!/bin/sh
# Installs what tools/torch2gir (and `make check-torch`, `make models`)
# needs.
#   sh tools/torch2gir-setup.sh        Debian's PyTorch and torchvision
#       (torch 1.13), which install for the system /usr/bin/python3 (not
#       for another python3 on PATH, such as pyenv's).  Runs apt-get as
#       root, or through sudo; about 1 GB; a few minutes on a fresh
#       Debian 12.
#   sh tools/torch2gir-setup.sh --pip  PyPI's PyTorch 2 and torchvision,
#       pinned (tools/requirements-torch.txt), in a venv of
#       /usr/bin/python3 ($PCC_TORCH_VENV, default
#       ~/.cache/pcc/torch-2.15.0) that tools/torchpython runs: what
#       `make check-torch-pip` tests torch2gir on.  About 5.7 GB (PyPI's
#       Linux wheel brings the CUDA libraries; nothing uses a GPU).
# Each does nothing if what it installs is there already.
set -e
if [ "${1:-}" = "--pip" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	venv=${PCC_TORCH_VENV:-$HOME/.cache/pcc/torch-2.15.0}
	sh "$here/venv-setup.sh" "$venv" "$here/requirements-torch.txt" \
	    torch2gir-setup 'import torch, torchvision, transformers
assert torch.__version__.startswith("2.15.0"), torch.__version__' \
	    "PyTorch 2.15.0, transformers"
	exit 0
fi
if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
	echo "torch2gir-setup: torch and torchvision already installed for /usr/bin/python3"
	exit 0
fi
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq python3-torch python3-torchvision >/dev/null
/usr/bin/python3 -c 'import torch, torchvision; print("torch2gir-setup: torch", torch.__version__, "torchvision", torchvision.__version__)'
