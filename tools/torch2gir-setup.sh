#!/bin/sh
# Installs what tools/torch2gir needs (PyTorch and torchvision for the system
# /usr/bin/python3, Debian packages) when it is missing.
set -e
if /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
	echo "torch2gir-setup: torch and torchvision already installed"
	exit 0
fi
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get install -y python3-torch python3-torchvision
/usr/bin/python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)'
