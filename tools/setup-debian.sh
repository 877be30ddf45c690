#!/bin/sh
# Installs what building and testing pcc needs on Debian 12, when missing.
#   sh tools/setup-debian.sh              build + test dependencies (make check)
#   sh tools/setup-debian.sh --fuzz       also clang and libFuzzer (make fuzz)
#   sh tools/setup-debian.sh --tf-models  also jq and npm (make check-tf-models)
#   sh tools/setup-debian.sh --torch      also PyTorch (make check-torch, make models;
#                                         tools/torch2gir-setup.sh)
#   sh tools/setup-debian.sh --torch-pip  also PyTorch 2 from PyPI, pinned, in a venv
#                                         (make check-torch-pip; tools/torch2gir-setup.sh --pip)
#   sh tools/setup-debian.sh --tf         also TensorFlow's CPU build from PyPI, pinned
#                                         (tools/requirements-tf.txt) in a venv that
#                                         tools/tfpython runs (tools/tf-setup.sh)
# Options combine.  Runs apt-get as root (or through sudo); does nothing if
# all is present.  The TensorFlow backend's tests need protoc
# (protobuf-compiler) and Node.js with the TensorFlow.js packages pinned in
# tests/tfjs/package-lock.json (installed with npm ci).
set -e
pkgs="gcc libc6-dev make flex bison libyaml-dev libjson-c-dev libcunit1-dev libmetis-dev graphviz valgrind"
# xmllint checks the SVG backends' output; rsvg-convert draws docs/img's PNGs.
pkgs="$pkgs libxml2-utils librsvg2-bin protobuf-compiler"
# Node.js from Debian unless a node is already installed
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
torch= torchpip= tf=
for a in "$@"; do
	case $a in
	--fuzz) pkgs="$pkgs clang libclang-rt-14-dev" ;;
	--tf-models) pkgs="$pkgs jq npm" ;;
	--torch) torch=1 ;;
	--torch-pip) torchpip=1; pkgs="$pkgs python3-venv" ;;
	--tf) tf=1; pkgs="$pkgs python3-venv" ;;
	*) echo "usage: setup-debian.sh [--fuzz] [--tf-models] [--torch] [--torch-pip] [--tf]" >&2; exit 2 ;;
	esac
done
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
# npm may come from elsewhere (nodesource); then it is present already
case " $missing " in *" npm "*) command -v npm >/dev/null && missing=$(echo "$missing" | sed 's/ npm//') ;; esac
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
[ -z "$torch" ] || sh "$(dirname "$0")/torch2gir-setup.sh"
[ -z "$torchpip" ] || sh "$(dirname "$0")/torch2gir-setup.sh" --pip
[ -z "$tf" ] || sh "$(dirname "$0")/tf-setup.sh"
# TensorFlow.js for tests/run-tfjs.sh, exactly as locked
tfjs="$(dirname "$0")/../tests/tfjs"
if [ ! -d "$tfjs/node_modules/@tensorflow/tfjs-converter" ]; then
	echo "setup: npm ci in tests/tfjs"
	(cd "$tfjs" && npm ci --no-audit --no-fund >/dev/null)
fi
