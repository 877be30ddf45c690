#!/bin/sh
# Installs what building and testing pcc needs on Debian 12, when missing.
#   sh tools/setup-debian.sh          build + test dependencies
#   sh tools/setup-debian.sh --fuzz   also clang and libFuzzer (CI)
# Runs apt-get as root (or through sudo); does nothing if all is present.
# The TensorFlow backend's tests need protoc (protobuf-compiler) and
# Node.js with the TensorFlow.js packages pinned in
# tests/tfjs/package-lock.json (installed with npm ci).
set -e
pkgs="gcc make flex bison libyaml-dev libjson-c-dev libcunit1-dev graphviz valgrind protobuf-compiler"
# Node.js from Debian unless a node is already installed
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || pkgs="$pkgs nodejs npm"
[ "${1:-}" = "--fuzz" ] && pkgs="$pkgs clang libclang-rt-14-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# TensorFlow.js for tests/run-tfjs.sh, exactly as locked
tfjs="$(dirname "$0")/../tests/tfjs"
if [ ! -d "$tfjs/node_modules/@tensorflow/tfjs-converter" ]; then
	echo "setup: npm ci in tests/tfjs"
	(cd "$tfjs" && npm ci --no-audit --no-fund >/dev/null)
fi
