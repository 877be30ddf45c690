#!/bin/sh
# Installs what building and testing pcc needs on Debian 12, when missing.
#   sh tools/setup-debian.sh          build + test dependencies
#   sh tools/setup-debian.sh --fuzz   also clang and libFuzzer (CI)
# Runs apt-get as root (or through sudo); does nothing if all is present.
set -e
pkgs="gcc libc6-dev make flex bison libyaml-dev libjson-c-dev libcunit1-dev libmetis-dev graphviz valgrind"
# xmllint checks the SVG backends' output; rsvg-convert draws docs/img's PNGs.
pkgs="$pkgs libxml2-utils librsvg2-bin"
[ "${1:-}" = "--fuzz" ] && pkgs="$pkgs clang libclang-rt-14-dev"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
