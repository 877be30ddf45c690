#!/bin/sh
# venv-setup.sh VENV REQUIREMENTS NAME CHECK WHAT — makes VENV, a venv of
# Debian's /usr/bin/python3 with `pip install -r REQUIREMENTS` (every
# package pinned), unless it is there and complete for these
# requirements (VENV/.pcc-complete holds a copy of them).  CHECK is
# Python that must run in it (an import and a version check); WHAT is
# what the last line says it installed.  Used by
# tools/tf-setup.sh and tools/torch2gir-setup.sh --pip.
set -e
venv=$1 req=$2 name=$3 check=$4 what=$5
if [ -f "$venv/.pcc-complete" ] && cmp -s "$req" "$venv/.pcc-complete"; then
	exit 0
fi
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
/usr/bin/python3 -m venv "$venv"
echo "$name: pip install -r tools/$(basename "$req") into $venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
"$venv/bin/python" -c "$check"
cp "$req" "$venv/.pcc-complete"
echo "$name: $what in $venv"
