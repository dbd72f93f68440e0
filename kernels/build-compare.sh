# Sourced by build-cuda.sh and build-vulkan.sh: the --check step they share.
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
