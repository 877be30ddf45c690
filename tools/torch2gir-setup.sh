#!/bin/sh
# Installs what tools/torch2gir (and `make check-torch`, `make models`)
# needs: Debian's PyTorch and torchvision, which install for the system
# /usr/bin/python3 (not for another python3 on PATH, such as pyenv's).
# Runs apt-get as root, or through sudo; does nothing if they are present.
# About 1 GB of packages; a few minutes on a fresh Debian 12.
set -e
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
