# Sourced by build-cuda.sh and build-vulkan.sh: the steps after the build that they share.
#
# compare_build BUILT COMMITTED: compares every file of the fresh build in BUILT with the
# committed one in COMMITTED; prints each file missing on either side or differing (with the
# BUILD-INFO diff), and returns 1 if there was any, else 0.
compare_build() {
  local built=$1 committed=$2 name differences=0
  for name in $( (ls "$built"; ls "$committed" 2>/dev/null || true) | sort -u); do
    if [ ! -e "$committed/$name" ]; then
      echo "missing: $committed/$name"; differences=1
    elif [ ! -e "$built/$name" ]; then
      echo "no source for: $committed/$name"; differences=1
    elif ! cmp -s "$built/$name" "$committed/$name"; then
      echo "differs: $committed/$name"; differences=1
      if [ "$name" = BUILD-INFO ]; then diff "$committed/$name" "$built/$name" | sed 's/^/    /' || true; fi
    fi
  done
  return $differences
}

# finish_build CHECK BUILT COMMITTED EXT MESSAGE: with CHECK=1, compare_build and exit 0 (printing
# MESSAGE) or 1; else replace the committed files: those of extension EXT whose
# source is gone are removed, every built file is copied over.
finish_build() {
  local check=$1 built=$2 committed=$3 ext=$4 message=$5 f
  if [ "$check" = 1 ]; then
    if compare_build "$built" "$committed"; then
      echo "$message"
      exit 0
    fi
    exit 1
  fi
  mkdir -p "$committed"
  for f in "$committed"/*."$ext"; do
    [ -e "$f" ] || continue
    [ -e "$built/$(basename "$f")" ] || { echo "removing $f (its source is gone)" >&2; rm -f "$f"; }
  done
  cp "$built"/* "$committed/"
  echo "wrote $(ls "$built" | wc -l) files to $committed"
}
