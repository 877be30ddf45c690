# npm-fetch.sh — sourced by the fetch-*.sh scripts, which set
#   NAME (for messages), PKG (name@version), TGZ (what `npm pack` writes),
#   SHA256 (the tarball's, pinned), DIR (where it unpacks, in the cache)
# and may define after_unpack (run in the cache after tar).  npm_fetch
# [CACHE] fetches the tarball with `npm pack` into CACHE (default:
# $PCC_CACHE, else $XDG_CACHE_HOME/pcc, else ~/.cache/pcc), checks it
# against SHA256 and unpacks it into CACHE/DIR once; then CACHE is the
# current directory and $CACHE names it.  Needs npm (the registry) only
# when the tarball is not cached.
set -eu
npm_check() {
	echo "$SHA256  $TGZ" | sha256sum -c --status
}
npm_fetch() {
	CACHE=${1:-${PCC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pcc}}
	mkdir -p "$CACHE"
	cd "$CACHE"
	if [ ! -f "$TGZ" ] || ! npm_check; then
		rm -f "$TGZ"
		npm pack --silent "$PKG" >/dev/null 2>&1 || {
			echo "$NAME: 'npm pack $PKG' failed (no npm or no registry?)" >&2
			exit 1
		}
		if ! npm_check; then
			echo "$NAME: $TGZ does not match the pinned SHA-256 $SHA256" >&2
			rm -f "$TGZ"
			exit 1
		fi
		rm -rf "$DIR"
	fi
	if [ ! -f "$DIR/.unpacked" ]; then
		rm -rf "$DIR"
		mkdir -p "$DIR"
		tar -xzf "$TGZ" -C "$DIR"
		if command -v after_unpack >/dev/null 2>&1; then
			after_unpack
		fi
		: > "$DIR/.unpacked"
	fi
}
